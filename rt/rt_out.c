#include "rt_out.h"

#include <stdarg.h>
#include <stdio.h>

void hs__out_init(struct hs__out *o, char *buf, size_t size)
{
    o->buf = buf;
    o->size = size;
    o->len = 0;
    if (size)
        buf[0] = '\0';
}

void hs__out_put(struct hs__out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->size ? o->size - o->len : 0;
    int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

size_t hs__out_finish(struct hs__out *o)
{
    if (o->size && o->len >= o->size)
        o->buf[o->size - 1] = '\0';
    return o->len;
}
