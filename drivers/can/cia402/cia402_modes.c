/* Modes of operation (CiA 402-2 sections 8-12) turned into the joint command.
 *
 * The drive's control loops are the plant's PD law (hilsim/can_node.h): position modes use the
 * position gain and the velocity gain (position_kp_nm_rad, velocity_kd_nm_s_rad), velocity
 * modes the velocity gain, torque mode none; torque offset 0x60B2 is a feed-forward and max
 * torque 0x6072 the limit.
 * - CSP (8): the target 0x607A is the position reference, with a velocity feed-forward of the
 *   target's change over the interpolation period 0x60C2 (when set) plus 0x60B1. Bit 12 "drive
 *   follows the command value", bit 13 following error.
 * - CSV (9): 0x60FF (+ 0x60B1) is the velocity reference. CST (10): 0x6071 (+ 0x60B2).
 * - PP (1): set-points by the handshake of controlword bit 4 (new set-point, rising edge),
 *   bit 5 (change set immediately), bit 6 (relative) and bit 8 (halt), acknowledged in
 *   statusword bit 12; without bit 5 a second set-point waits in a one-deep buffer until the
 *   first is reached. The demand follows a trapezoid with 0x6081 velocity, 0x6083 acceleration,
 *   0x6084 deceleration. Bit 10 target reached: the demand is at the target and the actual
 *   position stays within 0x6067 for 0x6068 ms (with halt: stopped).
 * - PV (3): the demand velocity ramps to 0x60FF with 0x6083/0x6084 (halt: to 0). Bit 10
 *   target reached within 0x606D, bit 12 speed = 0 within 0x606F.
 * - HM (6), methods 35 and 37 (the same method, renumbered in CiA 402 v4): on bit 4's rising
 *   edge the present position becomes the home offset 0x607C. Bit 12 homing attained, bit 10
 *   target reached.
 * Position modes check the following error: |demand - actual| above 0x6065 for longer than
 * 0x6066 ms is a fault (EMCY 0x8611); 0xFFFFFFFF turns the check off. Targets are clamped to
 * the software position limits 0x607D when min < max (bit 11 internal limit active). */
#include <math.h>
#include <stdlib.h>

#include "cia402/cia402_internal.h"

#define TWO_PI 6.283185307179586

static double cpr_rad(const struct hs_cia402_node *n)
{
    return (double)n->cfg.counts_per_rev / TWO_PI;
}

double hs__cia402_counts_to_rad(const struct hs_cia402_node *n, double counts)
{
    return counts / cpr_rad(n);
}

double hs__cia402_rad_to_counts(const struct hs_cia402_node *n, double rad)
{
    return rad * cpr_rad(n);
}

static double pos_rad(const struct hs_cia402_node *n, double counts)
{
    return hs__cia402_counts_to_rad(n, counts) + n->zero_rad;
}

static double rated_nm(const struct hs_cia402_node *n)
{
    return n->od.rated_torque_mnm * 1e-3;
}

static double clamp_target(struct hs_cia402_node *n, double counts)
{
    const int32_t *lim = n->od.sw_limit;
    if (lim[0] >= lim[1])
        return counts;
    if (counts < lim[0] || counts > lim[1]) {
        n->internal_limit = true;
        return counts < lim[0] ? lim[0] : lim[1];
    }
    return counts;
}

void hs__cia402_output_off(struct hs_cia402_node *n)
{
    struct hs_can_joint_command *c = &n->base.cmd;
    c->mode = HS_CAN_JOINT_MODE_OFF;
    c->enabled = false;
    c->kp_nm_rad = c->kd_nm_s_rad = c->q_ref_rad = c->dq_ref_rad_s = c->tau_ff_nm = 0;
}

