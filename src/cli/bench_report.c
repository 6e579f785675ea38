#include "bench_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hilsim/report.h"
#include "hilsim/report_health.h"
#include "hilsim/report_json.h"

static double pct_us(const struct hs_hist *h, uint32_t ppm)
{
    int64_t v = 0;
    return hs_hist_percentile(h, ppm, &v) == 0 ? (double)v / 1e3 : 0.0;
}

static void check(struct hs_bench_verdict *v, const char *name, double measured, double limit,
                  const char *unit)
{
    struct hs_budget_check *c = &v->checks[v->nchecks++];
    *c = (struct hs_budget_check){name, measured, limit, unit, measured <= limit};
    v->pass = v->pass && c->pass;
}

void hs__bench_verdict(const struct hs_cfg_budgets *b, const struct hs_rt_stats *s,
                       uint64_t can_rx_drops, struct hs_bench_verdict *ret)
{
    memset(ret, 0, sizeof *ret);
    ret->pass = true;
    double period_us = (double)s->period_ns / 1e3;
    const struct hs_hist *tick = &s->phase[HS_PHASE_TICK], *wake = &s->phase[HS_PHASE_WAKE];
    check(ret, "deadline misses", (double)s->overruns, (double)b->max_misses, "");
    check(ret, "tick p99.99", pct_us(tick, 999900), b->tick_p9999_fraction_of_period * period_us,
          "us");
    check(ret, "tick max", tick->count ? (double)tick->max_ns / 1e3 : 0,
          b->tick_max_fraction_of_period * period_us, "us");
    check(ret, "wake latency p99", pct_us(wake, 990000), b->wake_latency_p99_us, "us");
    check(ret, "wake latency max", wake->count ? (double)wake->max_ns / 1e3 : 0,
          b->wake_latency_max_us, "us");
    check(ret, "CAN frames dropped", (double)can_rx_drops, (double)b->max_can_rx_drops, "");
}

static char *read_buf; /* formatter scratch, reused */
#define BUF_SIZE (64 * 1024)

static FILE *open_in(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return fopen(path, "w");
}

static int close_checked(FILE *f)
{
    int bad = ferror(f);
    return (fclose(f) != 0 || bad) ? -EIO : 0;
}

static void wake_compare(FILE *f, const struct hs_hist *h, const struct hs_hist *base)
{
    static const uint32_t ppm[] = {500000, 990000, 999900};
    static const char *names[] = {"p50", "p99", "p99.99"};
    fprintf(f, "\nwake latency [us]   %10s %10s   ratio\n", "hilsim", "baseline");
    for (int k = 0; k < 3; k++) {
        double a = pct_us(h, ppm[k]), b = pct_us(base, ppm[k]);
        fprintf(f, "  %-17s %10.3f %10.3f   %5.2f\n", names[k], a, b, b > 0 ? a / b : 0.0);
    }
    double a = h->count ? (double)h->max_ns / 1e3 : 0,
           b = base->count ? (double)base->max_ns / 1e3 : 0;
    fprintf(f, "  %-17s %10.3f %10.3f   %5.2f\n", "max", a, b, b > 0 ? a / b : 0.0);
}

/* The sync clock's row under the timing table (sync mode). */
static void sync_text(FILE *f, const struct hs_sync_status *y)
{
    fprintf(f,
            "\nsync clock: %s; %llu events, locked %llu time(s), lost %llu time(s); over %llu "
            "locked ticks phase error rms %.1f us, worst %.1f us; drift %+.1f ppm; locked cycles "
            "without an event %llu, with two or more %llu; events delivered a tick late %llu\n",
            hs_sync_state_name(y->state), (unsigned long long)y->events,
            (unsigned long long)y->locks, (unsigned long long)y->losses,
            (unsigned long long)y->locked_ticks, y->rms_phase_error_ns / 1e3,
            (double)y->worst_phase_error_ns / 1e3, y->drift_ppm, (unsigned long long)y->missed,
            (unsigned long long)y->doubles, (unsigned long long)y->late);
}

