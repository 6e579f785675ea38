/* The dSpaceCollide callback: filters pairs that must not touch, then either only counts the
 * colliding pair (contactless mode, as in Odin) or turns each contact point into a contact joint.
 * No allocation: contact points go to the preallocated array and contact joints into the
 * world's joint group, whose arena ODE keeps between dJointGroupEmpty calls and which was grown
 * at create for the most contacts a step may make (world_reserve.c). */
#include <math.h>
#include <string.h>
#include <time.h>

#include "world_internal.h"

#ifndef FRICTION_CFM
#define FRICTION_CFM 1e-7 /* m/(N·s) per point: sticking creep = this × tangential force */
#endif

/* Crawler (pseudoContinuousTrack) links are rigid; the track is a conveyor surface: friction
 * direction 1 is axis × n (n pointing from the other geom into the crawler), and the crawler's
 * surface moves along it at the commanded speed relative to the other geom. */
static void crawler_surface(dContact *c, const struct hs__world_link *cr, bool cr_is_g1)
{
    const dReal *R = dBodyGetRotation(cr->body);
    double a[3], n[3], dir[3];
    for (int r = 0; r < 3; r++)
        a[r] = R[r * 4] * cr->axis[0] + R[r * 4 + 1] * cr->axis[1] + R[r * 4 + 2] * cr->axis[2];
    double s = cr_is_g1 ? 1.0 : -1.0;
    for (int k = 0; k < 3; k++)
        n[k] = s * c->geom.normal[k];
    dir[0] = a[1] * n[2] - a[2] * n[1];
    dir[1] = a[2] * n[0] - a[0] * n[2];
    dir[2] = a[0] * n[1] - a[1] * n[0];
    double len = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    if (len < 1e-5)
        return; /* axis along the normal: plain friction */
    for (int k = 0; k < 3; k++)
        c->fdir1[k] = dir[k] / len;
    c->surface.mode |= dContactFDir1 | dContactMotion1 | dContactMu2;
    c->surface.mu2 = c->surface.mu;
    /* ODE drives (v1 - v2)·fdir1 to motion1. */
    c->surface.motion1 = s * cr->track_speed_mps;
}

bool hs__world_may_touch(const struct hs_world *w, dGeomID g1, dGeomID g2)
{
    const struct hs__world_link *l1 = dGeomGetData(g1), *l2 = dGeomGetData(g2);
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    if (b1 == b2) /* two geoms of one link, or two static geoms */
        return false;
    /* Two bodies that cannot move (static, or kinematic if a caller made one so): no contact. */
    if ((!b1 || dBodyIsKinematic(b1)) && (!b2 || dBodyIsKinematic(b2)))
        return false;
    if (l1->owner != l2->owner)
        return !(b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact));
    return w->params.self_collision && !hs__world_links_jointed(l1, l2);
}

/* By the model, not by ODE's joints between bodies: a link merged into its parent's body
 * (world_merge.c) shares that body, so its children's joints connect them to the parent's
 * geoms as well, which a self-colliding robot must still see. A link and its parent touch at
 * their joint by design (also where a static fixed root has no body); so do the two links of a
 * ball ExtraJoint (a piston's pair is joined only through its slider block). */
bool hs__world_links_jointed(const struct hs__world_link *l1, const struct hs__world_link *l2)
{
    const struct hs_model *m = l1->owner->model;
    int32_t i1 = (int32_t)l1->link_index, i2 = (int32_t)l2->link_index;
    if (m->links[i1].parent == i2 || m->links[i2].parent == i1)
        return true;
    for (uint32_t k = 0; k < m->nextra_joints; k++) {
        const struct hs_extra_joint *e = &m->extra_joints[k];
        if (e->type == HS_EXTRA_BALL &&
            ((e->link1 == i1 && e->link2 == i2) || (e->link1 == i2 && e->link2 == i1)))
            return true;
    }
    return false;
}

