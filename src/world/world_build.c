/* Builds one body spec into ODE: one dynamic body per link with its frame at the link's centre
 * of mass (or per group of links joined by fixed joints, world_merge.c), joints created with every
 * link at the model's zero pose (so ODE's hinge and slider zero is the model's zero), then every
 * body moved to the initial joint positions and velocities by forward kinematics. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"
#include "hilsim/pose.h"

#define HS_BLOCK_MASS_RATIO 0.05 /* piston slider block mass / lighter link mass */
#define HS_BLOCK_RADIUS_M 0.05

static const char *model_file(const struct hs_model *m)
{
    return m->path ? m->path : m->name;
}

static double norm3(const double v[3])
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static bool pose_finite(const struct hs_pose *p)
{
    for (int i = 0; i < 3; i++)
        if (!isfinite(p->p[i]))
            return false;
    for (int i = 0; i < 9; i++)
        if (!isfinite(p->R[i]))
            return false;
    return true;
}

static int check_model(const struct hs_world_body_spec *s, struct hs_diag *d)
{
    const struct hs_model *m = s->model;
    if (!m || m->nlinks == 0 || !m->links)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "body spec without a model or links");
    if (!pose_finite(&s->root_pose))
        return hs_diag_set(d, -EINVAL, model_file(m), 0, 0, "root_pose is not finite");
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        const char *f = model_file(m);
        if ((i == 0) != (l->parent < 0) || l->parent >= (int32_t)i)
            return hs_diag_set(d, -EINVAL, f, l->source_line, 0,
                               "link '%s': parent %d must precede it (root first)", l->name,
                               l->parent);
        if ((unsigned)l->joint_type >= HS_JOINT_TYPE_MAX)
            return hs_diag_set(d, -EINVAL, f, l->source_line, 0, "link '%s': bad jointType",
                               l->name);
        if (l->joint_type == HS_JOINT_FREE && i != 0)
            return hs_diag_set(d, -EINVAL, f, l->source_line, 0,
                               "link '%s': jointType free is only allowed on the root", l->name);
        if (l->joint_type != HS_JOINT_FIXED && l->joint_type != HS_JOINT_FREE &&
            !(norm3(l->axis) > 1e-9 && isfinite(norm3(l->axis))))
            return hs_diag_set(d, -EINVAL, f, l->source_line, 0,
                               "link '%s': jointAxis must be a non-zero vector", l->name);
        if (!pose_finite(&l->origin) || !isfinite(norm3(l->com)))
            return hs_diag_set(d, -EINVAL, f, l->source_line, 0,
                               "link '%s': translation, rotation or centerOfMass not finite",
                               l->name);
        if ((s->q0 && !isfinite(s->q0[i])) || (s->dq0 && !isfinite(s->dq0[i])))
            return hs_diag_set(d, -EINVAL, f, l->source_line, 0,
                               "link '%s': initial q0/dq0 not finite", l->name);
    }
    for (uint32_t k = 0; k < m->nextra_joints; k++) {
        const struct hs_extra_joint *e = &m->extra_joints[k];
        if (e->link1 < 0 || e->link2 < 0 || e->link1 >= (int32_t)m->nlinks ||
            e->link2 >= (int32_t)m->nlinks || e->link1 == e->link2 ||
            (unsigned)e->type >= HS_EXTRA_TYPE_MAX)
            return hs_diag_set(d, -EINVAL, model_file(m), 0, 0,
                               "ExtraJoint '%s': bad links or jointType", e->name);
        if (e->type == HS_EXTRA_PISTON && !(norm3(e->axis) > 1e-9))
            return hs_diag_set(d, -EINVAL, model_file(m), 0, 0,
                               "ExtraJoint '%s': piston needs a non-zero jointAxis", e->name);
    }
    return 0;
}

