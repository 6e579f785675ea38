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
 * RH2's tilt left the guard's rate bound in 10 ms; the standard solver holds it. Merging fixed
 * links into one body (physics.merge_fixed_links, src/world/world_merge.c) does not make this
 * unnecessary, measured on RH2_withoutArm_withBumpSensor: merged, with the fixed joint counted
 * rigid here, the tilt still tripped the guard at tick 11 (140 rad/s; 73 rad/s unmerged): the
 * tilt's torque reacts on the 5 g pan link, whose hinge rows between the 32 kg base and the
 * 0.1 kg·m² tilt body quick-step leaves as loose as the fixed joint was. Counted as a ball
 * joint, the merged robot stands (test_quick_look_robots). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "bench_internal.h"

#define HS_PD_STABILITY_SHARE 0.5

double hs__bench_pd_bandwidth_max(double tuned_inertia, double effective_inertia, double h_s)
{
    if (!(effective_inertia > 0) || !(h_s > 0))
        return 0.0;
    if (!(tuned_inertia > 0))
        return INFINITY; /* nothing to drive: any bandwidth gives zero gains */
    double r = tuned_inertia / effective_inertia;
    return 2.0 * (sqrt(1.0 + HS_PD_STABILITY_SHARE / r) - 1.0) / h_s;
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
    }
    free(poses);
    free(scratch);
    free(eff);
}
