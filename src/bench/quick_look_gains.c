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
 * not clamped), except on a free robot's ankles, which carry the robot rather than move the
 * foot: a joint whose subtree is all foot (every link with mass has its centre of mass within
 * HS_FOOT_BAND_M of the lowest one) is sized on what stands on it, the links not beyond the
 * joint, their inertia about the axis taken as moment² / mass (moment = sum of mass × distance
 * of the centre of mass from the axis: the point mass at their centre of mass). On JVRC-1 that
 * gives ~34,000 N·m/rad (the robot leaned 0.07 rad and fell on 476, stood with 0.018 rad on
 * 1,900). A stance joint higher up (a knee, a quadruped's calf) keeps the gains on what it
 * moves: sized on the body it carries too, Unitree's quadrupeds, whose zero pose has the feet
 * ahead of the hips with 3 cm of support margin, held that pose rigidly and tipped over (A1 9°
 * to 17-180°); held as before they crouch into a stance. The drive's torque limit still bounds
 * every joint: the gains are a stiff servo's, the torques the robot's. */
#include <math.h>
#include <stdlib.h>

#include "bench_internal.h"

#define HS_FOOT_BAND_M 0.05

static double com_z(const struct hs_link *l, const struct hs_pose *p)
{
    double c[3];
    hs_pose_apply(p, l->com, c);
    return c[2];
}

static bool in_subtree(const struct hs_model *m, uint32_t k, uint32_t i)
{
    int32_t up = (int32_t)k;
    while (up > (int32_t)i)
        up = m->links[up].parent;
    return up == (int32_t)i;
}

static double link_mass(const struct hs_link *l)
{
    return isfinite(l->mass) && l->mass > 0 ? l->mass : 0.0;
}

/* Joint link i of a free robot holds a foot in its subtree; *ret_rest_mass gets the mass of
 * the links not beyond it. */
static bool stance_joint(const struct hs_model *m, const struct hs_pose *poses, uint32_t i,
                         double zlow, double *ret_rest_mass)
{
    bool foot = false;
    double rest = 0.0;
    for (uint32_t k = 0; k < m->nlinks; k++) {
        if (!in_subtree(m, k, i)) {
            rest += link_mass(&m->links[k]);
            continue;
        }
        if (link_mass(&m->links[k]) > 0) {
            if (com_z(&m->links[k], &poses[k]) >= zlow + HS_FOOT_BAND_M)
                return false; /* not an ankle: its subtree reaches above the foot */
            foot = true;
        }
    }
    *ret_rest_mass = rest;
    return foot;
}

void hs_bench_set_quick_look_gains(struct hs_bench *b, double omega_rad_s)
{
    struct hs_pose *poses = NULL;
    double *scratch = NULL, zlow = INFINITY;
    uint32_t poses_body = UINT32_MAX;
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
        }
        if (!poses || !scratch) {
            j->kp = j->kd = 0.0; /* out of memory: limp */
            continue;
        }
        struct hs__joint_inertia in;
        hs__bench_joint_inertia(m, poses, j->link, scratch, &in);
        double w = omega_rad_s, kp = w * w * in.moved, kd = 2.0 * w * in.moved, rest;
        if (free_root && m->links[j->link].joint_type == HS_JOINT_ROTATE &&
            stance_joint(m, poses, j->link, zlow, &rest) && rest > 0) {
            double load_inertia = in.moment_rest * in.moment_rest / rest;
            double load_kp = w * w * load_inertia;
            if (load_kp > kp) {
                kp = load_kp;
                kd = fmax(kd, 2.0 * w * load_inertia);
            }
        }
        j->kp = kp;
        j->kd = kd;
        hs_plant_set_position_loop(j->plant, j->plant_joint, HS_POSITION_LOOP_ODE_MOTOR);
    }
    free(poses);
    free(scratch);
}
