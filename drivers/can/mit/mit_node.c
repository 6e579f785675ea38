/* MIT-mode motor controller as the mini-cheetah firmware behaves:
 * - every frame on its ID resets the command timeout and is answered by one reply;
 * - FC enters motor mode (commands zeroed first, so a stale setpoint cannot jerk the joint),
 *   FD leaves it, FE makes the current position the zero;
 * - other 8-byte frames are commands; they are decoded in any mode but act only in motor mode;
 * - when no frame arrives for CAN_TIMEOUT in motor mode the firmware zeroes kp, kd and t_ff
 *   (zero torque) and stays in motor mode; the next command resumes control. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "hilsim/can_mit.h"
#include "mit_defaults.h"

static const struct hs_can_node_ops mit_ops;

void hs_mit_config_init(struct hs_mit_config *cfg, uint8_t motor_id, uint16_t master_id)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->motor_id = motor_id;
    cfg->master_id = master_id;
    cfg->limits = (struct hs_mit_limits){
        .p_min = HS_MIT_DEFAULT_P_MIN,
        .p_max = HS_MIT_DEFAULT_P_MAX,
        .v_min = HS_MIT_DEFAULT_V_MIN,
        .v_max = HS_MIT_DEFAULT_V_MAX,
        .kp_min = 0,
        .kp_max = HS_MIT_DEFAULT_KP_MAX,
        .kd_min = 0,
        .kd_max = HS_MIT_DEFAULT_KD_MAX,
        .t_min = HS_MIT_DEFAULT_T_MIN,
        .t_max = HS_MIT_DEFAULT_T_MAX,
    };
    cfg->timeout_ns = (int64_t)(HS_MIT_DEFAULT_TIMEOUT_S * 1e9 + 0.5);
    cfg->reply_current = HS_MIT_DEFAULT_REPLY_CURRENT;
    cfg->i_min = HS_MIT_DEFAULT_I_MIN;
    cfg->i_max = HS_MIT_DEFAULT_I_MAX;
    cfg->torque_constant_nm_a = HS_MIT_DEFAULT_KT_NM_A; /* AK80-6 at the output shaft */
    cfg->temperature_c = HS_MIT_DEFAULT_TEMPERATURE_C;
}

static bool range_ok(double lo, double hi)
{
    return isfinite(lo) && isfinite(hi) && lo < hi;
}

int hs_mit_node_init(struct hs_mit_node *node, const struct hs_mit_config *cfg, struct hs_diag *d)
{
    const struct hs_mit_limits *l = &cfg->limits;
    if (cfg->master_id > HS_CAN_SFF_MASK)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "mit: master_id 0x%X is not 11-bit",
                           cfg->master_id);
    if (cfg->motor_id == cfg->master_id)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "mit: motor_id equals master_id (%u)",
                           cfg->motor_id);
    if (!range_ok(l->p_min, l->p_max) || !range_ok(l->v_min, l->v_max) ||
        !range_ok(l->kp_min, l->kp_max) || !range_ok(l->kd_min, l->kd_max) ||
        !range_ok(l->t_min, l->t_max))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "mit: every range needs finite min < max");
    if (l->kp_min < 0 || l->kd_min < 0)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "mit: kp/kd ranges must not be negative");
    if (cfg->timeout_ns < 0)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "mit: timeout_ns is negative");
    if (!(cfg->i_min <= cfg->i_max) || !isfinite(cfg->i_min) || !isfinite(cfg->i_max))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "mit: i range needs finite i_min <= i_max");
    if (cfg->reply_current && !(cfg->torque_constant_nm_a > 0))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "mit: reply_current needs torque_constant_nm_a > 0");
    memset(node, 0, sizeof *node);
    node->base.ops = &mit_ops;
    node->cfg = *cfg;
    return 0;
}

static void zero_command(struct hs_mit_node *n)
{
    n->last.kp = 0, n->last.kd = 0, n->last.t_ff_nm = 0;
}

