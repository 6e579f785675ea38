/* What one joint moves, from the model's masses at given link poses: the inertia its subtree
 * presents about the axis (what the tuned PD is sized for), the inertia of the rigid pieces on
 * each side of it (what bounds a stable explicit PD), and the gravity moment each side can put
 * on it (what a default torque limit must hold). */
#include <math.h>

#include "bench_internal.h"

/* Link k is in the subtree of link i (links are ordered parent first). */
static bool in_subtree(const struct hs_model *m, uint32_t k, uint32_t i)
{
    int32_t up = (int32_t)k;
    while (up > (int32_t)i)
        up = m->links[up].parent;
    return up == (int32_t)i;
}

/* The link whose joint bounds link k's rigid piece: walk up through fixed joints. */
static uint32_t rigid_head(const struct hs_model *m, uint32_t k)
{
    while (k > 0 && m->links[k].joint_type == HS_JOINT_FIXED)
        k = (uint32_t)m->links[k].parent;
    return k;
}

/* Link k's reflected rotor inertia: the world adds N² J a aᵀ to the child body's tensor. */
static double armature(const struct hs_link *l)
{
    if (l->joint_type != HS_JOINT_ROTATE || !isfinite(l->rotor_inertia) || !isfinite(l->gear_ratio))
        return 0.0;
    return l->rotor_inertia * l->gear_ratio * l->gear_ratio;
}

/* Link k's share of the inertia about the line through p along a (rotate), or its mass
 * (slide); *ret_moment gets its mass times the distance of its centre of mass from that line. */
static double link_about(const struct hs_link *l, const struct hs_pose *pk, const double p[3],
                         const double a[3], bool slide, double *ret_moment)
{
    double c[3], r[3], la[3], Ia[3];
    hs_pose_apply(pk, l->com, c);
    for (int j = 0; j < 3; j++)
        r[j] = c[j] - p[j];
    double along = r[0] * a[0] + r[1] * a[1] + r[2] * a[2];
    double d2 = fmax(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] - along * along, 0.0);
    double mass = isfinite(l->mass) && l->mass > 0 ? l->mass : 0.0;
    *ret_moment = mass * sqrt(d2);
    if (slide)
        return mass;
    /* a^T (R I R^T) a = (R^T a)^T I (R^T a); the armature adds J (a_k . a)^2. */
    hs_rot_apply_transpose(pk->R, a, la);
    hs_rot_apply(l->inertia, la, Ia);
    double ak = la[0] * l->axis[0] + la[1] * l->axis[1] + la[2] * l->axis[2];
    double own = la[0] * Ia[0] + la[1] * Ia[1] + la[2] * Ia[2];
    return (isfinite(own) && own > 0 ? own : 0.0) + mass * d2 + armature(l) * ak * ak;
}

void hs__bench_joint_inertia(const struct hs_model *m, const struct hs_pose *poses, uint32_t i,
                             double *scratch, struct hs__joint_inertia *ret)
{
    const struct hs_link *li = &m->links[i];
    bool slide = li->joint_type == HS_JOINT_SLIDE;
    double a[3];
    hs_rot_apply(poses[i].R, li->axis, a);
    double an = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    for (int j = 0; j < 3; j++)
        a[j] = an > 0 ? a[j] / an : 0.0;
    uint32_t parent_head = li->parent >= 0 ? rigid_head(m, (uint32_t)li->parent) : 0;
    /* The parent's piece is immovable when it is the root and the root is not free (fixed to
     * the world, or a hinge or slider on it). */
    bool parent_fixed =
        li->parent < 0 || (parent_head == 0 && m->links[0].joint_type != HS_JOINT_FREE);
    *ret = (struct hs__joint_inertia){0};
    for (uint32_t k = 0; k < m->nlinks; k++) {
        double moment;
        scratch[k] = link_about(&m->links[k], &poses[k], poses[i].p, a, slide, &moment);
        if (in_subtree(m, k, i)) {
            ret->moved += scratch[k];
            ret->moment_moved += moment;
            if (rigid_head(m, k) == i)
                ret->child_piece += scratch[k];
        } else {
            ret->moment_rest += moment;
            if (rigid_head(m, k) == parent_head)
                ret->parent_piece += scratch[k];
        }
    }
    if (parent_fixed)
        ret->parent_piece = INFINITY;
    /* Relative acceleration of the two pieces under a torque pair tau: tau (1/Ic + 1/Ip). */
    double ic = ret->child_piece, ip = ret->parent_piece;
    ret->effective = isinf(ip) ? ic : (ic > 0 && ip > 0 ? ic * ip / (ic + ip) : 0.0);
}

void hs__bench_model_poses(const struct hs_model *m, struct hs_pose *ret)
{
    for (uint32_t i = 0; i < m->nlinks; i++) {
        if (m->links[i].parent < 0)
            ret[i] = m->links[i].origin;
        else
            hs_pose_mul(&ret[m->links[i].parent], &m->links[i].origin, &ret[i]);
    }
}
