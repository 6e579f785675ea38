/* Internal to hs_model: the VRML97 lexer, the generic node tree and PROTO handling.
 *
 * The parser is schema-light: a field value is read as scalars, nodes or an IS reference and
 * type-checked against a schema when the node's interface is known (built-in node, or a PROTO
 * declared in the file). All memory of one parsed file lives in its arena. */
#ifndef HS_MODEL_VRML_INTERNAL_H
#define HS_MODEL_VRML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/diag.h"

/* Limits that keep hostile input bounded (fuzzer-safe). */
#define HS_VRML_MAX_DEPTH 200 /* nesting of nodes and brackets */
#define HS_VRML_MAX_FILE_BYTES (64u << 20)

/* ---- arena: every allocation of one parse, freed at once ---- */
struct hs__arena {
    struct hs__arena_block *head;
};
void *hs__arena_alloc(struct hs__arena *a, size_t size); /* zeroed */
void *hs__arena_dup(struct hs__arena *a, const void *p, size_t size);
void hs__arena_free(struct hs__arena *a);

/* ---- lexer ---- */
enum hs__vtok {
    HS__VT_EOF,
    HS__VT_ID,
    HS__VT_NUM,
    HS__VT_STR,
    HS__VT_LBRACE,
    HS__VT_RBRACE,
    HS__VT_LBRACK,
    HS__VT_RBRACK,
    HS__VT_DOT,
    HS__VT_MAX
};

struct hs__vtoken {
    enum hs__vtok kind;
    const char *text; /* ID: NUL-terminated copy; STR: unescaped copy; NUM: only when
                       * nonfinite, the number as written; else NULL */
    double num;
    bool nonfinite; /* NUM: nan, inf or out of range; the parser decides if that is an error */
    int line, column;
};

struct hs__vlexer {
    const char *p, *end;
    int line, column;
    const char *file;
    struct hs__arena *arena;
    struct hs_diag *diag;
    /* Set by the parser for the token after DEF or USE: a name may then contain '.' and start
     * with a digit, as the names exporters write ("door0.7") and Choreonoid reads them. */
    bool name_mode;
};

void hs__vlex_init(struct hs__vlexer *lx, const char *data, size_t size, const char *file,
                   struct hs__arena *arena, struct hs_diag *diag);
int hs__vlex_next(struct hs__vlexer *lx, struct hs__vtoken *ret_tok);
const char *hs__vtok_name(enum hs__vtok kind);

/* ---- field types ---- */
enum hs__vftype {
    HS__FT_UNKNOWN,
    HS__FT_SFBOOL,
    HS__FT_SFCOLOR,
    HS__FT_SFFLOAT,
    HS__FT_SFIMAGE,
    HS__FT_SFINT32,
    HS__FT_SFNODE,
    HS__FT_SFROTATION,
    HS__FT_SFSTRING,
    HS__FT_SFTIME,
    HS__FT_SFVEC2F,
    HS__FT_SFVEC3F,
    HS__FT_MFCOLOR,
    HS__FT_MFFLOAT,
    HS__FT_MFINT32,
    HS__FT_MFNODE,
    HS__FT_MFROTATION,
    HS__FT_MFSTRING,
    HS__FT_MFTIME,
    HS__FT_MFVEC2F,
    HS__FT_MFVEC3F,
    HS__FT_MAX
};
enum hs__vftype hs__vftype_parse(const char *name);
const char *hs__vftype_name(enum hs__vftype t);

/* ---- node tree ---- */
enum hs__vitem_kind { HS__VI_NUM, HS__VI_STR, HS__VI_BOOL, HS__VI_NULL };

struct hs__vitem {
    enum hs__vitem_kind kind;
    double num;      /* NUM, BOOL (0/1); 0 in place of a non-finite number in a visual field */
    const char *str; /* STR; NUM: the text of a non-finite number */
    bool nonfinite;  /* NUM: written as nan, inf or out of range (see vrml_parser.c) */
    int line, column;
};

enum hs__vval_kind { HS__VV_SCALARS, HS__VV_NODES, HS__VV_IS };

struct hs__vnode;

struct hs__vvalue {
    enum hs__vval_kind kind;
    bool bracketed;
    int line, column;
    const char *file;
    uint32_t n;
    struct hs__vitem *items;  /* SCALARS */
    struct hs__vnode **nodes; /* NODES */
    const char *is_name;      /* IS */
};

struct hs__vfield {
    const char *name;
    int line, column;
    struct hs__vvalue value;
};

enum hs__viface_kind { HS__IF_FIELD, HS__IF_EXPOSED, HS__IF_EVENTIN, HS__IF_EVENTOUT };

struct hs__viface {
    const char *name;
    enum hs__vftype type;
    enum hs__viface_kind kind;
    bool has_default;
    struct hs__vvalue def;
};

struct hs__vproto {
    const char *name;
    int line, column;
    bool external;
    uint32_t nifaces;
    struct hs__viface *ifaces;
    uint32_t nbody;
    struct hs__vnode **body;
    const struct hs__vproto *next; /* scope list */
};

struct hs__vnode {
    const char *type;
    const char *def; /* DEF name or NULL */
    int line, column;
    const char *file;
    const struct hs__vproto *proto; /* set when type names a PROTO */
    uint32_t nfields;
    struct hs__vfield *fields;
};

/* A problem the parser tolerated (e.g. nan in a Normal): reported by the model as a warning. */
struct hs__vwarning {
    int line, column;
    const char *msg;
};

struct hs__vdoc {
    struct hs__arena arena;
    const char *file;
    uint32_t nroots;
    struct hs__vnode **roots;
    uint32_t nwarnings;
    const struct hs__vwarning *warnings;
};

/* Parses a whole file. On failure returns negative errno with diag set and frees everything. */
int hs__vrml_parse(const char *data, size_t size, const char *file, struct hs__vdoc **ret_doc,
                   struct hs_diag *diag);
void hs__vrml_doc_free(struct hs__vdoc *doc);

/* ---- schemas of built-in nodes ---- */
struct hs__vschema_field {
    const char *name;
    enum hs__vftype type;
};
/* NULL when the node type has no built-in schema (its fields are then not checked). */
const struct hs__vschema_field *hs__vschema_find(const char *node_type, uint32_t *ret_n);
/* Type-checks a value; on mismatch fills diag naming the field. */
int hs__vvalue_check(const struct hs__vvalue *v, enum hs__vftype t, const char *field,
                     const char *node_type, struct hs_diag *diag);

/* ---- field access with PROTO defaults and IS resolution ---- */
struct hs__venv {
    const struct hs__vnode *inst; /* PROTO instance whose body is being walked */
    const struct hs__venv *parent;
};

/* Finds the value of a field: given on the node (IS resolved through env), else the PROTO's
 * declared default. Returns NULL when neither exists (caller uses its built-in default).
 * ret_env receives the env in which nodes of the value must be walked. */
const struct hs__vvalue *hs__vfield_get(const struct hs__vnode *node, const char *name,
                                        const struct hs__venv *env,
                                        const struct hs__venv **ret_env);

#endif
