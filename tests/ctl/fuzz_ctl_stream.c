/* libFuzzer target: a hostile client's byte stream through the control socket's framing and
 * parser, as the server takes it (src/ctl/ctl_frame.c, then hs_ctl_parse). The first bytes
 * choose how the stream is cut into reads (every read size from 1 byte up). Properties: the
 * lines handed out are exactly the stream's bytes up to its last newline, in order, each
 * ending in its newline and at most HS_CTL_LINE_MAX bytes; the buffer reports a line too
 * long exactly when HS_CTL_LINE_MAX + 1 bytes came without a newline; every line parses or
 * is refused with a one-line error; nothing reads past what was given. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_names_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned cut = data[0] | (unsigned)data[1] << 8; /* read sizes: a seed for their sequence */
    data += 2, size -= 2;
    struct hs_ctl_inbuf *b = calloc(1, sizeof *b);
    if (!b)
        return 0;
    size_t fed = 0, out = 0; /* bytes given to the buffer; bytes handed out as lines */
    bool too_long = false;
    while (!too_long) {
        char *at;
        size_t room = hs_ctl_inbuf_room(b, &at);
        size_t n = cut % 97 + 1;
        cut = cut * 1103515245u + 12345u;
        if (n > room)
            n = room;
        if (n > size - fed)
            n = size - fed;
        memcpy(at, data + fed, n);
        hs_ctl_inbuf_added(b, n);
        fed += n;
        char line[HS_CTL_LINE_MAX + 1];
        size_t len;
        int r;
        while ((r = hs_ctl_inbuf_line(b, line, &len)) == 1) {
            if (len == 0 || len > HS_CTL_LINE_MAX || line[len - 1] != '\n' || line[len] != 0 ||
                memcmp(line, data + out, len) || memchr(line, '\n', len - 1))
                abort();
            out += len;
            struct hs_ctl_cmd c;
            char err[200];
            err[0] = 0;
            if (hs_ctl_parse(line, len, &table_names, &c, err, sizeof err) < 0 &&
                (!err[0] || strchr(err, '\n')))
                abort();
        }
        if (r == -E2BIG) {
            /* exactly: a full buffer's worth since the last line, no newline in its first
             * HS_CTL_LINE_MAX bytes (one in the last byte would end a line past the limit) */
            if (fed - out != HS_CTL_LINE_MAX + 1 || memchr(data + out, '\n', HS_CTL_LINE_MAX))
                abort();
            too_long = true;
        } else if (r != 0) {
            abort();
        }
        if (fed == size)
            break;
    }
    /* what is left holds no newline (every whole line was handed out) */
    if (!too_long && memchr(data + out, '\n', size - out))
        abort();
    free(b);
    return 0;
}
