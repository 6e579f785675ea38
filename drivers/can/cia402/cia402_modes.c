/* Modes of operation (CiA 402-2 sections 8-12) turned into the joint command.
 *
 * The drive's loops are a cascade (cia402_defaults.h): the position loop makes a velocity
 * reference v_ref = v_ff + (Kp / Kv) (q_ref - q), the velocity loop is a PI,
 * tau = Kv (v_ref - dq) + I + tau_ff with I += Ki (v_ref - dq) dt at every drive cycle (clamped
 * to the torque limit: no wind-up), and the current loop is the torque limit 0x6072. The
 * proportional parts go to the plant's PD law (hilsim/can_node.h: kp = Kp, kd = Kv, evaluated
 * at every physics step) and the integral rides in tau_ff, so a load such as gravity is carried
 * with no steady error. Feed-forward: velocity (CSP: the target's step over 0x60C2; PP, PV, HM
 * and the stopping ramps: the profile's demand velocity; 0x60B1) and torque (0x60B2). CST runs
 * no loop; leaving operation enabled empties the integral.
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
    n->integ_nm = 0;
    c->mode = HS_CAN_JOINT_MODE_OFF;
    c->enabled = false;
    c->kp_nm_rad = c->kd_nm_s_rad = c->q_ref_rad = c->dq_ref_rad_s = c->tau_ff_nm = 0;
}

static double torque_limit(const struct hs_cia402_node *n)
{
    double lim = n->od.max_torque * 1e-3 * rated_nm(n);
    return lim > 0 ? lim : 1e-9; /* 0 would mean unlimited; max torque 0 means no torque */
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
    c->torque_limit_nm = torque_limit(n);
}

/* The cascade (see the top): position = false runs the velocity loop alone on v_ff. The
 * integral sees the state the tick started from; dt is the drive cycle. */
static void loops(struct hs_cia402_node *n, bool position, double q_ref, double v_ff, double tau_ff,
                  double dt)
{
    double kp = position ? n->cfg.position_kp_nm_rad : 0, kv = n->cfg.velocity_kd_nm_s_rad;
    double ki = n->cfg.velocity_ki_nm_rad;
    if (kv > 0 && ki > 0) {
        double v_ref = v_ff + (position ? kp / kv * (q_ref - n->q_rad) : 0);
        double lim = torque_limit(n);
        n->integ_nm = fmax(-lim, fmin(lim, n->integ_nm + ki * (v_ref - n->dq_rad_s) * dt));
    } else {
        n->integ_nm = 0;
    }
    command(n, position ? HS_CAN_JOINT_MODE_POSITION_PD : HS_CAN_JOINT_MODE_VELOCITY, kp,
            position ? q_ref : 0, v_ff, tau_ff + n->integ_nm);
}

