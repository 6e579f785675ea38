/* The per-tick actuation path: command delay, watchdog, motor model, then the world's explicit
 * effort and the ODE motor row of each joint. RT-safe: no allocation, O(joints). */
#include <math.h>

#include "plant_internal.h"

/* A hold row (vel 0: a brake, Coulomb stiction) must not meet ODE's "powered stop". When a
 * joint reaches its limit stop with a motor row, ODE drops the row and instead applies FMax as
 * an explicit torque: into the stop when vel > 0 at the high stop, vel < 0 at the low one, or
 * vel == 0 at either; away from it, times dParamFudgeFactor, otherwise. For a brake FMax is the
 * holding torque (1e6 N·m when unlimited), and pushing a light link into its stop with it blew
 * the world up 44.7 s into a braked arm's run (test_cli_guard). So a hold row asks for a speed
 * too small to matter, pointing back into range, with fudge 0: no explicit torque at a stop,
 * where the limit row itself holds; off the stops it is the same hold. Rows that drive (vel !=
 * 0) keep ODE's behaviour: a motor driven into its stop does push with its saturation. */
#define HS_HOLD_ROW_VEL 1e-12

static void set_motor_row(struct hs__plant_joint *j, double q, double vel, double fmax)
{
    double fudge = 1.0;
    if (vel == 0.0) {
        const struct hs_actuator_params *a = &j->p.actuator;
        bool upper_half =
            isfinite(a->q_max) && (!isfinite(a->q_min) || q > 0.5 * (a->q_min + a->q_max));
        vel = upper_half ? -HS_HOLD_ROW_VEL : HS_HOLD_ROW_VEL;
        fudge = 0.0;
    }
    if (j->type == HS_JOINT_ROTATE) {
        dJointSetHingeParam(j->joint, dParamVel, vel);
        dJointSetHingeParam(j->joint, dParamFMax, fmax);
        dJointSetHingeParam(j->joint, dParamFudgeFactor, fudge);
    } else {
        dJointSetSliderParam(j->joint, dParamVel, vel);
        dJointSetSliderParam(j->joint, dParamFMax, fmax);
        dJointSetSliderParam(j->joint, dParamFudgeFactor, fudge);
    }
}

/* A stop past ±pi, done as ODE does its own stops: beyond the limit the motor row drives the
 * joint back at ERP / step times the overshoot, with an unbounded force. The row is two-sided,
 * unlike ODE's limit row, so for the one step it is engaged it also damps a motion back into
 * range; it releases as soon as the joint is inside. */
static bool soft_stop(const struct hs_plant *pl, const struct hs__plant_joint *j, double q,
                      double *ret_vel)
{
    const struct hs_actuator_params *a = &j->p.actuator;
    if (q > a->q_max)
        *ret_vel = pl->stop_gain * (a->q_max - q);
    else if (q < a->q_min)
        *ret_vel = pl->stop_gain * (a->q_min - q);
    else
        return false;
    return true;
}

/* The speed-limit row's geometry before the step. ODE's feedback t1 is the sum over the
 * joint's rows on the link body; for a hinge the three anchor rows add lever x f1 and the two
 * angular rows are square to the axis, so axis . (t1 - lever x f1) is what the motor and a stop
 * applied. Inside the stops that is the row alone. */
static void speed_row_arm(struct hs__plant_joint *j, double q)
{
    const struct hs_actuator_params *a = &j->p.actuator;
    j->row_check = j->out.speed_limit_row && q > a->q_min && q < a->q_max;
    if (!j->row_check)
        return;
    dVector3 axis, anchor = {0, 0, 0};
    const dReal *c = dBodyGetPosition(dJointGetBody(j->joint, 0));
    if (j->type == HS_JOINT_SLIDE) {
        dJointGetSliderAxis(j->joint, axis);
        anchor[0] = c[0], anchor[1] = c[1], anchor[2] = c[2]; /* no lever: forces only */
    } else {
        dJointGetHingeAxis(j->joint, axis);
        dJointGetHingeAnchor(j->joint, anchor);
    }
    for (int k = 0; k < 3; k++) {
        j->row_axis[k] = axis[k];
        j->row_lever[k] = anchor[k] - c[k];
    }
}

