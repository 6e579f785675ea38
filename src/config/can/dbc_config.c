/* The config side of DBC nodes: the dbc section's keys (file, id_offset, the bindings and tx
 * lists), its checks, and the joints its to: bindings drive. Compiled into hs_config (see
 * drivers/can/README.md). A DBC node's IDs come from the file, loaded by the CAN layer, so the
 * config claims none for it. */
#include <stdlib.h>
#include <string.h>

#include "dbc_config.h"

#include "cfg_can_proto.h"
#include "cfg_schema.h"

static int binding_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path);
static const struct hs__cfg_field binding_f[] = {
    NAME("message", struct hs_cfg_binding, message, HS__CS_CIDENT, HS__F_REQUIRED),
    NAME("signal", struct hs_cfg_binding, signal, HS__CS_CIDENT, HS__F_REQUIRED),
    F_("to", HS__K_REF, struct hs_cfg_binding, ref),
    F_("from", HS__K_REF, struct hs_cfg_binding, ref),
};
STATIC_TABLE(binding_t, binding_f, binding_check);

static int binding_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path)
{
    struct hs_cfg_binding *b = obj;
    bool to = hs__cfg_seen_key(&binding_t, seen, "to"),
         from = hs__cfg_seen_key(&binding_t, seen, "from");
    if (to == from)
        return hs__cfg_err(c, node,
                           "%s: needs exactly one of 'to' (received signal drives a "
                           "command) or 'from' (state fills a sent signal)",
                           path);
    b->dir = to ? HS_CFG_BIND_TO : HS_CFG_BIND_FROM;
    bool command = b->ref.quantity <= HS_CFG_Q_ENABLE;
    bool joint_state =
        b->ref.quantity >= HS_CFG_Q_POSITION && b->ref.quantity <= HS_CFG_Q_ENCODER_COUNTS;
    yaml_node_t *where = hs__cfg_node_or(c, node, to ? "to" : "from");
    if (to && !(command && b->ref.kind == HS_CFG_REF_JOINT))
        return hs__cfg_err(c, where,
                           "%s.to: '%s' is not a joint command (joint.<name>.position_setpoint, "
                           "velocity_setpoint, torque_setpoint, current_setpoint, kp, kd, enable)",
                           path, hs__names_quantity[b->ref.quantity]);
    if (from && b->ref.kind == HS_CFG_REF_JOINT && !joint_state)
        return hs__cfg_err(c, where,
                           "%s.from: '%s' is not a joint state (position, velocity, torque, "
                           "current, encoder_counts)",
                           path, hs__names_quantity[b->ref.quantity]);
    if (from && b->ref.kind == HS_CFG_REF_SENSOR && b->ref.quantity < HS_CFG_Q_ACCEL_X)
        return hs__cfg_err(c, where, "%s.from: '%s' is not a sensor reading (accel_x .. torque_z)",
                           path, hs__names_quantity[b->ref.quantity]);
    return 0;
}

static int tx_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                    const char *path);
static bool is_cyclic(const void *obj)
{
    return ((const struct hs_cfg_tx *)obj)->schedule == HS_CFG_TX_CYCLIC;
}
static const struct hs__cfg_field tx_f[] = {
    NAME("message", struct hs_cfg_tx, message, HS__CS_CIDENT, HS__F_REQUIRED),
    ENUM("schedule", struct hs_cfg_tx, schedule, hs__names_tx_schedule),
    F_("period_s", HS__K_DOUBLE, struct hs_cfg_tx, period_s, .min = 0, .max = 10,
       .flags = HS__F_MIN_OPEN, .emit = is_cyclic),
    NAME("trigger", struct hs_cfg_tx, trigger, HS__CS_CIDENT, 0),
};
STATIC_TABLE(tx_t, tx_f, tx_check);

static int tx_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                    const char *path)
{
    const struct hs_cfg_tx *t = obj;
    bool period = hs__cfg_seen_key(&tx_t, seen, "period_s"),
         trigger = hs__cfg_seen_key(&tx_t, seen, "trigger");
    if (t->schedule == HS_CFG_TX_CYCLIC && !period)
        return hs__cfg_err(c, node, "%s: schedule cyclic needs period_s", path);
    if (t->schedule != HS_CFG_TX_CYCLIC && period)
        return hs__cfg_err(c, hs__cfg_child(c, node, "period_s"),
                           "%s.period_s: only for schedule cyclic", path);
    if (t->schedule == HS_CFG_TX_ON_RECEIVE && !trigger)
        return hs__cfg_err(c, node, "%s: schedule on_receive needs trigger (a message name)", path);
    if (t->schedule != HS_CFG_TX_ON_RECEIVE && trigger)
        return hs__cfg_err(c, hs__cfg_child(c, node, "trigger"),
                           "%s.trigger: only for schedule on_receive", path);
    return 0;
}

static const struct hs__cfg_list bindings_l = {
    .elem = &binding_t,
    .elem_size = sizeof(struct hs_cfg_binding),
    .max = HS_CFG_MAX_BINDINGS,
    .src_off = offsetof(struct hs_cfg_binding, src),
    .pooled = true,
    .array_off = offsetof(struct hs_config, can.bindings),
    .count_off = offsetof(struct hs_config, can.nbindings),
    .first_off = offsetof(struct hs_cfg_dbc, binding_first),
    .slice_off = offsetof(struct hs_cfg_dbc, binding_count),
    .template_off = -1,
};

