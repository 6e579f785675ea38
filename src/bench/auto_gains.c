/* Tuned PD gains that are stable by construction at the bench's tick.
 *
 * The bound. The PD torque is computed once per tick from the state at its start and held for
 * the tick (h = the tick period), and ODE integrates semi-implicitly (velocity first, then
 * position with the new velocity). On an inertia I (kg·m², or a mass for a slide joint):
 *   v' = v + h (-kp x - kd v) / I,   x' = x + h v'.
 * With a = kp h² / I and b = kd h / I the step matrix has the characteristic polynomial
 *   z² - (2 - a - b) z + (1 - b),
 * whose roots lie inside the unit circle (Jury) iff b < 2 and a + 2 b < 4 (and a > 0).
 * I is the inertia the joint's torque meets within one tick: every other PD's torque is held
 * too, so every other joint is free for that tick and I = Ie = 1 / (M^-1)_ii (joint_inertia.c:
 * the Schur complement of the joint-space mass matrix, honest about which way each
 * neighbouring hinge lets the pieces turn; a light hand behind a wrist whose motor reflects a
 * large rotor inertia is what a gain sized for the whole subtree (It, `moved`) drives
 * unstable). An earlier bound took only the rigid pieces on each side as if every neighbouring
 * joint were a free ball joint: far too low on chains of small intermediate links (a biped's
 * hip-roll link between hip yaw and hip pitch), which then sagged to the floor. Robots with
 * large reflected rotor inertias on light links (GR001, RIC30: rotorInertia 1 on 30 g links)
 * diverged under this bound until the world stopped modelling the armature as a needle-shaped
 * tensor J a a^T, whose explicit gyroscopic term is itself unstable (world_mass.c); the bound
 * still takes the armature along the axis only, a lower bound of the world's inertia.
 * Critically damped at w on It: kp = w² It, kd = 2 w It. With r = It / Ie and x = w h:
 *   a + 2 b = r x² + 4 r x,
 * kept at or below 4 s (s = HS_PD_STABILITY_SHARE of the stable region: the joints' PDs are
 * coupled through M, so the modes' bound is not each joint's own, and ODE's constraint solver
 * is iterative):
 *   x <= 2 (sqrt(1 + s / r) - 1).
 * A joint whose requested bandwidth exceeds that gets the clamped bandwidth, and one warning.
 * Under the quick-step solver a fixed joint counts as a ball joint in Ie: its rows are solved
 * iteratively, and between a light link and a heavy one fixed to it (RH2's pan-tilt: 5 g links
 * of a 1 cm sphere's tensor carrying a sensor of 0.1 kg·m²) 20 iterations leave the heavy one
 * behind within the tick, so the torque meets the light link only. Sized on the rigid pair,
 * RH2's tilt left the guard's rate bound in 10 ms; the standard solver holds it. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "bench_internal.h"

#define HS_PD_STABILITY_SHARE 0.5
#define HS_STANCE_FOOT_SHARE 0.1
#define HS_PD_COUPLED_SHARE 0.9
#define HS_PD_COUPLED_ROUNDS 50
#define HS_PD_POWER_STEPS 200
#define HS_PD_MODE_SHARE 0.3

double hs__bench_pd_bandwidth_max(double tuned_inertia, double effective_inertia, double h_s)
{
    if (!(effective_inertia > 0) || !(h_s > 0))
        return 0.0;
    if (!(tuned_inertia > 0))
        return INFINITY; /* nothing to drive: any bandwidth gives zero gains */
    double r = tuned_inertia / effective_inertia;
    return 2.0 * (sqrt(1.0 + HS_PD_STABILITY_SHARE / r) - 1.0) / h_s;
}

/* A joint of a free-rooted body whose subtree holds one of the body's lowest links (a foot):
 * standing, the rest of the body rests on it. Lowest: centre of mass within
 * HS_STANCE_FOOT_SHARE of the body's height (its links' centres of mass) above the lowest. */
static bool stance_joint(const struct hs_model *m, const struct hs_pose *poses, uint32_t i)
{
    if (m->nlinks < 2 || m->links[0].joint_type != HS_JOINT_FREE)
        return false;
    double zmin = INFINITY, zmax = -INFINITY, c[3];
    for (uint32_t k = 0; k < m->nlinks; k++) {
        hs_pose_apply(&poses[k], m->links[k].com, c);
        zmin = fmin(zmin, c[2]);
        zmax = fmax(zmax, c[2]);
    }
    for (uint32_t k = i; k < m->nlinks; k++) {
        int32_t up = (int32_t)k;
        while (up > (int32_t)i)
            up = m->links[up].parent;
        if (up != (int32_t)i)
            continue;
        hs_pose_apply(&poses[k], m->links[k].com, c);
        if (c[2] <= zmin + HS_STANCE_FOOT_SHARE * (zmax - zmin))
            return true;
    }
    return false;
}