void hs__plant_speed_row_check(struct hs__plant_joint *j)
{
    if (!j->row_check)
        return;
    j->row_check = false;
    const dJointFeedback *fb = j->feedback;
    const double *a = j->row_axis, *r = j->row_lever;
    double along;
    if (j->type == HS_JOINT_SLIDE) {
        along = a[0] * fb->f1[0] + a[1] * fb->f1[1] + a[2] * fb->f1[2];
    } else {
        double m[3] = {r[1] * fb->f1[2] - r[2] * fb->f1[1], r[2] * fb->f1[0] - r[0] * fb->f1[2],
                       r[0] * fb->f1[1] - r[1] * fb->f1[0]};
        along = a[0] * (fb->t1[0] - m[0]) + a[1] * (fb->t1[1] - m[1]) + a[2] * (fb->t1[2] - m[2]);
    }
    if (hs_actuator_speed_row_held(&j->out, along))
        j->tick_limited = true;
}

void hs_plant_apply_commands(struct hs_plant *pl, int64_t now_ns)
{
    bool new_tick = !pl->started || now_ns != pl->last_now_ns;
    pl->started = true;
    pl->last_now_ns = now_ns;
    for (uint32_t i = 0; i < pl->njoints; i++) {
        struct hs__plant_joint *j = &pl->joints[i];
        if (new_tick) {
            const struct hs_joint_command *d = hs_delay_line_push(&j->cmd_delay, &j->slot);
            j->cmd = *d;
            /* The drive sees the command delay ticks after hilsim received it. */
            j->cmd.rx_time_ns += (int64_t)j->p.command_delay_ticks * pl->tick_ns;
        }
        if (!new_tick) /* the substep before, of this tick */
            hs__plant_speed_row_check(j);
        double q = hs_world_joint_position(pl->world, pl->body, j->link);
        double dq = hs_world_joint_velocity(pl->world, pl->body, j->link);
        struct hs_joint_command scratch;
        const struct hs_joint_command *x =
            hs_actuator_select(&j->p.actuator, &j->state, &j->cmd, now_ns, new_tick, q, &scratch);
        hs_actuator_compute(&j->p.actuator, x, q, dq, &j->out);
        if (j->out.invalid_command) {
            /* An invalid command is counted once per tick and replaced by the joint's safe
             * behaviour, holding where the joint was when the invalid commands began. */
            if (!j->state.invalid)
                j->state.hold_q = q;
            if (new_tick)
                j->state.invalid_commands++;
            j->state.invalid = true;
            x = hs_actuator_safe_command(&j->p.actuator, &j->state, x, &scratch);
            hs_actuator_compute(&j->p.actuator, x, q, dq, &j->out);
            j->out.invalid_command = true;
        } else {
            j->state.invalid = false;
        }
        if (new_tick) {
            j->state.torque_saturations += j->out.torque_saturated;
            j->state.current_saturations += j->out.current_saturated;
        }
        /* Velocity limits are counted per tick once its steps are done
         * (hs_plant_update_sensors): whether the speed-limit row held the joint shows only then. */
        j->tick_limited |= j->out.velocity_limited;
        hs_world_set_joint_effort(pl->world, pl->body, j->link, j->out.effort);
        double stop_vel;
        if (j->soft_stops && soft_stop(pl, j, q, &stop_vel)) {
            set_motor_row(j, q, stop_vel, HS_ACTUATOR_RIGID_EFFORT);
            j->row_check = false;
        } else {
            set_motor_row(j, q, j->out.ode_vel, j->out.ode_fmax);
            speed_row_arm(j, q);
        }
    }
}
