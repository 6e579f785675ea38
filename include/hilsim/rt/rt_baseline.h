/* Timing baseline: a bare absolute-deadline clock_nanosleep loop (cyclictest's method) at the
 * same period, priority and CPU as the tick loop, recording wake latency only. Reported side by
 * side with the loop's own wake latency, it separates the host's jitter from hilsim's. */
#ifndef HS_RT_BASELINE_H
#define HS_RT_BASELINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hilsim/rt/rt_hist.h"
#include "hilsim/rt/rt_setup.h"

struct hs_baseline_config {
    int64_t period_ns; /* HS_TICK_PERIOD_MIN_NS..HS_TICK_PERIOD_MAX_NS */
    uint64_t loops;    /* wake-ups to measure (> 0) */
    bool own_thread;   /* run on a new thread with rt's attributes, else on the caller */
};

struct hs_baseline_result {
    uint64_t loops;
    struct hs_rt_report rep; /* thread steps as granted */
};

/* init only (it is its own RT loop). Runs the baseline; wake latencies go into wake (initialized by
 * the caller, e.g. with the same range and bins as the loop). rt may be NULL (no real-time
 * requests). stop may be NULL; when it becomes true the run ends early. Returns 0 or -errno (bad
 * config, thread creation, refused set-up under require_rt). The per-wake path is RT-safe. */
int hs_baseline_run(const struct hs_baseline_config *cfg, const struct hs_rt_opts *rt,
                    struct hs_hist *wake, const atomic_bool *stop, struct hs_baseline_result *ret);

#endif
