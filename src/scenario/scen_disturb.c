/* Disturbances of the world: pushes and loads, payloads, a model's pose and velocity, gravity.
 * Changes to the world go through ODE on the tick thread, at the start of a tick (commands) or
 * before every physics step (substep: ODE clears forces after each step). Each kind's schema and
 * ops table (scen_kinds.h) are at the end of this file. RT-safe: no allocation. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <ode/ode.h>

#include "hilsim/pose.h"
#include "hilsim/scenario_live.h"
#include "scen_internal.h"

enum hs__scen_frame { HS__FRAME_WORLD, HS__FRAME_LINK, HS__FRAME_MAX };

/* Each kind's parameters (keys of the same names; zero when not given). */
struct push_spec {
    double force_n[3], torque_nm[3];
    int frame; /* enum hs__scen_frame */
};
struct payload_spec {
    double mass_kg;
};
struct set_pose_spec {
    double position_m[3], rpy_rad[3], linear_velocity_mps[3], angular_velocity_rad_s[3];
};
HS__SCEN_OWN_FITS(struct push_spec);
HS__SCEN_OWN_FITS(struct payload_spec);
HS__SCEN_OWN_FITS(struct set_pose_spec);

static dBodyID body_of(struct hs_scenario *s, const struct hs__scen_step *st)
{
    return (dBodyID)hs_world_ode_body(hs_bench_world(s->bench), st->body, st->link);
}

static bool starts(const struct hs__scen_step *st)
{
    return st->active && !st->was_active;
}

static bool ends(const struct hs__scen_step *st)
{
    return !st->active && st->was_active;
}

static void payload(struct hs_scenario *s, struct hs__scen_step *st)
{
    dBodyID body = body_of(s, st);
    if (!body)
        return;
    dMass m;
    if (starts(st)) {
        /* a point mass at the centre of mass of the link's body (of the link and the links
         * merged with it, src/world/world_merge.c): ODE wants the centre of mass at the body
         * frame, so the payload changes mass and weight, not the inertia tensor */
        dBodyGetMass(body, &m);
        m.mass += HS__SCEN_OWN(const struct payload_spec, st->sp)->mass_kg;
        dBodySetMass(body, &m);
    } else if (ends(st)) {
        dBodyGetMass(body, &m);
        m.mass -= HS__SCEN_OWN(const struct payload_spec, st->sp)->mass_kg;
        dBodySetMass(body, &m);
    }
}

static void set_pose(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!starts(st))
        return;
    struct hs_world *w = hs_bench_world(s->bench);
    const struct hs_model *m = hs_bench_model(s->bench, st->body);
    const struct set_pose_spec *sp = HS__SCEN_OWN(const struct set_pose_spec, st->sp);
    /* the root link's frame goes to the given pose; every link keeps its pose relative to it */
    struct hs_pose root;
    hs_world_link_pose(w, st->body, 0, &root);
    dMatrix3 Rn;
    dRFromEulerAngles(Rn, -sp->rpy_rad[0], -sp->rpy_rad[1], -sp->rpy_rad[2]);
    double Rnew[9], Rd[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            Rnew[r * 3 + c] = Rn[r * 4 + c];
    /* Rd = Rnew Rroot^T */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            double acc = 0;
            for (int k = 0; k < 3; k++)
                acc += Rnew[r * 3 + k] * root.R[c * 3 + k];
            Rd[r * 3 + c] = acc;
        }
    for (uint32_t l = 0; l < m->nlinks; l++) {
        dBodyID body = (dBodyID)hs_world_ode_body(w, st->body, l);
        if (!body ||
            hs_world_link_body_link(w, st->body, l) != l) /* merged: moved with its owner */
            continue;
        const dReal *p = dBodyGetPosition(body), *R = dBodyGetRotation(body);
        double rel[3] = {p[0] - root.p[0], p[1] - root.p[1], p[2] - root.p[2]}, np[3];
        dMatrix3 nR;
        memset(nR, 0, sizeof nR);
        for (int r = 0; r < 3; r++) {
            np[r] = sp->position_m[r];
            for (int k = 0; k < 3; k++)
                np[r] += Rd[r * 3 + k] * rel[k];
            for (int c = 0; c < 3; c++) {
                double acc = 0;
                for (int k = 0; k < 3; k++)
                    acc += Rd[r * 3 + k] * R[k * 4 + c];
                nR[r * 4 + c] = acc;
            }
        }
        dBodySetPosition(body, np[0], np[1], np[2]);
        dBodySetRotation(body, nR);
        /* rigid motion: v = v0 + w x (p - p_root) */
        const double *v0 = sp->linear_velocity_mps, *om = sp->angular_velocity_rad_s;
        double d[3] = {np[0] - sp->position_m[0], np[1] - sp->position_m[1],
                       np[2] - sp->position_m[2]};
        dBodySetLinearVel(body, v0[0] + om[1] * d[2] - om[2] * d[1],
                          v0[1] + om[2] * d[0] - om[0] * d[2], v0[2] + om[0] * d[1] - om[1] * d[0]);
        dBodySetAngularVel(body, om[0], om[1], om[2]);
    }
}

