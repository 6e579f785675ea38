/* report.json's timing pieces (hilsim/report_json.h), read back the way a reader of report.json
 * reads them: dumped at the report's precision, parsed with json_loads, every key checked in
 * its documented order and every value against the input it was built from (literal figures
 * where the input makes them known, the source struct's own fields otherwise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "hilsim/report_json.h"
#include "hilsim/rt/rt_audit.h"
#include "hilsim/rt/rt_stats.h"
#include "hilsim/rt/rt_setup.h"

/* Dumps j at the report's precision (the text is returned in *ret_text, caller frees) and
 * parses it back. */
static json_t *round_trip(json_t *j, char **ret_text)
{
    assert_non_null(j);
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(HS_REPORT_JSON_PRECISION));
    assert_non_null(s);
    json_decref(j);
    json_error_t e;
    json_t *back = json_loads(s, 0, &e);
    if (!back)
        fail_msg("dump does not parse: %d:%d: %s", e.line, e.column, e.text);
    if (ret_text)
        *ret_text = s;
    else
        free(s);
    return back;
}

/* The object's keys are exactly want[0..n-1], in that order. */
static void assert_keys(const json_t *o, const char *const *want, size_t n)
{
    assert_true(json_is_object(o));
    size_t i = 0;
    for (void *it = json_object_iter((json_t *)o); it;
         it = json_object_iter_next((json_t *)o, it)) {
        assert_true(i < n);
        assert_string_equal(json_object_iter_key(it), want[i]);
        i++;
    }
    assert_int_equal(i, n);
}

static json_int_t int_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("\"%s\" is not an integer", key);
    return json_integer_value(v);
}

static double real_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_real(v))
        fail_msg("\"%s\" is not a real", key);
    return json_real_value(v);
}

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        fail_msg("\"%s\" is not a string", key);
    return json_string_value(v);
}

static bool bool_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_boolean(v))
        fail_msg("\"%s\" is not a boolean", key);
    return json_is_true(v);
}

static const char *const hist_keys[] = {"count",  "overflow", "min_ns",   "mean_ns",  "max_ns",
                                        "p50_ns", "p99_ns",   "p99_9_ns", "p99_99_ns"};
static const uint32_t hist_ppm[] = {500000, 990000, 999000, 999900};

static int64_t pct(const struct hs_hist *h, uint32_t ppm)
{
    int64_t v = -1;
    assert_int_equal(hs_hist_percentile(h, ppm, &v), 0);
    return v;
}

/* One histogram object against its source: count and overflow always, the rest only with
 * samples; mean to 0.1 ns. */
static void check_hist(const json_t *o, const struct hs_hist *h)
{
    assert_keys(o, hist_keys, h->count ? 9 : 2);
    assert_int_equal(int_of(o, "count"), h->count);
    assert_int_equal(int_of(o, "overflow"), h->overflow);
    if (!h->count)
        return;
    assert_int_equal(int_of(o, "min_ns"), h->min_ns);
    assert_int_equal(int_of(o, "max_ns"), h->max_ns);
    assert_true(real_of(o, "mean_ns") == hs_report_round(hs_hist_mean_ns(h), 1));
    for (int k = 0; k < 4; k++)
        assert_int_equal(int_of(o, hist_keys[5 + k]), pct(h, hist_ppm[k]));
}

/* Three samples in one bin, one far above: p50 is that bin's midpoint, p99 and up the exact
 * max; the mean 75400 ns. */
static void test_hist(void **state)
{
    (void)state;
    struct hs_hist h, empty;
    assert_int_equal(hs_hist_init(&h, 10 * 1000 * 1000 * 1000LL), 0);
    assert_int_equal(hs_hist_init(&empty, 1000), 0);
    const int64_t x[] = {70200, 70600, 70640, 90160};
    for (int i = 0; i < 4; i++)
        hs_hist_record(&h, x[i]);
    const int64_t p50 = hs_hist_bin_value(hs_hist_bin_of(70600));
    assert_true(p50 != 70600);
    char *text;
    json_t *o = round_trip(hs_report_hist_json(&h), &text);
    check_hist(o, &h);
    assert_int_equal(int_of(o, "count"), 4);
    assert_int_equal(int_of(o, "overflow"), 0);
    assert_int_equal(int_of(o, "min_ns"), 70200);
    assert_true(real_of(o, "mean_ns") == 75400.0);
    assert_int_equal(int_of(o, "max_ns"), 90160);
    assert_int_equal(int_of(o, "p50_ns"), p50);
    assert_int_equal(int_of(o, "p99_ns"), 90160);
    assert_int_equal(int_of(o, "p99_9_ns"), 90160);
    assert_int_equal(int_of(o, "p99_99_ns"), 90160);
    assert_non_null(strstr(text, "\"mean_ns\": 75400.0,"));
    free(text);
    json_decref(o);

    hs_hist_record(&empty, 5000); /* above the range: overflow, still counted */
    o = round_trip(hs_report_hist_json(&empty), NULL);
    check_hist(o, &empty);
    assert_int_equal(int_of(o, "count"), 1);
    assert_int_equal(int_of(o, "overflow"), 1);
    json_decref(o);
    hs_hist_reset(&empty);
    o = round_trip(hs_report_hist_json(&empty), NULL);
    check_hist(o, &empty);
    assert_int_equal(int_of(o, "count"), 0);
    json_decref(o);
    hs_hist_destroy(&h);
    hs_hist_destroy(&empty);
}

