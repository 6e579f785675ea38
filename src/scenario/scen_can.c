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

/* The fault's keys: which frames (the node's, on its bus or the one named, or the frame id),
 * which way, and what is done to them. */
struct can_fault_spec {
    int kind;                  /* enum hs__scen_can_kind */
    int dir;                   /* enum hs__scen_can_dir */
    int64_t id;                /* -1: every frame of the node */
    double probability;        /* per matching frame */
    double delay_s;            /* delay: how long frames are held (NAN: not given) */
    char pattern[HS_NAME_MAX]; /* '1' acts on the frame, '0' lets it through, cycled */
    char bus[HS_NAME_MAX], node[HS_NAME_MAX];
};
/* its rules on the bus's fault filter */
struct can_fault_state {
    struct hs_can_fault_filter *filter; /* the bus's (the scenario's, or the one it adopted) */
    uint32_t rule[2 * HS_CFG_CAN_CLAIMS_MAX], nrules;
};
HS__SCEN_OWN_FITS(struct can_fault_spec);
HS__SCEN_OWN_FITS(struct can_fault_state);

/* a step's rules: none for a step of another kind */
static const struct can_fault_state *rules_of(const struct hs__scen_step *st)
{
    static const struct can_fault_state none;
    return st->kind == HS__SCEN_CAN_FAULT ? HS__SCEN_OWN(const struct can_fault_state, st) : &none;
}

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
    const struct can_fault_spec *f = HS__SCEN_OWN(const struct can_fault_spec, sp);
    struct can_fault_state *o = HS__SCEN_OWN(struct can_fault_state, st);
    const struct hs_config *cfg = hs_bench_config(s->bench);
    const struct hs_cfg_node *node = NULL;
    const char *bus_name = f->bus;
    for (uint32_t i = 0; f->node[0] && i < cfg->can.nnodes; i++)
        if (!strcmp(cfg->can.nodes[i].name, f->node))
            node = &cfg->can.nodes[i];
#define ERR(...) hs_diag_set(diag, -EINVAL, s->path, sp->src.line, sp->src.column, __VA_ARGS__)
    long idx = (long)(sp - s->specs);
    if (f->node[0] && !node)
        return ERR("steps[%ld].can_fault: the bench has no CAN node '%s'", idx, f->node);
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
    if (f->kind == HS__CF_DELAY) {
        delay = (int64_t)llround(f->delay_s * 1e9 / (double)s->period_ns);
        if (delay < 1 || delay > (int64_t)HS_CAN_FAULT_DELAY_TICKS_MAX)
            return ERR("steps[%ld].can_fault: delay_s %g is %lld ticks; it must be 1 to %u", idx,
                       f->delay_s, (long long)delay, HS_CAN_FAULT_DELAY_TICKS_MAX);
    }
    struct hs_can_fault_filter *filter;
    int r = bus_filter(s, bus->interface, &filter);
    if (r == -ENODEV)
        return ERR("steps[%ld].can_fault: bus %s (%s) is not open: CAN faults need the CAN "
                   "module (hilsim run)",
                   idx, bus->name, bus->interface);
    if (r < 0)
        return hs_diag_set(diag, r, s->path, sp->src.line, sp->src.column,
                           "steps[%ld].can_fault: %s", idx, strerror(-r));
    struct hs_can_fault_rule rule = {
        .data0 = -1, .probability = f->probability, .delay_ticks = (uint32_t)delay};
    snprintf(rule.pattern, sizeof rule.pattern, "%s", f->pattern);
    static const enum hs_can_fault_kind kinds[] = {
        [HS__CF_DROP] = HS_CAN_FAULT_DROP,       [HS__CF_DUPLICATE] = HS_CAN_FAULT_DUPLICATE,
        [HS__CF_REORDER] = HS_CAN_FAULT_REORDER, [HS__CF_CORRUPT] = HS_CAN_FAULT_CORRUPT,
        [HS__CF_SILENT] = HS_CAN_FAULT_DROP,     [HS__CF_DELAY] = HS_CAN_FAULT_DELAY,
    };
    rule.kind = kinds[f->kind];
    /* a silent node is gone from the bus: it hears nothing and says nothing */
    unsigned dirs = f->kind == HS__CF_SILENT ? HS_CAN_FAULT_RX | HS_CAN_FAULT_TX
                    : f->dir == HS__CD_RX    ? HS_CAN_FAULT_RX
                    : f->dir == HS__CD_TX    ? HS_CAN_FAULT_TX
                                             : HS_CAN_FAULT_RX | HS_CAN_FAULT_TX;
    struct hs_can_fault_rule rules[2 * HS_CFG_CAN_CLAIMS_MAX];
    int n = 0;
    if (f->id >= 0) {
        rule.id = (uint32_t)f->id;
        rule.mask = f->id > 0x7ff ? 0x1fffffffu : 0x7ffu;
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
    o->filter = filter;
    o->nrules = 0;
    for (int i = 0; i < n; i++) {
        r = hs_can_fault_filter_add(filter, &rules[i], &o->rule[o->nrules]);
        if (r < 0)
            return ERR("steps[%ld].can_fault: too many CAN fault rules on bus %s (at most %d)", idx,
                       bus->name, HS_CAN_FAULT_RULES_MAX);
        o->nrules++;
    }
#undef ERR
    return 0;
}

