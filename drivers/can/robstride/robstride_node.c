/* A Robstride/CyberGear motor as the vendor's manual describes its behaviour (robstride.h has
 * the sources):
 * - after power-up it is in reset mode with run_mode 0 (operation control); type 3 enables
 *   (run mode), type 4 stops (reset mode; data[0] = 1 also clears faults);
 * - every frame addressed to it except a parameter read and a device-ID request is answered
 *   with one feedback frame (type 2) to the host; a read is answered with a type 17 frame, a
 *   device-ID request with a type 0 frame;
 * - run_mode can be written only in reset mode ("the control mode cannot be switched while the
 *   joint is running"); a motion command (type 1) acts in run mode with run_mode 0;
 * - a fault puts the motor in reset mode, shows in every feedback and is reported once with a
 *   type 21 frame; enabling is refused until a stop with data[0] = 1 clears it;
 * - CAN_TIMEOUT > 0: no frame for that long while running puts the motor in reset mode.
 * The loops of position, speed and current mode are the firmware's structure with hilsim's
 * plant underneath: speed mode is tau = Kt spd_kp (spd_ref - dq) (spd_kp in A per rad/s, the
 * integral term not simulated); position mode feeds that speed loop with
 * clamp(loc_kp (loc_ref - q), +-limit_spd); current mode is tau = Kt iq_ref. Replies are built at
 * the next poll from that tick's state. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "robstride.h"

static const struct hs_can_node_ops rs_ops;

void hs_rs_config_init(struct hs_rs_config *cfg, enum hs_rs_model model, uint8_t motor_id)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->motor_id = motor_id;
    cfg->host_id = 0;
    cfg->limits = *hs_rs_model_limits(model);
    cfg->timeout_ns = 0;
    cfg->torque_constant_nm_a = cfg->limits.t_max / 23.0; /* peak torque at the 23 A limit */
    cfg->vbus_v = 24;
    cfg->temp_c = 25;
    cfg->mcu_uid = 0x6873696d00000000ull | motor_id; /* "hsim" + the ID: recognisably fake */
}

int hs_rs_node_init(struct hs_rs_node *n, const struct hs_rs_config *cfg, struct hs_diag *d)
{
    const struct hs_rs_limits *l = &cfg->limits;
    if (cfg->motor_id > 127)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "robstride: motor_id %u above 127",
                           cfg->motor_id);
    if (!(l->p_max > 0) || !(l->v_max > 0) || !(l->t_max > 0) || !(l->kp_max > 0) ||
        !(l->kd_max > 0) || !isfinite(l->p_max + l->v_max + l->t_max + l->kp_max + l->kd_max))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "robstride: every range needs a finite max > 0");
    if (!(cfg->torque_constant_nm_a > 0) || cfg->timeout_ns < 0)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "robstride: torque constant must be > 0, timeout >= 0");
    memset(n, 0, sizeof *n);
    n->base.ops = &rs_ops;
    n->cfg = *cfg;
    n->host_id = cfg->host_id;
    n->mode = HS_RS_MODE_RESET;
    n->run_mode = HS_RS_RUN_OPERATION;
    /* the CyberGear parameter table's defaults */
    n->limit_torque_nm = l->t_max;
    n->limit_spd_rad_s = 2;
    n->limit_cur_a = 23;
    n->loc_kp = 30;
    n->spd_kp = 1;
    n->spd_ki = 0.002;
    return 0;
}

static void queue(struct hs_rs_node *n, uint8_t type, uint16_t index)
{
    if (n->nreplies == HS_RS_REPLY_MAX) {
        n->base.stats.tx_overflow++; /* more requests in one tick than the node buffers */
        return;
    }
    n->replies[n->nreplies++] = (struct hs_rs_reply){type, index};
}

void hs_rs_node_fault(struct hs_rs_node *n, uint32_t word)
{
    if (!word)
        return;
    n->fault_word |= word;
    if (word & HS_RS_FAULT_OVERTEMP)
        n->faults |= HS_RS_FB_OVERTEMP;
    if (word & HS_RS_FAULT_UNDERVOLTAGE)
        n->faults |= HS_RS_FB_UNDERVOLTAGE;
    if (word & (HS_RS_FAULT_OVERCURRENT_A | HS_RS_FAULT_OVERCURRENT_B | HS_RS_FAULT_OVERCURRENT_C |
                HS_RS_FAULT_OVERLOAD))
        n->faults |= HS_RS_FB_OVERCURRENT;
    if (word & HS_RS_FAULT_UNCALIBRATED)
        n->faults |= HS_RS_FB_UNCALIBRATED;
    n->mode = HS_RS_MODE_RESET;
    n->fault_report_due = true;
    n->base.cmd.seq++;
}

