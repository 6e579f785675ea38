/* Sensor faults: edits of the readings the plants published this tick, before any I/O module
 * sends them, so every transport (CAN, shm, the CSV log) carries the same faulty value while
 * the model underneath stays true. A model sensor's faults act on the values its kind
 * publishes (struct hs_sensor_layout), so every kind of the registry gets them, a range scan
 * per beam. RT-safe, but for the init-only binding. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scen_internal.h"

enum hs__scen_sensor_kind {
    HS__SF_OFF,
    HS__SF_STUCK,
    HS__SF_OFFSET,
    HS__SF_SCALE,
    HS__SF_NOISE,
    HS__SF_SPIKES,
    HS__SF_DELAY,
    HS__SF_QUANTIZE,
    HS__SF_SKIP_COUNTS,
    HS__SF_LOSE_INDEX,
    HS__SF_SATURATE,
    HS__SF_MAX
};

enum hs__scen_field {
    HS__FIELD_POSITION,
    HS__FIELD_VELOCITY,
    HS__FIELD_TORQUE,
    HS__FIELD_CURRENT,
    HS__FIELD_MAX
};

/* The fault's keys (value: the offset, factor, noise sigma, spike size, delay s, step or
 * bound; probability: of a spike per tick) and its run state. */
struct sensor_fault_spec {
    int kind;  /* enum hs__scen_sensor_kind */
    int field; /* enum hs__scen_field */
    double value, probability;
};
struct sensor_fault_state {
    union {
        struct hs_joint_reading joint;
        struct hs_sensor_reading sensor;
    } held;              /* stuck: the reading at onset (a joint's or a sensor's) */
    double *held_values; /* stuck: a sensor's published values at onset (layout.nvalues) */
    void *ring;          /* delay: ring_len readings */
    double *ring_values; /* sensor delay: ring_len x layout.nvalues published values */
    uint32_t ring_len, ring_pos;
    double count_offset;    /* skip_counts / lose_index: counts lost, persists */
    double counts_per_unit; /* encoder counts per joint rad (or m) */
    bool index_lost;
};
HS__SCEN_OWN_FITS(struct sensor_fault_spec);
HS__SCEN_OWN_FITS(struct sensor_fault_state);

static const struct sensor_fault_spec *spec_of(const struct hs__scen_step *st)
{
    return HS__SCEN_OWN(const struct sensor_fault_spec, st->sp);
}

static struct sensor_fault_state *state_of(struct hs__scen_step *st)
{
    return HS__SCEN_OWN(struct sensor_fault_state, st);
}

/* The fields of a joint reading a fault acts on (position: the unwrapped position and the
 * one decoded from the counter; velocity: the true rate and the board-style estimate). */
static void joint_fields(struct hs_joint_reading *r, int field, double *ret[2])
{
    switch (field) {
    case HS__FIELD_VELOCITY:
        ret[0] = &r->dq, ret[1] = &r->encoder_velocity;
        break;
    case HS__FIELD_TORQUE:
        ret[0] = &r->torque, ret[1] = NULL;
        break;
    case HS__FIELD_CURRENT:
        ret[0] = &r->current, ret[1] = NULL;
        break;
    default:
        ret[0] = &r->q, ret[1] = &r->encoder_position;
    }
}

static double edit_value(const struct hs__scen_step *st, double x, double shared_noise)
{
    const struct sensor_fault_spec *sp = spec_of(st);
    switch (sp->kind) {
    case HS__SF_OFFSET:
        return x + sp->value;
    case HS__SF_SCALE:
        return x * sp->value;
    case HS__SF_NOISE:
    case HS__SF_SPIKES:
        return x + shared_noise;
    case HS__SF_QUANTIZE:
        return sp->value * round(x / sp->value);
    case HS__SF_SATURATE:
        return x > sp->value ? sp->value : x < -sp->value ? -sp->value : x;
    default:
        return x;
    }
}

/* One draw per tick for noise and spikes, shared by a reading's paired fields, so position and
 * encoder position (or the three axes' draws, one each) stay consistent. */
static double draw(struct hs__scen_step *st)
{
    const struct sensor_fault_spec *sp = spec_of(st);
    if (sp->kind == HS__SF_NOISE)
        return sp->value * hs__scen_gauss(&st->rng);
    if (sp->kind == HS__SF_SPIKES) {
        if (hs__scen_uniform(&st->rng) >= sp->probability)
            return 0;
        return hs__scen_uniform(&st->rng) < 0.5 ? -sp->value : sp->value;
    }
    return 0;
}

