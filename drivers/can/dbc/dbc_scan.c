/* Character scanner for DBC text: bounded (input need not be NUL-terminated), tracks
 * line and column for diagnostics, never reads past the end. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbc_internal.h"

void hs__dbc_scan_init(struct hs__dbc_scan *s, const char *text, size_t len, const char *name,
                       struct hs_diag *d)
{
    s->p = text;
    s->end = text + len;
    s->line_start = text;
    s->line = 1;
    s->name = name;
    s->d = d;
}

int hs__dbc_err(struct hs__dbc_scan *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = hs_diag_vset(s->d, -EINVAL, s->name, s->line, (int)(s->p - s->line_start) + 1, fmt, ap);
    va_end(ap);
    return r;
}

int hs__dbc_col(const struct hs__dbc_scan *s, const char *at)
{
    return (int)(at - s->line_start) + 1;
}

int hs__dbc_err_at(struct hs__dbc_scan *s, const char *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = hs_diag_vset(s->d, -EINVAL, s->name, s->line, hs__dbc_col(s, at), fmt, ap);
    va_end(ap);
    return r;
}

struct hs__dbc_pos hs__dbc_pos(struct hs__dbc_scan *s)
{
    hs__dbc_skip_ws(s);
    return (struct hs__dbc_pos){s->line, hs__dbc_col(s, s->p)};
}

int hs__dbc_err_pos(struct hs__dbc_scan *s, struct hs__dbc_pos at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = hs_diag_vset(s->d, -EINVAL, s->name, at.line, at.col, fmt, ap);
    va_end(ap);
    return r;
}

bool hs__dbc_eof(const struct hs__dbc_scan *s)
{
    return s->p >= s->end;
}

int hs__dbc_peek(const struct hs__dbc_scan *s)
{
    return s->p < s->end ? (unsigned char)*s->p : -1;
}

static void newline(struct hs__dbc_scan *s)
{
    s->p++;
    s->line++;
    s->line_start = s->p;
}

void hs__dbc_skip_hspace(struct hs__dbc_scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r'))
        s->p++;
}

void hs__dbc_skip_ws(struct hs__dbc_scan *s)
{
    while (s->p < s->end) {
        if (*s->p == '\n')
            newline(s);
        else if (*s->p == ' ' || *s->p == '\t' || *s->p == '\r')
            s->p++;
        else if (*s->p == '/' && s->p + 1 < s->end && s->p[1] == '/')
            while (s->p < s->end && *s->p != '\n')
                s->p++;
        else
            break;
    }
}

bool hs__dbc_at_eol(struct hs__dbc_scan *s)
{
    hs__dbc_skip_hspace(s);
    return s->p >= s->end || *s->p == '\n';
}

void hs__dbc_skip_line(struct hs__dbc_scan *s)
{
    while (s->p < s->end && *s->p != '\n')
        s->p++;
    if (s->p < s->end)
        newline(s);
}

static bool ident_start(int c)
{
    return isalpha(c) || c == '_';
}

static bool ident_char(int c)
{
    return isalnum(c) || c == '_';
}

const char *hs__dbc_mark(struct hs__dbc_scan *s)
{
    hs__dbc_skip_ws(s);
    return s->p;
}

int hs__dbc_name_span(struct hs__dbc_scan *s, const char **ret, size_t *ret_len, const char *what)
{
    hs__dbc_skip_ws(s);
    if (s->p >= s->end || !ident_char((unsigned char)*s->p))
        return hs__dbc_err(s, "expected %s", what);
    const char *b = s->p;
    while (s->p < s->end && ident_char((unsigned char)*s->p))
        s->p++;
    *ret = b;
    *ret_len = (size_t)(s->p - b);
    return 0;
}

bool hs__dbc_is_keyword(const char *p, size_t n)
{
    static const char *const kw[] = {
        "VERSION",      "NS_",
        "BS_",          "BU_",
        "BO_",          "SG_",
        "SIG_VALTYPE_", "VAL_",
        "CM_",          "NS_DESC_",
        "BA_DEF_",      "BA_",
        "VAL_TABLE_",   "CAT_DEF_",
        "CAT_",         "FILTER",
        "BA_DEF_DEF_",  "EV_DATA_",
        "ENVVAR_DATA_", "SGTYPE_",
        "SGTYPE_VAL_",  "BA_DEF_SGTYPE_",
        "BA_SGTYPE_",   "SIG_TYPE_REF_",
        "SIG_GROUP_",   "SIGTYPE_VALTYPE_",
        "BO_TX_BU_",    "BA_DEF_REL_",
        "BA_REL_",      "BA_DEF_DEF_REL_",
        "BU_SG_REL_",   "BU_EV_REL_",
        "BU_BO_REL_",   "SG_MUL_VAL_",
        "EV_",
    };
    for (unsigned i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (strlen(kw[i]) == n && memcmp(p, kw[i], n) == 0)
            return true;
    return false;
}

int hs__dbc_ident_span(struct hs__dbc_scan *s, const char **ret, size_t *ret_len, const char *what)
{
    hs__dbc_skip_ws(s);
    if (s->p >= s->end || !ident_start((unsigned char)*s->p))
        return hs__dbc_err(s, "expected %s", what);
    const char *b = s->p;
    while (s->p < s->end && ident_char((unsigned char)*s->p))
        s->p++;
    *ret = b;
    *ret_len = (size_t)(s->p - b);
    return 0;
}

char *hs__dbc_strndup(const char *p, size_t n)
{
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, p, n);
        r[n] = 0;
    }
    return r;
}

int hs__dbc_expect(struct hs__dbc_scan *s, char c, const char *what)
{
    hs__dbc_skip_ws(s);
    if (s->p >= s->end || *s->p != c)
        return hs__dbc_err(s, "expected '%c' %s", c, what);
    s->p++;
    return 0;
}

/* Copies a numeric token into buf (bounded), for strtod/strtoull on NUL-terminated text. */
static size_t number_token(struct hs__dbc_scan *s, char *buf, size_t size)
{
    hs__dbc_skip_ws(s);
    size_t n = 0;
    const char *p = s->p;
    while (p < s->end && n + 1 < size &&
           (isdigit((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.' || *p == 'e' ||
            *p == 'E')) {
        /* a sign only starts the token or follows an exponent */
        if ((*p == '+' || *p == '-') && n > 0 && buf[n - 1] != 'e' && buf[n - 1] != 'E')
            break;
        buf[n++] = *p++;
    }
    buf[n] = 0;
    return n;
}

int hs__dbc_number(struct hs__dbc_scan *s, double *ret, const char *what)
{
    char buf[64];
    size_t n = number_token(s, buf, sizeof buf);
    char *end;
    double v = n ? strtod(buf, &end) : 0;
    if (!n || end == buf || !isfinite(v))
        return hs__dbc_err(s, "expected a number for %s", what);
    s->p += end - buf;
    *ret = v;
    return 0;
}

int hs__dbc_uint(struct hs__dbc_scan *s, uint64_t max, uint64_t *ret, const char *what)
{
    hs__dbc_skip_ws(s);
    if (s->p >= s->end || !isdigit((unsigned char)*s->p))
        return hs__dbc_err(s, "expected an unsigned integer for %s", what);
    uint64_t v = 0;
    const char *b = s->p;
    while (s->p < s->end && isdigit((unsigned char)*s->p)) {
        unsigned dgt = (unsigned)(*s->p - '0');
        if (dgt > max || v > (max - dgt) / 10)
            return hs__dbc_err_at(s, b, "%s out of range (max %llu)", what,
                                  (unsigned long long)max);
        v = v * 10 + dgt;
        s->p++;
    }
    *ret = v;
    return 0;
}

int hs__dbc_int(struct hs__dbc_scan *s, int64_t *ret, const char *what)
{
    hs__dbc_skip_ws(s);
    const char *b = s->p;
    bool neg = s->p < s->end && *s->p == '-';
    if (neg)
        s->p++;
    uint64_t u;
    int r = hs__dbc_uint(s, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &u, what);
    if (r < 0) {
        s->d->column = hs__dbc_col(s, b); /* the number starts at its sign */
        return r;
    }
    *ret = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
}

int hs__dbc_string(struct hs__dbc_scan *s, char **ret, const char *what)
{
    hs__dbc_skip_ws(s);
    if (s->p >= s->end || *s->p != '"')
        return hs__dbc_err(s, "expected a quoted string for %s", what);
    int line0 = s->line;
    int col0 = (int)(s->p - s->line_start) + 1;
    s->p++;
    const char *b = s->p;
    size_t n = 0;
    for (const char *q = b;; q++) {
        if (q >= s->end)
            return hs_diag_set(s->d, -EINVAL, s->name, line0, col0, "unterminated string (%s)",
                               what);
        if (*q == '\\' && q + 1 < s->end) {
            q++;
        } else if (*q == '"') {
            break;
        }
        n++;
    }
    char *out = malloc(n + 1);
    if (!out)
        return hs_diag_set(s->d, -ENOMEM, s->name, s->line, 0, "out of memory");
    size_t k = 0;
    while (*s->p != '"') {
        if (*s->p == '\\' && s->p + 1 < s->end)
            s->p++;
        if (*s->p == '\n')
            newline(s), out[k++] = '\n';
        else
            out[k++] = *s->p++;
    }
    s->p++;
    out[k] = 0;
    *ret = out;
    return 0;
}

int hs__dbc_skip_statement(struct hs__dbc_scan *s, const char *keyword)
{
    int line0 = s->line;
    bool in_str = false;
    while (s->p < s->end) {
        char c = *s->p;
        if (c == '\n') {
            newline(s);
            continue;
        }
        s->p++;
        if (in_str && c == '\\' && s->p < s->end && *s->p != '\n')
            s->p++;
        else if (c == '"')
            in_str = !in_str;
        else if (c == ';' && !in_str)
            return 0;
    }
    return hs_diag_set(s->d, -EINVAL, s->name, line0, 0, "%s statement has no closing ';'",
                       keyword);
}