static void commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)s, (void)now_ns;
    if (st->active == st->was_active)
        return;
    const struct can_fault_state *o = HS__SCEN_OWN(const struct can_fault_state, st);
    for (uint32_t k = 0; k < o->nrules; k++)
        hs_can_fault_filter_set_active(o->filter, o->rule[k], st->active);
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
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const struct can_fault_state *o = rules_of(&s->steps[i]);
        for (uint32_t k = 0; k < o->nrules; k++)
            if (o->filter && !owned(s, o->filter))
                hs_can_fault_filter_set_active(o->filter, o->rule[k], false);
    }
    s->nbuses = 0;
}

uint64_t hs_scenario_can_frames_acted(const struct hs_scenario *s, uint32_t step)
{
    const struct can_fault_state *o = rules_of(&s->steps[step]);
    uint64_t n = 0;
    for (uint32_t k = 0; k < o->nrules; k++) {
        struct hs_can_fault_counts c;
        hs_can_fault_filter_counts(o->filter, o->rule[k], &c);
        n += c.acted;
    }
    return n;
}

uint64_t hs_scenario_can_frames_overflow(const struct hs_scenario *s, uint32_t step)
{
    const struct can_fault_state *o = rules_of(&s->steps[step]);
    uint64_t n = 0;
    for (uint32_t k = 0; k < o->nrules; k++) {
        struct hs_can_fault_counts c;
        hs_can_fault_filter_counts(o->filter, o->rule[k], &c);
        n += c.overflow;
    }
    return n;
}

/* ---- the kind: schema and ops (scen_kinds.h) ---- */
static const char *const kind_names[] = {"drop",    "delay",  "duplicate", "reorder",
                                         "corrupt", "silent", NULL};
static const char *const dir_names[] = {"rx", "tx", "both", NULL};

#define F(k, K, m, ...) HS__SCEN_OWN_FS(struct can_fault_spec, k, K, m, __VA_ARGS__)
static const struct hs__cfg_field fields[] = {
    F("kind", HS__K_ENUM, kind, .names = kind_names, .flags = HS__F_REQUIRED),
    HS__SCEN_OWN_NAME(struct can_fault_spec, "bus", bus, 0),
    HS__SCEN_OWN_NAME(struct can_fault_spec, "node", node, 0),
    F("id", HS__K_I64, id, .min = 0, .max = 0x1fffffff),
    F("direction", HS__K_ENUM, dir, .names = dir_names),
    F("probability", HS__K_DOUBLE, probability, .min = 0, .max = 1),
    HS__SCEN_OWN_NAME(struct can_fault_spec, "pattern", pattern, 0),
    F("delay_s", HS__K_DOUBLE, delay_s, .min = 0, .max = 1000, .flags = HS__F_MIN_OPEN),
};
#undef F
static const struct can_fault_spec defaults = {
    .id = -1, .dir = HS__CD_BOTH, .probability = 1, .delay_s = NAN};

static int check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node, const char *path)
{
    HS__SCEN_OWN_DEFAULTS(obj, fields, seen, &defaults);
    const struct can_fault_spec *f =
        HS__SCEN_OWN(const struct can_fault_spec, (struct hs__scen_step_spec *)obj);
    if (!f->node[0] && f->id < 0)
        return hs__cfg_err(c, node, "%s: name a node or an id", path);
    for (const char *p = f->pattern; *p; p++)
        if (*p != '0' && *p != '1')
            return hs__cfg_err(c, node, "%s: pattern is made of 0 and 1", path);
    if ((f->kind == HS__CF_DELAY) != !isnan(f->delay_s))
        return hs__cfg_err(c, node, "%s: delay_s goes with kind delay, and delay needs it", path);
    return 0;
}

static void summary(const struct hs_scenario *s, uint32_t i, FILE *out)
{
    fprintf(out, "; %llu frame(s) acted on, %llu lost to a full delay queue",
            (unsigned long long)hs_scenario_can_frames_acted(s, i),
            (unsigned long long)hs_scenario_can_frames_overflow(s, i));
}

const struct hs__scen_kind_ops hs__scen_kind_can_fault = {
    .schema = HS__SCEN_SCHEMA(fields, check),
    .bind = bind,
    .commands = commands,
    .summary = summary,
};
