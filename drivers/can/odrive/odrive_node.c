/* ODrive CAN Simple axis as firmware 0.5.x behaves (Firmware/communication/can/can_simple.cpp):
 * - every frame to the node feeds the watchdog, whatever the command;
 * - reads answer when the frame is remote or has no data; answers go out at the next poll
 *   with that tick's joint state;
 * - Estop sets ERROR_ESTOP_REQUESTED; any axis error drops the axis to idle, and closed loop
 *   cannot be entered until Clear_Errors;
 * - watchdog expiry in closed loop sets ERROR_WATCHDOG_TIMER_EXPIRED and idles the axis;
 * - the controller (MotorControl/controller.cpp): position P -> velocity PI -> torque, the
 *   velocity set point clamped to vel_limit, an overspeed error (ERROR_CONTROLLER_FAILED in the
 *   heartbeat) above vel_limit_tolerance x vel_limit, the integrator decaying while the torque
 *   saturates, and torque mode limited so the axis does not pass vel_limit;
 * - heartbeat and encoder estimates are sent when their period has elapsed since the last
 *   one (timers start at the first poll).
 * Simplifications, stated: the axis is pre-calibrated (calibration requests complete at once
 * and leave it idle), input modes act as passthrough, gain scheduling is off (its default),
 * and Set_Axis_Node_ID, anticogging and trajectory settings are not supported. The firmware
 * runs its loop at 8 kHz; here the PD part runs in the plant at every physics step and the
 * rest once per tick (see fill_command). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "hilsim/can_odrive.h"
#include "odrive_defaults.h"

#define TWO_PI 6.283185307179586
/* The firmware's control period: its integrator decays by 0.99 per cycle while saturated. */
#define FW_PERIOD_S 125e-6

static const struct hs_can_node_ops odrive_ops;

void hs_odrive_config_init(struct hs_odrive_config *cfg, uint8_t node_id)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->node_id = node_id;
    cfg->heartbeat_period_ns = (int64_t)(HS_ODRIVE_DEFAULT_HEARTBEAT_S * 1e9 + 0.5);
    cfg->encoder_period_ns = (int64_t)(HS_ODRIVE_DEFAULT_ENCODER_S * 1e9 + 0.5);
    cfg->watchdog_timeout_ns = (int64_t)(HS_ODRIVE_DEFAULT_WATCHDOG_S * 1e9 + 0.5);
    cfg->torque_constant_nm_a = 0.04;
    cfg->pos_gain = HS_ODRIVE_DEFAULT_POS_GAIN;
    cfg->vel_gain_nm_s_turn = HS_ODRIVE_DEFAULT_VEL_GAIN;
    cfg->vel_integrator_gain_nm_turn = HS_ODRIVE_DEFAULT_VEL_INTEGRATOR_GAIN;
    cfg->vel_limit_turn_s = HS_ODRIVE_DEFAULT_VEL_LIMIT;
    cfg->vel_limit_tolerance = HS_ODRIVE_DEFAULT_VEL_LIMIT_TOLERANCE;
    cfg->enable_vel_limit = HS_ODRIVE_DEFAULT_ENABLE_VEL_LIMIT;
    cfg->enable_torque_mode_vel_limit = HS_ODRIVE_DEFAULT_ENABLE_TORQUE_MODE_VEL_LIMIT;
    cfg->current_limit_a = 10.0;
    cfg->vbus_v = 24.0;
    cfg->encoder_cpr = 8192;
    cfg->control_mode = HS_ODRIVE_CONTROL_POSITION;
}

static void reset_axis(struct hs_odrive_node *n)
{
    n->axis_state = HS_ODRIVE_STATE_IDLE;
    n->axis_error = 0;
    n->controller_error = 0;
    n->vel_integrator_nm = 0;
    n->control_mode = n->cfg.control_mode;
    n->input_mode = 1; /* passthrough */
    n->input_pos_turn = n->input_vel_turn_s = n->input_torque_nm = 0;
    n->vel_limit_turn_s = n->cfg.vel_limit_turn_s;
    n->current_limit_a = n->cfg.current_limit_a;
    n->rtr_pending = 0;
}