/* A stance joint's gains sized on its subtree (the foot) cannot hold the body standing on it:
 * the body's weight topples it about the axis with a stiffness up to g times its gravity
 * moment (moment_rest), far above w² It for a light foot (JVRC-1's ankle: 135 N·m/rad against
 * 62.4 kg × 9.81 m/s² × 0.75 m). Raise kp to that moment, then kd towards critical damping of
 * the body on the joint (2 sqrt(kp Irest)), each only as far as the explicit bound on the
 * inertia the torque meets when the foot is in the air (Ie, the smaller of the two) still
 * allows: kp·h²/Ie + 2·kd·h/Ie within the same share of 4. Both only rise, so the gains stay
 * at least as stiff as the bandwidth's. */
static void hold_stance(struct hs_bench *b, struct hs_bench_joint *j,
                        const struct hs__joint_inertia *in, double ie, double h)
{
    const double *g = b->cfg->physics.gravity;
    double kp_hold = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) * in->moment_rest;
    double room = 4.0 * HS_PD_STABILITY_SHARE * ie; /* kp h² + 2 kd h, N·m·s²/rad */
    if (!(kp_hold > j->kp) || !(room > 0))
        return;
    double kp = fmin(kp_hold, 0.5 * (room - 2.0 * j->kd * h) / (h * h));
    if (kp > j->kp)
        j->kp = kp;
    double kd = fmin(2.0 * sqrt(j->kp * in->rest), (room - j->kp * h * h) / (2.0 * h));
    if (kd > j->kd)
        j->kd = kd;
    if (j->kp < kp_hold)
        hs__bench_warn(b,
                       "%s: stance joint's kp %.3g short of the %.3g its load's gravity moment "
                       "needs: the explicit PD (h = %g s) on the %.3g its torque meets in the air "
                       "bounds it",
                       j->name, j->kp, kp_hold, h, ie);
}

/* Each joint's bound above takes its own torque alone. Joints whose torques meet the same light
 * link together can exceed it (JVRC-1's pelvis between both hips' pitch and the waist's pitch,
 * all parallel, gains sized for 3.15 and 3.3 kg·m²: a mode at 5.5 of 4, which rang at half the
 * tick rate even with rigid joints). The coupled explicit PD is stable while every eigenvalue
 * of M^-1 G, G = diag(kp h² + 2 kd h), is under 4 (each mode then meets the scalar bound,
 * exactly so for proportional kp and kd). The largest is found by power iteration on the
 * similar symmetric G^1/2 M^-1 G^1/2, with M as the world builds it (the armature's raised
 * transverse moments included: with the axial armature only, GR001's modes came out at 9 and
 * lowering them made it sag past 15 degrees, though it holds). While it is beyond
 * HS_PD_COUPLED_SHARE of 4, the joints that carry the mode (eigenvector component at least
 * HS_PD_MODE_SHARE of the largest) have their gains scaled down, with one warning each. */