static void joint_fault(struct hs_scenario *s, struct hs__scen_step *st)
{
    const struct hs_bench_joint *bj = hs_bench_joint(s->bench, (uint32_t)st->joint);
    struct hs_joint_reading *r = hs_plant_joint_reading_edit(bj->plant, bj->plant_joint);
    const struct sensor_fault_spec *sp = spec_of(st);
    struct sensor_fault_state *o = state_of(st);
    bool start = st->active && !st->was_active;
    /* lost counts stay lost after the fault ends: applied from the first onset on */
    if (sp->kind == HS__SF_SKIP_COUNTS || sp->kind == HS__SF_LOSE_INDEX) {
        if (start && sp->kind == HS__SF_SKIP_COUNTS)
            o->count_offset += sp->value;
        if (start && sp->kind == HS__SF_LOSE_INDEX && !o->index_lost) {
            /* the counter restarts from zero where the index was lost */
            o->count_offset = -(double)r->encoder_count;
            o->index_lost = true;
        }
        if (st->activations) {
            r->encoder_count = (uint64_t)((int64_t)r->encoder_count + (int64_t)o->count_offset);
            r->encoder_position += o->count_offset / o->counts_per_unit;
        }
        return;
    }
    if (!st->active)
        return;
    switch (sp->kind) {
    case HS__SF_OFF: {
        int64_t t = r->time_ns;
        memset(r, 0, sizeof *r);
        r->time_ns = t;
        return;
    }
    case HS__SF_STUCK:
        if (start)
            o->held.joint = *r;
        *r = o->held.joint;
        return;
    case HS__SF_DELAY: {
        struct hs_joint_reading *ring = o->ring;
        if (start)
            for (uint32_t i = 0; i < o->ring_len; i++)
                ring[i] = *r;
        struct hs_joint_reading now = *r;
        *r = ring[o->ring_pos];
        ring[o->ring_pos] = now;
        o->ring_pos = (o->ring_pos + 1) % o->ring_len;
        return;
    }
    default:
        break;
    }
    double *f[2];
    joint_fields(r, sp->field, f);
    double n = draw(st);
    for (int k = 0; k < 2; k++)
        if (f[k])
            *f[k] = edit_value(st, *f[k], n);
}

/* The values a sensor fault edits: a kind declares one unit per quantity ("N,Nm": force then
 * torque, three values each; "m": a range scan's beams), so `field: torque` picks the second
 * quantity's values and anything else the first. */
static uint32_t quantities(const struct hs_sensor_layout *l)
{
    uint32_t n = 1;
    for (const char *u = l->unit; u && *u; u++)
        n += *u == ',';
    return n;
}

static const char *refused(const struct sensor_fault_spec *sp, const struct hs_sensor_layout *l)
{
    if (sp->field == HS__FIELD_TORQUE && quantities(l) < 2)
        return "field: torque needs a sensor with a torque (a force sensor)";
    if (sp->kind == HS__SF_SATURATE && l->one_sided)
        return "kind: saturate clips to ±value; this sensor's values are one-sided distances "
               "(beyond its maxDistance it already reads no return)";
    return NULL;
}

static int bind_buffers(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (st->sensor < 0)
        return 0;
    struct sensor_fault_state *o = state_of(st);
    size_t n = hs_bench_sensor(s->bench, (uint32_t)st->sensor)->layout.nvalues;
    if (spec_of(st)->kind == HS__SF_STUCK && !(o->held_values = calloc(n ? n : 1, sizeof(double))))
        return -ENOMEM;
    if (spec_of(st)->kind == HS__SF_DELAY) {
        if ((size_t)o->ring_len * n > HS_SCEN_MAX_DELAY_VALUES)
            return -EFBIG;
        if (!(o->ring_values = calloc((size_t)o->ring_len * (n ? n : 1), sizeof(double))))
            return -ENOMEM;
    }
    return 0;
}

/* The published reading and values move together (stuck, delay, off): for the small kinds the
 * values are the reading's own v[], for a range sensor its scan. */