static void command(struct hs_cia402_node *n, enum hs_can_joint_mode mode, double kp, double q,
                    double dq, double tau)
{
    struct hs_can_joint_command *c = &n->base.cmd;
    c->mode = mode;
    c->enabled = true;
    c->kp_nm_rad = kp;
    c->kd_nm_s_rad = mode == HS_CAN_JOINT_MODE_TORQUE ? 0 : n->cfg.velocity_kd_nm_s_rad;
    c->q_ref_rad = q;
    c->dq_ref_rad_s = dq;
    c->tau_ff_nm = tau;
    c->torque_limit_nm = n->od.max_torque * 1e-3 * rated_nm(n);
    if (!(c->torque_limit_nm > 0))
        c->torque_limit_nm = 1e-9; /* 0 would mean unlimited; max torque 0 means no torque */
}

void hs__cia402_mode_enter(struct hs_cia402_node *n)
{
    n->demand_rad = n->q_rad;
    n->demand_vel = n->mode_active == HS_CIA402_MODE_PV ? n->dq_rad_s : 0;
    n->pp_target_rad = n->q_rad;
    n->pp_buffered = false;
    n->sp_ack = false;
    n->homing_done = n->homing_error = false;
    n->in_window_since_ns = -1;
    n->ferr_since_ns = -1;
    n->ferr_active = false;
    n->csp_prev_target = n->od.target_position;
    n->csp_ff_rad_s = 0;
}

/* Moves v toward v_goal by at most acc (speeding up) or dec (slowing down) times dt. */
static double ramp(double v, double v_goal, double acc, double dec, double dt)
{
    bool speeding = fabs(v_goal) > fabs(v) && (v_goal * v >= 0);
    double step = (speeding ? acc : dec) * dt;
    if (fabs(v_goal - v) <= step)
        return v_goal;
    return v + (v_goal > v ? step : -step);
}

/* One step of the trapezoid toward target: velocity limited to the profile velocity and to
 * what the deceleration can still stop in the remaining distance. */
static void profile_step(struct hs_cia402_node *n, double target, double vmax, double acc,
                         double dec, double dt)
{
    double dist = target - n->demand_rad;
    double v_goal = copysign(fmin(vmax, sqrt(2.0 * dec * fabs(dist))), dist);
    double v;
    if (v_goal * n->demand_vel > 0 && fabs(v_goal) < fabs(n->demand_vel) && fabs(v_goal) < vmax)
        v = v_goal; /* braking: ride the stopping curve, whose slope is the deceleration */
    else
        v = ramp(n->demand_vel, v_goal, acc, dec, dt);
    double next = n->demand_rad + v * dt;
    if (fabs(v * dt) >= fabs(dist) && v * dist >= 0) {
        next = target; /* arrives within this step */
        v = 0;
    }
    n->demand_rad = next;
    n->demand_vel = v;
}

static double units_acc(const struct hs_cia402_node *n, uint32_t counts_s2)
{
    return hs__cia402_counts_to_rad(n, counts_s2 > 0 ? counts_s2 : 1);
}

static void following_error(struct hs_cia402_node *n, double demand_counts, int64_t now_ns)
{
    double err = demand_counts - n->od.position_actual;
    n->od.following_error_actual = (int32_t)fmax(fmin(err, INT32_MAX), INT32_MIN);
    uint32_t window = n->od.following_error_window;
    if (window == 0xFFFFFFFFu || fabs(err) <= window) {
        n->ferr_since_ns = -1;
        n->ferr_active = false;
        return;
    }
    n->ferr_active = true;
    if (n->ferr_since_ns < 0)
        n->ferr_since_ns = now_ns;
    if (now_ns - n->ferr_since_ns >= (int64_t)n->od.following_error_timeout_ms * 1000000 &&
        !n->pending_fault)
        n->pending_fault = HS_CIA402_EMCY_FOLLOWING_ERROR;
}

static bool window_held(struct hs_cia402_node *n, bool inside, uint16_t ms, int64_t now_ns)
{
    if (!inside) {
        n->in_window_since_ns = -1;
        return false;
    }
    if (n->in_window_since_ns < 0)
        n->in_window_since_ns = now_ns;
    return now_ns - n->in_window_since_ns >= (int64_t)ms * 1000000;
}

