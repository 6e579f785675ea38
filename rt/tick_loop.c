#include "hilsim/rt/tick_loop.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/rt/rt_clock.h"
#include "rt_thread.h"
#include "hilsim/rt/trace.h"

struct hs_tick_loop {
    struct hs_tick_config cfg;
    struct hs_tick_ops ops; /* NULL callbacks replaced by noop at create */
    void *ctx;
    struct hs_rt_opts rt;
    bool have_rt;
    struct hs_rt_report rep;
    struct hs_rt_stats stats;
    struct hs_rt_ring log;
    struct hs__rt_thread thread;
    bool thread_started;
    int run_ret;
    struct hs_tick_result result;
    struct hs_tick_gate gate;             /* wait NULL: none */
    struct hs_tick_discipline discipline; /* adjust NULL: none */

    atomic_bool stop;
    _Atomic int64_t stall_ns;
    /* progress, rt:w others:r */
    _Atomic uint64_t p_ticks, p_last_tick, p_overruns, p_missed;
    _Atomic int64_t p_worst_tick, p_worst_wake;
    _Atomic uint32_t p_leaky;
    _Atomic uint64_t p_lockstep_timeouts, p_gate_polls;
    atomic_bool p_waiting;
    atomic_bool p_safe_hold, p_running;
    struct hs_tick_window win; /* rt:rw only (hs_tick_loop_take_window) */
};

static int noop_phase(void *ctx, const struct hs_tick_info *t)
{
    return 0;
}

static void noop_hold(void *ctx, const struct hs_tick_info *t) {}

const char *hs_tick_stop_reason_name(enum hs_tick_stop_reason r)
{
    static const char *const names[HS_TICK_STOP_MAX] = {
        [HS_TICK_STOP_NONE] = "none",
        [HS_TICK_STOP_REQUESTED] = "stop requested",
        [HS_TICK_STOP_MAX_TICKS] = "max ticks reached",
        [HS_TICK_STOP_OVERRUN] = "overrun (policy stop)",
        [HS_TICK_STOP_LEAKY] = "overrun counter threshold",
        [HS_TICK_STOP_PHASE_ERROR] = "phase error",
        [HS_TICK_STOP_SETUP_FAILED] = "real-time set-up refused",
        [HS_TICK_STOP_LOCKSTEP_TIMEOUT] = "lockstep wait expired (on_timeout stop)",
    };
    return (unsigned)r < HS_TICK_STOP_MAX ? names[r] : "?";
}

static const char *const policy_names[HS_OVERRUN_MAX] = {
    [HS_OVERRUN_SKIP] = "skip", [HS_OVERRUN_CATCH_UP] = "catch-up", [HS_OVERRUN_STOP] = "stop"};

const char *hs_overrun_policy_name(enum hs_overrun_policy p)
{
    return (unsigned)p < HS_OVERRUN_MAX ? policy_names[p] : "?";
}

int hs_overrun_policy_parse(const char *s, enum hs_overrun_policy *ret)
{
    for (int i = 0; i < HS_OVERRUN_MAX; i++) {
        if (strcmp(s, policy_names[i]) == 0) {
            *ret = (enum hs_overrun_policy)i;
            return 0;
        }
    }
    return -EINVAL;
}

