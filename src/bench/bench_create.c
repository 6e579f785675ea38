#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

/* Two entries loading one file with one mesh_collision share the first one's hulls (one qhull
 * run per mesh, one copy in memory); the models are freed together in hs_bench_destroy. */
static int load_models(struct hs_bench *b, struct hs_diag *diag)
{
    enum hs_mesh_approx approx[HS_CFG_MAX_MODELS];
    for (uint32_t i = 0; i < b->cfg->nmodels; i++) {
        struct hs_model_package pk[HS_CFG_MAX_PACKAGES];
        struct hs_model_options opts;
        hs_config_model_options(b->cfg, i, pk, &opts);
        approx[i] = opts.mesh_approx;
        for (uint32_t j = 0; j < i && !opts.hull_source; j++)
            if (approx[j] == opts.mesh_approx &&
                !strcmp(b->cfg->models[j].file, b->cfg->models[i].file))
                opts.hull_source = b->models[j];
        int r = hs_model_load_opts(b->cfg->models[i].file, &opts, &b->models[i], diag);
        if (r < 0)
            return r;
        b->nmodels = i + 1;
        if ((r = hs_config_add_model_sensors(b->cfg, i, b->models[i], diag)) < 0)
            return r;
    }
    return hs_config_check_against_models(b->cfg, (const struct hs_model *const *)b->models,
                                          b->nmodels, diag);
}

/* Initial joint states of model i from the config, per link index. */
static int initial_state(const struct hs_bench *b, uint32_t i, double *q0, double *dq0,
                         struct hs_diag *diag)
{
    const struct hs_cfg_model *cm = &b->cfg->models[i];
    for (uint32_t k = 0; k < cm->initial_count; k++) {
        const struct hs_cfg_initial_joint *ij = &b->cfg->initial_joints[cm->initial_first + k];
        int link = hs_model_find_link(b->models[i], ij->joint);
        if (link < 0)
            return hs_diag_set(diag, -EINVAL, b->cfg->path, ij->src.line, ij->src.column,
                               "models[%u].initial.joints: model %s has no joint %s", i,
                               b->models[i]->name, ij->joint);
        q0[link] = ij->q;
        dq0[link] = ij->dq;
    }
    /* A joint cannot start beyond its hard stops: ODE would snap it back in the first step at
     * a rate the divergence guard rightly calls a fault (Unitree Go2's calves rest at 0, outside
     * their [-2.72, -0.84] rad). It starts at the nearest limit; bench_warnings.c says so. */
    const struct hs_model *m = b->models[i];
    for (uint32_t l = 0; l < m->nlinks; l++) {
        const struct hs_link *ml = &m->links[l];
        if ((ml->joint_type != HS_JOINT_ROTATE && ml->joint_type != HS_JOINT_SLIDE) ||
            !(ml->llimit <= ml->ulimit))
            continue;
        if (q0[l] > ml->ulimit)
            q0[l] = ml->ulimit;
        else if (q0[l] < ml->llimit)
            q0[l] = ml->llimit;
    }
    return 0;
}

