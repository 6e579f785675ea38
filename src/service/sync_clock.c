#include "hilsim/service/sync_clock.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/bench.h"
#include "hilsim/log.h"
#include "hilsim/rt/rt_ring.h"
#include "hilsim/rt/tick_loop.h"
#include "hilsim/rt/trace.h"
#include "hilsim/service/runner.h"

struct hs__sync_clock {
    struct hs_clock_discipline disc;
    struct hs_bench *bench;
    struct hs_rt_ring *log; /* the loop's: the adjust hook runs on its producer thread */
    bool trace;
    bool ran;           /* a tick ran before (last_tick is valid) */
    uint64_t last_tick; /* period number of the last tick */
    char source[96];    /* "CANopen SYNC (0x080) on bus main", for the log and summary */
};

/* RT-safe (the loop's discipline hook): this tick's events, measured against its planned
 * wake, then the correction of every later deadline. */
static int64_t adjust(void *ctx, const struct hs_tick_info *t)
{
    struct hs__sync_clock *s = ctx;
    int64_t ev[HS_BENCH_SYNC_EVENTS_MAX];
    uint32_t n = hs_bench_sync_take(s->bench, ev, HS_BENCH_SYNC_EVENTS_MAX);
    for (uint32_t i = 0; i < n; i++) /* past the stamps kept: counted, at the last one's time */
        hs_clock_discipline_event(&s->disc, ev[i < HS_BENCH_SYNC_EVENTS_MAX ? i : n - 1],
                                  t->planned_ns);
    if (s->ran && t->tick != s->last_tick + 1) /* periods skipped before this tick */
        hs_clock_discipline_excuse(&s->disc);
    s->ran = true;
    s->last_tick = t->tick;
    enum hs_sync_change ch;
    int64_t adj = hs_clock_discipline_adjust(&s->disc, &ch);
    if (ch != HS_SYNC_CHANGE_NONE) {
        struct hs_sync_status st;
        hs_clock_discipline_status(&s->disc, &st);
        struct hs_rt_log_rec rec = {
            .tick = t->tick,
            .time_ns = t->wake_ns,
            .a = ch == HS_SYNC_CHANGE_LOCKED ? st.phase_error_ns
                                             : (int64_t)s->disc.cfg.timeout_periods,
            .b = (int64_t)llround(st.drift_ppm * 1e3),
            .what = s->source,
            .kind = ch == HS_SYNC_CHANGE_LOCKED ? HS_RT_LOG_SYNC_LOCKED : HS_RT_LOG_SYNC_LOST};
        hs_rt_ring_push(s->log, &rec);
    }
    if (s->trace) {
        struct hs_trace_sync tr = {
            .tick = t->tick,
            .phase_error_ns = atomic_load_explicit(&s->disc.phase_error_ns, memory_order_relaxed),
            .adjust_ns = adj,
            .drift_ppb = atomic_load_explicit(&s->disc.drift_ppb, memory_order_relaxed),
            .events = n,
            .state = (uint8_t)atomic_load_explicit(&s->disc.state, memory_order_relaxed)};
        HS_TRACE_SYNC(&tr);
    }
    return adj;
}

static void describe(struct hs__sync_clock *s, const struct hs_config *cfg)
{
    const struct hs_cfg_clock_sync *c = &cfg->rt.clock.sync;
    if (c->source == HS_CFG_SYNC_CAN)
        snprintf(s->source, sizeof s->source, "%s (0x%03X) on CAN bus %s",
                 c->can_id == 0x080 ? "CANopen SYNC" : "frame", c->can_id,
                 cfg->can.buses[c->bus_index].name);
    else if (c->source == HS_CFG_SYNC_SHM)
        snprintf(s->source, sizeof s->source, "the shm client's commands");
    else
        snprintf(s->source, sizeof s->source, "no event (rt.clock.sync.source none)");
}