int hs_odrive_node_init(struct hs_odrive_node *node, const struct hs_odrive_config *cfg,
                        struct hs_diag *d)
{
    if (cfg->node_id > 63)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "odrive: node_id %u above 63", cfg->node_id);
    if (cfg->heartbeat_period_ns < 0 || cfg->encoder_period_ns < 0 || cfg->watchdog_timeout_ns < 0)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "odrive: negative period or timeout");
    if (!(cfg->torque_constant_nm_a > 0) || !(cfg->pos_gain >= 0) ||
        !(cfg->vel_gain_nm_s_turn >= 0) || !(cfg->current_limit_a > 0) || !isfinite(cfg->vbus_v) ||
        !cfg->encoder_cpr)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "odrive: torque_constant, current_limit and encoder_cpr must be > 0,"
                           " gains >= 0");
    if (!(cfg->vel_integrator_gain_nm_turn >= 0) || !isfinite(cfg->vel_integrator_gain_nm_turn) ||
        !(cfg->vel_limit_turn_s >= 0) || !isfinite(cfg->vel_limit_turn_s) ||
        !(cfg->vel_limit_tolerance >= 0) || !isfinite(cfg->vel_limit_tolerance))
        return hs_diag_set(
            d, -EINVAL, NULL, 0, 0,
            "odrive: vel_integrator_gain_nm_turn, vel_limit_turn_s and vel_limit_tolerance must be"
            " finite and >= 0");
    if (cfg->control_mode < HS_ODRIVE_CONTROL_TORQUE ||
        cfg->control_mode >= HS_ODRIVE_CONTROL_MODE_MAX)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "odrive: control_mode %d not simulated",
                           cfg->control_mode);
    memset(node, 0, sizeof *node);
    node->base.ops = &odrive_ops;
    node->cfg = *cfg;
    reset_axis(node);
    return 0;
}

static void set_error(struct hs_odrive_node *n, uint32_t err)
{
    n->axis_error |= err;
    n->axis_state = HS_ODRIVE_STATE_IDLE;
}

void hs_odrive_node_raise_error(struct hs_odrive_node *node, uint32_t axis_error)
{
    if (axis_error)
        set_error(node, axis_error);
}

static void request_state(struct hs_odrive_node *n, uint32_t s, int64_t now_ns)
{
    switch (s) {
    case HS_ODRIVE_STATE_IDLE:
        n->axis_state = HS_ODRIVE_STATE_IDLE;
        break;
    case HS_ODRIVE_STATE_CLOSED_LOOP:
        if (n->axis_error || n->axis_state == HS_ODRIVE_STATE_CLOSED_LOOP)
            break; /* the firmware will not leave idle with an error latched */
        n->axis_state = HS_ODRIVE_STATE_CLOSED_LOOP;
        /* entering closed loop holds the present position rather than a stale setpoint */
        n->input_pos_turn = n->last_q_turn;
        n->input_vel_turn_s = 0;
        n->input_torque_nm = 0;
        n->vel_integrator_nm = 0; /* the controller is reset on entering closed loop */
        n->last_feed_ns = now_ns;
        break;
    case 2:    /* startup sequence */
    case 3:    /* full calibration */
    case 4:    /* motor calibration */
    case 6:    /* encoder index search */
    case 7:    /* encoder offset calibration */
        break; /* pre-calibrated: done at once, still idle */
    default:
        set_error(n, HS_ODRIVE_ERROR_INVALID_STATE);
        break;
    }
}

/* Minimum payload for each setter, from the DBC's signal extents. */
static int setter_len(unsigned cmd)
{
    switch (cmd) {
    case HS_ODRIVE_SET_AXIS_STATE:
    case HS_ODRIVE_SET_INPUT_TORQUE:
        return 4;
    case HS_ODRIVE_SET_CONTROLLER_MODE:
    case HS_ODRIVE_SET_INPUT_POS:
    case HS_ODRIVE_SET_INPUT_VEL:
    case HS_ODRIVE_SET_LIMITS:
        return 8;
    case HS_ODRIVE_ESTOP:
    case HS_ODRIVE_REBOOT:
    case HS_ODRIVE_CLEAR_ERRORS:
        return 0;
    default:
        return -1;
    }
}

static bool is_getter(unsigned cmd)
{
    switch (cmd) {
    case HS_ODRIVE_GET_MOTOR_ERROR:
    case HS_ODRIVE_GET_ENCODER_ERROR:
    case HS_ODRIVE_GET_SENSORLESS_ERROR:
    case HS_ODRIVE_GET_ENCODER_ESTIMATES:
    case HS_ODRIVE_GET_ENCODER_COUNT:
    case HS_ODRIVE_GET_IQ:
    case HS_ODRIVE_GET_SENSORLESS_ESTIMATES:
    case HS_ODRIVE_GET_VBUS_VOLTAGE:
        return true;
    default:
        return false;
    }
}

