#include "world/model_builders.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/diag.h"

struct hs_model *mb_new(const char *name, uint32_t nlinks, uint32_t ngeoms, uint32_t nextra)
{
    struct hs_model *m = calloc(1, sizeof *m);
    m->links = calloc(nlinks, sizeof *m->links);
    m->geoms = calloc(ngeoms + 1, sizeof *m->geoms);
    m->extra_joints = calloc(nextra + 1, sizeof *m->extra_joints);
    m->nlinks = nlinks;
    m->nextra_joints = nextra;
    snprintf(m->name, sizeof m->name, "%s", name);
    for (uint32_t i = 0; i < nlinks; i++) {
        struct hs_link *l = &m->links[i];
        snprintf(l->name, sizeof l->name, "L%u", i);
        l->parent = (int32_t)i - 1;
        l->joint_type = i == 0 ? HS_JOINT_FREE : HS_JOINT_FIXED;
        l->joint_id = -1;
        hs_pose_identity(&l->origin);
        l->axis[2] = 1;
        l->ulimit = l->uvlimit = INFINITY;
        l->llimit = l->lvlimit = -INFINITY;
        l->gear_ratio = l->gear_efficiency = l->torque_const = l->encoder_pulse = 1;
        mb_mass(l, 1.0, 0, 0, 0, 1e-3, 1e-3, 1e-3);
        l->source_line = 1;
    }
    return m;
}

void mb_free(struct hs_model *m)
{
    if (!m)
        return;
    free(m->links);
    free(m->geoms);
    free(m->extra_joints);
    free(m);
}

void mb_mass(struct hs_link *l, double mass, double cx, double cy, double cz, double ixx,
             double iyy, double izz)
{
    l->mass = mass;
    l->com[0] = cx, l->com[1] = cy, l->com[2] = cz;
    memset(l->inertia, 0, sizeof l->inertia);
    l->inertia[0] = ixx, l->inertia[4] = iyy, l->inertia[8] = izz;
}

void mb_joint(struct hs_link *l, enum hs_joint_type t, double ax, double ay, double az)
{
    l->joint_type = t;
    l->axis[0] = ax, l->axis[1] = ay, l->axis[2] = az;
}

void mb_box(struct hs_model *m, uint32_t li, double sx, double sy, double sz, double px, double py,
            double pz)
{
    struct hs_geom *g = &m->geoms[m->ngeoms];
    g->type = HS_GEOM_BOX;
    hs_pose_identity(&g->pose);
    g->pose.p[0] = px, g->pose.p[1] = py, g->pose.p[2] = pz;
    g->u.box.size[0] = sx, g->u.box.size[1] = sy, g->u.box.size[2] = sz;
    struct hs_link *l = &m->links[li];
    if (l->geom_count == 0)
        l->geom_first = m->ngeoms;
    l->geom_count++;
    m->ngeoms++;
}

struct hs_model *mb_floor(void)
{
    struct hs_model *m = mb_new("floor", 1, 1, 0);
    m->links[0].joint_type = HS_JOINT_FIXED;
    mb_box(m, 0, 10, 10, 0.2, 0, 0, -0.1);
    return m;
}

struct hs_model *mb_cube(double a, double mass)
{
    struct hs_model *m = mb_new("cube", 1, 1, 0);
    double i = mass * a * a / 6;
    mb_mass(&m->links[0], mass, 0, 0, 0, i, i, i);
    mb_box(m, 0, a, a, a, 0, 0, 0);
    return m;
}

struct hs_model *mb_crawler(void)
{
    struct hs_model *m = mb_new("crawler", 3, 3, 0);
    mb_mass(&m->links[0], 5, 0, 0, 0.03, 0.05, 0.08, 0.1);
    mb_box(m, 0, 0.4, 0.3, 0.04, 0, 0, 0.03);
    for (int i = 1; i <= 2; i++) {
        mb_joint(&m->links[i], HS_JOINT_CRAWLER, 0, 1, 0);
        m->links[i].parent = 0;
        m->links[i].origin.p[1] = i == 1 ? 0.175 : -0.175;
        mb_mass(&m->links[i], 0.5, 0, 0, 0, 1e-3, 1e-3, 1e-3);
        mb_box(m, (uint32_t)i, 0.4, 0.05, 0.1, 0, 0, 0);
    }
    return m;
}

struct hs_world *mb_world(const struct hs_world_params *p, const struct hs_world_body_spec *s,
                          uint32_t n)
{
    struct hs_world *w = NULL;
    struct hs_diag d = {0};
    int r = hs_world_create(p, s, n, &w, &d);
    if (r)
        fail_msg("hs_world_create: %d %s", r, d.msg);
    return w;
}

struct hs_world *mb_on_floor(const struct hs_model *floor, const struct hs_model *m, double z,
                             const struct hs_world_params *p)
{
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], m);
    s[1].root_pose.p[2] = z;
    return mb_world(p, s, 2);
}
