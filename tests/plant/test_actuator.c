#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hilsim/actuator.h"
#include "hilsim/model.h"

static struct hs_actuator_params params(void)
{
    struct hs_link link = {
        .gear_ratio = 100,
        .gear_efficiency = 0.9,
        .rotor_inertia = 1e-5,
        .torque_const = 0.05,
        .ulimit = 2,
        .llimit = -2,
        .uvlimit = 5,
        .lvlimit = -5,
    };
    struct hs_actuator_params p;
    hs_actuator_params_default(&link, &p);
    return p;
}

static void test_defaults_come_from_the_joint(void **state)
{
    (void)state;
    struct hs_actuator_params p = params();
    const char *field = NULL;
    assert_int_equal(hs_actuator_params_check(&p, &field), 0);
    assert_true(p.gear_ratio == 100 && p.gear_efficiency == 0.9 && p.torque_const == 0.05);
    assert_true(p.q_max == 2 && p.q_min == -2 && p.dq_max == 5 && p.dq_min == -5);
    p.gear_efficiency = 1.5;
    assert_int_equal(hs_actuator_params_check(&p, &field), -22);
    assert_string_equal(field, "gear_efficiency");
}

static void test_modes(void **state)
{
    (void)state;
    struct hs_actuator_params p = params();
    struct hs_actuator_output o;
    struct hs_joint_command c = {.mode = HS_JOINT_MODE_TORQUE, .tau_ff = 3, .seq = 1};
    hs_actuator_compute(&p, &c, 0, 0, &o);
    assert_true(o.effort == 3 && o.ode_fmax == 0);
    assert_true(fabs(o.current - 3 / (0.05 * 100 * 0.9)) < 1e-12);

    c = (struct hs_joint_command){.mode = HS_JOINT_MODE_CURRENT, .current = 2, .seq = 1};
    hs_actuator_compute(&p, &c, 0, 0, &o);
    assert_true(fabs(o.effort - 2 * 0.05 * 100 * 0.9) < 1e-12);
    assert_true(fabs(o.current - 2) < 1e-12);

    c = (struct hs_joint_command){
        .mode = HS_JOINT_MODE_POSITION, .q = 1, .dq = 0.5, .kp = 10, .kd = 2, .tau_ff = 0.25};
    hs_actuator_compute(&p, &c, 0.8, 0.1, &o);
    assert_true(fabs(o.effort - (10 * 0.2 + 2 * 0.4 + 0.25)) < 1e-12);

    p.velocity_gain = 4;
    c = (struct hs_joint_command){.mode = HS_JOINT_MODE_VELOCITY, .velocity = 1, .tau_ff = 0.5};
    hs_actuator_compute(&p, &c, 0, 0.5, &o);
    assert_true(fabs(o.effort - (4 * 0.5 + 0.5)) < 1e-12);

    p.velocity_loop = HS_VELOCITY_LOOP_ODE_MOTOR;
    p.torque_max = 7;
    hs_actuator_compute(&p, &c, 0, 0.5, &o);
    assert_true(o.ode_motor_drives && o.ode_vel == 1 && o.ode_fmax == 7);

    c = (struct hs_joint_command){.mode = HS_JOINT_MODE_BRAKE};
    p.brake_torque = 20, p.coulomb = 1;
    hs_actuator_compute(&p, &c, 0, 0.5, &o);
    assert_true(o.ode_motor_drives && o.ode_vel == 0 && o.ode_fmax == 21 && o.effort == 0);

    c = (struct hs_joint_command){.mode = HS_JOINT_MODE_DISABLED, .tau_ff = 5};
    p.viscous = 0.5;
    hs_actuator_compute(&p, &c, 0, 2, &o);
    assert_true(o.effort == -1.0 && o.ode_fmax == 1 && o.ode_vel == 0 && !o.ode_motor_drives);

    c = (struct hs_joint_command){.mode = 99, .tau_ff = 5};
    hs_actuator_compute(&p, &c, 0, 0, &o);
    assert_true(o.motor_torque == 0);
}

/* Finite commands whose torque law overflows or cancels into NaN are invalid: every term is
 * checked, the output is zero torque with the invalid flag, and valid neighbours are not. */