static const struct hs__cfg_list tx_l = {
    .elem = &tx_t,
    .elem_size = sizeof(struct hs_cfg_tx),
    .max = HS_CFG_MAX_TX,
    .src_off = offsetof(struct hs_cfg_tx, src),
    .pooled = true,
    .array_off = offsetof(struct hs_config, can.tx),
    .count_off = offsetof(struct hs_config, can.ntx),
    .first_off = offsetof(struct hs_cfg_dbc, tx_first),
    .slice_off = offsetof(struct hs_cfg_dbc, tx_count),
    .template_off = -1,
};

static const struct hs__cfg_field dbc_f[] = {
    PATH("file", struct hs_cfg_dbc, file, HS__F_REQUIRED),
    F_("id_offset", HS__K_U32, struct hs_cfg_dbc, id_offset, .min = 0, .max = 0x1fffffff,
       .flags = HS__F_HEX),
    LIST("bindings", bindings_l),
    LIST("tx", tx_l),
};
TABLE(hs__can_dbc_section, dbc_f, NULL);

static const struct hs_cfg_tx *find_tx(const struct hs_cfg_can *can, const struct hs_cfg_node *n,
                                       const char *message)
{
    for (uint32_t k = 0; k < hs_cfg_dbc(n)->tx_count; k++)
        if (!strcmp(can->tx[hs_cfg_dbc(n)->tx_first + k].message, message))
            return &can->tx[hs_cfg_dbc(n)->tx_first + k];
    return NULL;
}

static int dbc_validate(struct hs__ctx *c, uint32_t i)
{
    const struct hs_cfg_can *can = &c->cfg->can;
    const struct hs_cfg_node *n = &can->nodes[i];
    double tick_s = (double)c->cfg->rt.period_ns * 1e-9;
    char p[160];
    for (uint32_t k = 0; k < hs_cfg_dbc(n)->tx_count; k++) {
        const struct hs_cfg_tx *t = &can->tx[hs_cfg_dbc(n)->tx_first + k];
        if (find_tx(can, n, t->message) != t) {
            hs__cfg_pathf(p, sizeof p, "can.nodes[%u].dbc.tx[%u].message", i, k);
            return hs__cfg_err_field(c, p, "'%s' is listed twice", t->message);
        }
        if (t->schedule == HS_CFG_TX_CYCLIC && !hs__cfg_tick_multiple(t->period_s, tick_s)) {
            hs__cfg_pathf(p, sizeof p, "can.nodes[%u].dbc.tx[%u].period_s", i, k);
            return hs__cfg_err_field(c, p, "%g s is not a whole number of ticks (%g s)",
                                     t->period_s, tick_s);
        }
    }
    for (uint32_t k = 0; k < hs_cfg_dbc(n)->binding_count; k++) {
        const struct hs_cfg_binding *b = &can->bindings[hs_cfg_dbc(n)->binding_first + k];
        bool sent = find_tx(can, n, b->message) != NULL;
        if (b->dir == HS_CFG_BIND_FROM && !sent) {
            hs__cfg_pathf(p, sizeof p, "can.nodes[%u].dbc.bindings[%u].message", i, k);
            return hs__cfg_err_field(c, p, "'%s' has a from: binding but is not in dbc.tx",
                                     b->message);
        }
        if (b->dir == HS_CFG_BIND_TO && sent) {
            hs__cfg_pathf(p, sizeof p, "can.nodes[%u].dbc.bindings[%u].message", i, k);
            return hs__cfg_err_field(c, p, "'%s' is sent (in dbc.tx), so it cannot drive a command",
                                     b->message);
        }
        for (uint32_t m = 0; m < k; m++) {
            const struct hs_cfg_binding *o = &can->bindings[hs_cfg_dbc(n)->binding_first + m];
            if (!strcmp(o->message, b->message) && !strcmp(o->signal, b->signal)) {
                hs__cfg_pathf(p, sizeof p, "can.nodes[%u].dbc.bindings[%u].signal", i, k);
                return hs__cfg_err_field(c, p, "%s.%s is already bound by bindings[%u]", b->message,
                                         b->signal, m);
            }
        }
    }
    return 0;
}

static void dbc_defaults(void *section)
{
    memset(section, 0, sizeof(struct hs_cfg_dbc));
}

static void dbc_release(void *section)
{
    struct hs_cfg_dbc *d = section;
    free(d->file);
    d->file = NULL;
}

static unsigned dbc_claims(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    (void)n, (void)out;
    return 0;
}

/* The k-th to: binding's joint. */
static const char *dbc_joint_at(const struct hs_config *cfg, const struct hs_cfg_node *n,
                                uint32_t k, char *key, size_t key_size)
{
    const struct hs_cfg_dbc *d = hs_cfg_dbc(n);
    for (uint32_t i = 0; i < d->binding_count; i++) {
        const struct hs_cfg_binding *b = &cfg->can.bindings[d->binding_first + i];
        if (b->dir != HS_CFG_BIND_TO || b->ref.kind != HS_CFG_REF_JOINT || k--)
            continue;
        hs__cfg_pathf(key, key_size, "can.nodes[%u].dbc.bindings[%u].to",
                      (unsigned)(n - cfg->can.nodes), i);
        return b->ref.name;
    }
    return NULL;
}

const struct hs__can_proto_cfg hs__can_dbc_cfg = {
    .section = &hs__can_dbc_section,
    .section_size = sizeof(struct hs_cfg_dbc),
    .section_required = true,
    .defaults = dbc_defaults,
    .release = dbc_release,
    .single_joint = false,
    .validate = dbc_validate,
    .claims = dbc_claims,
    .joint_at = dbc_joint_at,
};