static void sensor_fault(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!st->active)
        return;
    const struct hs_bench_sensor *bs = hs_bench_sensor(s->bench, (uint32_t)st->sensor);
    struct hs_sensor_reading *r = hs_plant_sensor_reading_edit(bs->plant, bs->model_sensor);
    double *v = hs_plant_sensor_values_edit(bs->plant, bs->model_sensor);
    uint32_t n = bs->layout.nvalues;
    size_t bytes = n * sizeof *v;
    bool start = !st->was_active;
    struct sensor_fault_state *o = state_of(st);
    switch (spec_of(st)->kind) {
    case HS__SF_OFF: {
        int64_t t = r->time_ns;
        uint64_t k = r->samples;
        memset(r, 0, sizeof *r);
        r->time_ns = t, r->samples = k;
        for (uint32_t i = 0; i < n; i++)
            v[i] = bs->layout.no_return;
        return;
    }
    case HS__SF_STUCK:
        if (start) {
            o->held.sensor = *r;
            memcpy(o->held_values, v, bytes);
        }
        *r = o->held.sensor;
        memcpy(v, o->held_values, bytes);
        return;
    case HS__SF_DELAY: {
        struct hs_sensor_reading *ring = o->ring;
        double *rv = o->ring_values + (size_t)o->ring_pos * n;
        if (start)
            for (uint32_t i = 0; i < o->ring_len; i++) {
                ring[i] = *r;
                memcpy(o->ring_values + (size_t)i * n, v, bytes);
            }
        struct hs_sensor_reading now = *r;
        *r = ring[o->ring_pos];
        ring[o->ring_pos] = now;
        for (uint32_t i = 0; i < n; i++) {
            double x = v[i];
            v[i] = rv[i];
            rv[i] = x;
        }
        o->ring_pos = (o->ring_pos + 1) % o->ring_len;
        return;
    }
    default:
        break;
    }
    uint32_t per = n / quantities(&bs->layout);
    double *f = spec_of(st)->field == HS__FIELD_TORQUE ? v + per : v;
    /* one draw per value whatever it holds, so a beam's noise does not depend on the others;
     * a marker (±inf: no return, under minDistance) stays what it is */
    for (uint32_t i = 0; i < per; i++) {
        double d = draw(st);
        if (isfinite(f[i]))
            f[i] = edit_value(st, f[i], d);
    }
}

/* ---- the kind: schema and ops (scen_kinds.h) ---- */
static const char *const sensor_names[] = {"off",         "stuck",      "offset",   "scale",
                                           "noise",       "spikes",     "delay",    "quantize",
                                           "skip_counts", "lose_index", "saturate", NULL};
static const char *const field_names[] = {"position", "velocity", "torque", "current", NULL};

static const struct hs__cfg_field fields[] = {
    HS__SCEN_OWN_FS(struct sensor_fault_spec, "kind", HS__K_ENUM, kind, .names = sensor_names,
                    .flags = HS__F_REQUIRED),
    HS__SCEN_NAME("joint", t.joint, 0),
    HS__SCEN_NAME("sensor", t.sensor, 0),
    HS__SCEN_OWN_FS(struct sensor_fault_spec, "field", HS__K_ENUM, field, .names = field_names),
    HS__SCEN_OWN_FS(struct sensor_fault_spec, "value", HS__K_DOUBLE, value, .min = -1e9,
                    .max = 1e9),
    HS__SCEN_OWN_FS(struct sensor_fault_spec, "probability", HS__K_DOUBLE, probability, .min = 0,
                    .max = 1),
};
static const struct sensor_fault_spec defaults = {.value = NAN, .probability = 1};

static int check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node, const char *path)
{
    struct hs__scen_step_spec *st = obj;
    HS__SCEN_OWN_DEFAULTS(st, fields, seen, &defaults);
    const struct sensor_fault_spec *sp = HS__SCEN_OWN(const struct sensor_fault_spec, st);
    if (!st->t.joint[0] == !st->t.sensor[0])
        return hs__cfg_err(c, node, "%s: name either a joint or a sensor", path);
    bool needs_value =
        sp->kind != HS__SF_OFF && sp->kind != HS__SF_STUCK && sp->kind != HS__SF_LOSE_INDEX;
    if (needs_value && isnan(sp->value))
        return hs__cfg_err(c, node, "%s: %s needs a value", path, sensor_names[sp->kind]);
    if ((sp->kind == HS__SF_SKIP_COUNTS || sp->kind == HS__SF_LOSE_INDEX) && !st->t.joint[0])
        return hs__cfg_err(c, node, "%s: %s is an encoder fault: name a joint", path,
                           sensor_names[sp->kind]);
    if ((sp->kind == HS__SF_QUANTIZE || sp->kind == HS__SF_SATURATE || sp->kind == HS__SF_DELAY) &&
        !(sp->value > 0))
        return hs__cfg_err(c, node, "%s: %s needs a value > 0", path, sensor_names[sp->kind]);
    if (sp->kind == HS__SF_DELAY && sp->value > 100)
        return hs__cfg_err(c, node, "%s: a delay of at most 100 s", path);
    return 0;
}

