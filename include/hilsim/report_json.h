/* Timing figures as JSON values (jansson) for report.json and whatever reads them back.
 * Not RT: runs after the loop stops. */
#ifndef HILSIM_REPORT_JSON_H
#define HILSIM_REPORT_JSON_H

/* Declared, not included: the users that build documents include <jansson.h> themselves (its
 * json_t is struct json_t), and the rt/ types come from hilsim/rt/ where they are used. */
struct json_t;
struct hs_rt_audit;
struct hs_rt_stats;
struct hs_hist;

/* Each returns a new reference the caller owns (json_decref), or NULL when out of memory. The
 * one JSON writer of these figures (rt/ exposes the structs and writes no JSON). Keys, in order:
 * - hist: count, overflow, and with samples min_ns, mean_ns (to 0.1 ns), max_ns, p50_ns,
 *   p99_ns, p99_9_ns, p99_99_ns (hs_hist_percentile);
 * - stats: period_ns, ticks, overruns, missed_periods, range_ns, pct_rel_err (to 1e-6), phases
 *   (one hist per phase, named by hs_phase_name, in phase order);
 * - audit: the nine strings kernel_release .. governors (a byte that is not UTF-8 becomes '?'),
 *   preempt_rt .. dma_latency_us, with a set-up report sched_fifo, affinity, mlockall,
 *   prefault, dma_latency ({state, errno}), priority, cpu; then rt_capable, rt_capable_why.
 * tests/report/test_report_json.c checks each against its input. */
struct json_t *hs_report_audit_json(const struct hs_rt_audit *a);
struct json_t *hs_report_stats_json(const struct hs_rt_stats *s);
struct json_t *hs_report_hist_json(const struct hs_hist *h);

/* v rounded to a number of decimals: report figures carry the digits they mean, and the
 * report's dump precision (HS_REPORT_JSON_PRECISION) then prints them without binary noise. */
double hs_report_round(double v, int decimals);
#define HS_REPORT_JSON_PRECISION 15

#endif
