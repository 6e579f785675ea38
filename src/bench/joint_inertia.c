/* What one joint moves, from the model's masses at given link poses: the inertia its subtree
 * presents about the axis (what the tuned PD is sized for), the gravity moment each side can put
 * on it (what a default torque limit must hold), and the inertia its torque meets within one
 * tick (what bounds a stable explicit PD).
 *
 * That last one. Within a tick every PD torque is held (explicit), so joint i's torque change
 * dtau meets the whole tree with every other joint free: the joint accelerations are
 * M^-1 dtau, and joint i's own one is (M^-1)_ii dtau. Its effective inertia is therefore
 *   Ie_i = 1 / (M^-1)_ii,
 * the Schur complement of M on the other coordinates (M the joint-space mass matrix, with the
 * free root's six coordinates when the root is free). It is what each neighbouring hinge's
 * axis allows: a neighbour whose axis is parallel to joint i's lets the piece beyond it stay
 * still (the piece ends there), one across it must be carried along (the piece extends), and
 * in between only the part of the rotation along the neighbour's axis is free. For a neighbour
 * body with an isotropic tensor J about a point on both axes at angle t, the 2x2 Schur
 * complement J - (J cos t)^2 / J = J sin^2 t is the share it adds (tests/bench/
 * test_auto_gains.c checks a three-link example against that). The armature is taken along
 * the joint axis only (add_armature), which makes Ie a lower bound of the world's. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "bench_internal.h"

/* As hs__world_link_mass (world_mass.c) fixes up unusable links. */
#define HS_BENCH_MIN_MASS_KG 1e-3
#define HS_BENCH_FALLBACK_RADIUS_M 0.01

bool hs__bench_in_subtree(const struct hs_model *m, uint32_t k, uint32_t i)
{
    int32_t up = (int32_t)k;
    while (up > (int32_t)i)
        up = m->links[up].parent;
    return up == (int32_t)i;
}

/* Link k's reflected rotor inertia. */
static double armature(const struct hs_link *l)
{
    if (l->joint_type != HS_JOINT_ROTATE || !isfinite(l->rotor_inertia) || !isfinite(l->gear_ratio))
        return 0.0;
    return l->rotor_inertia * l->gear_ratio * l->gear_ratio;
}

/* Link l's tensor about its centre of mass (link frame) with its armature along the axis only,
 * J a a^T: what the joint itself feels of its rotor. The world also raises the moments across
 * the axis (world_mass.c: ODE's explicit gyroscopic term), i.e. adds t (1 - a a^T); adding positive
 * semi-definite inertia only raises 1 / (M^-1)_ii, so the bound computed here is a lower bound
 * of the world's and the clamp stays on the safe side, and the gains are sized on what the
 * joint moves about its own axis. */
static void add_armature(const struct hs_link *l, double I[9])
{
    double J = armature(l);
    for (int r = 0; J > 0 && r < 3; r++)
        for (int q = 0; q < 3; q++)
            I[r * 3 + q] += J * l->axis[r] * l->axis[q];
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
    /* a^T (R I R^T) a = (R^T a)^T I (R^T a), I with the armature as the world adds it. */
    double I[9];
    bool usable = true;
    for (int q = 0; q < 9; q++)
        usable = usable && isfinite(l->inertia[q]);
    for (int q = 0; q < 9; q++)
        I[q] = usable ? l->inertia[q] : 0.0;
    add_armature(l, I);
    hs_rot_apply_transpose(pk->R, a, la);
    hs_rot_apply(I, la, Ia);
    double own = la[0] * Ia[0] + la[1] * Ia[1] + la[2] * Ia[2];
    return (isfinite(own) && own > 0 ? own : 0.0) + mass * d2;
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
    *ret = (struct hs__joint_inertia){0};
    for (uint32_t k = 0; k < m->nlinks; k++) {
        double moment;
        scratch[k] = link_about(&m->links[k], &poses[k], poses[i].p, a, slide, &moment);
        if (hs__bench_in_subtree(m, k, i)) {
            ret->moved += scratch[k];
            ret->moment_moved += moment;
        } else {
            ret->moment_rest += moment;
        }
    }
}

/* Link k's spatial inertia about the world origin in (angular, linear) velocity coordinates,
 * built as the world builds its body (hs__world_link_mass: a floor mass for a massless link, a
 * small sphere for an unusable tensor; the armature on the child of a hinge along its axis,
 * see add_armature): the
 * kinetic energy of a body turning at w with the origin-point velocity v is
 *   1/2 [w;v]^T P [w;v],  P = [[Ic + m (|c|^2 1 - c c^T), m [c]x], [-m [c]x, m 1]]
 * with c its centre of mass and Ic its tensor about c, both in the world frame. */