static int validate(const struct hs_tick_config *c, struct hs_diag *d)
{
    if (c->period_ns < HS_TICK_PERIOD_MIN_NS || c->period_ns > HS_TICK_PERIOD_MAX_NS)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "period_ns: %lld outside %lld..%lld ns",
                           (long long)c->period_ns, HS_TICK_PERIOD_MIN_NS, HS_TICK_PERIOD_MAX_NS);
    if ((unsigned)c->policy >= HS_OVERRUN_MAX)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "policy: unknown value %d", (int)c->policy);
    if ((unsigned)c->leaky_action >= HS_LEAKY_MAX)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "leaky_action: unknown value %d",
                           (int)c->leaky_action);
    if (c->leaky_threshold && c->leaky_inc == 0)
        return hs_diag_set(d, -EINVAL, "", 0, 0,
                           "leaky_inc: must be > 0 when leaky_threshold is set");
    if (c->hist_range_ns < 0 || c->hist_range_ns > HS_HIST_RANGE_MAX_NS)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "hist_range_ns: %lld outside 0..%lld ns",
                           (long long)c->hist_range_ns, HS_HIST_RANGE_MAX_NS);
    const struct hs_tick_clock *k = &c->clock;
    if ((unsigned)k->mode >= HS_CLOCK_MODE_MAX)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "clock.mode: unknown value %d", (int)k->mode);
    if (k->mode == HS_CLOCK_LOCKSTEP && (k->lockstep_timeout_ns < HS_LOCKSTEP_TIMEOUT_MIN_NS ||
                                         k->lockstep_timeout_ns > HS_LOCKSTEP_TIMEOUT_MAX_NS))
        return hs_diag_set(d, -EINVAL, "", 0, 0,
                           "clock.lockstep_timeout_ns: %lld outside %lld..%lld ns",
                           (long long)k->lockstep_timeout_ns, HS_LOCKSTEP_TIMEOUT_MIN_NS,
                           HS_LOCKSTEP_TIMEOUT_MAX_NS);
    if ((unsigned)k->on_timeout >= HS_LOCKSTEP_EXPIRY_MAX)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "clock.on_timeout: unknown value %d",
                           (int)k->on_timeout);
    return 0;
}

int hs_tick_loop_create(const struct hs_tick_config *cfg, const struct hs_rt_opts *rt,
                        const struct hs_tick_ops *ops, void *ctx, struct hs_tick_loop **ret_loop,
                        struct hs_diag *d)
{
    int r = validate(cfg, d);
    if (r < 0)
        return r;
    struct hs_tick_loop *l = calloc(1, sizeof *l); /* init only */
    if (!l)
        return hs_diag_set(d, -ENOMEM, "", 0, 0, "tick loop: out of memory");
    l->cfg = *cfg;
    l->ctx = ctx;
    if (ops)
        l->ops = *ops;
    /* cppcheck 2.10 takes this array of member addresses for uninitialised (false positive) */
    // cppcheck-suppress uninitvar
    int (**phases[])(void *, const struct hs_tick_info *) = {
        &l->ops.inputs, &l->ops.actuation, &l->ops.physics, &l->ops.sensors, &l->ops.outputs};
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++)
        if (!*phases[i])
            *phases[i] = noop_phase;
    if (!l->ops.on_safe_hold)
        l->ops.on_safe_hold = noop_hold;
    l->have_rt = rt != NULL;
    if (rt)
        l->rt = *rt;
    l->rt.cpu = rt ? rt->cpu : -1;
    r = hs_rt_stats_init(&l->stats, cfg->hist_range_ns);
    if (r < 0) {
        hs_diag_set(d, r, "", 0, 0, "hist_range_ns: cannot set up histograms");
        goto fail;
    }
    l->stats.period_ns = cfg->period_ns;
    r = hs_rt_ring_init(&l->log, cfg->log_capacity ? cfg->log_capacity : 256);
    if (r < 0) {
        hs_diag_set(d, r, "", 0, 0, "log_capacity: cannot allocate the log ring");
        goto fail;
    }
    atomic_init(&l->stop, false);
    atomic_init(&l->stall_ns, 0);
    *ret_loop = l;
    return 0;
fail:
    hs_tick_loop_destroy(l);
    return r;
}

void hs_tick_loop_set_gate(struct hs_tick_loop *l, const struct hs_tick_gate *gate)
{
    l->gate = gate ? *gate : (struct hs_tick_gate){0};
}

void hs_tick_loop_set_discipline(struct hs_tick_loop *l, const struct hs_tick_discipline *disc)
{
    l->discipline = disc ? *disc : (struct hs_tick_discipline){0};
}