static void test_non_finite_terms_make_an_invalid_command(void **state)
{
    (void)state;
    struct hs_actuator_params p = params();
    p.velocity_gain = 1e300;
    struct hs_actuator_output o;
    static const struct hs_joint_command bad[] = {
        /* kp (q* - q) = 1e200 * 1e200 overflows: the case of issue 11 */
        {.mode = HS_JOINT_MODE_POSITION, .q = 1e200, .kp = 1e200, .seq = 1},
        /* kd (dq* - dq) overflows while kp's term is fine */
        {.mode = HS_JOINT_MODE_POSITION, .q = 0.1, .kp = 10, .dq = 1e300, .kd = 1e300, .seq = 1},
        /* each term finite, their sum not: 1.5e308 + 1.5e308 */
        {.mode = HS_JOINT_MODE_POSITION, .q = 1.5e308, .kp = 1, .tau_ff = 1.5e308, .seq = 1},
        /* +inf + -inf: NaN from two overflowing terms of opposite sign */
        {.mode = HS_JOINT_MODE_POSITION, .q = 1e300, .kp = 1e300, .dq = -1e300, .kd = 1e300},
        {.mode = HS_JOINT_MODE_TORQUE, .tau_ff = INFINITY},
        {.mode = HS_JOINT_MODE_TORQUE, .tau_ff = NAN},
        {.mode = HS_JOINT_MODE_CURRENT, .current = 1e308},   /* i Kt N = 5e308 overflows */
        {.mode = HS_JOINT_MODE_VELOCITY, .velocity = 1e300}, /* gain 1e300 times it */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        hs_actuator_compute(&p, &bad[k], 0, 0, &o);
        if (!o.invalid_command)
            fail_msg("command %zu was taken as valid", k);
        assert_true(o.motor_torque == 0 && o.effort == 0 && o.current == 0);
        assert_false(o.ode_motor_drives);
    }
    /* Large but finite products are valid (and saturate where a limit says so). */
    struct hs_joint_command ok = {.mode = HS_JOINT_MODE_POSITION, .q = 1e100, .kp = 1e100};
    hs_actuator_compute(&p, &ok, 0, 0, &o);
    assert_false(o.invalid_command);
    assert_true(o.motor_torque == 1e200);
}

/* The safe behaviour as a command: brake, hold at hold_q with the hold gains, or free-wheel. */
static void test_safe_command(void **state)
{
    (void)state;
    struct hs_actuator_params p = params();
    struct hs_actuator_state st = {.hold_q = 0.7};
    struct hs_joint_command c = {.mode = HS_JOINT_MODE_TORQUE, .seq = 9, .rx_time_ns = 5}, s;
    p.safe = HS_SAFE_HOLD, p.hold_kp = 3, p.hold_kd = 0.5;
    const struct hs_joint_command *x = hs_actuator_safe_command(&p, &st, &c, &s);
    assert_ptr_equal(x, &s);
    assert_true(s.mode == HS_JOINT_MODE_POSITION && s.q == 0.7 && s.kp == 3 && s.kd == 0.5);
    assert_true(s.seq == 9 && s.rx_time_ns == 5 && s.tau_ff == 0);
    p.safe = HS_SAFE_BRAKE;
    hs_actuator_safe_command(&p, &st, &c, &s);
    assert_int_equal(s.mode, HS_JOINT_MODE_BRAKE);
    p.safe = HS_SAFE_ZERO_TORQUE;
    hs_actuator_safe_command(&p, &st, &c, &s);
    assert_int_equal(s.mode, HS_JOINT_MODE_DISABLED);
}

static void test_saturation_torque_and_current(void **state)
{
    (void)state;
    struct hs_actuator_params p = params();
    struct hs_actuator_output o;
    p.torque_max = 10;
    struct hs_joint_command c = {.mode = HS_JOINT_MODE_TORQUE, .tau_ff = -12};
    hs_actuator_compute(&p, &c, 0, 0, &o);
    assert_true(o.motor_torque == -10 && o.torque_saturated && !o.current_saturated);
    p.current_max = 1; /* 4.5 N·m at the joint */
    hs_actuator_compute(&p, &c, 0, 0, &o);
    assert_true(fabs(o.motor_torque + 4.5) < 1e-12 && o.current_saturated);
    assert_true(fabs(o.current + 1) < 1e-12);
    c.tau_ff = 4;
    hs_actuator_compute(&p, &c, 0, 0, &o);
    assert_true(o.motor_torque == 4 && !o.current_saturated && !o.torque_saturated);
}

