/* The fixed-period tick loop. Generic: the tick's phases are callbacks, so the world, plant,
 * CAN and shm plug in from outside.
 *
 * Timeline: tick n is planned at start_ns + n * period_ns (absolute CLOCK_MONOTONIC deadlines,
 * clock_nanosleep TIMER_ABSTIME), so tick numbers are period numbers: a skipped period leaves a
 * gap in the numbering. A tick "overruns" when it finishes after its next deadline.
 * The clock mode (hilsim/rt/tick_pace.h) changes what starts a tick: the deadline (wall), a
 * deadline a discipline moves (sync), or a gate's release (lockstep, on simulated time: no
 * overruns).
 *
 * Lifecycle: hs_tick_loop_create (allocates everything) -> hs_tick_loop_run (calling thread) or
 * hs_tick_loop_start + hs_tick_loop_join (own RT thread) -> read stats/result ->
 * hs_tick_loop_destroy. A loop runs once. */
#ifndef HS_RT_TICK_LOOP_H
#define HS_RT_TICK_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/diag.h"
#include "hilsim/rt/rt_ring.h"
#include "hilsim/rt/rt_setup.h"
#include "hilsim/rt/rt_stats.h"
#include "hilsim/rt/tick_pace.h"

#define HS_TICK_PERIOD_MIN_NS 100000LL    /* 100 us */
#define HS_TICK_PERIOD_MAX_NS 100000000LL /* 100 ms */

/* What each phase callback sees. Valid for the duration of the call only. */
struct hs_tick_info {
    uint64_t tick;      /* period number since start */
    uint64_t seq;       /* ticks executed before this one */
    int64_t planned_ns; /* planned wake, CLOCK_MONOTONIC (lockstep: the simulated timeline) */
    int64_t wake_ns;    /* actual wake */
    /* The tick clock: the time every timeout of this tick runs on (command watchdogs, client
     * loss, protocol timeouts). wall and sync: wake_ns; lockstep: planned_ns, simulated. */
    int64_t now_ns;
    int64_t period_ns;
    bool safe_hold; /* the leaky overrun counter latched safe hold */
};

/* Phase callbacks, called in this order every tick on the RT thread; each must be RT-safe.
 * Return 0, or a negative errno: the tick still runs its remaining phases and then the loop
 * stops (reason HS_TICK_STOP_PHASE_ERROR). Any callback may be NULL (a no-op is used). */
struct hs_tick_ops {
    int (*inputs)(void *ctx, const struct hs_tick_info *t);
    int (*actuation)(void *ctx, const struct hs_tick_info *t);
    int (*physics)(void *ctx, const struct hs_tick_info *t);
    int (*sensors)(void *ctx, const struct hs_tick_info *t);
    int (*outputs)(void *ctx, const struct hs_tick_info *t);
    /* Called once, on the RT thread, when the leaky counter latches safe hold (before the next
     * tick); from then on every tick has info->safe_hold set. */
    void (*on_safe_hold)(void *ctx, const struct hs_tick_info *t);
};

enum hs_overrun_policy {
    HS_OVERRUN_SKIP,     /* next deadline = first future period; the missed ones are counted */
    HS_OVERRUN_CATCH_UP, /* keep the absolute timeline: run late ticks back to back */
    HS_OVERRUN_STOP,     /* stop after the first overrun */
    HS_OVERRUN_MAX
};

enum hs_leaky_action {
    HS_LEAKY_NONE,      /* count only */
    HS_LEAKY_SAFE_HOLD, /* latch safe hold (on_safe_hold), keep running */
    HS_LEAKY_STOP,      /* stop the loop */
    HS_LEAKY_MAX
};

struct hs_tick_config {
    int64_t period_ns; /* HS_TICK_PERIOD_MIN_NS..HS_TICK_PERIOD_MAX_NS */
    enum hs_overrun_policy policy;
    /* Leaky overrun counter (OROCOS style): +leaky_inc per overrun tick, -1 per tick on time
     * (floor 0); reaching leaky_threshold triggers leaky_action. leaky_threshold 0 disables. */
    uint32_t leaky_inc;
    uint32_t leaky_threshold;
    enum hs_leaky_action leaky_action;
    uint64_t max_ticks; /* stop after this many executed ticks; 0 = until stopped */
    /* Histogram range (log-linear bins, rt_hist.h): longer samples count as overflow.
     * 0..HS_HIST_RANGE_MAX_NS, 0 = HS_HIST_DEFAULT_RANGE_NS. */
    int64_t hist_range_ns;
    uint32_t log_capacity;      /* log ring records; 0 = 256 */
    bool no_trace;              /* skip the LTTng tracepoints (a bench with trace.enabled false) */
    struct hs_tick_clock clock; /* zero: wall */
};

