/* Lines out of a control client's byte stream (ctl.h, hs_ctl_inbuf): what the socket thread
 * reads is appended as it comes, in pieces of any size, and taken back one whole line at a
 * time. Pure, for the server and its fuzz target (tests/ctl/fuzz_ctl_stream.c). */
#include <errno.h>
#include <string.h>

#include "hilsim/ctl.h"

size_t hs_ctl_inbuf_room(const struct hs_ctl_inbuf *b, char **ret_at)
{
    *ret_at = (char *)b->in + b->have;
    return sizeof b->in - b->have;
}

void hs_ctl_inbuf_added(struct hs_ctl_inbuf *b, size_t n)
{
    b->have += n <= sizeof b->in - b->have ? n : sizeof b->in - b->have;
}

int hs_ctl_inbuf_line(struct hs_ctl_inbuf *b, char *line, size_t *ret_len)
{
    if (b->taken) { /* the line handed out last time goes now */
        memmove(b->in, b->in + b->taken, b->have - b->taken);
        b->have -= b->taken;
        b->taken = 0;
    }
    /* A newline past the limit ends a line too long for the caller's buffer: the buffer
     * holds one byte more than a line only to tell a line of exactly the limit from a longer
     * one. */
    size_t look = b->have < HS_CTL_LINE_MAX ? b->have : HS_CTL_LINE_MAX;
    const char *nl = memchr(b->in, '\n', look);
    if (!nl)
        return b->have > HS_CTL_LINE_MAX ? -E2BIG : 0;
    size_t len = (size_t)(nl - b->in) + 1;
    memcpy(line, b->in, len);
    line[len] = 0;
    *ret_len = len;
    b->taken = len;
    return 1;
}
