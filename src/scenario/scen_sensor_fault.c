/* Sensor faults: edits of the readings the plants published this tick, before any I/O module
 * sends them, so every transport (CAN, shm, the CSV log) carries the same faulty value while
 * the model underneath stays true. RT-safe. */
#include <math.h>
#include <string.h>

#include "scen_internal.h"

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

static double edit_value(struct hs__scen_step *st, double x, double shared_noise)
{
    const struct hs__scen_step_spec *sp = st->sp;
    switch (sp->sensor_kind) {
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
    const struct hs__scen_step_spec *sp = st->sp;
    if (sp->sensor_kind == HS__SF_NOISE)
        return sp->value * hs__scen_gauss(&st->rng);
    if (sp->sensor_kind == HS__SF_SPIKES) {
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
    const struct hs__scen_step_spec *sp = st->sp;
    bool start = st->active && !st->was_active;
    /* lost counts stay lost after the fault ends: applied from the first onset on */
    if (sp->sensor_kind == HS__SF_SKIP_COUNTS || sp->sensor_kind == HS__SF_LOSE_INDEX) {
        if (start && sp->sensor_kind == HS__SF_SKIP_COUNTS)
            st->count_offset += sp->value;
        if (start && sp->sensor_kind == HS__SF_LOSE_INDEX && !st->index_lost) {
            /* the counter restarts from zero where the index was lost */
            st->count_offset = -(double)r->encoder_count;
            st->index_lost = true;
        }
        if (st->activations) {
            r->encoder_count = (uint64_t)((int64_t)r->encoder_count + (int64_t)st->count_offset);
            r->encoder_position += st->count_offset / st->counts_per_unit;
        }
        return;
    }
    if (!st->active)
        return;
    switch (sp->sensor_kind) {
    case HS__SF_OFF: {
        int64_t t = r->time_ns;
        memset(r, 0, sizeof *r);
        r->time_ns = t;
        return;
    }
    case HS__SF_STUCK:
        if (start)
            st->held_joint = *r;
        *r = st->held_joint;
        return;
    case HS__SF_DELAY: {
        struct hs_joint_reading *ring = st->ring;
        if (start)
            for (uint32_t i = 0; i < st->ring_len; i++)
                ring[i] = *r;
        struct hs_joint_reading now = *r;
        *r = ring[st->ring_pos];
        ring[st->ring_pos] = now;
        st->ring_pos = (st->ring_pos + 1) % st->ring_len;
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

static void sensor_fault(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!st->active)
        return;
    const struct hs_bench_sensor *bs = hs_bench_sensor(s->bench, (uint32_t)st->sensor);
    struct hs_sensor_reading *r = hs_plant_sensor_reading_edit(bs->plant, bs->model_sensor);
    bool start = !st->was_active;
    switch (st->sp->sensor_kind) {
    case HS__SF_OFF: {
        int64_t t = r->time_ns;
        uint64_t n = r->samples;
        memset(r, 0, sizeof *r);
        r->time_ns = t, r->samples = n;
        return;
    }
    case HS__SF_STUCK:
        if (start)
            st->held_sensor = *r;
        *r = st->held_sensor;
        return;
    case HS__SF_DELAY: {
        struct hs_sensor_reading *ring = st->ring;
        if (start)
            for (uint32_t i = 0; i < st->ring_len; i++)
                ring[i] = *r;
        struct hs_sensor_reading now = *r;
        *r = ring[st->ring_pos];
        ring[st->ring_pos] = now;
        st->ring_pos = (st->ring_pos + 1) % st->ring_len;
        return;
    }
    default:
        break;
    }
    /* field torque: a force sensor's torque; anything else: the main value (specific force,
     * rate, force) */
    double *v = st->sp->field == HS__FIELD_TORQUE ? r->torque : r->value;
    for (int k = 0; k < 3; k++)
        v[k] = edit_value(st, v[k], draw(st));
}

void hs__scen_sensor_faults(struct hs_scenario *s)
{
    for (uint32_t i = 0; i < s->nsteps; i++) {
        struct hs__scen_step *st = &s->steps[i];
        if (st->kind != HS__SCEN_SENSOR_FAULT)
            continue;
        if (st->joint >= 0)
            joint_fault(s, st);
        else
            sensor_fault(s, st);
    }
}
