/* One node, one joint: the shared binding of protocols whose node drives a single joint through
 * the generic node API (see can_protocol.h). */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "bench_internal.h"
#include "can_protocol.h"

/* Fills jp->port's identity and finds the joint (gear, efficiency, Kt, current limit from the
 * actuator config or the model). -EINVAL with d naming the node's joint key when the bench has
 * no such joint. */
static int joint_port_init(struct hs_can_joint_port *jp, const struct hs_can_protocol *proto,
                           struct hs_bench *bench, uint32_t index, bool motor_side,
                           struct hs_diag *d)
{
    const struct hs_config *cfg = hs_bench_config(bench);
    const struct hs_cfg_node *cn = &cfg->can.nodes[index];
    jp->port.proto = proto;
    jp->port.cfg = cn;
    jp->port.index = index;
    jp->bench = bench;
    int ji = hs_bench_find_joint(bench, cn->joint);
    if (ji < 0)
        return hs_diag_set(d, -EINVAL, cfg->path, cn->src.line, cn->src.column,
                           "can.nodes[%u].joint '%s': no such joint in the bench", index,
                           cn->joint);
    jp->joint = (uint32_t)ji;
    jp->motor_side = motor_side;
    const struct hs_bench_joint *j = hs_bench_joint(bench, jp->joint);
    const struct hs_link *l = &hs_bench_model(bench, j->body)->links[j->link];
    const struct hs_cfg_actuator *a = hs_config_actuator(cfg, j->name);
    jp->gear = isnan(a->gear_ratio) ? l->gear_ratio : a->gear_ratio;
    jp->eta = isnan(a->gear_efficiency) ? l->gear_efficiency : a->gear_efficiency;
    jp->kt = isnan(a->torque_const) ? l->torque_const : a->torque_const;
    jp->current_max = a->current_limit_a;
    jp->temp_c = NAN;
    return 0;
}

struct hs_can_joint_state hs_can_joint_port_state(const struct hs_can_joint_port *jp,
                                                  const struct hs_joint_reading *r)
{
    struct hs_can_joint_state js = {0};
    if (jp->motor_side) {
        js.q_rad = r->q * jp->gear;
        js.dq_rad_s = r->dq * jp->gear;
        js.tau_nm = r->current * jp->kt;
    } else {
        js.q_rad = r->q;
        js.dq_rad_s = r->dq;
        js.tau_nm = r->torque;
    }
    js.current_a = r->current;
    js.temp_c = jp->temp_c;
    return js;
}

void hs_can_joint_port_command(struct hs_can_joint_port *n, struct hs_bench *bench,
                               const struct hs_can_joint_command *c)
{
    struct hs_joint_command *s = hs_bench_joint(bench, n->joint)->cmd;
    uint32_t mode = HS_JOINT_MODE_DISABLED;
    double g = n->motor_side ? n->gear : 1.0, g2 = g * g;
    double tau_scale = n->motor_side ? n->gear * n->eta : 1.0;
    double kp = 0, kd = 0, q = 0, dq = 0, tau = 0, current = 0;
    if (c->enabled && c->mode != HS_CAN_JOINT_MODE_OFF) {
        switch (c->mode) {
        case HS_CAN_JOINT_MODE_TORQUE:
            if (n->motor_side) {
                mode = HS_JOINT_MODE_CURRENT;
                current = c->tau_ff_nm / n->kt;
            } else {
                mode = HS_JOINT_MODE_TORQUE;
                tau = c->tau_ff_nm;
            }
            break;
        case HS_CAN_JOINT_MODE_VELOCITY:
        case HS_CAN_JOINT_MODE_POSITION_PD:
        default:
            mode = HS_JOINT_MODE_POSITION;
            kp = c->mode == HS_CAN_JOINT_MODE_VELOCITY ? 0 : c->kp_nm_rad * g2;
            kd = c->kd_nm_s_rad * g2;
            q = c->q_ref_rad / g;
            dq = c->dq_ref_rad_s / g;
            tau = c->tau_ff_nm * tau_scale;
            break;
        }
    }
    if (c->seq != n->node_seq || mode != n->slot_mode) {
        n->node_seq = c->seq;
        n->slot_mode = mode;
        n->slot_seq++;
    }
    if (n->slot_seq == 0)
        return; /* nothing heard yet: the plant keeps its safe behaviour */
    s->mode = mode;
    s->kp = kp, s->kd = kd, s->q = q, s->dq = dq, s->tau_ff = tau;
    s->current = current;
    s->velocity = dq;
    s->rx_time_ns = n->port.last_rx_ns;
    s->seq = n->slot_seq;
}