/* gravity: the vector while the step is active, and the world's own put back after */
struct gravity_spec {
    double vector_m_s2[3];
};
struct gravity_state {
    double saved[3]; /* the world's gravity before the first activation */
};
HS__SCEN_OWN_FITS(struct gravity_spec);
HS__SCEN_OWN_FITS(struct gravity_state);

static void gravity(struct hs_scenario *s, struct hs__scen_step *st)
{
    dWorldID world = (dWorldID)hs_world_ode_world(hs_bench_world(s->bench));
    struct gravity_state *o = HS__SCEN_OWN(struct gravity_state, st);
    const double *g = HS__SCEN_OWN(const struct gravity_spec, st->sp)->vector_m_s2;
    if (starts(st) && st->activations == 1) {
        dVector3 now;
        dWorldGetGravity(world, now);
        memcpy(o->saved, now, sizeof o->saved);
    }
    if (starts(st))
        dWorldSetGravity(world, g[0], g[1], g[2]);
    else if (ends(st))
        dWorldSetGravity(world, o->saved[0], o->saved[1], o->saved[2]);
}

static void push(struct hs_scenario *s, const struct hs__scen_step *st)
{
    dBodyID b = body_of(s, st);
    if (!b)
        return;
    const struct push_spec *sp = HS__SCEN_OWN(const struct push_spec, st->sp);
    const double *f = sp->force_n, *t = sp->torque_nm;
    struct hs_world *w = hs_bench_world(s->bench);
    if (hs_world_link_body_link(w, st->body, st->link) != st->link) {
        /* A link merged into its parent's body (src/world/world_merge.c): the body's frame is
         * not the link's, so the push goes where it would on the link's own body, at the
         * link's centre of mass with the link's axes. */
        struct hs_pose lp;
        double fw[3], tw[3], c[3];
        hs_world_link_pose(w, st->body, st->link, &lp);
        hs_pose_apply(&lp, hs_bench_model(s->bench, st->body)->links[st->link].com, c);
        bool link_frame = sp->frame == HS__FRAME_LINK;
        for (int k = 0; k < 3; k++)
            fw[k] = f[k], tw[k] = t[k];
        if (link_frame) {
            hs_rot_apply(lp.R, f, fw);
            hs_rot_apply(lp.R, t, tw);
        }
        dBodyAddForceAtPos(b, fw[0], fw[1], fw[2], c[0], c[1], c[2]);
        dBodyAddTorque(b, tw[0], tw[1], tw[2]);
        return;
    }
    if (sp->frame == HS__FRAME_LINK) {
        dBodyAddRelForce(b, f[0], f[1], f[2]);
        dBodyAddRelTorque(b, t[0], t[1], t[2]);
    } else {
        dBodyAddForce(b, f[0], f[1], f[2]);
        dBodyAddTorque(b, t[0], t[1], t[2]);
    }
}

/* ---- the kinds: schema and ops (scen_kinds.h) ---- */
static bool acts(const struct hs__scen_step *st)
{
    return st->active || st->was_active;
}

static const char *const frame_names[] = {"world", "link", NULL};

static double norm3(const double v[3])
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static bool push_live_refused(const struct hs__scen_step_spec *spec, char *why, size_t size)
{
    const struct push_spec *sp = HS__SCEN_OWN(const struct push_spec, spec);
    if (norm3(sp->force_n) > HS_SCENARIO_LIVE_FORCE_MAX_N)
        snprintf(why, size, "push.force_n: |F| = %g N is above the live limit of %g N",
                 norm3(sp->force_n), HS_SCENARIO_LIVE_FORCE_MAX_N);
    else if (norm3(sp->torque_nm) > HS_SCENARIO_LIVE_TORQUE_MAX_NM)
        snprintf(why, size, "push.torque_nm: |T| = %g N m is above the live limit of %g N m",
                 norm3(sp->torque_nm), HS_SCENARIO_LIVE_TORQUE_MAX_NM);
    else
        return false;
    return true;
}