static void run_pp(struct hs_cia402_node *n, int64_t now_ns, double dt)
{
    uint16_t cw = n->od.controlword, prev = n->cw_prev;
    double target_counts = clamp_target(n, n->od.target_position);
    bool reached = n->demand_rad == n->pp_target_rad && n->demand_vel == 0;
    if ((cw & 0x10) && !(prev & 0x10)) {
        double t = pos_rad(n, target_counts);
        if (cw & 0x40) /* relative to the preceding target */
            t = n->pp_target_rad + hs__cia402_counts_to_rad(n, n->od.target_position);
        if ((cw & 0x20) || reached) {
            n->pp_target_rad = t;
            n->sp_ack = true;
            n->in_window_since_ns = -1;
        } else if (!n->pp_buffered) {
            n->pp_buffer_rad = t;
            n->pp_buffered = true;
            n->sp_ack = true;
        }
    }
    if (!(cw & 0x10))
        n->sp_ack = false;
    if (reached && n->pp_buffered) {
        n->pp_target_rad = n->pp_buffer_rad;
        n->pp_buffered = false;
        n->in_window_since_ns = -1;
    }
    double vmax = hs__cia402_counts_to_rad(n, n->od.profile_velocity);
    double acc = units_acc(n, n->od.profile_acceleration);
    double dec = units_acc(n, n->od.profile_deceleration);
    if (cw & 0x100) /* halt: stop on the profile deceleration where we are */
        n->demand_vel = ramp(n->demand_vel, 0, acc, dec, dt), n->demand_rad += n->demand_vel * dt;
    else
        profile_step(n, n->pp_target_rad, vmax, acc, dec, dt);
    double demand_counts = hs__cia402_rad_to_counts(n, n->demand_rad - n->zero_rad);
    n->od.position_demand = (int32_t)lround(demand_counts);
    following_error(n, demand_counts, now_ns);
    command(n, HS_CAN_JOINT_MODE_POSITION_PD, n->cfg.position_kp_nm_rad, n->demand_rad,
            n->demand_vel, n->od.torque_offset * 1e-3 * rated_nm(n));
    double err =
        hs__cia402_rad_to_counts(n, n->pp_target_rad) - hs__cia402_rad_to_counts(n, n->q_rad);
    bool at = (cw & 0x100)
                  ? n->demand_vel == 0
                  : n->demand_rad == n->pp_target_rad && fabs(err) <= n->od.position_window;
    n->target_reached = window_held(n, at, n->od.position_window_ms, now_ns);
}

static void run_pv(struct hs_cia402_node *n, double dt)
{
    uint16_t cw = n->od.controlword;
    double goal = (cw & 0x100) ? 0 : hs__cia402_counts_to_rad(n, n->od.target_velocity);
    double acc = units_acc(n, n->od.profile_acceleration);
    double dec = units_acc(n, n->od.profile_deceleration);
    n->demand_vel = ramp(n->demand_vel, goal, acc, dec, dt);
    command(n, HS_CAN_JOINT_MODE_VELOCITY, 0, 0, n->demand_vel,
            n->od.torque_offset * 1e-3 * rated_nm(n));
    double goal_counts = (cw & 0x100) ? 0 : n->od.target_velocity;
    n->target_reached = fabs(n->od.velocity_actual - goal_counts) <= n->od.velocity_window;
}

static void run_hm(struct hs_cia402_node *n)
{
    uint16_t cw = n->od.controlword, prev = n->cw_prev;
    if ((cw & 0x10) && !(prev & 0x10) && !(cw & 0x100)) {
        /* methods 35/37: no motion, the present position is the home position */
        n->zero_rad = n->q_rad - hs__cia402_counts_to_rad(n, n->od.home_offset);
        n->demand_rad = n->q_rad;
        n->homing_done = true;
    }
    command(n, HS_CAN_JOINT_MODE_POSITION_PD, n->cfg.position_kp_nm_rad, n->demand_rad, 0,
            n->od.torque_offset * 1e-3 * rated_nm(n));
    n->target_reached = true;
}

