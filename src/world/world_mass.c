/* Mass properties of one link as an ODE dMass: body frame at the link's centre of mass, axes
 * parallel to the link frame (the body rotation equals the link rotation).
 *
 * Guard: VRML models often leave mass or momentsOfInertia at 0 (massless dummy links, point
 * masses). ODE rejects a non-positive-definite inertia (dMassCheck) and a massless body makes
 * the solver singular. A link whose mass is not a positive finite number gets HS_MIN_MASS_KG;
 * a link whose inertia is not symmetric positive definite gets the inertia of a solid sphere of
 * radius HS_FALLBACK_RADIUS_M with the link's mass. Fixing such links rigidly to the parent
 * would be the alternative, but it would change the joint structure the controller sees. */
#include <math.h>
#include <string.h>

#include "world_internal.h"

#define HS_MIN_MASS_KG 1e-3
#define HS_FALLBACK_RADIUS_M 0.01
#define HS_ARMATURE_ANISOTROPY 30.0 /* see the armature below */

bool hs__world_inertia_pd(const double I[9])
{
    for (int i = 0; i < 9; i++)
        if (!isfinite(I[i]))
            return false;
    if (fabs(I[1] - I[3]) > 1e-9 * (fabs(I[1]) + 1e-12) + 1e-12 ||
        fabs(I[2] - I[6]) > 1e-9 * (fabs(I[2]) + 1e-12) + 1e-12 ||
        fabs(I[5] - I[7]) > 1e-9 * (fabs(I[5]) + 1e-12) + 1e-12)
        return false;
    /* Sylvester: all leading principal minors positive. */
    double m1 = I[0];
    double m2 = I[0] * I[4] - I[1] * I[3];
    double m3 = I[0] * (I[4] * I[8] - I[5] * I[7]) - I[1] * (I[3] * I[8] - I[5] * I[6]) +
                I[2] * (I[3] * I[7] - I[4] * I[6]);
    return m1 > 0 && m2 > 0 && m3 > 0;
}

bool hs__world_link_mass(const struct hs_link *link, double armature_kgm2, dMass *ret_m)
{
    bool fixed_up = false;
    double mass = link->mass;
    double I[9];
    for (int i = 0; i < 9; i++)
        I[i] = link->inertia[i];
    if (!isfinite(mass) || mass <= 0) {
        mass = HS_MIN_MASS_KG;
        fixed_up = true;
    }
    if (!hs__world_inertia_pd(I)) {
        double s = 0.4 * mass * HS_FALLBACK_RADIUS_M * HS_FALLBACK_RADIUS_M;
        for (int i = 0; i < 9; i++)
            I[i] = (i % 4 == 0) ? s : 0.0;
        fixed_up = true;
    }
    /* Armature (reflected rotor inertia N² J) of a hinge. ODE has no armature term, so it is
     * added to the child body's inertia tensor about its centre of mass: J along the joint axis
     * a (J a aᵀ), so the moment of inertia about any line parallel to a grows by exactly J and a
     * hinge on a fixed or slowly turning parent sees τ = (I_axis + J) α as with a real geared
     * motor. ODE integrates the gyroscopic term explicitly, and a needle-shaped tensor (a 30 g
     * servo link with rotorInertia 1: principal moments 5e-6, 5e-6, 1) makes Euler's
     * ω̇x = (Iy - Iz) ωy ωz / Ix an instability (GR001, RIC30, OpenHRP's sample1 left the world
     * that way under stable PD gains). So the transverse moments are raised to at least
     * 1/HS_ARMATURE_ANISOTROPY of the axial one: t (1 - a aᵀ) is added, with
     * t = min(J, max(0, (aᵀ I a + J) / K - the smallest diagonal moment)) (exact for the
     * diagonal tensors of VRML files), and J - t along a, so the axial moment still grows by
     * exactly J. K = 30: measured, J on every axis (K = 1) also kept RH2's pan-tilt (5 g links
     * of zero tensor) bounded, but made the bundled biped's arms J heavier about its chest
     * yaw, which its hand-computed gains then under-drive (tests/models: the chest push);
     * K = 100 still let sample1 fall. The price: other joints moving this link see it up to t
     * heavier across the axis than a real rotor makes it. Limits: the extra inertia is
     * attached to the child's absolute rotation, not to the relative joint rate, so the
     * reaction on a fast-turning parent differs from a true rotor model; slide joints get none
     * (ODE has no per-axis mass). bench/joint_inertia.c sizes and bounds tuned gains on J a aᵀ
     * only (its bound is then a lower bound of this tensor's). */
    if (link->joint_type == HS_JOINT_ROTATE && isfinite(armature_kgm2) && armature_kgm2 > 0) {
        const double *a = link->axis;
        double ia = armature_kgm2, dmin = fmin(I[0], fmin(I[4], I[8]));
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                ia += a[r] * I[r * 3 + c] * a[c];
        double t = fmin(armature_kgm2, fmax(0.0, ia / HS_ARMATURE_ANISOTROPY - dmin));
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                I[r * 3 + c] += (armature_kgm2 - t) * a[r] * a[c] + (r == c ? t : 0.0);
    }
    dMassSetZero(ret_m);
    dMassSetParameters(ret_m, mass, 0, 0, 0, I[0], I[4], I[8], I[1], I[2], I[5]);
    return fixed_up;
}

bool hs__world_mass_remove_point(struct hs_link *l, double mb, const double p[3], double ib)
{
    double m1 = l->mass - mb;
    if (!isfinite(l->mass) || !(m1 > 0) || !hs__world_inertia_pd(l->inertia))
        return false;
    double c1[3], dc[3], dp[3], I[9];
    for (int k = 0; k < 3; k++) {
        c1[k] = (l->mass * l->com[k] - mb * p[k]) / m1;
        dc[k] = c1[k] - l->com[k];
        dp[k] = p[k] - l->com[k];
    }
    double dp2 = dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2];
    double dc2 = dc[0] * dc[0] + dc[1] * dc[1] + dc[2] * dc[2];
    /* Parallel axis theorem, both parts referred to the original centre of mass. */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            I[r * 3 + c] = l->inertia[r * 3 + c] - (r == c ? ib : 0.0) -
                           mb * ((r == c ? dp2 : 0.0) - dp[r] * dp[c]) -
                           m1 * ((r == c ? dc2 : 0.0) - dc[r] * dc[c]);
    if (!hs__world_inertia_pd(I))
        return false;
    l->mass = m1;
    memcpy(l->com, c1, sizeof c1);
    memcpy(l->inertia, I, sizeof I);
    return true;
}
