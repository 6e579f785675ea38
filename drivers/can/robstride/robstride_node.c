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
 * The loops of position, speed and current mode are the firmware's cascade with hilsim's plant
 * underneath: the speed loop is a PI, iq = spd_kp (v* - dq) + integral, the integral adding
 * spd_ki (v* - dq) per sample of a HS_RS_SPEED_LOOP_HZ loop and held within +-limit_cur, and
 * tau = Kt iq (the proportional part acts in the plant's own step, the integral once per tick);
 * speed mode ramps v* to spd_ref at acc_rad (RS series; the CyberGear steps); CSP (and the
 * CyberGear's position mode) feeds v* = clamp(loc_kp (loc_ref - q), +-limit_spd); PP (RS run_mode
 * 1) moves a profile to loc_ref under vel_max and acc_set and feeds its velocity plus
 * loc_kp times the lag; current mode is tau = Kt iq_ref. Replies are built at the next poll from
 * that tick's state (or at once by the reply thread, robstride_reply.c). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "robstride.h"
#include "robstride_defaults.h"

static const struct hs_can_node_ops rs_ops;

void hs_rs_config_init(struct hs_rs_config *cfg, enum hs_rs_model model, uint8_t motor_id)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->motor_id = motor_id;
    cfg->host_id = HS_RS_DEFAULT_HOST_ID;
    cfg->model = (unsigned)model < HS_RS_MODEL_MAX ? model : HS_RS_MODEL_CYBERGEAR;
    cfg->limits = *hs_rs_model_limits(cfg->model);
    cfg->gains = *hs_rs_model_gains(cfg->model);
    if (!(cfg->gains.limit_spd > 0)) /* RS series: the model's speed range */
        cfg->gains.limit_spd = (float)cfg->limits.v_max;
    cfg->timeout_ns = (int64_t)(HS_RS_DEFAULT_TIMEOUT_S * 1e9);
    /* peak torque at the peak current */
    cfg->torque_constant_nm_a = cfg->limits.t_max / cfg->gains.limit_cur;
    cfg->vbus_v = HS_RS_DEFAULT_VBUS_V;
    cfg->temp_c = HS_RS_DEFAULT_TEMPERATURE_C;
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
    if (!(cfg->torque_constant_nm_a > 0) || cfg->timeout_ns < 0 ||
        (unsigned)cfg->model >= HS_RS_MODEL_MAX)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "robstride: torque constant must be > 0, timeout >= 0");
    memset(n, 0, sizeof *n);
    n->base.ops = &rs_ops;
    n->cfg = *cfg;
    hs_rs_regs_init(&n->regs, cfg);
    n->meas.vbus_v = cfg->vbus_v;
    n->meas.temp_c = cfg->temp_c;
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
    struct hs_rs_regs *g = &n->regs;
    g->fault_word |= word;
    if (word & HS_RS_FAULT_OVERTEMP)
        g->faults |= HS_RS_FB_OVERTEMP;
    if (word & HS_RS_FAULT_UNDERVOLTAGE)
        g->faults |= HS_RS_FB_UNDERVOLTAGE;
    if (word & (HS_RS_FAULT_OVERCURRENT_A | HS_RS_FAULT_OVERCURRENT_B | HS_RS_FAULT_OVERCURRENT_C |
                HS_RS_FAULT_OVERLOAD))
        g->faults |= HS_RS_FB_OVERCURRENT;
    if (word & HS_RS_FAULT_UNCALIBRATED)
        g->faults |= HS_RS_FB_UNCALIBRATED;
    g->mode = HS_RS_MODE_RESET;
    n->fault_report_due = true;
    n->events++;
    n->base.cmd.seq++;
}

void hs_rs_node_stop(struct hs_rs_node *n)
{
    n->regs.mode = HS_RS_MODE_RESET;
    n->events++;
    n->base.cmd.seq++;
}

