/* Resting a robot on the scenery before the first step.
 *
 * A URDF's floating base sits at the origin, so with a floor whose top is z = 0 the legs start
 * inside it; the contacts then throw the robot out within the warm-up and its joints pass the
 * divergence guard (Unitree Go2 in the quick look). A body that asks for it (spec
 * rest_on_static: the quick look with --env, or the config's models[].rest_on_static) is
 * raised so its lowest geom is 1 mm above the highest static geom. Axis-aligned bounding
 * boxes are conservative: a robot over a slope starts above the slope's highest point.
 *
 * A fixed root is raised the same way, before the first step, and never moves after: OpenHRP's
 * ClosedLinkSample lies in the plane z = 0, half inside the quick look's floor, and its links,
 * pushed out by the contacts and held back by the PD, chattered at hundreds of rad/s for as
 * long as it ran. Its static geoms and pose move with the bodies, and the joints to the world
 * are anchored again where their bodies now are. A slide joint to the world would measure its
 * position from the old place (ODE keeps that offset), so such a robot stays where it is. */
#include <math.h>

#include "world_internal.h"

#define HS_REST_GAP_M 1e-3

static double static_top(struct hs_world *w)
{
    double top = -INFINITY, aabb[6];
    int n = hs__world_ngeoms(w);
    for (int i = 0; i < n; i++) {
        dGeomID g = hs__world_geom(w, i);
        const struct hs__world_link *l = dGeomGetData(g);
        if (!l || !l->owner->is_static)
            continue;
        dGeomGetAABB(g, aabb);
        if (aabb[5] > top)
            top = aabb[5];
    }
    return top;
}

static double body_bottom(struct hs_world *w, const struct hs__world_body *wb)
{
    double low = INFINITY, aabb[6];
    int n = hs__world_ngeoms(w);
    for (int i = 0; i < n; i++) {
        dGeomID g = hs__world_geom(w, i);
        const struct hs__world_link *l = dGeomGetData(g);
        if (!l || l->owner != wb)
            continue;
        dGeomGetAABB(g, aabb);
        if (aabb[4] < low)
            low = aabb[4];
    }
    return low;
}

/* The links joined to the world (the fixed root's children) by a joint that can be anchored
 * again after a move: hinges and fixed joints. */
static bool world_joints_movable(const struct hs__world_body *wb)
{
    for (uint32_t i = 0; i < wb->model->nlinks; i++) {
        dJointID j = wb->links[i].joint;
        if (j && !dJointGetBody(j, 1) && dJointGetType(j) != dJointTypeHinge &&
            dJointGetType(j) != dJointTypeFixed)
            return false;
    }
    for (uint32_t k = 0; k < 2 * wb->model->nextra_joints; k++)
        if (wb->extra_joints[k] &&
            (!dJointGetBody(wb->extra_joints[k], 0) || !dJointGetBody(wb->extra_joints[k], 1)))
            return false;
    return true;
}

static void raise_fixed_root(struct hs_world *w, struct hs__world_body *wb, double dz)
{
    int n = hs__world_ngeoms(w);
    for (int i = 0; i < n; i++) {
        dGeomID g = hs__world_geom(w, i);
        const struct hs__world_link *l = dGeomGetData(g);
        if (!l || l->owner != wb || dGeomGetBody(g))
            continue;
        const dReal *p = dGeomGetPosition(g);
        dGeomSetPosition(g, p[0], p[1], p[2] + dz);
    }
    for (uint32_t i = 0; i < wb->model->nlinks; i++)
        if (!wb->links[i].body)
            wb->links[i].static_pose.p[2] += dz;
}

/* After its bodies moved: the joints to the world where the bodies now are. */
static void anchor_world_joints(struct hs__world_body *wb)
{
    for (uint32_t i = 0; i < wb->model->nlinks; i++) {
        dJointID j = wb->links[i].joint;
        if (!j || dJointGetBody(j, 1))
            continue;
        if (dJointGetType(j) == dJointTypeHinge) {
            dVector3 a; /* on body 1, which has moved */
            dJointGetHingeAnchor(j, a);
            dJointSetHingeAnchor(j, a[0], a[1], a[2]);
        } else {
            dJointSetFixed(j);
        }
    }
}

void hs__world_place_on_static(struct hs_world *w, const struct hs_world_body_spec *specs,
                               uint32_t nspecs)
{
    double top = NAN;
    for (uint32_t b = 0; b < nspecs; b++) {
        struct hs__world_body *wb = &w->bodies[b];
        if (!specs[b].rest_on_static || wb->is_static || !wb->model->nlinks)
            continue;
        bool fixed_root = !wb->links[0].body && wb->links[0].type == HS_JOINT_FIXED;
        if (!fixed_root && (!wb->links[0].body || wb->links[0].type != HS_JOINT_FREE))
            continue;
        if (fixed_root && !world_joints_movable(wb))
            continue;
        if (isnan(top))
            top = static_top(w);
        double low = body_bottom(w, wb);
        if (!isfinite(top) || !isfinite(low) || low >= top - HS_REST_GAP_M)
            continue;
        double dz = top + HS_REST_GAP_M - low;
        if (fixed_root)
            raise_fixed_root(w, wb, dz);
        for (uint32_t i = 0; i < wb->model->nlinks; i++) {
            dBodyID body = wb->links[i].body;
            if (!body || wb->links[i].body_link != i) /* merged: its owner's body moves it */
                continue;
            const dReal *p = dBodyGetPosition(body);
            dBodySetPosition(body, p[0], p[1], p[2] + dz);
        }
        for (uint32_t k = 0; k < wb->model->nextra_joints; k++)
            if (wb->extra_blocks[k]) {
                const dReal *p = dBodyGetPosition(wb->extra_blocks[k]);
                dBodySetPosition(wb->extra_blocks[k], p[0], p[1], p[2] + dz);
            }
        if (fixed_root)
            anchor_world_joints(wb);
    }
}
