/* The quick look's hold (`hilsim sim --model`): what a position-controlled servo does, on every
 * joint the demo controller drives.
 *
 * The loop is implicit (HS_POSITION_LOOP_ODE_MOTOR, hilsim/actuator.h): a real servo closes its
 * position loop many times per simulation step, so the PD that the step sees is solved with the
 * step, not held from its start. That removes the explicit stability bound (auto_gains.c), which
 * had to size a joint on the least inertia its torque meets within one tick and left JVRC-1's
 * ankles (sized on the foot: ~135 N·m/rad) unable to hold the robot over its feet (~460).
 *
 * The gains: critically damped at the bandwidth on the inertia the joint moves (as auto_gains.c,
 * not clamped), except on a free robot's stance joints (a joint whose subtree holds a foot: a
 * link whose centre of mass is within HS_FOOT_BAND_M of the lowest one), which carry the robot
 * rather than move what is beyond them:
 *  - an ankle (its subtree is all foot) is sized on what stands on it, the links not beyond the
 *    joint, their inertia about the axis taken as moment² / mass (moment = the sum of mass ×
 *    distance of the centre of mass from the axis: the point mass at their centre of mass). On
 *    JVRC-1 that is ~34,000 N·m/rad: it leaned 0.07 rad and fell on 476, stood leaning 0.018 rad
 *    on 1,900;
 *  - on a robot standing on one or two feet, a stance joint higher up (knee, hip) is at least
 *    HS_BUCKLING_MARGIN times its share of the load's gravity moment, g × moment / feet (the
 *    inverted pendulum's threshold: below it the leg buckles, and a sagging leg topples a biped:
 *    Unitree H1 fell backwards on a knee of ~200 N·m/rad, and under quick-step at 16 iterations
 *    and SOR 1.2 also on twice the threshold, 310; it stands on four times). With three or more
 * feet the support polygon holds a robot whose legs sag: Unitree's quadrupeds, whose zero pose puts
 * the feet ahead of the hips, crouch into a stance on the gains on what each joint moves; held
 *    stiffer they end more tilted (A1 9° to 15-17°) or, sized on the body like an ankle, tip
 *    over. They keep those gains.
 * The drive's torque limit still bounds every joint: the gains are a stiff servo's, the torques
 * the robot's. */
#include <math.h>
#include <stdlib.h>

#include "bench_internal.h"

#define HS_FOOT_BAND_M 0.05
#define HS_BUCKLING_MARGIN 4.0 /* H1 fell on 2 under quick-step at 16 iterations, SOR 1.2 */

static double com_z(const struct hs_link *l, const struct hs_pose *p)
{
    double c[3];
    hs_pose_apply(p, l->com, c);
    return c[2];
}

static double link_mass(const struct hs_link *l)
{
    return isfinite(l->mass) && l->mass > 0 ? l->mass : 0.0;
}

static bool is_foot(const struct hs_model *m, const struct hs_pose *poses, uint32_t k, double zlow)
{
    return link_mass(&m->links[k]) > 0 && com_z(&m->links[k], &poses[k]) < zlow + HS_FOOT_BAND_M;
}

/* The feet a free robot stands on: foot links whose parent is not a foot link. */
static uint32_t count_feet(const struct hs_model *m, const struct hs_pose *poses, double zlow)
{
    uint32_t n = 0;
    for (uint32_t k = 1; k < m->nlinks; k++)
        n += is_foot(m, poses, k, zlow) &&
             !(m->links[k].parent >= 0 && is_foot(m, poses, (uint32_t)m->links[k].parent, zlow));
    return n;
}

enum stance { NOT_STANCE, STANCE, ANKLE };

/* Joint link i holds a foot in its subtree (STANCE), and nothing but feet (ANKLE: every link
 * with mass is a foot); *ret_rest_mass gets the mass of the links not beyond it. */
static enum stance stance_joint(const struct hs_model *m, const struct hs_pose *poses, uint32_t i,
                                double zlow, double *ret_rest_mass)
{
    bool foot = false, all_foot = true;
    double rest = 0.0;
    for (uint32_t k = 0; k < m->nlinks; k++) {
        if (!hs__bench_in_subtree(m, k, i)) {
            rest += link_mass(&m->links[k]);
        } else if (link_mass(&m->links[k]) > 0) {
            bool f = is_foot(m, poses, k, zlow);
            foot = foot || f;
            all_foot = all_foot && f;
        }
    }
    *ret_rest_mass = rest;
    return !foot ? NOT_STANCE : all_foot ? ANKLE : STANCE;
}

void hs_bench_set_quick_look_gains(struct hs_bench *b, double omega_rad_s)
{
    const double *gv = b->cfg->physics.gravity;
    double g = sqrt(gv[0] * gv[0] + gv[1] * gv[1] + gv[2] * gv[2]);
    struct hs_pose *poses = NULL;
    double *scratch = NULL, zlow = INFINITY;
    uint32_t poses_body = UINT32_MAX, nfeet = 0;
    bool free_root = false;
    for (uint32_t i = 0; i < b->njoints; i++) {
        struct hs_bench_joint *j = &b->joints[i];
        const struct hs_model *m = b->models[j->body];
        if (poses_body != j->body) {
            free(poses);
            free(scratch);
            poses = calloc(m->nlinks, sizeof *poses);
            scratch = calloc(m->nlinks, sizeof *scratch);
            poses_body = j->body;
            zlow = INFINITY;
            for (uint32_t k = 0; poses && k < m->nlinks; k++) {
                hs_world_link_pose(b->world, j->body, k, &poses[k]);
                if (link_mass(&m->links[k]) > 0)
                    zlow = fmin(zlow, com_z(&m->links[k], &poses[k]));
            }
            free_root = m->nlinks && m->links[0].joint_type == HS_JOINT_FREE;
            nfeet = poses ? count_feet(m, poses, zlow) : 0;
        }
        if (!poses || !scratch) {
            j->kp = j->kd = 0.0; /* out of memory: limp */
            continue;
        }
        struct hs__joint_inertia in;
        hs__bench_joint_inertia(m, poses, j->link, scratch, &in);
        double w = omega_rad_s, kp = w * w * in.moved, kd = 2.0 * w * in.moved, rest;
        enum stance st = free_root && m->links[j->link].joint_type == HS_JOINT_ROTATE
                             ? stance_joint(m, poses, j->link, zlow, &rest)
                             : NOT_STANCE;
        if (st == ANKLE && rest > 0) {
            double load_inertia = in.moment_rest * in.moment_rest / rest;
            if (w * w * load_inertia > kp) {
                kp = w * w * load_inertia;
                kd = fmax(kd, 2.0 * w * load_inertia);
            }
        } else if (st == STANCE && nfeet > 0 && nfeet <= 2) {
            kp = fmax(kp, HS_BUCKLING_MARGIN * g * in.moment_rest / nfeet);
        }
        j->kp = kp;
        j->kd = kd;
        hs_plant_set_position_loop(j->plant, j->plant_joint, HS_POSITION_LOOP_ODE_MOTOR);
    }
    free(poses);
    free(scratch);
}
