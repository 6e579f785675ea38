/* The timing validation report: self-audit, per-phase table, misses, wake latency beside the
 * bare clock_nanosleep baseline, a histogram picture, a JSON with every figure, and a verdict
 * against the config's budgets. Not RT. */
#ifndef HS_CLI_BENCH_REPORT_H
#define HS_CLI_BENCH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "hilsim/config.h"
#include "hilsim/world.h"
#include "hilsim/rt/clock_discipline.h"
#include "hilsim/rt/rt_audit.h"
#include "hilsim/rt/rt_hist.h"
#include "hilsim/rt/rt_stats.h"

#define HS_BUDGET_CHECKS 6

struct hs_budget_check {
    const char *name;
    double measured, limit;
    const char *unit;
    bool pass;
};

struct hs_bench_verdict {
    struct hs_budget_check checks[HS_BUDGET_CHECKS];
    int nchecks;
    bool pass;
};

/* Pure: evaluates the budgets on the loop's statistics. */
void hs__bench_verdict(const struct hs_cfg_budgets *b, const struct hs_rt_stats *s,
                       uint64_t can_rx_drops, struct hs_bench_verdict *ret);

/* Writes report.txt, report.json and latency.svg into dir (created if missing). sync: the sync
 * clock's figures in sync mode, else NULL. health: the world's solver health over the run, or
 * NULL. Returns 0 or -errno. */
int hs__bench_write_report(const char *dir, const char *bench_name, double duration_s,
                           const struct hs_rt_audit *audit, const struct hs_rt_stats *s,
                           const struct hs_hist *baseline, const struct hs_bench_verdict *v,
                           const struct hs_sync_status *sync,
                           const struct hs_world_health_summary *health);

#endif
