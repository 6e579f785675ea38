#include "reload.h"

#include <stdio.h>
#include <string.h>

#include "hilsim/log.h"
#include "hilsim/service/runner.h"

static void add(char *buf, unsigned long size, const char *name)
{
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "%s%s", n ? ", " : "", name);
}

static int models_differ(const struct hs_config *a, const struct hs_config *b)
{
    if (a->nmodels != b->nmodels || a->ninitial_joints != b->ninitial_joints)
        return 1;
    for (uint32_t i = 0; i < a->nmodels; i++) {
        const struct hs_cfg_model *x = &a->models[i], *y = &b->models[i];
        if (strcmp(x->name, y->name) || strcmp(x->file, y->file) || x->is_static != y->is_static ||
            memcmp(x->position, y->position, sizeof x->position) ||
            memcmp(x->rotation, y->rotation, sizeof x->rotation))
            return 1;
    }
    for (uint32_t i = 0; i < a->ninitial_joints; i++) {
        const struct hs_cfg_initial_joint *x = &a->initial_joints[i], *y = &b->initial_joints[i];
        if (strcmp(x->joint, y->joint) || x->q != y->q || x->dq != y->dq)
            return 1;
    }
    return 0;
}

/* Source positions (line/column) are part of some entries; they change when only comments or
 * spacing change, so entries are compared with their positions masked. */
#define SAME_SECTION(a, b, field) (memcmp(&(a)->field, &(b)->field, sizeof((a)->field)) == 0)

void hs__config_frozen_diff(const struct hs_config *a, const struct hs_config *b, char *buf,
                            unsigned long size)
{
    buf[0] = 0;
    if (strcmp(a->bench.name, b->bench.name))
        add(buf, size, "bench.name");
    if (models_differ(a, b))
        add(buf, size, "models");
    if (!SAME_SECTION(a, b, physics))
        add(buf, size, "physics");
    if (!SAME_SECTION(a, b, rt))
        add(buf, size, "rt");
    if (!SAME_SECTION(a, b, shm))
        add(buf, size, "shm");
    if (!SAME_SECTION(a, b, trace))
        add(buf, size, "trace");
    /* The remaining sections carry source positions; compare copies with them cleared. */
    static struct hs_config x, y; /* supervisor thread only: too large for its stack */
    x = *a;
    y = *b;
    struct {
        const char *name;
        int differ;
    } rest[4];
    for (uint32_t i = 0; i < HS_CFG_MAX_JOINTS; i++) {
        memset(&x.actuators.joints[i].src, 0, sizeof x.actuators.joints[i].src);
        memset(&y.actuators.joints[i].src, 0, sizeof y.actuators.joints[i].src);
        memset(&x.controller.joints[i].src, 0, sizeof x.controller.joints[i].src);
        memset(&y.controller.joints[i].src, 0, sizeof y.controller.joints[i].src);
        memset(&x.sensors.encoders[i].src, 0, sizeof x.sensors.encoders[i].src);
        memset(&y.sensors.encoders[i].src, 0, sizeof y.sensors.encoders[i].src);
    }
    memset(&x.actuators.defaults.src, 0, sizeof x.actuators.defaults.src);
    memset(&y.actuators.defaults.src, 0, sizeof y.actuators.defaults.src);
    memset(&x.controller.defaults.src, 0, sizeof x.controller.defaults.src);
    memset(&y.controller.defaults.src, 0, sizeof y.controller.defaults.src);
    memset(&x.sensors.encoder_defaults.src, 0, sizeof x.sensors.encoder_defaults.src);
    memset(&y.sensors.encoder_defaults.src, 0, sizeof y.sensors.encoder_defaults.src);
    for (uint32_t i = 0; i < HS_CFG_MAX_IMUS; i++) {
        memset(&x.sensors.imus[i].src, 0, sizeof x.sensors.imus[i].src);
        memset(&y.sensors.imus[i].src, 0, sizeof y.sensors.imus[i].src);
    }
    for (uint32_t i = 0; i < HS_CFG_MAX_FORCE_SENSORS; i++) {
        memset(&x.sensors.force[i].src, 0, sizeof x.sensors.force[i].src);
        memset(&y.sensors.force[i].src, 0, sizeof y.sensors.force[i].src);
    }
    rest[0].name = "actuators", rest[0].differ = !SAME_SECTION(&x, &y, actuators);
    rest[1].name = "controller", rest[1].differ = !SAME_SECTION(&x, &y, controller);
    rest[2].name = "sensors", rest[2].differ = !SAME_SECTION(&x, &y, sensors);
    /* Buses and nodes: compare the fields that matter, not pointers to DBC paths. */
    int can = x.can.nbuses != y.can.nbuses || x.can.nnodes != y.can.nnodes;
    for (uint32_t i = 0; !can && i < x.can.nbuses; i++)
        can = strcmp(x.can.buses[i].name, y.can.buses[i].name) ||
              strcmp(x.can.buses[i].interface, y.can.buses[i].interface) ||
              x.can.buses[i].bitrate_bps != y.can.buses[i].bitrate_bps ||
              x.can.buses[i].fd != y.can.buses[i].fd;
    for (uint32_t i = 0; !can && i < x.can.nnodes; i++)
        can = strcmp(x.can.nodes[i].name, y.can.nodes[i].name) ||
              x.can.nodes[i].protocol != y.can.nodes[i].protocol ||
              x.can.nodes[i].id != y.can.nodes[i].id ||
              strcmp(x.can.nodes[i].joint, y.can.nodes[i].joint);
    rest[3].name = "can", rest[3].differ = can;
    for (int i = 0; i < 4; i++)
        if (rest[i].differ)
            add(buf, size, rest[i].name);
}

void hs__runner_reload(struct hs_runner *r)
{
    const struct hs_config *fresh = NULL;
    struct hs_diag d = {0};
    if (hs_config_load_sets(r->o.config, r->o.sets, r->o.nsets, &fresh, &d) < 0) {
        char msg[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
        hs_diag_format(&d, msg, sizeof msg);
        hs_log(HS_LOG_ERR, "SIGHUP: keeping the running config: %s", msg);
        return;
    }
    char frozen[256];
    hs__config_frozen_diff(r->cfg, fresh, frozen, sizeof frozen);
    if (frozen[0])
        hs_log(HS_LOG_WARNING,
               "SIGHUP: refused changes to %s: they need a restart (the model, the period, the "
               "buses and the segment are built once)",
               frozen);
    if (memcmp(&r->budgets, &fresh->budgets, sizeof r->budgets)) {
        r->budgets = fresh->budgets;
        hs_log(HS_LOG_INFO, "SIGHUP: applied new budgets");
    } else if (!frozen[0]) {
        hs_log(HS_LOG_INFO, "SIGHUP: config unchanged");
    }
    hs_config_free(fresh);
}