static int write_text(const char *dir, const char *bench, double duration_s,
                      const struct hs_rt_audit *audit, const struct hs_rt_stats *s,
                      const struct hs_hist *base, const struct hs_bench_verdict *v,
                      const struct hs_sync_status *sync,
                      const struct hs_world_health_summary *health)
{
    FILE *f = open_in(dir, "report.txt");
    if (!f)
        return -errno;
    fprintf(f, "hilsim timing validation: bench '%s', %.1f s at %.3f ms\n\n", bench, duration_s,
            (double)s->period_ns / 1e6);
    hs_rt_audit_format_text(audit, read_buf, BUF_SIZE);
    fprintf(f, "%s\n", read_buf);
    hs_rt_stats_format_text(s, read_buf, BUF_SIZE);
    fprintf(f, "%s", read_buf);
    hs_rt_stats_format_row("baseline", base, read_buf, BUF_SIZE);
    fprintf(f, "\nbaseline: the bare clock_nanosleep loop's wake latency, same columns [us]\n%s",
            read_buf);
    wake_compare(f, &s->phase[HS_PHASE_WAKE], base);
    if (sync)
        sync_text(f, sync);
    if (health) {
        hs_report_health_text(health, read_buf, BUF_SIZE);
        fprintf(f, "\n%s", read_buf);
    }
    fprintf(f, "\nbudgets:\n");
    for (int i = 0; i < v->nchecks; i++)
        fprintf(f, "  %-18s %12.*f %-3s limit %12.*f  %s\n", v->checks[i].name,
                v->checks[i].unit[0] ? 3 : 0, v->checks[i].measured, v->checks[i].unit,
                v->checks[i].unit[0] ? 3 : 0, v->checks[i].limit,
                v->checks[i].pass ? "pass" : "FAIL");
    fprintf(f, "\nverdict: %s\n", v->pass ? "PASS" : "FAIL");
    return close_checked(f);
}

static void put(json_t *obj, const char *key, json_t *val, bool *bad)
{
    if (json_object_set_new(obj, key, val) != 0)
        *bad = true;
}

static json_t *sync_json(const struct hs_sync_status *y, bool *bad)
{
    json_t *o = json_object();
    put(o, "state", json_string(hs_sync_state_name(y->state)), bad);
    put(o, "events", json_integer((json_int_t)y->events), bad);
    put(o, "locks", json_integer((json_int_t)y->locks), bad);
    put(o, "losses", json_integer((json_int_t)y->losses), bad);
    put(o, "locked_ticks", json_integer((json_int_t)y->locked_ticks), bad);
    put(o, "phase_error_last_us", json_real(hs_report_round((double)y->phase_error_ns / 1e3, 3)),
        bad);
    put(o, "phase_error_rms_us", json_real(hs_report_round(y->rms_phase_error_ns / 1e3, 3)), bad);
    put(o, "phase_error_worst_us",
        json_real(hs_report_round((double)y->worst_phase_error_ns / 1e3, 3)), bad);
    put(o, "drift_ppm", json_real(hs_report_round(y->drift_ppm, 3)), bad);
    put(o, "locked_cycles_missed", json_integer((json_int_t)y->missed), bad);
    put(o, "locked_cycles_double", json_integer((json_int_t)y->doubles), bad);
    put(o, "events_late", json_integer((json_int_t)y->late), bad);
    put(o, "ticks_not_judged", json_integer((json_int_t)y->excused), bad);
    return o;
}

static json_t *budgets_json(const struct hs_bench_verdict *v, bool *bad)
{
    json_t *a = json_array();
    for (int i = 0; i < v->nchecks; i++) {
        const struct hs_budget_check *c = &v->checks[i];
        json_t *o = json_object();
        put(o, "name", json_string(c->name), bad);
        put(o, "measured", json_real(hs_report_round(c->measured, 3)), bad);
        put(o, "limit", json_real(hs_report_round(c->limit, 3)), bad);
        put(o, "unit", json_string(c->unit), bad);
        put(o, "pass", json_boolean(c->pass), bad);
        if (json_array_append_new(a, o) != 0)
            *bad = true;
    }
    return a;
}

