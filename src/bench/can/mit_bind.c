/* MIT nodes on the bench: one joint each, joint-side units (AK-style actuators sense the output
 * shaft: p/v/t are the joint's rad, rad/s, N·m; the reply's current is the motor current).
 * Safe stop: a last reply with zero torque/current at the present position (the real firmware
 * just stops driving; the exit itself is the host's FD command). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "can_protocol.h"
#include "hilsim/can_mit.h"
#include "mit_config.h"

struct mit_port {
    struct hs_can_joint_port jp; /* first: the port */
    struct hs_mit_node node;
};

static int mit_build(struct hs_can_joint_port *jp, struct hs_bench *bench,
                     const struct hs_cfg_node *cn, struct hs_can_node **ret_node,
                     struct hs_diag *nd, struct hs_diag *d)
{
    struct mit_port *p = (struct mit_port *)jp;
    (void)bench;
    (void)d;
    const struct hs_cfg_mit *m = hs_cfg_mit(cn);
    struct hs_mit_config mc;
    hs_mit_config_init(&mc, (uint8_t)cn->id, (uint16_t)m->reply_id);
    mc.limits = (struct hs_mit_limits){
        .p_min = m->p_min,
        .p_max = m->p_max,
        .v_min = m->v_min,
        .v_max = m->v_max,
        .kp_min = 0,
        .kp_max = m->kp_max,
        .kd_min = 0,
        .kd_max = m->kd_max,
        .t_min = m->t_min,
        .t_max = m->t_max,
    };
    mc.timeout_ns = (int64_t)llround(m->timeout_s * 1e9);
    mc.reply_current = m->reply == HS_CFG_MIT_REPLY_CURRENT;
    mc.torque_constant_nm_a = fabs(p->jp.kt * p->jp.gear * p->jp.eta);
    mc.i_min = m->i_min;
    mc.i_max = m->i_max;
    mc.reply_ak = m->reply_format == HS_CFG_MIT_FORMAT_AK;
    mc.temperature_c = m->temperature_c;
    int r = hs_mit_node_init(&p->node, &mc, nd);
    if (r < 0)
        return r;
    *ret_node = &p->node.base;
    return 0;
}

static const struct hs_can_joint_ops mit_joint = {
    .port_size = sizeof(struct mit_port),
    .motor_side = false,
    .build = mit_build,
};

/* What the I/O thread answers from: the reply's state and, for the AK reply, its temperature
 * and error code. */
static void publish(struct mit_port *p, const struct hs_can_joint_state *js)
{
    const struct hs_can_port *port = &p->jp.port;
    const struct hs_mit_node *n = &p->node;
    if (n->cfg.reply_ak)
        hs_can_replier_publish_ak_status(port->replier, port->replier_slot,
                                         isnan(js->temp_c) ? n->cfg.temperature_c : js->temp_c,
                                         n->error);
    hs_can_replier_publish(port->replier, port->replier_slot, js->q_rad - n->zero_offset_rad,
                           js->dq_rad_s, n->cfg.reply_current ? js->current_a : js->tau_nm);
}

static void mit_publish(struct hs_can_port *port, const struct hs_bench *bench, int64_t now_ns)
{
    (void)now_ns;
    struct mit_port *p = (struct mit_port *)port;
    struct hs_can_joint_state js =
        hs_can_joint_port_state(&p->jp, hs_bench_joint_reading(bench, p->jp.joint));
    publish(p, &js);
}

static int mit_poll(struct hs_can_port *port, struct hs_bench *bench, int64_t now_ns,
                    struct hs_can_frame *out, unsigned out_max)
{
    struct mit_port *p = (struct mit_port *)port;
    struct hs_can_node_stats *st = &p->node.base.stats;
    uint64_t overflow = st->tx_overflow;
    struct hs_can_joint_state js;
    int k = hs_can_joint_port_poll(&p->jp, bench, now_ns, &js, out, out_max);
    if (!port->replier)
        return k;
    publish(p, &js);
    /* already answered by the I/O thread: drop the tick's copies */
    st->tx_frames -= (uint64_t)(k > 0 ? k : 0);
    st->tx_overflow = overflow; /* copies it had no room for: not lost */
    return 0;
}

static int mit_stop_frame(const struct hs_can_port *port, const struct hs_bench *bench,
                          struct hs_can_frame *f)
{
    const struct mit_port *p = (const struct mit_port *)port;
    const struct hs_mit_node *m = &p->node;
    const struct hs_joint_reading *r = hs_bench_joint_reading(bench, p->jp.joint);
    struct hs_mit_limits rl = m->cfg.limits;
    if (m->cfg.reply_current && m->cfg.i_min < m->cfg.i_max)
        rl.t_min = m->cfg.i_min, rl.t_max = m->cfg.i_max;
    memset(f, 0, sizeof *f);
    f->id = m->cfg.master_id;
    f->len = m->cfg.reply_ak ? 8 : 6;
    hs_mit_pack_reply(&rl, m->cfg.motor_id, r->q - m->zero_offset_rad, r->dq, 0.0, f->data);
    if (m->cfg.reply_ak)
        hs_mit_pack_reply_ak_status(isnan(p->jp.temp_c) ? m->cfg.temperature_c : p->jp.temp_c,
                                    m->error, f->data);
    return 1;
}

static void mit_stop(struct hs_can_port *port)
{
    ((struct mit_port *)port)->node.motor_mode = false;
}

static int mit_replier_add(struct hs_can_port *port, struct hs_can_replier *replier,
                           uint32_t *ret_slot, struct hs_diag *d)
{
    int r = hs_can_replier_add_mit(replier, &((struct mit_port *)port)->node.cfg, ret_slot);
    return r < 0 ? hs_diag_set(d, r, NULL, 0, 0, "too many immediate nodes on one bus") : 0;
}

/* Scenario hooks: the AK reply's error code is the MIT board's own fault report; the 6-byte
 * mini-cheetah reply has no field for one. */
static const char *mit_fault_check(const struct hs_can_port *port, uint32_t code)
{
    if (!((const struct mit_port *)port)->node.cfg.reply_ak)
        return "the 6-byte MIT reply carries no error code (set mit.reply_format: ak)";
    if (code < 1 || code >= HS_MIT_AK_ERROR_MAX)
        return "the AK reply's error codes are 1..7";
    return NULL;
}

static void mit_raise_fault(struct hs_can_port *port, uint32_t code, bool on)
{
    hs_mit_node_fault(&((struct mit_port *)port)->node, (uint8_t)code, on);
}

static const char *const mit_states[] = {"rest_mode", "motor_mode", "fault", NULL};

static const char *mit_state(const struct hs_can_port *port)
{
    const struct hs_mit_node *n = &((const struct mit_port *)port)->node;
    return n->fault ? mit_states[2] : n->motor_mode ? mit_states[1] : mit_states[0];
}

const struct hs_can_protocol hs_can_mit_protocol = {
    .name = "mit",
    .joint = &mit_joint,
    .create = hs_can_joint_port_create,
    .destroy = hs_can_joint_port_free,
    .poll = mit_poll,
    .stop_frame = mit_stop_frame,
    .stop = mit_stop,
    .replier_add = mit_replier_add,
    .replier_publish = mit_publish,
    .reply_latency = true,
    .fault_check = mit_fault_check,
    .raise_fault = mit_raise_fault,
    .state_names = mit_states,
    .state = mit_state,
};
