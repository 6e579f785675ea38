/* Expectations, judged every tick of their window on the true state (the world, the command
 * slots, the thermal model), never on what a faulty sensor reports. "within": passes at the
 * first tick the condition holds, fails when the window closes without it; "always": fails at
 * the first tick it does not hold, passes when the window closes. RT-safe. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scen_internal.h"

enum hs__scen_expect_kind {
    HS__EX_JOINT_NEAR,
    HS__EX_LINK_ABOVE,
    HS__EX_LINK_BELOW,
    HS__EX_VELOCITY_LIMITS,
    HS__EX_COMMAND_TORQUE,
    HS__EX_TEMPERATURE_BELOW,
    HS__EX_NODE_STATE,
    HS__EX_MAX
};
enum hs__scen_hold { HS__HOLD_WITHIN, HS__HOLD_ALWAYS, HS__HOLD_MAX };

/* The expectation's keys (value: the position, height, ratio, torque or temperature it is
 * judged against; node and state: node_state's) and, for node_state, the node's port. */
struct expect_spec {
    int kind; /* enum hs__scen_expect_kind */
    int hold; /* enum hs__scen_hold */
    double value, tolerance;
    char node[HS_NAME_MAX], state[HS_NAME_MAX];
};
struct expect_state {
    struct hs_can_port *port;
};
HS__SCEN_OWN_FITS(struct expect_spec);
HS__SCEN_OWN_FITS(struct expect_state);

static const struct expect_spec *spec_of(const struct hs__scen_step *st)
{
    return HS__SCEN_OWN(const struct expect_spec, st->sp);
}

static struct hs_can_port *port_of(const struct hs__scen_step *st)
{
    return HS__SCEN_OWN(const struct expect_state, st)->port;
}

/* The torque the command in the slot asks of the drive now, on the true joint state. */
static double commanded_torque(struct hs_scenario *s, uint32_t ji)
{
    const struct hs_bench_joint *j = hs_bench_joint(s->bench, ji);
    const struct hs_joint_command *c = j->cmd;
    struct hs_world *w = hs_bench_world(s->bench);
    switch (c->mode) {
    case HS_JOINT_MODE_DISABLED:
    case HS_JOINT_MODE_BRAKE:
        return 0;
    case HS_JOINT_MODE_TORQUE:
        return c->tau_ff;
    case HS_JOINT_MODE_POSITION:
        return c->kp * (c->q - hs_world_joint_position(w, j->body, j->link)) +
               c->kd * (c->dq - hs_world_joint_velocity(w, j->body, j->link)) + c->tau_ff;
    default: /* current and velocity loops: what the motor model made of them */
        return hs_bench_joint_reading(s->bench, ji)->torque;
    }
}

static int state_index(const struct hs__scen_step *st, const char *state)
{
    const char *const *names = hs__scen_node_state_names(port_of(st));
    for (int i = 0; names && names[i]; i++)
        if (!strcmp(names[i], state))
            return i;
    return -1;
}

/* Returns whether the condition holds; *ret_value is the quantity it judged. */
static bool holds(struct hs_scenario *s, const struct hs__scen_step *st, double *ret_value)
{
    const struct expect_spec *sp = spec_of(st);
    struct hs_world *w = hs_bench_world(s->bench);
    switch (sp->kind) {
    case HS__EX_JOINT_NEAR:
        *ret_value = hs_world_joint_position(w, st->body, st->link);
        return fabs(*ret_value - sp->value) <= sp->tolerance;
    case HS__EX_LINK_ABOVE:
    case HS__EX_LINK_BELOW: {
        struct hs_pose p;
        hs_world_link_pose(w, st->body, st->link, &p);
        *ret_value = p.p[2];
        return sp->kind == HS__EX_LINK_ABOVE ? p.p[2] >= sp->value : p.p[2] <= sp->value;
    }
    case HS__EX_VELOCITY_LIMITS: {
        /* the worst ratio of |dq| to its limit over every joint with a finite limit */
        double worst = 0;
        for (uint32_t i = 0; i < hs_bench_joint_count(s->bench); i++) {
            const struct hs_bench_joint *j = hs_bench_joint(s->bench, i);
            const struct hs_link *l = &hs_bench_model(s->bench, j->body)->links[j->link];
            double dq = hs_world_joint_velocity(w, j->body, j->link);
            double lim = dq >= 0 ? l->uvlimit : -l->lvlimit;
            if (isfinite(lim) && lim > 0 && fabs(dq) / lim > worst)
                worst = fabs(dq) / lim;
        }
        *ret_value = worst;
        return worst <= (isnan(sp->value) ? 1.0 : sp->value);
    }
    case HS__EX_COMMAND_TORQUE:
        *ret_value = commanded_torque(s, (uint32_t)st->joint);
        return fabs(*ret_value) <= sp->value;
    case HS__EX_TEMPERATURE_BELOW:
        *ret_value = hs_scenario_winding_temp_c(s, (uint32_t)st->joint);
        return *ret_value < sp->value;
    case HS__EX_NODE_STATE: {
        /* the value: the state's place in the protocol's list (the summary names it) */
        const char *now = hs__scen_node_state(port_of(st));
        *ret_value = (double)state_index(st, now);
        return !strcmp(now, sp->state);
    }
    default:
        *ret_value = NAN;
        return false;
    }
}

