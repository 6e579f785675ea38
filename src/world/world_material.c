/* Contact materials: which material each link is made of, and the contact each pair of
 * materials makes, turned into ODE's soft-contact terms once at create time.
 *
 * A pair's stiffness k and damping c describe the whole contact between two geoms (one spring
 * and damper along the normal). ODE solves each contact point as its own row; with n points in a
 * step each gets k/n and c/n, so the pair's total stays k and c however many points the
 * collider returned (a foot's 4 corners, or 3 when it tilts). ODE's implicit spring-damper for a
 * row of step h is ERP = h k_i / (h k_i + c_i) and CFM = 1 / (h k_i + c_i), which with
 * k_i = k/n, c_i = c/n gives the same ERP for every n and CFM = n / (h k + c). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "world_internal.h"

static const char default_name[] = "default";

struct names {
    const char *v[HS_WORLD_MATERIALS_MAX + 1];
    uint32_t n;
};

/* Index of a material name, adding it when add is set; -1 when unknown or full. */
static int material_index(struct names *m, const char *name, bool add)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i], name))
            return (int)i;
    if (!add || m->n > HS_WORLD_MATERIALS_MAX)
        return -1;
    m->v[m->n] = name;
    return (int)m->n++;
}

static struct hs__world_surface surface_of(const struct hs_world_params *p, double k, double c,
                                           double mu, double restitution)
{
    struct hs__world_surface s = {.mu = isinf(mu) ? dInfinity : mu, .bounce = restitution};
    if (k > 0) {
        double hk = p->step_s * k;
        s.erp = hk / (hk + c);
        s.cfm1 = 1.0 / (hk + c);
    } else {
        s.per_point = true;
        s.erp = p->contact_erp;
        s.cfm1 = p->contact_cfm;
    }
    return s;
}

int hs__world_materials_init(struct hs_world *w, const struct hs_world_body_spec *specs,
                             struct hs_diag *diag)
{
    const struct hs_world_params *p = &w->params;
    struct names m = {.v = {default_name}, .n = 1};
    /* Assignments in order: a later entry wins, so a link entry after its body's entry refines
     * it (the config documents: body entries first). */
    for (uint32_t e = 0; e < p->nlink_materials; e++) {
        const struct hs_world_link_material *lm = &p->link_materials[e];
        int mi = material_index(&m, lm->material, true);
        if (mi < 0)
            return hs_diag_set(diag, -EINVAL, "", lm->src.line, lm->src.column,
                               "physics.materials.%s: more than %d distinct materials", lm->name,
                               HS_WORLD_MATERIALS_MAX);
        bool found = false;
        for (uint32_t b = 0; b < w->nbodies; b++) {
            const struct hs_model *model = w->bodies[b].model;
            const char *bname = specs[b].name ? specs[b].name : model->name;
            bool whole = !strcmp(bname, lm->name);
            for (uint32_t i = 0; i < model->nlinks; i++)
                if (whole || !strcmp(model->links[i].name, lm->name)) {
                    w->bodies[b].links[i].material = (uint32_t)mi;
                    found = true;
                }
        }
        if (!found)
            return hs_diag_set(diag, -EINVAL, "", lm->src.line, lm->src.column,
                               "physics.materials.%s: no model and no link has this name",
                               lm->name);
    }
    w->nmaterials = m.n;
    struct hs__world_surface def =
        surface_of(p, p->contact_stiffness_n_m, p->contact_damping_n_s_m, p->friction, p->bounce);
    for (uint32_t i = 0; i < m.n; i++)
        for (uint32_t j = 0; j < m.n; j++)
            w->surfaces[i][j] = def;
    for (uint32_t e = 0; e < p->ncontact_materials; e++) {
        const struct hs_world_contact_material *cm = &p->contact_materials[e];
        int a = material_index(&m, cm->material1, false);
        int b = material_index(&m, cm->material2, false);
        if (a < 0 || b < 0)
            return hs_diag_set(diag, -EINVAL, "", cm->src.line, cm->src.column,
                               "physics.contact_materials[%u]: material '%s' is given to no link "
                               "in physics.materials",
                               e, a < 0 ? cm->material1 : cm->material2);
        w->surfaces[a][b] = w->surfaces[b][a] =
            surface_of(p, cm->stiffness_n_m, cm->damping_n_s_m, cm->friction, cm->restitution);
    }
    return 0;
}
