/* Internal to hs_config: the schema tables that drive parsing and writing, and the walker. */
#ifndef HS_CONFIG_INTERNAL_H
#define HS_CONFIG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "hilsim/config.h"

enum hs__cfg_kind {
    HS__K_DOUBLE,
    HS__K_U32,
    HS__K_I32,
    HS__K_U64,
    HS__K_I64,
    HS__K_BOOL,
    HS__K_ENUM,  /* int-sized enum; names[] */
    HS__K_NAME,  /* char[n], charset-checked */
    HS__K_TEXT,  /* char[n], any printable UTF-8 */
    HS__K_PATH,  /* char *, resolved and checked to exist */
    HS__K_VEC,   /* double[n] */
    HS__K_MODE,  /* uint32 permission bits written in octal */
    HS__K_MODES, /* uint32 bit set from a list of enum names */
    HS__K_REF,   /* struct hs_cfg_ref from "joint.<name>.<quantity>" */
    HS__K_SECTION,
    HS__K_LIST,    /* sequence or name-keyed mapping of structs */
    HS__K_RENAMED, /* a key that was renamed: refused, naming .renamed_to */
};

enum hs__cfg_charset {
    HS__CS_IDENT,  /* [A-Za-z0-9_-]: joint, sensor, model, bus, node names */
    HS__CS_BENCH,  /* [a-z0-9_-] */
    HS__CS_CIDENT, /* [A-Za-z_][A-Za-z0-9_]*: DBC message and signal names */
    HS__CS_IFNAME, /* [A-Za-z0-9_.-] */
    HS__CS_GROUP,  /* [A-Za-z0-9_.-], may be empty */
};

enum {
    HS__F_REQUIRED = 1u << 0,
    HS__F_INF = 1u << 1,       /* ±inf accepted (.inf) */
    HS__F_MIN_OPEN = 1u << 2,  /* (min, max] */
    HS__F_NAN_UNSET = 1u << 3, /* NAN = not set (take from model); omitted when writing */
    HS__F_FIRST = 1u << 4,     /* parsed before the other keys of its mapping (defaults) */
    HS__F_HEX = 1u << 5,       /* written in hex */
    HS__F_ZERO_OK = 1u << 6,   /* with MIN_OPEN: 0 also accepted (means off) */
};

struct hs__cfg_table;
struct hs__cfg_list;
struct hs__ctx;

struct hs__cfg_field {
    const char *key;
    enum hs__cfg_kind kind;
    size_t off;
    unsigned flags;
    double min, max;
    uint32_t n; /* VEC length, NAME/TEXT buffer size */
    enum hs__cfg_charset cs;
    const char *const *names; /* ENUM, MODES: NULL-terminated */
    const struct hs__cfg_table *sub;
    const struct hs__cfg_list *list;
    bool (*emit)(const void *obj); /* writer: print this key for obj? (NULL: always) */
    const char *renamed_to;        /* HS__K_RENAMED: the key's new name */
};

/* Called after a mapping parsed with its seen-key mask (bit i = fields[i]). */
typedef int (*hs__cfg_check_fn)(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                                const char *path);

struct hs__cfg_table {
    const struct hs__cfg_field *fields;
    uint32_t nfields;
    hs__cfg_check_fn check;
};

struct hs__cfg_list {
    const struct hs__cfg_table *elem;
    size_t elem_size;
    uint32_t max;
    bool keyed;       /* mapping keyed by name (stored at name_off) instead of a sequence */
    size_t name_off;  /* keyed only */
    size_t src_off;   /* struct hs_cfg_src in the element */
    bool pooled;      /* array and count live in the root config; the parent holds first/count */
    size_t array_off; /* in parent, or in root when pooled */
    size_t count_off; /* uint32 in parent, or in root when pooled */
    size_t first_off, slice_off; /* pooled: uint32 first and count in the parent */
    ptrdiff_t template_off;      /* >= 0: parent's struct copied into each new element first */
    void (*init)(void *elem);    /* else this fills defaults (NULL: zeroed) */
};

struct hs__ctx {
    yaml_document_t *doc;
    struct hs_config *cfg;
    const char *file;     /* for messages */
    const char *base_dir; /* NULL: relative paths are errors */
    struct hs_diag *diag;
    bool physics_step_given;
    const char *const *sets; /* --set KEY=VALUE overrides (set.c) */
    uint32_t nsets;
};

extern const struct hs__cfg_table hs__cfg_root;
extern const char *const hs__names_solver[];
extern const char *const hs__names_overrun[];
extern const char *const hs__names_leaky[];
extern const char *const hs__names_sync_source[];
extern const char *const hs__names_lockstep_source[];
extern const char *const hs__names_controller[];
extern const char *const hs__names_mode[];
extern const char *const hs__names_mesh_collision[];     /* enum hs_mesh_approx */
extern const char *const hs__names_record_compression[]; /* enum hs_cfg_record_compression */
extern const char *const hs__names_model_sensor[]; /* enum hs_sensor_type: accel, gyro, force */
void hs__cfg_init_model_sensor(void *elem);
extern const char *const hs__names_safe[];
extern const char *const hs__names_source[];
extern const char *const hs__names_encoder_mode[];
extern const char *const hs__names_send_queue[];
extern const char *const hs__names_can_replies[];
extern const char *const hs__names_protocol[];
extern const char *const hs__names_tx_schedule[];
extern const char *const hs__names_ref_kind[];
extern const char *const hs__names_quantity[];

/* yaml_walk.c */
int hs__cfg_err(struct hs__ctx *c, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int hs__cfg_err_at(struct hs__ctx *c, struct hs_cfg_src src, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int hs__cfg_parse_map(struct hs__ctx *c, yaml_node_t *node, const struct hs__cfg_table *t,
                      void *obj, const char *path, uint64_t *ret_seen);
yaml_node_t *hs__cfg_child(struct hs__ctx *c, yaml_node_t *map, const char *key);
/* snprintf for field paths: a path cut short in a message is acceptable */
void hs__cfg_pathf(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool hs__cfg_name_ok(const char *s, enum hs__cfg_charset cs);
int hs__cfg_parse_ref(const char *s, struct hs_cfg_ref *ret_ref);

/* set.c: the --set overrides written into the document before it is walked; a diag the walker
 * gave about a set's nodes rewritten to name the --set. */
int hs__cfg_apply_sets(yaml_document_t *doc, const char *const *sets, uint32_t nsets,
                       struct hs_diag *d);
void hs__cfg_blame_set(struct hs_diag *d, const char *const *sets, uint32_t nsets);

/* load.c: a libyaml parser error as a diag at the problem's line and column; the nesting
 * depth check every YAML file goes through before the document loader (also scenarios). */
int hs__cfg_syntax_error(const yaml_parser_t *p, const char *name, struct hs_diag *diag);
int hs__cfg_check_depth(struct hs__ctx *c, const char *data, unsigned long size);
/* load.c: a whole regular file (at most 4 MiB) into a malloc'd buffer. */
int hs__cfg_read_file(const char *path, char **ret_data, unsigned long *ret_size,
                      struct hs_diag *diag);

/* defaults.c: element defaults for lists */
void hs__cfg_init_model(void *elem);
void hs__cfg_init_bus(void *elem);
void hs__cfg_init_node(void *elem);
void hs__cfg_init_imu(void *elem);

/* validate.c */
int hs__cfg_validate(struct hs__ctx *c);

#endif
