#include <math.h>

#include "bench_internal.h"

/* Inertia of link i's subtree about joint i's axis at the current pose, plus the joint's own
 * reflected rotor inertia. Links are ordered parent first, so a link is in the subtree when
 * walking its parents reaches i. */
static double subtree_inertia(struct hs_bench *b, uint32_t body, uint32_t i)
{
    const struct hs_model *m = b->models[body];
    struct hs_pose pi;
    hs_world_link_pose(b->world, body, i, &pi);
    double a[3];
    hs_rot_apply(pi.R, m->links[i].axis, a);
    double sum = m->links[i].rotor_inertia * m->links[i].gear_ratio * m->links[i].gear_ratio;
    for (uint32_t k = i; k < m->nlinks; k++) {
        int32_t up = (int32_t)k;
        while (up > (int32_t)i)
            up = m->links[up].parent;
        if (up != (int32_t)i)
            continue;
        const struct hs_link *l = &m->links[k];
        struct hs_pose pk;
        hs_world_link_pose(b->world, body, k, &pk);
        double c[3], r[3], la[3], Ia[3];
        hs_pose_apply(&pk, l->com, c);
        for (int j = 0; j < 3; j++)
            r[j] = c[j] - pi.p[j];
        /* a^T (R I R^T) a = (R^T a)^T I (R^T a) */
        hs_rot_apply_transpose(pk.R, a, la);
        hs_rot_apply(l->inertia, la, Ia);
        double along = r[0] * a[0] + r[1] * a[1] + r[2] * a[2];
        double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] - along * along;
        sum += la[0] * Ia[0] + la[1] * Ia[1] + la[2] * Ia[2] + l->mass * d2;
    }
    return sum;
}

void hs_bench_set_auto_gains(struct hs_bench *b, double omega_rad_s)
{
    for (uint32_t i = 0; i < b->njoints; i++) {
        struct hs_bench_joint *j = &b->joints[i];
        const struct hs_link *l = &b->models[j->body]->links[j->link];
        double inertia =
            l->joint_type == HS_JOINT_ROTATE ? subtree_inertia(b, j->body, j->link) : 0.0;
        if (l->joint_type == HS_JOINT_SLIDE)
            for (uint32_t k = j->link; k < b->models[j->body]->nlinks; k++) {
                int32_t up = (int32_t)k;
                while (up > (int32_t)j->link)
                    up = b->models[j->body]->links[up].parent;
                if (up == (int32_t)j->link)
                    inertia += b->models[j->body]->links[k].mass;
            }
        /* Critically damped at omega: kp = w² I, kd = 2 w I. */
        j->kp = omega_rad_s * omega_rad_s * inertia;
        j->kd = 2.0 * omega_rad_s * inertia;
    }
}
