/* The physics side of a scenario: pushes and loads, payloads, a model's pose and velocity,
 * gravity, fixed and released joints, actuator faults and the motor thermal model. Changes to
 * the world go through ODE on the tick thread, at the start of a tick (commands) or before
 * every physics step (substep: ODE clears forces after each step and the plant sets efforts
 * and motor rows again before each). Each kind's schema and ops table (scen_kinds.h) are at the
 * end of this file. RT-safe: no allocation. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <ode/ode.h>

#include "hilsim/actuator.h"
#include "hilsim/pose.h"
#include "hilsim/scenario_live.h"
#include "scen_internal.h"

enum hs__scen_actuator_kind {
    HS__AF_DERATE,
    HS__AF_NO_RESPONSE,
    HS__AF_BRAKE,
    HS__AF_FRICTION,
    HS__AF_BROKEN_GEAR,
    HS__AF_MAX
};

enum hs__scen_joint_action { HS__JA_FIX, HS__JA_RELEASE, HS__JA_MAX };

enum hs__scen_frame { HS__FRAME_WORLD, HS__FRAME_LINK, HS__FRAME_MAX };

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
        m.mass += st->sp->mass_kg;
        dBodySetMass(body, &m);
    } else if (ends(st)) {
        dBodyGetMass(body, &m);
        m.mass -= st->sp->mass_kg;
        dBodySetMass(body, &m);
    }
}

static void set_pose(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!starts(st))
        return;
    struct hs_world *w = hs_bench_world(s->bench);
    const struct hs_model *m = hs_bench_model(s->bench, st->body);
    const struct hs__scen_step_spec *sp = st->sp;
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

static void gravity(struct hs_scenario *s, struct hs__scen_step *st)
{
    dWorldID world = (dWorldID)hs_world_ode_world(hs_bench_world(s->bench));
    if (starts(st) && st->activations == 1) {
        dVector3 g;
        dWorldGetGravity(world, g);
        memcpy(st->saved_gravity, g, sizeof st->saved_gravity);
    }
    if (starts(st))
        dWorldSetGravity(world, st->sp->gravity_m_s2[0], st->sp->gravity_m_s2[1],
                         st->sp->gravity_m_s2[2]);
    else if (ends(st))
        dWorldSetGravity(world, st->saved_gravity[0], st->saved_gravity[1], st->saved_gravity[2]);
}

/* The motor that stops responding: commands no longer reach it, so it keeps the slot it had
 * when the fault began (same sequence number and receive time): its own command timeout then
 * decides, as on a drive whose bus receive died. */
static void no_response(struct hs_scenario *s, struct hs__scen_step *st)
{
    struct hs_joint_command *cmd = hs_bench_joint(s->bench, (uint32_t)st->joint)->cmd;
    if (starts(st))
        st->held_cmd = *cmd;
    if (st->active)
        *cmd = st->held_cmd;
}

/* Two-node thermal model (winding, case) driven by the copper losses of the current the plant
 * estimates: P = I^2 R(Tw), R(Tw) = R25 (1 + alpha (Tw - 25 °C)). Explicit Euler per tick
 * (tick << the winding's time constant R C). */
/* The share of the drive's torque the thermal model lets through at its state now. */
static double thermal_keep(const struct hs__scen_step *st)
{
    const struct hs__scen_thermal *t = &st->thermal;
    if (t->tripped)
        return 0;
    if (t->t_winding_c <= st->sp->derate_c)
        return 1;
    double k = (st->sp->limit_c - t->t_winding_c) / (st->sp->limit_c - st->sp->derate_c);
    return k < 0 ? 0 : k;
}

