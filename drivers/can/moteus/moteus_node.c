/* A moteus controller as its protocol documents (moteus.h has the sources):
 * - a frame to its servo ID is walked subframe by subframe (moteus_frame.c): writes take effect
 *   in order (the mode register first: writing it starts a new command, every command register
 *   back to its documented "unspecified" value), reads are answered in one reply frame when the
 *   ID's bit 15 asks for one (none otherwise), NOPs are skipped; an unknown subframe type ends
 *   the frame (counted bad);
 * - writes to registers it does not have (error 1) or to read-only ones (error 2) are answered
 *   with write errors; a read range holding a register it does not have is answered with one
 *   read error and ends the frame, as the firmware's multiplex server does;
 * - modes: stopped (0, clears a fault), current (9), position (10), zero velocity (12), brake
 *   (15); a fault (1) or a watchdog timeout (11) holds until a stop is written;
 * - position mode: tau = kp_scale kp (p_c - q) + kd_scale kd (v_c - dq) + ff, limited to max
 *   torque, where p_c and v_c are the trajectory's control position and velocity
 *   (moteus_traj.c: latched on entering the mode, limited by 0x028/0x029). kd_scale is limited
 *   to kp_scale.
 * - zero velocity, timeout and brake: tau = -kd dq (brake: hilsim damps with kd; the real
 *   shorted phases' damping depends on the motor). Current mode: tau = Kt iq.
 * - stopped or faulted, the output is off: torque and currents read 0, whatever holds the joint.
 * - the reply is padded with NOPs to a valid CAN-FD length and built at the next poll from
 *   that tick's state (or at once by the reply thread, can_replier.c, when replies are
 *   immediate); a frame that asked for a reply but had nothing to say gets none (hilsim's
 *   choice: the documents do not say). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "moteus.h"
#include "moteus_defaults.h"

#define TWO_PI 6.283185307179586

static const struct hs_can_node_ops mt_ops;

void hs_mt_config_init(struct hs_mt_config *cfg, uint8_t servo_id)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->servo_id = servo_id;
    cfg->kp_nm_rev = HS_MT_DEFAULT_KP_NM_REV;
    cfg->kd_nm_s_rev = HS_MT_DEFAULT_KD_NM_S_REV;
    cfg->max_torque_nm = HS_MT_DEFAULT_MAX_TORQUE_NM;
    cfg->torque_constant_nm_a = HS_MT_DEFAULT_TORQUE_CONSTANT_NM_A;
    cfg->default_timeout_ns = (int64_t)llround(HS_MT_DEFAULT_TIMEOUT_S * 1e9);
    cfg->default_velocity_limit_rev_s = HS_MT_DEFAULT_VELOCITY_LIMIT_REV_S;
    cfg->default_accel_limit_rev_s2 = HS_MT_DEFAULT_ACCEL_LIMIT_REV_S2;
    cfg->max_velocity_rev_s = HS_MT_DEFAULT_MAX_VELOCITY_REV_S;
    cfg->voltage_v = HS_MT_DEFAULT_VOLTAGE_V;
    cfg->temperature_c = HS_MT_DEFAULT_TEMPERATURE_C;
}

static void reset_command(struct hs_mt_node *n)
{
    n->cmd_pos_rev = 0, n->cmd_vel_rev_s = 0, n->cmd_ff_nm = 0;
    n->kp_scale = 1, n->kd_scale = 1, n->cmd_max_torque_nm = NAN, n->cmd_q_a = 0;
    n->cmd_vel_limit = NAN, n->cmd_accel_limit = NAN;
    n->watchdog_s = 0;
}

int hs_mt_node_init(struct hs_mt_node *n, const struct hs_mt_config *cfg, struct hs_diag *d)
{
    if (cfg->servo_id > 127)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "moteus: servo ID %u above 127", cfg->servo_id);
    if (!(cfg->kp_nm_rev >= 0) || !(cfg->kd_nm_s_rev >= 0) || !(cfg->max_torque_nm > 0) ||
        !(cfg->torque_constant_nm_a > 0) || cfg->default_timeout_ns < 0 ||
        !isfinite(cfg->kp_nm_rev + cfg->kd_nm_s_rev + cfg->max_torque_nm) ||
        !(cfg->max_velocity_rev_s > 0) || cfg->default_velocity_limit_rev_s <= 0 ||
        cfg->default_accel_limit_rev_s2 <= 0)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "moteus: gains >= 0, max torque, Kt, max velocity and limits > 0, "
                           "timeout >= 0");
    memset(n, 0, sizeof *n);
    n->base.ops = &mt_ops;
    n->cfg = *cfg;
    n->mode = HS_MT_MODE_STOPPED;
    reset_command(n);
    for (unsigned i = 0; i < HS_MT_NREGS; i++)
        n->regs[i] = NAN;
    return 0;
}

void hs_mt_node_fault(struct hs_mt_node *n, uint8_t code)
{
    n->mode = HS_MT_MODE_FAULT;
    n->fault = code;
    n->base.cmd.seq++;
}

/* Applies one register write hs_mt_write_check() accepted; 0 or an error code. */
static int write_reg(void *ctx, uint32_t reg, double v)
{
    struct hs_mt_node *n = ctx;
    n->wrote = true;
    switch (reg) {
    case HS_MT_R_MODE: {
        int m = (int)v;
        if (m == HS_MT_MODE_STOPPED) {
            n->mode = HS_MT_MODE_STOPPED;
            n->fault = 0;
        } else if (n->mode != HS_MT_MODE_FAULT && n->mode != HS_MT_MODE_TIMEOUT) {
            n->mode = (enum hs_mt_mode)m;
        }
        reset_command(n);
        return 0;
    }
    case HS_MT_R_CMD_POSITION:
        n->cmd_pos_rev = v;
        return 0;
    case HS_MT_R_CMD_VELOCITY:
        n->cmd_vel_rev_s = isnan(v) ? 0 : v;
        return 0;
    case HS_MT_R_CMD_FF_TORQUE:
        n->cmd_ff_nm = isnan(v) ? 0 : v;
        return 0;
    case HS_MT_R_CMD_KP_SCALE:
        n->kp_scale = isnan(v) ? 1 : v;
        return 0;
    case HS_MT_R_CMD_KD_SCALE:
        n->kd_scale = isnan(v) ? 1 : v;
        return 0;
    case HS_MT_R_CMD_MAX_TORQUE:
        n->cmd_max_torque_nm = v;
        return 0;
    case HS_MT_R_CMD_WATCHDOG:
        n->watchdog_s = v;
        return 0;
    case HS_MT_R_CMD_VELOCITY_LIMIT:
        n->cmd_vel_limit = v;
        return 0;
    case HS_MT_R_CMD_ACCEL_LIMIT:
        n->cmd_accel_limit = v;
        return 0;
    case HS_MT_R_CMD_Q_CURRENT:
        n->cmd_q_a = isnan(v) ? 0 : v;
        return 0;
    default:
        return HS_MT_ERR_NOT_WRITABLE;
    }
}

