/* CAN faults of a scenario: each can_fault step becomes rules of a fault filter on its bus
 * (drivers/can/can_fault_filter.c), switched on and off with the step. The frames of a node come
 * from its protocol's registry entries: what it hears (hs_config_can_node_claims) and what it
 * sends (hs_config_can_node_replies; MIT replies carry the node id in data[0] of the master's
 * ID). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hilsim/can_fault.h"
#include "hilsim/io_can.h"
#include "scen_internal.h"

enum hs__scen_can_kind {
    HS__CF_DROP,
    HS__CF_DELAY,
    HS__CF_DUPLICATE,
    HS__CF_REORDER,
    HS__CF_CORRUPT,
    HS__CF_SILENT,
    HS__CF_MAX
};
enum hs__scen_can_dir { HS__CD_RX, HS__CD_TX, HS__CD_BOTH, HS__CD_MAX };

static int bus_filter(struct hs_scenario *s, const char *iface, struct hs_can_fault_filter **ret)
{
    for (uint32_t i = 0; i < s->nbuses; i++)
        if (!strcmp(s->can[i].iface, iface)) {
            *ret = s->can[i].filter;
            return 0;
        }
    struct hs_can_bus *bus = hs_bench_can_bus_find(s->bench, iface);
    if (!bus)
        return -ENODEV;
    if (s->nbuses >= HS_SCEN_MAX_BUSES)
        return -ENOSPC;
    struct hs__scen_can_bus *b = &s->can[s->nbuses];
    /* a filter already on the bus (another scenario's, or live control's, installed before the
     * first tick) takes this scenario's rules too: a running bus never gets a new filter */
    b->filter = hs_can_bus_fault_filter(bus);
    b->owned = !b->filter;
    if (b->owned) {
        int r = hs_can_fault_filter_create(s->seed, &b->filter);
        if (r < 0)
            return r;
        hs_can_bus_set_fault_filter(bus, b->filter);
    }
    b->bus = bus;
    snprintf(b->iface, sizeof b->iface, "%s", iface);
    s->nbuses++;
    *ret = b->filter;
    return 0;
}

static bool owned(const struct hs_scenario *s, const struct hs_can_fault_filter *f)
{
    for (uint32_t i = 0; i < s->nbuses; i++)
        if (s->can[i].filter == f)
            return s->can[i].owned;
    return false;
}

static int bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    const struct hs_config *cfg = hs_bench_config(s->bench);
    const struct hs_cfg_node *node = NULL;
    const char *bus_name = sp->bus;
    for (uint32_t i = 0; sp->node[0] && i < cfg->can.nnodes; i++)
        if (!strcmp(cfg->can.nodes[i].name, sp->node))
            node = &cfg->can.nodes[i];
