#include "hilsim/actuator.h"

#include <errno.h>
#include <math.h>

#include "hilsim/model.h"

void hs_actuator_params_default(const struct hs_link *link, struct hs_actuator_params *ret)
{
    *ret = (struct hs_actuator_params){
        .gear_ratio = link->gear_ratio,
        .gear_efficiency = link->gear_efficiency,
        .rotor_inertia = link->rotor_inertia,
        .torque_const = link->torque_const,
        .torque_max = link->effort_max > 0 ? link->effort_max : INFINITY, /* URDF effort */
        .current_max = INFINITY,
        .viscous = link->damping,  /* URDF dynamics damping; 0 from VRML */
        .coulomb = link->friction, /* URDF dynamics friction; 0 from VRML */
        .q_min = link->llimit,
        .q_max = link->ulimit,
        .dq_min = link->lvlimit,
        .dq_max = link->uvlimit,
        .velocity_limit_gain = 0.0,
        .velocity_limit_reach = 0.0,
        .velocity_loop = HS_VELOCITY_LOOP_GAIN,
        .velocity_gain = 0.0,
        .brake_torque = INFINITY,
        .timeout_ns = 0,
        .safe = HS_SAFE_ZERO_TORQUE,
        .hold_kp = 0.0,
        .hold_kd = 0.0,
    };
}

int hs_actuator_params_check(const struct hs_actuator_params *p, const char **ret_field)
{
#define BAD(cond, name)                                                                            \
    do {                                                                                           \
        if (cond) {                                                                                \
            *ret_field = name;                                                                     \
            return -EINVAL;                                                                        \
        }                                                                                          \
    } while (0)
    BAD(!isfinite(p->gear_ratio) || p->gear_ratio == 0.0, "gear_ratio");
    BAD(!(p->gear_efficiency > 0.0 && p->gear_efficiency <= 1.0), "gear_efficiency");
    BAD(!(p->rotor_inertia >= 0.0) || !isfinite(p->rotor_inertia), "rotor_inertia");
    BAD(!(p->torque_const > 0.0) || !isfinite(p->torque_const), "torque_const");
    BAD(!(p->torque_max > 0.0), "torque_max");
    BAD(!(p->current_max > 0.0), "current_max");
    BAD(!(p->viscous >= 0.0) || !isfinite(p->viscous), "viscous");
    BAD(!(p->coulomb >= 0.0) || !isfinite(p->coulomb), "coulomb");
    BAD(isnan(p->q_min) || isnan(p->q_max) || p->q_min > p->q_max, "q_min/q_max");
    BAD(isnan(p->dq_min) || isnan(p->dq_max) || p->dq_min > p->dq_max, "dq_min/dq_max");
    BAD(!(p->velocity_limit_gain >= 0.0) || !isfinite(p->velocity_limit_gain),
        "velocity_limit_gain");
    BAD(!(p->velocity_limit_reach >= 0.0), "velocity_limit_reach");
    BAD((unsigned)p->velocity_loop >= HS_VELOCITY_LOOP_MAX, "velocity_loop");
    BAD(!(p->velocity_gain >= 0.0) || !isfinite(p->velocity_gain), "velocity_gain");
    BAD(!(p->brake_torque > 0.0), "brake_torque");
    BAD(p->timeout_ns < 0, "timeout_ns");
    BAD((unsigned)p->safe >= HS_SAFE_MAX, "safe");
    BAD(!(p->hold_kp >= 0.0) || !isfinite(p->hold_kp), "hold_kp");
    BAD(!(p->hold_kd >= 0.0) || !isfinite(p->hold_kd), "hold_kd");
#undef BAD
    return 0;
}

/* The model's convention (OpenHRP/Choreonoid): joint torque = i · Kt · N · eta. Efficiency is
 * applied the same way in both directions of power flow, as the model has one figure. */
double hs_actuator_current_to_torque(const struct hs_actuator_params *p, double current)
{
    return current * p->torque_const * p->gear_ratio * p->gear_efficiency;
}

double hs_actuator_torque_to_current(const struct hs_actuator_params *p, double torque)
{
    return torque / (p->torque_const * p->gear_ratio * p->gear_efficiency);
}

const struct hs_joint_command *hs_actuator_select(const struct hs_actuator_params *p,
                                                  struct hs_actuator_state *st,
                                                  const struct hs_joint_command *cmd,
                                                  int64_t now_ns, bool new_tick, double q,
                                                  struct hs_joint_command *scratch)
{
    bool none = cmd->seq == 0;
    /* Strictly older than the timeout: a command exactly timeout_ns old is still fresh, so the
     * fallback starts on the first tick past the timeout. */
    bool stale = none || (p->timeout_ns > 0 && now_ns - cmd->rx_time_ns > p->timeout_ns);
    if (stale && !st->stale) {
        st->hold_q = q;
        if (!none)
            st->stale_events++;
    }
    st->stale = stale;
    if (!stale)
        return cmd;
    if (new_tick && !none)
        st->stale_ticks++;
    return hs_actuator_safe_command(p, st, cmd, scratch);
}

