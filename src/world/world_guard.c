/* The divergence guard: after every step, every dynamic body's centre of mass, linear and
 * angular velocity and every actuated joint's rate must be finite and inside their bounds.
 * An explicit PD that is unstable at the step, or a huge commanded torque, grows the state by a
 * factor per step; checking squared norms against squared bounds costs a few flops per body
 * and stops the world while the numbers still mean something, long before ODE's internal
 * assertions (a quaternion that cannot be normalised) abort the process.
 *
 * The check is RT-safe: no allocation, one pass over preallocated arrays. Formatting a fault is
 * not (snprintf) and runs after the loop. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "world_internal.h"

static double square_or_inf(double v)
{
    return isfinite(v) ? v * v : INFINITY;
}

void hs__world_guard_init(struct hs_world *w)
{
    const struct hs_world_guard *g = &w->params.guard;
    w->guard_pos2 = square_or_inf(g->max_position_m);
    w->guard_vel2 = square_or_inf(g->max_linear_velocity_mps);
    w->guard_avel2 = square_or_inf(g->max_angular_velocity_rad_s);
    for (uint32_t i = 0; i < w->nactuated; i++) {
        struct hs__world_link *l = w->actuated[i];
        const struct hs_link *ml = &l->owner->model->links[l->link_index];
        double vmax = fmax(fabs(ml->uvlimit), fabs(ml->lvlimit));
        /* A limit of 0 is a model that has not filled it in, not a joint that cannot move. */
        l->rate_limit = isfinite(vmax) && vmax > 0 && isfinite(g->joint_rate_factor)
                            ? vmax * g->joint_rate_factor
                            : INFINITY;
    }
}

static double norm2(const dReal *v)
{
    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
}

/* Not finite, or above the bound: NaN compares false, inf only passes an infinite bound. */
static bool out_of(double v2, double bound2)
{
    return !(v2 <= bound2) || !isfinite(v2);
}

static int trip(struct hs_world *w, enum hs_world_fault_kind kind, dBodyID b,
                const struct hs__world_link *l, double value, double limit)
{
    if (!l && b)
        l = dBodyGetData(b); /* NULL for the slider block of a piston ExtraJoint */
    w->fault = (struct hs_world_fault){
        .kind = kind,
        .body = l ? l->owner->index : UINT32_MAX,
        .link = l ? l->link_index : UINT32_MAX,
        .value = value,
        .limit = limit,
        .tick = w->tick,
        .step = w->nsteps,
        .time_s = w->time_s,
    };
    w->fault_rc = -ERANGE;
    return -ERANGE;
}

/* The drive's limit replaces the model's: the bench fills a default where the model has none
 * (HS_DEFAULT_SPEED_*, bench_plant_params.c) and the config may raise it or say .inf, and the
 * guard's bound must follow what the joint is actually driven with. */
int hs_world_set_joint_rate_limit(struct hs_world *w, uint32_t body, uint32_t link, double limit)
{
    if (body >= w->nbodies || link >= w->bodies[body].model->nlinks)
        return -EINVAL;
    struct hs__world_link *l = &w->bodies[body].links[link];
    if (!l->joint || (l->type != HS_JOINT_ROTATE && l->type != HS_JOINT_SLIDE))
        return -EINVAL;
    if (!(limit > 0)) /* 0 or NAN: no limit given; the model's stays */
        return 0;
    double factor = w->params.guard.joint_rate_factor;
    l->rate_limit = isfinite(limit) && isfinite(factor) ? limit * factor : INFINITY;
    return 0;
}

int hs__world_guard_check(struct hs_world *w)
{
    const struct hs_world_guard *g = &w->params.guard;
    for (uint32_t i = 0; i < w->nall_bodies; i++) {
        dBodyID b = w->all_bodies[i];
        double p2 = norm2(dBodyGetPosition(b));
        if (out_of(p2, w->guard_pos2))
            return trip(w, HS_WORLD_FAULT_POSITION, b, NULL, sqrt(p2), g->max_position_m);
        double v2 = norm2(dBodyGetLinearVel(b));
        if (out_of(v2, w->guard_vel2))
            return trip(w, HS_WORLD_FAULT_LINEAR_VELOCITY, b, NULL, sqrt(v2),
                        g->max_linear_velocity_mps);
        double a2 = norm2(dBodyGetAngularVel(b));
        if (out_of(a2, w->guard_avel2))
            return trip(w, HS_WORLD_FAULT_ANGULAR_VELOCITY, b, NULL, sqrt(a2),
                        g->max_angular_velocity_rad_s);
    }
    for (uint32_t i = 0; i < w->nactuated; i++) {
        const struct hs__world_link *l = w->actuated[i];
        if (!(fabs(l->dq) <= l->rate_limit) || !isfinite(l->dq))
            return trip(w, HS_WORLD_FAULT_JOINT_RATE, NULL, l, l->dq, l->rate_limit);
    }
    const struct hs__world_link *l;
    double depth, allowed;
    if (hs__world_floor_check(w, &l, &depth, &allowed) < 0)
        return trip(w, HS_WORLD_FAULT_BELOW_FLOOR, NULL, l, depth, allowed);
    return 0;
}

