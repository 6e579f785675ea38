/* A moteus controller as its protocol documents (moteus.h has the sources):
 * - a frame to its servo ID is parsed subframe by subframe: writes take effect in order (the
 *   mode register first: writing it starts a new command, every command register back to its
 *   documented "unspecified" value), reads are answered in one reply frame when the ID's bit 15
 *   asks for one (none otherwise), NOPs are skipped; an unknown subframe type ends the frame
 *   (counted bad);
 * - writes to registers it does not have, or to read-only ones, and reads of registers it does
 *   not have, are answered with write/read error subframes (error code HS_MT_ERR_UNKNOWN: the
 *   firmware's own numbering is not documented);
 * - modes: stopped (0, clears a fault), current (9), position (10), zero velocity (12), brake
 *   (15); a fault (1) or a watchdog timeout (11) holds until a stop is written;
 * - position mode: tau = kp_scale kp (pos - q) + kd_scale kd (vel - dq) + ff, limited to max
 *   torque, the command position advancing at the command velocity; position unset (NaN or the
 *   maximally negative integer): the present position. kd_scale is limited to kp_scale.
 * - zero velocity, timeout and brake: tau = -kd dq (brake: hilsim damps with kd; the real
 *   shorted phases' damping depends on the motor). Current mode: tau = Kt iq.
 * - the reply is padded with NOPs to a valid CAN-FD length and built at the next poll from
 *   that tick's state; a frame that asked for a reply but read nothing and erred nowhere gets
 *   none (hilsim's choice: the documents do not say). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "moteus.h"

#define TWO_PI 6.283185307179586

static const struct hs_can_node_ops mt_ops;

void hs_mt_config_init(struct hs_mt_config *cfg, uint8_t servo_id)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->servo_id = servo_id;
    cfg->kp_nm_rev = 4.0;
    cfg->kd_nm_s_rev = 0.1;
    cfg->max_torque_nm = 10.0;
    cfg->torque_constant_nm_a = 0.1;
    cfg->default_timeout_ns = 0;
    cfg->voltage_v = 24;
    cfg->temperature_c = 30;
}

static void reset_command(struct hs_mt_node *n)
{
    n->cmd_pos_rev = 0, n->cmd_vel_rev_s = 0, n->cmd_ff_nm = 0;
    n->kp_scale = 1, n->kd_scale = 1, n->cmd_max_torque_nm = NAN, n->cmd_q_a = 0;
    n->watchdog_s = 0;
    n->hold_pending = false;
}

int hs_mt_node_init(struct hs_mt_node *n, const struct hs_mt_config *cfg, struct hs_diag *d)
{
    if (cfg->servo_id > 127)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "moteus: servo ID %u above 127", cfg->servo_id);
    if (!(cfg->kp_nm_rev >= 0) || !(cfg->kd_nm_s_rev >= 0) || !(cfg->max_torque_nm > 0) ||
        !(cfg->torque_constant_nm_a > 0) || cfg->default_timeout_ns < 0 ||
        !isfinite(cfg->kp_nm_rev + cfg->kd_nm_s_rev + cfg->max_torque_nm))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "moteus: gains >= 0, max torque and Kt > 0, timeout >= 0");
    memset(n, 0, sizeof *n);
    n->base.ops = &mt_ops;
    n->cfg = *cfg;
    n->mode = HS_MT_MODE_STOPPED;
    reset_command(n);
    return 0;
}

void hs_mt_node_fault(struct hs_mt_node *n, uint8_t code)
{
    n->mode = HS_MT_MODE_FAULT;
    n->fault = code;
    n->base.cmd.seq++;
}

/* The registers this node has: their quantity, and whether a host may write them. */
static bool reg_info(uint32_t reg, enum hs_mt_quantity *q, bool *writable)
{
    *writable = false;
    switch (reg) {
    case HS_MT_R_MODE:
        *q = HS_MT_Q_INT, *writable = true;
        return true;
    case HS_MT_R_POSITION:
        *q = HS_MT_Q_POSITION;
        return true;
    case HS_MT_R_VELOCITY:
        *q = HS_MT_Q_VELOCITY;
        return true;
    case HS_MT_R_TORQUE:
        *q = HS_MT_Q_TORQUE;
        return true;
    case HS_MT_R_Q_CURRENT:
        *q = HS_MT_Q_CURRENT;
        return true;
    case HS_MT_R_VOLTAGE:
        *q = HS_MT_Q_VOLTAGE;
        return true;
    case HS_MT_R_TEMPERATURE:
        *q = HS_MT_Q_TEMPERATURE;
        return true;
    case HS_MT_R_FAULT:
        *q = HS_MT_Q_INT;
        return true;
    case HS_MT_R_CMD_Q_CURRENT:
        *q = HS_MT_Q_CURRENT, *writable = true;
        return true;
    case HS_MT_R_CMD_POSITION:
        *q = HS_MT_Q_POSITION, *writable = true;
        return true;
    case HS_MT_R_CMD_VELOCITY:
        *q = HS_MT_Q_VELOCITY, *writable = true;
        return true;
    case HS_MT_R_CMD_FF_TORQUE:
    case HS_MT_R_CMD_MAX_TORQUE:
        *q = HS_MT_Q_TORQUE, *writable = true;
        return true;
    case HS_MT_R_CMD_KP_SCALE:
    case HS_MT_R_CMD_KD_SCALE:
        *q = HS_MT_Q_SCALE, *writable = true;
        return true;
    case HS_MT_R_CMD_WATCHDOG:
        *q = HS_MT_Q_TIME, *writable = true;
        return true;
    default:
        return false;
    }
}

