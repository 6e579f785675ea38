/* The motor thermal model: a winding and case temperature per joint from the drive's current,
 * derating the drive's output above derate_c and cutting it at limit_c; the winding
 * temperature goes to the CAN nodes that drive the joint (scen_can_node.c) and to expect
 * temperature_below. Its schema and ops table (scen_kinds.h) are at the end of this file.
 * RT-safe: no allocation. */
#include <math.h>

#include "scen_internal.h"

/* The model's parameters (keys of the same names) and its state. */
struct thermal_spec {
    double ambient_c, r_winding_ohm, alpha_per_k, r_wc_k_per_w, r_ca_k_per_w, c_winding_j_per_k,
        c_case_j_per_k, derate_c, limit_c;
};
#define TEMP_PORTS 4 /* CAN nodes a thermal model reports its temperature through */
struct thermal_state {
    double t_winding_c, t_case_c;
    bool tripped;
    struct hs_can_port *port[TEMP_PORTS]; /* the CAN nodes driving the joint */
    uint32_t nports;
};
HS__SCEN_OWN_FITS(struct thermal_spec);
HS__SCEN_OWN_FITS(struct thermal_state);

static const struct thermal_spec *spec_of(const struct hs__scen_step *st)
{
    return HS__SCEN_OWN(const struct thermal_spec, st->sp);
}

static bool acts(const struct hs__scen_step *st)
{
    return st->active || st->was_active;
}

/* Two-node thermal model (winding, case) driven by the copper losses of the current the plant
 * estimates: P = I^2 R(Tw), R(Tw) = R25 (1 + alpha (Tw - 25 °C)). Explicit Euler per tick
 * (tick << the winding's time constant R C). */
/* The share of the drive's torque the thermal model lets through at its state now. */
static double thermal_keep(const struct hs__scen_step *st)
{
    const struct thermal_state *t = HS__SCEN_OWN(const struct thermal_state, st);
    const struct thermal_spec *sp = spec_of(st);
    if (t->tripped)
        return 0;
    if (t->t_winding_c <= sp->derate_c)
        return 1;
    double k = (sp->limit_c - t->t_winding_c) / (sp->limit_c - sp->derate_c);
    return k < 0 ? 0 : k;
}

static void thermal(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!st->active)
        return;
    const struct thermal_spec *sp = spec_of(st);
    struct thermal_state *t = HS__SCEN_OWN(struct thermal_state, st);
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

double hs_scenario_winding_temp_c(const struct hs_scenario *s, uint32_t bench_joint)
{
    for (uint32_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].kind == HS__SCEN_THERMAL && s->steps[i].joint == (int32_t)bench_joint)
            return HS__SCEN_OWN(const struct thermal_state, &s->steps[i])->t_winding_c;
    return NAN;
}

/* ---- the kind: schema and ops (scen_kinds.h) ---- */
static const struct hs__cfg_field thermal_f[] = {
    HS__SCEN_NAME("joint", t.joint, HS__F_REQUIRED),
#define THERMAL_DBL(k, lo, hi, fl)                                                                 \
    HS__SCEN_OWN_FS(struct thermal_spec, #k, HS__K_DOUBLE, k, .min = lo, .max = hi, .flags = fl)
    THERMAL_DBL(ambient_c, -60, 200, 0),
    THERMAL_DBL(r_winding_ohm, 0, 1e3, HS__F_MIN_OPEN),
    THERMAL_DBL(alpha_per_k, 0, 0.1, 0),
    THERMAL_DBL(r_wc_k_per_w, 0, 1e3, HS__F_MIN_OPEN),
    THERMAL_DBL(r_ca_k_per_w, 0, 1e3, HS__F_MIN_OPEN),
    THERMAL_DBL(c_winding_j_per_k, 0, 1e6, HS__F_MIN_OPEN),
    THERMAL_DBL(c_case_j_per_k, 0, 1e6, HS__F_MIN_OPEN),
    THERMAL_DBL(derate_c, -60, 400, 0),
    THERMAL_DBL(limit_c, -60, 400, 0),
#undef THERMAL_DBL
};

/* a small servo motor: 0.5 ohm copper at 25 °C, 5 K/W to the case, 2 K/W case to ambient,
 * winding 10 J/K (time constant 50 s), case 200 J/K; derate from 100 °C, off at 130 °C */
static const struct thermal_spec thermal_defaults = {
    .ambient_c = 25,
    .r_winding_ohm = 0.5,
    .alpha_per_k = 0.00393, /* copper */
    .r_wc_k_per_w = 5,
    .r_ca_k_per_w = 2,
    .c_winding_j_per_k = 10,
    .c_case_j_per_k = 200,
    .derate_c = 100,
    .limit_c = 130,
};

static int thermal_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path)
{
    struct hs__scen_step_spec *spec = obj;
    HS__SCEN_OWN_DEFAULTS(spec, thermal_f, seen, &thermal_defaults);
    const struct thermal_spec *st = HS__SCEN_OWN(const struct thermal_spec, spec);
    if (!(st->derate_c > st->ambient_c) || !(st->limit_c > st->derate_c))
        return hs__cfg_err(c, node, "%s: needs ambient_c < derate_c < limit_c", path);
    return 0;
}

static int thermal_bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    struct thermal_state *t = HS__SCEN_OWN(struct thermal_state, st);
    t->nports = hs__scen_temp_ports(s, sp->t.joint, t->port, TEMP_PORTS);
    t->t_winding_c = t->t_case_c = spec_of(st)->ambient_c;
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
        hs__scen_drive_derate(s, st, keep);
}

/* from the model's first tick on; it stays at its last value after its step */
static void thermal_readings(struct hs_scenario *s, struct hs__scen_step *st)
{
    (void)s;
    const struct thermal_state *t = HS__SCEN_OWN(const struct thermal_state, st);
    if (st->activations)
        hs__scen_report_temperature(t->port, t->nports, t->t_winding_c);
}

const struct hs__scen_kind_ops hs__scen_kind_thermal = {
    .schema = HS__SCEN_SCHEMA(thermal_f, thermal_check),
    .bind = thermal_bind,
    .commands = thermal_commands,
    .substep = thermal_substep,
    .readings = thermal_readings,
};
