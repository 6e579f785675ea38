/* Contact materials changed while the world runs (a scenario's friction and material steps):
 * which material a link is made of, and a material pair's Coulomb friction. The near callback
 * reads both at every collision (world_contact.c), so a change made between two steps acts from
 * the next step on. Material names resolve the way world_material.c numbered them at create:
 * "default" is 0, then each name in physics.materials in order of first appearance. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "world_internal.h"

int hs_world_material_find(const struct hs_world *w, const char *name)
{
    if (!strcmp(name, "default"))
        return 0;
    const struct hs_world_params *p = &w->params;
    int n = 1;
    for (uint32_t e = 0; e < p->nlink_materials; e++) {
        const char *m = p->link_materials[e].material;
        bool seen = !strcmp(m, "default");
        for (uint32_t k = 0; k < e && !seen; k++)
            seen = !strcmp(p->link_materials[k].material, m);
        if (seen)
            continue;
        if (!strcmp(m, name))
            return n;
        n++;
    }
    return -ENOENT;
}

uint32_t hs_world_material_count(const struct hs_world *w)
{
    return w->nmaterials;
}

static struct hs__world_link *link_of(const struct hs_world *w, uint32_t body, uint32_t link)
{
    if (body >= w->nbodies || link >= w->bodies[body].model->nlinks)
        return NULL;
    return &w->bodies[body].links[link];
}

int hs_world_link_material(const struct hs_world *w, uint32_t body, uint32_t link)
{
    const struct hs__world_link *l = link_of(w, body, link);
    return l ? (int)l->material : -EINVAL;
}

int hs_world_set_link_material(struct hs_world *w, uint32_t body, uint32_t link, uint32_t material)
{
    struct hs__world_link *l = link_of(w, body, link);
    if (!l || material >= w->nmaterials)
        return -EINVAL;
    l->material = material;
    return 0;
}

double hs_world_pair_friction(const struct hs_world *w, uint32_t a, uint32_t b)
{
    if (a >= w->nmaterials || b >= w->nmaterials)
        return NAN;
    double mu = w->surfaces[a][b].mu;
    return mu >= dInfinity ? INFINITY : mu;
}

int hs_world_set_pair_friction(struct hs_world *w, uint32_t a, uint32_t b, double mu)
{
    if (a >= w->nmaterials || b >= w->nmaterials || !(mu >= 0))
        return -EINVAL;
    w->surfaces[a][b].mu = w->surfaces[b][a].mu = isinf(mu) ? dInfinity : mu;
    return 0;
}
