/* Defaults and validation of hs_world_params. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "world_internal.h"

static bool in_range(double v, double lo, double hi)
{
    return isfinite(v) && v >= lo && v <= hi;
}

int hs__world_params_check(const struct hs_world_params *p, struct hs_diag *d)
{
    if (!in_range(p->step_s, 1e-5, 0.1))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "step_s %g outside 1e-5 .. 0.1 s", p->step_s);
    if (p->substeps < 1 || p->substeps > 100)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "substeps %u outside 1 .. 100", p->substeps);
    if (p->solver >= HS_SOLVER_MAX)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "solver %d unknown", (int)p->solver);
    if (p->quick_iterations_min > p->quick_iterations)
        return hs_diag_set(d, -EINVAL, "", 0, 0,
                           "quick_iterations_min %u above quick_iterations %u",
                           p->quick_iterations_min, p->quick_iterations);
    if (p->quick_iterations < 1 || p->quick_iterations > 1000)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "quick_iterations %u outside 1 .. 1000",
                           p->quick_iterations);
    for (int i = 0; i < 3; i++)
        if (!isfinite(p->gravity[i]))
            return hs_diag_set(d, -EINVAL, "", 0, 0, "gravity[%d] is not finite", i);
    if (!in_range(p->erp, 0, 1) || !in_range(p->contact_erp, 0, 1))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "erp/contact_erp outside 0 .. 1");
    if (!in_range(p->cfm, 0, 1e3) || !in_range(p->contact_cfm, 0, 1e3))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "cfm/contact_cfm outside 0 .. 1000");
    if (isnan(p->friction) || p->friction < 0)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "friction %g must be >= 0", p->friction);
    if (!in_range(p->bounce, 0, 1))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "bounce %g outside 0 .. 1", p->bounce);
    if (!in_range(p->bounce_min_vel, 0, 1e3))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "bounce_min_vel %g outside 0 .. 1000 m/s",
                           p->bounce_min_vel);
    if (!in_range(p->surface_layer, 0, 1))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "surface_layer %g outside 0 .. 1 m",
                           p->surface_layer);
    if (p->max_contacts < 1 || p->max_contacts > 64)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "max_contacts %u outside 1 .. 64",
                           p->max_contacts);
    if (!in_range(p->linear_damping, 0, 1) || !in_range(p->angular_damping, 0, 1))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "damping outside 0 .. 1");
    if (!in_range(p->contact_stiffness_n_m, 0, 1e12) || !in_range(p->contact_damping_n_s_m, 0, 1e9))
        return hs_diag_set(d, -EINVAL, "", 0, 0,
                           "contact stiffness/damping outside 0 .. 1e12 N/m / 0 .. 1e9 N·s/m");
    if (p->nlink_materials > HS_WORLD_LINK_MATERIALS_MAX ||
        p->ncontact_materials > HS_WORLD_CONTACT_MATERIALS_MAX)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "too many link or contact materials");
    for (uint32_t i = 0; i < p->ncontact_materials; i++) {
        const struct hs_world_contact_material *c = &p->contact_materials[i];
        if (!(c->stiffness_n_m > 0 && c->stiffness_n_m <= 1e12) ||
            !in_range(c->damping_n_s_m, 0, 1e9) || isnan(c->friction) || c->friction < 0 ||
            !in_range(c->restitution, 0, 1))
            return hs_diag_set(d, -EINVAL, "", c->src.line, c->src.column,
                               "contact_materials[%u]: stiffness (0, 1e12] N/m, damping [0, 1e9] "
                               "N·s/m, friction >= 0, restitution [0, 1]",
                               i);
    }
    if (!(p->health.max_penetration_m > 0) || !(p->health.max_joint_error_m > 0) ||
        !(p->health.max_force_jump_ratio > 0))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "health budgets must be > 0 (INFINITY: none)");
    /* Guard bounds: positive; INFINITY asks for finiteness only. */
    if (!(p->guard.max_position_m > 0) || !(p->guard.max_linear_velocity_mps > 0) ||
        !(p->guard.max_angular_velocity_rad_s > 0))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "guard bounds must be > 0 (INFINITY: none)");
    if (!(p->guard.joint_rate_factor >= 1))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "guard joint_rate_factor %g must be >= 1",
                           p->guard.joint_rate_factor);
    if (isinf(p->guard.floor_z_m) || !(p->guard.floor_depth_m >= 0) ||
        !(p->guard.floor_time_s >= 0 && p->guard.floor_time_s <= 1e3))
        return hs_diag_set(d, -EINVAL, "", 0, 0,
                           "guard floor: floor_z_m finite or unset, floor_depth_m >= 0 "
                           "(INFINITY: no check), floor_time_s in [0, 1000]");
    if (p->warmup_steps > 100000)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "warmup_steps %u above 100000", p->warmup_steps);
    return 0;
}
