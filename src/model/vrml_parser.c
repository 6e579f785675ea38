/* VRML97 statements into a node tree: nodes with DEF/USE, field values, PROTO and EXTERNPROTO
 * declarations (vrml_proto.c), ROUTE skipped. USE is resolved here, to the already parsed node,
 * so the tree is acyclic: a name is defined only once its node is complete. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vrml_parser_internal.h"

static bool is_kw(const struct hs__vtoken *t, const char *kw)
{
    return t->kind == HS__VT_ID && strcmp(t->text, kw) == 0;
}

/* Unsigned nan and inf lex as identifiers (signed ones are numbers); they are values here. */
static bool is_nonfinite_word(const struct hs__vtoken *t)
{
    return t->kind == HS__VT_ID &&
           (strcasecmp(t->text, "nan") == 0 || strcasecmp(t->text, "inf") == 0 ||
            strcasecmp(t->text, "infinity") == 0);
}

static bool is_scalar_id(const struct hs__vtoken *t)
{
    return is_kw(t, "TRUE") || is_kw(t, "FALSE") || is_kw(t, "NULL") || is_nonfinite_word(t);
}

/* Nodes and fields that only change how a model looks (hilsim draws nothing and simulates none
 * of them), so a nan there loses nothing. Everything else may reach the physics. */
static bool visual_only(const char *node_type, const char *field)
{
    static const char *const nodes[] = {
        "Normal",
        "Color",
        "TextureCoordinate",
        "TextureTransform",
        "Material",
        "Appearance",
        "ImageTexture",
        "PixelTexture",
        "MovieTexture",
        "FontStyle",
        "Background",
        "Fog",
        "DirectionalLight",
        "PointLight",
        "SpotLight",
        "Viewpoint",
        "NavigationInfo",
        "WorldInfo",
        "Sound",
        "AudioClip",
        "TimeSensor",
    };
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        if (strcmp(node_type, nodes[i]) == 0)
            return true;
    size_t n = strlen(node_type), k = strlen("Interpolator");
    if (n > k && strcmp(node_type + n - k, "Interpolator") == 0)
        return true; /* animation, driven by ROUTEs, which hilsim skips */
    /* Shading and culling hints of geometry and grouping nodes. */
    return strcmp(field, "creaseAngle") == 0 || strcmp(field, "bboxCenter") == 0 ||
           strcmp(field, "bboxSize") == 0;
}

int hs__vp_check_finite(struct hs__vparser *p, const char *node_type, const char *field,
                        struct hs__vvalue *v)
{
    if (v->kind != HS__VV_SCALARS)
        return 0;
    const struct hs__vitem *first = NULL;
    uint32_t count = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->items[i].kind != HS__VI_NUM || !v->items[i].nonfinite)
            continue;
        if (!first)
            first = &v->items[i];
        count++;
    }
    if (!first)
        return 0;
    if (!visual_only(node_type, field))
        return hs_diag_set(p->diag, -EINVAL, p->file, first->line, first->column,
                           "field '%s' of %s: number '%s' is not finite (nan and inf are "
                           "accepted only in fields that affect just the looks: Normal, Color, "
                           "TextureCoordinate, Material, ...)",
                           field, node_type, first->str);
    char *msg = NULL;
    if (asprintf(&msg,
                 "field '%s' of %s: %u non-finite number%s (first '%s'); visual only, read as 0",
                 field, node_type, count, count == 1 ? "" : "s", first->str) < 0)
        return -ENOMEM;
    struct hs__vwarning w = {.line = first->line,
                             .column = first->column,
                             .msg = hs__arena_dup(p->arena, msg, strlen(msg) + 1)};
    free(msg);
    if (!w.msg)
        return -ENOMEM;
    int r = hs__vec_push(p->arena, &p->warnings, &w, sizeof w);
    if (r < 0)
        return r;
    for (uint32_t i = 0; i < v->n; i++)
        if (v->items[i].kind == HS__VI_NUM && v->items[i].nonfinite)
            v->items[i].num = 0;
    return 0;
}

int hs__vp_next(struct hs__vparser *p)
{
    return hs__vlex_next(&p->lx, &p->tok);
}

int hs__vp_error(struct hs__vparser *p, const struct hs__vtoken *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = hs_diag_vset(p->diag, -EINVAL, p->file, t->line, t->column, fmt, ap);
    va_end(ap);
    return r;
}

