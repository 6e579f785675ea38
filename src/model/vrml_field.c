/* Field lookup for the model builder: a value given on the node, with IS references followed
 * through the chain of PROTO instances being expanded, else the PROTO's declared default. */
#include <string.h>

#include "vrml_internal.h"

static const struct hs__vvalue *given(const struct hs__vnode *n, const char *name)
{
    for (uint32_t i = 0; i < n->nfields; i++)
        if (strcmp(n->fields[i].name, name) == 0)
            return &n->fields[i].value;
    return NULL;
}

static const struct hs__vvalue *declared_default(const struct hs__vnode *n, const char *name)
{
    if (!n->proto)
        return NULL;
    for (uint32_t i = 0; i < n->proto->nifaces; i++)
        if (strcmp(n->proto->ifaces[i].name, name) == 0)
            return n->proto->ifaces[i].has_default ? &n->proto->ifaces[i].def : NULL;
    return NULL;
}

const struct hs__vvalue *hs__vfield_get(const struct hs__vnode *node, const char *name,
                                        const struct hs__venv *env, const struct hs__venv **ret_env)
{
    const struct hs__vvalue *v = given(node, name);
    if (!v) {
        *ret_env = env;
        return declared_default(node, name);
    }
    /* Each IS step moves one PROTO instance outwards, so this ends within the env depth. */
    while (v && v->kind == HS__VV_IS) {
        if (!env)
            return NULL;
        const struct hs__vnode *inst = env->inst;
        const char *is = v->is_name;
        v = given(inst, is);
        if (!v) {
            *ret_env = env->parent;
            return declared_default(inst, is);
        }
        env = env->parent;
    }
    *ret_env = env;
    return v;
}
