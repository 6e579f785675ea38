/* The overrun and skip lines a person reads, one per kind per second plus one summary
 * (src/service/rt_log_summary.c), fed records with their CLOCK_MONOTONIC stamps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/service/rt_log_summary.h"

static bool take(struct hs__rt_log_summary *s, uint32_t kind, uint64_t tick, int64_t t_ns,
                 int64_t a, char *line, bool *summary)
{
    struct hs_rt_log_rec rec = {.tick = tick, .time_ns = t_ns, .a = a, .kind = kind};
    return hs__rt_log_summary_take(s, &rec, line, 256, summary);
}

static void test_one_line_per_kind_per_second_then_a_summary(void **state)
{
    (void)state;
    struct hs__rt_log_summary s;
    memset(&s, 0, sizeof s);
    char line[256];
    bool summary;
    const int64_t t0 = 5000000000LL, ms = 1000000;
    /* The first overrun and the first skip of the second are printed as they come. */
    assert_true(take(&s, HS_RT_LOG_OVERRUN, 10, t0, 300000, line, &summary));
    assert_false(summary);
    assert_true(take(&s, HS_RT_LOG_SKIP, 10, t0, 3, line, &summary));
    /* 100 more of each within the second are held back. */
    for (int i = 1; i <= 100; i++) {
        assert_false(
            take(&s, HS_RT_LOG_OVERRUN, 10 + 5 * i, t0 + i * ms, 200000 + i, line, &summary));
        assert_false(take(&s, HS_RT_LOG_SKIP, 10 + 5 * i, t0 + i * ms, 2, line, &summary));
        assert_false(summary);
    }
    /* Other records are never held. */
    assert_true(take(&s, HS_RT_LOG_SAFE_HOLD, 600, t0 + 101 * ms, 0, line, &summary));
    assert_false(summary);
    /* The next second's first overrun closes the window: its summary, then itself. */
    assert_true(take(&s, HS_RT_LOG_OVERRUN, 2000, t0 + 1000 * ms, 150000, line, &summary));
    assert_true(summary);
    assert_string_equal(line, "ticks 15..510: 100 more overruns (worst took 200100 ns) and 100 "
                              "more skips (200 periods) in that second; all are counted in the "
                              "deadline misses and skipped periods at the end");
    /* At the end, what the open second held back. */
    assert_false(take(&s, HS_RT_LOG_OVERRUN, 2001, t0 + 1001 * ms, 170000, line, &summary));
    assert_true(hs__rt_log_summary_flush(&s, line, sizeof line));
    assert_string_equal(line, "ticks 2001..2001: 1 more overrun (worst took 170000 ns) and 0 "
                              "more skips (0 periods) in that second; all are counted in the "
                              "deadline misses and skipped periods at the end");
    assert_false(hs__rt_log_summary_flush(&s, line, sizeof line)); /* nothing held: no line */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_line_per_kind_per_second_then_a_summary)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
