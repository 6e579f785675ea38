/* Shared between the statement parser (vrml_parser.c) and PROTO parsing (vrml_proto.c). */
#ifndef HS_MODEL_VRML_PARSER_INTERNAL_H
#define HS_MODEL_VRML_PARSER_INTERNAL_H

#include <stdarg.h>

#include "vrml_internal.h"

/* Growable array whose blocks live in the arena. */
struct hs__vec {
    void *data;
    uint32_t n, cap;
};
int hs__vec_push(struct hs__arena *a, struct hs__vec *v, const void *elem, size_t size);

struct hs__vdef {
    const char *name;
    struct hs__vnode *node;
};

/* DEF names are local to a file or a PROTO body; PROTO names are also seen from inner scopes. */
struct hs__vscope {
    const struct hs__vscope *parent;
    const struct hs__vproto *protos;
    struct hs__vec defs;
};

struct hs__vparser {
    struct hs__vlexer lx;
    struct hs__vtoken tok; /* lookahead */
    struct hs__arena *arena;
    struct hs_diag *diag;
    const char *file;
    int depth;
    struct hs__vscope *scope;
    const struct hs__vproto *cur_proto; /* PROTO whose body is being parsed */
    struct hs__vec warnings;            /* struct hs__vwarning */
};

int hs__vp_next(struct hs__vparser *p);
int hs__vp_error(struct hs__vparser *p, const struct hs__vtoken *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int hs__vp_expect(struct hs__vparser *p, enum hs__vtok kind, const char *context);
int hs__vp_expect_id(struct hs__vparser *p, const char *what, const char **ret_name);
int hs__vp_parse_value(struct hs__vparser *p, const char *field, struct hs__vvalue *ret_value);
/* Non-finite numbers in a parsed value: in a field that only affects how the model looks they
 * become 0 with one warning per field; anywhere else they are an error at the number. */
int hs__vp_check_finite(struct hs__vparser *p, const char *node_type, const char *field,
                        struct hs__vvalue *v);
int hs__vp_parse_node_stmt(struct hs__vparser *p, struct hs__vnode **ret_node);
int hs__vp_parse_statements(struct hs__vparser *p, enum hs__vtok until, struct hs__vec *nodes);
const struct hs__vproto *hs__vp_lookup_proto(const struct hs__vscope *s, const char *name);
/* At 'PROTO' or 'EXTERNPROTO': parses the declaration and adds it to the current scope. */
int hs__vp_parse_proto(struct hs__vparser *p);
/* At field/exposedField/eventIn/eventOut: one interface declaration. */
int hs__vp_parse_iface(struct hs__vparser *p, bool with_default, struct hs__viface *ret_iface);

#endif
