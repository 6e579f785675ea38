/* The view's one JSON path: every message to the browser is a jansson value, built with the
 * helpers here and dumped by hs__view_dump (or hs__view_dumpb into a fixed buffer), as the rest of
 * hilsim writes JSON (src/ctl's state answer, the reports). Not the RT path: the view is its own
 * process and may allocate. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

/* Each number is rounded to what the page always got (%.6g for a signal, %.6f for a time,
 * %.9g for a pose) before it becomes a jansson real; 15 significant digits then print every such
 * value back exactly (DBL_DIG), so the bytes carry the same numbers as the hand-written messages
 * did, spelled as jansson spells them (1.0 for 1, 1e-5 for 1e-05). */
#define HS_VIEW_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

static json_t *rounded(double x, const char *fmt, int digits)
{
    if (!isfinite(x))
        return json_null(); /* JSON has no NaN or infinity */
    char b[400];            /* %.6f of the largest double: 309 digits and the fraction */
    snprintf(b, sizeof b, fmt, digits, x);
    double r = strtod(b, NULL);
    return isfinite(r) ? json_real(r) : json_null();
}

json_t *hs__view_num(double x, int digits)
{
    return rounded(x, "%.*g", digits);
}

json_t *hs__view_fixed(double x, int decimals)
{
    return rounded(x, "%.*f", decimals);
}

json_t *hs__view_nums(const double *v, size_t n, size_t stride, int digits)
{
    json_t *a = json_array();
    bool bad = !a;
    for (size_t i = 0; !bad && i < n; i++)
        hs__view_add(a, hs__view_num(v[i * stride], digits), &bad);
    if (!bad)
        return a;
    json_decref(a);
    return NULL;
}

/* jansson takes UTF-8 only: text that is not (a name cut inside a character, bytes from a file)
 * gets '?' for every byte past ASCII, as src/ctl and the reports do, rather than failing the
 * message or sending bytes a browser refuses in a text frame. */
json_t *hs__view_text(const char *s)
{
    if (!s)
        s = "";
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (!c)
        return NULL;
    for (size_t i = 0; i < n; i++)
        c[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
    j = json_stringn(c, n);
    free(c);
    return j;
}

/* jansson's _new calls take the value even when they fail (a NULL object, no memory): a failed
 * insertion only marks the message bad, and a bad message is never sent. */
void hs__view_set(json_t *obj, const char *key, json_t *val, bool *bad)
{
    if (json_object_set_new(obj, key, val) != 0)
        *bad = true;
}

void hs__view_add(json_t *arr, json_t *val, bool *bad)
{
    if (json_array_append_new(arr, val) != 0)
        *bad = true;
}

static bool reserve(struct hs_view_buf *b, size_t cap)
{
    if (b->mem && cap <= b->cap)
        return true;
    char *m = realloc(b->mem, HS_VIEW_PRE + cap);
    if (!m)
        return false;
    b->mem = m;
    b->cap = cap;
    return true;
}

int hs__view_dump(json_t *msg, bool bad, struct hs_view_buf *out)
{
    int r = -ENOMEM;
    out->len = 0;
    if (!msg || bad || !reserve(out, out->cap ? out->cap : 4096))
        goto done;
    size_t n = json_dumpb(msg, out->mem + HS_VIEW_PRE, out->cap, HS_VIEW_JSON_FLAGS);
    if (n && n >= out->cap) { /* did not fit: once more into a buffer that holds it */
        size_t cap = out->cap;
        while (cap <= n)
            cap *= 2;
        if (!reserve(out, cap))
            goto done;
        n = json_dumpb(msg, out->mem + HS_VIEW_PRE, out->cap, HS_VIEW_JSON_FLAGS);
    }
    if (!n || n >= out->cap)
        goto done;
    out->mem[HS_VIEW_PRE + n] = 0;
    out->len = n;
    r = 0;
done:
    if (r < 0 && out->mem) /* a dump that failed half-way leaves nothing behind */
        out->mem[HS_VIEW_PRE] = 0;
    json_decref(msg);
    return r;
}

int hs__view_dumpb(json_t *msg, bool bad, char *out, size_t outsize)
{
    int r = -ENOMEM;
    if (msg && !bad) {
        size_t n = json_dumpb(msg, out, outsize, HS_VIEW_JSON_FLAGS);
        r = !n ? -ENOMEM : n >= outsize ? -ENOSPC : (int)n;
    }
    out[r > 0 ? (size_t)r : 0] = 0;
    json_decref(msg);
    return r;
}

int hs_view_buf_set(struct hs_view_buf *b, const char *text)
{
    size_t n = strlen(text);
    b->len = 0;
    if (!reserve(b, n + 1 > b->cap ? n + 1 : b->cap))
        return -ENOMEM;
    memcpy(b->mem + HS_VIEW_PRE, text, n + 1);
    b->len = n;
    return 0;
}

void hs_view_buf_free(struct hs_view_buf *b)
{
    free(b->mem);
    *b = (struct hs_view_buf){0};
}