static void thermal(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!st->active)
        return;
    const struct hs__scen_step_spec *sp = st->sp;
    struct hs__scen_thermal *t = &st->thermal;
    /* the plant's current is what the drive was asked for; a derated or tripped drive draws
     * only its share, so a tripped winding cools */
    double i = hs_bench_joint_reading(s->bench, (uint32_t)st->joint)->current * thermal_keep(st);
    double r = sp->r_winding_ohm * (1 + sp->alpha_per_k * (t->t_winding_c - 25));
    double p = i * i * (r > 0 ? r : 0);
    double q_wc = (t->t_winding_c - t->t_case_c) / sp->r_wc_k_per_w;
    double q_ca = (t->t_case_c - sp->ambient_c) / sp->r_ca_k_per_w;
    double h = (double)s->period_ns * 1e-9;
    t->t_winding_c += h * (p - q_wc) / sp->c_winding_j_per_k;
    t->t_case_c += h * (q_wc - q_ca) / sp->c_case_j_per_k;
    if (t->t_winding_c >= sp->limit_c)
        t->tripped = true;
    else if (t->tripped && t->t_winding_c < sp->derate_c)
        t->tripped = false; /* cooled below the derating threshold: the drive re-arms */
}

static void motor_row(dJointID j, bool slider, double vel, double fmax)
{
    if (slider) {
        dJointSetSliderParam(j, dParamVel, vel);
        dJointSetSliderParam(j, dParamFMax, fmax);
    } else {
        dJointSetHingeParam(j, dParamVel, vel);
        dJointSetHingeParam(j, dParamFMax, fmax);
    }
}

/* The drive's output after the plant's motor model: scale, cut, brake or fix it. */
static void actuator(struct hs_scenario *s, const struct hs__scen_step *st, double scale, int kind)
{
    struct hs_world *w = hs_bench_world(s->bench);
    dJointID j = (dJointID)hs_world_ode_joint(w, st->body, st->link);
    if (!j)
        return;
    bool slider = dJointGetType(j) == dJointTypeSlider;
    double fmax = slider ? dJointGetSliderParam(j, dParamFMax) : dJointGetHingeParam(j, dParamFMax);
    double vel = slider ? dJointGetSliderParam(j, dParamVel) : dJointGetHingeParam(j, dParamVel);
    double effort = hs_world_joint_effort(w, st->body, st->link);
    double dq = hs_world_joint_velocity(w, st->body, st->link);
    switch (kind) {
    case HS__AF_DERATE:
        hs_world_set_joint_effort(w, st->body, st->link, effort * scale);
        motor_row(j, slider, vel, fmax * scale);
        break;
    case HS__AF_BROKEN_GEAR:
        hs_world_set_joint_effort(w, st->body, st->link, 0);
        motor_row(j, slider, 0, 0);
        break;
    case HS__AF_BRAKE:
        /* the brake holds up to its torque on top of what the motor does */
        motor_row(j, slider, 0, fmax + st->sp->value);
        break;
    case HS__AF_FRICTION:
        hs_world_set_joint_effort(w, st->body, st->link,
                                  effort - (isnan(st->sp->viscous) ? 0 : st->sp->viscous) * dq);
        if (fmax == 0)
            motor_row(j, slider, 0, st->sp->value);
        else
            motor_row(j, slider, vel, fmax + st->sp->value);
        break;
    case HS__AF_MAX: /* fix the joint */
        hs_world_set_joint_effort(w, st->body, st->link, 0);
        motor_row(j, slider, 0, HS_ACTUATOR_RIGID_EFFORT);
        break;
    default:
        break;
    }
}

static void push(struct hs_scenario *s, const struct hs__scen_step *st)
{
    dBodyID b = body_of(s, st);
    if (!b)
        return;
    const double *f = st->sp->force_n, *t = st->sp->torque_nm;
    struct hs_world *w = hs_bench_world(s->bench);
    if (hs_world_link_body_link(w, st->body, st->link) != st->link) {
        /* A link merged into its parent's body (src/world/world_merge.c): the body's frame is
         * not the link's, so the push goes where it would on the link's own body, at the
         * link's centre of mass with the link's axes. */
        struct hs_pose lp;
        double fw[3], tw[3], c[3];
        hs_world_link_pose(w, st->body, st->link, &lp);
        hs_pose_apply(&lp, hs_bench_model(s->bench, st->body)->links[st->link].com, c);
        bool link_frame = st->sp->frame == HS__FRAME_LINK;
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
    if (st->sp->frame == HS__FRAME_LINK) {
        dBodyAddRelForce(b, f[0], f[1], f[2]);
        dBodyAddRelTorque(b, t[0], t[1], t[2]);
    } else {
        dBodyAddForce(b, f[0], f[1], f[2]);
        dBodyAddTorque(b, t[0], t[1], t[2]);
    }
}

double hs_scenario_winding_temp_c(const struct hs_scenario *s, uint32_t bench_joint)
{
    for (uint32_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].kind == HS__SCEN_THERMAL && s->steps[i].joint == (int32_t)bench_joint)
            return s->steps[i].thermal.t_winding_c;
    return NAN;
}