static int mit_on_frame(struct hs_can_node *base, const struct hs_can_frame *f, int64_t now_ns)
{
    struct hs_mit_node *n = (struct hs_mit_node *)base;
    if (f->id != n->cfg.motor_id || (f->flags & (HS_CAN_FLAG_EXT | HS_CAN_FLAG_ERR)))
        return -ENOENT;
    if ((f->flags & (HS_CAN_FLAG_RTR | HS_CAN_FLAG_FD)) || f->len != 8) {
        base->stats.frames_bad++;
        return -EBADMSG;
    }
    n->last_rx_ns = now_ns;
    n->timed_out = false;
    if (n->replies_pending < UINT8_MAX)
        n->replies_pending++;
    switch (hs_mit_special_kind(f->data, f->len)) {
    case HS_MIT_ENTER:
        if (n->fault)
            break; /* the board will not drive while its fault lasts; it still answers */
        if (!n->motor_mode)
            zero_command(n);
        n->motor_mode = true;
        break;
    case HS_MIT_EXIT:
        n->motor_mode = false;
        break;
    case HS_MIT_ZERO:
        n->zero_pending = true;
        break;
    default:
        hs_mit_unpack_command(&n->cfg.limits, f->data, &n->last);
        base->cmd.seq++;
        base->cmd.rx_time_ns = now_ns;
        break;
    }
    base->stats.frames_ok++;
    return 0;
}

static int mit_poll(struct hs_can_node *base, int64_t now_ns, const struct hs_can_joint_state *js,
                    struct hs_can_joint_command *ret_cmd, struct hs_can_frame *out,
                    unsigned out_max)
{
    struct hs_mit_node *n = (struct hs_mit_node *)base;
    const struct hs_mit_limits *l = &n->cfg.limits;
    if (n->zero_pending) {
        n->zero_offset_rad = js->q_rad;
        n->zero_pending = false;
    }
    if (n->motor_mode && !n->timed_out && n->cfg.timeout_ns > 0 &&
        now_ns - n->last_rx_ns > n->cfg.timeout_ns) {
        zero_command(n);
        n->timed_out = true;
        base->stats.timeouts++;
    }
    struct hs_can_joint_command *c = &base->cmd;
    c->enabled = n->motor_mode;
    c->mode = n->motor_mode ? HS_CAN_JOINT_MODE_POSITION_PD : HS_CAN_JOINT_MODE_OFF;
    c->kp_nm_rad = n->last.kp;
    c->kd_nm_s_rad = n->last.kd;
    c->q_ref_rad = n->last.p_rad + n->zero_offset_rad;
    c->dq_ref_rad_s = n->last.v_rad_s;
    c->tau_ff_nm = n->last.t_ff_nm;
    c->torque_limit_nm = fmax(fabs(l->t_min), fabs(l->t_max));
    *ret_cmd = *c;
    unsigned k = n->replies_pending < out_max ? n->replies_pending : out_max;
    base->stats.tx_overflow += n->replies_pending - k; /* out of room: those are lost */
    n->replies_pending = 0;
    if (!k)
        return 0;
    double t = n->cfg.reply_current ? js->current_a : js->tau_nm;
    struct hs_mit_limits rl = *l;
    if (n->cfg.reply_current && n->cfg.i_min < n->cfg.i_max)
        rl.t_min = n->cfg.i_min, rl.t_max = n->cfg.i_max;
    memset(out, 0, sizeof *out);
    out->id = n->cfg.master_id;
    out->len = n->cfg.reply_ak ? 8 : 6;
    hs_mit_pack_reply(&rl, n->cfg.motor_id, js->q_rad - n->zero_offset_rad, js->dq_rad_s, t,
                      out->data);
    if (n->cfg.reply_ak)
        hs_mit_pack_reply_ak_status(isnan(js->temp_c) ? n->cfg.temperature_c : js->temp_c, n->error,
                                    out->data);
    for (unsigned r = 1; r < k; r++)
        out[r] = out[0]; /* one answer per frame, all from this tick's state */
    base->stats.tx_frames += k;
    return (int)k;
}

void hs_mit_node_fault(struct hs_mit_node *n, uint8_t error, bool on)
{
    n->fault = on;
    n->error = on ? error : 0;
    if (on)
        n->motor_mode = false;
}

static const struct hs_can_node_ops mit_ops = {
    .name = "mit",
    .on_frame = mit_on_frame,
    .poll = mit_poll,
};