static float get_f32(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void put_u32(uint8_t *p, uint32_t u)
{
    p[0] = (uint8_t)u, p[1] = (uint8_t)(u >> 8), p[2] = (uint8_t)(u >> 16),
    p[3] = (uint8_t)(u >> 24);
}

static void put_f32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    put_u32(p, u);
}

/* Type 18: the writable parameters this node simulates. -ENOENT: not one of them. */
static int write_param(struct hs_rs_node *n, uint16_t index, const uint8_t *v)
{
    double f = get_f32(v);
    if (index != HS_RS_P_RUN_MODE && !isfinite(f))
        return -EINVAL;
    switch (index) {
    case HS_RS_P_RUN_MODE:
        if (v[0] >= HS_RS_RUN_MODE_MAX || n->mode == HS_RS_MODE_RUN)
            return -EINVAL;
        n->run_mode = (enum hs_rs_run_mode)v[0];
        return 0;
    case HS_RS_P_IQ_REF:
        n->iq_ref_a = f;
        return 0;
    case HS_RS_P_SPD_REF:
        n->spd_ref_rad_s = f;
        return 0;
    case HS_RS_P_LIMIT_TORQUE:
        n->limit_torque_nm = fabs(f);
        return 0;
    case HS_RS_P_LOC_REF:
        n->loc_ref_rad = f;
        return 0;
    case HS_RS_P_LIMIT_SPD:
        n->limit_spd_rad_s = fabs(f);
        return 0;
    case HS_RS_P_LIMIT_CUR:
        n->limit_cur_a = fabs(f);
        return 0;
    case HS_RS_P_LOC_KP:
        n->loc_kp = f;
        return 0;
    case HS_RS_P_SPD_KP:
        n->spd_kp = f;
        return 0;
    case HS_RS_P_SPD_KI:
        n->spd_ki = f;
        return 0;
    default:
        return -ENOENT;
    }
}

static int rs_on_frame(struct hs_can_node *base, const struct hs_can_frame *f, int64_t now_ns)
{
    struct hs_rs_node *n = (struct hs_rs_node *)base;
    if (!(f->flags & HS_CAN_FLAG_EXT) || (f->flags & HS_CAN_FLAG_ERR) ||
        (f->id & 0xFF) != n->cfg.motor_id)
        return -ENOENT;
    enum hs_rs_type type = hs_rs_id_type(f->id);
    if (type == HS_RS_FEEDBACK || type == HS_RS_FAULT)
        return -ENOENT; /* another motor's answer to a host whose ID is ours */
    if ((f->flags & (HS_CAN_FLAG_RTR | HS_CAN_FLAG_FD)) || f->len != 8) {
        base->stats.frames_bad++;
        return -EBADMSG;
    }
    if (type != HS_RS_MOTION && type != HS_RS_GET_ID)
        n->host_id = (uint8_t)(f->id >> 8);
    uint16_t index = (uint16_t)(f->data[0] | f->data[1] << 8);
    switch (type) {
    case HS_RS_GET_ID:
        n->host_id = (uint8_t)(f->id >> 8);
        queue(n, HS_RS_GET_ID, 0);
        break;
    case HS_RS_MOTION:
        hs_rs_unpack_motion(&n->cfg.limits, f->id, f->data, &n->motion);
        if (n->mode == HS_RS_MODE_RUN && n->run_mode == HS_RS_RUN_OPERATION) {
            base->cmd.seq++;
            base->cmd.rx_time_ns = now_ns;
        }
        queue(n, HS_RS_FEEDBACK, 0);
        break;
    case HS_RS_ENABLE:
        if (!n->faults && !n->fault_word && n->mode != HS_RS_MODE_RUN) {
            n->mode = HS_RS_MODE_RUN;
            n->motion.kp = n->motion.kd = n->motion.t_nm = 0; /* no stale set point jerks it */
            base->cmd.seq++;
        }
        queue(n, HS_RS_FEEDBACK, 0);
        break;
    case HS_RS_STOP:
        n->mode = HS_RS_MODE_RESET;
        if (f->data[0] == 1)
            n->faults = 0, n->fault_word = 0;
        base->cmd.seq++;
        queue(n, HS_RS_FEEDBACK, 0);
        break;
    case HS_RS_SET_ZERO:
        if (f->data[0] == 1)
            n->zero_pending = true;
        queue(n, HS_RS_FEEDBACK, 0);
        break;
    case HS_RS_PARAM_READ:
        queue(n, HS_RS_PARAM_READ, index);
        break;
    case HS_RS_PARAM_WRITE:
        if (write_param(n, index, f->data + 4) == 0 && index != HS_RS_P_RUN_MODE) {
            base->cmd.seq++;
            base->cmd.rx_time_ns = now_ns;
        }
        queue(n, HS_RS_FEEDBACK, 0);
        break;
    default: /* set CAN ID (it would leave the configured ID), baud rate, ...: not simulated */
        base->stats.frames_unknown++;
        return -EOPNOTSUPP;
    }
    n->last_rx_ns = now_ns;
    n->timed_out = false;
    base->stats.frames_ok++;
    return 0;
}

