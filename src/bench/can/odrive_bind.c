/* ODrive nodes on the bench: one joint each, motor-side units (the ODrive's encoder sits on the
 * motor): positions are motor turns = q_joint * gear_ratio / 2pi, velocities motor turns/s,
 * torques motor N·m (Kt * Iq) and the gains the firmware's motor-side gains; commands are
 * brought to the joint by hs_can_joint_port_command (q = q_m / N, kp = kp_m N², kd = kd_m N²,
 * tau_ff = tau_ff_m N eta; torque mode becomes a current command I = tau_m / Kt).
 * Safe stop: the axis goes idle and sends one heartbeat saying so (error bits kept). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "can_protocol.h"
#include "hilsim/can_odrive.h"
#include "odrive_config.h"

/* The getters a remote request may ask for (answered by the I/O thread with replies: immediate). */
#define ODRIVE_GETTERS                                                                             \
    ((1u << HS_ODRIVE_GET_MOTOR_ERROR) | (1u << HS_ODRIVE_GET_ENCODER_ERROR) |                     \
     (1u << HS_ODRIVE_GET_SENSORLESS_ERROR) | (1u << HS_ODRIVE_GET_ENCODER_ESTIMATES) |            \
     (1u << HS_ODRIVE_GET_ENCODER_COUNT) | (1u << HS_ODRIVE_GET_IQ) |                              \
     (1u << HS_ODRIVE_GET_SENSORLESS_ESTIMATES) | (1u << HS_ODRIVE_GET_VBUS_VOLTAGE))

struct odrive_port {
    struct hs_can_joint_port jp; /* first: the port */
    struct hs_odrive_node node;
};

static int odrive_build(struct hs_can_joint_port *jp, struct hs_bench *bench,
                        const struct hs_cfg_node *cn, struct hs_can_node **ret_node,
                        struct hs_diag *nd, struct hs_diag *d)
{
    struct odrive_port *p = (struct odrive_port *)jp;
    (void)bench;
    (void)d;
    const struct hs_cfg_odrive *o = hs_cfg_odrive(cn);
    struct hs_odrive_config oc;
    hs_odrive_config_init(&oc, (uint8_t)cn->id);
    oc.heartbeat_period_ns = (int64_t)llround(o->heartbeat_period_s * 1e9);
    oc.encoder_period_ns = (int64_t)llround(o->encoder_period_s * 1e9);
    oc.watchdog_timeout_ns = (int64_t)llround(o->watchdog_timeout_s * 1e9);
    oc.pos_gain = o->pos_gain;
    oc.vel_gain_nm_s_turn = o->vel_gain_nm_s_turn;
    oc.vel_integrator_gain_nm_turn = o->vel_integrator_gain_nm_turn;
    oc.vel_limit_turn_s = o->vel_limit_turn_s;
    oc.vel_limit_tolerance = o->vel_limit_tolerance;
    oc.enable_vel_limit = o->enable_vel_limit;
    oc.enable_torque_mode_vel_limit = o->enable_torque_mode_vel_limit;
    oc.torque_constant_nm_a = p->jp.kt;
    if (isfinite(p->jp.current_max))
        oc.current_limit_a = p->jp.current_max;
    int r = hs_odrive_node_init(&p->node, &oc, nd);
    if (r < 0)
        return r;
    *ret_node = &p->node.base;
    return 0;
}

static const struct hs_can_joint_ops odrive_joint = {
    .port_size = sizeof(struct odrive_port),
    .motor_side = true,
    .build = odrive_build,
};

/* What the I/O thread answers: every getter's answer, built by the node's own code on a scratch
 * copy (asked for every getter, its timers off) so its answers match the tick's byte for byte
 * and the node itself is untouched. */
static void publish(struct odrive_port *p, int64_t now_ns, const struct hs_can_joint_state *js)
{
    struct hs_odrive_node tmp = p->node;
    // cppcheck-suppress unreadVariable ; read by hs_can_node_poll through &tmp.base
    tmp.rtr_pending = ODRIVE_GETTERS;
    tmp.cfg.heartbeat_period_ns = tmp.cfg.encoder_period_ns = tmp.cfg.watchdog_timeout_ns = 0;
    struct hs_can_frame f[HS_CAN_PORT_TX_DEFAULT];
    struct hs_can_joint_command cmd;
    int k = hs_can_node_poll(&tmp.base, now_ns, js, &cmd, f, HS_CAN_PORT_TX_DEFAULT);
    if (k > 0)
        hs_can_replier_publish_answers(p->jp.port.replier, p->jp.port.replier_slot, f, (unsigned)k);
}

