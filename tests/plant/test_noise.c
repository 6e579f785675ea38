#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/noise.h"

static void test_same_seed_same_sequence_other_seed_differs(void **state)
{
    (void)state;
    struct hs_rng a, b, c;
    hs_rng_seed(&a, 42, 0);
    hs_rng_seed(&b, 42, 0);
    hs_rng_seed(&c, 42, 1);
    int same_c = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = hs_rng_next(&a), y = hs_rng_next(&b), z = hs_rng_next(&c);
        assert_true(x == y);
        same_c += x == z;
    }
    assert_true(same_c < 2);
}

static void test_gauss_moments(void **state)
{
    (void)state;
    struct hs_rng r;
    hs_rng_seed(&r, 7, 3);
    const int n = 200000;
    double s = 0, s2 = 0;
    int beyond3 = 0;
    for (int i = 0; i < n; i++) {
        double x = hs_rng_gauss(&r);
        s += x, s2 += x * x;
        beyond3 += fabs(x) > 3;
    }
    double mean = s / n, var = s2 / n - mean * mean;
    /* Standard error of the mean is 1/sqrt(n) = 0.0022; of the variance sqrt(2/n) = 0.0032. */
    assert_true(fabs(mean) < 0.01);
    assert_true(fabs(var - 1) < 0.015);
    /* P(|x| > 3) = 0.0027: expect 540, allow ±5 sigma (±116). */
    assert_true(beyond3 > 424 && beyond3 < 656);
}

static void test_uniform_range(void **state)
{
    (void)state;
    struct hs_rng r;
    hs_rng_seed(&r, 1, 0);
    double lo = 1, hi = 0;
    for (int i = 0; i < 100000; i++) {
        double u = hs_rng_uniform(&r);
        assert_true(u >= 0 && u < 1);
        lo = u < lo ? u : lo, hi = u > hi ? u : hi;
    }
    assert_true(lo < 1e-3 && hi > 1 - 1e-3);
}

static void test_channel_noise_off_is_exact_and_bias_adds(void **state)
{
    (void)state;
    struct hs_channel_params p = {.bias = {0.5, -1, 0}};
    struct hs_channel ch;
    hs_channel_init(&ch, &p, 9, 0);
    double in[3] = {1.25, 2, -3}, out[3];
    assert_false(hs_channel_apply(&ch, in, 0.001, out));
    assert_true(out[0] == 1.75 && out[1] == 1.0 && out[2] == -3.0);
}

static void test_channel_saturation_and_quantum(void **state)
{
    (void)state;
    struct hs_channel_params p = {.range = {10, -1, INFINITY}, .quantum = 0.25};
    struct hs_channel ch;
    hs_channel_init(&ch, &p, 9, 0);
    double in[3] = {12, -1e9, 0.3}, out[3];
    assert_true(hs_channel_apply(&ch, in, 0.001, out));
    assert_true(out[0] == 10 && out[1] == -1e9 && out[2] == 0.25);
    assert_int_equal(ch.saturations, 1);
    in[0] = -10.1;
    assert_true(hs_channel_apply(&ch, in, 0.001, out));
    assert_true(out[0] == -10);
    assert_int_equal(ch.saturations, 2);
}

static void test_channel_white_noise_std_and_walk(void **state)
{
    (void)state;
    struct hs_channel_params p = {.white_std = 0.2};
    struct hs_channel ch;
    hs_channel_init(&ch, &p, 11, 5);
    const int n = 50000;
    double s2 = 0, in[3] = {0, 0, 0}, out[3];
    for (int i = 0; i < n; i++) {
        hs_channel_apply(&ch, in, 0.001, out);
        s2 += out[1] * out[1];
    }
    assert_true(fabs(sqrt(s2 / n) - 0.2) < 0.2 * 0.02);

    /* Bias random walk: after T seconds the walk has std bias_rw_std * sqrt(T); over many
     * independent streams the spread matches within 10 % (200 samples: std error ~5 %). */
    struct hs_channel_params w = {.bias_rw_std = 0.1};
    double v = 0;
    for (int k = 0; k < 200; k++) {
        hs_channel_init(&ch, &w, 3, (uint64_t)k);
        for (int i = 0; i < 1000; i++)
            hs_channel_apply(&ch, in, 0.001, out);
        v += out[0] * out[0];
    }
    assert_true(fabs(sqrt(v / 200) - 0.1) < 0.01);
}

static void test_channel_repeatable_bytes(void **state)
{
    (void)state;
    struct hs_channel_params p = {.white_std = 1, .bias_rw_std = 0.3, .quantum = 1e-3};
    double log1[300], log2[300];
    double *logs[2] = {log1, log2};
    for (int run = 0; run < 2; run++) {
        struct hs_channel ch;
        hs_channel_init(&ch, &p, 1234, 2);
        for (int i = 0; i < 100; i++)
            hs_channel_apply(&ch, (double[3]){1, 2, 3}, 0.001, logs[run] + 3 * i);
    }
    assert_memory_equal(log1, log2, sizeof(log1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_sequence_other_seed_differs),
        cmocka_unit_test(test_gauss_moments),
        cmocka_unit_test(test_uniform_range),
        cmocka_unit_test(test_channel_noise_off_is_exact_and_bias_adds),
        cmocka_unit_test(test_channel_saturation_and_quantum),
        cmocka_unit_test(test_channel_white_noise_std_and_walk),
        cmocka_unit_test(test_channel_repeatable_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