static void queue_error(struct hs_mt_node *n, uint8_t type, uint32_t reg)
{
    if (n->nerrors < HS_MT_READS_MAX)
        n->errors[n->nerrors++] = (struct hs_mt_error){type, (uint16_t)reg};
}

/* Applies one register write; false: not writable here. */
static bool write_reg(struct hs_mt_node *n, uint32_t reg, double v, bool *commanded)
{
    switch (reg) {
    case HS_MT_R_MODE: {
        if (!(v >= 0 && v <= 255)) /* NaN too; a float mode write can hold anything */
            return false;
        int m = (int)v;
        if (m == HS_MT_MODE_STOPPED) {
            n->mode = HS_MT_MODE_STOPPED;
            n->fault = 0;
        } else if (m == HS_MT_MODE_POSITION || m == HS_MT_MODE_ZERO_VELOCITY ||
                   m == HS_MT_MODE_BRAKE || m == HS_MT_MODE_CURRENT) {
            if (n->mode != HS_MT_MODE_FAULT && n->mode != HS_MT_MODE_TIMEOUT)
                n->mode = (enum hs_mt_mode)m;
        } else {
            return false;
        }
        reset_command(n);
        *commanded = true;
        return true;
    }
    case HS_MT_R_CMD_POSITION:
        n->cmd_pos_rev = v;
        n->hold_pending = isnan(v);
        break;
    case HS_MT_R_CMD_VELOCITY:
        n->cmd_vel_rev_s = isnan(v) ? 0 : v;
        break;
    case HS_MT_R_CMD_FF_TORQUE:
        n->cmd_ff_nm = isnan(v) ? 0 : v;
        break;
    case HS_MT_R_CMD_KP_SCALE:
        n->kp_scale = isnan(v) ? 1 : v;
        break;
    case HS_MT_R_CMD_KD_SCALE:
        n->kd_scale = isnan(v) ? 1 : v;
        break;
    case HS_MT_R_CMD_MAX_TORQUE:
        n->cmd_max_torque_nm = v;
        break;
    case HS_MT_R_CMD_WATCHDOG:
        n->watchdog_s = v;
        break;
    case HS_MT_R_CMD_Q_CURRENT:
        n->cmd_q_a = isnan(v) ? 0 : v;
        break;
    default:
        return false;
    }
    *commanded = true;
    return true;
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
    bool commanded = false;
    const uint8_t *p = f->data;
    unsigned len = f->len, i = 0;
    int bad = 0;
    while (i < len && !bad) {
        uint8_t t = p[i++];
        if (t == HS_MT_NOP)
            continue;
        uint8_t kind = t & 0xF0;
        if (kind != HS_MT_WRITE && kind != HS_MT_READ) {
            bad = 1; /* a reply, an error or garbage sent to a servo */
            break;
        }
        enum hs_mt_width w = (enum hs_mt_width)(t >> 2 & 3);
        uint32_t count = t & 3, reg;
        int k;
        if (!count) {
            if ((k = hs_mt_varuint_get(p + i, len - i, &count)) < 0) {
                bad = 1;
                break;
            }
            i += (unsigned)k;
        }
        if ((k = hs_mt_varuint_get(p + i, len - i, &reg)) < 0 || count > 64 || reg > 0xFFFF) {
            bad = 1;
            break;
        }
        i += (unsigned)k;
        if (kind == HS_MT_READ) {
            if (n->nreads < HS_MT_READS_MAX)
                n->reads[n->nreads++] =
                    (struct hs_mt_read){(uint8_t)w, (uint16_t)count, (uint16_t)reg};
            continue;
        }
        unsigned wb = hs_mt_width_bytes(w);
        if (len - i < count * wb) {
            bad = 1;
            break;
        }
        for (uint32_t r = 0; r < count; r++, i += wb) {
            enum hs_mt_quantity q;
            bool writable;
            if (!reg_info(reg + r, &q, &writable) || !writable ||
                !write_reg(n, reg + r, hs_mt_decode(q, w, p + i), &commanded))
                queue_error(n, HS_MT_WRITE_ERROR, reg + r);
        }
    }
    if (bad) {
        base->stats.frames_bad++;
        n->nreads = 0, n->nerrors = 0;
        return -EBADMSG;
    }
    if (commanded) {
        n->last_cmd_ns = now_ns;
        base->cmd.seq++;
        base->cmd.rx_time_ns = now_ns;
    }
    if (f->id & 0x8000) {
        n->reply_owed = true;
        n->reply_to = (uint8_t)(f->id >> 8 & 0x7F);
    } else {
        n->nreads = 0, n->nerrors = 0; /* no reply asked for: none is sent */
    }
    base->stats.frames_ok++;
    return 0;
}