const struct hs_joint_command *hs_actuator_safe_command(const struct hs_actuator_params *p,
                                                        const struct hs_actuator_state *st,
                                                        const struct hs_joint_command *cmd,
                                                        struct hs_joint_command *scratch)
{
    *scratch = (struct hs_joint_command){.seq = cmd->seq, .rx_time_ns = cmd->rx_time_ns};
    switch (p->safe) {
    case HS_SAFE_BRAKE:
        scratch->mode = HS_JOINT_MODE_BRAKE;
        break;
    case HS_SAFE_HOLD:
        scratch->mode = HS_JOINT_MODE_POSITION;
        scratch->q = st->hold_q;
        scratch->kp = p->hold_kp;
        scratch->kd = p->hold_kd;
        break;
    default:
        scratch->mode = HS_JOINT_MODE_DISABLED;
        break;
    }
    return scratch;
}

/* Every term of a torque law must be finite: a product that overflows (kp = 1e200 times a
 * position error of 1e200) is a command no drive can execute, not a zero torque. */
static bool all_finite(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

/* The drive's speed limit, enforced as real drives do: a torque command that would carry the
 * joint past its velocity limit is executed as a speed loop at the limit with the command's
 * torque as its bound. An explicit limiter acting on the speed at the start of the tick cannot
 * do that: on a light link one tick of a large torque overshoots by tau·h/I (SR1's wrist under
 * 1e4 N·m spun up to hundreds of rad/s). As an ODE motor row it is solved with the step: the
 * row stops at the limit exactly when the torque would overshoot it, and gives the full torque
 * otherwise (a saturated row is the explicit torque). The row is engaged only when the tick
 * could reach the limit, dq + tau·reach (reach: the step over the smallest inertia the joint
 * moves, from the bench), so it never takes the Coulomb friction row from a joint far from
 * its limit; for its tick friction acts explicitly, as on the other driving rows. A joint
 * already past its limit (pushed there by gravity or its neighbours) gets no row: a row at the
 * limit would also hold it there against whatever slows it. The explicit limiter before the
 * saturation brakes it back (velocity_limit_gain; the bench sets it to 1 / reach, which
 * halves the excess per tick at most). */
static bool speed_limit_row(const struct hs_actuator_params *p, double dq, double tau,
                            struct hs_actuator_output *ret)
{
    if (!(p->velocity_limit_reach > 0.0) || dq > p->dq_max || dq < p->dq_min)
        return false;
    double reached = dq + tau * p->velocity_limit_reach, lim;
    if (tau > 0.0 && reached >= p->dq_max)
        lim = p->dq_max;
    else if (tau < 0.0 && reached <= p->dq_min)
        lim = p->dq_min;
    else
        return false;
    if (!isfinite(lim))
        return false;
    double fmax = fabs(tau);
    ret->ode_vel = lim;
    ret->ode_fmax = fmax < HS_ACTUATOR_RIGID_EFFORT ? fmax : HS_ACTUATOR_RIGID_EFFORT;
    ret->ode_motor_drives = true;
    ret->effort = -p->viscous * dq - (dq > 0 ? p->coulomb : dq < 0 ? -p->coulomb : 0);
    ret->speed_limit_row = true;
    return true;
}

/* ODE clamps a row's multiplier to its bound exactly, so a row that passed the full torque
 * reads back at fmax to rounding; the tolerance covers the sum over the joint's rows only. */
#define HS_SPEED_ROW_FULL 1e-6

bool hs_actuator_speed_row_held(const struct hs_actuator_output *o, double row_torque)
{
    double cmd = fabs(o->motor_torque);
    if (o->ode_fmax < cmd)
        return true; /* the row's bound itself was below the command (HS_ACTUATOR_RIGID_EFFORT) */
    return fabs(row_torque) < cmd * (1.0 - HS_SPEED_ROW_FULL);
}

static double saturate(double tau, double tmax)
{
    return tau > tmax ? tmax : tau < -tmax ? -tmax : tau;
}

void hs_actuator_compute(const struct hs_actuator_params *p, const struct hs_joint_command *cmd,
                         double q, double dq, struct hs_actuator_output *ret)
{
    *ret = (struct hs_actuator_output){0};
    double tau = 0.0;
    bool motor_row = false;
    bool valid = true;
    switch (cmd->mode) {
    case HS_JOINT_MODE_TORQUE:
        tau = cmd->tau_ff;
        valid = isfinite(tau);
        break;
    case HS_JOINT_MODE_CURRENT:
        tau = hs_actuator_current_to_torque(p, cmd->current);
        valid = isfinite(cmd->current) && isfinite(tau);
        break;
    case HS_JOINT_MODE_VELOCITY:
        if (p->velocity_loop == HS_VELOCITY_LOOP_ODE_MOTOR) {
            motor_row = true;
            /* The speed loop's set-point stays inside the drive's speed limit. */
            ret->ode_vel = fmin(fmax(cmd->velocity, p->dq_min), p->dq_max);
            tau = cmd->tau_ff;
            valid = isfinite(cmd->velocity) && isfinite(tau);
        } else {
            double ev = cmd->velocity - dq, tv = p->velocity_gain * ev;
            tau = tv + cmd->tau_ff;
            valid = all_finite((const double[]){cmd->velocity, cmd->tau_ff, ev, tv, tau}, 5);
        }
        break;
    case HS_JOINT_MODE_POSITION: {
        double ep = cmd->q - q, ev = cmd->dq - dq;
        double tp = cmd->kp * ep, tv = cmd->kd * ev, tpd = tp + tv;
        tau = tpd + cmd->tau_ff;
        valid = all_finite((const double[]){cmd->q, cmd->dq, cmd->kp, cmd->kd, cmd->tau_ff, ep, ev,
                                            tp, tv, tpd, tau},
                           11);
        break;
    }
    case HS_JOINT_MODE_BRAKE:
        motor_row = true;
        ret->ode_vel = 0.0;
        break;
    default: /* disabled, or an unknown mode from a bad source: free-wheel */
        break;
    }
    if (!valid) {
        /* Zero torque and no motor row; the caller runs the safe behaviour instead. */
        tau = 0.0;
        motor_row = false;
        ret->ode_vel = 0.0;
        ret->invalid_command = true;
    }

    double tmax = p->torque_max;
    double from_current = fabs(hs_actuator_current_to_torque(p, p->current_max));
    bool current_binds = from_current < tmax;
    if (current_binds)
        tmax = from_current;

    /* A drive's speed limiter: past a limit, torque that drives further out is refused, and
     * with a gain the drive brakes back towards the limit. It counts as limiting only when the
     * torque differs from what saturation alone makes of the command. */
    double commanded = tau;
    if (dq > p->dq_max && tau > p->velocity_limit_gain * (p->dq_max - dq))
        tau = p->velocity_limit_gain * (p->dq_max - dq);
    else if (dq < p->dq_min && tau < p->velocity_limit_gain * (p->dq_min - dq))
        tau = p->velocity_limit_gain * (p->dq_min - dq);
    ret->velocity_limited = saturate(tau, tmax) != saturate(commanded, tmax);
    if (tau > tmax || tau < -tmax) {
        tau = tau > 0 ? tmax : -tmax;
        ret->torque_saturated = !current_binds;
        ret->current_saturated = current_binds;
    }

    ret->motor_torque = tau;
    ret->current = hs_actuator_torque_to_current(p, tau);
    ret->effort = tau - p->viscous * dq;
    ret->ode_motor_drives = motor_row;
    if (motor_row) {
        /* Brake: the row holds up to the brake torque plus the friction it sits behind. ODE
         * velocity loop: the row is the motor, limited by the drive's saturation. */
        ret->ode_fmax = cmd->mode == HS_JOINT_MODE_BRAKE ? p->brake_torque + p->coulomb : tmax;
        /* ODE's solver breaks on an infinite row bound (NaN orientations, measured), so an
         * unlimited brake or velocity loop gets a finite bound no real joint comes near. */
        if (!(ret->ode_fmax < HS_ACTUATOR_RIGID_EFFORT))
            ret->ode_fmax = HS_ACTUATOR_RIGID_EFFORT;
        if (cmd->mode != HS_JOINT_MODE_BRAKE)
            ret->effort = tau - p->viscous * dq - (dq > 0 ? p->coulomb : dq < 0 ? -p->coulomb : 0);
    } else if (!speed_limit_row(p, dq, tau, ret)) {
        /* Coulomb friction as a zero-velocity motor row limited to the friction torque: ODE
         * then gives true stiction (no chatter at dq = 0) and sliding friction of exactly
         * `coulomb` opposing the motion. */
        ret->ode_vel = 0.0;
        ret->ode_fmax = p->coulomb;
    }
}
