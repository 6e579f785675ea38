/* The view's text buffers (not the RT path: the view is its own process and may allocate). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

static bool grow(struct hs_view_buf *b, size_t need)
{
    if (b->oom)
        return false;
    if (b->len + need + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + need + 1)
        cap *= 2;
    char *m = realloc(b->mem, HS_VIEW_PRE + cap);
    if (!m) {
        b->oom = true;
        return false;
    }
    b->mem = m;
    b->cap = cap;
    return true;
}

void hs_view_buf_reset(struct hs_view_buf *b)
{
    b->len = 0;
    b->oom = false;
    if (b->mem)
        b->mem[HS_VIEW_PRE] = 0;
}

void hs_view_buf_printf(struct hs_view_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !grow(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->mem + HS_VIEW_PRE + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* JSON has no NaN or infinity: they go out as null. */
void hs_view_buf_doubles(struct hs_view_buf *b, const double *v, size_t n, size_t stride)
{
    hs_view_buf_printf(b, "[");
    for (size_t i = 0; i < n; i++) {
        double d = v[i * stride];
        if (d != d || d > 1e300 || d < -1e300)
            hs_view_buf_printf(b, "%snull", i ? "," : "");
        else
            hs_view_buf_printf(b, "%s%.6g", i ? "," : "", d);
    }
    hs_view_buf_printf(b, "]");
}

void hs_view_buf_free(struct hs_view_buf *b)
{
    free(b->mem);
    *b = (struct hs_view_buf){0};
}

void hs_view_buf_str(struct hs_view_buf *b, const char *s)
{
    hs_view_buf_printf(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            hs_view_buf_printf(b, "\\%c", ch);
        else if (ch < 0x20)
            hs_view_buf_printf(b, "\\u%04x", ch);
        else
            hs_view_buf_printf(b, "%c", ch);
    }
    hs_view_buf_printf(b, "\"");
}
