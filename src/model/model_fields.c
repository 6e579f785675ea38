/* Typed reads of node fields for the builder. Absent fields fall back to the PROTO's declared
 * default (vrml_field.c) and then to the built-in default given by the caller. */
#include <errno.h>
#include <string.h>

#include "model_internal.h"

static const struct hs__vvalue *get_checked(struct hs__builder *b, const struct hs__vnode *n,
                                            const struct hs__venv *env, const char *name,
                                            enum hs__vftype type, int *ret_err)
{
    const struct hs__venv *e;
    const struct hs__vvalue *v = hs__vfield_get(n, name, env, &e);
    *ret_err = 0;
    if (v)
        *ret_err = hs__vvalue_check(v, type, name, n->type, b->diag);
    return *ret_err ? NULL : v;
}

int hs__get_float(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                  const char *name, double def, double *ret)
{
    int r;
    const struct hs__vvalue *v = get_checked(b, n, env, name, HS__FT_SFFLOAT, &r);
    if (r < 0)
        return r;
    *ret = v ? v->items[0].num : def;
    return 0;
}

int hs__get_int(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                const char *name, int32_t def, int32_t *ret)
{
    int r;
    const struct hs__vvalue *v = get_checked(b, n, env, name, HS__FT_SFINT32, &r);
    if (r < 0)
        return r;
    *ret = v ? (int32_t)v->items[0].num : def;
    return 0;
}

int hs__get_bool(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                 const char *name, bool def, bool *ret)
{
    int r;
    const struct hs__vvalue *v = get_checked(b, n, env, name, HS__FT_SFBOOL, &r);
    if (r < 0)
        return r;
    *ret = v ? v->items[0].num != 0 : def;
    return 0;
}

int hs__get_vec3(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                 const char *name, const double def[3], double ret[3])
{
    int r;
    const struct hs__vvalue *v = get_checked(b, n, env, name, HS__FT_SFVEC3F, &r);
    if (r < 0)
        return r;
    for (int i = 0; i < 3; i++)
        ret[i] = v ? v->items[i].num : def[i];
    return 0;
}

int hs__get_rotation(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                     const char *name, double ret[4])
{
    int r;
    const struct hs__vvalue *v = get_checked(b, n, env, name, HS__FT_SFROTATION, &r);
    if (r < 0)
        return r;
    static const double def[4] = {0, 0, 1, 0};
    for (int i = 0; i < 4; i++)
        ret[i] = v ? v->items[i].num : def[i];
    return 0;
}

int hs__get_string(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                   const char *name, char *buf, size_t size)
{
    int r;
    const struct hs__vvalue *v = get_checked(b, n, env, name, HS__FT_SFSTRING, &r);
    if (r < 0)
        return r;
    const char *s = v ? v->items[0].str : "";
    if (strlen(s) >= size)
        return hs_diag_set(b->diag, -EINVAL, v->file, v->line, v->column,
                           "field '%s' of %s: string longer than %zu characters", name, n->type,
                           size - 1);
    memcpy(buf, s, strlen(s) + 1);
    return 0;
}

int hs__get_numbers(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                    const char *name, enum hs__vftype type, const struct hs__vvalue **ret_value)
{
    int r;
    const struct hs__vvalue *v = get_checked(b, n, env, name, type, &r);
    if (r < 0)
        return r;
    *ret_value = v;
    return 0;
}

int hs__get_nodes(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                  const char *name, struct hs__vnode *const **ret_nodes, uint32_t *ret_n,
                  const struct hs__venv **ret_env)
{
    const struct hs__venv *e;
    const struct hs__vvalue *v = hs__vfield_get(n, name, env, &e);
    *ret_n = 0;
    *ret_nodes = NULL;
    *ret_env = e;
    if (!v)
        return 0;
    int r = hs__vvalue_check(v, HS__FT_MFNODE, name, n->type, b->diag);
    if (r < 0)
        return r;
    if (v->kind == HS__VV_NODES) {
        *ret_nodes = v->nodes;
        *ret_n = v->n;
    }
    return 0;
}

int hs__node_name(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                  bool has_name_field, char *buf, size_t size)
{
    buf[0] = '\0';
    if (has_name_field) {
        int r = hs__get_string(b, n, env, "name", buf, size);
        if (r < 0)
            return r;
    }
    if (!buf[0] && n->def) {
        if (strlen(n->def) >= size)
            return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                               "DEF name longer than %zu characters", size - 1);
        memcpy(buf, n->def, strlen(n->def) + 1);
    }
    return 0;
}
