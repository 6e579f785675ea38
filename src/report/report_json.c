/* The timing figures as jansson values, for report.json: the self-audit, the per-phase
 * statistics and a single histogram's summary: the one JSON path of the timing figures (rt/
 * exposes the structs; it wrote the same keys by hand until rt's formatters went). Keys and
 * rounding: hilsim/report_json.h. Not RT: after the loop. */
#include "hilsim/report_json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hilsim/rt/rt_audit.h"
#include "hilsim/rt/rt_hist.h"
#include "hilsim/rt/rt_setup.h"
#include "hilsim/rt/rt_stats.h"

/* Any failed insertion (out of memory) makes the builder return NULL instead of an object with
 * keys missing. */
static void put(json_t *obj, const char *key, json_t *val, bool *bad)
{
    if (json_object_set_new(obj, key, val) != 0)
        *bad = true;
}

static json_t *done(json_t *obj, bool bad)
{
    if (!bad)
        return obj;
    json_decref(obj);
    return NULL;
}

/* Rounded as printf rounds the binary value, not as round(v * 10^d): the scaled product can land
 * on an exact half that the value itself is not (1061.55 is 1061.5499... in binary, but
 * 1061.55 * 10 is 10615.5), and readers of the same data in other languages (the trace analyser
 * formats with "%.1f") must come to the same digits. */
double hs_report_round(double v, int decimals)
{
    if (!isfinite(v) || fabs(v) >= 1e15 || decimals < 0 || decimals > 17)
        return v; /* no fractional digit left to round at this size */
    char digits[64];
    snprintf(digits, sizeof digits, "%.*f", decimals, v);
    return strtod(digits, NULL);
}

static json_t *hist_json(const struct hs_hist *h)
{
    static const char *const key[HS_STATS_NPCT] = {"p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns"};
    bool bad = false;
    json_t *j = json_object();
    put(j, "count", json_integer((json_int_t)h->count), &bad);
    put(j, "overflow", json_integer((json_int_t)h->overflow), &bad);
    if (h->count) {
        put(j, "min_ns", json_integer(h->min_ns), &bad);
        put(j, "mean_ns", json_real(hs_report_round(hs_hist_mean_ns(h), 1)), &bad);
        put(j, "max_ns", json_integer(h->max_ns), &bad);
        for (int k = 0; k < HS_STATS_NPCT; k++) {
            int64_t v = 0;
            hs_hist_percentile(h, hs_stats_pct_ppm[k], &v);
            put(j, key[k], json_integer(v), &bad);
        }
    }
    return done(j, bad || !j);
}

json_t *hs_report_hist_json(const struct hs_hist *h)
{
    return hist_json(h);
}

json_t *hs_report_stats_json(const struct hs_rt_stats *s)
{
    bool bad = false;
    json_t *j = json_object();
    put(j, "period_ns", json_integer(s->period_ns), &bad);
    put(j, "ticks", json_integer((json_int_t)s->ticks), &bad);
    put(j, "overruns", json_integer((json_int_t)s->overruns), &bad);
    put(j, "missed_periods", json_integer((json_int_t)s->missed_periods), &bad);
    put(j, "range_ns", json_integer(s->phase[0].range_ns), &bad);
    put(j, "pct_rel_err", json_real(hs_report_round(HS_HIST_REL_ERR, 6)), &bad);
    json_t *phases = json_object();
    for (int i = 0; i < HS_PHASE_MAX; i++)
        put(phases, hs_phase_name((enum hs_phase)i), hist_json(&s->phase[i]), &bad);
    put(j, "phases", phases, &bad);
    return done(j, bad || !j);
}

/* Kernel and /proc text is not promised to be UTF-8; a byte that is not valid becomes '?'
 * rather than the whole report failing. */
static json_t *text(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    char buf[HS_RT_AUDIT_STR];
    size_t n = 0;
    for (; n < sizeof buf - 1 && s[n]; n++)
        buf[n] = (unsigned char)s[n] < 0x80 ? s[n] : '?';
    return json_stringn(buf, n);
}

static void step_json(json_t *j, const char *name, const struct hs_rt_step *s, bool *bad)
{
    json_t *o = json_object();
    put(o, "state", json_string(hs_rt_grant_name(s->state)), bad);
    put(o, "errno", json_integer(s->err), bad);
    put(j, name, o, bad);
}

json_t *hs_report_audit_json(const struct hs_rt_audit *a)
{
    const struct {
        const char *key, *val;
    } strs[] = {
        {"kernel_release", a->kernel_release},
        {"kernel_version", a->kernel_version},
        {"preempt_model", a->preempt_model},
        {"isolated", a->isolated},
        {"nohz_full", a->nohz_full},
        {"cmdline_isolcpus", a->cmdline_isolcpus},
        {"cmdline_nohz_full", a->cmdline_nohz_full},
        {"cmdline_rcu_nocbs", a->cmdline_rcu_nocbs},
        {"governors", a->governors},
    };
    bool bad = false;
    json_t *j = json_object();
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        put(j, strs[i].key, text(strs[i].val), &bad);
    put(j, "preempt_rt", json_boolean(a->preempt_rt), &bad);
    put(j, "sys_realtime", json_integer(a->sys_realtime), &bad);
    put(j, "isolated_count", json_integer(a->isolated_count), &bad);
    put(j, "cpus_online", json_integer(a->cpus_online), &bad);
    put(j, "rtprio_cur", json_integer(a->rtprio_cur), &bad);
    put(j, "rtprio_max", json_integer(a->rtprio_max), &bad);
    put(j, "memlock_cur_bytes", json_integer(a->memlock_cur_bytes), &bad);
    put(j, "memlock_max_bytes", json_integer(a->memlock_max_bytes), &bad);
    put(j, "dma_latency_present", json_boolean(a->dma_latency_present), &bad);
    put(j, "dma_latency_us", json_integer(a->dma_latency_us), &bad);
    if (a->have_report) {
        step_json(j, "sched_fifo", &a->report.sched_fifo, &bad);
        step_json(j, "affinity", &a->report.affinity, &bad);
        step_json(j, "mlockall", &a->report.mlockall, &bad);
        step_json(j, "prefault", &a->report.prefault, &bad);
        step_json(j, "dma_latency", &a->report.dma_latency, &bad);
        put(j, "priority", json_integer(a->report.priority), &bad);
        put(j, "cpu", json_integer(a->report.cpu), &bad);
    }
    char why[256];
    bool ok = hs_rt_audit_rt_capable(a, why, sizeof why);
    put(j, "rt_capable", json_boolean(ok), &bad);
    put(j, "rt_capable_why", json_string(ok ? "" : why), &bad);
    return done(j, bad || !j);
}