/* A parameter's value as the read reply carries it; false: not a readable parameter. */
static bool read_param(const struct hs_rs_node *n, uint16_t index, uint8_t out[4])
{
    memset(out, 0, 4);
    double f;
    switch (index) {
    case HS_RS_P_RUN_MODE:
        out[0] = (uint8_t)n->run_mode;
        return true;
    case HS_RS_P_ROTATION: {
        double t = floor(n->last_q_rad / (2 * M_PI));
        int16_t turns = (int16_t)(t > INT16_MAX ? INT16_MAX : t < INT16_MIN ? INT16_MIN : t);
        out[0] = (uint8_t)turns, out[1] = (uint8_t)((uint16_t)turns >> 8);
        return true;
    }
    case HS_RS_P_IQ_REF:
        f = n->iq_ref_a;
        break;
    case HS_RS_P_SPD_REF:
        f = n->spd_ref_rad_s;
        break;
    case HS_RS_P_LIMIT_TORQUE:
        f = n->limit_torque_nm;
        break;
    case HS_RS_P_LOC_REF:
        f = n->loc_ref_rad;
        break;
    case HS_RS_P_LIMIT_SPD:
        f = n->limit_spd_rad_s;
        break;
    case HS_RS_P_LIMIT_CUR:
        f = n->limit_cur_a;
        break;
    case HS_RS_P_MECH_POS:
        f = n->last_q_rad;
        break;
    case HS_RS_P_IQF:
        f = n->last_iq_a;
        break;
    case HS_RS_P_MECH_VEL:
        f = n->last_dq_rad_s;
        break;
    case HS_RS_P_VBUS:
        f = n->cfg.vbus_v;
        break;
    case HS_RS_P_LOC_KP:
        f = n->loc_kp;
        break;
    case HS_RS_P_SPD_KP:
        f = n->spd_kp;
        break;
    case HS_RS_P_SPD_KI:
        f = n->spd_ki;
        break;
    default:
        return false;
    }
    put_f32(out, (float)f);
    return true;
}

static void command(struct hs_rs_node *n, const struct hs_can_joint_state *js)
{
    struct hs_can_joint_command *c = &n->base.cmd;
    double kt = n->cfg.torque_constant_nm_a;
    double q = js->q_rad - n->zero_offset_rad;
    c->enabled = n->mode == HS_RS_MODE_RUN;
    c->kp_nm_rad = c->kd_nm_s_rad = c->q_ref_rad = c->dq_ref_rad_s = c->tau_ff_nm = 0;
    c->torque_limit_nm = n->limit_torque_nm;
    if (!c->enabled) {
        c->mode = HS_CAN_JOINT_MODE_OFF;
        return;
    }
    switch (n->run_mode) {
    case HS_RS_RUN_OPERATION:
        c->mode = HS_CAN_JOINT_MODE_POSITION_PD;
        c->kp_nm_rad = n->motion.kp;
        c->kd_nm_s_rad = n->motion.kd;
        c->q_ref_rad = n->motion.p_rad + n->zero_offset_rad;
        c->dq_ref_rad_s = n->motion.v_rad_s;
        c->tau_ff_nm = n->motion.t_nm;
        break;
    case HS_RS_RUN_POSITION: {
        double v = n->loc_kp * (n->loc_ref_rad - q);
        double vmax = n->limit_spd_rad_s;
        c->mode = HS_CAN_JOINT_MODE_VELOCITY;
        c->dq_ref_rad_s = v > vmax ? vmax : v < -vmax ? -vmax : v;
        c->kd_nm_s_rad = kt * n->spd_kp;
        break;
    }
    case HS_RS_RUN_SPEED: {
        double vmax = n->cfg.limits.v_max;
        c->mode = HS_CAN_JOINT_MODE_VELOCITY;
        c->dq_ref_rad_s = fmax(-vmax, fmin(vmax, n->spd_ref_rad_s));
        c->kd_nm_s_rad = kt * n->spd_kp;
        break;
    }
    case HS_RS_RUN_CURRENT:
    default:
        c->mode = HS_CAN_JOINT_MODE_TORQUE;
        c->tau_ff_nm = kt * n->iq_ref_a;
        break;
    }
}