int hs__vp_expect_id(struct hs__vparser *p, const char *what, const char **ret_name)
{
    if (p->tok.kind != HS__VT_ID)
        return hs__vp_error(p, &p->tok, "expected %s, got %s", what, hs__vtok_name(p->tok.kind));
    *ret_name = p->tok.text;
    return hs__vp_next(p);
}

int hs__vp_expect(struct hs__vparser *p, enum hs__vtok kind, const char *context)
{
    if (p->tok.kind != kind)
        return hs__vp_error(
            p, &p->tok, "expected %s %s, got %s%s%s%s", hs__vtok_name(kind), context,
            hs__vtok_name(p->tok.kind), p->tok.kind == HS__VT_ID ? " '" : "",
            p->tok.kind == HS__VT_ID ? p->tok.text : "", p->tok.kind == HS__VT_ID ? "'" : "");
    return hs__vp_next(p);
}

int hs__vec_push(struct hs__arena *a, struct hs__vec *v, const void *elem, size_t size)
{
    if (v->n == v->cap) {
        uint32_t ncap = v->cap ? v->cap * 2 : 8;
        if (ncap > (1u << 28))
            return -E2BIG;
        void *nd = hs__arena_alloc(a, (size_t)ncap * size);
        if (!nd)
            return -ENOMEM;
        if (v->n)
            memcpy(nd, v->data, (size_t)v->n * size);
        v->data = nd; /* the old block stays in the arena until the document is freed */
        v->cap = ncap;
    }
    memcpy((char *)v->data + (size_t)v->n * size, elem, size);
    v->n++;
    return 0;
}

static int depth_enter(struct hs__vparser *p)
{
    if (++p->depth > HS_VRML_MAX_DEPTH)
        return hs__vp_error(p, &p->tok, "nesting deeper than %d levels", HS_VRML_MAX_DEPTH);
    return 0;
}

static struct hs__vnode *lookup_def(const struct hs__vscope *s, const char *name)
{
    for (uint32_t i = s->defs.n; i-- > 0;) {
        const struct hs__vdef *d = &((const struct hs__vdef *)s->defs.data)[i];
        if (strcmp(d->name, name) == 0)
            return d->node;
    }
    return NULL;
}

const struct hs__vproto *hs__vp_lookup_proto(const struct hs__vscope *s, const char *name)
{
    for (; s; s = s->parent)
        for (const struct hs__vproto *pr = s->protos; pr; pr = pr->next)
            if (strcmp(pr->name, name) == 0)
                return pr;
    return NULL;
}

static int parse_node_body(struct hs__vparser *p, const struct hs__vtoken *type_tok,
                           const char *def, struct hs__vnode **ret_node);

/* The token after DEF or USE, read as a name (see hs__vlexer.name_mode). */
static int next_name(struct hs__vparser *p)
{
    p->lx.name_mode = true;
    int r = hs__vp_next(p);
    p->lx.name_mode = false;
    return r;
}

/* DEF name Type { } | USE name | Type { } */
int hs__vp_parse_node_stmt(struct hs__vparser *p, struct hs__vnode **ret_node)
{
    const char *def = NULL;
    if (is_kw(&p->tok, "USE")) {
        int r = next_name(p);
        if (r < 0)
            return r;
        struct hs__vtoken name_tok = p->tok;
        const char *name;
        if ((r = hs__vp_expect_id(p, "a name after USE", &name)) < 0)
            return r;
        struct hs__vnode *n = lookup_def(p->scope, name);
        if (!n)
            return hs__vp_error(p, &name_tok, "USE of undefined name '%s' (expected a DEF before)",
                                name);
        *ret_node = n;
        return 0;
    }
    if (is_kw(&p->tok, "DEF")) {
        int r = next_name(p);
        if (r < 0)
            return r;
        if ((r = hs__vp_expect_id(p, "a name after DEF", &def)) < 0)
            return r;
    }
    if (p->tok.kind != HS__VT_ID || is_scalar_id(&p->tok) || is_kw(&p->tok, "DEF") ||
        is_kw(&p->tok, "USE") || is_kw(&p->tok, "IS"))
        return hs__vp_error(p, &p->tok, "expected a node type, got %s%s%s%s",
                            hs__vtok_name(p->tok.kind), p->tok.kind == HS__VT_ID ? " '" : "",
                            p->tok.kind == HS__VT_ID ? p->tok.text : "",
                            p->tok.kind == HS__VT_ID ? "'" : "");
    struct hs__vtoken type_tok = p->tok;
    int r = hs__vp_next(p);
    if (r < 0)
        return r;
    struct hs__vnode *n = NULL;
    if ((r = parse_node_body(p, &type_tok, def, &n)) < 0)
        return r;
    if (def) {
        struct hs__vdef d = {.name = def, .node = n};
        if (hs__vec_push(p->arena, &p->scope->defs, &d, sizeof d) < 0)
            return hs__vp_error(p, &type_tok, "too many DEF names");
    }
    *ret_node = n;
    return 0;
}