/* Diagnostic-stream bytes from the host: lines to the command handler (channel 1, the one
 * moteus_tool uses; others are not the firmware's either). */
static void stream_in(void *ctx, uint32_t ch, const uint8_t *p, unsigned len)
{
    struct hs_mt_node *n = ctx;
    struct hs_mt_diag *d = &n->diag;
    if (ch != 1)
        return;
    for (unsigned i = 0; i < len; i++) {
        if (p[i] == '\r' || p[i] == '\n') {
            if (d->line_len && !d->line_overflow)
                hs__mt_diag_line(n, d->line, d->line_len);
            d->line_len = 0, d->line_overflow = false;
        } else if (d->line_len < HS_MT_DIAG_LINE) {
            d->line[d->line_len++] = (char)p[i];
        } else {
            d->line_overflow = true; /* too long for the firmware's line buffer: ignored */
        }
    }
}

static unsigned stream_out(void *ctx, uint8_t *out, unsigned max)
{
    struct hs_mt_diag *d = &((struct hs_mt_node *)ctx)->diag;
    unsigned n = d->out_len - d->out_off;
    if (n > max)
        n = max;
    memcpy(out, d->out + d->out_off, n);
    d->out_off += n;
    return n;
}

static int mt_on_frame(struct hs_can_node *base, const struct hs_can_frame *f, int64_t now_ns)
{
    struct hs_mt_node *n = (struct hs_mt_node *)base;
    if ((f->flags & HS_CAN_FLAG_ERR) || f->id > 0xFFFF || (f->id & 0xFF) != n->cfg.servo_id)
        return -ENOENT;
    if (f->flags & HS_CAN_FLAG_RTR) {
        base->stats.frames_bad++;
        return -EBADMSG;
    }
    struct hs_mt_scan scan;
    n->wrote = false;
    /* writes take effect as the walk meets them, before a malformed tail is found, as on the
     * firmware */
    int r = hs_mt_scan(f->data, f->len, &scan, write_reg, stream_in, n);
    if (n->wrote) { /* a command: any write the node took (mode, set points, limits) */
        n->last_cmd_ns = now_ns;
        base->cmd.seq++;
        base->cmd.rx_time_ns = now_ns;
    }
    if (r < 0) {
        base->stats.frames_bad++;
        return -EBADMSG;
    }
    if (f->id & 0x8000) {
        n->reply_owed = true;
        n->reply_to = (uint8_t)(f->id >> 8 & 0x7F);
        n->scan = scan;
        /* The firmware answers a poll with the output there when the poll arrived; this reply
         * is built with the tick, after the frames behind it. A line those frames sent must
         * not have its answer's first bytes in the reply to a poll sent before it, which the
         * client has given up on: moteus_tool polls to drain the stream for 0.2 s, then sends
         * "conf enumerate", and lost the dump's first 59 bytes when both landed in one tick. */
        unsigned avail = n->diag.out_len - n->diag.out_off;
        for (unsigned i = 0; i < n->scan.n; i++) {
            struct hs_mt_item *it = &n->scan.items[i];
            if (it->kind != HS_MT_I_STREAM)
                continue;
            if (it->count > avail)
                it->count = (uint16_t)avail;
            avail -= it->count;
        }
    }
    base->stats.frames_ok++;
    return 0;
}