void hs__world_near_callback(void *data, dGeomID g1, dGeomID g2)
{
    struct hs_world *w = data;
    if (!hs__world_may_touch(w, g1, g2))
        return;
    const struct hs__world_link *l1 = dGeomGetData(g1), *l2 = dGeomGetData(g2);
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int n = dCollide(g1, g2, (int)w->params.max_contacts, w->contact_geoms, sizeof(dContactGeom));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    {
        int c1 = dGeomGetClass(g1), c2 = dGeomGetClass(g2);
        c1 = c1 >= 0 && c1 < HS__PAIR_CLASSES ? c1 : HS__PAIR_CLASSES - 1;
        c2 = c2 >= 0 && c2 < HS__PAIR_CLASSES ? c2 : HS__PAIR_CLASSES - 1;
        struct hs__world_pair_acc *a = &w->pair_acc[c1 < c2 ? c1 : c2][c1 < c2 ? c2 : c1];
        a->calls++;
        a->ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
    }
    if (n <= 0)
        return;
    w->npairs++;
    if (w->params.contactless)
        return;
    const struct hs__world_link *cr = NULL;
    if (l1->type == HS_JOINT_CRAWLER && b1)
        cr = l1;
    else if (l2->type == HS_JOINT_CRAWLER && b2)
        cr = l2;
    const struct hs__world_surface *sf = &w->surfaces[l1->material][l2->material];
    /* A pair's stiffness and damping are shared by its points (world_material.c). */
    double cfm = sf->per_point ? sf->cfm1 : sf->cfm1 * n;
    for (int i = 0; i < n; i++) {
        /* ODE's arenas were sized at create for contacts_cap contacts (world_reserve.c): one
         * more would make ODE allocate inside the tick. Dropped points are counted. */
        if (w->ncontacts >= w->contacts_cap) {
            w->contacts_dropped += (uint64_t)(n - i);
            break;
        }
        dContact c;
        memset(&c, 0, sizeof c);
        c.geom = w->contact_geoms[i];
        if (c.geom.depth > w->step_depth)
            w->step_depth = c.geom.depth;
        /* The friction rows' own CFM (ODE's slip): left unset they take the world's CFM, the
         * joints' compliance (1e-4 by default), which makes sticking friction a viscous damper
         * of 1/CFM per point: a 20 kg block on a 0.3 rad slope at mu 1 crept 1.4 mm/s. Zero
         * would make a face's redundant friction rows singular for the exact solver (a block
         * sliding at mu 0.2 then met 3/4 of its friction, measured). */
        c.surface.mode =
            dContactApprox1 | dContactSoftERP | dContactSoftCFM | dContactSlip1 | dContactSlip2;
        c.surface.mu = sf->mu;
        c.surface.slip1 = c.surface.slip2 = FRICTION_CFM;
        c.surface.soft_erp = sf->erp;
        c.surface.soft_cfm = cfm;
        if (sf->bounce > 0) {
            c.surface.mode |= dContactBounce;
            c.surface.bounce = sf->bounce;
            c.surface.bounce_vel = w->params.bounce_min_vel;
        }
        hs__world_surface(w, l1, l2, &c.surface); /* URDF per-link mu, kp, kd */
        if (cr)
            crawler_surface(&c, cr, cr == l1);
        dJointID j = dJointCreateContact(w->world, w->contact_group, &c);
        dJointAttach(j, b1, b2);
        /* Contact feedback for the health's per-link force sums, while buffers last. */
        if (w->nfeedback < w->feedback_cap) {
            uint32_t k = w->nfeedback++;
            dJointSetFeedback(j, &w->feedback[k]);
            /* A joint on one body keeps that body's force in f1 whichever side it was
             * attached on (ODE reverses a (0, b) attachment): the static geom may come first
             * in a pair (the quadtree's order, world_create.c). */
            w->feedback_link[2 * k] = (struct hs__world_link *)(b1 ? l1 : l2);
            w->feedback_link[2 * k + 1] = b1 && b2 ? (struct hs__world_link *)l2 : NULL;
            /* ODE's normal points into g1; f1 is the force on b1's link, or on l2's when b1 is
             * static (the joint was attached (0, b2) and ODE swapped its sides). */
            struct hs__world_contact_pt *pt = &w->contact_pts[k];
            pt->on = b1 ? l1 : l2;
            pt->other = b1 ? l2 : l1;
            double s = b1 ? 1.0 : -1.0;
            for (int a = 0; a < 3; a++) {
                pt->pos[a] = c.geom.pos[a];
                pt->normal[a] = s * c.geom.normal[a];
            }
        }
        w->ncontacts++;
    }
}