/* Link frames in the world for joint positions q (NULL: all zero). */
static void forward_kinematics(const struct hs_world_body_spec *s, const double *q,
                               const double (*axes)[3], struct hs_pose *ret)
{
    const struct hs_model *m = s->model;
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        struct hs_pose base, jq;
        if (l->parent < 0)
            base = s->root_pose;
        else
            hs_pose_mul(&ret[l->parent], &l->origin, &base);
        hs_pose_identity(&jq);
        double qi = q ? q[i] : 0.0;
        if (l->joint_type == HS_JOINT_ROTATE)
            hs_rot_from_axis_angle(axes[i], qi, jq.R);
        else if (l->joint_type == HS_JOINT_SLIDE)
            for (int k = 0; k < 3; k++)
                jq.p[k] = axes[i][k] * qi;
        hs_pose_mul(&base, &jq, &ret[i]);
    }
}

void hs__body_set_link_pose(dBodyID b, const double com[3], const struct hs_pose *link_pose)
{
    double c[3];
    dMatrix3 R;
    hs_rot_apply(link_pose->R, com, c);
    dBodySetPosition(b, link_pose->p[0] + c[0], link_pose->p[1] + c[1], link_pose->p[2] + c[2]);
    hs__rot_to_ode(link_pose->R, R);
    dBodySetRotation(b, R);
}