static void test_stats(void **state)
{
    (void)state;
    struct hs_rt_stats s;
    assert_int_equal(hs_rt_stats_init(&s, 10 * 1000 * 1000 * 1000LL), 0);
    s.period_ns = 1000000;
    s.ticks = 12345;
    s.overruns = 3;
    s.missed_periods = 7;
    /* awkward means (eighths of a ns), big and small magnitudes */
    const int64_t xs[] = {41, 42, 42, 70200, 70640, 90160, 1234567, 987654321};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        hs_hist_record(&s.phase[HS_PHASE_PHYSICS], xs[i]);
        hs_hist_record(&s.phase[HS_PHASE_WAKE], xs[i] / 3 + 1);
    }
    hs_hist_record(&s.phase[HS_PHASE_INPUTS], 50);
    char *text;
    json_t *o = round_trip(hs_report_stats_json(&s), &text);
    static const char *const keys[] = {"period_ns", "ticks",       "overruns", "missed_periods",
                                       "range_ns",  "pct_rel_err", "phases"};
    assert_keys(o, keys, 7);
    assert_int_equal(int_of(o, "period_ns"), 1000000);
    assert_int_equal(int_of(o, "ticks"), 12345);
    assert_int_equal(int_of(o, "overruns"), 3);
    assert_int_equal(int_of(o, "missed_periods"), 7);
    assert_int_equal(int_of(o, "range_ns"), 10000000000LL);
    assert_true(real_of(o, "pct_rel_err") == 0.003906); /* HS_HIST_REL_ERR = 1/256, to 1e-6 */
    assert_non_null(strstr(text, "\"range_ns\": 10000000000,\n  \"pct_rel_err\": 0.003906,"));
    free(text);
    const json_t *ph = json_object_get(o, "phases");
    static const char *const phases[] = {"wake",    "inputs",  "actuation", "physics",
                                         "sensors", "outputs", "tick"};
    assert_keys(ph, phases, HS_PHASE_MAX);
    for (int p = 0; p < HS_PHASE_MAX; p++)
        check_hist(json_object_get(ph, phases[p]), &s.phase[p]);
    /* The means come out rounded to 0.1 ns: 989120013 / 8 and 329706677 / 8. */
    assert_true(real_of(json_object_get(ph, "physics"), "mean_ns") == 123640001.6);
    assert_true(real_of(json_object_get(ph, "wake"), "mean_ns") == 41213334.6);
    assert_int_equal(int_of(json_object_get(ph, "physics"), "min_ns"), 41);
    assert_int_equal(int_of(json_object_get(ph, "physics"), "max_ns"), 987654321);
    assert_int_equal(int_of(json_object_get(ph, "inputs"), "p99_99_ns"), 50);
    assert_int_equal(int_of(json_object_get(ph, "tick"), "count"), 0);
    json_decref(o);
    hs_rt_stats_destroy(&s);
}

static const char *const audit_keys[] = {"kernel_release",    "kernel_version",
                                         "preempt_model",     "isolated",
                                         "nohz_full",         "cmdline_isolcpus",
                                         "cmdline_nohz_full", "cmdline_rcu_nocbs",
                                         "governors",         "preempt_rt",
                                         "sys_realtime",      "isolated_count",
                                         "cpus_online",       "rtprio_cur",
                                         "rtprio_max",        "memlock_cur_bytes",
                                         "memlock_max_bytes", "dma_latency_present",
                                         "dma_latency_us",    "sched_fifo",
                                         "affinity",          "mlockall",
                                         "prefault",          "dma_latency",
                                         "priority",          "cpu",
                                         "rt_capable",        "rt_capable_why"};

static void check_step(const json_t *o, const char *key, const char *state, int err)
{
    const json_t *st = json_object_get(o, key);
    static const char *const keys[] = {"state", "errno"};
    assert_keys(st, keys, 2);
    assert_string_equal(str_of(st, "state"), state);
    assert_int_equal(int_of(st, "errno"), err);
}