void hs_tick_loop_set_sim_start(struct hs_tick_loop *l, int64_t sim_start_ns)
{
    l->cfg.clock.sim_start_ns = sim_start_ns;
}

void hs_tick_loop_destroy(struct hs_tick_loop *l)
{
    if (!l)
        return;
    hs_rt_stats_destroy(&l->stats);
    hs_rt_ring_destroy(&l->log);
    free(l);
}

void hs_tick_loop_request_stop(struct hs_tick_loop *l)
{
    atomic_store(&l->stop, true);
}

void hs_tick_loop_inject_stall(struct hs_tick_loop *l, int64_t stall_ns)
{
    atomic_store(&l->stall_ns, stall_ns);
}

static void post(struct hs_tick_loop *l, uint32_t kind, uint64_t tick, int64_t a, int64_t b)
{
    struct hs_rt_log_rec rec = {
        .tick = tick, .time_ns = hs_rt_now_ns(), .a = a, .b = b, .kind = kind};
    hs_rt_ring_push(&l->log, &rec);
}

/* The stop record carries its reason's name, so the ring formats it without this file. */
static void post_stop(struct hs_tick_loop *l, uint64_t tick, enum hs_tick_stop_reason reason,
                      int err)
{
    struct hs_rt_log_rec rec = {.tick = tick,
                                .time_ns = hs_rt_now_ns(),
                                .a = reason,
                                .b = err,
                                .what = hs_tick_stop_reason_name(reason),
                                .kind = HS_RT_LOG_STOP};
    hs_rt_ring_push(&l->log, &rec);
}

static void relaxed_max(_Atomic int64_t *v, int64_t x)
{
    if (x > atomic_load_explicit(v, memory_order_relaxed))
        atomic_store_explicit(v, x, memory_order_relaxed);
}

static void stall_once(struct hs_tick_loop *l, uint64_t tick)
{
    int64_t ns = atomic_exchange(&l->stall_ns, 0);
    if (ns <= 0)
        return;
    post(l, HS_RT_LOG_STALL, tick, ns, 0);
    hs_rt_sleep_until(hs_rt_now_ns() + ns);
}

/* Applies the leaky counter after one tick; returns true when the loop must stop. */
static bool leaky_update(struct hs_tick_loop *l, uint32_t *count, bool overrun,
                         struct hs_tick_info *info)
{
    const struct hs_tick_config *c = &l->cfg;
    if (overrun)
        *count = *count > UINT32_MAX - c->leaky_inc ? UINT32_MAX : *count + c->leaky_inc;
    else if (*count > 0)
        (*count)--;
    atomic_store_explicit(&l->p_leaky, *count, memory_order_relaxed);
    if (!c->leaky_threshold || *count < c->leaky_threshold)
        return false;
    if (c->leaky_action == HS_LEAKY_STOP)
        return true;
    if (c->leaky_action == HS_LEAKY_SAFE_HOLD && !info->safe_hold) {
        info->safe_hold = true;
        atomic_store_explicit(&l->p_safe_hold, true, memory_order_relaxed);
        post(l, HS_RT_LOG_SAFE_HOLD, info->tick, *count, c->leaky_threshold);
        if (!l->cfg.no_trace)
            HS_TRACE_POLICY(info->tick, HS_RT_LOG_SAFE_HOLD, (int64_t)*count);
        l->ops.on_safe_hold(l->ctx, info);
    }
    return false;
}

/* The loop's state between ticks (RT thread only). */
struct loop_state {
    struct hs_tick_info info;
    uint64_t tick; /* period number of the tick to run next */
    uint32_t leaky;
    int err; /* first phase error of the last tick */
    enum hs_tick_stop_reason reason;
    int64_t offset_ns;  /* sync: the discipline's corrections so far, added to every deadline */
    int64_t release_ns; /* lockstep: when the gate released the tick (the wake reference) */
    int64_t wait_ns;    /* lockstep: total time spent waiting for releases */
    uint64_t lockstep_timeouts;
};