enum hs_tick_stop_reason {
    HS_TICK_STOP_NONE,      /* still running or never ran */
    HS_TICK_STOP_REQUESTED, /* hs_tick_loop_request_stop */
    HS_TICK_STOP_MAX_TICKS,
    HS_TICK_STOP_OVERRUN,          /* policy HS_OVERRUN_STOP */
    HS_TICK_STOP_LEAKY,            /* leaky counter with HS_LEAKY_STOP */
    HS_TICK_STOP_PHASE_ERROR,      /* a callback returned < 0 */
    HS_TICK_STOP_SETUP_FAILED,     /* require_rt and a thread step was refused */
    HS_TICK_STOP_LOCKSTEP_TIMEOUT, /* lockstep wait expired with on_timeout HS_LOCKSTEP_STOP */
    HS_TICK_STOP_MAX
};

/* Readable from any thread while the loop runs (each field is read atomically; the set is not
 * a snapshot of one instant). For systemd STATUS= and watchdog decisions. */
struct hs_tick_progress {
    uint64_t ticks;     /* executed */
    uint64_t last_tick; /* period number of the last executed tick */
    uint64_t overruns;
    uint64_t missed_periods;
    int64_t worst_tick_ns;
    int64_t worst_wake_ns;
    uint32_t leaky_count;
    uint64_t log_dropped; /* log records lost because the ring was full */
    bool safe_hold;
    bool running;
    uint64_t lockstep_timeouts; /* lockstep waits that expired (each hold period counts) */
    /* lockstep: gate calls so far (one per release, or per slice of a wait): a loop waiting
     * for its controller still advances it, a stalled loop does not (systemd's watchdog) */
    uint64_t gate_polls;
    bool waiting; /* lockstep: waiting for a release now */
};

struct hs_tick_result {
    enum hs_tick_stop_reason reason;
    int err; /* phase or set-up error (negative errno), else 0 */
    uint64_t ticks, overruns, missed_periods;
    bool safe_hold;
    /* lockstep: waits that expired, and the wall time spent waiting for releases and running
     * ticks from the first tick's wake to the last tick's end (real-time factor = ticks x
     * period / run_ns). run_ns is measured in every mode. */
    uint64_t lockstep_timeouts;
    int64_t wait_ns, run_ns;
};

struct hs_tick_loop;

/* init only: allocates. Validates cfg (errors name the field in d), copies cfg, ops and rt (rt
 * NULL = no real-time requests at all). ctx is borrowed and must outlive the loop. */
int hs_tick_loop_create(const struct hs_tick_config *cfg, const struct hs_rt_opts *rt,
                        const struct hs_tick_ops *ops, void *ctx, struct hs_tick_loop **ret_loop,
                        struct hs_diag *d);
/* init only, before run/start. The lockstep gate (required in lockstep mode: run returns
 * -EINVAL without one) and the sync discipline (optional; used in sync mode only). Both are
 * copied; their ctx is borrowed. NULL clears. */
void hs_tick_loop_set_gate(struct hs_tick_loop *l, const struct hs_tick_gate *gate);
void hs_tick_loop_set_discipline(struct hs_tick_loop *l, const struct hs_tick_discipline *disc);
/* init only, before run/start: cfg->clock.sim_start_ns, for a timeline that is known only after
 * create (the runner's warm-up). */
void hs_tick_loop_set_sim_start(struct hs_tick_loop *l, int64_t sim_start_ns);

/* init only. Accepts NULL. Must not be called while the loop thread runs (join first). */
void hs_tick_loop_destroy(struct hs_tick_loop *l);