static void test_audit(void **state)
{
    (void)state;
    struct hs_rt_audit a;
    memset(&a, 0, sizeof a);
    snprintf(a.kernel_release, sizeof a.kernel_release, "6.1.0-rt \"quoted\" \\ tab\t");
    snprintf(a.kernel_version, sizeof a.kernel_version, "#1 SMP PREEMPT_RT caf\xc3\xa9 \xff");
    snprintf(a.preempt_model, sizeof a.preempt_model, "PREEMPT_RT");
    snprintf(a.isolated, sizeof a.isolated, "2-3");
    snprintf(a.governors, sizeof a.governors, "performance,powersave");
    a.preempt_rt = true;
    a.sys_realtime = 1;
    a.isolated_count = 2;
    a.cpus_online = 4;
    a.rtprio_cur = -1;
    a.rtprio_max = 99;
    a.memlock_cur_bytes = 65536;
    a.memlock_max_bytes = 1LL << 40;
    a.dma_latency_present = true;
    a.dma_latency_us = 2000000000;
    a.report.sched_fifo.state = HS_RT_GRANTED;
    a.report.affinity = (struct hs_rt_step){HS_RT_REFUSED, 22};
    a.report.mlockall.err = 12;
    a.report.priority = 80;
    a.report.cpu = 3;
    for (int with_report = 0; with_report < 2; with_report++) {
        a.have_report = with_report;
        json_t *o = round_trip(hs_report_audit_json(&a), NULL);
        if (with_report) {
            assert_keys(o, audit_keys, 28);
        } else {
            const char *keys[21];
            memcpy(keys, audit_keys, 19 * sizeof keys[0]);
            keys[19] = "rt_capable", keys[20] = "rt_capable_why";
            assert_keys(o, keys, 21);
        }
        /* Escapes survive; a byte that is not UTF-8 turns the string ASCII with '?'. */
        assert_string_equal(str_of(o, "kernel_release"), a.kernel_release);
        assert_string_equal(str_of(o, "kernel_version"), "#1 SMP PREEMPT_RT caf?? ?");
        assert_string_equal(str_of(o, "preempt_model"), "PREEMPT_RT");
        assert_string_equal(str_of(o, "isolated"), "2-3");
        assert_string_equal(str_of(o, "nohz_full"), "");
        assert_string_equal(str_of(o, "cmdline_isolcpus"), "");
        assert_string_equal(str_of(o, "governors"), "performance,powersave");
        assert_true(bool_of(o, "preempt_rt"));
        assert_int_equal(int_of(o, "sys_realtime"), 1);
        assert_int_equal(int_of(o, "isolated_count"), 2);
        assert_int_equal(int_of(o, "cpus_online"), 4);
        assert_int_equal(int_of(o, "rtprio_cur"), -1);
        assert_int_equal(int_of(o, "rtprio_max"), 99);
        assert_int_equal(int_of(o, "memlock_cur_bytes"), 65536);
        assert_int_equal(int_of(o, "memlock_max_bytes"), 1LL << 40);
        assert_true(bool_of(o, "dma_latency_present"));
        assert_int_equal(int_of(o, "dma_latency_us"), 2000000000);
        if (with_report) {
            check_step(o, "sched_fifo", "granted", 0);
            check_step(o, "affinity", "refused", 22);
            check_step(o, "mlockall", "not asked", 12);
            check_step(o, "prefault", "not asked", 0);
            check_step(o, "dma_latency", "not asked", 0);
            assert_int_equal(int_of(o, "priority"), 80);
            assert_int_equal(int_of(o, "cpu"), 3);
            assert_false(bool_of(o, "rt_capable"));
            assert_string_equal(str_of(o, "rt_capable_why"), "mlockall not asked");
        } else {
            assert_true(bool_of(o, "rt_capable"));
            assert_string_equal(str_of(o, "rt_capable_why"), "");
        }
        json_decref(o);
    }
}

static void test_round(void **state)
{
    (void)state;
    assert_true(hs_report_round(110200.94999, 1) == 110200.9);
    assert_true(hs_report_round(0.00390625, 6) == 0.003906);
    assert_true(hs_report_round(-1.23456, 3) == -1.235);
    /* a tick phase's mean over 2000 ticks: 2123100 ns / 2000, whose scaled product is an exact
     * half; scripts/trace-analyze.py prints "%.1f" of the same mean: 1061.5 */
    assert_true(hs_report_round(2123100.0 / 2000.0, 1) == 1061.5);
    assert_true(hs_report_round(1e300, 1) == 1e300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_audit),
        cmocka_unit_test(test_round),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