static double read_reg(const struct hs_mt_node *n, uint32_t reg,
                       const struct hs_can_joint_state *js)
{
    switch (reg) {
    case HS_MT_R_MODE:
        return n->mode;
    case HS_MT_R_POSITION:
        return n->last_q_rev;
    case HS_MT_R_VELOCITY:
        return n->last_dq_rev_s;
    case HS_MT_R_TORQUE:
        return n->last_tau_nm;
    case HS_MT_R_Q_CURRENT:
        return js->current_a;
    case HS_MT_R_VOLTAGE:
        return js->vbus_v > 0 ? js->vbus_v : n->cfg.voltage_v;
    case HS_MT_R_TEMPERATURE:
        return isnan(js->temp_c) ? n->cfg.temperature_c : js->temp_c;
    case HS_MT_R_FAULT:
        return n->fault;
    case HS_MT_R_CMD_Q_CURRENT:
        return n->cmd_q_a;
    case HS_MT_R_CMD_POSITION:
        return n->cmd_pos_rev;
    case HS_MT_R_CMD_VELOCITY:
        return n->cmd_vel_rev_s;
    case HS_MT_R_CMD_FF_TORQUE:
        return n->cmd_ff_nm;
    case HS_MT_R_CMD_KP_SCALE:
        return n->kp_scale;
    case HS_MT_R_CMD_KD_SCALE:
        return n->kd_scale;
    case HS_MT_R_CMD_MAX_TORQUE:
        return n->cmd_max_torque_nm;
    default:
        return n->watchdog_s;
    }
}

/* The reply: one reply subframe per read (a read error for a range holding an unknown
 * register), then the write errors, padded to a CAN-FD length. */
static unsigned build_reply(struct hs_mt_node *n, const struct hs_can_joint_state *js, uint8_t *out)
{
    unsigned k = 0;
    for (unsigned r = 0; r < n->nreads; r++) {
        enum hs_mt_width w = (enum hs_mt_width)n->reads[r].width;
        unsigned count = n->reads[r].count, start = n->reads[r].start;
        if (!count)
            continue; /* a read of nothing: nothing to say (0 in the type's bits means more) */
        unsigned wb = hs_mt_width_bytes(w);
        uint32_t unknown = UINT32_MAX;
        enum hs_mt_quantity q;
        bool writable;
        for (unsigned i = 0; i < count && unknown == UINT32_MAX; i++)
            if (!reg_info(start + i, &q, &writable))
                unknown = start + i;
        if (unknown != UINT32_MAX) {
            queue_error(n, HS_MT_READ_ERROR, unknown);
            continue;
        }
        if (k + 1 + 5 + 5 + count * wb > 64)
            break; /* no room: the rest of the query is dropped, as a full frame would */
        if (count <= 3) {
            out[k++] = (uint8_t)(HS_MT_REPLY | w << 2 | count);
        } else {
            out[k++] = (uint8_t)(HS_MT_REPLY | w << 2);
            k += hs_mt_varuint_put(count, out + k);
        }
        k += hs_mt_varuint_put(start, out + k);
        for (unsigned i = 0; i < count; i++, k += wb) {
            reg_info(start + i, &q, &writable);
            hs_mt_encode(q, w, read_reg(n, start + i, js), out + k);
        }
    }
    for (unsigned e = 0; e < n->nerrors && k + 11 <= 64; e++) {
        out[k++] = n->errors[e].type;
        k += hs_mt_varuint_put(n->errors[e].reg, out + k);
        k += hs_mt_varuint_put(HS_MT_ERR_UNKNOWN, out + k);
    }
    unsigned padded = hs_mt_fd_len(k);
    memset(out + k, HS_MT_NOP, padded - k);
    return padded;
}