static int bad(struct hs_can_node *base)
{
    base->stats.frames_bad++;
    return -EBADMSG;
}

static int apply_setter(struct hs_odrive_node *n, unsigned cmd, const uint8_t *d, int64_t now)
{
    float a = hs_odrive_get_f32(d), b = hs_odrive_get_f32(d + 4);
    switch (cmd) {
    case HS_ODRIVE_ESTOP:
        set_error(n, HS_ODRIVE_ERROR_ESTOP_REQUESTED);
        return 0;
    case HS_ODRIVE_CLEAR_ERRORS:
        n->axis_error = 0;
        n->controller_error = 0;
        return 0;
    case HS_ODRIVE_REBOOT:
        reset_axis(n);
        n->started = false;
        return 0;
    case HS_ODRIVE_SET_AXIS_STATE:
        request_state(n, hs_odrive_get_u32(d), now);
        return 0;
    case HS_ODRIVE_SET_CONTROLLER_MODE: {
        uint32_t cm = hs_odrive_get_u32(d);
        if (cm < HS_ODRIVE_CONTROL_TORQUE || cm >= HS_ODRIVE_CONTROL_MODE_MAX)
            return -EBADMSG;
        n->control_mode = (enum hs_odrive_control_mode)cm;
        n->input_mode = hs_odrive_get_u32(d + 4);
        return 0;
    }
    case HS_ODRIVE_SET_INPUT_POS: {
        int16_t vff = (int16_t)(d[4] | d[5] << 8), tff = (int16_t)(d[6] | d[7] << 8);
        if (!isfinite(a))
            return -EBADMSG;
        n->input_pos_turn = a;
        n->input_vel_turn_s = vff * 0.001;
        n->input_torque_nm = tff * 0.001;
        return 0;
    }
    case HS_ODRIVE_SET_INPUT_VEL:
        if (!isfinite(a) || !isfinite(b))
            return -EBADMSG;
        n->input_vel_turn_s = a;
        n->input_torque_nm = b;
        return 0;
    case HS_ODRIVE_SET_INPUT_TORQUE:
        if (!isfinite(a))
            return -EBADMSG;
        n->input_torque_nm = a;
        return 0;
    case HS_ODRIVE_SET_LIMITS:
        if (!(a >= 0) || !(b >= 0) || !isfinite(a) || !isfinite(b))
            return -EBADMSG;
        n->vel_limit_turn_s = a;
        n->current_limit_a = b;
        return 0;
    default:
        return -EOPNOTSUPP;
    }
}

static int odrive_on_frame(struct hs_can_node *base, const struct hs_can_frame *f, int64_t now_ns)
{
    struct hs_odrive_node *n = (struct hs_odrive_node *)base;
    if ((f->flags & (HS_CAN_FLAG_EXT | HS_CAN_FLAG_ERR)) ||
        hs_odrive_node_of(f->id) != n->cfg.node_id)
        return -ENOENT;
    n->last_feed_ns = now_ns; /* the firmware feeds before looking at the command */
    if (f->flags & HS_CAN_FLAG_FD)
        return bad(base);
    unsigned cmd = hs_odrive_cmd_of(f->id);
    bool rtr = f->flags & HS_CAN_FLAG_RTR;
    if (is_getter(cmd)) {
        if (!rtr && f->len != 0) {
            base->stats.frames_unknown++; /* data on a read ID: another device's answer */
            return -EOPNOTSUPP;
        }
        n->rtr_pending |= 1u << cmd;
        base->stats.frames_ok++;
        return 0;
    }
    int need = setter_len(cmd);
    if (need < 0) {
        base->stats.frames_unknown++;
        return -EOPNOTSUPP;
    }
    if (rtr || f->len < need)
        return bad(base);
    int r = apply_setter(n, cmd, f->data, now_ns);
    if (r == -EBADMSG)
        return bad(base);
    if (r < 0) {
        base->stats.frames_unknown++;
        return r;
    }
    if (cmd >= HS_ODRIVE_SET_CONTROLLER_MODE && cmd <= HS_ODRIVE_SET_INPUT_TORQUE) {
        base->cmd.seq++;
        base->cmd.rx_time_ns = now_ns;
    }
    base->stats.frames_ok++;
    return 0;
}