#define ERR(...) hs_diag_set(diag, -EINVAL, s->path, sp->src.line, sp->src.column, __VA_ARGS__)
    long idx = (long)(sp - s->specs);
    if (sp->node[0] && !node)
        return ERR("steps[%ld].can_fault: the bench has no CAN node '%s'", idx, sp->node);
    if (node && !bus_name[0])
        bus_name = node->bus;
    const struct hs_cfg_bus *bus = NULL;
    for (uint32_t i = 0; i < cfg->can.nbuses; i++)
        if (!strcmp(cfg->can.buses[i].name, bus_name) || (!bus_name[0] && cfg->can.nbuses == 1))
            bus = &cfg->can.buses[i];
    if (!bus)
        return ERR("steps[%ld].can_fault: %s", idx,
                   bus_name[0] ? "no such CAN bus" : "name the bus (the bench has several)");
    int64_t delay = 0;
    if (sp->can_kind == HS__CF_DELAY) {
        delay = (int64_t)llround(sp->delay_s * 1e9 / (double)s->period_ns);
        if (delay < 1 || delay > (int64_t)HS_CAN_FAULT_DELAY_TICKS_MAX)
            return ERR("steps[%ld].can_fault: delay_s %g is %lld ticks; it must be 1 to %u", idx,
                       sp->delay_s, (long long)delay, HS_CAN_FAULT_DELAY_TICKS_MAX);
    }
    struct hs_can_fault_filter *f;
    int r = bus_filter(s, bus->interface, &f);
    if (r == -ENODEV)
        return ERR("steps[%ld].can_fault: bus %s (%s) is not open: CAN faults need the CAN "
                   "module (hilsim run)",
                   idx, bus->name, bus->interface);
    if (r < 0)
        return hs_diag_set(diag, r, s->path, sp->src.line, sp->src.column,
                           "steps[%ld].can_fault: %s", idx, strerror(-r));
    struct hs_can_fault_rule rule = {
        .data0 = -1, .probability = sp->probability, .delay_ticks = (uint32_t)delay};
    snprintf(rule.pattern, sizeof rule.pattern, "%s", sp->pattern);
    static const enum hs_can_fault_kind kinds[] = {
        [HS__CF_DROP] = HS_CAN_FAULT_DROP,       [HS__CF_DUPLICATE] = HS_CAN_FAULT_DUPLICATE,
        [HS__CF_REORDER] = HS_CAN_FAULT_REORDER, [HS__CF_CORRUPT] = HS_CAN_FAULT_CORRUPT,
        [HS__CF_SILENT] = HS_CAN_FAULT_DROP,     [HS__CF_DELAY] = HS_CAN_FAULT_DELAY,
    };
    rule.kind = kinds[sp->can_kind];
    /* a silent node is gone from the bus: it hears nothing and says nothing */
    unsigned dirs = sp->can_kind == HS__CF_SILENT ? HS_CAN_FAULT_RX | HS_CAN_FAULT_TX
                    : sp->can_dir == HS__CD_RX    ? HS_CAN_FAULT_RX
                    : sp->can_dir == HS__CD_TX    ? HS_CAN_FAULT_TX
                                                  : HS_CAN_FAULT_RX | HS_CAN_FAULT_TX;
    struct hs_can_fault_rule rules[2 * HS_CFG_CAN_CLAIMS_MAX];
    int n = 0;
    if (sp->can_id >= 0) {
        rule.id = (uint32_t)sp->can_id;
        rule.mask = sp->can_id > 0x7ff ? 0x1fffffffu : 0x7ffu;
        rule.direction = dirs;
        rules[n++] = rule;
    } else {
        /* What the node hears: the IDs its protocol claims; what it says: the IDs its own
         * frames go out on (both from the protocol registry, one rule each, one rule for an ID
         * both ways). An MIT node's replies share the master's ID: data[0] is the node. */
        struct hs_cfg_can_claim cl[HS_CFG_CAN_CLAIMS_MAX];
        unsigned nc = (dirs & HS_CAN_FAULT_RX) ? hs_config_can_node_claims(node, cl) : 0;
        if ((dirs & HS_CAN_FAULT_RX) && nc == 0)
            return ERR("steps[%ld].can_fault: node %s claims no IDs of its own (a DBC node): "
                       "give the frame's id",
                       idx, node->name);
        for (unsigned k = 0; k < nc; k++) {
            rule.id = cl[k].id & cl[k].mask, rule.mask = cl[k].mask;
            rule.direction = HS_CAN_FAULT_RX;
            rules[n++] = rule;
        }
        unsigned nr = (dirs & HS_CAN_FAULT_TX) ? hs_config_can_node_replies(node, cl) : 0;
        if ((dirs & HS_CAN_FAULT_TX) && nr == 0)
            return ERR("steps[%ld].can_fault: node %s's own frames are not known from the "
                       "config (a DBC node): give the frame's id for a tx fault",
                       idx, node->name);
        int data0 = node->protocol == HS_CFG_PROTO_MIT ? (int)node->id : -1;
        for (unsigned k = 0; k < nr; k++) {
            uint32_t id = cl[k].id & cl[k].mask;
            int both = -1;
            for (int j = 0; j < n && both < 0; j++)
                if (rules[j].id == id && rules[j].mask == cl[k].mask && data0 < 0)
                    both = j;
            if (both >= 0) {
                rules[both].direction |= HS_CAN_FAULT_TX;
                continue;
            }
            rule.id = id, rule.mask = cl[k].mask, rule.data0 = data0;
            rule.direction = HS_CAN_FAULT_TX;
            rules[n++] = rule;
        }
    }
    st->can_filter = f;
    st->can_nrules = 0;
    for (int i = 0; i < n; i++) {
        r = hs_can_fault_filter_add(f, &rules[i], &st->can_rule[st->can_nrules]);
        if (r < 0)
            return ERR("steps[%ld].can_fault: too many CAN fault rules on bus %s (at most %d)", idx,
                       bus->name, HS_CAN_FAULT_RULES_MAX);
        st->can_nrules++;
    }
#undef ERR
    return 0;
}

static void commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)s, (void)now_ns;
    if (st->active == st->was_active)
        return;
    for (uint32_t k = 0; k < st->can_nrules; k++)
        hs_can_fault_filter_set_active(st->can_filter, st->can_rule[k], st->active);
}

void hs__scen_can_clock(struct hs_scenario *s)
{
    /* The clock CAN delays count in: moved once per bench tick (warm-up and a finished
     * scenario's ticks too) by the scenario that owns the filter, so every scenario sharing it
     * counts in one clock. It moves after the tick's physics: a frame held at a tick's receive
     * (the inputs) or send (the outputs) comes out at the same phase d ticks later. */
    s->can_clock++;
    for (uint32_t i = 0; i < s->nbuses; i++)
        if (s->can[i].owned)
            hs_can_fault_filter_set_tick(s->can[i].filter, s->can_clock);
}

