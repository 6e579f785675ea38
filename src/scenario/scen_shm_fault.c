/* Shared-memory faults: "freeze" stops the shm module publishing (clients see the tick and the
 * state stop); "stale" keeps the ticks coming with every reading (every joint and sensor)
 * repeating the fault's first tick (a range scan too), as a server whose state copy stopped
 * updating. Stale acts
 * on the published readings, so CAN replies carry the stale values too. RT-safe. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scen_internal.h"

static int bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    if (st->sp->shm_kind != HS__SHF_STALE)
        return 0;
    uint32_t nj = hs_bench_joint_count(s->bench), ns = hs_bench_sensor_count(s->bench);
    st->stale_joints = calloc(nj ? nj : 1, sizeof *st->stale_joints);
    st->stale_sensors = calloc(ns ? ns : 1, sizeof *st->stale_sensors);
    size_t nv = 0;
    for (uint32_t i = 0; i < ns; i++)
        nv += hs_bench_sensor(s->bench, i)->layout.nvalues;
    st->stale_values = calloc(nv ? nv : 1, sizeof *st->stale_values);
    if (!st->stale_joints || !st->stale_sensors || !st->stale_values)
        return hs_diag_set(diag, -ENOMEM, s->path, 0, 0, "out of memory");
    return 0;
}

static void stale(struct hs_scenario *s, struct hs__scen_step *st)
{
    bool start = !st->was_active;
    for (uint32_t i = 0; i < hs_bench_joint_count(s->bench); i++) {
        const struct hs_bench_joint *j = hs_bench_joint(s->bench, i);
        struct hs_joint_reading *r = hs_plant_joint_reading_edit(j->plant, j->plant_joint);
        if (start)
            st->stale_joints[i] = *r;
        *r = st->stale_joints[i];
    }
    double *held = st->stale_values;
    for (uint32_t i = 0; i < hs_bench_sensor_count(s->bench); i++) {
        const struct hs_bench_sensor *x = hs_bench_sensor(s->bench, i);
        struct hs_sensor_reading *r = hs_plant_sensor_reading_edit(x->plant, x->model_sensor);
        double *v = hs_plant_sensor_values_edit(x->plant, x->model_sensor);
        size_t bytes = x->layout.nvalues * sizeof *v;
        if (start) {
            st->stale_sensors[i] = *r;
            memcpy(held, v, bytes);
        }
        /* the reading first: for the small kinds the values are its own v[] */
        *r = st->stale_sensors[i];
        memcpy(v, held, bytes);
        held += x->layout.nvalues;
    }
}

/* after every sensor fault: a stale copy holds what they made of the readings */
static void publish(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!st->active && !st->was_active)
        return;
    if (st->sp->shm_kind == HS__SHF_FREEZE)
        hs_bench_set_shm_freeze(s->bench, st->active);
    else if (st->active)
        stale(s, st);
}

static const char *const kind_names[] = {"freeze", "stale", NULL};
static const struct hs__cfg_field fields[] = {
    HS__SCEN_ENUM("kind", shm_kind, kind_names, HS__F_REQUIRED),
};

const struct hs__scen_kind_ops hs__scen_kind_shm_fault = {
    .schema = HS__SCEN_SCHEMA(fields, NULL),
    .bind = bind,
    .publish = publish,
};