/* ---- the kinds: schema and ops (scen_kinds.h) ---- */
static bool acts(const struct hs__scen_step *st)
{
    return st->active || st->was_active;
}

static const char *const frame_names[] = {"world", "link", NULL};
static const char *const joint_action_names[] = {"fix", "release", NULL};
static const char *const actuator_names[] = {"derate",   "no_response", "brake",
                                             "friction", "broken_gear", NULL};

static double norm3(const double v[3])
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static bool push_live_refused(const struct hs__scen_step_spec *sp, char *why, size_t size)
{
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
    HS__SCEN_VEC3("force_n", force_n),
    HS__SCEN_VEC3("torque_nm", torque_nm),
    HS__SCEN_ENUM("frame", frame, frame_names, 0),
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
    HS__SCEN_DBL("mass_kg", mass_kg, 0, 1e4, HS__F_REQUIRED | HS__F_MIN_OPEN),
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
    HS__SCEN_VEC3("position_m", position_m),
    HS__SCEN_VEC3("rpy_rad", rpy_rad),
    HS__SCEN_VEC3("linear_velocity_mps", linear_velocity_mps),
    HS__SCEN_VEC3("angular_velocity_rad_s", angular_velocity_rad_s),
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
    if (norm3(sp->gravity_m_s2) <= HS_SCENARIO_LIVE_GRAVITY_MAX_M_S2)
        return false;
    snprintf(why, size, "gravity.vector_m_s2: |g| = %g m/s^2 is above the live limit of %g m/s^2",
             norm3(sp->gravity_m_s2), HS_SCENARIO_LIVE_GRAVITY_MAX_M_S2);
    return true;
}

static const struct hs__cfg_field gravity_f[] = {
    HS__SCEN_FS("vector_m_s2", HS__K_VEC, gravity_m_s2, .n = 3, .flags = HS__F_REQUIRED),
};
const struct hs__scen_kind_ops hs__scen_kind_gravity = {
    .schema = HS__SCEN_SCHEMA(gravity_f, NULL),
    .commands = gravity_commands,
    .live_refused = gravity_live_refused,
};

static void joint_substep(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (st->active)
        actuator(s, st, 0, st->sp->joint_action == HS__JA_FIX ? HS__AF_MAX : HS__AF_BROKEN_GEAR);
}

static const struct hs__cfg_field joint_f[] = {
    HS__SCEN_NAME("joint", t.joint, HS__F_REQUIRED),
    HS__SCEN_ENUM("action", joint_action, joint_action_names, HS__F_REQUIRED),
};
const struct hs__scen_kind_ops hs__scen_kind_joint = {
    .schema = HS__SCEN_SCHEMA(joint_f, NULL),
    .substep = joint_substep,
};

static int actuator_fault_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                                const char *path)
{
    struct hs__scen_step_spec *st = obj;
    (void)seen;
    if (st->actuator_kind == HS__AF_DERATE && !(st->value >= 0 && st->value <= 1))
        return hs__cfg_err(c, node, "%s: derate needs a value in [0, 1] (the torque kept)", path);
    if ((st->actuator_kind == HS__AF_BRAKE || st->actuator_kind == HS__AF_FRICTION) &&
        !(st->value >= 0))
        return hs__cfg_err(c, node, "%s: %s needs a value >= 0 (N·m or N)", path,
                           actuator_names[st->actuator_kind]);
    return 0;
}

static void actuator_fault_commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)now_ns;
    if (acts(st) && st->sp->actuator_kind == HS__AF_NO_RESPONSE)
        no_response(s, st);
}

static void actuator_fault_substep(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (st->active && st->sp->actuator_kind != HS__AF_NO_RESPONSE)
        actuator(s, st, st->sp->value, st->sp->actuator_kind);
}

