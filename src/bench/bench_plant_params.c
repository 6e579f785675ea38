#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

static enum hs_safe_behaviour safe_from_config(enum hs_cfg_safe_behaviour s)
{
    switch (s) {
    case HS_CFG_SAFE_BRAKE:
        return HS_SAFE_BRAKE;
    case HS_CFG_SAFE_HOLD:
        return HS_SAFE_HOLD;
    default:
        return HS_SAFE_ZERO_TORQUE;
    }
}

/* The torque limit when neither the config nor the model gives one: enough to take the inertia
 * the joint moves from rest to its velocity limit in HS_TORQUE_ACCEL_S while holding the larger
 * gravity moment of either side (every link's mass times its distance from the axis, at the
 * model's zero pose, as if gravity were across the axis: the robot hanging from or standing on
 * the joint), and at least HS_TORQUE_FLOOR. A joint with no velocity limit is taken to reach
 * HS_DEFAULT_SPEED. Slide joints: masses and the whole weight instead of moments. */
#define HS_TORQUE_ACCEL_S 0.1
#define HS_TORQUE_FLOOR 1.0                /* N·m or N */
#define HS_DEFAULT_SPEED_ROTATE (2 * M_PI) /* rad/s: one turn a second */
#define HS_DEFAULT_SPEED_SLIDE 1.0         /* m/s */
/* The engagement of the drive's speed-limit row (actuator.c) predicts a tick's speed change
 * with the smallest inertia the joint moves at the model's zero pose; the margin covers other
 * poses (the row gives the full torque when engaged early, so early is safe). */
#define HS_SPEED_REACH_MARGIN 2.0

double hs__bench_default_torque_limit(const struct hs_model *m, const struct hs_pose *poses,
                                      uint32_t link, double *scratch, double velocity_limit,
                                      double gravity)
{
    const struct hs_link *l = &m->links[link];
    /* What the model says comes first: URDF's <limit effort>, or OpenHRP's motor current limit
     * through its torque constant and gear (both default to 1 when the file leaves them out,
     * as OpenHRP's Joint PROTO does). */
    if (l->effort_max > 0 && isfinite(l->effort_max))
        return l->effort_max;
    double motor = l->climit * fabs(l->torque_const) * fabs(l->gear_ratio);
    if (l->climit > 0 && isfinite(motor) && motor > 0)
        return motor;
    bool slide = l->joint_type == HS_JOINT_SLIDE;
    struct hs__joint_inertia in;
    hs__bench_joint_inertia(m, poses, link, scratch, &in);
    double v = velocity_limit;
    if (!(v > 0 && isfinite(v)))
        v = fmax(fabs(l->uvlimit), fabs(l->lvlimit));
    if (!(v > 0 && isfinite(v)))
        v = slide ? HS_DEFAULT_SPEED_SLIDE : HS_DEFAULT_SPEED_ROTATE;
    double hold;
    if (slide) {
        double total = 0.0;
        for (uint32_t k = 0; k < m->nlinks; k++)
            total += isfinite(m->links[k].mass) && m->links[k].mass > 0 ? m->links[k].mass : 0;
        hold = fmax(in.moved, total - in.moved);
    } else {
        hold = fmax(in.moment_moved, in.moment_rest);
    }
    double t = in.moved * v / HS_TORQUE_ACCEL_S + fabs(gravity) * hold;
    return isfinite(t) && t > HS_TORQUE_FLOOR ? t : HS_TORQUE_FLOOR;
}

uint32_t hs__bench_command_modes(const struct hs_cfg_actuator *a, const struct hs_link *l)
{
    const uint32_t all =
        HS_CFG_MODE_BIT(HS_CFG_MODE_TORQUE) | HS_CFG_MODE_BIT(HS_CFG_MODE_CURRENT) |
        HS_CFG_MODE_BIT(HS_CFG_MODE_VELOCITY) | HS_CFG_MODE_BIT(HS_CFG_MODE_POSITION);
    if (a->modes != all || !l->command_interfaces)
        return a->modes;
    uint32_t m = 0;
    if (l->command_interfaces & HS_IFACE_BIT(HS_IFACE_POSITION))
        m |= HS_CFG_MODE_BIT(HS_CFG_MODE_POSITION);
    if (l->command_interfaces & HS_IFACE_BIT(HS_IFACE_VELOCITY))
        m |= HS_CFG_MODE_BIT(HS_CFG_MODE_VELOCITY);
    if (l->command_interfaces & HS_IFACE_BIT(HS_IFACE_EFFORT))
        m |= HS_CFG_MODE_BIT(HS_CFG_MODE_TORQUE);
    return m;
}

/* The velocity limit when neither the config nor the model gives one (a model's 0 on both
 * sides is a field left unfilled): the speed the default torque limit is sized to reach,
 * HS_DEFAULT_SPEED_*. An explicit .inf in the config stays unlimited (with a warning). */
static void default_velocity_limits(const struct hs_link *l, struct hs_actuator_params *p)
{
    double v = l->joint_type == HS_JOINT_SLIDE ? HS_DEFAULT_SPEED_SLIDE : HS_DEFAULT_SPEED_ROTATE;
    bool unfilled = p->dq_max == 0.0 && p->dq_min == 0.0;
    if (unfilled || !isfinite(p->dq_max))
        p->dq_max = v;
    if (unfilled || !isfinite(p->dq_min))
        p->dq_min = -v;
}