static int build_world(struct hs_bench *b, struct hs_plant_params *pp, struct hs_diag *diag)
{
    struct hs_world_body_spec specs[HS_CFG_MAX_MODELS];
    double *arrays[HS_CFG_MAX_MODELS * 3] = {0};
    int r = 0;
    memset(specs, 0, sizeof specs);
    for (uint32_t i = 0; i < b->nmodels; i++) {
        uint32_t n = b->models[i]->nlinks ? b->models[i]->nlinks : 1;
        double *q0 = calloc(n, sizeof *q0), *dq0 = calloc(n, sizeof *dq0);
        double *arm = calloc(n, sizeof *arm);
        arrays[3 * i] = q0, arrays[3 * i + 1] = dq0, arrays[3 * i + 2] = arm;
        if (!q0 || !dq0 || !arm) {
            r = hs_diag_set(diag, -ENOMEM, b->cfg->path, 0, 0, "out of memory");
            goto out;
        }
        /* The file's root placement (e.g. SR1's waist height) is the default; the config's
         * pose moves the whole model from there. */
        struct hs_pose root;
        hs_pose_mul(&b->cfg->models[i].pose, &b->models[i]->links[0].origin, &root);
        specs[i] = (struct hs_world_body_spec){.model = b->models[i],
                                               .name = b->cfg->models[i].name,
                                               .root_pose = root,
                                               .is_static = b->cfg->models[i].is_static,
                                               .rest_on_static = b->cfg->models[i].rest_on_static,
                                               .q0 = q0,
                                               .dq0 = dq0,
                                               .armature = arm};
        if ((r = initial_state(b, i, q0, dq0, diag)) < 0)
            goto out;
        if (!b->cfg->models[i].is_static &&
            (r = hs_plant_armature(b->models[i], &pp[i], arm)) < 0) {
            hs_diag_set(diag, r, b->cfg->path, 0, 0, "rotor inertia of %s", b->models[i]->name);
            goto out;
        }
    }
    r = hs_world_create(&b->cfg->physics, specs, b->nmodels, &b->world, diag);
    /* The world names a model file where the error is in one; the rest (a material entry's
     * line and column, the warm-up diverging) come from the config: name it. */
    if (r < 0 && diag && !diag->file[0])
        snprintf(diag->file, sizeof diag->file, "%s", b->cfg->path);
out:
    for (uint32_t k = 0; k < HS_CFG_MAX_MODELS * 3; k++)
        free(arrays[k]);
    return r;
}

static int build_tables(struct hs_bench *b)
{
    uint32_t nj = 0, ns = 0;
    for (uint32_t i = 0; i < b->nmodels; i++) {
        if (!b->plants[i])
            continue;
        nj += hs_plant_joint_count(b->plants[i]);
        for (uint32_t s = 0; s < b->models[i]->nsensors; s++) {
            struct hs_sensor_layout lay;
            hs_sensor_layout(&b->models[i]->sensors[s], &lay);
            ns += lay.simulated;
        }
    }
    b->joints = calloc(nj ? nj : 1, sizeof *b->joints);
    b->sensors = calloc(ns ? ns : 1, sizeof *b->sensors);
    if (!b->joints || !b->sensors)
        return -ENOMEM;
    for (uint32_t i = 0; i < b->nmodels; i++) {
        struct hs_plant *p = b->plants[i];
        if (!p)
            continue;
        const struct hs_model *m = b->models[i];
        for (uint32_t j = 0; j < hs_plant_joint_count(p); j++) {
            uint32_t link = hs_plant_joint_link(p, j);
            const char *name = m->links[link].name;
            const struct hs_cfg_gains *g = hs_config_gains(b->cfg, name);
            b->joints[b->njoints++] = (struct hs_bench_joint){
                .name = name,
                .body = i,
                .link = link,
                .plant_joint = j,
                .plant = p,
                .source = hs_config_joint_source(b->cfg, name),
                .cmd = hs_plant_command(p, j),
                .q0 = hs_world_joint_position(b->world, i, link),
                .kp = g->kp,
                .kd = g->kd,
            };
        }
        for (uint32_t s = 0; s < m->nsensors; s++) {
            struct hs_bench_sensor bs = {
                .name = m->sensors[s].name,
                .type = m->sensors[s].type,
                .body = i,
                .model_sensor = s,
                .plant = p,
                .values = hs_plant_sensor_values(p, s),
            };
            hs_sensor_layout(&m->sensors[s], &bs.layout);
            if (bs.layout.simulated)
                b->sensors[b->nsensors++] = bs;
        }
    }
    b->trajectory_joint = -1;
    if (b->cfg->controller.type == HS_CFG_CONTROLLER_TRAJECTORY)
        b->trajectory_joint = hs_bench_find_joint(b, b->cfg->controller.trajectory.joint);
    return 0;
}