/* The window's bin of a duration: exact below 8 ns, then 4 bins per power of two. */
static uint32_t window_bin(int64_t ns)
{
    if (ns < 8)
        return ns < 0 ? 0 : (uint32_t)ns;
    int e = 63 - __builtin_clzll((unsigned long long)ns); /* 2^e <= ns, e >= 3 */
    uint32_t b = (uint32_t)e * 4 + (uint32_t)(((unsigned long long)ns >> (e - 2)) & 3);
    return b < HS_TICK_WINDOW_BINS ? b : HS_TICK_WINDOW_BINS - 1;
}

/* The first duration past bin b (its upper edge, exclusive). */
static int64_t window_bin_end(uint32_t b)
{
    if (b < 8)
        return (int64_t)b + 1;
    uint32_t e = b / 4, q = b % 4;
    return (int64_t)(5 + q) << (e - 2);
}

/* RT-safe: O(1) per phase; a window nobody takes for 2^31 ticks (25 days at 1 kHz) starts
 * over rather than let its counts wrap. */
static void window_record(struct hs_tick_window *w, const int64_t d[HS_PHASE_MAX])
{
    if (w->ticks >= (1ull << 31))
        memset(w, 0, sizeof *w);
    w->ticks++;
    for (int p = 0; p < HS_PHASE_MAX; p++) {
        w->bins[p][window_bin(d[p])]++;
        if (d[p] > w->max_ns[p])
            w->max_ns[p] = d[p];
    }
}

void hs_tick_loop_take_window(struct hs_tick_loop *l, struct hs_tick_window *ret)
{
    memcpy(ret, &l->win, sizeof *ret);
    memset(&l->win, 0, sizeof l->win);
}

int64_t hs_tick_window_percentile(const struct hs_tick_window *w, enum hs_phase phase, double p)
{
    if (!w->ticks || (unsigned)phase >= HS_PHASE_MAX || !(p > 0))
        return -1;
    double want = p / 100.0 * (double)w->ticks;
    uint64_t k = (uint64_t)want;
    if ((double)k < want || k < 1)
        k++; /* ceil, at least one sample */
    if (k >= w->ticks)
        return w->max_ns[phase];
    uint64_t cum = 0;
    for (uint32_t b = 0; b < HS_TICK_WINDOW_BINS; b++) {
        cum += w->bins[phase][b];
        if (cum >= k) {
            int64_t edge = window_bin_end(b) - 1;
            return edge < w->max_ns[phase] ? edge : w->max_ns[phase];
        }
    }
    return w->max_ns[phase];
}

/* Account, first half: per-phase durations into the preallocated histograms, the LTTng tick
 * event, the worst-case progress figures. t[0] is the wake, t[1..5] the ends of inputs,
 * actuation, physics, sensors and outputs. */
static void account_durations(struct hs_tick_loop *l, uint64_t tick, int64_t planned,
                              const int64_t t[6], bool overrun)
{
    struct hs_rt_stats *st = &l->stats;
    struct hs_trace_tick tr = {
        .tick = tick,
        .planned_ns = planned,
        .actual_ns = t[0],
        .wake_latency_ns = t[0] - planned,
        .inputs_ns = t[1] - t[0],
        .actuation_ns = t[2] - t[1],
        .physics_ns = t[3] - t[2],
        .sensors_ns = t[4] - t[3],
        .outputs_ns = t[5] - t[4],
        .tick_ns = t[5] - t[0],
        .overrun = overrun,
    };
    hs_hist_record(&st->phase[HS_PHASE_WAKE], tr.wake_latency_ns);
    hs_hist_record(&st->phase[HS_PHASE_INPUTS], tr.inputs_ns);
    hs_hist_record(&st->phase[HS_PHASE_ACTUATION], tr.actuation_ns);
    hs_hist_record(&st->phase[HS_PHASE_PHYSICS], tr.physics_ns);
    hs_hist_record(&st->phase[HS_PHASE_SENSORS], tr.sensors_ns);
    hs_hist_record(&st->phase[HS_PHASE_OUTPUTS], tr.outputs_ns);
    hs_hist_record(&st->phase[HS_PHASE_TICK], tr.tick_ns);
    const int64_t d[HS_PHASE_MAX] = {[HS_PHASE_WAKE] = tr.wake_latency_ns,
                                     [HS_PHASE_INPUTS] = tr.inputs_ns,
                                     [HS_PHASE_ACTUATION] = tr.actuation_ns,
                                     [HS_PHASE_PHYSICS] = tr.physics_ns,
                                     [HS_PHASE_SENSORS] = tr.sensors_ns,
                                     [HS_PHASE_OUTPUTS] = tr.outputs_ns,
                                     [HS_PHASE_TICK] = tr.tick_ns};
    window_record(&l->win, d);
    if (!l->cfg.no_trace)
        HS_TRACE_TICK(&tr);
    st->ticks++;
    relaxed_max(&l->p_worst_tick, tr.tick_ns);
    relaxed_max(&l->p_worst_wake, tr.wake_latency_ns);
}