static int rs_on_frame(struct hs_can_node *base, const struct hs_can_frame *f, int64_t now_ns)
{
    struct hs_rs_node *n = (struct hs_rs_node *)base;
    unsigned fx;
    int type = hs_rs_regs_apply(&n->regs, &n->cfg, f, &fx);
    if (type == -EBADMSG)
        base->stats.frames_bad++;
    else if (type == -EOPNOTSUPP)
        base->stats.frames_unknown++;
    if (type < 0)
        return type;
    if (hs_rs_id_type(f->id) == HS_RS_MOTION)
        hs_rs_unpack_motion(&n->cfg.limits, f->id, f->data, &n->motion);
    if (fx & HS_RS_FX_ENABLED) {
        n->motion.kp = n->motion.kd = n->motion.t_nm = 0; /* no stale set point jerks it */
        n->loop_fresh = true;
    }
    if (fx & HS_RS_FX_COMMAND) {
        base->cmd.seq++;
        base->cmd.rx_time_ns = now_ns;
    }
    uint16_t index = (uint16_t)(f->data[0] | f->data[1] << 8);
    queue(n, (uint8_t)type, type == HS_RS_PARAM_READ ? index : 0);
    n->last_rx_ns = now_ns;
    n->timed_out = false;
    base->stats.frames_ok++;
    return 0;
}

/* The speed loop's PI: the proportional part goes to the plant as a damping gain about v*
 * (it acts every physics step), the integral as feed-forward torque, advanced once per tick. */
static void speed_loop(struct hs_rs_node *n, struct hs_can_joint_command *c, double v_ref,
                       double dq, double dt)
{
    const struct hs_rs_regs *g = &n->regs;
    double kt = n->cfg.torque_constant_nm_a, lim = fabs((double)g->limit_cur);
    double i = n->spd_integral_a + (double)g->spd_ki * (v_ref - dq) * dt * HS_RS_SPEED_LOOP_HZ;
    n->spd_integral_a = i > lim ? lim : i < -lim ? -lim : i;
    c->mode = HS_CAN_JOINT_MODE_VELOCITY;
    c->dq_ref_rad_s = v_ref;
    c->kd_nm_s_rad = kt * (double)g->spd_kp;
    c->tau_ff_nm = kt * n->spd_integral_a;
}

static double clampd(double x, double lim)
{
    return x > lim ? lim : x < -lim ? -lim : x;
}

/* PP: a trapezoidal profile to loc_ref under vel_max and acc_set, one tick at a time. */
static void pp_step(struct hs_rs_node *n, double dt)
{
    const struct hs_rs_regs *g = &n->regs;
    double vmax = fabs((double)g->vel_max), a = fabs((double)g->acc_set);
    double e = (double)g->loc_ref - n->pp_pos_rad, v = n->pp_vel_rad_s;
    if (!(a > 0) || !(vmax > 0)) {
        n->pp_vel_rad_s = 0;
        return;
    }
    /* the speed from which acc_set stops exactly at the target */
    double v_stop = copysign(sqrt(2 * a * fabs(e)), e);
    double v_want = clampd(v_stop, vmax);
    double dv = clampd(v_want - v, a * dt);
    v += dv;
    if (fabs(e) <= fabs(v) * dt) { /* arrives within this tick */
        n->pp_pos_rad = (double)g->loc_ref;
        n->pp_vel_rad_s = 0;
        return;
    }
    n->pp_pos_rad += v * dt;
    n->pp_vel_rad_s = v;
}

static void command(struct hs_rs_node *n, const struct hs_can_joint_state *js, double dt)
{
    struct hs_can_joint_command *c = &n->base.cmd;
    const struct hs_rs_regs *g = &n->regs;
    double kt = n->cfg.torque_constant_nm_a;
    double q = js->q_rad - n->zero_offset_rad, dq = js->dq_rad_s;
    c->enabled = g->mode == HS_RS_MODE_RUN;
    c->kp_nm_rad = c->kd_nm_s_rad = c->q_ref_rad = c->dq_ref_rad_s = c->tau_ff_nm = 0;
    c->torque_limit_nm = g->limit_torque;
    if (!c->enabled) {
        c->mode = HS_CAN_JOINT_MODE_OFF;
        n->loop_fresh = true;
        return;
    }
    if (n->loop_fresh) { /* entering run: integrator empty, ramps and profile from here */
        n->spd_integral_a = 0;
        n->spd_cmd_rad_s = dq;
        n->pp_pos_rad = q;
        n->pp_vel_rad_s = 0;
        n->loop_fresh = false;
    }
    bool rs = n->cfg.model != HS_RS_MODEL_CYBERGEAR;
    switch (g->run_mode) {
    case HS_RS_RUN_OPERATION:
        c->mode = HS_CAN_JOINT_MODE_POSITION_PD;
        c->kp_nm_rad = n->motion.kp;
        c->kd_nm_s_rad = n->motion.kd;
        c->q_ref_rad = n->motion.p_rad + n->zero_offset_rad;
        c->dq_ref_rad_s = n->motion.v_rad_s;
        c->tau_ff_nm = n->motion.t_nm;
        break;
    case HS_RS_RUN_POSITION:
    case HS_RS_RUN_CSP: {
        if (rs && g->run_mode == HS_RS_RUN_POSITION) { /* PP */
            pp_step(n, dt);
            double v = n->pp_vel_rad_s + (double)g->loc_kp * (n->pp_pos_rad - q);
            speed_loop(n, c, clampd(v, n->cfg.limits.v_max), dq, dt);
            break;
        }
        /* CSP, and the CyberGear's position mode */
        double v = (double)g->loc_kp * ((double)g->loc_ref - q);
        speed_loop(n, c, clampd(v, fabs((double)g->limit_spd)), dq, dt);
        break;
    }
    case HS_RS_RUN_SPEED: {
        double target = clampd((double)g->spd_ref, n->cfg.limits.v_max);
        if (rs && g->acc_rad > 0)
            n->spd_cmd_rad_s += clampd(target - n->spd_cmd_rad_s, (double)g->acc_rad * dt);
        else
            n->spd_cmd_rad_s = target;
        speed_loop(n, c, n->spd_cmd_rad_s, dq, dt);
        break;
    }
    case HS_RS_RUN_CURRENT:
    default:
        c->mode = HS_CAN_JOINT_MODE_TORQUE;
        c->tau_ff_nm = kt * clampd((double)g->iq_ref, fabs((double)g->limit_cur));
        break;
    }
}