static double interp_period_s(const struct hs_cia402_node *n)
{
    if (!n->od.interp_period)
        return 0;
    return n->od.interp_period * pow(10.0, n->od.interp_exponent);
}

static void run_csp(struct hs_cia402_node *n, int64_t now_ns)
{
    double target = clamp_target(n, n->od.target_position);
    double T = interp_period_s(n);
    if (n->od.target_position != n->csp_prev_target) {
        n->csp_ff_rad_s =
            T > 0
                ? hs__cia402_counts_to_rad(n, (double)n->od.target_position - n->csp_prev_target) /
                      T
                : 0;
        n->csp_prev_target = n->od.target_position;
    }
    n->od.position_demand = (int32_t)target;
    following_error(n, target, now_ns);
    double ff = n->csp_ff_rad_s + hs__cia402_counts_to_rad(n, n->od.velocity_offset);
    command(n, HS_CAN_JOINT_MODE_POSITION_PD, n->cfg.position_kp_nm_rad, pos_rad(n, target), ff,
            n->od.torque_offset * 1e-3 * rated_nm(n));
}

void hs__cia402_mode_run(struct hs_cia402_node *n, int64_t now_ns, double dt_s)
{
    n->internal_limit = false;
    switch (n->mode_active) {
    case HS_CIA402_MODE_PP:
        run_pp(n, now_ns, dt_s);
        break;
    case HS_CIA402_MODE_PV:
        run_pv(n, dt_s);
        break;
    case HS_CIA402_MODE_HM:
        run_hm(n);
        break;
    case HS_CIA402_MODE_CSP:
        run_csp(n, now_ns);
        break;
    case HS_CIA402_MODE_CSV:
        command(n, HS_CAN_JOINT_MODE_VELOCITY, 0, 0,
                hs__cia402_counts_to_rad(n, (double)n->od.target_velocity + n->od.velocity_offset),
                n->od.torque_offset * 1e-3 * rated_nm(n));
        break;
    case HS_CIA402_MODE_CST:
        command(n, HS_CAN_JOINT_MODE_TORQUE, 0, 0, 0,
                ((double)n->od.target_torque + n->od.torque_offset) * 1e-3 * rated_nm(n));
        break;
    default:
        hs__cia402_output_off(n);
        break;
    }
}

bool hs__cia402_quick_stop_run(struct hs_cia402_node *n, double dt_s)
{
    int16_t opt = n->od.quick_stop_option;
    uint32_t d =
        (opt == 1 || opt == 5) ? n->od.profile_deceleration : n->od.quick_stop_deceleration;
    double dec = units_acc(n, d);
    n->demand_vel = ramp(n->demand_vel, 0, dec, dec, dt_s);
    command(n, HS_CAN_JOINT_MODE_VELOCITY, 0, 0, n->demand_vel, 0);
    return n->demand_vel == 0;
}

uint16_t hs__cia402_mode_status_bits(const struct hs_cia402_node *n)
{
    uint16_t sw = n->internal_limit ? 1u << 11 : 0;
    if (n->state == HS_CIA402_QUICK_STOP_ACTIVE)
        return sw;
    switch (n->mode_active) {
    case HS_CIA402_MODE_PP:
        return sw | (n->target_reached ? 1u << 10 : 0) |
               (n->sp_ack || n->pp_buffered ? 1u << 12 : 0) | (n->ferr_active ? 1u << 13 : 0);
    case HS_CIA402_MODE_PV:
        return sw | (n->target_reached ? 1u << 10 : 0) |
               (llabs((long long)n->od.velocity_actual) <= n->od.velocity_threshold ? 1u << 12 : 0);
    case HS_CIA402_MODE_HM:
        return sw | 1u << 10 | (n->homing_done ? 1u << 12 : 0) | (n->homing_error ? 1u << 13 : 0);
    case HS_CIA402_MODE_CSP:
        return sw | 1u << 12 | (n->ferr_active ? 1u << 13 : 0);
    case HS_CIA402_MODE_CSV:
    case HS_CIA402_MODE_CST:
        return sw | 1u << 12;
    default:
        return sw;
    }
}