/* init only (then it is the RT loop). Runs the loop in the calling thread until it stops; the
 * thread's scheduling and affinity are changed as asked by rt (and stay changed). Returns 0 when
 * stopped on request or max_ticks, -ETIME when an overrun policy or the leaky counter stopped it,
 * the phase's error, or the set-up error under require_rt. In lockstep: -ETIMEDOUT when a wait
 * expired with on_timeout stop, the gate's error, -EINVAL without a gate. */
int hs_tick_loop_run(struct hs_tick_loop *l);
/* init only: runs the loop on its own thread (SCHED_FIFO explicit, stack size and affinity as
 * attributes; without permission and without require_rt it falls back to a normal thread and
 * reports the refusal). 0 or -errno. */
int hs_tick_loop_start(struct hs_tick_loop *l);
/* init only. Waits for the thread started by hs_tick_loop_start; returns what hs_tick_loop_run
 * would. */
int hs_tick_loop_join(struct hs_tick_loop *l);

/* RT-safe and async-signal-safe, any thread: the loop stops at the next tick boundary. */
void hs_tick_loop_request_stop(struct hs_tick_loop *l);
/* RT-safe and async-signal-safe test hook: the next tick sleeps stall_ns once inside its inputs
 * phase. */
void hs_tick_loop_inject_stall(struct hs_tick_loop *l, int64_t stall_ns);
/* RT-safe: any thread, any time (relaxed atomic loads). */
void hs_tick_loop_progress(const struct hs_tick_loop *l, struct hs_tick_progress *ret);

/* Non-RT (snprintf), any thread: one line for systemd STATUS= or a console, e.g. "tick 12034, 12034
 * run, 2 overruns, 0 missed, worst tick 85.2 us, worst wake 40.1 us". Returns like snprintf. */
int hs_tick_progress_format(const struct hs_tick_progress *p, char *buf, size_t size);

/* The tick's phase durations over a window of ticks (from one take to the next), for a live
 * view of them: per phase a coarse log histogram (4 bins per power of two of ns, so a percentile
 * read from it is within 25 % of the samples it stands for; exact below 8 ns) and the exact
 * maximum. Fixed size, no allocation; the loop's own histograms (hs_tick_loop_stats) are the
 * whole run's and are read only after it. */
#define HS_TICK_WINDOW_BINS 160 /* up to 2^40 ns; longer durations count in the last bin */
struct hs_tick_window {
    uint64_t ticks; /* in the window */
    uint32_t bins[HS_PHASE_MAX][HS_TICK_WINDOW_BINS];
    int64_t max_ns[HS_PHASE_MAX];
};
/* RT-safe, on the loop's own thread only (from a phase callback): the window since the last
 * take (or the start) into ret, and a new one begins. A copy of a few kB. */
void hs_tick_loop_take_window(struct hs_tick_loop *l, struct hs_tick_window *ret);
/* Pure: phase's p-th percentile (0 < p <= 100) in the window, ns: the upper edge of the bin
 * that reaches it, at most the maximum (p 100: the maximum). -1 when the window is empty. */
int64_t hs_tick_window_percentile(const struct hs_tick_window *w, enum hs_phase phase, double p);

/* RT-safe getters. Read stats and result after the loop has stopped (run or join returned);
 * the pointers are owned by the loop and live until hs_tick_loop_destroy. */
const struct hs_rt_stats *hs_tick_loop_stats(const struct hs_tick_loop *l);
void hs_tick_loop_result(const struct hs_tick_loop *l, struct hs_tick_result *ret);
/* The thread set-up steps as granted (sched_fifo, affinity, prefault). Valid after stop. */
const struct hs_rt_report *hs_tick_loop_rt_report(const struct hs_tick_loop *l);
/* The log ring: the RT thread produces; exactly one non-RT thread may pop, while running too. */
struct hs_rt_ring *hs_tick_loop_log(struct hs_tick_loop *l);

/* RT-safe: static strings. */
const char *hs_tick_stop_reason_name(enum hs_tick_stop_reason r);
const char *hs_overrun_policy_name(enum hs_overrun_policy p);
/* init only: "skip" / "catch-up" / "stop" -> 0 and *ret, or -EINVAL (config, CLI). */
int hs_overrun_policy_parse(const char *s, enum hs_overrun_policy *ret);

#endif
