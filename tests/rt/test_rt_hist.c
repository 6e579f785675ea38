/* The log-linear histogram: its layout (edges contiguous and monotone, widths within the stated
 * relative error), the error bound over the whole range and on known distributions against a
 * sorted-array reference, the percentile definition, merge, reset, overflow; stats formatters.
 * Exact integer computations only, no timing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/rt/rt_hist.h"
#include "hilsim/rt/rt_stats.h"

static int64_t pct(const struct hs_hist *h, uint32_t ppm)
{
    int64_t v = -1;
    assert_int_equal(hs_hist_percentile(h, ppm, &v), 0);
    return v;
}

/* |got - want| <= want * HS_HIST_REL_ERR, in integers (HS_HIST_REL_ERR = 1 / (2 * SUB)). */
static void assert_within_bound(int64_t got, int64_t want)
{
    int64_t diff = got > want ? got - want : want - got;
    if (diff * 2 * HS_HIST_SUB > want) {
        fprintf(stderr, "got %lld for %lld: beyond the relative error bound\n", (long long)got,
                (long long)want);
        fail();
    }
}

static void test_layout_monotone_and_contiguous(void **state)
{
    const uint32_t last = hs_hist_bin_of(HS_HIST_RANGE_MAX_NS - 1);
    assert_int_equal(hs_hist_bin_lo(0), 0);
    assert_int_equal(hs_hist_bin_of(-5), 0);
    for (uint32_t i = 0; i <= last; i++) {
        int64_t lo = hs_hist_bin_lo(i), w = hs_hist_bin_width(i);
        assert_true(w >= 1);
        /* never wider than 1/SUB of the lower edge, except the exact 1 ns bins */
        assert_true(w == 1 || w * HS_HIST_SUB <= lo);
        assert_int_equal(hs_hist_bin_of(lo), i);
        assert_int_equal(hs_hist_bin_of(lo + w - 1), i);
        if (i < last) {
            assert_int_equal(hs_hist_bin_lo(i + 1), lo + w); /* contiguous, increasing */
            assert_true(hs_hist_bin_width(i + 1) >= w);
        }
    }
    assert_true(hs_hist_bin_lo(last) + hs_hist_bin_width(last) == HS_HIST_RANGE_MAX_NS);
}

static void test_relative_error_over_whole_range(void **state)
{
    /* Every bin's edges and their neighbours, 0 ns to 68.7 s: each value's bin reports a value
     * within the bound (values below SUB exactly). */
    const uint32_t last = hs_hist_bin_of(HS_HIST_RANGE_MAX_NS - 1);
    for (uint32_t i = 0; i <= last; i++) {
        int64_t lo = hs_hist_bin_lo(i), hi = lo + hs_hist_bin_width(i) - 1;
        const int64_t probe[] = {lo, lo + 1, (lo + hi) / 2, hi - 1, hi};
        for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++) {
            int64_t v = probe[k] < lo ? lo : probe[k] > hi ? hi : probe[k];
            assert_within_bound(hs_hist_bin_value(hs_hist_bin_of(v)), v);
            if (v < HS_HIST_SUB)
                assert_int_equal(hs_hist_bin_value(hs_hist_bin_of(v)), v);
        }
    }
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* Percentiles of h against the k-th sample of the sorted values (the definition's k). */
static void check_against_reference(const struct hs_hist *h, int64_t *v, size_t n)
{
    qsort(v, n, sizeof v[0], cmp64);
    const uint32_t ppm[] = {1, 100000, 500000, 900000, 990000, 999000, 999900, 1000000};
    for (size_t i = 0; i < sizeof ppm / sizeof ppm[0]; i++) {
        uint64_t k = ((uint64_t)ppm[i] * n + 999999) / 1000000;
        int64_t kth = v[k - 1];
        if (kth >= h->range_ns)
            assert_int_equal(pct(h, ppm[i]), v[n - 1]); /* overflow: the exact max */
        else
            assert_within_bound(pct(h, ppm[i]), kth);
    }
    assert_int_equal(h->min_ns, v[0]);
    assert_int_equal(h->max_ns, v[n - 1]);
    assert_int_equal(pct(h, 1000000), v[n - 1]);
}

static void test_log_uniform_10ns_to_10s(void **state)
{
    enum { N = 200000 };
    static int64_t v[N];
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, 0), 0); /* default range: 10 s */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        /* 10 ns * 2^(30 * u): 10 ns .. ~10.7 s, a few samples above the 10 s range */
        double u = (double)(xorshift(&x) >> 11) / 9007199254740992.0;
        v[i] = (int64_t)(10.0 * __builtin_exp2(30.0 * u));
        hs_hist_record(&h, v[i]);
    }
    assert_true(h.overflow > 0);
    check_against_reference(&h, v, N);
    hs_hist_destroy(&h);
}