/* The register table from this tick's state, by hs_mt_reg_index(). */
static void fill_regs(struct hs_mt_node *n, const struct hs_can_joint_state *js, double q,
                      double dq, double tau_out)
{
    bool off = n->mode == HS_MT_MODE_STOPPED || n->mode == HS_MT_MODE_FAULT;
    double temp = isnan(js->temp_c) ? n->cfg.temperature_c : js->temp_c;
    double cp = n->ctl.valid ? n->ctl.pos_rev : NAN, cv = n->ctl.valid ? n->ctl.vel_rev_s : NAN;
    const struct {
        uint16_t reg;
        double v;
    } vals[] = {
        {HS_MT_R_MODE, n->mode},
        {HS_MT_R_POSITION, q},
        {HS_MT_R_VELOCITY, dq},
        {HS_MT_R_TORQUE, off ? 0 : js->tau_nm},
        {HS_MT_R_Q_CURRENT, off ? 0 : js->current_a},
        {HS_MT_R_D_CURRENT, 0}, /* hilsim's motor model has no d axis */
        {HS_MT_R_POWER, off ? 0 : js->tau_nm * dq * TWO_PI}, /* mechanical, no losses */
        {HS_MT_R_MOTOR_TEMPERATURE, temp},
        {HS_MT_R_TRAJECTORY_COMPLETE, n->ctl.done ? 1 : 0},
        {HS_MT_R_HOME_STATE, 2}, /* the output's absolute position is known: "output" */
        {HS_MT_R_VOLTAGE, js->vbus_v > 0 ? js->vbus_v : n->cfg.voltage_v},
        {HS_MT_R_TEMPERATURE, temp},
        {HS_MT_R_FAULT, n->fault},
        {HS_MT_R_CMD_Q_CURRENT, n->cmd_q_a},
        {HS_MT_R_CMD_POSITION, n->cmd_pos_rev},
        {HS_MT_R_CMD_VELOCITY, n->cmd_vel_rev_s},
        {HS_MT_R_CMD_FF_TORQUE, n->cmd_ff_nm},
        {HS_MT_R_CMD_KP_SCALE, n->kp_scale},
        {HS_MT_R_CMD_KD_SCALE, n->kd_scale},
        {HS_MT_R_CMD_MAX_TORQUE, n->cmd_max_torque_nm},
        {HS_MT_R_CMD_WATCHDOG, n->watchdog_s},
        {HS_MT_R_CMD_VELOCITY_LIMIT, n->cmd_vel_limit},
        {HS_MT_R_CMD_ACCEL_LIMIT, n->cmd_accel_limit},
        {HS_MT_R_CONTROL_POSITION, cp},
        {HS_MT_R_CONTROL_VELOCITY, cv},
        {HS_MT_R_CONTROL_TORQUE, off ? 0 : tau_out},
        {HS_MT_R_POSITION_ERROR, q - cp},
        {HS_MT_R_VELOCITY_ERROR, dq - cv},
        {HS_MT_R_MODEL_NUMBER, HS_MT_MODEL_NUMBER},
        {HS_MT_R_FIRMWARE_VERSION, HS_MT_FIRMWARE_VERSION},
        {HS_MT_R_REGISTER_MAP_VERSION, HS_MT_REGISTER_MAP_VERSION},
        {HS_MT_R_MULTIPLEX_ID, n->cfg.servo_id},
        {HS_MT_R_SERIAL_NUMBER1, 0x68696c73},
        {HS_MT_R_SERIAL_NUMBER2, 0x696d0000},
        {HS_MT_R_SERIAL_NUMBER3, n->cfg.servo_id},
    };
    _Static_assert(sizeof vals / sizeof vals[0] == HS_MT_NREGS, "every register has a value");
    for (unsigned i = 0; i < HS_MT_NREGS; i++) {
        int x = hs_mt_reg_index(vals[i].reg, NULL, NULL);
        if (x >= 0)
            n->regs[x] = vals[i].v;
    }
}