int hs__world_register_body(struct hs_world *w, dBodyID b)
{
    if (w->nall_bodies == w->all_bodies_cap) {
        uint32_t cap = w->all_bodies_cap ? 2 * w->all_bodies_cap : 32;
        dBodyID *n = realloc(w->all_bodies, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        w->all_bodies = n;
        w->all_bodies_cap = cap;
    }
    w->all_bodies[w->nall_bodies++] = b;
    return 0;
}

static dJointID create_joint(struct hs_world *w, struct hs__world_link *wl, dBodyID parent,
                             const struct hs_pose *pose0)
{
    double a[3];
    hs_rot_apply(pose0->R, wl->axis, a);
    dJointID j = NULL;
    switch (wl->type) {
    case HS_JOINT_ROTATE:
        j = dJointCreateHinge(w->world, 0);
        dJointAttach(j, wl->body, parent);
        dJointSetHingeAnchor(j, pose0->p[0], pose0->p[1], pose0->p[2]);
        dJointSetHingeAxis(j, a[0], a[1], a[2]);
        break;
    case HS_JOINT_SLIDE:
        j = dJointCreateSlider(w->world, 0);
        dJointAttach(j, wl->body, parent);
        dJointSetSliderAxis(j, a[0], a[1], a[2]);
        break;
    case HS_JOINT_FIXED:
    case HS_JOINT_CRAWLER:
        j = dJointCreateFixed(w->world, 0);
        dJointAttach(j, wl->body, parent);
        dJointSetFixed(j);
        break;
    case HS_JOINT_FREE:
    default:
        break;
    }
    return j;
}

static double block_mass(const struct hs_model *m, const struct hs_extra_joint *e)
{
    double m1 = m->links[e->link1].mass, m2 = m->links[e->link2].mass;
    return HS_BLOCK_MASS_RATIO * fmin(m1 > 0 ? m1 : 1.0, m2 > 0 ? m2 : 1.0);
}

/* The links' mass properties as simulated: the model's, less each piston block on link1. */
static void effective_links(const struct hs_model *m, struct hs_link *eff)
{
    memcpy(eff, m->links, m->nlinks * sizeof *eff);
    for (uint32_t k = 0; k < m->nextra_joints; k++) {
        const struct hs_extra_joint *e = &m->extra_joints[k];
        if (e->type != HS_EXTRA_PISTON)
            continue;
        double mb = block_mass(m, e);
        hs__world_mass_remove_point(&eff[e->link1], mb, e->pos1,
                                    0.4 * mb * HS_BLOCK_RADIUS_M * HS_BLOCK_RADIUS_M);
    }
}

/* OpenHRP's piston ExtraJoint constrains the two points only across the axis (2 constraints,
 * rotation free). ODE's piston joint also locks the two rotations across the axis, which
 * over-constrains planar loops such as ClosedLinkSample. The faithful equivalent is a light
 * block that slides along the axis on link1 (slider) and carries link2 on a ball joint.
 * The block weighs HS_BLOCK_MASS_RATIO of the lighter link (with the inertia of a
 * HS_BLOCK_RADIUS_M sphere); lighter blocks make QuickStep converge slowly (the four-bar test's
 * closure error grows from 0.14 mm at 5 % to 0.8 mm at 1 %). Its mass and inertia are taken out
 * of link1's (see effective_links), so link1 plus block match the model exactly while the block
 * sits at its anchor; only its sliding along the axis moves mass the model would not move. */
static int create_extra(struct hs_world *w, struct hs__world_body *wb, uint32_t k,
                        const struct hs_pose *pose0)
{
    const struct hs_extra_joint *e = &wb->model->extra_joints[k];
    struct hs__world_link *l1 = &wb->links[e->link1], *l2 = &wb->links[e->link2];
    double p[3];
    hs_pose_apply(&pose0[e->link1], e->pos1, p);
    if (e->type == HS_EXTRA_BALL) {
        if (l1->body == l2->body && l1->body)
            return 0; /* both links merged into one body: rigid already */
        dJointID j = dJointCreateBall(w->world, 0);
        dJointAttach(j, l1->body, l2->body);
        dJointSetBallAnchor(j, p[0], p[1], p[2]);
        wb->extra_joints[2 * k] = j;
        return 0;
    }
    double a[3], an = norm3(e->axis);
    hs_rot_apply(pose0[e->link1].R, e->axis, a);
    dBodyID block = dBodyCreate(w->world);
    if (!block || hs__world_register_body(w, block))
        return -ENOMEM;
    wb->extra_blocks[k] = block;
    dMass mass;
    dMassSetSphereTotal(&mass, block_mass(wb->model, e), HS_BLOCK_RADIUS_M);
    dBodySetMass(block, &mass);
    struct hs_pose bp = pose0[e->link1];
    memcpy(bp.p, p, sizeof p);
    static const double zero[3] = {0, 0, 0};
    hs__body_set_link_pose(block, zero, &bp);
    dJointID s = dJointCreateSlider(w->world, 0);
    dJointAttach(s, block, l1->body);
    dJointSetSliderAxis(s, a[0] / an, a[1] / an, a[2] / an);
    dJointID b = dJointCreateBall(w->world, 0);
    dJointAttach(b, block, l2->body);
    dJointSetBallAnchor(b, p[0], p[1], p[2]);
    wb->extra_joints[2 * k] = s;
    wb->extra_joints[2 * k + 1] = b;
    return 0;
}

/* Sets every body to the pose for q0 with velocities from dq0 (root at rest). */
static void set_initial_state(struct hs__world_body *wb, const struct hs_world_body_spec *s,
                              const struct hs_pose *pose, double (*v)[3], double (*om)[3])
{
    const struct hs_model *m = s->model;
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        struct hs__world_link *wl = &wb->links[i];
        double dq = s->dq0 ? s->dq0[i] : 0.0, a[3], r[3];
        hs_rot_apply(pose[i].R, wl->axis, a);
        if (l->parent < 0) {
            memset(v[i], 0, sizeof v[i]);
            memset(om[i], 0, sizeof om[i]);
        } else {
            int p = l->parent;
            double d[3] = {pose[i].p[0] - pose[p].p[0], pose[i].p[1] - pose[p].p[1],
                           pose[i].p[2] - pose[p].p[2]};
            hs_vec_cross(om[p], d, r);
            for (int k = 0; k < 3; k++) {
                v[i][k] = v[p][k] + r[k];
                om[i][k] = om[p][k];
            }
        }
        for (int k = 0; k < 3; k++) {
            if (wl->type == HS_JOINT_ROTATE)
                om[i][k] += a[k] * dq;
            else if (wl->type == HS_JOINT_SLIDE)
                v[i][k] += a[k] * dq;
        }
        wl->q_init = s->q0 ? s->q0[i] : 0.0;
        if (!wl->body || wl->body_link != i) /* a merged link moves with its owner's body */
            continue;
        hs__body_set_link_pose(wl->body, wl->com, &pose[i]);
        double c[3], vc[3];
        hs_rot_apply(pose[i].R, wl->com, c);
        hs_vec_cross(om[i], c, vc);
        dBodySetLinearVel(wl->body, v[i][0] + vc[0], v[i][1] + vc[1], v[i][2] + vc[2]);
        dBodySetAngularVel(wl->body, om[i][0], om[i][1], om[i][2]);
    }
}

