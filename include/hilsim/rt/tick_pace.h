/* How the tick loop paces its ticks: the clock modes, the lockstep gate and the sync discipline.
 *
 *   wall      tick n starts at the absolute deadline start + n * period (CLOCK_MONOTONIC), the
 *             overrun policy handles late ticks. The tick clock (hs_tick_info.now_ns) is the
 *             actual wake time. Today's behaviour, and the default.
 *   lockstep  tick n (n >= 1) starts when the gate releases it: the controller said it is done
 *             with tick n-1. Tick 0 runs at once, so there is a first state to answer. Time is
 *             simulated: now_ns = planned_ns = start + n * period, however long the wait was, so
 *             every timeout that runs on now_ns (command watchdogs, client loss, protocol
 *             timeouts) gives the same result on a fast or a loaded machine. No deadline, so no
 *             overrun. A wait is bounded by lockstep_timeout_ns; on expiry the loop holds (waits
 *             again, the plant stands still), steps (runs the tick with the commands in hand) or
 *             stops (HS_TICK_STOP_LOCKSTEP_TIMEOUT), as configured, and logs it.
 *   sync      wall, but after every tick the discipline may move the timeline: the correction
 *             it returns is added to every later deadline (a PLL locking the tick to an external
 *             event). Without a discipline, sync runs exactly as wall.
 *
 * Hooks for other modules (both set before the loop starts, both called on the RT thread):
 *   - a lockstep source (shm, CAN) provides the gate: wait(ctx, tick, deadline_ns);
 *   - a sync discipline provides adjust(ctx, info): the ns to move the next deadline by. */
#ifndef HS_RT_TICK_PACE_H
#define HS_RT_TICK_PACE_H

#include <stdint.h>

struct hs_tick_info;

/* What starts a tick (rt.clock.mode in the config; hs_clock_mode_names spells them). */
enum hs_clock_mode {
    HS_CLOCK_WALL,     /* absolute deadlines on CLOCK_MONOTONIC (default) */
    HS_CLOCK_LOCKSTEP, /* the controller releases each tick; simulated time */
    HS_CLOCK_SYNC,     /* wall, disciplined to an external event (rt.clock.sync) */
    HS_CLOCK_MODE_MAX
};
/* "wall", "lockstep", "sync", then NULL (the config schema's enum table takes it as is). */
extern const char *const hs_clock_mode_names[HS_CLOCK_MODE_MAX + 1];

/* What a lockstep wait does when lockstep_timeout_ns passes without a release. */
enum hs_lockstep_expiry {
    HS_LOCKSTEP_HOLD, /* log, then wait again: the plant stands still until released or stopped */
    HS_LOCKSTEP_STEP, /* log, then run the tick with the commands in hand (they age on the tick
                       * clock, so a silent controller's commands go stale as in wall mode) */
    HS_LOCKSTEP_STOP, /* log, then stop the loop (HS_TICK_STOP_LOCKSTEP_TIMEOUT, -ETIMEDOUT) */
    HS_LOCKSTEP_EXPIRY_MAX
};
/* rt.clock.on_timeout's names (the config's enum field uses this table), NULL-terminated. */
extern const char *const hs_lockstep_expiry_names[HS_LOCKSTEP_EXPIRY_MAX + 1];

#define HS_LOCKSTEP_TIMEOUT_MIN_NS 1000000LL       /* 1 ms */
#define HS_LOCKSTEP_TIMEOUT_MAX_NS 3600000000000LL /* 1 h */
/* A lockstep wait is cut in slices this long, so a stop request ends a hold promptly. */
#define HS_LOCKSTEP_SLICE_NS 20000000LL

struct hs_tick_clock {
    enum hs_clock_mode mode;
    int64_t lockstep_timeout_ns; /* lockstep: HS_LOCKSTEP_TIMEOUT_MIN_NS..MAX_NS; else unused */
    enum hs_lockstep_expiry on_timeout;
    /* lockstep: the tick clock at tick 0, so simulated time can continue a timeline that ran
     * before the loop (the runner's warm-up) whatever the wall time it took; 0: the loop's
     * start. Unused in the other modes. */
    int64_t sim_start_ns;
};

/* The lockstep gate. wait is RT-safe and bounded: it returns 0 once tick `tick` (the loop's
 * period number, >= 1) may run, -ETIMEDOUT when deadline_ns (absolute CLOCK_MONOTONIC) passed
 * first, or another negative errno, which stops the loop like a phase error. The loop calls it
 * with deadlines at most HS_LOCKSTEP_SLICE_NS ahead and applies the timeout itself. ctx is
 * borrowed and must outlive the loop. */
struct hs_tick_gate {
    int (*wait)(void *ctx, uint64_t tick, int64_t deadline_ns);
    void *ctx;
};

/* The sync discipline. adjust is RT-safe; the loop calls it after every tick's accounting with
 * that tick's info (planned_ns already includes earlier corrections, wake_ns is the actual wake)
 * and adds what it returns (ns, positive = later) to every later deadline. The discipline bounds
 * its own slew. ctx is borrowed and must outlive the loop. */
struct hs_tick_discipline {
    int64_t (*adjust)(void *ctx, const struct hs_tick_info *t);
    void *ctx;
};

/* RT-safe: static strings ("wall", "lockstep", "sync"; "hold", "step", "stop"). */
const char *hs_clock_mode_name(enum hs_clock_mode m);
const char *hs_lockstep_expiry_name(enum hs_lockstep_expiry e);
/* init only: the names above -> 0 and *ret, or -EINVAL (config, CLI). */
int hs_clock_mode_parse(const char *s, enum hs_clock_mode *ret);
int hs_lockstep_expiry_parse(const char *s, enum hs_lockstep_expiry *ret);

#endif