static int rs_poll(struct hs_can_node *base, int64_t now_ns, const struct hs_can_joint_state *js,
                   struct hs_can_joint_command *ret_cmd, struct hs_can_frame *out, unsigned out_max)
{
    struct hs_rs_node *n = (struct hs_rs_node *)base;
    struct hs_rs_regs *g = &n->regs;
    double dt = n->cfg.loop_period_ns > 0                     ? n->cfg.loop_period_ns * 1e-9
                : n->last_poll_ns && now_ns > n->last_poll_ns ? (now_ns - n->last_poll_ns) * 1e-9
                                                              : 0;
    if (dt > 0.1)
        dt = 0.1; /* a stall of the bench is not 100 ms of integration */
    n->last_poll_ns = now_ns;
    if (n->zeros_applied != g->zeros) {
        n->zero_offset_rad = js->q_rad;
        n->zeros_applied = g->zeros;
    }
    /* CAN_TIMEOUT as the host last wrote it (20000 per second) */
    int64_t timeout_ns = (int64_t)g->can_timeout * 50000;
    if (g->mode == HS_RS_MODE_RUN && !n->timed_out && timeout_ns > 0 &&
        now_ns - n->last_rx_ns > timeout_ns) {
        g->mode = HS_RS_MODE_RESET;
        n->timed_out = true;
        n->events++;
        base->stats.timeouts++;
        base->cmd.seq++;
    }
    /* the drive's torque is its own current's: none with the output off (reset mode), whatever
     * the bench's safe behaviour holds the joint with */
    double tau = g->mode == HS_RS_MODE_RUN ? js->tau_nm : 0.0;
    n->meas = (struct hs_rs_measured){
        .q_rad = js->q_rad - n->zero_offset_rad,
        .dq_rad_s = js->dq_rad_s,
        .tau_nm = tau,
        .iq_a = tau / n->cfg.torque_constant_nm_a,
        .vbus_v = js->vbus_v > 0 ? js->vbus_v : n->cfg.vbus_v,
        .temp_c = isnan(js->temp_c) ? n->cfg.temp_c : js->temp_c,
        .zero_offset_rad = n->zero_offset_rad,
    };
    command(n, js, dt);
    *ret_cmd = base->cmd;

    unsigned k = 0;
    if (n->fault_report_due && k < out_max) {
        struct hs_can_frame *f = &out[k++];
        memset(f, 0, sizeof *f);
        f->id = hs_rs_can_id(HS_RS_FAULT, (uint16_t)n->cfg.motor_id, g->host_id);
        f->flags = HS_CAN_FLAG_EXT;
        f->len = 8;
        uint32_t w = g->fault_word;
        f->data[0] = (uint8_t)w, f->data[1] = (uint8_t)(w >> 8), f->data[2] = (uint8_t)(w >> 16),
        f->data[3] = (uint8_t)(w >> 24);
        n->fault_report_due = false;
    }
    unsigned r = 0;
    for (; r < n->nreplies && k < out_max; r++)
        hs_rs_build_answer(g, &n->cfg, &n->meas, n->replies[r].type, n->replies[r].index,
                           &out[k++]);
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
