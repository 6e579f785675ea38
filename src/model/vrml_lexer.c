/* VRML97 tokens: identifiers, numbers, strings, braces, brackets and '.' (ROUTE). Commas and
 * '#' comments are whitespace. Every token carries its 1-based line and column. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vrml_internal.h"

void hs__vlex_init(struct hs__vlexer *lx, const char *data, size_t size, const char *file,
                   struct hs__arena *arena, struct hs_diag *diag)
{
    lx->p = data;
    lx->end = data + size;
    lx->line = 1;
    lx->column = 1;
    lx->file = file;
    lx->arena = arena;
    lx->diag = diag;
}

const char *hs__vtok_name(enum hs__vtok kind)
{
    static const char *const names[HS__VT_MAX] = {
        [HS__VT_EOF] = "end of file", [HS__VT_ID] = "identifier", [HS__VT_NUM] = "number",
        [HS__VT_STR] = "string",      [HS__VT_LBRACE] = "'{'",    [HS__VT_RBRACE] = "'}'",
        [HS__VT_LBRACK] = "'['",      [HS__VT_RBRACK] = "']'",    [HS__VT_DOT] = "'.'",
    };
    return (unsigned)kind < HS__VT_MAX ? names[kind] : "?";
}

static void advance(struct hs__vlexer *lx)
{
    if (*lx->p == '\n') {
        lx->line++;
        lx->column = 1;
    } else {
        lx->column++;
    }
    lx->p++;
}

/* Characters that end an identifier or a number (VRML97 IdRestChars exclusions). */
static bool is_delim(unsigned char c)
{
    return c <= 0x20 || c == '"' || c == '#' || c == '\'' || c == ',' || c == '.' || c == '[' ||
           c == '\\' || c == ']' || c == '{' || c == '}' || c == 0x7f;
}

static void skip_space(struct hs__vlexer *lx)
{
    while (lx->p < lx->end) {
        unsigned char c = (unsigned char)*lx->p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',') {
            advance(lx);
        } else if (c == '#') {
            while (lx->p < lx->end && *lx->p != '\n')
                advance(lx);
        } else {
            break;
        }
    }
}

static int lex_string(struct hs__vlexer *lx, struct hs__vtoken *t)
{
    advance(lx); /* opening quote */
    const char *start = lx->p;
    size_t n = 0;
    for (const char *q = lx->p; q < lx->end && *q != '"'; q++, n++)
        if (*q == '\\' && q + 1 < lx->end)
            q++;
    char *out = hs__arena_alloc(lx->arena, n + 1);
    if (!out)
        return -ENOMEM;
    size_t k = 0;
    (void)start;
    while (lx->p < lx->end && *lx->p != '"') {
        if (*lx->p == '\\' && lx->p + 1 < lx->end)
            advance(lx);
        out[k++] = *lx->p;
        advance(lx);
    }
    if (lx->p >= lx->end)
        return hs_diag_set(lx->diag, -EINVAL, lx->file, t->line, t->column,
                           "unterminated string (expected closing '\"')");
    advance(lx);
    out[k] = '\0';
    t->kind = HS__VT_STR;
    t->text = out;
    return 0;
}

static int lex_number(struct hs__vlexer *lx, struct hs__vtoken *t)
{
    const char *s = lx->p;
    /* A number may contain '.', so only the other delimiters end it. */
    while (lx->p < lx->end) {
        unsigned char c = (unsigned char)*lx->p;
        if (c != '.' && is_delim(c))
            break;
        advance(lx);
    }
    size_t len = (size_t)(lx->p - s);
    char buf[64];
    if (len >= sizeof buf)
        return hs_diag_set(lx->diag, -EINVAL, lx->file, t->line, t->column,
                           "malformed number (too long)");
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *endp;
    errno = 0;
    double v = strtod(buf, &endp);
    if (endp == buf || *endp != '\0')
        return hs_diag_set(lx->diag, -EINVAL, lx->file, t->line, t->column, "malformed number '%s'",
                           buf);
    t->kind = HS__VT_NUM;
    t->num = v;
    if (!isfinite(v)) {
        /* Exporters write -nan into normals and colours; whether that is fatal depends on the
         * field, which only the parser knows. The text is kept for its message. */
        t->nonfinite = true;
        t->text = hs__arena_dup(lx->arena, buf, len + 1);
        if (!t->text)
            return -ENOMEM;
    }
    return 0;
}

static int lex_id(struct hs__vlexer *lx, struct hs__vtoken *t)
{
    const char *s = lx->p;
    while (lx->p < lx->end &&
           (!is_delim((unsigned char)*lx->p) || (lx->name_mode && *lx->p == '.')))
        advance(lx);
    size_t len = (size_t)(lx->p - s);
    char *out = hs__arena_alloc(lx->arena, len + 1);
    if (!out)
        return -ENOMEM;
    memcpy(out, s, len);
    t->kind = HS__VT_ID;
    t->text = out;
    return 0;
}

int hs__vlex_next(struct hs__vlexer *lx, struct hs__vtoken *ret_tok)
{
    struct hs__vtoken t = {0};
    skip_space(lx);
    t.line = lx->line;
    t.column = lx->column;
    if (lx->p >= lx->end) {
        t.kind = HS__VT_EOF;
        *ret_tok = t;
        return 0;
    }
    unsigned char c = (unsigned char)*lx->p;
    unsigned char c1 = lx->p + 1 < lx->end ? (unsigned char)lx->p[1] : 0;
    int r = 0;
    if (lx->name_mode && (c == '.' || !is_delim(c)) && c != '\'' && c != '\\' && c != 0x7f) {
        r = lex_id(lx, &t);
        goto done;
    }
    switch (c) {
    case '{':
        t.kind = HS__VT_LBRACE;
        advance(lx);
        break;
    case '}':
        t.kind = HS__VT_RBRACE;
        advance(lx);
        break;
    case '[':
        t.kind = HS__VT_LBRACK;
        advance(lx);
        break;
    case ']':
        t.kind = HS__VT_RBRACK;
        advance(lx);
        break;
    case '"':
        r = lex_string(lx, &t);
        break;
    case '.':
        if (c1 >= '0' && c1 <= '9') {
            r = lex_number(lx, &t);
        } else {
            t.kind = HS__VT_DOT;
            advance(lx);
        }
        break;
    default:
        if ((c >= '0' && c <= '9') || c == '+' || c == '-')
            r = lex_number(lx, &t);
        else if (c < 0x20 || c == '\'' || c == '\\' || c == 0x7f)
            r = hs_diag_set(lx->diag, -EINVAL, lx->file, t.line, t.column,
                            "unexpected character 0x%02x", c);
        else
            r = lex_id(lx, &t);
        break;
    }
done:
    if (r < 0) {
        if (r == -ENOMEM)
            hs_diag_set(lx->diag, -ENOMEM, lx->file, t.line, t.column, "out of memory");
        return r;
    }
    *ret_tok = t;
    return 0;
}