static void settle(struct hs__scen_step *st, enum hs_scenario_status status, int64_t k,
                   double value, const char *why)
{
    st->status = status;
    st->result_tick = k;
    st->result_value = value;
    st->why = why;
}

/* worse: farther from passing, for the value an "always" reports */
static bool worse(const struct hs__scen_step *st, double v, double than)
{
    const struct expect_spec *sp = spec_of(st);
    switch (sp->kind) {
    case HS__EX_JOINT_NEAR:
        return fabs(v - sp->value) > fabs(than - sp->value);
    case HS__EX_LINK_ABOVE:
        return v < than;
    case HS__EX_LINK_BELOW:
        return v > than;
    default:
        return fabs(v) > fabs(than);
    }
}

static void judge(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (st->status != HS_SCENARIO_PENDING)
        return;
    bool closing = st->was_active && !st->active;
    bool always = spec_of(st)->hold == HS__HOLD_ALWAYS;
    if (closing) { /* the window closed at the previous tick */
        if (always)
            settle(st, HS_SCENARIO_PASS, s->k - 1, st->result_value, "");
        else
            settle(st, HS_SCENARIO_FAIL, s->k - 1, st->result_value,
                   "the condition never held in its window");
        return;
    }
    if (!st->active)
        return;
    double v;
    bool ok = holds(s, st, &v);
    if (st->active_ticks == 1 || worse(st, v, st->result_value))
        st->result_value = v; /* the worst seen, reported when the window closes */
    if (always && !ok)
        settle(st, HS_SCENARIO_FAIL, s->k, v, "the condition did not hold");
    else if (!always && ok)
        settle(st, HS_SCENARIO_PASS, s->k, v, "");
}

/* At the run's end without an error (hs_scenario_finish), an expectation still pending: an
 * "always" whose window the scenario's end closed held to the last tick; any other failed. */
static void finish(struct hs_scenario *s, struct hs__scen_step *st)
{
    bool always = spec_of(st)->hold == HS__HOLD_ALWAYS;
    st->result_tick = s->k - 1;
    st->status = HS_SCENARIO_FAIL;
    if (st->onset < 0 || st->onset >= s->k) {
        st->why = "it never began: the run ended first or its start never came";
        st->result_tick = -1;
    } else if (always && s->done) {
        st->status = HS_SCENARIO_PASS;
        st->why = "";
    } else if (always) {
        st->why = "the run stopped before the scenario's end";
    } else {
        st->why = "the condition never held before the run ended";
    }
}

static void describe(struct hs_scenario *s, struct hs__scen_step *st)
{
    const struct hs__scen_step_spec *spec = st->sp;
    const struct expect_spec *sp = spec_of(st);
    char window[48];
    double dur_s =
        st->dur == HS_SCEN_NEVER ? INFINITY : (double)(st->dur - 1) * (double)s->period_ns * 1e-9;
    if (st->dur <= 1)
        snprintf(window, sizeof window, "at its tick");
    else if (st->dur == HS_SCEN_NEVER)
        snprintf(window, sizeof window, "%s until the end",
                 sp->hold == HS__HOLD_ALWAYS ? "always" : "at some tick");
    else
        snprintf(window, sizeof window, "%s %g s", sp->hold == HS__HOLD_ALWAYS ? "for" : "within",
                 dur_s);
    switch (sp->kind) {
    case HS__EX_JOINT_NEAR:
        snprintf(st->what, sizeof st->what, "joint %s within %g of %g %s", spec->t.joint,
                 sp->tolerance, sp->value, window);
        break;
    case HS__EX_LINK_ABOVE:
    case HS__EX_LINK_BELOW:
        snprintf(st->what, sizeof st->what, "link %s %s %g m %s", spec->t.link,
                 sp->kind == HS__EX_LINK_ABOVE ? "above" : "below", sp->value, window);
        break;
    case HS__EX_VELOCITY_LIMITS:
        snprintf(st->what, sizeof st->what, "no joint above %g x its velocity limit %s",
                 isnan(sp->value) ? 1.0 : sp->value, window);
        break;
    case HS__EX_COMMAND_TORQUE:
        snprintf(st->what, sizeof st->what, "commanded torque on %s within ±%g %s", spec->t.joint,
                 sp->value, window);
        break;
    case HS__EX_TEMPERATURE_BELOW:
        snprintf(st->what, sizeof st->what, "winding of %s below %g °C %s", spec->t.joint,
                 sp->value, window);
        break;
    case HS__EX_NODE_STATE:
        snprintf(st->what, sizeof st->what,
                 "CAN node %s in state %s %s (value: the state's index "
                 "in its protocol's list)",
                 sp->node, sp->state, window);
        break;
    default:
        break;
    }
}