static void link_spatial(const struct hs_link *l, const struct hs_pose *pk, double P[36])
{
    double mass = isfinite(l->mass) && l->mass > 0 ? l->mass : HS_BENCH_MIN_MASS_KG;
    double I[9], Iw[9], c[3];
    bool usable = true;
    for (int r = 0; r < 9; r++) {
        I[r] = l->inertia[r];
        usable = usable && isfinite(I[r]);
    }
    if (!usable || !(I[0] > 0 && I[4] > 0 && I[8] > 0)) {
        for (int r = 0; r < 9; r++)
            I[r] = r % 4 == 0 ? 0.4 * mass * HS_BENCH_FALLBACK_RADIUS_M * HS_BENCH_FALLBACK_RADIUS_M
                              : 0.0;
    }
    add_armature(l, I);
    /* Iw = R I R^T */
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++) {
            double s = 0.0;
            for (int u = 0; u < 3; u++)
                for (int w = 0; w < 3; w++)
                    s += pk->R[r * 3 + u] * I[u * 3 + w] * pk->R[q * 3 + w];
            Iw[r * 3 + q] = s;
        }
    hs_pose_apply(pk, l->com, c);
    double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    double C[9] = {0, -c[2], c[1], c[2], 0, -c[0], -c[1], c[0], 0};
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++) {
            P[r * 6 + q] = Iw[r * 3 + q] + mass * ((r == q ? cc : 0.0) - c[r] * c[q]);
            P[r * 6 + q + 3] = mass * C[r * 3 + q];
            P[(r + 3) * 6 + q] = -mass * C[r * 3 + q];
            P[(r + 3) * 6 + q + 3] = r == q ? mass : 0.0;
        }
}

/* s^T P t for 6-vectors. */
static double quad6(const double s[6], const double P[36], const double t[6])
{
    double sum = 0.0;
    for (int r = 0; r < 6; r++)
        for (int q = 0; q < 6; q++)
            sum += s[r] * P[r * 6 + q] * t[q];
    return sum;
}

/* Link k is link i or beyond it. */
static bool at_or_beyond(const struct hs_model *m, uint32_t k, uint32_t i)
{
    return k == i || hs__bench_in_subtree(m, k, i);
}

/* A fixed joint to a parent that the iterative solver may leave turning within a tick. */
static bool loose_fixed(const struct hs_model *m, uint32_t k, bool fixed_rigid)
{
    return !fixed_rigid && m->links[k].joint_type == HS_JOINT_FIXED && m->links[k].parent >= 0;
}

int hs__bench_effective_inertias(const struct hs_model *m, const struct hs_pose *poses, double *ret)
{
    return hs__bench_effective_inertias_as(m, poses, true, ret);
}