static const struct hs__cfg_field actuator_fault_f[] = {
    HS__SCEN_ENUM("kind", actuator_kind, actuator_names, HS__F_REQUIRED),
    HS__SCEN_NAME("joint", t.joint, HS__F_REQUIRED),
    HS__SCEN_DBL("value", value, 0, 1e6, 0),
    HS__SCEN_DBL("viscous", viscous, 0, 1e6, 0),
};
const struct hs__scen_kind_ops hs__scen_kind_actuator_fault = {
    .schema = HS__SCEN_SCHEMA(actuator_fault_f, actuator_fault_check),
    .commands = actuator_fault_commands,
    .substep = actuator_fault_substep,
};

static int thermal_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path)
{
    struct hs__scen_step_spec *st = obj;
    (void)seen;
    if (!(st->derate_c > st->ambient_c) || !(st->limit_c > st->derate_c))
        return hs__cfg_err(c, node, "%s: needs ambient_c < derate_c < limit_c", path);
    return 0;
}

static void thermal_defaults(struct hs__scen_step_spec *st)
{
    /* a small servo motor: 0.5 ohm copper at 25 °C, 5 K/W to the case, 2 K/W case to ambient,
     * winding 10 J/K (time constant 50 s), case 200 J/K; derate from 100 °C, off at 130 °C */
    st->ambient_c = 25;
    st->r_winding_ohm = 0.5;
    st->alpha_per_k = 0.00393; /* copper */
    st->r_wc_k_per_w = 5;
    st->r_ca_k_per_w = 2;
    st->c_winding_j_per_k = 10;
    st->c_case_j_per_k = 200;
    st->derate_c = 100;
    st->limit_c = 130;
}

static int thermal_bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    hs__scen_bind_temp_ports(s, st);
    st->thermal.t_winding_c = st->thermal.t_case_c = sp->ambient_c;
    for (uint32_t j = 0; &s->steps[j] != st; j++)
        if (s->steps[j].kind == HS__SCEN_THERMAL && s->steps[j].joint == st->joint)
            return hs__scen_err_step(s, sp, diag, "a second thermal model on joint", sp->t.joint);
    return 0;
}

static void thermal_commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)now_ns;
    if (acts(st))
        thermal(s, st);
}

static void thermal_substep(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!st->active)
        return;
    double keep = thermal_keep(st);
    if (keep < 1)
        actuator(s, st, keep, HS__AF_DERATE);
}

/* from the model's first tick on; it stays at its last value after its step */
static void thermal_readings(struct hs_scenario *s, struct hs__scen_step *st)
{
    (void)s;
    if (st->activations)
        hs__scen_report_temperature(st);
}

static const struct hs__cfg_field thermal_f[] = {
    HS__SCEN_NAME("joint", t.joint, HS__F_REQUIRED),
    HS__SCEN_DBL("ambient_c", ambient_c, -60, 200, 0),
    HS__SCEN_DBL("r_winding_ohm", r_winding_ohm, 0, 1e3, HS__F_MIN_OPEN),
    HS__SCEN_DBL("alpha_per_k", alpha_per_k, 0, 0.1, 0),
    HS__SCEN_DBL("r_wc_k_per_w", r_wc_k_per_w, 0, 1e3, HS__F_MIN_OPEN),
    HS__SCEN_DBL("r_ca_k_per_w", r_ca_k_per_w, 0, 1e3, HS__F_MIN_OPEN),
    HS__SCEN_DBL("c_winding_j_per_k", c_winding_j_per_k, 0, 1e6, HS__F_MIN_OPEN),
    HS__SCEN_DBL("c_case_j_per_k", c_case_j_per_k, 0, 1e6, HS__F_MIN_OPEN),
    HS__SCEN_DBL("derate_c", derate_c, -60, 400, 0),
    HS__SCEN_DBL("limit_c", limit_c, -60, 400, 0),
};
const struct hs__scen_kind_ops hs__scen_kind_thermal = {
    .schema = HS__SCEN_SCHEMA(thermal_f, thermal_check),
    .defaults = thermal_defaults,
    .bind = thermal_bind,
    .commands = thermal_commands,
    .substep = thermal_substep,
    .readings = thermal_readings,
};