static void test_sub_microsecond_phase(void **state)
{
    /* The case the 1 us bins got wrong: a phase of about 40 ns reported p50 = 1 us. */
    enum { N = 10000 };
    static int64_t v[N];
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, 20000000), 0);
    uint64_t x = 7;
    for (int i = 0; i < N; i++) {
        v[i] = 30 + (int64_t)(xorshift(&x) % 25) + (i % 1000 == 0 ? 900 : 0);
        hs_hist_record(&h, v[i]);
    }
    check_against_reference(&h, v, N);
    int64_t p50 = pct(&h, 500000);
    assert_true(p50 >= 30 && p50 < 55); /* below SUB ns the bins are exact */
    char row[256];
    hs_rt_stats_format_row("outputs", &h, row, sizeof row);
    char want[32];
    snprintf(want, sizeof want, " %10.3f ", (double)p50 / 1e3); /* e.g. "0.042" */
    assert_non_null(strstr(row, want));
    hs_hist_destroy(&h);
}

static void test_uniform_with_overflow(void **state)
{
    enum { N = 12345 };
    static int64_t v[N];
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, 50000), 0);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        xorshift(&x);
        v[i] = (int64_t)(x % 40000) + ((x >> 40) % 50 == 0 ? 20000 : 0); /* some overflow */
        hs_hist_record(&h, v[i]);
    }
    check_against_reference(&h, v, N);
    hs_hist_destroy(&h);
}

static void test_ceil_rule(void **state)
{
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, 20000), 0);
    const int64_t small = 1500; /* its bin's midpoint, clamped to the min */
    assert_within_bound(hs_hist_bin_value(hs_hist_bin_of(1500)), 1500);
    /* 9999 samples at 1.5 us and 2 at 7.2 us: N = 10001, p99.99 -> k = ceil(9999.9999) = 10000,
     * one past the small ones, so it must land in 7.2 us's bin. With N = 10000 it must not. */
    for (int i = 0; i < 9999; i++)
        hs_hist_record(&h, 1500);
    hs_hist_record(&h, 7200);
    assert_int_equal(pct(&h, 999900), small); /* N = 10000: k = 9999 */
    hs_hist_record(&h, 7200);
    assert_int_equal(pct(&h, 999900), 7200); /* the bin's midpoint, clamped to the max */
    assert_int_equal(pct(&h, 1000000), 7200);
    hs_hist_reset(&h);
    hs_hist_record(&h, 999);
    hs_hist_record(&h, 1000);
    assert_int_equal(pct(&h, 500000), 999);  /* k = 1: the exact min */
    assert_int_equal(pct(&h, 500001), 1000); /* k = ceil(1.000002) = 2 */
    hs_hist_destroy(&h);
}

static void test_overflow_and_negative(void **state)
{
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, 10000), 0);
    hs_hist_record(&h, -300); /* counted in bin 0, exact min kept */
    hs_hist_record(&h, 9999); /* last value inside the range */
    hs_hist_record(&h, 10000);
    hs_hist_record(&h, 50000);
    assert_int_equal(h.overflow, 2);
    assert_int_equal(h.count, 4);
    assert_int_equal(h.min_ns, -300);
    assert_int_equal(h.bins[0], 1);
    assert_int_equal(h.bins[hs_hist_bin_of(9999)], 1);
    assert_int_equal(pct(&h, 250000), -300); /* k = 1: the exact min */
    assert_within_bound(pct(&h, 500000), 9999);
    assert_int_equal(pct(&h, 750000), 50000); /* in the overflow: the exact max */
    hs_hist_destroy(&h);
}

static void test_merge_and_reset(void **state)
{
    struct hs_hist a, b, all, other;
    assert_int_equal(hs_hist_init(&a, 1000000), 0);
    assert_int_equal(hs_hist_init(&b, 1000000), 0);
    assert_int_equal(hs_hist_init(&all, 1000000), 0);
    assert_int_equal(hs_hist_init(&other, 2000000), 0);
    uint64_t x = 12345;
    for (int i = 0; i < 5000; i++) {
        int64_t v = (int64_t)(xorshift(&x) % 1500000) - 10;
        hs_hist_record(i % 3 ? &a : &b, v);
        hs_hist_record(&all, v);
    }
    assert_int_equal(hs_hist_merge(&a, &b), 0);
    assert_int_equal(a.count, all.count);
    assert_int_equal(a.overflow, all.overflow);
    assert_true(a.overflow > 0);
    assert_int_equal(a.min_ns, all.min_ns);
    assert_int_equal(a.max_ns, all.max_ns);
    assert_int_equal(a.sum_ns, all.sum_ns);
    assert_memory_equal(a.bins, all.bins, all.nbins * sizeof *all.bins);
    assert_int_equal(hs_hist_merge(&a, &other), -EINVAL);
    /* Merging an empty one changes nothing; merging into an empty one copies. */
    hs_hist_reset(&b);
    assert_int_equal(b.count, 0);
    assert_int_equal(b.overflow, 0);
    for (uint32_t i = 0; i < b.nbins; i++)
        assert_int_equal(b.bins[i], 0);
    assert_int_equal(hs_hist_merge(&a, &b), 0);
    assert_int_equal(a.count, all.count);
    assert_int_equal(hs_hist_merge(&b, &all), 0);
    assert_int_equal(b.min_ns, all.min_ns);
    assert_int_equal(pct(&b, 990000), pct(&all, 990000));
    hs_hist_destroy(&a);
    hs_hist_destroy(&b);
    hs_hist_destroy(&all);
    hs_hist_destroy(&other);
}

