/* Fixed-link merging: a link joined to its parent by a fixed joint becomes part of the
 * parent's ODE body instead of a body of its own held by a dFixedJoint.
 *
 * Why: quick-step solves a fixed joint's six rows iteratively like any other, so between a
 * light link and a heavy one fixed to it (RH2's pan-tilt carries a 0.1 kg·m² sensor on 5 g
 * links) 20 iterations leave the pair turning against each other within a tick; the tuned-gain
 * bound had to count such a joint as a ball joint (src/bench/joint_inertia.c). One rigid body
 * has no rows to converge, and every body and joint fewer is solver time saved (perf/
 * merge_bench.c measures both variants side by side).
 *
 * What stays: a fixed joint that a force sensor sits on (its constraint force is the
 * measurement) keeps its own body and joint; the root is never merged (a fixed root is
 * scenery already, world_build.c), but a link fixed to a fixed root becomes part of that
 * scenery. Everything that refers to a link by name keeps working: the merged link keeps its
 * hs__world_link with its geoms (carrying its own link, so contact filtering, materials and the
 * per-link contact force sums still see it), and its pose and velocity come from the body's
 * composed with its fixed offset (in_body). */
#include <math.h>
#include <string.h>

#include "world_internal.h"

static bool force_sensor_on(const struct hs_model *m, uint32_t link)
{
    for (uint32_t k = 0; k < m->nsensors; k++)
        if (m->sensors[k].type == HS_SENSOR_FORCE && m->sensors[k].link == (int32_t)link)
            return true;
    return false;
}

void hs__world_merge_plan(const struct hs_model *m, bool merge, uint32_t *ret_owner)
{
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        bool merged =
            merge && l->parent >= 0 && l->joint_type == HS_JOINT_FIXED && !force_sensor_on(m, i);
        ret_owner[i] = merged ? ret_owner[l->parent] : i;
    }
}

static bool mass_usable(const struct hs_link *l)
{
    return isfinite(l->mass) && l->mass > 0;
}

static bool inertia_finite(const double I[9])
{
    for (int i = 0; i < 9; i++)
        if (!isfinite(I[i]))
            return false;
    return true;
}

/* Link k's mass about its own centre of mass with link-frame axes: the model's tensor where
 * it is positive definite; a point mass where it is not but the group has more mass to make
 * the sum positive definite (a URDF fixed frame often declares a mass with a zero tensor);
 * otherwise world_mass.c's fallback. */
static bool member_mass(const struct hs_link *l, double armature, bool alone, dMass *ret)
{
    if (alone || (hs__world_inertia_pd(l->inertia) && inertia_finite(l->inertia)))
        return hs__world_link_mass(l, armature, ret);
    dMassSetZero(ret);
    ret->mass = l->mass;
    if (inertia_finite(l->inertia)) /* symmetric part only; the sum is checked below */
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                ret->I[r * 4 + c] = 0.5 * (l->inertia[r * 3 + c] + l->inertia[c * 3 + r]);
    return false;
}

uint32_t hs__world_group_mass(const struct hs_link *eff, const struct hs_pose *pose0,
                              const uint32_t *owner, uint32_t n, uint32_t o, double armature,
                              dMass *ret_m, double ret_com[3])
{
    uint32_t fixups = 0, with_mass = 0;
    for (uint32_t k = o; k < n; k++)
        with_mass += owner[k] == o && mass_usable(&eff[k]);
    struct hs_pose inv;
    hs_pose_inverse(&pose0[o], &inv);
    dMassSetZero(ret_m);
    bool any = false;
    for (uint32_t k = o; k < n; k++) {
        if (owner[k] != o || (!mass_usable(&eff[k]) && (with_mass > 0 || k != o)))
            continue;
        dMass mk;
        fixups += member_mass(&eff[k], k == o ? armature : 0.0, with_mass <= 1, &mk);
        /* To o's frame: turn by the fixed offset's rotation, then move the centre of mass to
         * where it sits in o's frame (ODE's parallel-axis shift). */
        struct hs_pose rel;
        double c[3];
        hs_pose_mul(&inv, &pose0[k], &rel);
        hs_pose_apply(&rel, eff[k].com, c);
        dMatrix3 R;
        hs__rot_to_ode(rel.R, R);
        dMassRotate(&mk, R);
        dMassTranslate(&mk, c[0], c[1], c[2]);
        if (any)
            dMassAdd(ret_m, &mk);
        else
            *ret_m = mk;
        any = true;
    }
    for (int k = 0; k < 3; k++)
        ret_com[k] = ret_m->c[k];
    dMassTranslate(ret_m, -ret_com[0], -ret_com[1], -ret_com[2]);
    double I[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            I[r * 3 + c] = ret_m->I[r * 4 + c];
    if (!hs__world_inertia_pd(I)) {
        /* Point masses on one line: the fallback sphere's tensor on top keeps ODE's solver
         * regular (world_mass.c). */
        dMass s;
        dMassSetSphereTotal(&s, ret_m->mass, 0.01);
        for (int r = 0; r < 3; r++)
            ret_m->I[r * 4 + r] += s.I[r * 4 + r];
        fixups++;
    }
    for (int k = 0; k < 3; k++)
        ret_m->c[k] = 0; /* exactly: dBodySetMass wants the centre of mass at the frame */
    return fixups;
}