int hs__scen_can_filters(struct hs_scenario *s)
{
    const struct hs_config *cfg = hs_bench_config(s->bench);
    struct hs_can_fault_filter *f;
    for (uint32_t i = 0; i < cfg->can.nbuses; i++) {
        int r = bus_filter(s, cfg->can.buses[i].interface, &f);
        if (r < 0 && r != -ENODEV)
            return r;
    }
    return 0;
}

void hs__scen_unbind_can(struct hs_scenario *s)
{
    for (uint32_t i = 0; i < s->nbuses; i++) {
        if (s->can[i].owned) {
            hs_can_bus_set_fault_filter(s->can[i].bus, NULL);
            hs_can_fault_filter_destroy(s->can[i].filter);
        }
    }
    /* rules on a filter another owns stay, switched off */
    for (uint32_t i = 0; i < s->nsteps; i++)
        for (uint32_t k = 0; k < s->steps[i].can_nrules; k++)
            if (s->steps[i].can_filter && !owned(s, s->steps[i].can_filter))
                hs_can_fault_filter_set_active(s->steps[i].can_filter, s->steps[i].can_rule[k],
                                               false);
    s->nbuses = 0;
}

uint64_t hs_scenario_can_frames_acted(const struct hs_scenario *s, uint32_t step)
{
    const struct hs__scen_step *st = &s->steps[step];
    uint64_t n = 0;
    for (uint32_t k = 0; k < st->can_nrules; k++) {
        struct hs_can_fault_counts c;
        hs_can_fault_filter_counts(st->can_filter, st->can_rule[k], &c);
        n += c.acted;
    }
    return n;
}

uint64_t hs_scenario_can_frames_overflow(const struct hs_scenario *s, uint32_t step)
{
    const struct hs__scen_step *st = &s->steps[step];
    uint64_t n = 0;
    for (uint32_t k = 0; k < st->can_nrules; k++) {
        struct hs_can_fault_counts c;
        hs_can_fault_filter_counts(st->can_filter, st->can_rule[k], &c);
        n += c.overflow;
    }
    return n;
}

/* ---- the kind: schema and ops (scen_kinds.h) ---- */
static const char *const kind_names[] = {"drop",    "delay",  "duplicate", "reorder",
                                         "corrupt", "silent", NULL};
static const char *const dir_names[] = {"rx", "tx", "both", NULL};

static int check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node, const char *path)
{
    struct hs__scen_step_spec *st = obj;
    (void)seen;
    if (!st->node[0] && st->can_id < 0)
        return hs__cfg_err(c, node, "%s: name a node or an id", path);
    for (const char *p = st->pattern; *p; p++)
        if (*p != '0' && *p != '1')
            return hs__cfg_err(c, node, "%s: pattern is made of 0 and 1", path);
    if ((st->can_kind == HS__CF_DELAY) != !isnan(st->delay_s))
        return hs__cfg_err(c, node, "%s: delay_s goes with kind delay, and delay needs it", path);
    return 0;
}

static void defaults(struct hs__scen_step_spec *sp)
{
    sp->can_id = -1;
    sp->can_dir = HS__CD_BOTH;
    sp->delay_s = NAN;
}

static void summary(const struct hs_scenario *s, uint32_t i, FILE *out)
{
    fprintf(out, "; %llu frame(s) acted on, %llu lost to a full delay queue",
            (unsigned long long)hs_scenario_can_frames_acted(s, i),
            (unsigned long long)hs_scenario_can_frames_overflow(s, i));
}

static const struct hs__cfg_field fields[] = {
    HS__SCEN_ENUM("kind", can_kind, kind_names, HS__F_REQUIRED),
    HS__SCEN_NAME("bus", bus, 0),
    HS__SCEN_NAME("node", node, 0),
    HS__SCEN_FS("id", HS__K_I64, can_id, .min = 0, .max = 0x1fffffff),
    HS__SCEN_ENUM("direction", can_dir, dir_names, 0),
    HS__SCEN_DBL("probability", probability, 0, 1, 0),
    HS__SCEN_NAME("pattern", pattern, 0),
    HS__SCEN_DBL("delay_s", delay_s, 0, 1000, HS__F_MIN_OPEN),
};

const struct hs__scen_kind_ops hs__scen_kind_can_fault = {
    .schema = HS__SCEN_SCHEMA(fields, check),
    .defaults = defaults,
    .bind = bind,
    .commands = commands,
    .summary = summary,
};