static void test_errors(void **state)
{
    struct hs_hist h;
    int64_t v = 42;
    assert_int_equal(hs_hist_init(&h, -1), -EINVAL);
    assert_null(h.bins);
    assert_int_equal(hs_hist_init(&h, HS_HIST_RANGE_MAX_NS + 1), -EINVAL);
    hs_hist_destroy(&h);
    hs_hist_destroy(NULL);
    assert_int_equal(hs_hist_init(&h, 1000), 0);
    assert_int_equal(h.nbins, hs_hist_bin_of(999) + 1);
    assert_int_equal(hs_hist_percentile(&h, 500000, &v), -ENODATA);
    hs_hist_record(&h, 10);
    assert_int_equal(hs_hist_percentile(&h, 0, &v), -EINVAL);
    assert_int_equal(hs_hist_percentile(&h, 1000001, &v), -EINVAL);
    assert_int_equal(v, 42); /* untouched on failure */
    hs_hist_destroy(&h);
}

static void test_stats_format(void **state)
{
    struct hs_rt_stats s;
    assert_int_equal(hs_rt_stats_init(&s, 0), 0);
    assert_int_equal(s.phase[HS_PHASE_TICK].range_ns, HS_HIST_DEFAULT_RANGE_NS);
    s.period_ns = 1000000;
    s.ticks = 2;
    /* Three samples in one bin, one far above: p50 (k = 2) is that bin's midpoint, p99 and up
     * (k = 4) the exact max. */
    const int64_t x[] = {70200, 70600, 70640, 90160};
    for (int i = 0; i < 4; i++)
        hs_hist_record(&s.phase[HS_PHASE_PHYSICS], x[i]);
    assert_int_equal(hs_hist_bin_of(70200), hs_hist_bin_of(70640));
    const int64_t p50 = hs_hist_bin_value(hs_hist_bin_of(70600)), p99 = 90160;
    assert_true(p50 != 70600);
    assert_within_bound(p50, 70600);
    char buf[4096], want[512];
    size_t n = hs_rt_stats_format_text(&s, buf, sizeof buf);
    assert_true(n < sizeof buf && n == strlen(buf));
    snprintf(want, sizeof want,
             "physics             4     70.200     75.400 %10.3f %10.3f %10.3f "
             "%10.3f     90.160\n",
             (double)p50 / 1e3, (double)p99 / 1e3, (double)p99 / 1e3, (double)p99 / 1e3);
    assert_non_null(strstr(buf, want));
    assert_non_null(strstr(buf, "\nwake                0\n"));
    assert_non_null(strstr(buf, "within 0.39 %"));
    /* Truncation: NUL-terminated, full length reported. (The JSON of these figures is
     * report_json.c's, checked in tests/report/test_report_json.c.) */
    char small[16];
    assert_int_equal(hs_rt_stats_format_text(&s, small, sizeof small), n);
    assert_int_equal(strlen(small), sizeof small - 1);
    hs_rt_stats_destroy(&s);
    hs_rt_stats_destroy(NULL);
}

static void test_vs_baseline(void **state)
{
    struct hs_hist loop, base, empty;
    assert_int_equal(hs_hist_init(&loop, 100000), 0);
    assert_int_equal(hs_hist_init(&base, 100000), 0);
    assert_int_equal(hs_hist_init(&empty, 100000), 0);
    hs_hist_record(&loop, 20000);
    hs_hist_record(&loop, 40000);
    hs_hist_record(&base, 10000);
    hs_hist_record(&base, 20000);
    char buf[1024];
    assert_true(hs_rt_format_vs_baseline(&loop, &base, buf, sizeof buf) < sizeof buf);
    /* Every figure of the loop is twice the baseline's; the bins keep the ratios within twice
     * the bound (p50: 20 us's bin over 10 us's bin). */
    assert_non_null(strstr(buf,
                           "\nratio                       2.00       2.00       2.00       2.00"
                           "       2.00       2.00       2.00\n"));
    assert_non_null(strstr(buf, "\nbaseline            2     10.000"));
    hs_rt_format_vs_baseline(&loop, &empty, buf, sizeof buf);
    assert_non_null(strstr(buf, "\nratio                \n"));
    hs_hist_destroy(&loop);
    hs_hist_destroy(&base);
    hs_hist_destroy(&empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_monotone_and_contiguous),
        cmocka_unit_test(test_relative_error_over_whole_range),
        cmocka_unit_test(test_log_uniform_10ns_to_10s),
        cmocka_unit_test(test_sub_microsecond_phase),
        cmocka_unit_test(test_uniform_with_overflow),
        cmocka_unit_test(test_ceil_rule),
        cmocka_unit_test(test_overflow_and_negative),
        cmocka_unit_test(test_merge_and_reset),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_stats_format),
        cmocka_unit_test(test_vs_baseline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