/* Account, second half: the next deadline and the overrun policy, the leaky counter, the stop
 * decision and the published progress. end_ns is the end of the tick's outputs. */
static void account_deadline(struct hs_tick_loop *l, struct loop_state *s, int64_t end_ns,
                             bool overrun)
{
    const struct hs_tick_config *c = &l->cfg;
    struct hs_rt_stats *st = &l->stats;
    const uint64_t tick = s->tick;
    uint64_t next_tick = tick + 1;
    if (overrun) {
        /* Deadlines passed while this tick ran: planned + k * period <= end, k >= 1. */
        int64_t passed = (end_ns - s->info.planned_ns) / c->period_ns;
        st->overruns++;
        post(l, HS_RT_LOG_OVERRUN, tick, end_ns - s->info.wake_ns, passed);
        if (!c->no_trace)
            HS_TRACE_OVERRUN(tick, end_ns - s->info.wake_ns, passed);
        if (c->policy == HS_OVERRUN_SKIP) {
            st->missed_periods += (uint64_t)passed;
            next_tick = tick + 1 + (uint64_t)passed;
            post(l, HS_RT_LOG_SKIP, tick, passed, (int64_t)next_tick);
            if (!c->no_trace)
                HS_TRACE_POLICY(tick, HS_RT_LOG_SKIP, passed);
        } else if (c->policy == HS_OVERRUN_STOP) {
            s->reason = HS_TICK_STOP_OVERRUN;
        }
    }
    if (leaky_update(l, &s->leaky, overrun, &s->info) && s->reason == HS_TICK_STOP_NONE)
        s->reason = HS_TICK_STOP_LEAKY;
    if (s->err < 0 && s->reason == HS_TICK_STOP_NONE)
        s->reason = HS_TICK_STOP_PHASE_ERROR;

    atomic_store_explicit(&l->p_last_tick, tick, memory_order_relaxed);
    atomic_store_explicit(&l->p_ticks, st->ticks, memory_order_relaxed);
    atomic_store_explicit(&l->p_overruns, st->overruns, memory_order_relaxed);
    atomic_store_explicit(&l->p_missed, st->missed_periods, memory_order_relaxed);
    s->tick = next_tick;
}

/* Account (DESIGN.md's tick flow, step 7): a tick overruns when it ends after its next
 * deadline. */
static void account(struct hs_tick_loop *l, struct loop_state *s, const int64_t t[6])
{
    if (l->cfg.clock.mode == HS_CLOCK_LOCKSTEP) {
        /* No deadline to miss: the wake latency is the reaction to the release. */
        account_durations(l, s->tick, s->release_ns, t, false);
        account_deadline(l, s, t[5], false);
        return;
    }
    const bool overrun = t[5] > s->info.planned_ns + l->cfg.period_ns;
    account_durations(l, s->tick, s->info.planned_ns, t, overrun);
    account_deadline(l, s, t[5], overrun);
    if (l->cfg.clock.mode == HS_CLOCK_SYNC && l->discipline.adjust)
        s->offset_ns += l->discipline.adjust(l->discipline.ctx, &s->info);
}

