/* moteus nodes on the bench: one joint each, output-shaft units (revolutions of the output,
 * N·m at the output). Safe stop: no frame (moteus answers only queries); the output goes off. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "can_protocol.h"
#include "moteus/moteus.h"
#include "moteus_config.h"

struct mt_port {
    struct hs_can_joint_port jp; /* first: the port */
    struct hs_mt_node node;
};

static int mt_build(struct hs_can_joint_port *jp, struct hs_bench *bench,
                    const struct hs_cfg_node *cn, struct hs_can_node **ret_node, struct hs_diag *nd,
                    struct hs_diag *d)
{
    struct mt_port *p = (struct mt_port *)jp;
    (void)bench;
    (void)d;
    const struct hs_cfg_moteus *s = hs_cfg_moteus(cn);
    struct hs_mt_config mc;
    hs_mt_config_init(&mc, (uint8_t)cn->id);
    mc.kp_nm_rev = s->kp_nm_rev;
    mc.kd_nm_s_rev = s->kd_nm_s_rev;
    mc.max_torque_nm = s->max_torque_nm;
    double kt = fabs(p->jp.kt * p->jp.gear * p->jp.eta);
    mc.torque_constant_nm_a = !isnan(s->torque_constant_nm_a) ? s->torque_constant_nm_a
                              : kt > 0                        ? kt
                                                              : mc.torque_constant_nm_a;
    mc.default_timeout_ns = (int64_t)llround(s->default_timeout_s * 1e9);
    mc.default_velocity_limit_rev_s = s->default_velocity_limit_rev_s;
    mc.default_accel_limit_rev_s2 = s->default_accel_limit_rev_s2;
    mc.max_velocity_rev_s = s->max_velocity_rev_s;
    mc.voltage_v = s->voltage_v;
    mc.temperature_c = s->temperature_c;
    int r = hs_mt_node_init(&p->node, &mc, nd);
    if (r < 0)
        return r;
    *ret_node = &p->node.base;
    return 0;
}

static const struct hs_can_joint_ops mt_joint = {
    .port_size = sizeof(struct mt_port),
    .motor_side = false,
    .build = mt_build,
};

/* replies: immediate: the reply thread answers queries from the register table each poll
 * publishes (can_replier.c); the diagnostic stream stays with the tick. */
static int mt_poll(struct hs_can_port *port, struct hs_bench *bench, int64_t now_ns,
                   struct hs_can_frame *out, unsigned out_max)
{
    struct mt_port *p = (struct mt_port *)port;
    struct hs_can_joint_state js;
    int k = hs_can_joint_port_poll(&p->jp, bench, now_ns, &js, out, out_max);
    if (port->replier)
        hs_can_replier_publish_regs(port->replier, port->replier_slot, p->node.regs, HS_MT_NREGS);
    return k;
}

static void mt_publish(struct hs_can_port *port, const struct hs_bench *bench, int64_t now_ns)
{
    (void)now_ns;
    struct mt_port *p = (struct mt_port *)port;
    struct hs_can_joint_state js =
        hs_can_joint_port_state(&p->jp, hs_bench_joint_reading(bench, p->jp.joint));
    hs_mt_node_regs(&p->node, &js);
    hs_can_replier_publish_regs(port->replier, port->replier_slot, p->node.regs, HS_MT_NREGS);
}

static int mt_replier_add(struct hs_can_port *port, struct hs_can_replier *replier,
                          uint32_t *ret_slot, struct hs_diag *d)
{
    struct mt_port *p = (struct mt_port *)port;
    int r = hs_can_replier_add_moteus(replier, p->node.cfg.servo_id, ret_slot);
    if (r < 0)
        return hs_diag_set(d, r, NULL, 0, 0, "too many immediate nodes on one bus");
    p->node.replies_elsewhere = true;
    return 0;
}

static void mt_stop(struct hs_can_port *port)
{
    ((struct mt_port *)port)->node.mode = HS_MT_MODE_STOPPED;
}

/* Scenario hooks: a fault code in register 0x00F with mode 1 (fault), held until the host
 * writes stop, as the servo does; the mode register's state. */
static const char *mt_fault_check(const struct hs_can_port *port, uint32_t code)
{
    (void)port;
    return code >= 32 && code <= 48 ? NULL
                                    : "moteus fault codes are 32..48 (e.g. 38 over temperature)";
}

static void mt_raise_fault(struct hs_can_port *port, uint32_t code, bool on)
{
    if (on)
        hs_mt_node_fault(&((struct mt_port *)port)->node, (uint8_t)code);
}

static const char *const mt_states[] = {"stopped", "fault",         "current", "position",
                                        "timeout", "zero_velocity", "brake",   NULL};

static const char *mt_state(const struct hs_can_port *port)
{
    switch (((const struct mt_port *)port)->node.mode) {
    case HS_MT_MODE_FAULT:
        return mt_states[1];
    case HS_MT_MODE_CURRENT:
        return mt_states[2];
    case HS_MT_MODE_POSITION:
        return mt_states[3];
    case HS_MT_MODE_TIMEOUT:
        return mt_states[4];
    case HS_MT_MODE_ZERO_VELOCITY:
        return mt_states[5];
    case HS_MT_MODE_BRAKE:
        return mt_states[6];
    default:
        return mt_states[0];
    }
}

const struct hs_can_protocol hs_can_moteus_protocol = {
    .name = "moteus",
    .joint = &mt_joint,
    .create = hs_can_joint_port_create,
    .destroy = hs_can_joint_port_free,
    .poll = mt_poll,
    .stop = mt_stop,
    .replier_add = mt_replier_add,
    .replier_publish = mt_publish,
    .fault_check = mt_fault_check,
    .raise_fault = mt_raise_fault,
    .state_names = mt_states,
    .state = mt_state,
};
