/* Histogram percentiles against the definition on constructed data, and against a sorted-array
 * reference on pseudo-random data; stats formatters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rt/rt_hist.h"
#include "rt/rt_stats.h"

static int64_t pct(const struct hs_hist *h, uint32_t ppm)
{
    int64_t v = -1;
    assert_int_equal(hs_hist_percentile(h, ppm, &v), 0);
    return v;
}

static void test_one_sample_per_bin(void **state)
{
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, 200000, 1000), 0);
    for (int i = 0; i < 100; i++)
        hs_hist_record(&h, i * 1000 + 500);
    /* N = 100: k = 50, 99, ceil(99.9) = 100, ceil(99.99) = 100 */
    assert_int_equal(pct(&h, 500000), 50000);
    assert_int_equal(pct(&h, 990000), 99000);
    assert_int_equal(pct(&h, 999000), 100000);
    assert_int_equal(pct(&h, 999900), 100000);
    assert_int_equal(h.min_ns, 500);
    assert_int_equal(h.max_ns, 99500);
    assert_true(hs_hist_mean_ns(&h) == 50000.0);
    hs_hist_destroy(&h);
}

static void test_bin_edges_and_ceil(void **state)
{
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, 20000, 1000), 0);
    hs_hist_record(&h, 999);  /* bin 0 */
    hs_hist_record(&h, 1000); /* bin 1: lower edge belongs to the bin */
    assert_int_equal(pct(&h, 500000), 1000);
    assert_int_equal(pct(&h, 500001), 2000); /* k = ceil(1.000002) = 2 */
    hs_hist_reset(&h);
    /* 9999 samples at 1.5 us and 2 at 7.2 us: N = 10001, p99.99 -> k = ceil(9999.9999) = 10000,
     * one past the small ones, so it must land in the 7 us bin. With N = 10000 it must not. */
    for (int i = 0; i < 9999; i++)
        hs_hist_record(&h, 1500);
    hs_hist_record(&h, 7200);
    assert_int_equal(pct(&h, 999900), 2000); /* N = 10000: k = 9999 */
    hs_hist_record(&h, 7200);
    assert_int_equal(pct(&h, 999900), 8000);
    assert_int_equal(pct(&h, 1000000), 8000);
    hs_hist_destroy(&h);
}

static void test_overflow_and_negative(void **state)
{
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, 10000, 1000), 0);
    hs_hist_record(&h, -300); /* counted in bin 0, exact min kept */
    hs_hist_record(&h, 50000);
    assert_int_equal(h.overflow, 1);
    assert_int_equal(h.min_ns, -300);
    assert_int_equal(pct(&h, 500000), 1000);
    assert_int_equal(pct(&h, 999900), 50000); /* in the overflow bin: the exact max */
    hs_hist_destroy(&h);
}

static void test_errors(void **state)
{
    struct hs_hist h;
    int64_t v = 42;
    assert_int_equal(hs_hist_init(&h, 1500, 1000), -EINVAL);
    assert_null(h.bins);
    hs_hist_destroy(&h);
    hs_hist_destroy(NULL);
    assert_int_equal(hs_hist_init(&h, 1000, 1000), 0);
    assert_int_equal(hs_hist_percentile(&h, 500000, &v), -ENODATA);
    hs_hist_record(&h, 10);
    assert_int_equal(hs_hist_percentile(&h, 0, &v), -EINVAL);
    assert_int_equal(hs_hist_percentile(&h, 1000001, &v), -EINVAL);
    assert_int_equal(v, 42); /* untouched on failure */
    hs_hist_destroy(&h);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void test_matches_sorted_reference(void **state)
{
    enum { N = 12345 };
    static int64_t v[N];
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, 50000, 1000), 0);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[i] = (int64_t)(x % 40000) + ((x >> 40) % 50 == 0 ? 20000 : 0); /* some overflow */
        hs_hist_record(&h, v[i]);
    }
    qsort(v, N, sizeof v[0], cmp64);
    const uint32_t ppm[] = {1, 500000, 900000, 990000, 999000, 999900, 1000000};
    for (size_t i = 0; i < sizeof ppm / sizeof ppm[0]; i++) {
        uint64_t k = ((uint64_t)ppm[i] * N + 999999) / 1000000;
        int64_t kth = v[k - 1];
        int64_t want = kth >= 50000 ? v[N - 1] : (kth / 1000 + 1) * 1000;
        assert_int_equal(pct(&h, ppm[i]), want);
    }
    assert_int_equal(h.min_ns, v[0]);
    assert_int_equal(h.max_ns, v[N - 1]);
    hs_hist_destroy(&h);
}

