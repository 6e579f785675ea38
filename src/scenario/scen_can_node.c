/* A scenario's hooks into CAN nodes, through the protocol registry's scenario ops
 * (src/bench/can/can_protocol.h), so the scenario names no protocol: a node raising its
 * protocol's own error (node_fault), a node's state as a condition (`when: {node, state}`) and
 * an expectation (node_state), and a thermal model's winding temperature in the frames of the
 * nodes that drive its joint. The nodes are the CAN module's ports, so these need `hilsim run`.
 * The node_fault kind's schema and ops table (scen_kinds.h) are at the end. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "can_protocol.h"
#include "scen_internal.h"

struct node_fault_spec {
    uint32_t code; /* the protocol's own error code */
    char node[HS_NAME_MAX];
};
struct node_fault_state {
    struct hs_can_port *port;
};
HS__SCEN_OWN_FITS(struct node_fault_spec);
HS__SCEN_OWN_FITS(struct node_fault_state);

static const struct hs_cfg_node *config_node(const struct hs_config *cfg, const char *name)
{
    for (uint32_t i = 0; i < cfg->can.nnodes; i++)
        if (!strcmp(cfg->can.nodes[i].name, name))
            return &cfg->can.nodes[i];
    return NULL;
}

static bool state_known(const struct hs_can_protocol *proto, const char *state)
{
    for (const char *const *p = proto->state_names; p && *p; p++)
        if (!strcmp(*p, state))
            return true;
    return false;
}

static void list_states(const struct hs_can_protocol *proto, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
    for (const char *const *p = proto->state_names; p && *p && n < size; p++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", *p);
}

/* The port of node `name`, or an error naming the step. */
int hs__scen_node_port(struct hs_scenario *s, struct hs__scen_step *st, const char *name,
                       const char *what, struct hs_can_port **ret, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    long idx = (long)(sp - s->specs);
    const struct hs_cfg_node *node = config_node(hs_bench_config(s->bench), name);
#define ERR(...) hs_diag_set(diag, -EINVAL, s->path, sp->src.line, sp->src.column, __VA_ARGS__)
    if (!node)
        return ERR("steps[%ld].%s: the bench has no CAN node '%s'", idx, what, name);
    *ret = hs_can_port_find(s->bench, node);
    if (!*ret)
        return ERR("steps[%ld].%s: node %s is not running: this needs the CAN module (hilsim "
                   "run) and a protocol with a node state machine (not dbc)",
                   idx, what, name);
    return 0;
}

int hs__scen_node_check_state(struct hs_scenario *s, struct hs__scen_step *st,
                              const struct hs_can_port *port, const char *state, const char *what,
                              struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    const struct hs_can_protocol *proto = port->proto;
    if (proto->state && state_known(proto, state))
        return 0;
    char names[256];
    list_states(proto, names, sizeof names);
    return ERR("steps[%ld].%s: a %s node has no state '%s'%s%s", (long)(sp - s->specs), what,
               proto->name, state, names[0] ? "; its states: " : "", names);
}

/* the node raises its protocol's own error: the code is checked against the node's protocol */
static int bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    const struct node_fault_spec *f = HS__SCEN_OWN(const struct node_fault_spec, sp);
    struct node_fault_state *o = HS__SCEN_OWN(struct node_fault_state, st);
    int r = hs__scen_node_port(s, st, f->node, "node_fault", &o->port, diag);
    if (r < 0)
        return r;
    const struct hs_can_protocol *proto = o->port->proto;
    const char *why = proto->fault_check ? proto->fault_check(o->port, f->code)
                                         : "the protocol has no error of its own to raise";
    if (why)
        return ERR("steps[%ld].node_fault: code 0x%x on %s node %s: %s", (long)(sp - s->specs),
                   f->code, proto->name, f->node, why);
    return 0;
}

int hs__scen_bind_when_node(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    int r;
    if ((r = hs__scen_node_port(s, st, sp->when.node, "when", &st->when_port, diag)) < 0 ||
        (r = hs__scen_node_check_state(s, st, st->when_port, sp->when.state, "when", diag)) < 0)
        return r;
    return 0;
}

/* every CAN node driving the joint reports the model's winding temperature */
uint32_t hs__scen_temp_ports(struct hs_scenario *s, const char *joint, struct hs_can_port **ret,
                             uint32_t max)
{
    const struct hs_config *cfg = hs_bench_config(s->bench);
    uint32_t n = 0;
    for (uint32_t i = 0; i < cfg->can.nnodes && n < max; i++) {
        struct hs_can_port *p = !strcmp(cfg->can.nodes[i].joint, joint)
                                    ? hs_can_port_find(s->bench, &cfg->can.nodes[i])
                                    : NULL;
        if (p)
            ret[n++] = p;
    }
    return n;
}
#undef ERR

static void commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)s, (void)now_ns;
    struct hs_can_port *port = HS__SCEN_OWN(const struct node_fault_state, st)->port;
    if (st->active != st->was_active)
        port->proto->raise_fault(port, HS__SCEN_OWN(const struct node_fault_spec, st->sp)->code,
                                 st->active);
}

void hs__scen_report_temperature(struct hs_can_port *const *ports, uint32_t n, double t_c)
{
    for (uint32_t k = 0; k < n; k++)
        hs_can_port_set_temperature(ports[k], t_c);
}

const char *hs__scen_node_state(const struct hs_can_port *port)
{
    return port->proto->state(port);
}

const char *const *hs__scen_node_state_names(const struct hs_can_port *port)
{
    return port->proto->state_names;
}

/* ---- the kind: schema and ops (scen_kinds.h) ---- */
static const struct hs__cfg_field fields[] = {
    HS__SCEN_OWN_NAME(struct node_fault_spec, "node", node, HS__F_REQUIRED),
    HS__SCEN_OWN_FS(struct node_fault_spec, "code", HS__K_U32, code, .min = 0, .max = 0xffffffffu,
                    .flags = HS__F_REQUIRED | HS__F_HEX),
};

const struct hs__scen_kind_ops hs__scen_kind_node_fault = {
    .schema = HS__SCEN_SCHEMA(fields, NULL),
    .bind = bind,
    .commands = commands,
};
