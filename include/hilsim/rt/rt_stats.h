/* Per-phase timing statistics of the tick loop: one histogram per phase, preallocated, plus
 * the run's counters; text table and JSON formatters (non-RT). */
#ifndef HS_RT_STATS_H
#define HS_RT_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "hilsim/rt/rt_hist.h"

enum hs_phase {
    HS_PHASE_WAKE, /* wake latency: actual wake - planned wake */
    HS_PHASE_INPUTS,
    HS_PHASE_ACTUATION,
    HS_PHASE_PHYSICS,
    HS_PHASE_SENSORS,
    HS_PHASE_OUTPUTS,
    HS_PHASE_TICK, /* whole tick: wake to end of outputs */
    HS_PHASE_MAX
};

/* Percentiles reported by the formatters, in parts per million. */
#define HS_STATS_NPCT 4
extern const uint32_t hs_stats_pct_ppm[HS_STATS_NPCT]; /* 500000 990000 999000 999900 */

struct hs_rt_stats {
    struct hs_hist phase[HS_PHASE_MAX]; /* owned */
    uint64_t ticks;                     /* ticks executed */
    uint64_t overruns;                  /* ticks that finished after their next deadline */
    uint64_t missed_periods;            /* deadlines skipped without a tick (skip policy) */
    int64_t period_ns;
};

/* init only: allocates HS_PHASE_MAX histograms of range_ns (0 picks the default; see
 * rt_hist.h). Returns 0, -EINVAL or -ENOMEM; on failure everything is freed and zeroed. */
int hs_rt_stats_init(struct hs_rt_stats *s, int64_t range_ns);
/* init only. Accepts NULL. */
void hs_rt_stats_destroy(struct hs_rt_stats *s);
/* RT-safe. */
void hs_rt_stats_reset(struct hs_rt_stats *s);
/* RT-safe: short lower-case row name ("wake", "inputs", ..., "tick"), used by text and JSON alike.
 */
const char *hs_phase_name(enum hs_phase p);

/* Non-RT. Write a table (one row per phase: count min mean p50 p99 p99.9 p99.99 max in us with
 * three decimals, so sub-microsecond phases read as such; percentiles are bin midpoints within
 * HS_HIST_REL_ERR, stated under the table) into buf (always NUL-terminated when size > 0).
 * Return the length that the full output needs, like snprintf: a result >= size means it was
 * truncated. The JSON of these figures is hilsim/report_json.h's (src/report, jansson): rt/
 * exposes the data and writes no JSON. */
/* Non-RT. One row of that table for any histogram (e.g. the baseline's wake latency next to
 * the loop's), newline included. Same return rule. */
size_t hs_rt_stats_format_row(const char *name, const struct hs_hist *h, char *buf, size_t size);
/* Non-RT. The loop's wake latency next to the baseline's (rt_baseline.h), measured in the same
 * run, and their ratio per column (loop / baseline; "-" where the baseline is 0): timing
 * figures on a non-RT host only mean something relative to that baseline. Same return rule. */
size_t hs_rt_format_vs_baseline(const struct hs_hist *loop_wake, const struct hs_hist *base_wake,
                                char *buf, size_t size);
size_t hs_rt_stats_format_text(const struct hs_rt_stats *s, char *buf, size_t size);

#endif
