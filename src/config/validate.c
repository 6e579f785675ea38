/* Cross-field rules, run after every key parsed: references between sections, uniqueness,
 * timing consistency. Each error points at the offending value in the file. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_can_proto.h"

/* The node at a display path such as "can.nodes[3].bus", or the deepest ancestor that exists. */
static yaml_node_t *node_at(struct hs__ctx *c, const char *path)
{
    yaml_node_t *n = yaml_document_get_root_node(c->doc);
    const char *p = path;
    while (n && *p) {
        if (*p == '.') {
            p++;
            continue;
        }
        yaml_node_t *next = NULL;
        if (*p == '[') {
            char *end;
            long i = strtol(p + 1, &end, 10);
            if (*end != ']')
                break;
            p = end + 1;
            if (n->type == YAML_SEQUENCE_NODE && i >= 0 &&
                i < n->data.sequence.items.top - n->data.sequence.items.start)
                next = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
        } else {
            size_t len = strcspn(p, ".[");
            char key[HS_NAME_MAX + 32];
            hs__cfg_pathf(key, sizeof key, "%.*s", (int)len, p);
            p += len;
            next = hs__cfg_child(c, n, key);
        }
        if (!next)
            break;
        n = next;
    }
    return n;
}

int hs__cfg_err_field(struct hs__ctx *c, const char *path, const char *fmt, ...)
{
    char msg[HS_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hs__cfg_err(c, node_at(c, path), "%s: %s", path, msg);
}

static int check_models(struct hs__ctx *c)
{
    const struct hs_config *cfg = c->cfg;
    bool dynamic = false;
    for (uint32_t i = 0; i < cfg->nmodels; i++) {
        dynamic |= !cfg->models[i].is_static;
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(cfg->models[i].name, cfg->models[j].name)) {
                char p[64];
                hs__cfg_pathf(p, sizeof p, "models[%u].name", i);
                return hs__cfg_err_field(c, p, "'%s' is already the name of models[%u]",
                                         cfg->models[i].name, j);
            }
    }
    if (!dynamic)
        return hs__cfg_err_field(c, "models", "at least one model must be non-static (a robot)");
    return 0;
}

static int check_timing(struct hs__ctx *c)
{
    struct hs_config *cfg = c->cfg;
    double period_s = (double)cfg->rt.period_ns * 1e-9;
    if (!c->physics_step_given) {
        double step = period_s / cfg->physics.substeps;
        if (step < 1e-5 || step > 0.1)
            return hs__cfg_err_field(
                c, "physics.substeps",
                "rt.period_ns %llu / %u substeps = %g s is outside the physics "
                "step range [1e-05, 0.1]",
                (unsigned long long)cfg->rt.period_ns, cfg->physics.substeps, step);
        cfg->physics.step_s = step;
    } else {
        double tick_ns = cfg->physics.step_s * cfg->physics.substeps * 1e9;
        if (fabs(tick_ns - (double)cfg->rt.period_ns) > 1.0)
            return hs__cfg_err_field(c, "physics.step_s",
                                     "%g s x %u substeps = %.0f ns differs from rt.period_ns %llu "
                                     "(leave step_s out to derive it)",
                                     cfg->physics.step_s, cfg->physics.substeps, tick_ns,
                                     (unsigned long long)cfg->rt.period_ns);
    }
    if (cfg->budgets.wake_latency_p99_us > cfg->budgets.wake_latency_max_us)
        return hs__cfg_err_field(
            c, "budgets.wake_latency_p99_us", "%g is above wake_latency_max_us %g",
            cfg->budgets.wake_latency_p99_us, cfg->budgets.wake_latency_max_us);
    if (cfg->budgets.wake_latency_max_us > cfg->rt.histogram_max_us)
        return hs__cfg_err_field(c, "budgets.wake_latency_max_us",
                                 "%g is beyond the histogram range rt.histogram_max_us %u",
                                 cfg->budgets.wake_latency_max_us, cfg->rt.histogram_max_us);
    if (cfg->budgets.tick_p9999_fraction_of_period > cfg->budgets.tick_max_fraction_of_period)
        return hs__cfg_err_field(c, "budgets.tick_p9999_fraction_of_period",
                                 "%g is above tick_max_fraction_of_period %g",
                                 cfg->budgets.tick_p9999_fraction_of_period,
                                 cfg->budgets.tick_max_fraction_of_period);
    return 0;
}