static int write_json(const char *dir, const char *bench, double duration_s,
                      const struct hs_rt_audit *audit, const struct hs_rt_stats *s,
                      const struct hs_hist *base, const struct hs_bench_verdict *v,
                      const struct hs_sync_status *sync,
                      const struct hs_world_health_summary *health)
{
    double a = pct_us(&s->phase[HS_PHASE_WAKE], 999900), b = pct_us(base, 999900);
    bool bad = false;
    json_t *root = json_object();
    put(root, "bench", json_string(bench), &bad);
    put(root, "duration_s", json_real(hs_report_round(duration_s, 3)), &bad);
    put(root, "audit", hs_report_audit_json(audit), &bad);
    put(root, "stats", hs_report_stats_json(s), &bad);
    put(root, "baseline_wake", hs_report_hist_json(base), &bad);
    put(root, "wake_p9999_ratio_to_baseline", json_real(hs_report_round(b > 0 ? a / b : 0.0, 4)),
        &bad);
    if (sync)
        put(root, "sync", sync_json(sync, &bad), &bad);
    if (health)
        put(root, "solver_health", hs_report_health_json(health), &bad);
    put(root, "budgets", budgets_json(v, &bad), &bad);
    put(root, "verdict", json_string(v->pass ? "pass" : "fail"), &bad);
    int r = -ENOMEM;
    if (root && !bad) {
        FILE *f = open_in(dir, "report.json");
        if (!f) {
            r = -errno;
        } else {
            int w =
                json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(HS_REPORT_JSON_PRECISION));
            fputc('\n', f);
            r = close_checked(f);
            if (w != 0 && r == 0)
                r = -EIO;
        }
    }
    json_decref(root);
    return r;
}

static int write_svg(const char *dir, const struct hs_rt_stats *s, const struct hs_hist *base,
                     const struct hs_bench_verdict *v)
{
    FILE *f = open_in(dir, "latency.svg");
    if (!f)
        return -errno;
    const struct hs_hist *w = &s->phase[HS_PHASE_WAKE], *t = &s->phase[HS_PHASE_TICK];
    struct hs_svg_series series[3] = {
        {"hilsim wake latency", w, "#d62728", true},
        {"baseline wake latency", base, "#1f77b4", true},
        {"hilsim tick time", t, "#2ca02c", false},
    };
    /* the budgets in time, drawn as the limits they are: wake latency in the wake series'
     * colour, the tick's in the tick time's */
    struct hs_svg_limit limits[8];
    char text[8][64];
    uint32_t nl = 0;
    for (int i = 0; v && i < v->nchecks && nl < 8; i++) {
        const struct hs_budget_check *c = &v->checks[i];
        if (strcmp(c->unit, "us"))
            continue;
        snprintf(text[nl], sizeof text[nl], "budget %s %.0f µs", c->name, c->limit);
        limits[nl] = (struct hs_svg_limit){text[nl], c->limit * 1e3,
                                           !strncmp(c->name, "wake", 4) ? "#8c1c1c" : "#1a6b1a"};
        nl++;
    }
    int r =
        hs_report_write_svg_histogram_limits(f, "hilsim timing validation", series, 3, limits, nl);
    int c = close_checked(f);
    return r < 0 ? r : c;
}

int hs__bench_write_report(const char *dir, const char *bench_name, double duration_s,
                           const struct hs_rt_audit *audit, const struct hs_rt_stats *s,
                           const struct hs_hist *baseline, const struct hs_bench_verdict *v,
                           const struct hs_sync_status *sync,
                           const struct hs_world_health_summary *health)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -errno;
    read_buf = malloc(BUF_SIZE);
    if (!read_buf)
        return -ENOMEM;
    int r = write_text(dir, bench_name, duration_s, audit, s, baseline, v, sync, health);
    if (r == 0)
        r = write_json(dir, bench_name, duration_s, audit, s, baseline, v, sync, health);
    if (r == 0)
        r = write_svg(dir, s, baseline, v);
    free(read_buf);
    read_buf = NULL;
    return r;
}