/* Lockstep: waits for the gate to release s->tick, in slices so a stop request is seen. Returns
 * true when the tick runs, false when the loop stops (s->reason set). Tick 0 runs at once: the
 * controller needs a first state to answer. last: the run ends after max_ticks; the controller
 * still gets to answer the last tick before the safe stop publishes over it, but an expiry then
 * ends the wait whatever on_timeout says. */
static bool lockstep_wait(struct hs_tick_loop *l, struct loop_state *s, bool last)
{
    const struct hs_tick_clock *k = &l->cfg.clock;
    int64_t begin = hs_rt_now_ns();
    s->release_ns = begin;
    if (l->stats.ticks == 0)
        return true;
    int64_t expiry = begin + k->lockstep_timeout_ns;
    for (;;) {
        if (atomic_load_explicit(&l->stop, memory_order_relaxed)) {
            s->reason = HS_TICK_STOP_REQUESTED;
            return false;
        }
        int64_t now = hs_rt_now_ns();
        int64_t slice = now + HS_LOCKSTEP_SLICE_NS < expiry ? now + HS_LOCKSTEP_SLICE_NS : expiry;
        atomic_store_explicit(&l->p_waiting, true, memory_order_relaxed);
        int r = l->gate.wait(l->gate.ctx, s->tick, slice);
        atomic_store_explicit(&l->p_waiting, false, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->p_gate_polls, 1, memory_order_relaxed);
        now = hs_rt_now_ns();
        if (r == 0) {
            s->release_ns = now;
            s->wait_ns += now - begin;
            return true;
        }
        if (r != -ETIMEDOUT) {
            s->err = r;
            s->reason = HS_TICK_STOP_PHASE_ERROR;
            return false;
        }
        if (now < expiry)
            continue;
        s->lockstep_timeouts++;
        atomic_store_explicit(&l->p_lockstep_timeouts, s->lockstep_timeouts, memory_order_relaxed);
        struct hs_rt_log_rec rec = {.tick = s->tick,
                                    .time_ns = now,
                                    .a = now - begin,
                                    .b = k->on_timeout,
                                    .what = hs_lockstep_expiry_name(k->on_timeout),
                                    .kind = HS_RT_LOG_LOCKSTEP};
        hs_rt_ring_push(&l->log, &rec);
        if (last)
            return false;
        if (k->on_timeout == HS_LOCKSTEP_STEP) {
            s->release_ns = now;
            s->wait_ns += now - begin;
            return true;
        }
        if (k->on_timeout == HS_LOCKSTEP_STOP) {
            s->reason = HS_TICK_STOP_LOCKSTEP_TIMEOUT;
            return false;
        }
        expiry = now + k->lockstep_timeout_ns; /* hold: another timeout, another record */
    }
}

/* The five phases in order, each timed: t[0] wake, t[i] end of phase i. The first error of the
 * tick wins; the tick has still run every phase. */
static void run_phases(struct hs_tick_loop *l, struct loop_state *s, int64_t t[6])
{
    const struct hs_tick_ops *ops = &l->ops;
    t[0] = hs_rt_now_ns();
    s->info.tick = s->tick;
    s->info.seq = l->stats.ticks;
    s->info.wake_ns = t[0];
    s->info.now_ns = l->cfg.clock.mode == HS_CLOCK_LOCKSTEP ? s->info.planned_ns : t[0];

    stall_once(l, s->tick);
    int e1 = ops->inputs(l->ctx, &s->info);
    t[1] = hs_rt_now_ns();
    int e2 = ops->actuation(l->ctx, &s->info);
    t[2] = hs_rt_now_ns();
    int e3 = ops->physics(l->ctx, &s->info);
    t[3] = hs_rt_now_ns();
    int e4 = ops->sensors(l->ctx, &s->info);
    t[4] = hs_rt_now_ns();
    int e5 = ops->outputs(l->ctx, &s->info);
    t[5] = hs_rt_now_ns();
    s->err = e1 < 0 ? e1 : e2 < 0 ? e2 : e3 < 0 ? e3 : e4 < 0 ? e4 : e5 < 0 ? e5 : 0;
}

