/* Internal to hs_config: the macros that write schema rows (struct hs__cfg_field), shared by
 * schema.c and the protocols' section tables (src/config/can/<name>_config.c). */
#ifndef HS_CONFIG_SCHEMA_H
#define HS_CONFIG_SCHEMA_H

#include <math.h>
#include <stddef.h>

#include "cfg_internal.h"

#define F_(k, K, T, m, ...)                                                                        \
    {                                                                                              \
        .key = k, .kind = K, .off = offsetof(T, m), __VA_ARGS__                                    \
    }
#define DBL(k, T, m, lo, hi, fl) F_(k, HS__K_DOUBLE, T, m, .min = lo, .max = hi, .flags = fl)
#define U32(k, T, m, lo, hi, fl) F_(k, HS__K_U32, T, m, .min = lo, .max = hi, .flags = fl)
#define I32(k, T, m, lo, hi) F_(k, HS__K_I32, T, m, .min = lo, .max = hi)
#define U64(k, T, m) F_(k, HS__K_U64, T, m)
#define I64(k, T, m) F_(k, HS__K_I64, T, m)
#define BOOL(k, T, m) F_(k, HS__K_BOOL, T, m)
#define ENUM(k, T, m, nm) F_(k, HS__K_ENUM, T, m, .names = nm)
#define NAME(k, T, m, c, fl) F_(k, HS__K_NAME, T, m, .n = sizeof(((T *)0)->m), .cs = c, .flags = fl)
#define TEXT(k, T, m) F_(k, HS__K_TEXT, T, m, .n = sizeof(((T *)0)->m))
#define PATH(k, T, m, fl) F_(k, HS__K_PATH, T, m, .flags = fl)
#define VEC(k, T, m, lo, hi)                                                                       \
    F_(k, HS__K_VEC, T, m, .n = sizeof(((T *)0)->m) / sizeof(double), .min = lo, .max = hi)
#define SECTION(k, T, m, tab, fl) F_(k, HS__K_SECTION, T, m, .sub = &tab, .flags = fl)
#define LIST(k, lst)                                                                               \
    {                                                                                              \
        .key = k, .kind = HS__K_LIST, .list = &lst                                                 \
    }
/* An old key, refused with a message naming its new name (config/README.md, "Units in names"). */
#define RENAMED(old, now)                                                                          \
    {                                                                                              \
        .key = old, .kind = HS__K_RENAMED, .renamed_to = now                                       \
    }
#define TABLE(name, fields, chk)                                                                   \
    const struct hs__cfg_table name = {fields, sizeof fields / sizeof fields[0], chk}
#define STATIC_TABLE(name, fields, chk)                                                            \
    static const struct hs__cfg_table name = {fields, sizeof fields / sizeof fields[0], chk}

#define DMAX INFINITY

/* Was key (a field of t) present in the mapping just parsed? seen: the parse's seen-key mask. */
bool hs__cfg_seen_key(const struct hs__cfg_table *t, uint64_t seen, const char *key);
/* map's child node for key, else map itself (where to point a message). */
yaml_node_t *hs__cfg_node_or(struct hs__ctx *c, yaml_node_t *map, const char *key);

#endif
