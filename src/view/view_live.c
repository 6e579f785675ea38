/* The live source: a running bench's shm segment, attached read-only. Each frame is the newest
 * published state (a seqlock copy, never a wait): the view samples at the display rate, so the
 * tick rate of the bench does not set its cost. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/client.h"
#include "view_internal.h"

struct live {
    struct hs_client *c;
    struct hs_client_info info;
    char bench[HS_SHM_BENCH_MAX + 1];
    struct hs_shm_joint_state *joints;
    double *values;
    uint64_t last_tick;
    bool have;
};

/* The shm ABI's clock mode as the bench's config and `ctl status` spell it. */
static const char *clock_name(uint32_t mode)
{
    switch (mode) {
    case HS_SHM_CLOCK_WALL:
        return "wall";
    case HS_SHM_CLOCK_LOCKSTEP:
        return "lockstep";
    case HS_SHM_CLOCK_SYNC:
        return "sync";
    default:
        return "unknown";
    }
}

/* An object of text members from key, value pairs (up to a NULL key). */
static json_t *texts(const char *const *kv, bool *bad)
{
    json_t *o = json_object();
    for (; *kv; kv += 2)
        hs__view_set(o, kv[0], hs__view_text(kv[1]), bad);
    return o;
}

static json_t *live_info(void *ctx)
{
    struct live *l = ctx;
    bool bad = false;
    json_t *o = json_object();
    hs__view_set(o, "mode", json_string("live"), &bad);
    hs__view_set(o, "bench", hs__view_text(l->bench), &bad);
    hs__view_set(o, "period_ns", json_integer((json_int_t)l->info.tick_period_ns), &bad);
    hs__view_set(o, "clock", json_string(clock_name(l->info.clock_mode)), &bad);
    json_t *joints = json_array();
    for (uint32_t i = 0; i < l->info.joint_count; i++) {
        const char *kv[] = {"name", hs_client_joint_name(l->c, i), "unit",
                            hs_client_joint_unit(l->c, i), NULL};
        hs__view_add(joints, texts(kv, &bad), &bad);
    }
    hs__view_set(o, "joints", joints, &bad);
    json_t *readings = json_array();
    for (uint32_t i = 0; i < hs_client_reading_count(l->c); i++) {
        const struct hs_shm_reading_desc *d = hs_client_reading(l->c, i);
        const char *kv[] = {"name", d->name, "kind", d->kind, "unit", d->unit, NULL};
        json_t *r = texts(kv, &bad);
        hs__view_set(r, "n", json_integer(d->value_count), &bad);
        hs__view_set(r, "index", json_integer(d->value_index), &bad);
        hs__view_set(r, "group", json_integer(d->group), &bad);
        hs__view_add(readings, r, &bad);
    }
    hs__view_set(o, "readings", readings, &bad);
    if (!bad)
        return o;
    json_decref(o);
    return NULL;
}

int hs__view_live_frame(const struct hs_client_state *st, uint32_t nj, const double *values,
                        uint32_t nv, bool stopped, struct hs_view_buf *out)
{
    const size_t stride = sizeof(struct hs_shm_joint_state) / sizeof(double);
    _Static_assert(sizeof(struct hs_shm_joint_state) % sizeof(double) == 0, "joint state");
    const struct hs_shm_joint_state *j = st->joints;
    bool bad = false;
    json_t *m = json_object();
    hs__view_set(m, "type", json_string("frame"), &bad);
    hs__view_set(m, "tick", json_integer((json_int_t)st->tick), &bad);
    hs__view_set(m, "t", hs__view_fixed(st->sim_time_s, 6), &bad);
    hs__view_set(m, "mono", json_integer((json_int_t)st->mono_ns), &bad);
    hs__view_set(m, "flags", json_integer((json_int_t)st->bench_flags), &bad);
    hs__view_set(m, "stale", json_integer(st->stale_joints), &bad);
    hs__view_set(m, "q", hs__view_nums(&j[0].q, nj, stride, HS_VIEW_DIGITS), &bad);
    hs__view_set(m, "dq", hs__view_nums(&j[0].dq, nj, stride, HS_VIEW_DIGITS), &bad);
    hs__view_set(m, "tau", hs__view_nums(&j[0].tau, nj, stride, HS_VIEW_DIGITS), &bad);
    hs__view_set(m, "cur", hs__view_nums(&j[0].current_a, nj, stride, HS_VIEW_DIGITS), &bad);
    hs__view_set(m, "r", hs__view_nums(values, nv, 1, HS_VIEW_DIGITS), &bad);
    hs__view_set(m, "stopped", json_boolean(stopped), &bad);
    return hs__view_dump(m, bad, out);
}

static int live_frame(void *ctx, int64_t now_ns, struct hs_view_buf *out)
{
    (void)now_ns;
    struct live *l = ctx;
    struct hs_client_state st = {.joints = l->joints};
    int r = hs_client_read_state(l->c, &st);
    if (r == -EAGAIN)
        return 0; /* every try overlapped a publish: the next sample will do */
    if (r < 0 && r != -ESHUTDOWN)
        return r;
    bool stopped = r == -ESHUTDOWN;
    uint64_t rtick = 0;
    if (hs_client_reading_value_count(l->c))
        (void)hs_client_read_readings(l->c, &rtick, NULL, l->values);
    if (l->have && st.tick == l->last_tick)
        return stopped ? -ESHUTDOWN : 0;
    l->have = true;
    l->last_tick = st.tick;
    r = hs__view_live_frame(&st, l->info.joint_count, l->values,
                            hs_client_reading_value_count(l->c), stopped, out);
    return r < 0 ? r : 1;
}

static void live_destroy(void *ctx)
{
    struct live *l = ctx;
    hs_client_detach(l->c);
    free(l->joints);
    free(l->values);
    free(l);
}

int hs_view_live_open(const char *bench, struct hs_view_source *ret, char *err, size_t errsize)
{
    struct live *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    int r = hs_client_attach_readonly(bench, &l->c, err, errsize);
    if (r < 0) {
        free(l);
        return r;
    }
    hs_client_get_info(l->c, &l->info);
    snprintf(l->bench, sizeof l->bench, "%s", bench);
    uint32_t nv = hs_client_reading_value_count(l->c);
    l->joints = calloc(l->info.joint_count ? l->info.joint_count : 1, sizeof *l->joints);
    l->values = calloc(nv ? nv : 1, sizeof *l->values);
    if (!l->joints || !l->values) {
        live_destroy(l);
        return -ENOMEM;
    }
    *ret = (struct hs_view_source){
        .ctx = l, .info = live_info, .frame = live_frame, .destroy = live_destroy};
    return 0;
}
