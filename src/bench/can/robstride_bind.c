/* Robstride/CyberGear nodes on the bench: one joint each, output-shaft units (the actuators
 * carry their gearbox: angles, velocities and torques are the joint's). Safe stop: one
 * feedback frame in reset mode with zero torque at the present position. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "can_protocol.h"
#include "robstride/robstride.h"
#include "robstride_config.h"
#include "robstride/robstride_reply.h"

struct rs_port {
    struct hs_can_joint_port jp; /* first: the port */
    struct hs_rs_node node;
    struct hs_rs_replier reply; /* replies: immediate: the reply thread's side */
};

static double or_model(double v, double model)
{
    return isnan(v) ? model : v;
}

static int rs_build(struct hs_can_joint_port *jp, struct hs_bench *bench,
                    const struct hs_cfg_node *cn, struct hs_can_node **ret_node, struct hs_diag *nd,
                    struct hs_diag *d)
{
    struct rs_port *p = (struct rs_port *)jp;
    (void)d;
    const struct hs_cfg_robstride *s = hs_cfg_robstride(cn);
    struct hs_rs_config rc;
    hs_rs_config_init(&rc, (enum hs_rs_model)s->model, (uint8_t)cn->id);
    double t_max_model = rc.limits.t_max;
    rc.host_id = (uint8_t)s->host_id;
    rc.limits.p_max = or_model(s->p_max, rc.limits.p_max);
    rc.limits.v_max = or_model(s->v_max, rc.limits.v_max);
    rc.limits.t_max = or_model(s->t_max, rc.limits.t_max);
    rc.limits.kp_max = or_model(s->kp_max, rc.limits.kp_max);
    rc.limits.kd_max = or_model(s->kd_max, rc.limits.kd_max);
    rc.timeout_ns = (int64_t)llround(s->timeout_s * 1e9);
    double kt = fabs(p->jp.kt * p->jp.gear * p->jp.eta);
    rc.torque_constant_nm_a = !isnan(s->torque_constant_nm_a) ? s->torque_constant_nm_a
                              : kt > 0                        ? kt
                              : rc.limits.t_max == t_max_model
                                  ? rc.torque_constant_nm_a /* the model's peak torque / current */
                                  : rc.limits.t_max / rc.gains.limit_cur;
    /* the loops step with the physics: one tick's simulated time per poll, however late */
    rc.loop_period_ns = hs_bench_tick_period_ns(bench);
    rc.vbus_v = s->vbus_v;
    rc.temp_c = s->temperature_c;
    int r = hs_rs_node_init(&p->node, &rc, nd);
    if (r < 0)
        return r;
    *ret_node = &p->node.base;
    return 0;
}

static const struct hs_can_joint_ops rs_joint = {
    .port_size = sizeof(struct rs_port),
    .motor_side = false,
    .build = rs_build,
};

static int rs_stop_frame(const struct hs_can_port *port, const struct hs_bench *bench,
                         struct hs_can_frame *f)
{
    const struct rs_port *p = (const struct rs_port *)port;
    const struct hs_rs_node *n = &p->node;
    const struct hs_joint_reading *r = hs_bench_joint_reading(bench, p->jp.joint);
    struct hs_rs_feedback fb = {
        .motor_id = n->cfg.motor_id,
        .host_id = n->regs.host_id,
        .mode = HS_RS_MODE_RESET,
        .faults = n->regs.faults,
        .p_rad = r->q - n->zero_offset_rad,
        .v_rad_s = r->dq,
        .t_nm = 0,
        .temp_c = isnan(p->jp.temp_c) ? n->cfg.temp_c : p->jp.temp_c,
    };
    memset(f, 0, sizeof *f);
    f->flags = HS_CAN_FLAG_EXT;
    f->len = 8;
    f->id = hs_rs_pack_feedback(&n->cfg.limits, &fb, f->data);
    return 1;
}

static void rs_stop(struct hs_can_port *port)
{
    hs_rs_node_stop(&((struct rs_port *)port)->node);
}

/* replies: immediate: the reply thread answers every frame; the tick keeps the node's own
 * frames (the type 21 fault report) and drops its copies of the answers. */
