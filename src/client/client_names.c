/* Looking joints and sensors up by name in the client's copy of the name table. */
#include <errno.h>
#include <string.h>

#include "client_internal.h"

static const struct hs_shm_name *find(const struct hs_client *c, const char *name, int joint)
{
    if (!name)
        return NULL;
    for (uint32_t i = 0; i < c->name_count; i++) {
        const struct hs_shm_name *n = &c->names[i];
        if ((n->kind == HS_SHM_KIND_JOINT) == joint && !strcmp(n->name, name))
            return n;
    }
    return NULL;
}

int hs_client_find_joint(const struct hs_client *c, const char *name, uint32_t *ret_index)
{
    const struct hs_shm_name *n = find(c, name, 1);
    if (!n)
        return -ENOENT;
    *ret_index = n->index;
    return 0;
}

int hs_client_find_sensor(const struct hs_client *c, const char *name, uint32_t *ret_kind,
                          uint32_t *ret_index)
{
    const struct hs_shm_name *n = find(c, name, 0);
    if (!n)
        return -ENOENT;
    *ret_kind = n->kind;
    *ret_index = n->index;
    return 0;
}

static const struct hs_shm_name *joint_entry(const struct hs_client *c, uint32_t index)
{
    for (uint32_t i = 0; i < c->name_count; i++)
        if (c->names[i].kind == HS_SHM_KIND_JOINT && c->names[i].index == index)
            return &c->names[i];
    return NULL;
}

const char *hs_client_joint_name(const struct hs_client *c, uint32_t index)
{
    const struct hs_shm_name *n = joint_entry(c, index);
    return n ? n->name : NULL;
}

const char *hs_client_joint_unit(const struct hs_client *c, uint32_t index)
{
    const struct hs_shm_name *n = joint_entry(c, index);
    return n ? n->unit : NULL;
}
