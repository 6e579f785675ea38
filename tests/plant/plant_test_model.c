#include "plant_test_model.h"

#include <math.h>
#include <ode/ode.h>
#include <stdio.h>
#include <stdlib.h>

struct hs_model *tm_new(uint32_t nlinks, uint32_t nsensors)
{
    struct hs_model *m = calloc(1, sizeof *m);
    m->links = calloc(nlinks, sizeof *m->links);
    m->sensors = calloc(nsensors ? nsensors : 1, sizeof *m->sensors);
    m->nlinks = nlinks;
    m->nsensors = nsensors;
    snprintf(m->name, sizeof m->name, "plant_test");
    for (uint32_t i = 0; i < nlinks; i++) {
        struct hs_link *l = &m->links[i];
        snprintf(l->name, sizeof l->name, "L%u", i);
        l->parent = (int32_t)i - 1;
        l->joint_type = i == 0 ? HS_JOINT_FIXED : HS_JOINT_ROTATE;
        l->joint_id = (int32_t)i - 1;
        hs_pose_identity(&l->origin);
        l->axis[2] = 1;
        l->ulimit = INFINITY, l->llimit = -INFINITY;
        l->uvlimit = INFINITY, l->lvlimit = -INFINITY;
        l->gear_ratio = 1, l->gear_efficiency = 1, l->torque_const = 1, l->encoder_pulse = 1;
        l->mass = 1;
        tm_set_inertia(l, 0.01, 0.01, 0.01);
    }
    m->njoint_ids = nlinks ? nlinks - 1 : 0;
    for (uint32_t s = 0; s < nsensors; s++) {
        struct hs_sensor *se = &m->sensors[s];
        snprintf(se->name, sizeof se->name, "S%u", s);
        se->sensor_id = (int32_t)s;
        hs_pose_identity(&se->pose);
        for (int k = 0; k < 3; k++)
            se->max[k] = se->u.force.max_torque[k] = -1;
    }
    return m;
}

void tm_set_inertia(struct hs_link *l, double ixx, double iyy, double izz)
{
    for (int k = 0; k < 9; k++)
        l->inertia[k] = 0;
    l->inertia[0] = ixx, l->inertia[4] = iyy, l->inertia[8] = izz;
}

void tm_free(struct hs_model *m)
{
    if (!m)
        return;
    free(m->links);
    free(m->sensors);
    free(m);
}

struct hs_world *tm_world(const struct hs_model *m, double gz, const double *armature,
                          const double *dq0)
{
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.solver = HS_SOLVER_STANDARD;
    p.cfm = 1e-10; /* rigid joints: these checks are exact to 1e-9 (the default is compliant) */
    p.gravity[2] = gz;
    struct hs_world_body_spec spec = {.model = m, .armature = armature, .dq0 = dq0};
    hs_pose_identity(&spec.root_pose);
    struct hs_world *w = NULL;
    struct hs_diag d;
    dRandSetSeed(0);
    if (hs_world_create(&p, &spec, 1, &w, &d))
        return NULL;
    return w;
}