static int push_item(struct hs__vparser *p, struct hs__vec *items)
{
    struct hs__vitem it = {.line = p->tok.line, .column = p->tok.column};
    if (p->tok.kind == HS__VT_NUM) {
        it.kind = HS__VI_NUM;
        it.num = p->tok.num;
        it.nonfinite = p->tok.nonfinite;
        it.str = p->tok.nonfinite ? p->tok.text : NULL;
    } else if (is_nonfinite_word(&p->tok)) {
        it.kind = HS__VI_NUM;
        it.num = strcasecmp(p->tok.text, "nan") == 0 ? NAN : INFINITY;
        it.nonfinite = true;
        it.str = p->tok.text;
    } else if (p->tok.kind == HS__VT_STR) {
        it.kind = HS__VI_STR;
        it.str = p->tok.text;
    } else if (is_kw(&p->tok, "NULL")) {
        it.kind = HS__VI_NULL;
    } else {
        it.kind = HS__VI_BOOL;
        it.num = is_kw(&p->tok, "TRUE");
    }
    int r = hs__vec_push(p->arena, items, &it, sizeof it);
    if (r < 0)
        return hs__vp_error(p, &p->tok, "value list too long");
    return hs__vp_next(p);
}

static bool starts_scalar(const struct hs__vtoken *t)
{
    return t->kind == HS__VT_NUM || t->kind == HS__VT_STR || is_scalar_id(t);
}

/* A field value without a schema: [ list ], a node, IS name, or a run of scalars. */
int hs__vp_parse_value(struct hs__vparser *p, const char *field, struct hs__vvalue *ret_value)
{
    struct hs__vvalue v = {.line = p->tok.line, .column = p->tok.column, .file = p->file};
    struct hs__vec items = {0}, nodes = {0};
    int r;
    if (is_kw(&p->tok, "IS")) {
        if ((r = hs__vp_next(p)) < 0)
            return r;
        struct hs__vtoken nt = p->tok;
        if ((r = hs__vp_expect_id(p, "an interface field name after IS", &v.is_name)) < 0)
            return r;
        if (!p->cur_proto)
            return hs__vp_error(p, &nt, "IS outside a PROTO body");
        bool found = false;
        for (uint32_t i = 0; i < p->cur_proto->nifaces && !found; i++)
            found = strcmp(p->cur_proto->ifaces[i].name, v.is_name) == 0;
        if (!found)
            return hs__vp_error(p, &nt, "IS '%s': no such field in PROTO %s", v.is_name,
                                p->cur_proto->name);
        v.kind = HS__VV_IS;
        *ret_value = v;
        return 0;
    }
    if (p->tok.kind == HS__VT_LBRACK) {
        struct hs__vtoken open = p->tok;
        if ((r = depth_enter(p)) < 0 || (r = hs__vp_next(p)) < 0)
            return r;
        v.bracketed = true;
        while (p->tok.kind != HS__VT_RBRACK) {
            if (p->tok.kind == HS__VT_EOF)
                return hs__vp_error(p, &p->tok,
                                    "expected ']' closing the value of '%s' opened "
                                    "at line %d",
                                    field, open.line);
            if (starts_scalar(&p->tok)) {
                if (nodes.n)
                    return hs__vp_error(p, &p->tok, "expected a node in '%s', got a value", field);
                if ((r = push_item(p, &items)) < 0)
                    return r;
            } else if (p->tok.kind == HS__VT_ID) {
                if (items.n)
                    return hs__vp_error(p, &p->tok, "expected a value in '%s', got '%s'", field,
                                        p->tok.text);
                struct hs__vnode *n = NULL;
                if ((r = hs__vp_parse_node_stmt(p, &n)) < 0)
                    return r;
                if (hs__vec_push(p->arena, &nodes, &n, sizeof n) < 0)
                    return hs__vp_error(p, &p->tok, "node list too long");
            } else {
                return hs__vp_error(p, &p->tok, "expected a value or ']' in '%s', got %s", field,
                                    hs__vtok_name(p->tok.kind));
            }
        }
        p->depth--;
        if ((r = hs__vp_next(p)) < 0)
            return r;
    } else if (p->tok.kind == HS__VT_ID && !is_scalar_id(&p->tok)) {
        struct hs__vnode *n = NULL;
        if ((r = hs__vp_parse_node_stmt(p, &n)) < 0)
            return r;
        if ((r = hs__vec_push(p->arena, &nodes, &n, sizeof n)) < 0)
            return r;
    } else {
        while (starts_scalar(&p->tok))
            if ((r = push_item(p, &items)) < 0)
                return r;
        if (!items.n)
            return hs__vp_error(p, &p->tok, "expected a value for field '%s', got %s", field,
                                hs__vtok_name(p->tok.kind));
    }
    if (nodes.n) {
        v.kind = HS__VV_NODES;
        v.n = nodes.n;
        v.nodes = nodes.data;
    } else {
        v.kind = HS__VV_SCALARS;
        v.n = items.n;
        v.items = items.data;
    }
    *ret_value = v;
    return 0;
}