const struct hs_world_fault *hs_world_fault(const struct hs_world *w)
{
    return &w->fault;
}

void hs_world_set_tick(struct hs_world *w, uint64_t tick)
{
    w->tick = tick;
}

int hs__world_fault_describe(const struct hs_world *w, const struct hs_world_fault *f,
                             const char *body_name, char *buf, size_t size)
{
    static const struct {
        const char *what, *unit, *key;
    } q[HS_WORLD_FAULT_MAX] = {
        [HS_WORLD_FAULT_POSITION] = {"centre of mass distance from the origin", "m",
                                     "physics.guard.max_position_m"},
        [HS_WORLD_FAULT_LINEAR_VELOCITY] = {"linear velocity", "m/s",
                                            "physics.guard.max_linear_velocity_mps"},
        [HS_WORLD_FAULT_ANGULAR_VELOCITY] = {"angular velocity", "rad/s",
                                             "physics.guard.max_angular_velocity_rad_s"},
    };
    if (f->kind == HS_WORLD_FAULT_NONE)
        return snprintf(buf, size, "no fault");
    if (f->kind == HS_WORLD_FAULT_ODE_INTERNAL)
        return snprintf(buf, size, "ODE internal error: %s", f->ode_text);
    if ((unsigned)f->kind >= HS_WORLD_FAULT_MAX)
        return snprintf(buf, size, "unknown fault %d", (int)f->kind);
    char where[2 * HS_NAME_MAX + 48];
    if (f->body < w->nbodies && f->link < w->bodies[f->body].model->nlinks) {
        const struct hs_link *l = &w->bodies[f->body].model->links[f->link];
        if (body_name)
            snprintf(where, sizeof where, "link %s of %s", l->name, body_name);
        else
            snprintf(where, sizeof where, "link %s of body %u", l->name, f->body);
    } else {
        snprintf(where, sizeof where, "the slider block of a piston joint");
    }
    const char *why = isfinite(f->value) ? "above" : "is not finite (bound";
    const char *close = isfinite(f->value) ? " (" : ", ";
    if (f->kind == HS_WORLD_FAULT_BELOW_FLOOR) {
        const struct hs_world_guard *g = &w->params.guard;
        return snprintf(buf, size,
                        "%s: centre of mass %.3g m below the floor (z = %g m) for %u steps "
                        "(physics.guard.floor_time_s %g), deeper than its geometry reaches "
                        "(%.3g m) plus physics.guard.floor_depth_m %g: it went through the floor",
                        where, f->value, w->floor_z, w->floor_steps, g->floor_time_s,
                        f->limit - g->floor_depth_m, g->floor_depth_m);
    }
    if (f->kind == HS_WORLD_FAULT_JOINT_RATE) {
        const struct hs_link *l = &w->bodies[f->body].model->links[f->link];
        const char *unit = l->joint_type == HS_JOINT_SLIDE ? "m/s" : "rad/s";
        if (!isfinite(f->limit))
            return snprintf(buf, size, "%s: joint rate %g %s is not finite", where, f->value, unit);
        return snprintf(buf, size,
                        "%s: joint rate %g %s %s %g%sphysics.guard."
                        "joint_rate_factor %g x the joint's velocity limit %g)",
                        where, f->value, unit, why, f->limit, close,
                        w->params.guard.joint_rate_factor,
                        f->limit / w->params.guard.joint_rate_factor);
    }
    return snprintf(buf, size, "%s: %s %g %s %s %g%s%s)", where, q[f->kind].what, f->value,
                    q[f->kind].unit, why, f->limit, close, q[f->kind].key);
}

int hs_world_fault_format(const struct hs_world *w, const struct hs_world_fault *f,
                          const char *body_name, char *buf, size_t size)
{
    if (f->kind == HS_WORLD_FAULT_NONE)
        return snprintf(buf, size, "no fault");
    int n = snprintf(buf, size, "tick %llu (t = %.6g s): ", (unsigned long long)f->tick, f->time_s);
    if (n < 0 || (size_t)n >= size)
        return n;
    int m = hs__world_fault_describe(w, f, body_name, buf + n, size - (size_t)n);
    return m < 0 ? m : n + m;
}