static void command(struct hs_mt_node *n)
{
    struct hs_can_joint_command *c = &n->base.cmd;
    double kd_rad = n->cfg.kd_nm_s_rev / TWO_PI;
    double max_t = isnan(n->cmd_max_torque_nm)
                       ? n->cfg.max_torque_nm
                       : fmin(fabs(n->cmd_max_torque_nm), n->cfg.max_torque_nm);
    c->kp_nm_rad = c->kd_nm_s_rad = c->q_ref_rad = c->dq_ref_rad_s = c->tau_ff_nm = 0;
    c->torque_limit_nm = max_t;
    c->enabled = true;
    switch (n->mode) {
    case HS_MT_MODE_POSITION: {
        double kps = n->kp_scale, kds = fmin(n->kd_scale, n->kp_scale);
        c->mode = HS_CAN_JOINT_MODE_POSITION_PD;
        c->kp_nm_rad = kps * n->cfg.kp_nm_rev / TWO_PI;
        c->kd_nm_s_rad = kds * kd_rad;
        c->q_ref_rad = n->cmd_pos_rev * TWO_PI;
        c->dq_ref_rad_s = n->cmd_vel_rev_s * TWO_PI;
        c->tau_ff_nm = fmax(-max_t, fmin(max_t, n->cmd_ff_nm));
        break;
    }
    case HS_MT_MODE_ZERO_VELOCITY:
    case HS_MT_MODE_TIMEOUT:
    case HS_MT_MODE_BRAKE:
        c->mode = HS_CAN_JOINT_MODE_VELOCITY;
        c->kd_nm_s_rad = kd_rad;
        break;
    case HS_MT_MODE_CURRENT:
        c->mode = HS_CAN_JOINT_MODE_TORQUE;
        c->tau_ff_nm = fmax(-max_t, fmin(max_t, n->cmd_q_a * n->cfg.torque_constant_nm_a));
        break;
    default:
        c->mode = HS_CAN_JOINT_MODE_OFF;
        c->enabled = false;
        break;
    }
}

static int mt_poll(struct hs_can_node *base, int64_t now_ns, const struct hs_can_joint_state *js,
                   struct hs_can_joint_command *ret_cmd, struct hs_can_frame *out, unsigned out_max)
{
    struct hs_mt_node *n = (struct hs_mt_node *)base;
    double dt = n->last_poll_ns ? (double)(now_ns - n->last_poll_ns) * 1e-9 : 0;
    n->last_poll_ns = now_ns;
    n->last_q_rev = js->q_rad / TWO_PI;
    n->last_dq_rev_s = js->dq_rad_s / TWO_PI;
    n->last_tau_nm = js->tau_nm;
    if (n->hold_pending) {
        n->cmd_pos_rev = n->last_q_rev;
        n->hold_pending = false;
    } else if (n->mode == HS_MT_MODE_POSITION && dt > 0) {
        n->cmd_pos_rev += n->cmd_vel_rev_s * dt;
    }
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
    command(n);
    *ret_cmd = base->cmd;
    if (!n->reply_owed)
        return 0;
    n->reply_owed = false;
    if (!out_max) {
        base->stats.tx_overflow++;
        n->nreads = n->nerrors = 0;
        return 0;
    }
    memset(out, 0, sizeof *out);
    out->id = (uint32_t)n->cfg.servo_id << 8 | n->reply_to;
    /* servo IDs from 8 up give IDs past 11 bits: those go out as 29-bit frames */
    out->flags = HS_CAN_FLAG_FD | (out->id > HS_CAN_SFF_MASK ? HS_CAN_FLAG_EXT : 0);
    out->len = (uint8_t)build_reply(n, js, out->data);
    n->nreads = n->nerrors = 0;
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
