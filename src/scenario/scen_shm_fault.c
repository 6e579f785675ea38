/* Shared-memory faults: "freeze" stops the shm module publishing (clients see the tick and the
 * state stop); "stale" keeps the ticks coming with every reading (every joint and sensor)
 * repeating the fault's first tick (a range scan too), as a server whose state copy stopped
 * updating. Stale acts
 * on the published readings, so CAN replies carry the stale values too. RT-safe. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scen_internal.h"

enum shm_kind { SHM_FREEZE, SHM_STALE, SHM_MAX };
struct shm_spec {
    int kind; /* enum shm_kind */
};
/* stale: every joint's reading at onset, every sensor's, and their published values in bench
 * order */
struct shm_state {
    struct hs_joint_reading *joints;
    struct hs_sensor_reading *sensors;
    double *values;
};
HS__SCEN_OWN_FITS(struct shm_spec);
HS__SCEN_OWN_FITS(struct shm_state);

static int bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    struct shm_state *o = HS__SCEN_OWN(struct shm_state, st);
    if (HS__SCEN_OWN(const struct shm_spec, st->sp)->kind != SHM_STALE)
        return 0;
    uint32_t nj = hs_bench_joint_count(s->bench), ns = hs_bench_sensor_count(s->bench);
    o->joints = calloc(nj ? nj : 1, sizeof *o->joints);
    o->sensors = calloc(ns ? ns : 1, sizeof *o->sensors);
    size_t nv = 0;
    for (uint32_t i = 0; i < ns; i++)
        nv += hs_bench_sensor(s->bench, i)->layout.nvalues;
    o->values = calloc(nv ? nv : 1, sizeof *o->values);
    if (!o->joints || !o->sensors || !o->values)
        return hs_diag_set(diag, -ENOMEM, s->path, 0, 0, "out of memory");
    return 0;
}

static void stale(struct hs_scenario *s, struct hs__scen_step *st)
{
    struct shm_state *o = HS__SCEN_OWN(struct shm_state, st);
    bool start = !st->was_active;
    for (uint32_t i = 0; i < hs_bench_joint_count(s->bench); i++) {
        const struct hs_bench_joint *j = hs_bench_joint(s->bench, i);
        struct hs_joint_reading *r = hs_plant_joint_reading_edit(j->plant, j->plant_joint);
        if (start)
            o->joints[i] = *r;
        *r = o->joints[i];
    }
    double *held = o->values;
    for (uint32_t i = 0; i < hs_bench_sensor_count(s->bench); i++) {
        const struct hs_bench_sensor *x = hs_bench_sensor(s->bench, i);
        struct hs_sensor_reading *r = hs_plant_sensor_reading_edit(x->plant, x->model_sensor);
        double *v = hs_plant_sensor_values_edit(x->plant, x->model_sensor);
        size_t bytes = x->layout.nvalues * sizeof *v;
        if (start) {
            o->sensors[i] = *r;
            memcpy(held, v, bytes);
        }
        /* the reading first: for the small kinds the values are its own v[] */
        *r = o->sensors[i];
        memcpy(v, held, bytes);
        held += x->layout.nvalues;
    }
}

/* after every sensor fault: a stale copy holds what they made of the readings */
static void publish(struct hs_scenario *s, struct hs__scen_step *st)
{
    if (!st->active && !st->was_active)
        return;
    if (HS__SCEN_OWN(const struct shm_spec, st->sp)->kind == SHM_FREEZE)
        hs_bench_set_shm_freeze(s->bench, st->active);
    else if (st->active)
        stale(s, st);
}

static void release(struct hs__scen_step *st)
{
    struct shm_state *o = HS__SCEN_OWN(struct shm_state, st);
    free(o->joints);
    free(o->sensors);
    free(o->values);
    *o = (struct shm_state){0};
}

static const char *const kind_names[] = {"freeze", "stale", NULL};
static const struct hs__cfg_field fields[] = {
    HS__SCEN_OWN_FS(struct shm_spec, "kind", HS__K_ENUM, kind, .names = kind_names,
                    .flags = HS__F_REQUIRED),
};

const struct hs__scen_kind_ops hs__scen_kind_shm_fault = {
    .schema = HS__SCEN_SCHEMA(fields, NULL),
    .bind = bind,
    .publish = publish,
    .release = release,
};