int hs_can_joint_port_poll(struct hs_can_joint_port *jp, struct hs_bench *bench, int64_t now_ns,
                           struct hs_can_joint_state *ret_js, struct hs_can_frame *out,
                           unsigned out_max)
{
    *ret_js = hs_can_joint_port_state(jp, hs_bench_joint_reading(bench, jp->joint));
    struct hs_can_joint_command cmd;
    int k = hs_can_node_poll(jp->port.node, now_ns, ret_js, &cmd, out, out_max);
    hs_can_joint_port_command(jp, bench, &cmd);
    return k;
}

/* The ports a scenario may reach (hs_can_port_find) are the bench's: one slot per config node
 * (bench->can_ports), filled at bind and emptied when the port is freed, so a second bench in
 * the process has its own and the table cannot fill up. */
int hs_can_joint_port_create(struct hs_bench *bench, uint32_t index, struct hs_can_port **ret,
                             struct hs_diag *d)
{
    const struct hs_config *cfg = hs_bench_config(bench);
    const struct hs_cfg_node *cn = &cfg->can.nodes[index];
    const struct hs_can_protocol *proto = hs_can_protocol_get(cn->protocol);
    const struct hs_can_joint_ops *ops = proto->joint;
    assert(ops && ops->port_size >= sizeof(struct hs_can_joint_port));
    struct hs_can_joint_port *jp = calloc(1, ops->port_size);
    if (!jp)
        return hs_diag_set(d, -ENOMEM, cfg->path, 0, 0, "can: out of memory");
    int r = joint_port_init(jp, proto, bench, index, ops->motor_side, d);
    if (r < 0)
        goto fail;
    struct hs_diag nd = {0};
    struct hs_can_node *node = NULL;
    r = ops->build(jp, bench, cn, &node, &nd, d);
    if (r < 0) {
        if (nd.msg[0]) /* the node's own message: name the config node it came from */
            hs_diag_set(d, r, cfg->path, cn->src.line, cn->src.column, "can.nodes[%u] '%s': %s",
                        index, cn->name, nd.msg);
        goto fail;
    }
    jp->port.node = node;
    hs_bench_claim_joint(bench, jp->joint);
    assert(index < HS_CFG_MAX_NODES && !bench->can_ports[index]);
    bench->can_ports[index] = &jp->port;
    *ret = &jp->port;
    return 0;
fail:
    free(jp);
    return r;
}

void hs_can_joint_port_free(struct hs_can_port *port)
{
    struct hs_can_joint_port *jp = (struct hs_can_joint_port *)port;
    if (jp && jp->bench && jp->bench->can_ports[port->index] == port)
        jp->bench->can_ports[port->index] = NULL;
    free(port);
}

struct hs_can_port *hs_can_port_find(const struct hs_bench *bench, const struct hs_cfg_node *cfg)
{
    const struct hs_config *c = hs_bench_config(bench);
    if (cfg < c->can.nodes || cfg >= c->can.nodes + c->can.nnodes)
        return NULL;
    return bench->can_ports[cfg - c->can.nodes];
}

void hs_can_port_set_temperature(struct hs_can_port *port, double temp_c)
{
    /* every port hs_can_port_find returns is a single-joint one */
    ((struct hs_can_joint_port *)port)->temp_c = temp_c;
}

int hs_can_joint_port_poll_op(struct hs_can_port *port, struct hs_bench *bench, int64_t now_ns,
                              struct hs_can_frame *out, unsigned out_max)
{
    struct hs_can_joint_state js;
    return hs_can_joint_port_poll((struct hs_can_joint_port *)port, bench, now_ns, &js, out,
                                  out_max);
}