static double torque_offset_nm(const struct hs_cia402_node *n)
{
    return n->od.torque_offset * 1e-3 * rated_nm(n);
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
    n->stop_done = false;
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

/* Braking at the torque limit (stopping codes 3 and 4) until slower than 0x606F: true while
 * it brakes (the command is the full torque against the motion), false once slow; the demand
 * position then is where the joint stopped. */
static bool brake_at_limit(struct hs_cia402_node *n)
{
    if (n->stop_done || fabs(hs__cia402_rad_to_counts(n, n->dq_rad_s)) <= n->od.velocity_threshold)
        return false;
    n->demand_rad = n->q_rad, n->demand_vel = 0;
    command(n, HS_CAN_JOINT_MODE_TORQUE, 0, 0, 0, -copysign(torque_limit(n), n->dq_rad_s));
    return true;
}

/* Halt (controlword bit 8) in PP and PV, as 0x605D says: 1 the profile's ramp (0x6084), 2 the
 * quick stop ramp (0x6085), 3/4 at the torque limit (see hs__cia402_stop_run). Returns true
 * while braking at the limit (the command is set); else the caller runs the position loop on
 * the demand this leaves: the drive stays in operation enabled, holding where it stopped. */
static bool halt_step(struct hs_cia402_node *n, double acc, double dt)
{
    int16_t code = n->od.halt_option;
    if (code >= 3) {
        if (brake_at_limit(n))
            return true;
        n->demand_vel = 0;
        n->stop_done = true;
        return false;
    }
    double dec =
        units_acc(n, code == 2 ? n->od.quick_stop_deceleration : n->od.profile_deceleration);
    n->demand_vel = ramp(n->demand_vel, 0, code == 1 ? acc : dec, dec, dt);
    n->demand_rad += n->demand_vel * dt;
    n->stop_done = n->demand_vel == 0;
    return false;
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
    bool braking = false;
    if (cw & 0x100) { /* halt: stop as 0x605D says, where we are */
        braking = halt_step(n, acc, dt);
    } else {
        n->stop_done = false;
        profile_step(n, n->pp_target_rad, vmax, acc, dec, dt);
    }
    double demand_counts = hs__cia402_rad_to_counts(n, n->demand_rad - n->zero_rad);
    n->od.position_demand = (int32_t)lround(demand_counts);
    following_error(n, demand_counts, now_ns);
    if (!braking)
        loops(n, true, n->demand_rad, n->demand_vel, torque_offset_nm(n), dt);
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
    double goal = hs__cia402_counts_to_rad(n, n->od.target_velocity);
    double acc = units_acc(n, n->od.profile_acceleration);
    double dec = units_acc(n, n->od.profile_deceleration);
    if (cw & 0x100) { /* halt: the stop, then the position held where it ended */
        if (!halt_step(n, acc, dt))
            loops(n, true, n->demand_rad, n->demand_vel, torque_offset_nm(n), dt);
    } else {
        n->stop_done = false;
        n->demand_vel = ramp(n->demand_vel, goal, acc, dec, dt);
        n->demand_rad = n->q_rad; /* a halt holds from where the joint is */
        loops(n, false, 0, n->demand_vel, torque_offset_nm(n), dt);
    }
    double goal_counts = (cw & 0x100) ? 0 : n->od.target_velocity;
    n->target_reached = fabs(n->od.velocity_actual - goal_counts) <= n->od.velocity_window;
}

static void run_hm(struct hs_cia402_node *n, double dt)
{
    uint16_t cw = n->od.controlword, prev = n->cw_prev;
    if ((cw & 0x10) && !(prev & 0x10) && !(cw & 0x100)) {
        /* methods 35/37: no motion, the present position is the home position */
        n->zero_rad = n->q_rad - hs__cia402_counts_to_rad(n, n->od.home_offset);
        n->demand_rad = n->q_rad;
        n->homing_done = true;
    }
    loops(n, true, n->demand_rad, 0, torque_offset_nm(n), dt);
    n->target_reached = true;
}

static double interp_period_s(const struct hs_cia402_node *n)
{
    if (!n->od.interp_period)
        return 0;
    return n->od.interp_period * pow(10.0, n->od.interp_exponent);
}

static void run_csp(struct hs_cia402_node *n, int64_t now_ns, double dt)
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
    loops(n, true, pos_rad(n, target), ff, torque_offset_nm(n), dt);
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
        run_hm(n, dt_s);
        break;
    case HS_CIA402_MODE_CSP:
        run_csp(n, now_ns, dt_s);
        break;
    case HS_CIA402_MODE_CSV:
        loops(n, false, 0,
              hs__cia402_counts_to_rad(n, (double)n->od.target_velocity + n->od.velocity_offset),
              torque_offset_nm(n), dt_s);
        break;
    case HS_CIA402_MODE_CST:
        n->integ_nm = 0;
        command(n, HS_CAN_JOINT_MODE_TORQUE, 0, 0, 0,
                ((double)n->od.target_torque + n->od.torque_offset) * 1e-3 * rated_nm(n));
        break;
    default:
        hs__cia402_output_off(n);
        break;
    }
}

/* One cycle of a stopping action (CiA 402-2's codes for 0x605A/0x605D/0x605E): 1 the slow-down
 * ramp 0x6084, 2 the quick stop ramp 0x6085, 3 at the current limit, 4 at the voltage limit.
 * The demand velocity runs down and the position demand follows it, through the loops, so the
 * load is held where the joint stops. At a limit the velocity reference drops to 0 at once
 * and the torque limit 0x6072 does the braking (the supply is not modelled: the voltage limit
 * brakes as the current limit does); the demand position stays on the joint until it is
 * slower than 0x606F. Returns true once stopped. */
bool hs__cia402_stop_run(struct hs_cia402_node *n, unsigned code, double dt_s)
{
    if (code == 3 || code == 4) {
        if (brake_at_limit(n))
            return false;
        n->demand_vel = 0;
    } else {
        double dec =
            units_acc(n, code == 1 ? n->od.profile_deceleration : n->od.quick_stop_deceleration);
        n->demand_vel = ramp(n->demand_vel, 0, dec, dec, dt_s);
        n->demand_rad += n->demand_vel * dt_s;
    }
    n->stop_done = n->demand_vel == 0;
    loops(n, true, n->demand_rad, n->demand_vel, 0, dt_s);
    return n->stop_done;
}

uint16_t hs__cia402_mode_status_bits(const struct hs_cia402_node *n)
{
    uint16_t sw = n->internal_limit ? 1u << 11 : 0;
    if (n->state == HS_CIA402_QUICK_STOP_ACTIVE) /* bit 10: the quick stop has stopped */
        return sw | (n->stop_done ? 1u << 10 : 0);
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