void hs_mt_node_regs(struct hs_mt_node *n, const struct hs_can_joint_state *js)
{
    fill_regs(n, js, js->q_rad / TWO_PI, js->dq_rad_s / TWO_PI, 0);
}

/* The joint command from the mode; returns the commanded output torque estimate for 0x03a. */
static double command(struct hs_mt_node *n, double q, double dq)
{
    struct hs_can_joint_command *c = &n->base.cmd;
    double kd_rad = n->cfg.kd_nm_s_rev / TWO_PI;
    double max_t = isnan(n->cmd_max_torque_nm)
                       ? n->cfg.max_torque_nm
                       : fmin(fabs(n->cmd_max_torque_nm), n->cfg.max_torque_nm);
    c->kp_nm_rad = c->kd_nm_s_rad = c->q_ref_rad = c->dq_ref_rad_s = c->tau_ff_nm = 0;
    c->torque_limit_nm = max_t;
    c->enabled = true;
    double tau = 0;
    switch (n->mode) {
    case HS_MT_MODE_POSITION: {
        double kps = n->kp_scale, kds = fmin(n->kd_scale, n->kp_scale);
        c->mode = HS_CAN_JOINT_MODE_POSITION_PD;
        c->kp_nm_rad = kps * n->cfg.kp_nm_rev / TWO_PI;
        c->kd_nm_s_rad = kds * kd_rad;
        c->q_ref_rad = n->ctl.pos_rev * TWO_PI;
        c->dq_ref_rad_s = n->ctl.vel_rev_s * TWO_PI;
        c->tau_ff_nm = fmax(-max_t, fmin(max_t, n->cmd_ff_nm));
        tau = kps * n->cfg.kp_nm_rev * (n->ctl.pos_rev - q) +
              kds * n->cfg.kd_nm_s_rev * (n->ctl.vel_rev_s - dq) + c->tau_ff_nm;
        break;
    }
    case HS_MT_MODE_ZERO_VELOCITY:
    case HS_MT_MODE_TIMEOUT:
    case HS_MT_MODE_BRAKE:
        c->mode = HS_CAN_JOINT_MODE_VELOCITY;
        c->kd_nm_s_rad = kd_rad;
        tau = -n->cfg.kd_nm_s_rev * dq;
        break;
    case HS_MT_MODE_CURRENT:
        c->mode = HS_CAN_JOINT_MODE_TORQUE;
        c->tau_ff_nm = fmax(-max_t, fmin(max_t, n->cmd_q_a * n->cfg.torque_constant_nm_a));
        tau = c->tau_ff_nm;
        break;
    default:
        c->mode = HS_CAN_JOINT_MODE_OFF;
        c->enabled = false;
        break;
    }
    return fmax(-max_t, fmin(max_t, tau));
}

