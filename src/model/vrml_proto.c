/* PROTO and EXTERNPROTO declarations: the interface (kinds, types, defaults, type-checked) and
 * the body. Instances are interpreted later: known OpenHRP names by name, others by walking the
 * body with IS resolved against the instance (vrml_field.c). EXTERNPROTO bodies live elsewhere;
 * the declaration is kept so that its instances parse, and the loader skips them. */
#include <errno.h>
#include <string.h>

#include "vrml_parser_internal.h"

static int iface_kind(const struct hs__vtoken *t, enum hs__viface_kind *ret)
{
    if (t->kind != HS__VT_ID)
        return -1;
    if (strcmp(t->text, "field") == 0)
        *ret = HS__IF_FIELD;
    else if (strcmp(t->text, "exposedField") == 0)
        *ret = HS__IF_EXPOSED;
    else if (strcmp(t->text, "eventIn") == 0)
        *ret = HS__IF_EVENTIN;
    else if (strcmp(t->text, "eventOut") == 0)
        *ret = HS__IF_EVENTOUT;
    else
        return -1;
    return 0;
}

int hs__vp_parse_iface(struct hs__vparser *p, bool with_default, struct hs__viface *ret_iface)
{
    struct hs__viface f = {0};
    int r;
    if (iface_kind(&p->tok, &f.kind) < 0)
        return hs__vp_error(p, &p->tok,
                            "expected field, exposedField, eventIn, eventOut or ']', got %s",
                            hs__vtok_name(p->tok.kind));
    if ((r = hs__vp_next(p)) < 0)
        return r;
    struct hs__vtoken type_tok = p->tok;
    const char *type_name;
    if ((r = hs__vp_expect_id(p, "a field type (SFFloat, MFNode, ...)", &type_name)) < 0)
        return r;
    f.type = hs__vftype_parse(type_name);
    if (f.type == HS__FT_UNKNOWN)
        return hs__vp_error(p, &type_tok, "unknown field type '%s'", type_name);
    struct hs__vtoken name_tok = p->tok;
    if ((r = hs__vp_expect_id(p, "a field name", &f.name)) < 0)
        return r;
    if (with_default && (f.kind == HS__IF_FIELD || f.kind == HS__IF_EXPOSED)) {
        /* A default never contains IS, even inside a PROTO body. */
        const struct hs__vproto *saved = p->cur_proto;
        p->cur_proto = NULL;
        r = hs__vp_parse_value(p, f.name, &f.def);
        p->cur_proto = saved;
        if (r < 0)
            return r;
        if ((r = hs__vvalue_check(&f.def, f.type, f.name, "PROTO interface", p->diag)) < 0 ||
            (r = hs__vp_check_finite(p, "PROTO interface", f.name, &f.def)) < 0)
            return r;
        f.has_default = true;
    }
    (void)name_tok;
    *ret_iface = f;
    return 0;
}

int hs__vp_parse_proto(struct hs__vparser *p)
{
    bool external = strcmp(p->tok.text, "EXTERNPROTO") == 0;
    struct hs__vtoken kw = p->tok;
    int r;
    if ((r = hs__vp_next(p)) < 0)
        return r;
    struct hs__vproto *pr = hs__arena_alloc(p->arena, sizeof *pr);
    if (!pr)
        return -ENOMEM;
    pr->line = kw.line;
    pr->column = kw.column;
    pr->external = external;
    if ((r = hs__vp_expect_id(p, "a PROTO name", &pr->name)) < 0)
        return r;
    if ((r = hs__vp_expect(p, HS__VT_LBRACK, "opening the PROTO interface")) < 0)
        return r;
    struct hs__vec ifaces = {0};
    while (p->tok.kind != HS__VT_RBRACK) {
        if (p->tok.kind == HS__VT_EOF)
            return hs__vp_error(p, &p->tok, "expected ']' closing the interface of PROTO %s",
                                pr->name);
        struct hs__viface f;
        if ((r = hs__vp_parse_iface(p, !external, &f)) < 0)
            return r;
        for (uint32_t i = 0; i < ifaces.n; i++)
            if (strcmp(((struct hs__viface *)ifaces.data)[i].name, f.name) == 0)
                return hs__vp_error(p, &kw, "PROTO %s declares '%s' twice", pr->name, f.name);
        if (hs__vec_push(p->arena, &ifaces, &f, sizeof f) < 0)
            return hs__vp_error(p, &p->tok, "PROTO interface too long");
    }
    if ((r = hs__vp_next(p)) < 0)
        return r;
    pr->nifaces = ifaces.n;
    pr->ifaces = ifaces.data;
    if (external) {
        /* The URL list (MFString) names where the body lives; it is not fetched. */
        struct hs__vvalue url;
        if ((r = hs__vp_parse_value(p, "EXTERNPROTO url", &url)) < 0)
            return r;
        if ((r = hs__vvalue_check(&url, HS__FT_MFSTRING, "url", "EXTERNPROTO", p->diag)) < 0)
            return r;
    } else {
        if ((r = hs__vp_expect(p, HS__VT_LBRACE, "opening the PROTO body")) < 0)
            return r;
        struct hs__vscope body_scope = {.parent = p->scope};
        struct hs__vscope *saved_scope = p->scope;
        const struct hs__vproto *saved_proto = p->cur_proto;
        struct hs__vec body = {0};
        p->scope = &body_scope;
        p->cur_proto = pr;
        r = hs__vp_parse_statements(p, HS__VT_RBRACE, &body);
        p->scope = saved_scope;
        p->cur_proto = saved_proto;
        if (r < 0)
            return r;
        if ((r = hs__vp_next(p)) < 0)
            return r;
        pr->nbody = body.n;
        pr->body = body.data;
    }
    /* Registered only now, so a body cannot instantiate its own PROTO. */
    pr->next = p->scope->protos;
    p->scope->protos = pr;
    return 0;
}
