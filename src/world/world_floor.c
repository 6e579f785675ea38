/* The floor check of the divergence guard: a link of a free-floating robot whose centre of mass
 * stays well under the floor has gone through it (a contact too soft for the load, a fast light
 * link that tunnelled between two steps, a huge torque that drove it down), and nothing under
 * the floor will ever stop it: it falls until the position bound, kilometres later.
 *
 * The floor is physics.guard.floor_z_m when the config gives it, else the lowest surface the
 * scenery offers: every geom without an ODE body (the static models and fixed roots) gives
 * the top of its bounding box when that top is a flat face (a box with an axis upright, an
 * upright cylinder: what floors are made of), and the bottom of its box otherwise (a slope, a
 * mesh: something may rest anywhere on it down to there). So nothing that rests on scenery is
 * ever under the floor, and a world without scenery has no floor and no check (nor has a
 * contactless world, where the floor holds nothing up).
 *
 * "Well under": deeper than the link's own geometry can reach below its centre of mass (the
 * radius of the sphere about the centre of mass that holds its geoms, whatever its orientation)
 * plus floor_depth_m, and for floor_time_s in a row, so a hard landing that compresses a soft
 * contact for a few steps is not a fault. Links without geoms are not checked (nothing of
 * theirs meets the floor). Per step: one compare per checked link, no allocation. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "world_internal.h"

#define UPRIGHT_COS (1.0 - 1e-9) /* a face within ~0.003 deg of level is flat */

/* The lowest surface a piece of scenery offers (see above). */
static double scenery_floor(dGeomID g)
{
    double aabb[6];
    dGeomGetAABB(g, aabb);
    const dReal *R = dGeomGetRotation(g); /* 3x4, rows; column k is local axis k in world */
    int cls = dGeomGetClass(g);
    bool flat = false;
    if (cls == dBoxClass)
        for (int k = 0; k < 3; k++)
            flat |= fabs(R[8 + k]) >= UPRIGHT_COS;
    else if (cls == dCylinderClass)
        flat = fabs(R[10]) >= UPRIGHT_COS;
    return flat ? aabb[5] : aabb[4];
}

/* Radius about the body's centre of mass of the sphere that holds the geom: the farthest
 * corner of its world bounding box (the one-robot broad phase, world_broad.c, uses it too). */
double hs__world_geom_reach(dGeomID g, dBodyID b)
{
    double aabb[6], far2 = 0;
    dGeomGetAABB(g, aabb);
    const dReal *c = dBodyGetPosition(b);
    for (int k = 0; k < 8; k++) {
        double dx = aabb[k & 1] - c[0], dy = aabb[2 + ((k >> 1) & 1)] - c[1],
               dz = aabb[4 + ((k >> 2) & 1)] - c[2];
        double d2 = dx * dx + dy * dy + dz * dz;
        far2 = d2 > far2 ? d2 : far2;
    }
    return sqrt(far2);
}

static bool floating(const struct hs__world_body *wb)
{
    return !wb->is_static && wb->model->nlinks && wb->links[0].body &&
           wb->links[0].type == HS_JOINT_FREE;
}

int hs__world_floor_init(struct hs_world *w)
{
    const struct hs_world_guard *g = &w->params.guard;
    w->floor_z = g->floor_z_m;
    w->nfloor_links = 0;
    int n = hs__world_ngeoms(w);
    bool scenery = false;
    double floor = INFINITY;
    for (int i = 0; i < n; i++) {
        dGeomID geom = hs__world_geom(w, i);
        if (dGeomGetBody(geom) || !dGeomGetData(geom))
            continue;
        scenery = true;
        floor = fmin(floor, scenery_floor(geom));
    }
    if (isnan(w->floor_z))
        w->floor_z = scenery && isfinite(floor) ? floor : NAN;
    /* Contactless (Odin's mode): the floor holds nothing up, falling through it is the mode. */
    if (isnan(w->floor_z) || !(g->floor_depth_m < INFINITY) || w->params.contactless)
        return 0; /* no floor, or the check is off */
    double steps = ceil(g->floor_time_s / w->params.step_s - 1e-9);
    w->floor_steps = steps >= 1 ? (uint32_t)fmin(steps, 1e9) : 1;
    uint32_t cap = 0;
    for (uint32_t b = 0; b < w->nbodies; b++)
        cap += floating(&w->bodies[b]) ? w->bodies[b].model->nlinks : 0;
    if (!cap)
        return 0;
    w->floor_links = calloc(cap, sizeof *w->floor_links);
    if (!w->floor_links)
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        dGeomID geom = hs__world_geom(w, i);
        struct hs__world_link *l = dGeomGetData(geom);
        dBodyID body = dGeomGetBody(geom);
        if (!body || !l || !floating(l->owner) || !l->body)
            continue;
        struct hs__world_floor_link *f = NULL;
        for (uint32_t k = 0; k < w->nfloor_links && !f; k++)
            if (w->floor_links[k].link == l)
                f = &w->floor_links[k];
        if (!f) {
            if (w->nfloor_links >= cap)
                continue;
            f = &w->floor_links[w->nfloor_links++];
            *f = (struct hs__world_floor_link){.link = l, .body = l->body};
        }
        /* Measured from the body the link's check reads (a link's geoms ride on its body). */
        f->reach = fmax(f->reach, hs__world_geom_reach(geom, f->body));
    }
    for (uint32_t k = 0; k < w->nfloor_links; k++) {
        struct hs__world_floor_link *f = &w->floor_links[k];
        f->allowed = f->reach + g->floor_depth_m;
        f->min_z = w->floor_z - f->allowed;
    }
    return 0;
}

void hs__world_floor_free(struct hs_world *w)
{
    free(w->floor_links);
}

void hs__world_floor_reset(struct hs_world *w)
{
    for (uint32_t k = 0; k < w->nfloor_links; k++)
        w->floor_links[k].below = 0;
}

int hs__world_floor_check(struct hs_world *w, const struct hs__world_link **ret_link,
                          double *ret_depth, double *ret_allowed)
{
    for (uint32_t k = 0; k < w->nfloor_links; k++) {
        struct hs__world_floor_link *f = &w->floor_links[k];
        double z = dBodyGetPosition(f->body)[2];
        if (!(z < f->min_z)) {
            f->below = 0;
            continue;
        }
        if (++f->below >= w->floor_steps) {
            *ret_link = f->link;
            *ret_depth = w->floor_z - z;
            *ret_allowed = f->allowed;
            return -ERANGE;
        }
    }
    return 0;
}