/* ROUTE a.b TO c.d: routes drive animation only; nothing for a body model. */
static int skip_route(struct hs__vparser *p)
{
    static const enum hs__vtok shape[] = {HS__VT_ID, HS__VT_DOT, HS__VT_ID, HS__VT_ID,
                                          HS__VT_ID, HS__VT_DOT, HS__VT_ID};
    int r = hs__vp_next(p);
    for (size_t i = 0; r == 0 && i < sizeof shape / sizeof shape[0]; i++)
        r = hs__vp_expect(p, shape[i], "in ROUTE");
    return r;
}

/* Statements of a node body that are not plain fields. Returns 1 when handled. */
static int parse_body_extra(struct hs__vparser *p, const char *node_type)
{
    int r;
    if (is_kw(&p->tok, "PROTO") || is_kw(&p->tok, "EXTERNPROTO")) {
        r = hs__vp_parse_proto(p);
        return r < 0 ? r : 1;
    }
    if (is_kw(&p->tok, "ROUTE")) {
        r = skip_route(p);
        return r < 0 ? r : 1;
    }
    if (is_kw(&p->tok, "field") || is_kw(&p->tok, "exposedField") || is_kw(&p->tok, "eventIn") ||
        is_kw(&p->tok, "eventOut")) {
        /* Script interface declarations: parsed for syntax, not used. */
        struct hs__viface iface;
        r = hs__vp_parse_iface(p, true, &iface);
        return r < 0 ? r : 1;
    }
    (void)node_type;
    return 0;
}

static const struct hs__viface *proto_iface(const struct hs__vproto *pr, const char *name)
{
    for (uint32_t i = 0; i < pr->nifaces; i++)
        if (strcmp(pr->ifaces[i].name, name) == 0)
            return &pr->ifaces[i];
    return NULL;
}

/* The declared type of a field, or an error for a field the node does not have. */
static int field_type(struct hs__vparser *p, const struct hs__vnode *n, const struct hs__vfield *f,
                      const struct hs__vschema_field *schema, uint32_t nschema,
                      enum hs__vftype *ret_type)
{
    *ret_type = HS__FT_UNKNOWN;
    if (n->proto) {
        const struct hs__viface *i = proto_iface(n->proto, f->name);
        if (!i)
            return hs_diag_set(p->diag, -EINVAL, p->file, f->line, f->column,
                               "unknown field '%s' in %s (not declared by its PROTO)", f->name,
                               n->type);
        *ret_type = i->type;
    } else if (schema) {
        uint32_t k = 0;
        while (k < nschema && strcmp(schema[k].name, f->name) != 0)
            k++;
        if (k == nschema)
            return hs_diag_set(p->diag, -EINVAL, p->file, f->line, f->column,
                               "unknown field '%s' in %s", f->name, n->type);
        *ret_type = schema[k].type;
    }
    return 0;
}