static int check_controller(struct hs__ctx *c)
{
    const struct hs_cfg_controller *ct = &c->cfg->controller;
    if (ct->type == HS_CFG_CONTROLLER_TRAJECTORY && !ct->trajectory.joint[0])
        return hs__cfg_err_field(c, "controller.type",
                                 "type trajectory needs controller.trajectory with a joint");
    if (ct->type != HS_CFG_CONTROLLER_TRAJECTORY && ct->trajectory.joint[0])
        return hs__cfg_err_field(c, "controller.trajectory", "only used with type trajectory");
    return 0;
}

bool hs__cfg_tick_multiple(double period_s, double tick_s)
{
    double ratio = period_s / tick_s;
    return ratio >= 1 - 1e-9 && fabs(ratio - round(ratio)) <= 1e-6 * ratio;
}

static int check_sensors(struct hs__ctx *c)
{
    const struct hs_cfg_sensors *s = &c->cfg->sensors;
    double tick_s = (double)c->cfg->rt.period_ns * 1e-9;
    char p[160];
    for (uint32_t i = 0; i < s->nimus; i++) {
        const struct hs_cfg_imu *imu = &s->imus[i];
        if (imu->rate_hz > 0 && !hs__cfg_tick_multiple(1.0 / imu->rate_hz, tick_s)) {
            hs__cfg_pathf(p, sizeof p, "sensors.imu.%s.rate_hz", imu->name);
            return hs__cfg_err_field(c, p, "%g Hz does not divide the tick rate %g Hz",
                                     imu->rate_hz, 1.0 / tick_s);
        }
        if (imu->accel[0] && !strcmp(imu->accel, imu->gyro)) {
            hs__cfg_pathf(p, sizeof p, "sensors.imu.%s.gyro", imu->name);
            return hs__cfg_err_field(c, p, "'%s' is already the accel sensor", imu->gyro);
        }
    }
    for (uint32_t i = 0; i < s->nforce; i++)
        for (uint32_t j = 0; j < s->nimus; j++)
            if (!strcmp(s->force[i].name, s->imus[j].name)) {
                hs__cfg_pathf(p, sizeof p, "sensors.force.%s", s->force[i].name);
                return hs__cfg_err_field(c, p, "'%s' is also an IMU name", s->force[i].name);
            }
    return 0;
}

static bool claims_overlap(const struct hs_cfg_can_claim *a, const struct hs_cfg_can_claim *b)
{
    uint32_t m = a->mask & b->mask;
    return a->ext == b->ext && (a->id & m) == (b->id & m);
}

static bool nodes_clash(const struct hs_cfg_node *n, const struct hs_cfg_node *o)
{
    struct hs_cfg_can_claim cn[HS_CFG_CAN_CLAIMS_MAX], co[HS_CFG_CAN_CLAIMS_MAX];
    unsigned kn = hs__can_proto_cfgs[n->protocol]->claims(n, cn);
    unsigned ko = hs__can_proto_cfgs[o->protocol]->claims(o, co);
    for (unsigned i = 0; i < kn; i++)
        for (unsigned j = 0; j < ko; j++)
            if (claims_overlap(&cn[i], &co[j]))
                return true;
    return false;
}

