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
static bool member_mass(const struct hs_link *l, double armature, bool alone, double *ret_mass,
                        double I[9])
{
    if (alone || (hs__world_inertia_pd(l->inertia) && inertia_finite(l->inertia))) {
        dMass m;
        bool fixup = hs__world_link_mass(l, armature, &m);
        *ret_mass = m.mass;
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                I[r * 3 + c] = m.I[r * 4 + c];
        return fixup;
    }
    *ret_mass = l->mass;
    for (int r = 0; r < 3; r++) /* symmetric part only; the sum is checked by the caller */
        for (int c = 0; c < 3; c++)
            I[r * 3 + c] = inertia_finite(l->inertia)
                               ? 0.5 * (l->inertia[r * 3 + c] + l->inertia[c * 3 + r])
                               : 0.0;
    return false;
}

/* The sums are written out rather than made with dMassRotate / dMassTranslate / dMassAdd:
 * those check every intermediate mass and ODE reports a point mass (a zero tensor) as "inertia
 * must be positive definite", though only the sum must be. */
uint32_t hs__world_group_mass(const struct hs_link *eff, const struct hs_pose *pose0,
                              const uint32_t *owner, uint32_t n, uint32_t o, double armature,
                              dMass *ret_m, double ret_com[3])
{
    uint32_t fixups = 0, with_mass = 0;
    for (uint32_t k = o; k < n; k++)
        with_mass += owner[k] == o && mass_usable(&eff[k]);
    struct hs_pose inv;
    hs_pose_inverse(&pose0[o], &inv);
    /* About o's link origin, o's axes: total mass, first moment, inertia. */
    double mt = 0, mc[3] = {0, 0, 0}, Io[9] = {0};
    for (uint32_t k = o; k < n; k++) {
        if (owner[k] != o || (!mass_usable(&eff[k]) && (with_mass > 0 || k != o)))
            continue;
        double mk, Ik[9], RI[9], Rt[9], Ir[9], c[3];
        fixups += member_mass(&eff[k], k == o ? armature : 0.0, with_mass <= 1, &mk, Ik);
        struct hs_pose rel; /* link k in o's frame: a fixed offset */
        hs_pose_mul(&inv, &pose0[k], &rel);
        hs_pose_apply(&rel, eff[k].com, c);
        hs_rot_mul(rel.R, Ik, RI);
        hs_rot_transpose(rel.R, Rt);
        hs_rot_mul(RI, Rt, Ir);
        double c2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++) /* parallel axis to o's origin */
                Io[r * 3 + q] += Ir[r * 3 + q] + mk * ((r == q ? c2 : 0.0) - c[r] * c[q]);
        mt += mk;
        for (int i = 0; i < 3; i++)
            mc[i] += mk * c[i];
    }
    double C[3] = {mc[0] / mt, mc[1] / mt, mc[2] / mt}, I[9];
    double C2 = C[0] * C[0] + C[1] * C[1] + C[2] * C[2];
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++) /* back from o's origin to the centre of mass */
            I[r * 3 + q] = Io[r * 3 + q] - mt * ((r == q ? C2 : 0.0) - C[r] * C[q]);
    for (int r = 0; r < 3; r++) /* exact symmetry, as ODE expects */
        for (int q = 0; q < r; q++)
            I[r * 3 + q] = I[q * 3 + r] = 0.5 * (I[r * 3 + q] + I[q * 3 + r]);
    if (!hs__world_inertia_pd(I)) {
        /* Point masses on one line: the fallback sphere's tensor on top keeps ODE's solver
         * regular (world_mass.c). */
        for (int r = 0; r < 3; r++)
            I[r * 4] += 0.4 * mt * 0.01 * 0.01;
        fixups++;
    }
    dMassSetZero(ret_m);
    ret_m->mass = mt;
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
            ret_m->I[r * 4 + q] = I[r * 3 + q];
    memcpy(ret_com, C, sizeof C);
    return fixups;
}