static void test_stats_format(void **state)
{
    struct hs_rt_stats s;
    assert_int_equal(hs_rt_stats_init(&s, 0, 0), 0);
    assert_int_equal(s.phase[HS_PHASE_TICK].nbins, HS_HIST_DEFAULT_RANGE_NS / 1000);
    s.period_ns = 1000000;
    s.ticks = 2;
    hs_hist_record(&s.phase[HS_PHASE_PHYSICS], 70500);
    hs_hist_record(&s.phase[HS_PHASE_PHYSICS], 90100);
    char buf[4096];
    size_t n = hs_rt_stats_format_text(&s, buf, sizeof buf);
    assert_true(n < sizeof buf && n == strlen(buf));
    assert_non_null(strstr(buf, "physics             2     70.500     80.300     71.000     "
                                "91.000     91.000     91.000     90.100\n"));
    assert_non_null(strstr(buf, "\nwake                0\n"));
    n = hs_rt_stats_format_json(&s, buf, sizeof buf);
    assert_true(n < sizeof buf);
    assert_non_null(strstr(buf, "\"physics\": {\"count\": 2, \"overflow\": 0, \"min_ns\": 70500, "
                                "\"mean_ns\": 80300.0, \"max_ns\": 90100, \"p50_ns\": 71000, "
                                "\"p99_ns\": 91000"));
    /* The same row and object for a lone histogram (e.g. the baseline). */
    char row[256];
    hs_rt_stats_format_row("baseline", &s.phase[HS_PHASE_PHYSICS], row, sizeof row);
    assert_string_equal(row, "baseline            2     70.500     80.300     71.000     91.000"
                             "     91.000     91.000     90.100\n");
    hs_hist_format_json(&s.phase[HS_PHASE_PHYSICS], row, sizeof row);
    assert_string_equal(row, "{\"count\": 2, \"overflow\": 0, \"min_ns\": 70500, \"mean_ns\": "
                             "80300.0, \"max_ns\": 90100, \"p50_ns\": 71000, \"p99_ns\": 91000, "
                             "\"p99_9_ns\": 91000, \"p99_99_ns\": 91000}");
    /* Truncation: NUL-terminated, full length reported. */
    char small[16];
    assert_int_equal(hs_rt_stats_format_json(&s, small, sizeof small), n);
    assert_int_equal(strlen(small), sizeof small - 1);
    hs_rt_stats_destroy(&s);
    hs_rt_stats_destroy(NULL);
}

static void test_vs_baseline(void **state)
{
    struct hs_hist loop, base, empty;
    assert_int_equal(hs_hist_init(&loop, 100000, 1000), 0);
    assert_int_equal(hs_hist_init(&base, 100000, 1000), 0);
    assert_int_equal(hs_hist_init(&empty, 100000, 1000), 0);
    hs_hist_record(&loop, 20000); /* bins 20 -> p = 21 us */
    hs_hist_record(&loop, 40000);
    hs_hist_record(&base, 10000);
    hs_hist_record(&base, 20000);
    char buf[1024];
    assert_true(hs_rt_format_vs_baseline(&loop, &base, buf, sizeof buf) < sizeof buf);
    /* min 2, mean 30/15 = 2, p50 21/11, p99.. 41/21, max 2 */
    assert_non_null(strstr(buf,
                           "\nratio                       2.00       2.00       1.91       1.95"
                           "       1.95       1.95       2.00\n"));
    assert_non_null(strstr(buf, "\nbaseline            2     10.000"));
    assert_true(hs_rt_format_vs_baseline_json(&loop, &base, buf, sizeof buf) < sizeof buf);
    assert_non_null(strstr(buf, "\"ratio\": {\"min\": 2.0000, \"mean\": 2.0000, \"p50\": 1.9091"));
    hs_rt_format_vs_baseline(&loop, &empty, buf, sizeof buf);
    assert_non_null(strstr(buf, "\nratio                \n"));
    hs_hist_destroy(&loop);
    hs_hist_destroy(&base);
    hs_hist_destroy(&empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_sample_per_bin),
        cmocka_unit_test(test_bin_edges_and_ceil),
        cmocka_unit_test(test_overflow_and_negative),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_matches_sorted_reference),
        cmocka_unit_test(test_stats_format),
        cmocka_unit_test(test_vs_baseline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