static void odrive_publish(struct hs_can_port *port, const struct hs_bench *bench, int64_t now_ns)
{
    struct odrive_port *p = (struct odrive_port *)port;
    struct hs_can_joint_state js =
        hs_can_joint_port_state(&p->jp, hs_bench_joint_reading(bench, p->jp.joint));
    publish(p, now_ns, &js);
}

static int odrive_poll(struct hs_can_port *port, struct hs_bench *bench, int64_t now_ns,
                       struct hs_can_frame *out, unsigned out_max)
{
    struct odrive_port *p = (struct odrive_port *)port;
    if (port->replier)
        p->node.rtr_pending = 0; /* answered by the I/O thread; cyclic frames stay here */
    struct hs_can_joint_state js;
    int k = hs_can_joint_port_poll(&p->jp, bench, now_ns, &js, out, out_max);
    if (port->replier)
        publish(p, now_ns, &js);
    return k;
}

static int odrive_stop_frame(const struct hs_can_port *port, const struct hs_bench *bench,
                             struct hs_can_frame *f)
{
    (void)bench;
    const struct hs_odrive_node *o = &((const struct odrive_port *)port)->node;
    memset(f, 0, sizeof *f);
    f->id = hs_odrive_can_id(o->cfg.node_id, HS_ODRIVE_HEARTBEAT);
    f->len = 8;
    hs_odrive_put_u32(f->data, o->axis_error);
    f->data[4] = HS_ODRIVE_STATE_IDLE;
    return 1;
}

static void odrive_stop(struct hs_can_port *port)
{
    ((struct odrive_port *)port)->node.axis_state = HS_ODRIVE_STATE_IDLE;
}

static int odrive_replier_add(struct hs_can_port *port, struct hs_can_replier *replier,
                              uint32_t *ret_slot, struct hs_diag *d)
{
    int r = hs_can_replier_add_odrive(replier, ((struct odrive_port *)port)->node.cfg.node_id,
                                      ODRIVE_GETTERS, ret_slot);
    return r < 0 ? hs_diag_set(d, r, NULL, 0, 0, "too many immediate nodes on one bus") : 0;
}

/* Lockstep: the cycle's command is a set point or state change (cmd.seq moves); remote
 * requests and getters are not commands. */
static int odrive_command_heard(const struct hs_can_port *port)
{
    const struct odrive_port *p = (const struct odrive_port *)port;
    return p->node.base.cmd.seq != p->jp.node_seq;
}

/* Scenario hooks: the axis error the heartbeat carries (Axis::Error bits), latched until the
 * host's Clear_Errors as on the firmware; the axis state as the heartbeat names it. */
static const char *odrive_fault_check(const struct hs_can_port *port, uint32_t code)
{
    (void)port;
    return code ? NULL : "an ODrive axis error needs at least one bit (e.g. 0x800 watchdog)";
}

static void odrive_raise_fault(struct hs_can_port *port, uint32_t code, bool on)
{
    if (on)
        hs_odrive_node_raise_error(&((struct odrive_port *)port)->node, code);
}

/* The node only rests in these two: calibration requests complete at once and leave it idle */
static const char *const odrive_states[] = {"idle", "closed_loop_control", NULL};

static const char *odrive_state(const struct hs_can_port *port)
{
    const struct odrive_port *p = (const struct odrive_port *)port;
    return odrive_states[p->node.axis_state == HS_ODRIVE_STATE_CLOSED_LOOP];
}

const struct hs_can_protocol hs_can_odrive_protocol = {
    .name = "odrive",
    .joint = &odrive_joint,
    .create = hs_can_joint_port_create,
    .destroy = hs_can_joint_port_free,
    .poll = odrive_poll,
    .stop_frame = odrive_stop_frame,
    .stop = odrive_stop,
    .replier_add = odrive_replier_add,
    .replier_publish = odrive_publish,
    .command_heard = odrive_command_heard,
    .fault_check = odrive_fault_check,
    .raise_fault = odrive_raise_fault,
    .state_names = odrive_states,
    .state = odrive_state,
};
