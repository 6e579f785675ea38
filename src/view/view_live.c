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

static int live_info(void *ctx, struct hs_view_buf *out)
{
    struct live *l = ctx;
    hs_view_buf_printf(out, "{\"mode\":\"live\",\"bench\":");
    hs_view_buf_str(out, l->bench);
    hs_view_buf_printf(out, ",\"period_ns\":%llu,\"clock\":\"%s\",\"joints\":[",
                       (unsigned long long)l->info.tick_period_ns, clock_name(l->info.clock_mode));
    for (uint32_t i = 0; i < l->info.joint_count; i++) {
        hs_view_buf_printf(out, "%s{\"name\":", i ? "," : "");
        hs_view_buf_str(out, hs_client_joint_name(l->c, i));
        hs_view_buf_printf(out, ",\"unit\":");
        hs_view_buf_str(out, hs_client_joint_unit(l->c, i));
        hs_view_buf_printf(out, "}");
    }
    hs_view_buf_printf(out, "],\"readings\":[");
    for (uint32_t i = 0; i < hs_client_reading_count(l->c); i++) {
        const struct hs_shm_reading_desc *d = hs_client_reading(l->c, i);
        hs_view_buf_printf(out, "%s{\"name\":", i ? "," : "");
        hs_view_buf_str(out, d->name);
        hs_view_buf_printf(out, ",\"kind\":");
        hs_view_buf_str(out, d->kind);
        hs_view_buf_printf(out, ",\"unit\":");
        hs_view_buf_str(out, d->unit);
        hs_view_buf_printf(out, ",\"n\":%u,\"index\":%u,\"group\":%u}", d->value_count,
                           d->value_index, d->group);
    }
    hs_view_buf_printf(out, "]}");
    return out->oom ? -ENOMEM : 0;
}

static int live_frame(void *ctx, int64_t now_ns, struct hs_view_buf *out)
{
    (void)now_ns;
    struct live *l = ctx;
    uint32_t nj = l->info.joint_count;
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
    hs_view_buf_reset(out);
    hs_view_buf_printf(out,
                       "{\"type\":\"frame\",\"tick\":%llu,\"t\":%.6f,\"mono\":%lld,\"flags\":%llu,"
                       "\"stale\":%u,\"q\":",
                       (unsigned long long)st.tick, st.sim_time_s, (long long)st.mono_ns,
                       (unsigned long long)st.bench_flags, st.stale_joints);
    const size_t stride = sizeof(struct hs_shm_joint_state) / sizeof(double);
    _Static_assert(sizeof(struct hs_shm_joint_state) % sizeof(double) == 0, "joint state");
    hs_view_buf_doubles(out, &l->joints[0].q, nj, stride);
    hs_view_buf_printf(out, ",\"dq\":");
    hs_view_buf_doubles(out, &l->joints[0].dq, nj, stride);
    hs_view_buf_printf(out, ",\"tau\":");
    hs_view_buf_doubles(out, &l->joints[0].tau, nj, stride);
    hs_view_buf_printf(out, ",\"cur\":");
    hs_view_buf_doubles(out, &l->joints[0].current_a, nj, stride);
    hs_view_buf_printf(out, ",\"r\":");
    hs_view_buf_doubles(out, l->values, hs_client_reading_value_count(l->c), 1);
    hs_view_buf_printf(out, ",\"stopped\":%s}", stopped ? "true" : "false");
    return out->oom ? -ENOMEM : 1;
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