/* The firmware's controller in one tick. The plant runs the PD part (kp, kd, set points) at
 * every physics step, which keeps stiff gains stable at a slow tick; what the PD form cannot
 * carry is evaluated here from this tick's joint state: the overspeed check, the velocity
 * clamp (a clamped set point is commanded as a velocity at the limit), the integrator (in the
 * feed-forward, updated after use as the firmware does) and torque mode's velocity limit. */
static void fill_command(struct hs_odrive_node *n, const struct hs_can_joint_state *js, double dt_s)
{
    struct hs_can_joint_command *c = &n->base.cmd;
    const struct hs_odrive_config *k = &n->cfg;
    double pos = js->q_rad / TWO_PI, vel = js->dq_rad_s / TWO_PI;
    double vlim = n->vel_limit_turn_s;
    if (n->axis_state == HS_ODRIVE_STATE_CLOSED_LOOP && k->vel_limit_tolerance > 0 &&
        fabs(vel) > k->vel_limit_tolerance * vlim) {
        n->controller_error |= HS_ODRIVE_CONTROLLER_ERROR_OVERSPEED;
        set_error(n, HS_ODRIVE_ERROR_CONTROLLER_FAILED);
    }
    bool on = n->axis_state == HS_ODRIVE_STATE_CLOSED_LOOP;
    c->enabled = on;
    c->kp_nm_rad = c->kd_nm_s_rad = c->q_ref_rad = c->dq_ref_rad_s = c->tau_ff_nm = 0;
    c->torque_limit_nm = n->current_limit_a * k->torque_constant_nm_a;
    if (!on) {
        c->mode = HS_CAN_JOINT_MODE_OFF;
        n->vel_integrator_nm = 0;
        return;
    }
    bool vel_loop = n->control_mode >= HS_ODRIVE_CONTROL_VELOCITY;
    double vel_des = n->input_vel_turn_s;
    if (n->control_mode == HS_ODRIVE_CONTROL_POSITION)
        vel_des += k->pos_gain * (n->input_pos_turn - pos);
    bool clamped = k->enable_vel_limit && fabs(vel_des) > vlim;
    if (clamped)
        vel_des = copysign(vlim, vel_des);
    double v_err = vel_des - vel;
    double torque = n->input_torque_nm;
    if (vel_loop) {
        torque += k->vel_gain_nm_s_turn * v_err + n->vel_integrator_nm;
        c->tau_ff_nm = n->input_torque_nm + n->vel_integrator_nm;
    } else if (k->enable_torque_mode_vel_limit) {
        torque = fmin(fmax(torque, (-vlim - vel) * k->vel_gain_nm_s_turn),
                      (vlim - vel) * k->vel_gain_nm_s_turn);
    }
    if (!vel_loop)
        n->vel_integrator_nm = 0;
    else if (fabs(torque) > c->torque_limit_nm)
        n->vel_integrator_nm *= pow(0.99, dt_s / FW_PERIOD_S);
    else
        n->vel_integrator_nm += k->vel_integrator_gain_nm_turn * dt_s * v_err;

    if (n->control_mode == HS_ODRIVE_CONTROL_POSITION && !clamped) {
        c->mode = HS_CAN_JOINT_MODE_POSITION_PD;
        c->kp_nm_rad = k->pos_gain * k->vel_gain_nm_s_turn / TWO_PI;
        c->kd_nm_s_rad = k->vel_gain_nm_s_turn / TWO_PI;
        c->q_ref_rad = n->input_pos_turn * TWO_PI;
        c->dq_ref_rad_s = n->input_vel_turn_s * TWO_PI;
    } else if (vel_loop) {
        c->mode = HS_CAN_JOINT_MODE_VELOCITY;
        c->kd_nm_s_rad = k->vel_gain_nm_s_turn / TWO_PI;
        c->dq_ref_rad_s = vel_des * TWO_PI;
    } else {
        c->mode = HS_CAN_JOINT_MODE_TORQUE;
        c->tau_ff_nm = torque;
    }
}

static void frame(struct hs_odrive_node *n, struct hs_can_frame *f, unsigned cmd)
{
    memset(f, 0, sizeof *f);
    f->id = hs_odrive_can_id(n->cfg.node_id, cmd);
    f->len = 8;
}