static int loop_body(struct hs_tick_loop *l)
{
    const struct hs_tick_config *c = &l->cfg;
    struct hs_rt_stats *st = &l->stats;
    struct hs_tick_result *res = &l->result;
    const int64_t period = c->period_ns;
    const int64_t start = c->clock.mode == HS_CLOCK_LOCKSTEP && c->clock.sim_start_ns
                              ? c->clock.sim_start_ns
                              : hs_rt_now_ns() + period;
    struct loop_state s = {.info = {.period_ns = period}, .reason = HS_TICK_STOP_NONE};
    const bool lockstep = c->clock.mode == HS_CLOCK_LOCKSTEP;
    int64_t first_wake = 0, last_end = 0;

    atomic_store(&l->p_running, true);
    while (s.reason == HS_TICK_STOP_NONE) {
        if (atomic_load_explicit(&l->stop, memory_order_relaxed)) {
            s.reason = HS_TICK_STOP_REQUESTED;
            break;
        }
        if (c->max_ticks && st->ticks >= c->max_ticks) {
            if (lockstep && !lockstep_wait(l, &s, true) && s.reason != HS_TICK_STOP_NONE)
                break; /* a stop request or a gate error while waiting says why */
            s.reason = HS_TICK_STOP_MAX_TICKS;
            break;
        }
        s.info.planned_ns = start + (int64_t)s.tick * period + s.offset_ns;
        if (lockstep) {
            if (!lockstep_wait(l, &s, false))
                break;
        } else {
            hs_rt_sleep_until(s.info.planned_ns);
        }
        int64_t t[6];
        run_phases(l, &s, t);
        if (st->ticks == 0)
            first_wake = t[0];
        last_end = t[5];
        account(l, &s, t);
    }
    if (s.reason == HS_TICK_STOP_OVERRUN || s.reason == HS_TICK_STOP_LEAKY)
        if (!c->no_trace)
            HS_TRACE_POLICY(s.tick, HS_RT_LOG_STOP, (int64_t)s.reason);
    post_stop(l, s.tick, s.reason, s.err);
    res->reason = s.reason;
    res->err = s.reason == HS_TICK_STOP_PHASE_ERROR ? s.err : 0;
    res->ticks = st->ticks;
    res->overruns = st->overruns;
    res->missed_periods = st->missed_periods;
    res->safe_hold = s.info.safe_hold;
    res->lockstep_timeouts = s.lockstep_timeouts;
    res->wait_ns = s.wait_ns;
    res->run_ns = last_end - first_wake;
    atomic_store(&l->p_running, false);
    switch (s.reason) {
    case HS_TICK_STOP_OVERRUN:
    case HS_TICK_STOP_LEAKY:
        return -ETIME;
    case HS_TICK_STOP_LOCKSTEP_TIMEOUT:
        return -ETIMEDOUT;
    case HS_TICK_STOP_PHASE_ERROR:
        return s.err;
    default:
        return 0;
    }
}

static int setup_failed(struct hs_tick_loop *l, int r)
{
    l->result.reason = HS_TICK_STOP_SETUP_FAILED;
    l->result.err = r;
    post_stop(l, 0, HS_TICK_STOP_SETUP_FAILED, r);
    return r;
}

/* A lockstep loop without a gate would wait for nothing: refused before the first tick. */
static int pace_ready(struct hs_tick_loop *l)
{
    return l->cfg.clock.mode == HS_CLOCK_LOCKSTEP && !l->gate.wait ? -EINVAL : 0;
}