static int check_can(struct hs__ctx *c)
{
    struct hs_cfg_can *can = &c->cfg->can;
    char p[160];
    for (uint32_t i = 0; i < can->nbuses; i++)
        for (uint32_t j = 0; j < i; j++) {
            if (!strcmp(can->buses[i].name, can->buses[j].name)) {
                hs__cfg_pathf(p, sizeof p, "can.buses[%u].name", i);
                return hs__cfg_err_field(c, p, "'%s' is already the name of can.buses[%u]",
                                         can->buses[i].name, j);
            }
            if (!strcmp(can->buses[i].interface, can->buses[j].interface)) {
                hs__cfg_pathf(p, sizeof p, "can.buses[%u].interface", i);
                return hs__cfg_err_field(c, p, "'%s' is already used by can.buses[%u]",
                                         can->buses[i].interface, j);
            }
        }
    for (uint32_t i = 0; i < can->nnodes; i++) {
        struct hs_cfg_node *n = &can->nodes[i];
        uint32_t b;
        for (b = 0; b < can->nbuses; b++)
            if (!strcmp(can->buses[b].name, n->bus))
                break;
        if (b == can->nbuses) {
            hs__cfg_pathf(p, sizeof p, "can.nodes[%u].bus", i);
            return hs__cfg_err_field(c, p, "'%s' names no bus in can.buses", n->bus);
        }
        n->bus_index = b;
        for (uint32_t j = 0; j < i; j++) {
            const struct hs_cfg_node *o = &can->nodes[j];
            if (!strcmp(n->name, o->name)) {
                hs__cfg_pathf(p, sizeof p, "can.nodes[%u].name", i);
                return hs__cfg_err_field(c, p, "'%s' is already the name of can.nodes[%u]", n->name,
                                         j);
            }
            if (o->bus_index != b || !nodes_clash(n, o))
                continue;
            hs__cfg_pathf(p, sizeof p, "can.nodes[%u].id", i);
            return hs__cfg_err_field(c, p, "id %u clashes with can.nodes[%u] ('%s') on bus '%s'",
                                     n->id, j, o->name, n->bus);
        }
        const struct hs__can_proto_cfg *pc = hs__can_proto_cfgs[n->protocol];
        int r = pc->validate ? pc->validate(c, i) : 0;
        if (r < 0)
            return r;
    }
    /* one driver per joint */
    char key[160], okey[160];
    for (uint32_t i = 0; i < can->nnodes; i++) {
        const char *joint;
        for (uint32_t k = 0;
             (joint = hs__cfg_node_joint(c->cfg, &can->nodes[i], k, key, sizeof key)); k++)
            for (uint32_t j = 0; j < i; j++) {
                const char *other;
                for (uint32_t m = 0;
                     (other = hs__cfg_node_joint(c->cfg, &can->nodes[j], m, okey, sizeof okey));
                     m++)
                    if (!strcmp(joint, other))
                        return hs__cfg_err_field(c, key,
                                                 "joint '%s' is already driven by can.nodes[%u] "
                                                 "('%s')",
                                                 joint, j, can->nodes[j].name);
            }
    }
    return 0;
}

/* rt.clock.sync: the bus must exist (default: the first), the times fit the period. */
static int check_clock_sync(struct hs__ctx *c)
{
    struct hs_cfg_clock_sync *s = &c->cfg->rt.clock.sync;
    const struct hs_cfg_can *can = &c->cfg->can;
    const double period_s = (double)c->cfg->rt.period_ns * 1e-9;
    if (s->lead_s >= period_s)
        return hs__cfg_err_field(c, "rt.clock.sync.lead_s", "%g s must be below the period (%g s)",
                                 s->lead_s, period_s);
    if (s->lock_window_s > period_s / 2)
        return hs__cfg_err_field(c, "rt.clock.sync.lock_window_s",
                                 "%g s must be at most half the period (%g s)", s->lock_window_s,
                                 period_s / 2);
    if (s->source != HS_CFG_SYNC_CAN)
        return 0;
    if (can->nbuses == 0)
        return hs__cfg_err_field(c, "rt.clock.sync.source", "can needs a bus in can.buses");
    s->bus_index = 0;
    if (!s->bus[0])
        return 0;
    for (uint32_t b = 0; b < can->nbuses; b++)
        if (!strcmp(can->buses[b].name, s->bus)) {
            s->bus_index = b;
            return 0;
        }
    return hs__cfg_err_field(c, "rt.clock.sync.bus", "'%s' names no bus in can.buses", s->bus);
}

/* rt.clock.lockstep_source: the named source must exist (auto is resolved where it is used,
 * hs_config_lockstep_source, so a validated config validates again unchanged). */