/* The piston block follows link1's connection point at the initial pose. */
static void place_block(dBodyID block, const struct hs_extra_joint *e, const struct hs_pose *pose,
                        double (*v)[3], double (*om)[3])
{
    static const double zero[3] = {0, 0, 0};
    struct hs_pose bp = pose[e->link1];
    double r[3], vr[3];
    hs_pose_apply(&pose[e->link1], e->pos1, bp.p);
    hs__body_set_link_pose(block, zero, &bp);
    for (int k = 0; k < 3; k++)
        r[k] = bp.p[k] - pose[e->link1].p[k];
    hs_vec_cross(om[e->link1], r, vr);
    dBodySetLinearVel(block, v[e->link1][0] + vr[0], v[e->link1][1] + vr[1],
                      v[e->link1][2] + vr[2]);
    dBodySetAngularVel(block, om[e->link1][0], om[e->link1][1], om[e->link1][2]);
}

/* A link with its own ODE body: its mass, or with merged links the group's (world_merge.c). */
static int create_body(struct hs_world *w, struct hs__world_body *wb, struct hs__world_link *wl,
                       const struct hs_world_body_spec *s, const struct hs_link *eff,
                       const struct hs_pose *pose0, const uint32_t *owner)
{
    uint32_t i = wl->link_index, n = wb->model->nlinks, members = 0;
    double arm = s->armature ? s->armature[i] : 0.0;
    for (uint32_t k = i + 1; k < n; k++)
        members += owner[k] == i;
    wl->body = dBodyCreate(w->world);
    if (!wl->body || hs__world_register_body(w, wl->body))
        return -ENOMEM;
    dMass mass;
    if (members == 0) {
        memcpy(wl->com, eff[i].com, sizeof wl->com);
        if (hs__world_link_mass(&eff[i], arm, &mass))
            w->mass_fixups++;
    } else {
        w->mass_fixups += hs__world_group_mass(eff, pose0, owner, n, i, arm, &mass, wl->com);
    }
    hs_pose_identity(&wl->in_body);
    for (int k = 0; k < 3; k++)
        wl->in_body.p[k] = -wl->com[k];
    dBodySetMass(wl->body, &mass);
    dBodySetData(wl->body, wl);
    hs__body_set_link_pose(wl->body, wl->com, &pose0[i]);
    return 0;
}

/* Link i rides on its owner's body (created first: owners precede their links) at its fixed
 * offset from the owner's link frame. */
static int merge_into(struct hs__world_link *wl, const struct hs__world_link *o,
                      const struct hs_pose *pose0, uint32_t i)
{
    struct hs_pose inv, rel;
    hs_pose_inverse(&pose0[o->link_index], &inv);
    hs_pose_mul(&inv, &pose0[i], &rel);
    hs_pose_mul(&o->in_body, &rel, &wl->in_body);
    wl->body = o->body;
    /* com: the body's origin in this link's frame */
    hs_rot_apply_transpose(wl->in_body.R, wl->in_body.p, wl->com);
    for (int k = 0; k < 3; k++)
        wl->com[k] = -wl->com[k];
    return 0;
}