static void map_joint(const struct hs_config *cfg, const struct hs_model *m,
                      const struct hs_pose *poses, double *scratch, double effective_inertia,
                      uint32_t link, struct hs_plant_joint_params *jp)
{
    const struct hs_link *l = &m->links[link];
    const struct hs_cfg_actuator *a = hs_config_actuator(cfg, l->name);
    struct hs_actuator_params *p = &jp->actuator;
    const double *grav = cfg->physics.gravity;
    /* NAN: not in the config. An explicit .inf stays (hs__bench_collect_warnings warns). */
    p->torque_max = !isnan(a->torque_limit_nm)
                        ? a->torque_limit_nm
                        : hs__bench_default_torque_limit(
                              m, poses, link, scratch, a->velocity_limit,
                              sqrt(grav[0] * grav[0] + grav[1] * grav[1] + grav[2] * grav[2]));
    p->current_max = a->current_limit_a;
    if (!isnan(a->gear_ratio))
        p->gear_ratio = a->gear_ratio;
    if (!isnan(a->gear_efficiency))
        p->gear_efficiency = a->gear_efficiency;
    if (!isnan(a->rotor_inertia))
        p->rotor_inertia = a->rotor_inertia;
    if (!isnan(a->torque_const))
        p->torque_const = a->torque_const;
    p->viscous = a->viscous_friction;
    p->coulomb = a->coulomb_friction;
    if (!isnan(a->velocity_limit)) {
        p->dq_max = a->velocity_limit;
        p->dq_min = -a->velocity_limit;
    } else {
        default_velocity_limits(l, p);
    }
    p->velocity_limit_reach = effective_inertia > 0 && isfinite(effective_inertia)
                                  ? HS_SPEED_REACH_MARGIN * cfg->physics.step_s / effective_inertia
                                  : INFINITY;
    /* Past the limit the drive brakes back explicitly: gain·h / Ie = 1 / HS_SPEED_REACH_MARGIN
     * of the excess per tick at most, a damping well inside the explicit bound (b < 2). */
    p->velocity_limit_gain =
        isfinite(p->velocity_limit_reach) ? 1.0 / p->velocity_limit_reach : 0.0;
    p->velocity_gain = a->velocity_gain;
    p->timeout_ns = (int64_t)llround(a->command_timeout_s * 1e9);
    p->safe = safe_from_config(a->safe_behaviour);
    const struct hs_cfg_gains *g = hs_config_gains(cfg, l->name);
    p->hold_kp = g->kp;
    p->hold_kd = g->kd;
    jp->command_delay_ticks = a->command_delay_ticks;

    const struct hs_cfg_encoder *e = hs_config_encoder(cfg, l->name);
    struct hs_encoder_params *ep = &jp->encoder;
    ep->gear_ratio = p->gear_ratio;
    if (e->counts_per_rev > 0)
        ep->counts_per_motor_rev = e->counts_per_rev;
    ep->bits = e->counter_bits;
    ep->absolute = e->mode == HS_CFG_ENCODER_ABSOLUTE;
    ep->zero_offset_counts = e->zero_offset_counts;
    ep->velocity_window = e->velocity_window_ticks;
    jp->reading_delay_ticks = e->delay_ticks;
}

int hs__bench_plant_params(const struct hs_config *cfg, const struct hs_model *model,
                           struct hs_plant_params *ret_params, struct hs_diag *diag)
{
    struct hs_plant_params pp;
    int r = hs_plant_params_init(model, &pp);
    if (r < 0)
        return hs_diag_set(diag, r, cfg->path, 0, 0, "out of memory for %s", model->name);
    pp.seed = cfg->sensors.noise_seed;
    struct hs_pose *poses = calloc(model->nlinks ? model->nlinks : 1, sizeof *poses);
    double *scratch = calloc(model->nlinks ? model->nlinks : 1, sizeof *scratch);
    double *eff = calloc(model->nlinks ? model->nlinks : 1, sizeof *eff);
    if (!poses || !scratch || !eff) {
        free(poses);
        free(scratch);
        free(eff);
        hs_plant_params_free(&pp);
        return hs_diag_set(diag, -ENOMEM, cfg->path, 0, 0, "out of memory for %s", model->name);
    }
    hs__bench_model_poses(model, poses);
    /* Not positive definite (-EDOM): eff stays 0 and the speed-limit row engages whenever the
     * torque drives towards a limit. */
    if (hs__bench_effective_inertias_as(model, poses, cfg->physics.solver == HS_SOLVER_STANDARD,
                                        eff) == -ENOMEM) {
        free(poses);
        free(scratch);
        free(eff);
        hs_plant_params_free(&pp);
        return hs_diag_set(diag, -ENOMEM, cfg->path, 0, 0, "out of memory for %s", model->name);
    }
    uint32_t j = 0;
    for (uint32_t i = 0; i < model->nlinks; i++) {
        const struct hs_link *l = &model->links[i];
        if (l->joint_type != HS_JOINT_ROTATE && l->joint_type != HS_JOINT_SLIDE)
            continue;
        map_joint(cfg, model, poses, scratch, eff[i], i, &pp.joints[j]);
        if (pp.joints[j].encoder.velocity_window > HS_ENCODER_WINDOW_MAX) {
            const struct hs_cfg_encoder *e = hs_config_encoder(cfg, l->name);
            r = hs_diag_set(diag, -EINVAL, cfg->path, e->src.line, e->src.column,
                            "sensors.encoders: velocity_window_ticks %u for %s is above the "
                            "encoder model's maximum %u",
                            pp.joints[j].encoder.velocity_window, l->name, HS_ENCODER_WINDOW_MAX);
            free(poses);
            free(scratch);
            free(eff);
            hs_plant_params_free(&pp);
            return r;
        }
        j++;
    }
    free(poses);
    free(scratch);
    free(eff);
    /* The sensors' config keys, each through its kind (src/plant/sensors/). */
    hs_plant_params_from_config(cfg, model, &pp);
    *ret_params = pp;
    return 0;
}