static int rs_poll(struct hs_can_port *port, struct hs_bench *bench, int64_t now_ns,
                   struct hs_can_frame *out, unsigned out_max)
{
    struct rs_port *p = (struct rs_port *)port;
    struct hs_can_node_stats *st = &p->node.base.stats;
    uint64_t overflow = st->tx_overflow;
    struct hs_can_joint_state js;
    int k = hs_can_joint_port_poll(&p->jp, bench, now_ns, &js, out, out_max);
    if (!port->replier || k < 0)
        return k;
    hs_rs_replier_publish(&p->reply, &p->node, js.q_rad);
    int kept = 0;
    for (int i = 0; i < k; i++)
        if (hs_rs_id_type(out[i].id) == HS_RS_FAULT)
            out[kept++] = out[i];
    st->tx_frames -= (uint64_t)(k - kept);
    st->tx_overflow = overflow; /* answers it had no room for: not lost */
    return kept;
}

static void rs_publish(struct hs_can_port *port, const struct hs_bench *bench, int64_t now_ns)
{
    (void)now_ns;
    struct rs_port *p = (struct rs_port *)port;
    const struct hs_joint_reading *r = hs_bench_joint_reading(bench, p->jp.joint);
    struct hs_rs_node *n = &p->node;
    n->meas.q_rad = r->q - n->zero_offset_rad;
    n->meas.dq_rad_s = r->dq;
    n->meas.tau_nm = n->regs.mode == HS_RS_MODE_RUN ? r->torque : 0.0; /* as rs_poll */
    n->meas.iq_a = n->meas.tau_nm / n->cfg.torque_constant_nm_a;
    hs_rs_replier_publish(&p->reply, n, r->q);
}

static int rs_replier_add(struct hs_can_port *port, struct hs_can_replier *replier,
                          uint32_t *ret_slot, struct hs_diag *d)
{
    struct rs_port *p = (struct rs_port *)port;
    hs_rs_replier_init(&p->reply, &p->node);
    int r = hs_can_replier_add_answerer(replier, hs_rs_replier_answer, &p->reply, ret_slot);
    return r < 0 ? hs_diag_set(d, r, NULL, 0, 0, "too many immediate nodes on one bus") : 0;
}

/* Scenario hooks: fault word bits of the type 21 report (the feedback's fault flags follow),
 * reset mode until the host's stop with data[0] = 1 clears them; the feedback's mode, or fault
 * while a fault bit is set. */
#define RS_FAULT_BITS                                                                              \
    (HS_RS_FAULT_OVERTEMP | HS_RS_FAULT_DRIVER | HS_RS_FAULT_UNDERVOLTAGE |                        \
     HS_RS_FAULT_OVERVOLTAGE | HS_RS_FAULT_OVERCURRENT_B | HS_RS_FAULT_OVERCURRENT_C |             \
     HS_RS_FAULT_UNCALIBRATED | HS_RS_FAULT_OVERLOAD | HS_RS_FAULT_OVERCURRENT_A)

static const char *rs_fault_check(const struct hs_can_port *port, uint32_t code)
{
    (void)port;
    return code && !(code & ~(uint32_t)RS_FAULT_BITS)
               ? NULL
               : "a Robstride fault word has only the documented bits (0x1FFBF)";
}

static void rs_raise_fault(struct hs_can_port *port, uint32_t code, bool on)
{
    if (on)
        hs_rs_node_fault(&((struct rs_port *)port)->node, code);
}

static const char *const rs_states[] = {"reset", "calibration", "run", "fault", NULL};

static const char *rs_state(const struct hs_can_port *port)
{
    const struct hs_rs_node *n = &((const struct rs_port *)port)->node;
    if (n->regs.faults || n->regs.fault_word)
        return rs_states[3];
    return n->regs.mode == HS_RS_MODE_RUN    ? rs_states[2]
           : n->regs.mode == HS_RS_MODE_CALI ? rs_states[1]
                                             : rs_states[0];
}

const struct hs_can_protocol hs_can_robstride_protocol = {
    .name = "robstride",
    .joint = &rs_joint,
    .create = hs_can_joint_port_create,
    .destroy = hs_can_joint_port_free,
    .poll = rs_poll,
    .stop_frame = rs_stop_frame,
    .stop = rs_stop,
    .replier_add = rs_replier_add,
    .replier_publish = rs_publish,
    .fault_check = rs_fault_check,
    .raise_fault = rs_raise_fault,
    .state_names = rs_states,
    .state = rs_state,
};
