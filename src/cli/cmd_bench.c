/* hilsim bench: a timing validation run with a report a test engineer can file. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "bench_report.h"
#include "commands.h"
#include "summary_out.h"
#include "hilsim/service/runner.h"
#include "hilsim/service/sync_clock.h"

#include "hilsim/log.h"
#include "hilsim/rt/rt_baseline.h"

int hs__parse_run_opts(int argc, char **argv, struct hs_runner_opts *o, void (*help)(FILE *),
                       const char *extra_short, const struct option *extra, int (*on_extra)(int c));

static const char *report_dir;

static void usage(FILE *f)
{
    fprintf(f, "usage: hilsim bench CONFIG --report DIR [--duration S] [options]\n\n"
               "Timing validation run. First a bare clock_nanosleep loop (cyclictest's method)\n"
               "runs for S seconds at the bench's period, priority and CPU as the baseline; then\n"
               "the bench's real loop runs for S seconds. DIR receives report.txt (self-audit,\n"
               "per-phase percentile table, deadline misses, hilsim's wake latency beside the\n"
               "baseline's, budget verdict), report.json (every figure) and latency.svg (the\n"
               "histograms on a log time axis with p50/p99/p99.9/max markers, log-scale\n"
               "counts). Percentiles are log-linear bin midpoints, within 0.4 %% of the\n"
               "samples. Budgets come from the config's budgets section.\n\n"
               "options:\n"
               "  --report DIR      where the report goes (created if missing); required\n"
               "  --duration S      seconds for each of the two runs (default 10)\n"
               "  --require-rt      refuse to run on a host that is not real-time capable\n"
               "  --no-rt           ask for no real-time privileges\n"
               "  --clock wall      the only clock a timing validation runs on (rt.clock.mode is\n"
               "                    ignored here)\n"
               "  --set KEY=VALUE   override one config key, as `hilsim run` does; repeat\n"
               "  --scenario, --junit, --result-json\n"
               "                    refused: a timing validation runs the bench as configured\n"
               "                    (play scenarios with `hilsim run` or `hilsim sim`)\n"
               "  --systemd         syslog priority prefixes on log lines\n"
               "  --log-level L     error, warning, info (default) or debug\n"
               "  -h, --help        this text\n\n"
               "exit codes: 0 verdict pass, 1 verdict fail or runtime failure, 2 bad usage or "
               "config\n");
}

static int on_extra(int c)
{
    if (c == 'r') {
        report_dir = optarg;
        return 0;
    }
    return -1;
}

static atomic_bool baseline_stop;
static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&baseline_stop, true);
}

int hs_cmd_bench(int argc, char **argv)
{
    static const struct option extra[] = {{"report", required_argument, 0, 'r'}, {0, 0, 0, 0}};
    struct hs_runner_opts o;
    report_dir = NULL;
    int rc = hs__parse_run_opts(argc, argv, &o, usage, NULL, extra, on_extra);
    if (rc)
        return rc < 0 ? HS_EXIT_OK : rc;
    if (!report_dir) {
        fprintf(stderr, "hilsim bench: --report DIR is required\n");
        return HS_EXIT_USAGE;
    }
    /* A scenario would change what is timed (and its verdict would go unread): refused rather
     * than silently played or ignored. */
    if (o.scenario || o.junit || o.result_json) {
        fprintf(stderr,
                "hilsim bench: --scenario, --junit and --result-json belong to `hilsim "
                "run` and `hilsim sim`: a timing validation runs the bench as configured\n");
        return HS_EXIT_USAGE;
    }
    if (o.duration_s == 0)
        o.duration_s = 10;
    /* A timing validation measures the wall clock against its baseline: rt.clock and --clock
     * other than wall would measure a controller's pace instead. */
    if (o.clock_given && o.clock_mode != HS_CLOCK_WALL) {
        fprintf(stderr, "hilsim bench: --clock: a timing validation runs on the wall clock\n");
        return HS_EXIT_USAGE;
    }
    o.clock_given = true;
    o.clock_mode = HS_CLOCK_WALL;
    static struct hs_runner r;
    struct hs_hist base = {0};
    rc = hs__runner_prepare(&o, &r);
    if (rc)
        goto out;
    if (hs_hist_init(&base, r.tick.hist_range_ns) < 0) {
        rc = HS_EXIT_FAILURE;
        goto out;
    }
    hs_log(HS_LOG_INFO, "baseline: bare clock_nanosleep loop for %.1f s", o.duration_s);
    /* The supervisor only runs with the loop: during the baseline SIGINT/SIGTERM (also one
     * that arrived during start-up and is pending) end it through a plain handler. */
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigset_t stop_sigs;
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGINT);
    sigaddset(&stop_sigs, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &stop_sigs, NULL);
    struct hs_baseline_config bc = {
        .period_ns = r.tick.period_ns, .loops = r.tick.max_ticks, .own_thread = false};
    struct hs_baseline_result bres;
    int br = hs_baseline_run(&bc, &r.rt, &base, &baseline_stop, &bres);
    pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (br < 0) {
        hs_log(HS_LOG_ERR, "baseline run failed: %s", strerror(-br));
        rc = HS_EXIT_FAILURE;
        goto out;
    }
    if (atomic_load(&baseline_stop)) {
        hs_log(HS_LOG_WARNING, "interrupted during the baseline: no report");
        rc = HS_EXIT_FAILURE;
        goto out;
    }
    hs_log(HS_LOG_INFO, "hilsim loop for %.1f s", o.duration_s);
    rc = hs__runner_run(&r);
    struct hs__summary_out out;
    hs__summary_begin(&out);
    hs__runner_print_summary(&r, out.f);
    hs__summary_end(&out);
    if (rc)
        goto out;
    struct hs_bench_verdict v;
    hs__bench_verdict(&r.budgets, hs_tick_loop_stats(r.loop), hs__runner_input_drops(&r), &v);
    struct hs_sync_status sync;
    bool synced = hs__sync_clock_status(r.sync, &sync);
    struct hs_world_health_summary health;
    hs_world_health_summary(hs_bench_world(r.bench), &health);
    int wr = hs__bench_write_report(report_dir, r.cfg->bench.name, o.duration_s, &r.audit,
                                    hs_tick_loop_stats(r.loop), &base, &v, synced ? &sync : NULL,
                                    &health);
    if (wr < 0) {
        hs_log(HS_LOG_ERR, "%s: cannot write the report: %s", report_dir, strerror(-wr));
        rc = HS_EXIT_FAILURE;
        goto out;
    }
    printf("report written to %s (report.txt, report.json, latency.svg): verdict %s\n", report_dir,
           v.pass ? "PASS" : "FAIL");
    rc = v.pass ? HS_EXIT_OK : HS_EXIT_FAILURE;
out:
    hs_hist_destroy(&base);
    hs__runner_cleanup(&r);
    return rc;
}