static void push_substep(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (st->active)
        push(s, st);
}

static const struct hs__cfg_field push_f[] = {
    HS__SCEN_NAME("link", t.link, HS__F_REQUIRED),
    HS__SCEN_NAME("model", t.model, 0),
    HS__SCEN_OWN_FS(struct push_spec, "force_n", HS__K_VEC, force_n, .n = 3),
    HS__SCEN_OWN_FS(struct push_spec, "torque_nm", HS__K_VEC, torque_nm, .n = 3),
    HS__SCEN_OWN_FS(struct push_spec, "frame", HS__K_ENUM, frame, .names = frame_names),
};
const struct hs__scen_kind_ops hs__scen_kind_push = {
    .schema = HS__SCEN_SCHEMA(push_f, NULL),
    .substep = push_substep,
    .live_refused = push_live_refused,
};

static void payload_commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)now_ns;
    if (acts(st))
        payload(s, st);
}

static const struct hs__cfg_field payload_f[] = {
    HS__SCEN_NAME("link", t.link, HS__F_REQUIRED),
    HS__SCEN_NAME("model", t.model, 0),
    HS__SCEN_OWN_FS(struct payload_spec, "mass_kg", HS__K_DOUBLE, mass_kg, .min = 0, .max = 1e4,
                    .flags = HS__F_REQUIRED | HS__F_MIN_OPEN),
};
const struct hs__scen_kind_ops hs__scen_kind_payload = {
    .schema = HS__SCEN_SCHEMA(payload_f, NULL),
    .commands = payload_commands,
};

/* a root held to the world would be yanked back by its joint: refuse, not explode */
static int set_pose_bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    const struct hs_config *cfg = hs_bench_config(s->bench);
    for (uint32_t m = 0; m < cfg->nmodels; m++)
        if (!strcmp(cfg->models[m].name, sp->t.model) && !cfg->models[m].is_static) {
            st->body = m;
            if (hs_bench_model(s->bench, m)->links[0].joint_type != HS_JOINT_FREE)
                return hs__scen_err_step(
                    s, sp, diag, "set_pose needs a robot with a free root; not", sp->t.model);
            return 0;
        }
    return hs__scen_err_step(s, sp, diag, "no robot (non-static model) named", sp->t.model);
}

static void set_pose_commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)now_ns;
    if (acts(st))
        set_pose(s, st);
}

static const struct hs__cfg_field set_pose_f[] = {
    HS__SCEN_NAME("model", t.model, HS__F_REQUIRED),
#define SET_POSE_VEC3(k) HS__SCEN_OWN_FS(struct set_pose_spec, #k, HS__K_VEC, k, .n = 3)
    SET_POSE_VEC3(position_m),
    SET_POSE_VEC3(rpy_rad),
    SET_POSE_VEC3(linear_velocity_mps),
    SET_POSE_VEC3(angular_velocity_rad_s),
#undef SET_POSE_VEC3
};
const struct hs__scen_kind_ops hs__scen_kind_set_pose = {
    .schema = HS__SCEN_SCHEMA(set_pose_f, NULL),
    .lasts = HS__SCEN_LASTS_ONE_TICK,
    .bind = set_pose_bind,
    .commands = set_pose_commands,
};

static void gravity_commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)now_ns;
    if (acts(st))
        gravity(s, st);
}

static bool gravity_live_refused(const struct hs__scen_step_spec *sp, char *why, size_t size)
{
    const double *g = HS__SCEN_OWN(const struct gravity_spec, sp)->vector_m_s2;
    if (norm3(g) <= HS_SCENARIO_LIVE_GRAVITY_MAX_M_S2)
        return false;
    snprintf(why, size, "gravity.vector_m_s2: |g| = %g m/s^2 is above the live limit of %g m/s^2",
             norm3(g), HS_SCENARIO_LIVE_GRAVITY_MAX_M_S2);
    return true;
}

static const struct hs__cfg_field gravity_f[] = {
    HS__SCEN_OWN_FS(struct gravity_spec, "vector_m_s2", HS__K_VEC, vector_m_s2, .n = 3,
                    .flags = HS__F_REQUIRED),
};
const struct hs__scen_kind_ops hs__scen_kind_gravity = {
    .schema = HS__SCEN_SCHEMA(gravity_f, NULL),
    .commands = gravity_commands,
    .live_refused = gravity_live_refused,
};