static void bound_coupled(struct hs_bench *b, uint32_t body, double h)
{
    const struct hs_model *m = b->models[body];
    size_t n = m->nlinks;
    struct hs_pose *poses = calloc(n, sizeof *poses);
    double *eff = calloc(n, sizeof *eff), *minv = calloc(n * n, sizeof *minv);
    double *g = calloc(n, sizeof *g), *scale = calloc(n, sizeof *scale);
    struct hs_bench_joint **by_link = calloc(n, sizeof *by_link);
    bool *warned = calloc(n, sizeof *warned);
    if (!poses || !eff || !minv || !g || !scale || !by_link || !warned)
        goto out;
    for (uint32_t k = 0; k < n; k++)
        hs_world_link_pose(b->world, body, k, &poses[k]);
    if (hs__bench_inverse_mass(m, poses, b->cfg->physics.solver == HS_SOLVER_STANDARD, eff, minv) <
        0)
        goto out;
    for (uint32_t i = 0; i < b->njoints; i++)
        if (b->joints[i].body == body)
            by_link[b->joints[i].link] = &b->joints[i];
    const double limit = 4.0 * HS_PD_COUPLED_SHARE;
    for (int it = 0; it < HS_PD_COUPLED_ROUNDS; it++) {
        for (size_t k = 0; k < n; k++)
            g[k] = by_link[k] ? sqrt(by_link[k]->kp * h * h + 2.0 * by_link[k]->kd * h) : 0.0;
        /* Largest eigenvalue of A = G^1/2 M^-1 G^1/2 (symmetric, positive semi-definite) by
         * power iteration from the all-ones vector; scale[] holds the eigenvector. */
        double lambda = 0.0;
        for (size_t k = 0; k < n; k++)
            scale[k] = g[k] > 0 ? 1.0 : 0.0;
        for (int p = 0; p < HS_PD_POWER_STEPS; p++) {
            double norm = 0.0;
            for (size_t k = 0; k < n; k++) {
                double v = 0.0;
                for (size_t l = 0; g[k] > 0 && l < n; l++)
                    v += g[k] * minv[k * n + l] * g[l] * scale[l];
                eff[k] = v;
                norm += v * v;
            }
            norm = sqrt(norm);
            if (!(norm > 0))
                break;
            double dot = 0.0;
            for (size_t k = 0; k < n; k++) {
                dot += scale[k] * eff[k];
                scale[k] = eff[k] / norm;
            }
            lambda = p == 0 ? norm / sqrt((double)n) : dot;
        }
        if (!(lambda > limit))
            break;
        /* Soften the joints that carry the mode (where the eigenvector is large). */
        double vmax = 0.0;
        for (size_t k = 0; k < n; k++)
            vmax = fmax(vmax, fabs(scale[k]));
        for (size_t k = 0; k < n; k++) {
            if (!by_link[k] || fabs(scale[k]) < HS_PD_MODE_SHARE * vmax)
                continue;
            if (!warned[k])
                hs__bench_warn(b,
                               "%s: tuned PD gains lowered: with the joints whose torques meet the "
                               "same links, a mode of the explicit PD (h = %g s) had kp·h²/I + "
                               "2·kd·h/I = %.3g, over %.3g",
                               by_link[k]->name, h, lambda, limit);
            warned[k] = true;
            by_link[k]->kp *= limit / lambda;
            by_link[k]->kd *= limit / lambda;
        }
    }
out:
    free(poses);
    free(eff);
    free(minv);
    free(g);
    free(scale);
    free(by_link);
    free(warned);
}

void hs_bench_set_auto_gains(struct hs_bench *b, double omega_rad_s)
{
    double h = (double)b->period_ns * 1e-9;
    struct hs_pose *poses = NULL;
    double *scratch = NULL, *eff = NULL;
    int er = 0;
    uint32_t poses_body = UINT32_MAX;
    for (uint32_t i = 0; i < b->njoints; i++) {
        struct hs_bench_joint *j = &b->joints[i];
        const struct hs_model *m = b->models[j->body];
        if (poses_body != j->body) {
            free(poses);
            free(scratch);
            free(eff);
            poses = calloc(m->nlinks, sizeof *poses);
            scratch = calloc(m->nlinks, sizeof *scratch);
            eff = calloc(m->nlinks, sizeof *eff);
            poses_body = j->body;
            for (uint32_t k = 0; poses && k < m->nlinks; k++)
                hs_world_link_pose(b->world, j->body, k, &poses[k]);
            er = poses && eff ? hs__bench_effective_inertias_as(
                                    m, poses, b->cfg->physics.solver == HS_SOLVER_STANDARD, eff)
                              : -ENOMEM;
            if (er == -EDOM)
                hs__bench_warn(b, "%s: mass matrix not positive definite: tuned gains left at 0",
                               m->name);
        }
        if (!poses || !scratch || er < 0) {
            j->kp = j->kd = 0.0; /* out of memory: limp rather than unstable */
            continue;
        }
        struct hs__joint_inertia in;
        hs__bench_joint_inertia(m, poses, j->link, scratch, &in);
        double w = omega_rad_s;
        double wmax = hs__bench_pd_bandwidth_max(in.moved, eff[j->link], h);
        const char *unit = m->links[j->link].joint_type == HS_JOINT_SLIDE ? "kg" : "kg·m²";
        if (w > wmax) {
            w = wmax;
            hs__bench_warn(b,
                           "%s: tuned PD bandwidth %g rad/s clamped to %.3g rad/s: the gains for "
                           "the %.3g %s it moves must keep the explicit PD (h = %g s) on the "
                           "%.3g %s its torque meets within one tick within half its stable bound "
                           "kp·h²/I + 2·kd·h/I < 4",
                           j->name, omega_rad_s, w, in.moved, unit, h, eff[j->link], unit);
        }
        /* Critically damped at w: kp = w² I, kd = 2 w I. */
        j->kp = w * w * in.moved;
        j->kd = 2.0 * w * in.moved;
        if (stance_joint(m, poses, j->link))
            hold_stance(b, j, &in, eff[j->link], h);
    }
    free(poses);
    free(scratch);
    free(eff);
    for (uint32_t i = 0; i < b->njoints; i++) {
        bool first = true;
        for (uint32_t k = 0; k < i && first; k++)
            first = b->joints[k].body != b->joints[i].body;
        if (first)
            bound_coupled(b, b->joints[i].body, h);
    }
}