static void answer(struct hs_odrive_node *n, unsigned cmd, const struct hs_can_joint_state *js,
                   struct hs_can_frame *f)
{
    double pos = js->q_rad / TWO_PI, vel = js->dq_rad_s / TWO_PI;
    frame(n, f, cmd);
    uint8_t *d = f->data;
    switch (cmd) {
    case HS_ODRIVE_HEARTBEAT:
        hs_odrive_put_u32(d, n->axis_error);
        d[4] = n->axis_state;
        break;
    case HS_ODRIVE_GET_ENCODER_ESTIMATES:
    case HS_ODRIVE_GET_SENSORLESS_ESTIMATES:
        hs_odrive_put_f32(d, (float)pos);
        hs_odrive_put_f32(d + 4, (float)vel);
        break;
    case HS_ODRIVE_GET_ENCODER_COUNT: {
        double counts = floor(pos * n->cfg.encoder_cpr);
        double shadow = fmax(fmin(counts, (double)INT32_MAX), (double)INT32_MIN);
        int64_t in_cpr = (int64_t)shadow % (int64_t)n->cfg.encoder_cpr;
        if (in_cpr < 0)
            in_cpr += n->cfg.encoder_cpr;
        hs_odrive_put_u32(d, (uint32_t)(int32_t)shadow);
        hs_odrive_put_u32(d + 4, (uint32_t)in_cpr);
        break;
    }
    case HS_ODRIVE_GET_IQ: {
        double kt = n->cfg.torque_constant_nm_a;
        hs_odrive_put_f32(d, (float)(n->base.cmd.enabled ? js->tau_nm / kt : 0.0));
        hs_odrive_put_f32(d + 4, (float)js->current_a);
        break;
    }
    case HS_ODRIVE_GET_VBUS_VOLTAGE:
        hs_odrive_put_f32(d, (float)(js->vbus_v > 0 ? js->vbus_v : n->cfg.vbus_v));
        hs_odrive_put_f32(d + 4, 0.0f); /* ibus: not modelled */
        break;
    default: /* error reads: no motor/encoder/sensorless errors are simulated */
        break;
    }
}

static bool due(int64_t now, int64_t *last, int64_t period)
{
    if (period <= 0 || now - *last < period)
        return false;
    *last = now;
    return true;
}

static int odrive_poll(struct hs_can_node *base, int64_t now_ns,
                       const struct hs_can_joint_state *js, struct hs_can_joint_command *ret_cmd,
                       struct hs_can_frame *out, unsigned out_max)
{
    struct hs_odrive_node *n = (struct hs_odrive_node *)base;
    n->last_q_turn = js->q_rad / TWO_PI;
    if (!n->started) {
        n->started = true;
        n->last_heartbeat_ns = n->last_encoder_ns = now_ns;
        n->last_feed_ns = n->last_poll_ns = now_ns;
    }
    double dt_s = (double)(now_ns - n->last_poll_ns) * 1e-9;
    n->last_poll_ns = now_ns;
    if (n->axis_state == HS_ODRIVE_STATE_CLOSED_LOOP && n->cfg.watchdog_timeout_ns > 0 &&
        now_ns - n->last_feed_ns > n->cfg.watchdog_timeout_ns) {
        set_error(n, HS_ODRIVE_ERROR_WATCHDOG_TIMER_EXPIRED);
        base->stats.timeouts++;
    }
    fill_command(n, js, dt_s > 0 ? dt_s : 0);
    *ret_cmd = base->cmd;
    unsigned k = 0;
    uint32_t pending = n->rtr_pending;
    for (unsigned cmd = 0; pending && cmd < 32; cmd++) {
        if (!(pending & (1u << cmd)))
            continue;
        pending &= ~(1u << cmd);
        if (k == out_max) {
            base->stats.tx_overflow++;
            continue; /* left pending for the next poll */
        }
        answer(n, cmd, js, &out[k++]);
        n->rtr_pending &= ~(1u << cmd);
    }
    if (due(now_ns, &n->last_heartbeat_ns, n->cfg.heartbeat_period_ns)) {
        if (k < out_max)
            answer(n, HS_ODRIVE_HEARTBEAT, js, &out[k++]);
        else
            base->stats.tx_overflow++;
    }
    if (due(now_ns, &n->last_encoder_ns, n->cfg.encoder_period_ns)) {
        if (k < out_max)
            answer(n, HS_ODRIVE_GET_ENCODER_ESTIMATES, js, &out[k++]);
        else
            base->stats.tx_overflow++;
    }
    base->stats.tx_frames += k;
    return (int)k;
}

static const struct hs_can_node_ops odrive_ops = {
    .name = "odrive",
    .on_frame = odrive_on_frame,
    .poll = odrive_poll,
};