static int mt_poll(struct hs_can_node *base, int64_t now_ns, const struct hs_can_joint_state *js,
                   struct hs_can_joint_command *ret_cmd, struct hs_can_frame *out, unsigned out_max)
{
    struct hs_mt_node *n = (struct hs_mt_node *)base;
    double dt = n->last_poll_ns ? (double)(now_ns - n->last_poll_ns) * 1e-9 : 0;
    n->last_poll_ns = now_ns;
    double q = js->q_rad / TWO_PI, dq = js->dq_rad_s / TWO_PI;
    double wd = isnan(n->watchdog_s) ? 0
                : n->watchdog_s > 0  ? n->watchdog_s
                                     : (double)n->cfg.default_timeout_ns * 1e-9;
    bool active = n->mode == HS_MT_MODE_POSITION || n->mode == HS_MT_MODE_ZERO_VELOCITY ||
                  n->mode == HS_MT_MODE_CURRENT;
    if (active && wd > 0 && (double)(now_ns - n->last_cmd_ns) * 1e-9 > wd) {
        n->mode = HS_MT_MODE_TIMEOUT;
        base->stats.timeouts++;
        base->cmd.seq++;
    }
    /* the control state lives while the position loop does (position, timeout, zero velocity) */
    if (n->mode == HS_MT_MODE_POSITION)
        hs__mt_trajectory(n, dt, q, dq);
    else if (n->mode != HS_MT_MODE_TIMEOUT && n->mode != HS_MT_MODE_ZERO_VELOCITY)
        n->ctl = (struct hs_mt_control){.valid = false};
    double tau = command(n, q, dq);
    fill_regs(n, js, q, dq, tau);
    *ret_cmd = base->cmd;
    if (!n->reply_owed)
        return 0;
    n->reply_owed = false;
    if (n->replies_elsewhere && !n->scan.stream)
        return 0; /* the reply thread answered it at once */
    if (!out_max) {
        base->stats.tx_overflow++;
        return 0;
    }
    memset(out, 0, sizeof *out);
    out->id = (uint32_t)n->cfg.servo_id << 8 | n->reply_to;
    /* servo IDs from 8 up give IDs past 11 bits: those go out as 29-bit frames */
    out->flags = HS_CAN_FLAG_FD | (out->id > HS_CAN_SFF_MASK ? HS_CAN_FLAG_EXT : 0);
    out->len = (uint8_t)hs_mt_reply(&n->scan, n->regs, stream_out, n, out->data);
    if (!out->len)
        return 0; /* asked for a reply but nothing to say: no empty frame */
    base->stats.tx_frames++;
    return 1;
}

static const struct hs_can_node_ops mt_ops = {
    .name = "moteus",
    .on_frame = mt_on_frame,
    .poll = mt_poll,
};
