#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hilsim/encoder.h"
#include "hilsim/noise.h"

static struct hs_encoder make(double pulse, double ratio, uint32_t bits, bool absolute,
                              int64_t offset, uint32_t window, double q0)
{
    struct hs_encoder_params p;
    hs_encoder_params_default(pulse, ratio, &p);
    p.bits = bits, p.absolute = absolute, p.zero_offset_counts = offset;
    p.velocity_window = window;
    struct hs_encoder enc;
    assert_int_equal(hs_encoder_init(&enc, &p, q0, 0.001), 0);
    return enc;
}

static void test_ten_motor_revolutions_give_ten_times_pulse(void **state)
{
    (void)state;
    const double N = 100, pulse = 4096;
    struct hs_encoder enc = make(pulse, N, 32, true, 0, 1, 0.0);
    struct hs_encoder_reading r;
    /* Drive there in 1000 ticks, as a joint would, through ±pi of the motor angle many times. */
    for (int i = 1; i <= 1000; i++)
        hs_encoder_update(&enc, 10.0 * 2 * M_PI / N * i / 1000.0, &r);
    assert_int_equal(r.count, 10 * 4096);
    /* ... and exactly back. */
    for (int i = 999; i >= 0; i--)
        hs_encoder_update(&enc, 10.0 * 2 * M_PI / N * i / 1000.0, &r);
    assert_int_equal(r.count, 0);
}

static void test_quantisation_error_at_most_one_count(void **state)
{
    (void)state;
    struct hs_encoder enc = make(2000, 51, 32, true, 0, 1, 0.0);
    struct hs_rng rng;
    hs_rng_seed(&rng, 5, 0);
    double cpu = 2000 * 51 / (2 * M_PI);
    for (int i = 0; i < 10000; i++) {
        double q = (hs_rng_uniform(&rng) - 0.5) * 20.0;
        int64_t c = hs_encoder_quantise(&enc, q);
        assert_true(fabs((double)c - q * cpu) <= 0.5 + 1e-9);
        struct hs_encoder_reading r;
        hs_encoder_update(&enc, q, &r);
        assert_true(fabs(r.position - q) * cpu <= 1.0);
    }
}

static void test_counter_wraps_and_board_decodes_through_it(void **state)
{
    (void)state;
    /* 16-bit counter, 409600 counts per joint turn: wraps ~6 times per joint turn. Run two
     * joint turns forward at constant speed, then three back, crossing q = ±pi and zero. */
    const double N = 100, pulse = 4096, cpu = N * pulse / (2 * M_PI);
    struct hs_encoder enc = make(pulse, N, 16, true, 0, 10, 0.0);
    struct hs_encoder_reading r;
    double q = 0, w = 2.0; /* rad/s: 130 counts per 1 ms tick, below the 32768 half range */
    int wraps = 0;
    uint64_t prev = 0;
    for (int i = 1; i <= 12566; i++) {
        q = w * i * 0.001;
        hs_encoder_update(&enc, q, &r);
        int64_t expect = (int64_t)floor(q * cpu + 0.5);
        assert_int_equal(r.count, (uint64_t)expect & 0xffff);
        assert_true(r.count <= 0xffff);
        wraps += r.count < prev;
        prev = r.count;
        assert_true(fabs(r.position - q) * cpu <= 1.0);
        if (i > 10)
            assert_true(fabs(r.velocity - w) < 1.0 / cpu / 0.010 + 1e-9); /* 1 count / window */
    }
    assert_true(wraps >= 12);
    for (int i = 1; i <= 3 * 6283; i++) {
        q -= w * 0.001;
        hs_encoder_update(&enc, q, &r);
        assert_int_equal(r.count, (uint64_t)(int64_t)floor(q * cpu + 0.5) & 0xffff);
        assert_true(fabs(r.position - q) * cpu <= 1.0);
    }
    assert_true(q < -M_PI);
    assert_true(fabs(r.velocity + w) < 1.0 / cpu / 0.010 + 1e-9);
}

static void test_incremental_starts_at_offset(void **state)
{
    (void)state;
    const double cpu = 1000 / (2 * M_PI);
    struct hs_encoder enc = make(1000, 1, 24, false, 500, 1, 1.0);
    struct hs_encoder_reading r;
    hs_encoder_update(&enc, 1.0, &r);
    assert_int_equal(r.count, 500);
    hs_encoder_update(&enc, 1.0 + 100 / cpu, &r);
    assert_int_equal(r.count, 600);
    hs_encoder_update(&enc, 1.0 - 600 / cpu, &r);
    assert_int_equal(r.count, (uint64_t)(500 - 600) & 0xffffff);

    /* Absolute with an offset reads the offset at joint zero, whatever the start. */
    struct hs_encoder a = make(1000, 1, 24, true, 7, 1, 2.0);
    hs_encoder_update(&a, 0.0, &r);
    assert_int_equal(r.count, 7);
}

static void test_negative_ratio_counts_down_and_bad_params(void **state)
{
    (void)state;
    struct hs_encoder enc = make(100, -2, 32, true, 0, 1, 0.0);
    struct hs_encoder_reading r;
    hs_encoder_update(&enc, M_PI, &r); /* half a joint turn = one motor turn backwards */
    assert_int_equal(r.count, (uint64_t)(-100) & 0xffffffffu);
    assert_true(fabs(r.position - M_PI) < 1e-12);

    struct hs_encoder_params p;
    hs_encoder_params_default(100, 1, &p);
    p.bits = 0;
    assert_int_equal(hs_encoder_init(&enc, &p, 0, 0.001), -22);
    p.bits = 16, p.velocity_window = HS_ENCODER_WINDOW_MAX + 1;
    assert_int_equal(hs_encoder_init(&enc, &p, 0, 0.001), -22);
    p.velocity_window = 1, p.counts_per_motor_rev = 0;
    assert_int_equal(hs_encoder_init(&enc, &p, 0, 0.001), -22);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ten_motor_revolutions_give_ten_times_pulse),
        cmocka_unit_test(test_quantisation_error_at_most_one_count),
        cmocka_unit_test(test_counter_wraps_and_board_decodes_through_it),
        cmocka_unit_test(test_incremental_starts_at_offset),
        cmocka_unit_test(test_negative_ratio_counts_down_and_bad_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
