/* DBC attributes. Only VFrameFormat changes how hilsim reads a message (CAN FD or classic);
 * every other attribute is skipped, but a BA_ naming an unknown message or signal is reported,
 * since it usually means the message or signal was renamed and the file is out of step. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbc_internal.h"

#define VFF "VFrameFormat"

/* Vector's value list, which cantools also assumes when the file defines VFrameFormat as INT. */
static const char *const vff_standard[] = {
    "StandardCAN", "ExtendedCAN", "reserved",       "reserved",       "reserved", "reserved",
    "reserved",    "reserved",    "reserved",       "reserved",       "reserved", "reserved",
    "reserved",    "reserved",    "StandardCAN_FD", "ExtendedCAN_FD",
};

/* 1 FD, 0 classic, -1 neither (reserved or unknown) */
static int classify(const char *v)
{
    size_t n = strlen(v);
    if (n > 3 && !strcmp(v + n - 3, "_FD"))
        return 1;
    if (!strcmp(v, "StandardCAN") || !strcmp(v, "ExtendedCAN") || !strcmp(v, "J1939PG"))
        return 0;
    return -1;
}

static int classify_index(const struct hs__dbc_build *b, uint64_t i)
{
    if (b->n_vff)
        return i < b->n_vff ? classify(b->vff_names[i]) : -1;
    return i < sizeof vff_standard / sizeof vff_standard[0] ? classify(vff_standard[i]) : -1;
}

/* An attribute value: a number (ENUM index) or a string (ENUM name). -1 if not understood. */
static int vff_value(struct hs__dbc_build *b)
{
    hs__dbc_skip_ws(&b->s);
    if (hs__dbc_peek(&b->s) == '"') {
        char *v;
        if (hs__dbc_string(&b->s, &v, "attribute value") < 0)
            return -1;
        int c = classify(v);
        free(v);
        return c;
    }
    uint64_t i;
    if (hs__dbc_uint(&b->s, UINT32_MAX, &i, "attribute value") < 0)
        return -1;
    return classify_index(b, i);
}

void hs__dbc_attr_free(struct hs__dbc_build *b)
{
    for (unsigned i = 0; i < b->n_vff; i++)
        free(b->vff_names[i]);
    free(b->vff_names);
    b->vff_names = NULL;
    b->n_vff = 0;
}

/* Attribute name in quotes; *ret_vff says whether it is VFrameFormat. */
static int attr_name(struct hs__dbc_build *b, bool *ret_vff)
{
    char *n;
    int r = hs__dbc_string(&b->s, &n, "attribute name");
    if (r < 0)
        return r;
    *ret_vff = !strcmp(n, VFF);
    free(n);
    return 0;
}

/* BA_DEF_ [BO_|SG_|BU_|EV_] "name" TYPE ...; */
int hs__dbc_parse_ba_def(struct hs__dbc_build *b)
{
    struct hs__dbc_scan *s = &b->s;
    hs__dbc_skip_ws(s);
    if (hs__dbc_peek(s) != '"') {
        const char *t;
        size_t n;
        if (hs__dbc_ident_span(s, &t, &n, "object type or attribute name") < 0)
            return hs__dbc_skip_statement(s, "BA_DEF_");
    }
    bool vff;
    hs__dbc_skip_ws(s);
    if (hs__dbc_peek(s) != '"' || attr_name(b, &vff) < 0 || !vff)
        return hs__dbc_skip_statement(s, "BA_DEF_");
    const char *t;
    size_t n;
    if (hs__dbc_ident_span(s, &t, &n, "attribute type") < 0 || n != 4 || memcmp(t, "ENUM", 4))
        return hs__dbc_skip_statement(s, "BA_DEF_"); /* INT: Vector's standard list applies */
    hs__dbc_attr_free(b);
    unsigned cap = 0;
    for (;;) {
        hs__dbc_skip_ws(s);
        if (hs__dbc_peek(s) != '"')
            break;
        char *v;
        int r = hs__dbc_string(s, &v, "VFrameFormat value");
        if (r < 0)
            return r;
        if (hs__dbc_grow((void **)&b->vff_names, &cap, b->n_vff + 1, sizeof *b->vff_names) < 0) {
            free(v);
            return hs__dbc_nomem(b);
        }
        b->vff_names[b->n_vff++] = v;
        hs__dbc_skip_ws(s);
        if (hs__dbc_peek(s) == ',')
            s->p++;
    }
    return hs__dbc_skip_statement(s, "BA_DEF_");
}

/* BA_DEF_DEF_ "name" value; */
int hs__dbc_parse_ba_def_def(struct hs__dbc_build *b)
{
    bool vff;
    hs__dbc_skip_ws(&b->s);
    if (hs__dbc_peek(&b->s) == '"' && attr_name(b, &vff) == 0 && vff)
        b->vff_default = vff_value(b);
    return hs__dbc_skip_statement(&b->s, "BA_DEF_DEF_");
}

/* BA_ "name" [BO_ id | SG_ id signal | BU_ node | EV_ var] value; */
int hs__dbc_parse_ba(struct hs__dbc_build *b)
{
    struct hs__dbc_scan *s = &b->s;
    bool vff;
    hs__dbc_skip_ws(s);
    if (hs__dbc_peek(s) != '"' || attr_name(b, &vff) < 0)
        return hs__dbc_skip_statement(s, "BA_");
    const char *t;
    size_t n;
    hs__dbc_skip_ws(s);
    int c = hs__dbc_peek(s);
    if (!((c >= 'A' && c <= 'Z') || c == '_') || hs__dbc_ident_span(s, &t, &n, "object") < 0 ||
        n != 3 || (memcmp(t, "BO_", 3) && memcmp(t, "SG_", 3)))
        return hs__dbc_skip_statement(s, "BA_");
    bool sg = !memcmp(t, "SG_", 3);
    const char *at = hs__dbc_mark(s);
    int line = s->line, col = hs__dbc_col(s, at);
    uint64_t id;
    if (hs__dbc_uint(s, UINT32_MAX, &id, "message ID") < 0)
        return hs__dbc_skip_statement(s, "BA_");
    struct hs__dbc_msg_build *mb = hs__dbc_find_msg(b, id);
    if (!mb && id != 0xC0000000u) {
        hs__dbc_warn(b, line, col, "BA_ refers to unknown message ID %llu: ignored",
                     (unsigned long long)id);
        return hs__dbc_skip_statement(s, "BA_");
    }
    if (sg) {
        const char *sn;
        size_t sl;
        if (hs__dbc_name_span(s, &sn, &sl, "signal name") < 0)
            return hs__dbc_skip_statement(s, "BA_");
        if (mb && !mb->dropped && hs__dbc_find_sig(mb, sn, sl) < 0)
            hs__dbc_warn(b, s->line, hs__dbc_col(s, sn),
                         "BA_ refers to unknown signal %.*s in message %s: ignored",
                         (int)(sl > 64 ? 64 : sl), sn, mb->m.name);
    } else if (vff && mb) {
        mb->fd = vff_value(b);
    }
    return hs__dbc_skip_statement(s, "BA_");
}
