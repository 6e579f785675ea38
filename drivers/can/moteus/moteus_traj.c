/* Position mode's trajectory, as the firmware runs it (facts from mjbots/moteus
 * fw/bldc_servo_position.h and bldc_servo_control.h, written here in hilsim's own terms):
 * - the control position and velocity latch once, on entering position mode (the measured
 *   position; the measured velocity, or 0 below 0.05 rev/s), and persist across commands: a
 *   command with the position unset (NaN) moves the control position on at the command
 *   velocity from where it is, so the joint keeps its position stiffness;
 * - without limits a set position is taken at once and then advances at the command velocity;
 * - with a velocity limit and/or an acceleration limit (0x028/0x029, NaN: the configured
 *   defaults, negative: none; any limit implies servo.max_velocity), the control velocity
 *   ramps at the acceleration limit and cruises at the velocity limit towards the target,
 *   decelerating to arrive at the command velocity; register 0x00b says when it has.
 * hilsim steps it once per tick, not at the firmware's control rate: on completion the control
 * position is set to the target, where the firmware's sub-millisecond steps would leave a
 * residue of one step. */
#include <math.h>

#include "moteus.h"

static double sgn(double x)
{
    return x > 0 ? 1.0 : -1.0;
}

/* The command's limits after the firmware's defaults (PrepareCommand). */
static void limits(const struct hs_mt_node *n, double *vlim, double *alim)
{
    double v = n->cmd_vel_limit, a = n->cmd_accel_limit;
    v = isnan(v) ? n->cfg.default_velocity_limit_rev_s : v < 0 ? NAN : v;
    a = isnan(a) ? n->cfg.default_accel_limit_rev_s2 : a < 0 ? NAN : a;
    if (!isnan(v) || !isnan(a))
        v = isnan(v) ? n->cfg.max_velocity_rev_s : fmin(v, n->cfg.max_velocity_rev_s);
    *vlim = v, *alim = a;
}

/* No target position: the velocity alone, ramped at the acceleration limit. */
static void velocity_only(struct hs_mt_control *c, double dt, double vlim, double alim, double v)
{
    if (!isnan(vlim))
        v = fmax(-vlim, fmin(vlim, v));
    if (isnan(alim)) {
        c->acc_rev_s2 = 0, c->vel_rev_s = v, c->done = true;
        return;
    }
    double s = sgn(v - c->vel_rev_s);
    c->acc_rev_s2 = alim * s;
    c->vel_rev_s += c->acc_rev_s2 * dt;
    if (sgn(v - c->vel_rev_s) != s)
        c->acc_rev_s2 = 0, c->vel_rev_s = v, c->done = true;
}

/* The acceleration towards a target dx ahead, arriving at velocity vf (in the target's frame:
 * accelerate, cruise at the limit, or brake just hard enough to stop on it). */
static double accel_to(double a, double vlim, double v0, double vf, double dx, double dt)
{
    if (!isnan(vlim) && fabs(v0) > vlim)
        return copysign(a, -v0); /* over the limit: back to it first */
    double vr = v0 - vf, dxa = fabs(dx);
    if (vr * dx < 0 || dx == 0)
        return copysign(a, -vr); /* moving away */
    double stop = vr * vr / (2 * a), need = vr * vr / (2 * dxa);
    if (dxa > stop) {
        double vn = fabs(vr) + a * dt, step = (fabs(vr) + vn) * 0.5 * dt;
        if (dxa - step < vn * vn / (2 * a))
            return copysign(fmin(need, a), -vr); /* the switch point falls in this step */
        return isnan(vlim) || fabs(v0) < vlim ? copysign(a, dx) : 0.0;
    }
    return copysign(fmin(need, a), -vr);
}

static void to_target(struct hs_mt_node *n, double dt, double vlim, double alim, double v)
{
    struct hs_mt_control *c = &n->ctl;
    double dx = n->cmd_pos_rev - c->pos_rev;
    if (isnan(alim)) { /* velocity limit only: cruise at it, arrive at the command velocity */
        c->acc_rev_s2 = 0;
        c->vel_rev_s = copysign(vlim, dx);
        if (fabs(dx) <= vlim * dt) {
            c->pos_rev = n->cmd_pos_rev - v * dt;
            c->vel_rev_s = v, c->done = true;
            n->cmd_pos_rev = NAN;
        }
        return;
    }
    double v0 = c->vel_rev_s;
    c->acc_rev_s2 = accel_to(alim, vlim, v0, v, dx, dt);
    c->vel_rev_s += c->acc_rev_s2 * dt;
    double v1 = c->vel_rev_s;
    if (!isnan(vlim) && fmin(fabs(v0), fabs(v1)) < vlim && fmax(fabs(v0), fabs(v1)) > vlim)
        c->acc_rev_s2 = 0, c->vel_rev_s = copysign(vlim, v1); /* one step exactly at cruise */
    double lo = fmin(v0, c->vel_rev_s), hi = fmax(v0, c->vel_rev_s);
    double vr = fabs(c->vel_rev_s - v);
    bool crossed = lo <= v && hi >= v, near_v = vr < alim * 0.5 * dt;
    bool near_x = fabs(dx) <= fmax(vr, fabs(v)) * 10.0 * dt;
    if ((crossed || near_v) && near_x) {
        c->pos_rev = n->cmd_pos_rev - v * dt; /* the step below lands on the target */
        c->acc_rev_s2 = 0, c->vel_rev_s = v, c->done = true;
        n->cmd_pos_rev = NAN;
    }
}

void hs__mt_trajectory(struct hs_mt_node *n, double dt, double q_rev, double dq_rev_s)
{
    struct hs_mt_control *c = &n->ctl;
    double v = isnan(n->cmd_vel_rev_s) ? 0 : n->cmd_vel_rev_s, vlim, alim;
    limits(n, &vlim, &alim);
    bool limited = !isnan(vlim) || !isnan(alim);
    if (!isnan(vlim))
        v = fmax(-vlim, fmin(vlim, v));
    if (!limited)
        c->done = true, c->acc_rev_s2 = 0, c->vel_rev_s = v;
    else
        c->done = false;
    if (!isnan(n->cmd_pos_rev) && !limited) {
        c->pos_rev = n->cmd_pos_rev, c->valid = true;
        n->cmd_pos_rev = NAN;
        c->acc_rev_s2 = 0, c->vel_rev_s = v;
    } else if (!c->valid) {
        c->valid = true;
        c->pos_rev = q_rev, c->acc_rev_s2 = 0;
        c->vel_rev_s = fabs(dq_rev_s) < 0.05 ? 0 : dq_rev_s;
    }
    double v0 = c->vel_rev_s;
    if (!c->done) {
        if (isnan(n->cmd_pos_rev))
            velocity_only(c, dt, vlim, alim, v);
        else
            to_target(n, dt, vlim, alim, v);
    }
    double vmax = n->cfg.max_velocity_rev_s;
    if (fabs(c->vel_rev_s) > vmax)
        c->acc_rev_s2 = 0, c->vel_rev_s = copysign(vmax, c->vel_rev_s);
    c->pos_rev += (c->acc_rev_s2 != 0 ? (v0 + c->vel_rev_s) * 0.5 : c->vel_rev_s) * dt;
    if (!isnan(n->cmd_pos_rev))
        n->cmd_pos_rev += v * dt; /* a moving target moves on at the command velocity */
}