static int check_lockstep_source(struct hs__ctx *c)
{
    const struct hs_cfg_clock *k = &c->cfg->rt.clock;
    const char *field = "rt.clock.lockstep_source";
    if (k->lockstep_source == HS_CFG_LOCKSTEP_SHM && !c->cfg->shm.enabled)
        return hs__cfg_err_field(c, field, "shm, but shm.enabled is false");
    if (k->lockstep_source == HS_CFG_LOCKSTEP_CAN_FRAME && k->sync.source != HS_CFG_SYNC_CAN)
        return hs__cfg_err_field(
            c, field, "can_frame needs rt.clock.sync.source can (the frame's bus and ID)");
    if (k->lockstep_source == HS_CFG_LOCKSTEP_CAN_COMMANDS && c->cfg->can.nnodes == 0)
        return hs__cfg_err_field(c, field, "can_commands needs nodes in can.nodes");
    return 0;
}

enum hs_cfg_lockstep_source hs_config_lockstep_source(const struct hs_config *cfg)
{
    const struct hs_cfg_clock *k = &cfg->rt.clock;
    if (k->lockstep_source != HS_CFG_LOCKSTEP_AUTO)
        return k->lockstep_source;
    return k->sync.source == HS_CFG_SYNC_CAN ? HS_CFG_LOCKSTEP_CAN_FRAME : HS_CFG_LOCKSTEP_SHM;
}

static int check_sources(struct hs__ctx *c)
{
    const struct hs_config *cfg = c->cfg;
    char p[160];
    if (cfg->actuators.defaults.source == HS_CFG_SOURCE_SHM && !cfg->shm.enabled)
        return hs__cfg_err_field(c, "actuators.defaults.source", "shm, but shm.enabled is false");
    for (uint32_t i = 0; i < cfg->actuators.njoints; i++) {
        const struct hs_cfg_actuator *a = &cfg->actuators.joints[i];
        const struct hs_cfg_node *node = hs_config_node_for_joint(cfg, a->joint);
        hs__cfg_pathf(p, sizeof p, "actuators.joints.%s.source", a->joint);
        if (a->source == HS_CFG_SOURCE_SHM && !cfg->shm.enabled)
            return hs__cfg_err_field(c, p, "shm, but shm.enabled is false");
        if (a->source == HS_CFG_SOURCE_CAN && !node)
            return hs__cfg_err_field(c, p, "can, but no CAN node drives joint '%s'", a->joint);
        if (node && a->source != HS_CFG_SOURCE_CAN && a->source != HS_CFG_SOURCE_AUTO)
            return hs__cfg_err_field(c, p, "%s, but CAN node '%s' drives joint '%s'",
                                     hs__names_source[a->source], node->name, a->joint);
    }
    return 0;
}

static int check_actuators(struct hs__ctx *c)
{
    const struct hs_cfg_actuators *a = &c->cfg->actuators;
    char p[160];
    if (a->defaults.gear_ratio == 0)
        return hs__cfg_err_field(c, "actuators.defaults.gear_ratio", "must not be 0");
    for (uint32_t i = 0; i < a->njoints; i++)
        if (a->joints[i].gear_ratio == 0) {
            hs__cfg_pathf(p, sizeof p, "actuators.joints.%s.gear_ratio", a->joints[i].joint);
            return hs__cfg_err_field(c, p, "must not be 0");
        }
    return 0;
}

static int check_record(struct hs__ctx *c)
{
    const struct hs_cfg_record *r = &c->cfg->record;
    if (r->enabled && r->dir[0] != '/')
        return hs__cfg_err_field(c, "record.dir",
                                 "must be an absolute folder when record.enabled is true");
    if (r->keep_segments && !(r->rotate_mib > 0) && !(r->rotate_s > 0))
        return hs__cfg_err_field(c, "record.keep_segments",
                                 "needs record.rotate_mib or record.rotate_s");
    return 0;
}

int hs__cfg_validate(struct hs__ctx *c)
{
    int (*const rules[])(struct hs__ctx *) = {
        check_models, check_timing,  check_controller, check_actuators,       check_sensors,
        check_can,    check_sources, check_clock_sync, check_lockstep_source, check_record,
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        int r = rules[i](c);
        if (r < 0)
            return r;
    }
    return 0;
}