/* ---- the kind: schema and ops (scen_kinds.h) ---- */
static const char *const expect_names[] = {
    "joint_near",     "link_above",        "link_below", "velocity_limits",
    "command_torque", "temperature_below", "node_state", NULL};
static const char *const hold_names[] = {"within", "always", NULL};

#define F(k, K, m, ...) HS__SCEN_OWN_FS(struct expect_spec, k, K, m, __VA_ARGS__)
static const struct hs__cfg_field fields[] = {
    F("kind", HS__K_ENUM, kind, .names = expect_names, .flags = HS__F_REQUIRED),
    HS__SCEN_NAME("joint", t.joint, 0),
    HS__SCEN_NAME("link", t.link, 0),
    HS__SCEN_NAME("model", t.model, 0),
    F("value", HS__K_DOUBLE, value, .min = -1e9, .max = 1e9),
    F("tolerance", HS__K_DOUBLE, tolerance, .min = 0, .max = 1e9),
    F("hold", HS__K_ENUM, hold, .names = hold_names),
    HS__SCEN_OWN_NAME(struct expect_spec, "node", node, 0),
    HS__SCEN_OWN_NAME(struct expect_spec, "state", state, 0),
};
#undef F
static const struct expect_spec defaults = {
    .hold = HS__HOLD_WITHIN, .value = NAN, .tolerance = NAN};

static int check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node, const char *path)
{
    struct hs__scen_step_spec *st = obj;
    HS__SCEN_OWN_DEFAULTS(st, fields, seen, &defaults);
    const struct expect_spec *sp = HS__SCEN_OWN(const struct expect_spec, st);
    switch (sp->kind) {
    case HS__EX_JOINT_NEAR:
        if (!st->t.joint[0] || isnan(sp->value) || isnan(sp->tolerance))
            return hs__cfg_err(c, node, "%s: joint_near needs joint, value and tolerance", path);
        break;
    case HS__EX_LINK_ABOVE:
    case HS__EX_LINK_BELOW:
        if (!st->t.link[0] || isnan(sp->value))
            return hs__cfg_err(c, node, "%s: %s needs link and value (m)", path,
                               expect_names[sp->kind]);
        break;
    case HS__EX_NODE_STATE:
        if (!sp->node[0] || !sp->state[0])
            return hs__cfg_err(c, node, "%s: node_state needs node and state", path);
        break;
    case HS__EX_COMMAND_TORQUE:
    case HS__EX_TEMPERATURE_BELOW:
        if (!st->t.joint[0] || isnan(sp->value))
            return hs__cfg_err(c, node, "%s: %s needs joint and value", path,
                               expect_names[sp->kind]);
        break;
    default:
        break;
    }
    return 0;
}

static int bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    const struct expect_spec *e = spec_of(st);
    struct expect_state *o = HS__SCEN_OWN(struct expect_state, st);
    int r;
    if (e->kind == HS__EX_NODE_STATE &&
        ((r = hs__scen_node_port(s, st, e->node, "expect", &o->port, diag)) < 0 ||
         (r = hs__scen_node_check_state(s, st, o->port, e->state, "expect", diag)) < 0))
        return r;
    if (e->kind == HS__EX_TEMPERATURE_BELOW) {
        bool any = false;
        for (uint32_t j = 0; j < s->nsteps; j++)
            any |=
                s->specs[j].kind == HS__SCEN_THERMAL && !strcmp(s->specs[j].t.joint, sp->t.joint);
        if (!any)
            return hs__scen_err_step(s, sp, diag, "temperature_below: no thermal step models joint",
                                     sp->t.joint);
    }
    describe(s, st);
    return 0;
}

const struct hs__scen_kind_ops hs__scen_kind_expect = {
    .schema = HS__SCEN_SCHEMA(fields, check),
    .lasts = HS__SCEN_LASTS_WINDOW,
    .no_repeat = "an expectation is evaluated once; repeat it as steps",
    .bind = bind,
    .judge = judge,
    .finish = finish,
};