/* encoder counts per joint rad (or m): the config's encoder and gear ratio, else the model's */
static double counts_per_unit(struct hs_scenario *s, const struct hs__scen_step *st)
{
    const struct hs_config *cfg = hs_bench_config(s->bench);
    const struct hs_link *l = &hs_bench_model(s->bench, st->body)->links[st->link];
    const struct hs_cfg_encoder *e = hs_config_encoder(cfg, st->sp->t.joint);
    const struct hs_cfg_actuator *a = hs_config_actuator(cfg, st->sp->t.joint);
    double cpr = e && e->counts_per_rev > 0 ? e->counts_per_rev : l->encoder_pulse;
    double n = a && !isnan(a->gear_ratio) ? a->gear_ratio : l->gear_ratio;
    return cpr * fabs(n) / (l->joint_type == HS_JOINT_ROTATE ? 2 * M_PI : 1);
}

/* init only: the fault checked against what the sensor's kind publishes (struct
 * hs_sensor_layout), and its buffers */
static int bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    const struct sensor_fault_spec *f = spec_of(st);
    struct sensor_fault_state *o = state_of(st);
    if (st->joint >= 0)
        o->counts_per_unit = counts_per_unit(s, st);
    if (st->sensor >= 0) {
        const struct hs_sensor_layout *l = &hs_bench_sensor(s->bench, (uint32_t)st->sensor)->layout;
        const char *why = refused(f, l);
        char at[32];
        hs__scen_step_at(s, sp, at, sizeof at);
        if (why)
            return hs_diag_set(diag, -EINVAL, s->path, sp->src.line, sp->src.column,
                               "%s.sensor_fault: %s sensor '%s': %s", at, l->kind, sp->t.sensor,
                               why);
    }
    if (f->kind == HS__SF_DELAY) {
        int64_t d = (int64_t)llround(f->value * 1e9 / (double)s->period_ns);
        if (d < 1 || d > HS_SCEN_MAX_DELAY_TICKS)
            return hs__scen_err_step(s, sp, diag, "delay must be 1 tick to 100000 ticks; got",
                                     "out of range");
        size_t one =
            st->joint >= 0 ? sizeof(struct hs_joint_reading) : sizeof(struct hs_sensor_reading);
        o->ring_len = (uint32_t)d;
        o->ring = calloc((size_t)d, one);
        if (!o->ring)
            return hs_diag_set(diag, -ENOMEM, s->path, 0, 0, "out of memory");
    }
    int r = bind_buffers(s, st);
    if (r == -EFBIG)
        return hs__scen_err_step(s, sp, diag,
                                 "delay: the sensor's values over that delay exceed 64 MiB; got",
                                 sp->t.sensor);
    if (r < 0)
        return hs_diag_set(diag, r, s->path, 0, 0, "out of memory");
    return 0;
}

/* lost encoder counts stay lost while the live step holds its slot */
static bool keeps_slot(const struct hs__scen_step *st)
{
    return spec_of(st)->kind == HS__SF_SKIP_COUNTS || spec_of(st)->kind == HS__SF_LOSE_INDEX;
}

static void release(struct hs__scen_step *st)
{
    struct sensor_fault_state *o = state_of(st);
    free(o->held_values);
    free(o->ring);
    free(o->ring_values);
    o->held_values = o->ring_values = NULL;
    o->ring = NULL;
}

static void readings(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (st->joint >= 0)
        joint_fault(s, st);
    else
        sensor_fault(s, st);
}

const struct hs__scen_kind_ops hs__scen_kind_sensor_fault = {
    .schema = HS__SCEN_SCHEMA(fields, check),
    .bind = bind,
    .readings = readings,
    .release = release,
    .keeps_slot = keeps_slot,
};
