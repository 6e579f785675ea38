/* report.json's pieces built with jansson against the text the hand-written rt/ formatters
 * (the old report.json writer) produce for the same input, read back with json_loads: equal
 * objects, same keys in the same order. Both rounding rules (mean_ns to 0.1 ns, pct_rel_err to
 * 1e-6) come out as the same doubles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "hilsim/report_json.h"
#include "hilsim/rt/rt_audit.h"
#include "hilsim/rt/rt_stats.h"
#include "hilsim/rt/rt_setup.h"

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("old text does not parse: %d:%d: %s", e.line, e.column, e.text);
    return j;
}

/* json_equal ignores key order; the report promises the old order too. */
static void assert_same(json_t *old, json_t *neu)
{
    assert_non_null(neu);
    assert_true(json_equal(old, neu));
    if (json_is_object(old)) {
        void *a = json_object_iter(old), *b = json_object_iter(neu);
        for (; a && b; a = json_object_iter_next(old, a), b = json_object_iter_next(neu, b)) {
            assert_string_equal(json_object_iter_key(a), json_object_iter_key(b));
            assert_same(json_object_iter_value(a), json_object_iter_value(b));
        }
        assert_null(a);
        assert_null(b);
    }
}

/* Through a dump at the report's precision and back: what a reader of report.json sees. */
static json_t *round_trip(json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(HS_REPORT_JSON_PRECISION));
    assert_non_null(s);
    json_t *back = load(s);
    free(s);
    json_decref(j);
    return back;
}

static void fill(struct hs_rt_stats *s)
{
    assert_int_equal(hs_rt_stats_init(s, 10 * 1000 * 1000 * 1000LL), 0);
    s->period_ns = 1000000;
    s->ticks = 12345;
    s->overruns = 3;
    s->missed_periods = 7;
    /* awkward means: 1/3 ns steps, big and small magnitudes */
    const int64_t xs[] = {41, 42, 42, 70200, 70640, 90160, 1234567, 987654321};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        hs_hist_record(&s->phase[HS_PHASE_PHYSICS], xs[i]);
        hs_hist_record(&s->phase[HS_PHASE_WAKE], xs[i] / 3 + 1);
    }
    hs_hist_record(&s->phase[HS_PHASE_INPUTS], 50);
}

static void test_stats_and_hist(void **state)
{
    (void)state;
    struct hs_rt_stats s;
    fill(&s);
    static char buf[64 * 1024];
    hs_rt_stats_format_json(&s, buf, sizeof buf);
    json_t *old = load(buf);
    json_t *neu = round_trip(hs_report_stats_json(&s));
    assert_same(old, neu);
    json_decref(old);
    json_decref(neu);
    for (int p = 0; p < HS_PHASE_MAX; p++) {
        hs_hist_format_json(&s.phase[p], buf, sizeof buf);
        old = load(buf);
        neu = round_trip(hs_report_hist_json(&s.phase[p]));
        assert_same(old, neu);
        json_decref(old);
        json_decref(neu);
    }
    hs_rt_stats_destroy(&s);
}

static void test_audit(void **state)
{
    (void)state;
    struct hs_rt_audit a;
    memset(&a, 0, sizeof a);
    snprintf(a.kernel_release, sizeof a.kernel_release, "6.1.0-rt \"quoted\" \\ tab\t");
    snprintf(a.preempt_model, sizeof a.preempt_model, "PREEMPT_RT");
    snprintf(a.isolated, sizeof a.isolated, "2-3");
    a.preempt_rt = true;
    a.sys_realtime = 1;
    a.isolated_count = 2;
    a.cpus_online = 4;
    a.rtprio_cur = -1;
    a.memlock_max_bytes = 1LL << 40;
    a.dma_latency_present = true;
    a.dma_latency_us = 2000000000;
    static char buf[16 * 1024];
    for (int with_report = 0; with_report < 2; with_report++) {
        a.have_report = with_report;
        a.report.sched_fifo.state = HS_RT_GRANTED;
        a.report.mlockall.err = 12;
        a.report.priority = 80;
        a.report.cpu = 3;
        hs_rt_audit_format_json(&a, buf, sizeof buf);
        json_t *old = load(buf);
        json_t *neu = round_trip(hs_report_audit_json(&a));
        assert_same(old, neu);
        assert_int_equal(json_object_size(neu), with_report ? 28 : 21);
        json_decref(old);
        json_decref(neu);
    }
}

static void test_round(void **state)
{
    (void)state;
    assert_true(hs_report_round(110200.94999, 1) == 110200.9);
    assert_true(hs_report_round(0.00390625, 6) == 0.003906);
    assert_true(hs_report_round(-1.23456, 3) == -1.235);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_and_hist),
        cmocka_unit_test(test_audit),
        cmocka_unit_test(test_round),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