static void test_velocity_limit(void **state)
{
    (void)state;
    struct hs_actuator_params p = params();
    struct hs_actuator_output o;
    struct hs_joint_command c = {.mode = HS_JOINT_MODE_TORQUE, .tau_ff = 3};
    hs_actuator_compute(&p, &c, 0, 5.5, &o);
    assert_true(o.motor_torque == 0 && o.velocity_limited);
    c.tau_ff = -3; /* braking back is allowed */
    hs_actuator_compute(&p, &c, 0, 5.5, &o);
    assert_true(o.motor_torque == -3 && !o.velocity_limited);
    p.velocity_limit_gain = 10;
    c.tau_ff = 8; /* already braking harder than the limiter asks */
    hs_actuator_compute(&p, &c, 0, -5.5, &o);
    assert_true(o.motor_torque == 8 && !o.velocity_limited);
    c.tau_ff = -3;
    hs_actuator_compute(&p, &c, 0, -5.5, &o);
    assert_true(fabs(o.motor_torque - 5) < 1e-12 && o.velocity_limited);
    /* The limiter's cap (10 · 0.5 = 5 N·m of braking) above what the torque limit leaves of
     * the command anyway: the applied torque is the saturation's, not the limit's. */
    p.torque_max = 2;
    c.tau_ff = -3;
    hs_actuator_compute(&p, &c, 0, 5.5, &o);
    assert_true(o.motor_torque == -2 && o.torque_saturated && !o.velocity_limited);
    c.tau_ff = 3; /* driving further out: cut to -2 (braking) instead of +2 */
    hs_actuator_compute(&p, &c, 0, 5.5, &o);
    assert_true(o.motor_torque == -2 && o.velocity_limited);
}

/* The speed-limit row (velocity_limit_reach > 0): a torque that could carry the joint past its
 * limit this tick becomes an ODE motor row at the limit bounded by that torque; far from the
 * limit, or past it (the explicit limiter brakes it back), the torque stays explicit. */
static void test_speed_limit_row(void **state)
{
    (void)state;
    struct hs_actuator_params p = params();
    p.velocity_limit_reach = 0.01; /* rad/s per N·m in one step */
    p.coulomb = 0.5;
    struct hs_actuator_output o;
    struct hs_joint_command c = {.mode = HS_JOINT_MODE_TORQUE, .tau_ff = 100};
    hs_actuator_compute(&p, &c, 0, 0, &o); /* 0 + 100 · 0.01 = 1 < 5: explicit */
    assert_true(!o.ode_motor_drives && o.effort == 100 && o.ode_fmax == 0.5 && !o.velocity_limited);
    hs_actuator_compute(&p, &c, 0, 4.5, &o); /* 4.5 + 1 >= 5: the row */
    assert_true(o.ode_motor_drives && o.ode_vel == 5 && o.ode_fmax == 100 && o.speed_limit_row);
    assert_true(o.motor_torque == 100);
    /* Engaged is not limiting: only a row that applied less than the command held the joint. */
    assert_true(!o.velocity_limited);
    assert_false(hs_actuator_speed_row_held(&o, 100.0));
    assert_false(hs_actuator_speed_row_held(&o, -100.0 * (1 - 1e-9)));
    assert_true(hs_actuator_speed_row_held(&o, 99.0));
    assert_true(hs_actuator_speed_row_held(&o, 0.0));
    assert_true(fabs(o.effort - -0.5) < 1e-12); /* friction explicit for the tick */
    c.tau_ff = -100;                            /* towards the other limit, from -4.5 */
    hs_actuator_compute(&p, &c, 0, -4.5, &o);
    assert_true(o.ode_motor_drives && o.ode_vel == -5 && o.ode_fmax == 100);
    hs_actuator_compute(&p, &c, 0, 4.5, &o); /* braking from near the upper limit: explicit */
    assert_true(!o.ode_motor_drives && o.effort == -100);
    c.tau_ff = 100; /* past the limit: no row (it would hold the joint at the limit) */
    hs_actuator_compute(&p, &c, 0, 5.5, &o);
    assert_true(!o.ode_motor_drives && o.motor_torque == 0 && o.velocity_limited);
    /* The ODE velocity loop's set point stays inside the limits. */
    p.velocity_loop = HS_VELOCITY_LOOP_ODE_MOTOR;
    c = (struct hs_joint_command){.mode = HS_JOINT_MODE_VELOCITY, .velocity = 50};
    hs_actuator_compute(&p, &c, 0, 0, &o);
    assert_true(o.ode_motor_drives && o.ode_vel == 5);
    /* Off by default: the unit-level actuator keeps only the explicit limiter. */
    assert_true(params().velocity_limit_reach == 0);
}