static int rs_poll(struct hs_can_node *base, int64_t now_ns, const struct hs_can_joint_state *js,
                   struct hs_can_joint_command *ret_cmd, struct hs_can_frame *out, unsigned out_max)
{
    struct hs_rs_node *n = (struct hs_rs_node *)base;
    if (n->zero_pending) {
        n->zero_offset_rad = js->q_rad;
        n->zero_pending = false;
    }
    if (n->mode == HS_RS_MODE_RUN && !n->timed_out && n->cfg.timeout_ns > 0 &&
        now_ns - n->last_rx_ns > n->cfg.timeout_ns) {
        n->mode = HS_RS_MODE_RESET;
        n->timed_out = true;
        base->stats.timeouts++;
        base->cmd.seq++;
    }
    n->last_q_rad = js->q_rad - n->zero_offset_rad;
    n->last_dq_rad_s = js->dq_rad_s;
    n->last_iq_a = js->tau_nm / n->cfg.torque_constant_nm_a;
    command(n, js);
    *ret_cmd = base->cmd;

    unsigned k = 0;
    uint8_t mid = n->cfg.motor_id;
    if (n->fault_report_due && k < out_max) {
        struct hs_can_frame *f = &out[k++];
        memset(f, 0, sizeof *f);
        f->id = hs_rs_can_id(HS_RS_FAULT, (uint16_t)mid, n->host_id);
        f->flags = HS_CAN_FLAG_EXT;
        f->len = 8;
        put_u32(f->data, n->fault_word);
        n->fault_report_due = false;
    }
    struct hs_rs_feedback fb = {
        .motor_id = mid,
        .host_id = n->host_id,
        .mode = n->mode,
        .faults = n->faults,
        .p_rad = n->last_q_rad,
        .v_rad_s = js->dq_rad_s,
        .t_nm = js->tau_nm,
        .temp_c = isnan(js->temp_c) ? n->cfg.temp_c : js->temp_c,
    };
    unsigned r = 0;
    for (; r < n->nreplies && k < out_max; r++) {
        const struct hs_rs_reply *q = &n->replies[r];
        struct hs_can_frame *f = &out[k++];
        memset(f, 0, sizeof *f);
        f->flags = HS_CAN_FLAG_EXT;
        f->len = 8;
        if (q->type == HS_RS_FEEDBACK) {
            f->id = hs_rs_pack_feedback(&n->cfg.limits, &fb, f->data);
        } else if (q->type == HS_RS_PARAM_READ) {
            bool ok = read_param(n, q->index, f->data + 4);
            f->data[0] = (uint8_t)q->index, f->data[1] = (uint8_t)(q->index >> 8);
            f->id = hs_rs_can_id(HS_RS_PARAM_READ, (uint16_t)((ok ? 0 : 1) << 8 | mid), n->host_id);
        } else {
            f->id = hs_rs_can_id(HS_RS_GET_ID, mid, 0xFE);
            for (int b = 0; b < 8; b++)
                f->data[b] = (uint8_t)(n->cfg.mcu_uid >> (8 * b));
        }
    }
    base->stats.tx_overflow += n->nreplies - r;
    n->nreplies = 0;
    base->stats.tx_frames += k;
    return (int)k;
}

static const struct hs_can_node_ops rs_ops = {
    .name = "robstride",
    .on_frame = rs_on_frame,
    .poll = rs_poll,
};
