/* Drive faults: a joint fixed or released, and actuator faults (derate, no response, brake,
 * friction, broken gear), acting on the drive's output after the plant's motor model, before
 * every physics step (substep: the plant sets efforts and motor rows again before each), or on
 * the command slot (no response, commands phase). Each kind's schema and ops table
 * (scen_kinds.h) are at the end of this file. RT-safe: no allocation. */
#include <math.h>

#include <ode/ode.h>

#include "hilsim/actuator.h"
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

/* joint: what is done to the joint */
struct joint_spec {
    int action; /* enum hs__scen_joint_action */
};
/* actuator_fault (and a drive derated or fixed for the other kinds): value is the share of the
 * torque kept (derate) or the brake's or the friction's torque, N·m or N; viscous N·m·s/rad */
struct actuator_spec {
    int kind; /* enum hs__scen_actuator_kind */
    double value, viscous;
};
/* no_response: the command slot as it was when the fault began */
struct actuator_state {
    struct hs_joint_command held;
};
HS__SCEN_OWN_FITS(struct joint_spec);
HS__SCEN_OWN_FITS(struct actuator_spec);
HS__SCEN_OWN_FITS(struct actuator_state);

static bool starts(const struct hs__scen_step *st)
{
    return st->active && !st->was_active;
}

static bool acts(const struct hs__scen_step *st)
{
    return st->active || st->was_active;
}

/* The motor that stops responding: commands no longer reach it, so it keeps the slot it had
 * when the fault began (same sequence number and receive time): its own command timeout then
 * decides, as on a drive whose bus receive died. */
static void no_response(struct hs_scenario *s, struct hs__scen_step *st)
{
    struct hs_joint_command *cmd = hs_bench_joint(s->bench, (uint32_t)st->joint)->cmd;
    struct actuator_state *o = HS__SCEN_OWN(struct actuator_state, st);
    if (starts(st))
        o->held = *cmd;
    if (st->active)
        *cmd = o->held;
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
static void actuator(struct hs_scenario *s, const struct hs__scen_step *st,
                     const struct actuator_spec *a)
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
    switch (a->kind) {
    case HS__AF_DERATE:
        hs_world_set_joint_effort(w, st->body, st->link, effort * a->value);
        motor_row(j, slider, vel, fmax * a->value);
        break;
    case HS__AF_BROKEN_GEAR:
        hs_world_set_joint_effort(w, st->body, st->link, 0);
        motor_row(j, slider, 0, 0);
        break;
    case HS__AF_BRAKE:
        /* the brake holds up to its torque on top of what the motor does */
        motor_row(j, slider, 0, fmax + a->value);
        break;
    case HS__AF_FRICTION:
        hs_world_set_joint_effort(w, st->body, st->link,
                                  effort - (isnan(a->viscous) ? 0 : a->viscous) * dq);
        if (fmax == 0)
            motor_row(j, slider, 0, a->value);
        else
            motor_row(j, slider, vel, fmax + a->value);
        break;
    case HS__AF_MAX: /* fix the joint */
        hs_world_set_joint_effort(w, st->body, st->link, 0);
        motor_row(j, slider, 0, HS_ACTUATOR_RIGID_EFFORT);
        break;
    default:
        break;
    }
}

void hs__scen_drive_derate(struct hs_scenario *s, const struct hs__scen_step *st, double keep)
{
    struct actuator_spec derate = {.kind = HS__AF_DERATE, .value = keep};
    actuator(s, st, &derate);
}

/* ---- the kinds: schema and ops (scen_kinds.h) ---- */
static const char *const joint_action_names[] = {"fix", "release", NULL};
static const char *const actuator_names[] = {"derate",   "no_response", "brake",
                                             "friction", "broken_gear", NULL};

static void joint_substep(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!st->active)
        return;
    /* fixed: held rigid; released: free, as a broken gear leaves it */
    bool fix = HS__SCEN_OWN(const struct joint_spec, st->sp)->action == HS__JA_FIX;
    struct actuator_spec a = {.kind = fix ? HS__AF_MAX : HS__AF_BROKEN_GEAR};
    actuator(s, st, &a);
}

static const struct hs__cfg_field joint_f[] = {
    HS__SCEN_NAME("joint", t.joint, HS__F_REQUIRED),
    HS__SCEN_OWN_FS(struct joint_spec, "action", HS__K_ENUM, action, .names = joint_action_names,
                    .flags = HS__F_REQUIRED),
};
const struct hs__scen_kind_ops hs__scen_kind_joint = {
    .schema = HS__SCEN_SCHEMA(joint_f, NULL),
    .substep = joint_substep,
};

static void actuator_fault_commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)now_ns;
    if (acts(st) && HS__SCEN_OWN(const struct actuator_spec, st->sp)->kind == HS__AF_NO_RESPONSE)
        no_response(s, st);
}

static void actuator_fault_substep(struct hs_scenario *s, struct hs__scen_step *st)
{
    const struct actuator_spec *a = HS__SCEN_OWN(const struct actuator_spec, st->sp);
    if (st->active && a->kind != HS__AF_NO_RESPONSE)
        actuator(s, st, a);
}

static const struct hs__cfg_field actuator_fault_f[] = {
    HS__SCEN_OWN_FS(struct actuator_spec, "kind", HS__K_ENUM, kind, .names = actuator_names,
                    .flags = HS__F_REQUIRED),
    HS__SCEN_NAME("joint", t.joint, HS__F_REQUIRED),
    HS__SCEN_OWN_FS(struct actuator_spec, "value", HS__K_DOUBLE, value, .min = 0, .max = 1e6),
    HS__SCEN_OWN_FS(struct actuator_spec, "viscous", HS__K_DOUBLE, viscous, .min = 0, .max = 1e6),
};
static const struct actuator_spec actuator_defaults = {.value = NAN};

static int actuator_fault_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                                const char *path)
{
    struct hs__scen_step_spec *sp = obj;
    HS__SCEN_OWN_DEFAULTS(sp, actuator_fault_f, seen, &actuator_defaults);
    const struct actuator_spec *a = HS__SCEN_OWN(const struct actuator_spec, sp);
    if (a->kind == HS__AF_DERATE && !(a->value >= 0 && a->value <= 1))
        return hs__cfg_err(c, node, "%s: derate needs a value in [0, 1] (the torque kept)", path);
    if ((a->kind == HS__AF_BRAKE || a->kind == HS__AF_FRICTION) && !(a->value >= 0))
        return hs__cfg_err(c, node, "%s: %s needs a value >= 0 (N·m or N)", path,
                           actuator_names[a->kind]);
    return 0;
}

const struct hs__scen_kind_ops hs__scen_kind_actuator_fault = {
    .schema = HS__SCEN_SCHEMA(actuator_fault_f, actuator_fault_check),
    .commands = actuator_fault_commands,
    .substep = actuator_fault_substep,
};
