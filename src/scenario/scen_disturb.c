/* The physics side of a scenario: pushes and loads, payloads, a model's pose and velocity,
 * gravity, fixed and released joints, actuator faults and the motor thermal model. Changes to
 * the world go through ODE on the tick thread, at the start of a tick (commands) or before
 * every physics step (substep: ODE clears forces after each step and the plant sets efforts
 * and motor rows again before each). RT-safe: no allocation. */
#include <math.h>
#include <string.h>

#include <ode/ode.h>

#include "hilsim/actuator.h"
#include "hilsim/pose.h"
#include "scen_internal.h"

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

void hs__scen_commands(struct hs_scenario *s, int64_t now_ns)
{
    for (uint32_t i = 0; i < s->nsteps; i++) {
        struct hs__scen_step *st = &s->steps[i];
        if (!st->active && !st->was_active)
            continue;
        switch (st->kind) {
        case HS__SCEN_PAYLOAD:
            payload(s, st);
            break;
        case HS__SCEN_SET_POSE:
            set_pose(s, st);
            break;
        case HS__SCEN_GRAVITY:
            gravity(s, st);
            break;
        case HS__SCEN_ACTUATOR_FAULT:
            if (st->sp->actuator_kind == HS__AF_NO_RESPONSE)
                no_response(s, st);
            break;
        case HS__SCEN_THERMAL:
            thermal(s, st);
            break;
        case HS__SCEN_PATH:
            hs__scen_path(s, st, now_ns);
            break;
        default:
            break;
        }
    }
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

void hs__scen_substep(struct hs_scenario *s)
{
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const struct hs__scen_step *st = &s->steps[i];
        if (!st->active)
            continue;
        switch (st->kind) {
        case HS__SCEN_PUSH:
            push(s, st);
            break;
        case HS__SCEN_ACTUATOR_FAULT:
            if (st->sp->actuator_kind != HS__AF_NO_RESPONSE)
                actuator(s, st, st->sp->value, st->sp->actuator_kind);
            break;
        case HS__SCEN_JOINT:
            actuator(s, st, 0,
                     st->sp->joint_action == HS__JA_FIX ? HS__AF_MAX : HS__AF_BROKEN_GEAR);
            break;
        case HS__SCEN_THERMAL: {
            double keep = thermal_keep(st);
            if (keep < 1)
                actuator(s, st, keep, HS__AF_DERATE);
            break;
        }
        default:
            break;
        }
    }
}

double hs_scenario_winding_temp_c(const struct hs_scenario *s, uint32_t bench_joint)
{
    for (uint32_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].kind == HS__SCEN_THERMAL && s->steps[i].joint == (int32_t)bench_joint)
            return s->steps[i].thermal.t_winding_c;
    return NAN;
}