int hs_bench_create(const struct hs_config *config, struct hs_bench **ret_bench,
                    struct hs_diag *diag)
{
    struct hs_plant_params pp[HS_CFG_MAX_MODELS];
    memset(pp, 0, sizeof pp);
    struct hs_bench *b = calloc(1, sizeof *b);
    if (!b)
        return hs_diag_set(diag, -ENOMEM, config->path, 0, 0, "out of memory");
    b->cfg = config;
    b->tap = &hs__bench_noop_tap;
    b->period_ns = (int64_t)config->rt.period_ns;
    b->clock_mode = config->rt.clock.mode;
    int r = load_models(b, diag);
    if (r < 0)
        goto fail;
    for (uint32_t i = 0; i < b->nmodels; i++)
        if (!config->models[i].is_static &&
            (r = hs__bench_plant_params(config, b->models[i], &pp[i], diag)) < 0)
            goto fail;
    if ((r = build_world(b, pp, diag)) < 0)
        goto fail;
    for (uint32_t i = 0; i < b->nmodels; i++)
        if (!config->models[i].is_static &&
            (r = hs_plant_create(b->world, i, b->models[i], &pp[i], &b->plants[i], diag)) < 0)
            goto fail;
    for (uint32_t i = 0; i < b->nmodels; i++)
        if (b->plants[i])
            b->live_plants[b->nlive_plants++] = b->plants[i];
    if ((r = build_tables(b)) < 0) {
        hs_diag_set(diag, r, config->path, 0, 0, "out of memory");
        goto fail;
    }
    if ((r = hs__bench_collect_warnings(b)) < 0) {
        hs_diag_set(diag, r, config->path, 0, 0, "out of memory");
        goto fail;
    }
    if (config->controller.bandwidth_rad_s > 0)
        hs_bench_set_auto_gains(b, config->controller.bandwidth_rad_s);
    for (uint32_t i = 0; i < HS_CFG_MAX_MODELS; i++)
        hs_plant_params_free(&pp[i]);
    *ret_bench = b;
    return 0;
fail:
    for (uint32_t i = 0; i < HS_CFG_MAX_MODELS; i++)
        hs_plant_params_free(&pp[i]);
    hs_bench_destroy(b);
    return r;
}

void hs_bench_destroy(struct hs_bench *b)
{
    if (!b)
        return;
    for (uint32_t k = b->nio; k-- > 0;)
        if (b->io[k].ops->destroy)
            b->io[k].ops->destroy(b->io[k].ctx);
    for (uint32_t i = 0; i < HS_CFG_MAX_MODELS; i++)
        hs_plant_destroy(b->plants[i]);
    hs_world_destroy(b->world);
    for (uint32_t i = 0; i < HS_CFG_MAX_MODELS; i++)
        hs_model_free(b->models[i]);
    free(b->joints);
    free(b->sensors);
    hs__bench_free_warnings(b);
    free(b);
}

int hs_bench_add_io(struct hs_bench *b, const struct hs_bench_io_ops *ops, void *ctx)
{
    if (b->nio >= HS_BENCH_MAX_IO)
        return -ENOSPC;
    if (ops->commands || ops->substep || ops->readings) {
        if (b->nstages >= HS_BENCH_MAX_STAGES)
            return -EBUSY;
        struct hs_bench_stage none;
        hs__bench_stage_none(&none);
        b->stage[b->nstages++] = (struct hs_bench_stage){
            .ctx = ctx,
            .commands = ops->commands ? ops->commands : none.commands,
            .substep = ops->substep ? ops->substep : none.substep,
            .readings = ops->readings ? ops->readings : none.readings,
            .taken = true,
        };
    }
    b->io[b->nio++] = (struct hs_bench_io){
        .ops = ops,
        .ctx = ctx,
        .inputs = ops->inputs ? ops->inputs : hs__bench_io_no_inputs,
        .outputs = ops->outputs ? ops->outputs : hs__bench_io_no_outputs,
    };
    if (ops->wait_release)
        b->gates[b->ngates++] = &b->io[b->nio - 1];
    return 0;
}

void hs_bench_claim_joint(struct hs_bench *b, uint32_t i)
{
    b->joints[i].external = true;
}