int hs__bench_effective_inertias_as(const struct hs_model *m, const struct hs_pose *poses,
                                    bool fixed_rigid, double *ret)
{
    uint32_t n = m->nlinks, nbase = n && m->links[0].joint_type == HS_JOINT_FREE ? 6 : 0;
    uint32_t ndof = nbase, nact = 0;
    for (uint32_t k = 0; k < n; k++) {
        ret[k] = 0.0;
        bool actuated =
            m->links[k].joint_type == HS_JOINT_ROTATE || m->links[k].joint_type == HS_JOINT_SLIDE;
        nact += actuated;
        ndof += actuated ? 1 : loose_fixed(m, k, fixed_rigid) ? 3 : 0;
    }
    if (nact == 0)
        return 0;
    double *comp = calloc((size_t)n * 36, sizeof *comp);
    double *S = calloc((size_t)ndof * 6, sizeof *S);
    uint32_t *owner = calloc(ndof, sizeof *owner);
    double *M = calloc((size_t)ndof * ndof, sizeof *M);
    double *col = calloc(ndof, sizeof *col);
    int r = 0;
    if (!comp || !S || !owner || !M || !col) {
        r = -ENOMEM;
        goto out;
    }
    /* Composite inertia of each link's subtree (links are ordered parent first). */
    for (uint32_t k = 0; k < n; k++)
        link_spatial(&m->links[k], &poses[k], &comp[(size_t)k * 36]);
    for (uint32_t k = n; k-- > 1;)
        for (int e = 0; e < 36; e++)
            comp[(size_t)m->links[k].parent * 36 + e] += comp[(size_t)k * 36 + e];
    /* Motion subspaces: the free root's six velocities, a hinge [a; p x a], a slider [0; a]. */
    for (uint32_t d = 0; d < nbase; d++)
        S[d * 6 + d] = 1.0;
    uint32_t d = nbase;
    for (uint32_t k = 0; k < n; k++) {
        const struct hs_link *l = &m->links[k];
        if (loose_fixed(m, k, fixed_rigid)) {
            /* Three turns about the link's origin: a ball joint, which is what a fixed joint
             * is within one tick when the iterative solver has not converged on it. */
            for (int e = 0; e < 3; e++, d++) {
                double *s = &S[(size_t)d * 6], a[3] = {e == 0, e == 1, e == 2};
                const double *p = poses[k].p;
                s[0] = a[0], s[1] = a[1], s[2] = a[2];
                s[3] = p[1] * a[2] - p[2] * a[1];
                s[4] = p[2] * a[0] - p[0] * a[2];
                s[5] = p[0] * a[1] - p[1] * a[0];
                owner[d] = k;
            }
            continue;
        }
        if (l->joint_type != HS_JOINT_ROTATE && l->joint_type != HS_JOINT_SLIDE)
            continue;
        double a[3], *s = &S[(size_t)d * 6];
        hs_rot_apply(poses[k].R, l->axis, a);
        double an = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        for (int j = 0; j < 3; j++)
            a[j] = an > 0 ? a[j] / an : 0.0;
        const double *p = poses[k].p;
        if (l->joint_type == HS_JOINT_ROTATE) {
            s[0] = a[0], s[1] = a[1], s[2] = a[2];
            s[3] = p[1] * a[2] - p[2] * a[1];
            s[4] = p[2] * a[0] - p[0] * a[2];
            s[5] = p[0] * a[1] - p[1] * a[0];
        } else {
            s[3] = a[0], s[4] = a[1], s[5] = a[2];
        }
        owner[d++] = k;
    }
    /* Joint-space mass matrix (composite rigid bodies): M_ij = S_i^T P_sub S_j, P_sub the
     * composite of the farther of the two when one is on the other's path, else 0. */
    for (uint32_t i = 0; i < ndof; i++)
        for (uint32_t j = 0; j <= i; j++) {
            uint32_t oi = owner[i], oj = owner[j];
            const double *P = NULL;
            if (at_or_beyond(m, oj, oi))
                P = &comp[(size_t)oj * 36];
            else if (at_or_beyond(m, oi, oj))
                P = &comp[(size_t)oi * 36];
            double v = P ? quad6(&S[(size_t)i * 6], P, &S[(size_t)j * 6]) : 0.0;
            M[(size_t)i * ndof + j] = M[(size_t)j * ndof + i] = v;
        }
    /* Cholesky M = L L^T in place (lower triangle). */
    for (uint32_t j = 0; j < ndof; j++) {
        double djj = M[(size_t)j * ndof + j];
        for (uint32_t k = 0; k < j; k++)
            djj -= M[(size_t)j * ndof + k] * M[(size_t)j * ndof + k];
        if (!(djj > 0) || !isfinite(djj)) {
            r = -EDOM;
            goto out;
        }
        double ljj = sqrt(djj);
        M[(size_t)j * ndof + j] = ljj;
        for (uint32_t i = j + 1; i < ndof; i++) {
            double v = M[(size_t)i * ndof + j];
            for (uint32_t k = 0; k < j; k++)
                v -= M[(size_t)i * ndof + k] * M[(size_t)j * ndof + k];
            M[(size_t)i * ndof + j] = v / ljj;
        }
    }
    /* (M^-1)_ii = |L^-1 e_i|^2: solve L y = e_i by forward substitution. */
    for (uint32_t i = nbase; i < ndof; i++) {
        double sum = 0.0;
        for (uint32_t q = 0; q < ndof; q++) {
            double v = q == i ? 1.0 : 0.0;
            if (q < i) {
                col[q] = 0.0;
                continue;
            }
            for (uint32_t k = i; k < q; k++)
                v -= M[(size_t)q * ndof + k] * col[k];
            col[q] = v / M[(size_t)q * ndof + q];
            sum += col[q] * col[q];
        }
        if (!loose_fixed(m, owner[i], fixed_rigid))
            ret[owner[i]] = sum > 0 ? 1.0 / sum : 0.0;
    }
out:
    free(comp);
    free(S);
    free(owner);
    free(M);
    free(col);
    return r;
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