static int check_field(struct hs__vparser *p, const struct hs__vnode *n, const struct hs__vfield *f,
                       enum hs__vftype t)
{
    if (n->proto && f->value.kind != HS__VV_IS) {
        const struct hs__viface *i = proto_iface(n->proto, f->name);
        if (i->kind == HS__IF_EVENTIN || i->kind == HS__IF_EVENTOUT)
            return hs_diag_set(p->diag, -EINVAL, p->file, f->line, f->column,
                               "'%s' of %s is an event, not a field", f->name, n->type);
    }
    if (f->value.kind == HS__VV_IS)
        return 0;
    /* OpenHRP 2 wrote jointAxis as "X"/"Y"/"Z"; the model builder accepts both forms. */
    if (strcmp(f->name, "jointAxis") == 0 && f->value.kind == HS__VV_SCALARS && f->value.n == 1 &&
        f->value.items[0].kind == HS__VI_STR)
        return 0;
    return hs__vvalue_check(&f->value, t, f->name, n->type, p->diag);
}

static int parse_node_body(struct hs__vparser *p, const struct hs__vtoken *type_tok,
                           const char *def, struct hs__vnode **ret_node)
{
    int r;
    struct hs__vnode *n = hs__arena_alloc(p->arena, sizeof *n);
    if (!n)
        return -ENOMEM;
    n->type = type_tok->text;
    n->def = def;
    n->line = type_tok->line;
    n->column = type_tok->column;
    n->file = p->file;
    n->proto = hs__vp_lookup_proto(p->scope, n->type);
    uint32_t nschema = 0;
    const struct hs__vschema_field *schema = n->proto ? NULL : hs__vschema_find(n->type, &nschema);
    if (p->tok.kind != HS__VT_LBRACE)
        return hs__vp_error(p, &p->tok, "expected '{' after node type '%s', got %s", n->type,
                            hs__vtok_name(p->tok.kind));
    struct hs__vtoken open = p->tok;
    if ((r = depth_enter(p)) < 0 || (r = hs__vp_next(p)) < 0)
        return r;
    struct hs__vec fields = {0};
    while (p->tok.kind != HS__VT_RBRACE) {
        if (p->tok.kind == HS__VT_EOF)
            return hs__vp_error(p, &p->tok,
                                "expected '}' closing %s opened at line %d, got end of file",
                                n->type, open.line);
        if (p->tok.kind != HS__VT_ID)
            return hs__vp_error(p, &p->tok, "expected a field name or '}' in %s, got %s", n->type,
                                hs__vtok_name(p->tok.kind));
        if ((r = parse_body_extra(p, n->type)) < 0)
            return r;
        if (r == 1)
            continue;
        struct hs__vfield f = {.name = p->tok.text, .line = p->tok.line, .column = p->tok.column};
        struct hs__vfield *twice = NULL;
        for (uint32_t i = 0; i < fields.n && !twice; i++)
            if (strcmp(((struct hs__vfield *)fields.data)[i].name, f.name) == 0)
                twice = &((struct hs__vfield *)fields.data)[i];
        enum hs__vftype ft;
        if ((r = field_type(p, n, &f, schema, nschema, &ft)) < 0 || (r = hs__vp_next(p)) < 0)
            return r;
        /* A bare word where a value is due reads better as a type error than as a node. */
        if (ft != HS__FT_UNKNOWN && ft != HS__FT_SFNODE && ft != HS__FT_MFNODE &&
            p->tok.kind == HS__VT_ID && !starts_scalar(&p->tok) && !is_kw(&p->tok, "IS"))
            return hs__vp_error(p, &p->tok, "field '%s' of %s expects %s, got '%s'%s", f.name,
                                n->type, hs__vftype_name(ft), p->tok.text,
                                ft == HS__FT_SFSTRING ? " (a string needs quotes)" : "");
        if ((r = hs__vp_parse_value(p, f.name, &f.value)) < 0)
            return r;
        if ((r = check_field(p, n, &f, ft)) < 0 ||
            (r = hs__vp_check_finite(p, n->type, f.name, &f.value)) < 0)
            return r;
        if (twice) {
            /* OpenHRP's own RH2 samples set a Joint's rotation twice; its parser (and
             * Choreonoid's) reads fields in order, so the last one wins. */
            char msg[160];
            snprintf(msg, sizeof msg,
                     "field '%s' given twice in %s (first at line %d); the last "
                     "value is used",
                     f.name, n->type, twice->line);
            struct hs__vwarning w = {.line = f.line,
                                     .column = f.column,
                                     .msg = hs__arena_dup(p->arena, msg, strlen(msg) + 1)};
            if (!w.msg || hs__vec_push(p->arena, &p->warnings, &w, sizeof w) < 0)
                return -ENOMEM;
            *twice = f;
            continue;
        }
        if (hs__vec_push(p->arena, &fields, &f, sizeof f) < 0)
            return hs__vp_error(p, &p->tok, "too many fields");
    }
    p->depth--;
    if ((r = hs__vp_next(p)) < 0)
        return r;
    n->nfields = fields.n;
    n->fields = fields.data;
    *ret_node = n;
    return 0;
}

