/* Adaptive quick-step iterations (params.quick_iterations_min > 0; the default runs 8 .. 12).
 *
 * ODE 0.16's quick step shuffles its rows at random (its global generator) at its 8th
 * iteration; with 8 or fewer it sweeps them in one fixed order. On a scene at rest, a robot
 * standing on its feet, that fixed order converges as far as SR1's contact goals ask, without
 * the shuffle's tick-to-tick noise (no force jump, no IMU noise) at 0.76x the step of 12
 * (perf/measurements.md). Where contacts move (slide, roll, drive) or bodies rest on each
 * other, the same fixed order leaves a bias that the motion integrates (a crawler veered 2.5 cm
 * in 0.6 m, a tower of 60 cubes came apart), and the full count with ODE's shuffle is what
 * holds them. So, like an
 * iterative solver that stops once converged, a step runs the minimum only while the scene is
 * calm, judged after the step's collision from its contacts, the bodies' motion and the step
 * before's solver health:
 *   - the penetration within half its budget, the joint error within its budget (solver
 *     health, world_health.c);
 *   - every body with a contact of this step slower than REST_MPS and turning slower than
 *     REST_RAD_S (sliding, rolling, landing, driven tracks: the contacts a fixed order was seen
 *     to bias, even at a swing's turning point);
 *   - every body with a joint turning slower than QUASI_STATIC_RAD_S: its joints then carry
 *     nearly static loads (gravity, the drives), which the fixed order converges as it does at
 *     rest; faster (a spinning wheel, a swinging limb) the centripetal and gyroscopic loads grow
 *     with the square of the rate and want the full count (a pendulum spinning at 5 rad/s reads
 *     its IMU within 2.35 % at 12, 1.26 % at 16). A link's speed loads its joints only
 *     through its rate of turn and its acceleration, both small in a slow motion, so a robot
 *     whose feet stay put while its joints move slowly stays calm (SR1 swaying: perf/README.md);
 *   - all of that for REST_STEPS steps in a row; a body without rows (falling free) has nothing
 *     to solve;
 *   - no contact between two dynamic bodies (stacks, grasps, self-collision), and none beyond
 *     the contacts the health sees (it could not judge them).
 * A step that is not calm sets the full count (quick_iterations) at once. A calm scene lowers
 * it every CALM_STEPS steps: from a shuffled count straight to 8 (the jumps measured there are
 * the shuffle's own), below 8 by one while the contact force jump stays under an eighth of its
 * budget; above a quarter of it a count of 8 or fewer grows by half (the answer of that count
 * jumps). The jump is not judged for CALM_STEPS steps after a change: the answer then moves
 * from one count's fixed point to the other's (a 1 kg cube: 0.06 N for a few steps, then 0).
 * Everything read is simulated state, so a replay of the same inputs takes the same counts
 * (bit-exact); the loops are bounded by the world's bodies and the health's contacts, nothing
 * is allocated. */
#include <math.h>

#include "world_internal.h"

/* A robot held still on compliant joints rocks at a few mm/s (SR1 under a PD hold: its chest
 * at 2 to 9 mm/s for seconds); a 0.25 Hz sway of ±0.03 rad passes its turning points below
 * 1 cm/s for about a third of a second. */
#define REST_MPS 0.01  /* m/s */
#define REST_RAD_S 0.1 /* rad/s */
/* Loads that grow with the rate stay small beside gravity below this: the centripetal
 * acceleration of a point 0.5 m from the axis (a limb's length) is 0.125 m/s², about 1 % of g.
 * SR1 with every joint's target swinging ±0.01 rad at 0.5 Hz turns its arm links at up to
 * 0.36 rad/s (a bound of 0.3 kept it at 12 for half of that motion); a chain swinging as slowly
 * follows the exact solver within 4e-5 of its amplitude at 8 (tests/world/test_world_iterations).
 */
#define QUASI_STATIC_RAD_S 0.5 /* rad/s */
#define REST_STEPS 500 /* a scene is at rest once calm this long: not a swing's turning point */
#define CALM_STEPS 10  /* hysteresis: calm steps before each lowering */
#define UNSHUFFLED 8   /* ODE 0.16 shuffles its rows at its 8th iteration: 8 or fewer do not */

static double rate2(dBodyID b)
{
    const dReal *om = dBodyGetAngularVel(b);
    return om[0] * om[0] + om[1] * om[1] + om[2] * om[2];
}

static bool moving(dBodyID b)
{
    const dReal *v = dBodyGetLinearVel(b);
    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2] > REST_MPS * REST_MPS ||
           rate2(b) > REST_RAD_S * REST_RAD_S;
}

/* The scene, judged after this step's collision, before its solve: the contacts are this
 * step's (their joints now on the bodies), the health figures the step before's. */
static bool scene_calm(const struct hs_world *w)
{
    const struct hs_world_health_budget *bu = &w->params.health;
    const struct hs_world_health_sample *h = &w->health_last;
    if (h->penetration_m > 0.5 * bu->max_penetration_m || h->joint_error_m > bu->max_joint_error_m)
        return false;
    if (w->ncontacts > w->nfeedback)
        return false;
    for (uint32_t k = 0; k < w->nfeedback; k++) {
        const struct hs__world_contact_pt *c = &w->contact_pts[k];
        if (c->other->body || moving(c->on->body))
            return false;
    }
    for (uint32_t i = 0; i < w->nall_bodies; i++)
        if (rate2(w->all_bodies[i]) > QUASI_STATIC_RAD_S * QUASI_STATIC_RAD_S &&
            dBodyGetNumJoints(w->all_bodies[i]) > 0)
            return false;
    return true;
}

void hs__world_adapt_iterations(struct hs_world *w)
{
    const struct hs_world_params *p = &w->params;
    if (!p->quick_iterations_min || p->solver != HS_SOLVER_QUICK)
        return;
    uint32_t it = w->iterations ? w->iterations : p->quick_iterations;
    double jb = p->health.max_force_jump_ratio * w->weight_n;
    /* The step before's jump, unless the count changed within CALM_STEPS: the answer then
     * moves from one count's fixed point to the other's, a transient of a few steps. */
    double r = jb > 0 && isfinite(jb) && w->same_count_steps >= CALM_STEPS
                   ? w->health_last.force_jump_n / jb
                   : 0;
    /* A shuffled count's jumps are the shuffle's own: they say nothing against 8. */
    bool to_unshuffled = it > UNSHUFFLED && p->quick_iterations_min <= UNSHUFFLED;
    if (!scene_calm(w)) {
        it = p->quick_iterations;
        w->calm_steps = 0;
        w->rest_steps = 0;
    } else if (w->rest_steps < REST_STEPS) {
        w->rest_steps++;
    } else if (r > 0.25 && !to_unshuffled) { /* this count leaves the answer jumping */
        it += it / 2 + 1;
        w->calm_steps = 0;
    } else if (++w->calm_steps >= CALM_STEPS) {
        if (to_unshuffled)
            it = UNSHUFFLED;
        else if (r < 0.125 && it > p->quick_iterations_min)
            it--;
        w->calm_steps = 0;
    }
    if (it > p->quick_iterations)
        it = p->quick_iterations;
    if (it < p->quick_iterations_min)
        it = p->quick_iterations_min;
    if (it != w->iterations) {
        w->same_count_steps = 0;
        dWorldSetQuickStepNumIterations(w->world, (int)it);
    } else if (w->same_count_steps < CALM_STEPS) {
        w->same_count_steps++;
    }
    w->iterations = it;
}