int hs__world_build_body(struct hs_world *w, struct hs__world_body *wb,
                         const struct hs_world_body_spec *s, struct hs_diag *d)
{
    int r = check_model(s, d);
    if (r)
        return r;
    const struct hs_model *m = s->model;
    uint32_t n = m->nlinks;
    wb->model = m;
    wb->is_static = s->is_static;
    wb->links = calloc(n, sizeof *wb->links);
    struct hs_pose *pose0 = calloc(n, sizeof *pose0), *poseq = calloc(n, sizeof *poseq);
    double(*axes)[3] = calloc(n, sizeof *axes);
    double(*v)[3] = calloc(n, sizeof *v), (*om)[3] = calloc(n, sizeof *om);
    struct hs_link *eff = calloc(n, sizeof *eff);
    uint32_t *owner = calloc(n, sizeof *owner);
    uint32_t nx = m->nextra_joints;
    wb->extra_joints = calloc(2 * (size_t)nx + 1, sizeof *wb->extra_joints);
    wb->extra_blocks = calloc((size_t)nx + 1, sizeof *wb->extra_blocks);
    r = -ENOMEM;
    if (!wb->links || !pose0 || !poseq || !axes || !v || !om || !eff || !owner ||
        !wb->extra_joints || !wb->extra_blocks) {
        hs_diag_set(d, -ENOMEM, "", 0, 0, "out of memory building '%s'", m->name);
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        double an = norm3(m->links[i].axis);
        for (int k = 0; k < 3; k++)
            axes[i][k] = an > 0 ? m->links[i].axis[k] / an : 0.0;
    }
    forward_kinematics(s, NULL, (const double(*)[3])axes, pose0);
    forward_kinematics(s, s->q0, (const double(*)[3])axes, poseq);
    effective_links(m, eff);

    hs__world_merge_plan(m, w->params.merge_fixed_links && !s->is_static, owner);
    for (uint32_t i = 0; i < n; i++) {
        const struct hs_link *l = &m->links[i];
        struct hs__world_link *wl = &wb->links[i];
        wl->owner = wb;
        wl->link_index = i;
        wl->body_link = owner[i];
        wl->type = l->joint_type;
        memcpy(wl->axis, axes[i], sizeof wl->axis);
        /* A fixed root is part of the scenery: static geoms and joints to the world, which no
         * contact force can move. A fixed joint to the world gave way by millimetres to
         * centimetres under contact (ERP/CFM), and a kinematic body made a braked arm resting
         * at its elbow limit run away after 44 s (test_cli_guard). Links merged into it
         * (world_merge.c) are scenery too. */
        bool fixed_root =
            m->links[owner[i]].parent < 0 && m->links[owner[i]].joint_type == HS_JOINT_FIXED;
        if (owner[i] != i)
            w->merged_links++;
        r = 0;
        if (s->is_static || fixed_root) {
            wl->static_pose = poseq[i];
            hs_pose_identity(&wl->in_body);
        } else if (owner[i] != i) {
            r = merge_into(wl, &wb->links[owner[i]], pose0, i);
        } else {
            r = create_body(w, wb, wl, s, eff, pose0, owner);
        }
        if (r) {
            hs_diag_set(d, -ENOMEM, "", 0, 0, "out of memory building '%s'", m->name);
            goto out;
        }
        r = hs__world_link_geoms(w, wl, d);
        if (r)
            goto out;
    }
    if (!s->is_static) {
        for (uint32_t i = 0; i < n; i++) {
            struct hs__world_link *wl = &wb->links[i];
            int32_t p = m->links[i].parent;
            if (!wl->body || wl->body_link != i) /* the fixed root, or merged: nothing to join */
                continue;
            wl->joint = create_joint(w, wl, p >= 0 ? wb->links[p].body : NULL, &pose0[i]);
        }
        for (uint32_t k = 0; k < nx; k++) {
            r = create_extra(w, wb, k, pose0);
            if (r) {
                hs_diag_set(d, r, "", 0, 0, "out of memory building '%s'", m->name);
                goto out;
            }
        }
    }
    set_initial_state(wb, s, poseq, v, om);
    for (uint32_t k = 0; k < nx; k++)
        if (wb->extra_blocks[k])
            place_block(wb->extra_blocks[k], &m->extra_joints[k], poseq, v, om);
    r = 0;
out:
    free(pose0);
    free(poseq);
    free(axes);
    free(v);
    free(om);
    free(eff);
    free(owner);
    return r;
}