int hs__vp_parse_statements(struct hs__vparser *p, enum hs__vtok until, struct hs__vec *nodes)
{
    int r;
    while (p->tok.kind != until) {
        if (p->tok.kind == HS__VT_EOF)
            return hs__vp_error(p, &p->tok, "expected %s, got end of file", hs__vtok_name(until));
        if (is_kw(&p->tok, "PROTO") || is_kw(&p->tok, "EXTERNPROTO")) {
            if ((r = hs__vp_parse_proto(p)) < 0)
                return r;
            continue;
        }
        if (is_kw(&p->tok, "ROUTE")) {
            if ((r = skip_route(p)) < 0)
                return r;
            continue;
        }
        struct hs__vnode *n = NULL;
        if ((r = hs__vp_parse_node_stmt(p, &n)) < 0)
            return r;
        if (hs__vec_push(p->arena, nodes, &n, sizeof n) < 0)
            return hs__vp_error(p, &p->tok, "too many nodes");
    }
    return 0;
}

void hs__vrml_doc_free(struct hs__vdoc *doc)
{
    if (!doc)
        return;
    struct hs__arena a = doc->arena;
    hs__arena_free(&a); /* doc itself lives in its arena */
}

int hs__vrml_parse(const char *data, size_t size, const char *file, struct hs__vdoc **ret_doc,
                   struct hs_diag *diag)
{
    struct hs__arena arena = {0};
    struct hs__vparser p = {.diag = diag, .file = file, .arena = &arena};
    struct hs__vscope top = {0};
    struct hs__vec roots = {0};
    int r;
    if (size > HS_VRML_MAX_FILE_BYTES) {
        r = hs_diag_set(diag, -EFBIG, file, 0, 0, "file larger than %u bytes",
                        HS_VRML_MAX_FILE_BYTES);
        goto fail;
    }
    if (size >= 10 && memcmp(data, "#VRML V1.0", 10) == 0) {
        r = hs_diag_set(diag, -EINVAL, file, 1, 1,
                        "VRML 1.0 is not supported (expected #VRML V2.0)");
        goto fail;
    }
    char *fcopy = hs__arena_dup(&arena, file, strlen(file) + 1);
    if (!fcopy) {
        r = -ENOMEM;
        goto fail;
    }
    p.file = fcopy;
    p.scope = &top;
    hs__vlex_init(&p.lx, data, size, fcopy, &arena, diag);
    if ((r = hs__vp_next(&p)) < 0)
        goto fail;
    if ((r = hs__vp_parse_statements(&p, HS__VT_EOF, &roots)) < 0)
        goto fail;
    struct hs__vdoc *doc = hs__arena_alloc(&arena, sizeof *doc);
    if (!doc) {
        r = -ENOMEM;
        goto fail;
    }
    doc->file = fcopy;
    doc->nroots = roots.n;
    doc->roots = roots.data;
    doc->nwarnings = p.warnings.n;
    doc->warnings = p.warnings.data;
    doc->arena = arena;
    *ret_doc = doc;
    return 0;
fail:
    if (r == -ENOMEM)
        hs_diag_set(diag, -ENOMEM, file, 0, 0, "out of memory");
    hs__arena_free(&arena);
    return r;
}