int hs_tick_loop_run(struct hs_tick_loop *l)
{
    int pr = pace_ready(l);
    if (pr < 0)
        return setup_failed(l, pr);
    if (l->have_rt) {
        int r = hs_rt_setup_thread(&l->rt, &l->rep);
        if (r < 0)
            return setup_failed(l, r);
    }
    return loop_body(l);
}

static void *thread_main(void *arg)
{
    struct hs_tick_loop *l = arg;
    int r = hs__rt_thread_enter(&l->thread);
    l->run_ret = r < 0 ? setup_failed(l, r) : loop_body(l);
    return NULL;
}

int hs_tick_loop_start(struct hs_tick_loop *l)
{
    if (l->thread_started)
        return -EALREADY;
    int pr = pace_ready(l);
    if (pr < 0)
        return pr;
    struct hs_rt_opts o = l->rt;
    if (!l->have_rt)
        o = (struct hs_rt_opts){.cpu = -1};
    int r = hs__rt_thread_start(&l->thread, &o, &l->rep, thread_main, l);
    if (r < 0)
        return r;
    l->thread_started = true;
    return 0;
}

int hs_tick_loop_join(struct hs_tick_loop *l)
{
    if (!l->thread_started)
        return -EINVAL;
    int r = pthread_join(l->thread.thread, NULL);
    l->thread_started = false;
    return r ? -r : l->run_ret;
}

void hs_tick_loop_progress(const struct hs_tick_loop *l, struct hs_tick_progress *ret)
{
    struct hs_tick_loop *m = (struct hs_tick_loop *)l; /* atomics are read-only here */
    ret->ticks = atomic_load_explicit(&m->p_ticks, memory_order_relaxed);
    ret->last_tick = atomic_load_explicit(&m->p_last_tick, memory_order_relaxed);
    ret->overruns = atomic_load_explicit(&m->p_overruns, memory_order_relaxed);
    ret->missed_periods = atomic_load_explicit(&m->p_missed, memory_order_relaxed);
    ret->worst_tick_ns = atomic_load_explicit(&m->p_worst_tick, memory_order_relaxed);
    ret->worst_wake_ns = atomic_load_explicit(&m->p_worst_wake, memory_order_relaxed);
    ret->leaky_count = atomic_load_explicit(&m->p_leaky, memory_order_relaxed);
    ret->log_dropped = atomic_load_explicit(&m->log.dropped, memory_order_relaxed);
    ret->safe_hold = atomic_load_explicit(&m->p_safe_hold, memory_order_relaxed);
    ret->running = atomic_load_explicit(&m->p_running, memory_order_relaxed);
    ret->lockstep_timeouts = atomic_load_explicit(&m->p_lockstep_timeouts, memory_order_relaxed);
    ret->gate_polls = atomic_load_explicit(&m->p_gate_polls, memory_order_relaxed);
    ret->waiting = atomic_load_explicit(&m->p_waiting, memory_order_relaxed);
}

int hs_tick_progress_format(const struct hs_tick_progress *p, char *buf, size_t size)
{
    return snprintf(buf, size,
                    "tick %llu, %llu run, %llu overruns, %llu missed, worst tick %.1f us, "
                    "worst wake %.1f us%s%s",
                    (unsigned long long)p->last_tick, (unsigned long long)p->ticks,
                    (unsigned long long)p->overruns, (unsigned long long)p->missed_periods,
                    (double)p->worst_tick_ns / 1e3, (double)p->worst_wake_ns / 1e3,
                    p->safe_hold ? ", SAFE HOLD" : "", p->running ? "" : ", stopped");
}

const struct hs_rt_stats *hs_tick_loop_stats(const struct hs_tick_loop *l)
{
    return &l->stats;
}

void hs_tick_loop_result(const struct hs_tick_loop *l, struct hs_tick_result *ret)
{
    *ret = l->result;
}

const struct hs_rt_report *hs_tick_loop_rt_report(const struct hs_tick_loop *l)
{
    return &l->rep;
}

struct hs_rt_ring *hs_tick_loop_log(struct hs_tick_loop *l)
{
    return &l->log;
}
