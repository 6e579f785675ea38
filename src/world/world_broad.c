/* The broad phase: which geom pairs reach the near callback each step.
 *
 * A world with one robot and self-collision off (the usual bench) can only make contacts between
 * that robot's moving geoms and the scenery: two geoms of the robot never touch (no
 * self-collision), two static geoms never do (hs__world_may_touch). ODE's simple space still
 * tests every pair of its geoms each step, and recomputes every moving geom's bounding box
 * first: for SR1's 34 geoms, 561 pair tests and 33 boxes a step to find the two feet on the
 * floor. So such a world lists, once at create, the robot's geoms with the radius about their
 * body's position that holds each (the farthest corner of its world box at create: a geom rides
 * rigidly on its body, so no point of it is ever farther) and the scenery's geoms; each step it
 * hands ODE (dSpaceCollide2, which applies ODE's own filters: the category and collide bits,
 * the boxes, the geoms' own tests) only the pairs whose sphere meets the scenery geom's box.
 * A pair it leaves out has no point of the robot's geom inside the scenery geom's box, so ODE's
 * collider would have found no contact there: the contacts are the same, and the near callback
 * sees fewer pairs that make none. The pairs come in a fixed order (scenery geom, then the
 * robot's geoms in the space's order at create), so runs replay bit for bit.
 *
 * Every other world (several robots, self-collision, or a quadtree space) collides through
 * dSpaceCollide as before. Per step: no allocation, a loop over the two fixed lists. */
#include <errno.h>
#include <stdlib.h>

#include "world_internal.h"

/* Slack on the holding radius: the box corners are computed in floating point. */
#define REACH_SLACK_M 1e-6

int hs__world_broad_init(struct hs_world *w)
{
    uint32_t ndyn = 0;
    for (uint32_t b = 0; b < w->nbodies; b++)
        ndyn += !w->bodies[b].is_static;
    if (w->params.self_collision || w->geoms || ndyn > 1)
        return 0; /* dSpaceCollide over the whole space */
    int n = hs__world_ngeoms(w);
    w->near_dyn = calloc((size_t)n + 1, sizeof *w->near_dyn);
    w->near_static = calloc((size_t)n + 1, sizeof *w->near_static);
    if (!w->near_dyn || !w->near_static)
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        dGeomID g = hs__world_geom(w, i);
        const struct hs__world_link *l = dGeomGetData(g);
        dBodyID body = dGeomGetBody(g);
        if (body) {
            double r = hs__world_geom_reach(g, body);
            r += REACH_SLACK_M + 1e-9 * r;
            w->near_dyn[w->nnear_dyn++] = (struct hs__world_near){g, body, r * r};
        } else if (!l || l->owner->is_static) {
            /* A static geom of the robot itself (a fixed root) can only meet the robot's own
             * geoms, which self-collision off never collides: left out. */
            w->near_static[w->nnear_static++] = g;
        }
    }
    w->near_pruned = true;
    return 0;
}

void hs__world_broad_free(struct hs_world *w)
{
    free(w->near_dyn);
    free(w->near_static);
}

void hs__world_collide(struct hs_world *w)
{
    if (!w->near_pruned) {
        dSpaceCollide(w->space, w, hs__world_near_callback);
        return;
    }
    for (uint32_t s = 0; s < w->nnear_static; s++) {
        dGeomID sg = w->near_static[s];
        if (!dGeomIsEnabled(sg))
            continue;
        double box[6];
        dGeomGetAABB(sg, box); /* scenery does not move: ODE returns its cached box */
        for (uint32_t i = 0; i < w->nnear_dyn; i++) {
            const struct hs__world_near *d = &w->near_dyn[i];
            const dReal *c = dBodyGetPosition(d->body);
            double d2 = 0;
            for (int k = 0; k < 3; k++) {
                double below = box[2 * k] - c[k], above = c[k] - box[2 * k + 1];
                double e = below > 0 ? below : above > 0 ? above : 0;
                d2 += e * e;
            }
            if (d2 <= d->reach2 && dGeomIsEnabled(d->geom))
                dSpaceCollide2(d->geom, sg, w, hs__world_near_callback);
        }
    }
}
