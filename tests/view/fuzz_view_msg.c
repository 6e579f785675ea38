/* libFuzzer target: a browser's WebSocket message (any bytes) through hilsim view's parser.
 * Accepted or refused with a reason; an accepted control line is one line, NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_view_msg m;
    char err[256] = "";
    if (hs_view_msg_parse((const char *)data, size, &m, err, sizeof err) < 0) {
        if (!err[0])
            abort();
        return 0;
    }
    if (m.kind == HS_VIEW_MSG_CTL &&
        (!memchr(m.line, 0, sizeof m.line) || strpbrk(m.line, "\r\n") || !m.line[0]))
        abort();
    (void)hs_view_ctl_allowed(m.line);
    return 0;
}