int hs__sync_clock_attach(struct hs_runner *r, struct hs__sync_clock **ret, struct hs_diag *d)
{
    *ret = NULL;
    if (r->clock_mode != HS_CLOCK_SYNC)
        return 0;
    const struct hs_cfg_clock_sync *c = &r->cfg->rt.clock.sync;
    struct hs__sync_clock *s = calloc(1, sizeof *s); /* init only */
    if (!s)
        return hs_diag_set(d, -ENOMEM, r->cfg->path, 0, 0, "sync clock: out of memory");
    const int64_t period = r->tick.period_ns;
    struct hs_clock_discipline_config dc = {
        .period_ns = period,
        .lead_ns = c->lead_s > 0 ? (int64_t)llround(c->lead_s * 1e9) : -1,
        .max_slew_ppm = (int32_t)c->max_slew_ppm,
        .lock_window_ns = (int64_t)llround(c->lock_window_s * 1e9),
        .lock_count = c->lock_ticks,
        .timeout_periods = c->timeout_periods,
    };
    struct hs_diag dd = {0};
    int rc = hs_clock_discipline_init(&s->disc, &dc, &dd);
    if (rc < 0) {
        free(s);
        return hs_diag_set(d, rc, r->cfg->path, 0, 0, "rt.clock.sync: %s", dd.msg);
    }
    s->bench = r->bench;
    s->log = hs_tick_loop_log(r->loop);
    s->trace = r->cfg->trace.enabled;
    describe(s, r->cfg);
    if (c->source == HS_CFG_SYNC_NONE)
        hs_log(HS_LOG_WARNING,
               "%s: rt.clock.mode sync without rt.clock.sync.source: nothing to lock to, the "
               "ticks run free as in wall mode",
               r->cfg->path);
    else
        hs_log(HS_LOG_INFO,
               "sync clock: locking to %s, lead %.3f ms, slew within %u ppm, free-running after "
               "%u periods without it",
               s->source, (double)s->disc.cfg.lead_ns / 1e6, c->max_slew_ppm,
               s->disc.cfg.timeout_periods);
    hs_tick_loop_set_discipline(r->loop, &(struct hs_tick_discipline){.adjust = adjust, .ctx = s});
    *ret = s;
    return 0;
}

void hs__sync_clock_destroy(struct hs__sync_clock *s)
{
    free(s);
}

bool hs__sync_clock_status(const struct hs__sync_clock *s, struct hs_sync_status *ret)
{
    if (!s)
        return false;
    hs_clock_discipline_status(&s->disc, ret);
    return true;
}

void hs__sync_clock_status_line(const struct hs__sync_clock *s, char *buf, size_t size)
{
    struct hs_sync_status st;
    if (!hs__sync_clock_status(s, &st)) {
        if (size)
            buf[0] = 0;
        return;
    }
    snprintf(buf, size, "; sync %s, phase %+.1f us, drift %+.1f ppm, %llu missed, %llu double",
             hs_sync_state_name(st.state), (double)st.phase_error_ns / 1e3, st.drift_ppm,
             (unsigned long long)st.missed, (unsigned long long)st.doubles);
}

void hs__sync_clock_summary(const struct hs__sync_clock *s, FILE *out)
{
    struct hs_sync_status st;
    if (!hs__sync_clock_status(s, &st))
        return;
    fprintf(out,
            "sync clock (%s): %s at the end; %llu events, locked %llu time%s, lost %llu time%s; "
            "%llu ticks locked: phase error rms %.1f us, worst %.1f us, last %+.1f us; drift "
            "%+.1f ppm; cycles while locked without an event %llu, with two or more %llu (%llu "
            "ticks after skipped periods not judged); events delivered a tick late %llu\n",
            s->source, hs_sync_state_name(st.state), (unsigned long long)st.events,
            (unsigned long long)st.locks, st.locks == 1 ? "" : "s", (unsigned long long)st.losses,
            st.losses == 1 ? "" : "s", (unsigned long long)st.locked_ticks,
            st.rms_phase_error_ns / 1e3, (double)st.worst_phase_error_ns / 1e3,
            (double)st.phase_error_ns / 1e3, st.drift_ppm, (unsigned long long)st.missed,
            (unsigned long long)st.doubles, (unsigned long long)st.excused,
            (unsigned long long)st.late);
}