static void test_watchdog_fires_on_first_tick_past_timeout(void **state)
{
    (void)state;
    struct hs_actuator_params p = params();
    p.timeout_ns = 5000000;
    p.safe = HS_SAFE_HOLD, p.hold_kp = 50, p.hold_kd = 1;
    struct hs_actuator_state st = {0};
    struct hs_joint_command scratch;
    struct hs_joint_command c = {.mode = HS_JOINT_MODE_TORQUE, .tau_ff = 1, .rx_time_ns = 0};
    /* No command yet: safe behaviour, not counted. */
    const struct hs_joint_command *x = hs_actuator_select(&p, &st, &c, 1000, true, 0.3, &scratch);
    assert_true(x == &scratch && st.stale && st.stale_events == 0 && st.stale_ticks == 0);

    c.seq = 1, c.rx_time_ns = 1000000;
    for (int64_t t = 1000000; t <= 20000000; t += 1000000) {
        x = hs_actuator_select(&p, &st, &c, t, true, 0.25, &scratch);
        bool expect_stale = t - c.rx_time_ns > p.timeout_ns;
        assert_int_equal(st.stale, expect_stale);
        assert_true((x == &c) == !expect_stale);
        if (t == 6000000)
            assert_true(!st.stale);
        if (t == 7000000)
            assert_true(st.stale && st.stale_events == 1);
    }
    assert_int_equal(st.stale_events, 1);
    assert_int_equal(st.stale_ticks, 14); /* 7 .. 20 ms */
    assert_true(x->mode == HS_JOINT_MODE_POSITION && x->q == 0.25 && x->kp == 50);

    /* Substeps within a tick do not count extra ticks. */
    hs_actuator_select(&p, &st, &c, 20000000, false, 0.25, &scratch);
    assert_int_equal(st.stale_ticks, 14);

    /* A fresh command ends it; the next timeout is a second event. */
    c.seq = 2, c.rx_time_ns = 21000000;
    x = hs_actuator_select(&p, &st, &c, 21000000, true, 0.1, &scratch);
    assert_true(x == &c && !st.stale);
    x = hs_actuator_select(&p, &st, &c, 26000001, true, 0.1, &scratch);
    assert_true(st.stale && st.stale_events == 2);

    p.safe = HS_SAFE_BRAKE;
    x = hs_actuator_select(&p, &st, &c, 27000000, true, 0.1, &scratch);
    assert_int_equal(x->mode, HS_JOINT_MODE_BRAKE);
    p.safe = HS_SAFE_ZERO_TORQUE;
    x = hs_actuator_select(&p, &st, &c, 28000000, true, 0.1, &scratch);
    assert_int_equal(x->mode, HS_JOINT_MODE_DISABLED);

    /* timeout 0: no watchdog. */
    p.timeout_ns = 0;
    x = hs_actuator_select(&p, &st, &c, INT64_MAX / 2, true, 0.1, &scratch);
    assert_true(x == &c && !st.stale);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_come_from_the_joint),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_non_finite_terms_make_an_invalid_command),
        cmocka_unit_test(test_safe_command),
        cmocka_unit_test(test_saturation_torque_and_current),
        cmocka_unit_test(test_velocity_limit),
        cmocka_unit_test(test_speed_limit_row),
        cmocka_unit_test(test_watchdog_fires_on_first_tick_past_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
