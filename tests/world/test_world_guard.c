/* The divergence guard and ODE's report handlers on hand-built worlds: each bound trips on the
 * step where the analytic motion crosses it, with the link, quantity, value, bound and tick; a
 * tripped world is latched; a real ODE internal assertion inside a step comes back as -EFAULT
 * instead of aborting; ODE's messages are counted per world and handed out rate-limited. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <ode/ode.h>

#include "../../src/world/world_internal.h"
#include "hilsim/world.h"
#include "world/model_builders.h"

#define G 9.80665

/* One link hinged about y at the origin, centre of mass 0.5 m below: I about the pivot 0.52. */
static struct hs_model *pendulum(double vlimit)
{
    struct hs_model *m = mb_new("pendulum", 1, 0, 0);
    mb_joint(&m->links[0], HS_JOINT_ROTATE, 0, 1, 0);
    mb_mass(&m->links[0], 2, 0, 0, -0.5, 0.01, 0.02, 0.01);
    m->links[0].uvlimit = vlimit;
    m->links[0].lvlimit = -vlimit;
    return m;
}

static void test_defaults_are_documented_values(void **state)
{
    (void)state;
    struct hs_world_params p;
    hs_world_params_default(&p);
    assert_true(p.guard.max_position_m == 1e4);
    assert_true(p.guard.max_linear_velocity_mps == 1e3);
    assert_true(p.guard.max_angular_velocity_rad_s == 1e4);
    assert_true(p.guard.joint_rate_factor == 10);
}

/* 1e9 N·m on a 0.52 kg·m² pendulum: 1.9e6 rad/s after one 1 ms step, so its centre of mass
 * (0.5 m out) moves at 9.6e5 m/s, far past 1e3 m/s; the linear bound is checked first. */
static void test_huge_torque_trips_on_the_first_step_and_latches(void **state)
{
    (void)state;
    struct hs_model *m = pendulum(INFINITY);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, &s, 1);
    assert_int_equal(hs_world_fault(w)->kind, HS_WORLD_FAULT_NONE);
    hs_world_set_tick(w, 41);
    assert_int_equal(hs_world_step(w), 0);
    hs_world_set_tick(w, 42);
    hs_world_set_joint_effort(w, 0, 0, 1e9);
    assert_int_equal(hs_world_step(w), -ERANGE);
    const struct hs_world_fault *f = hs_world_fault(w);
    assert_int_equal(f->kind, HS_WORLD_FAULT_LINEAR_VELOCITY);
    assert_int_equal(f->body, 0);
    assert_int_equal(f->link, 0);
    assert_int_equal(f->tick, 42);
    assert_int_equal(f->step, 2);
    assert_true(f->limit == 1e3);
    /* d tau dt / I = 0.5 * 1e9 * 1e-3 / 0.52, within 1 % (the hinge row's correction). */
    assert_true(fabs(f->value - 0.5e6 / 0.52) < 0.01 * 0.5e6 / 0.52);
    char line[512];
    hs_world_fault_format(w, f, "arm", line, sizeof line);
    print_message("%s\n", line);
    assert_non_null(strstr(line, "tick 42"));
    assert_non_null(strstr(line, "link L0 of arm"));
    assert_non_null(strstr(line, "linear velocity"));
    assert_non_null(strstr(line, "physics.guard.max_linear_velocity_mps"));
    /* Latched: the world does not step again, whatever is asked of it. */
    double t = hs_world_time(w);
    hs_world_set_joint_effort(w, 0, 0, 0);
    assert_int_equal(hs_world_step(w), -ERANGE);
    assert_true(hs_world_time(w) == t);
    assert_int_equal(hs_world_fault(w)->tick, 42);
    hs_world_destroy(w);
    mb_free(m);
}

/* Free fall: v_n = n g dt (semi-implicit Euler), so a 1 m/s bound is first broken on step 102
 * (101 g dt = 0.9905 m/s, 102 g dt = 1.0003 m/s). */
static void test_linear_velocity_bound_trips_on_the_analytic_step(void **state)
{
    (void)state;
    struct hs_model *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, cube);
    s.root_pose.p[2] = 10;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.guard.max_linear_velocity_mps = 1.0;
    struct hs_world *w = mb_world(&p, &s, 1);
    int r = 0, n = 0;
    while (r == 0 && n < 1000) {
        r = hs_world_step(w);
        n++;
    }
    assert_int_equal(r, -ERANGE);
    assert_int_equal(n, 102);
    const struct hs_world_fault *f = hs_world_fault(w);
    assert_int_equal(f->kind, HS_WORLD_FAULT_LINEAR_VELOCITY);
    assert_true(fabs(f->value - 102 * G * 1e-3) < 1e-9);
    hs_world_destroy(w);
    mb_free(cube);
}

/* A pendulum released at 1.5 rad reaches sqrt(2 m g d (1 - cos 1.5) / I) = 5.9 rad/s at the
 * bottom; with a 1 rad/s velocity limit and factor 2 the joint check trips just past 2 rad/s
 * (the rate grows by at most m g d dt / I = 0.019 rad/s per step). */
static void test_joint_rate_bound_uses_the_model_velocity_limit(void **state)
{
    (void)state;
    struct hs_model *m = pendulum(1.0);
    double q0[1] = {1.5};
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    s.q0 = q0;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.guard.joint_rate_factor = 2;
    struct hs_world *w = mb_world(&p, &s, 1);
    int r = 0;
    for (int n = 0; r == 0 && n < 2000; n++)
        r = hs_world_step(w);
    assert_int_equal(r, -ERANGE);
    const struct hs_world_fault *f = hs_world_fault(w);
    assert_int_equal(f->kind, HS_WORLD_FAULT_JOINT_RATE);
    assert_true(f->limit == 2.0);
    assert_true(fabs(f->value) > 2.0 && fabs(f->value) < 2.0 + 0.02);
    char line[512];
    hs_world_fault_format(w, f, NULL, line, sizeof line);
    print_message("%s\n", line);
    assert_non_null(strstr(line, "link L0 of body 0: joint rate"));
    assert_non_null(strstr(line, "velocity limit 1"));
    hs_world_destroy(w);
    mb_free(m);
}

/* The drive's limit replaces the model's in the bound: a pendulum whose model gives no limit
 * gets a bound once its drive's limit is set (1 rad/s x factor 2, tripped just past 2 rad/s as
 * above), and a model limit set to INFINITY by its drive leaves finiteness only. */
static void test_joint_rate_bound_follows_the_drive_limit(void **state)
{
    (void)state;
    double q0[1] = {1.5};
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.guard.joint_rate_factor = 2;
    for (int unlimited = 0; unlimited < 2; unlimited++) {
        struct hs_model *m = pendulum(unlimited ? 1.0 : 0.0);
        struct hs_world_body_spec s;
        hs_world_spec_default(&s, m);
        s.q0 = q0;
        struct hs_world *w = mb_world(&p, &s, 1);
        assert_int_equal(hs_world_set_joint_rate_limit(w, 0, 0, NAN), 0); /* keeps the model's */
        assert_int_equal(hs_world_set_joint_rate_limit(w, 1, 0, 1.0), -EINVAL);
        assert_int_equal(hs_world_set_joint_rate_limit(w, 0, 0, unlimited ? INFINITY : 1.0), 0);
        int r = 0;
        double fastest = 0;
        for (int n = 0; r == 0 && n < 2000; n++) {
            r = hs_world_step(w);
            fastest = fmax(fastest, fabs(hs_world_joint_velocity(w, 0, 0)));
        }
        if (unlimited) {
            assert_int_equal(r, 0);
            assert_true(fastest > 5.5); /* 5.9 rad/s at the bottom, far past the model's 2 */
        } else {
            assert_int_equal(r, -ERANGE);
            const struct hs_world_fault *f = hs_world_fault(w);
            assert_int_equal(f->kind, HS_WORLD_FAULT_JOINT_RATE);
            assert_true(f->limit == 2.0);
            assert_true(fabs(f->value) > 2.0 && fabs(f->value) < 2.0 + 0.02);
        }
        hs_world_destroy(w);
        mb_free(m);
    }
}

/* A world whose initial state is already out of bounds is refused at create (its warm-up steps
 * trip) with the cause; without warm-up steps its first step trips on position. */
static void test_out_of_bounds_start_is_refused_or_trips_at_once(void **state)
{
    (void)state;
    struct hs_model *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, cube);
    s.root_pose.p[0] = 20;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.guard.max_position_m = 10;
    struct hs_world *w = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_world_create(&p, &s, 1, &w, &d), -ERANGE);
    assert_null(w);
    print_message("%s\n", d.msg);
    assert_non_null(strstr(d.msg, "warm-up"));
    assert_non_null(strstr(d.msg, "physics.guard.max_position_m"));
    p.warmup_steps = 0;
    w = mb_world(&p, &s, 1);
    assert_int_equal(hs_world_step(w), -ERANGE);
    assert_int_equal(hs_world_fault(w)->kind, HS_WORLD_FAULT_POSITION);
    assert_true(fabs(hs_world_fault(w)->value - 20) < 1e-6);
    hs_world_destroy(w);
    mb_free(cube);
}

/* Bounds of INFINITY check finiteness only: a fast but finite body does not trip. */
static void test_infinite_bounds_let_finite_motion_pass(void **state)
{
    (void)state;
    struct hs_model *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, cube);
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.gravity[2] = 0;
    p.guard.max_position_m = p.guard.max_linear_velocity_mps = INFINITY;
    p.guard.max_angular_velocity_rad_s = INFINITY;
    struct hs_world *w = mb_world(&p, &s, 1);
    dBodySetLinearVel(hs_world_ode_body(w, 0, 0), 1e6, 0, 0);
    for (int n = 0; n < 100; n++)
        assert_int_equal(hs_world_step(w), 0);
    hs_world_destroy(w);
    mb_free(cube);
}

/* A body spinning at 1e200 rad/s makes ODE's quaternion update fail its internal assertion
 * (dxNormalize4, measured): ODE would abort the process. The step returns -EFAULT with ODE's
 * text, the world is latched and can still be destroyed. */
static void test_ode_internal_assertion_in_a_step_returns_efault(void **state)
{
    (void)state;
    struct hs_model *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, cube);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, &s, 1);
    hs_world_set_tick(w, 7);
    dBodySetAngularVel(hs_world_ode_body(w, 0, 0), 1e200, 0.7e200, 0);
    assert_int_equal(hs_world_step(w), -EFAULT);
    const struct hs_world_fault *f = hs_world_fault(w);
    assert_int_equal(f->kind, HS_WORLD_FAULT_ODE_INTERNAL);
    assert_int_equal(f->tick, 7);
    char line[512];
    hs_world_fault_format(w, f, NULL, line, sizeof line);
    print_message("%s\n", line);
    assert_non_null(strstr(line, "ODE internal error"));
    assert_non_null(strstr(line, "Normalize4"));
    assert_int_equal(hs_world_step(w), -EFAULT);
    /* ODE keeps working for other worlds after the abandoned step. */
    struct hs_world *w2 = mb_world(&p, &s, 1);
    for (int n = 0; n < 10; n++)
        assert_int_equal(hs_world_step(w2), 0);
    hs_world_destroy(w2);
    hs_world_destroy(w);
    mb_free(cube);
}

/* ODE's error handler (dError) inside a step comes back the same way. */
static void test_ode_error_handler_returns_to_the_step(void **state)
{
    (void)state;
    struct hs_model *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, cube);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, &s, 1);
    hs_world_set_tick(w, 3);
    volatile int jumped = 0;
    if (setjmp(w->step_jmp) == 0) {
        hs__ode_enter_step(w);
        dError(5, "test error %d", 99);
    } else {
        jumped = 1;
    }
    hs__ode_leave_step();
    assert_true(jumped);
    assert_int_equal(w->fault_rc, -EFAULT);
    assert_string_equal(hs_world_fault(w)->ode_text, "error 5: test error 99");
    hs_world_destroy(w);
    mb_free(cube);
}

static void report(struct hs_world *w, const char *fmt, int n)
{
    hs__ode_enter_step(w);
    for (int i = 0; i < n; i++)
        dMessage(3, fmt, -0.0);
    hs__ode_leave_step();
}

/* Messages during a step are counted per distinct message with the tick; the log's rate limit
 * hands each out at its 1st, 10th, 100th, ... report. */
static void test_ode_messages_counted_and_rate_limited(void **state)
{
    (void)state;
    static const char lcp[] = "LCP internal error, s <= 0 (s=%.4e)";
    static const char other[] = "another message %g";
    struct hs_model *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, cube);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, &s, 1);
    struct hs_world_ode_message m;
    assert_int_equal(hs_world_ode_message_due(w, &m), -ENOENT);
    hs_world_set_tick(w, 5);
    report(w, lcp, 1);
    assert_int_equal(hs_world_ode_message_due(w, &m), 0);
    assert_int_equal(m.num, 3);
    assert_int_equal(m.count, 1);
    assert_int_equal(m.first_tick, 5);
    assert_string_equal(m.text, "LCP internal error, s <= 0 (s=-0.0000e+00)");
    assert_int_equal(hs_world_ode_message_due(w, &m), -ENOENT);
    hs_world_set_tick(w, 6);
    report(w, lcp, 8); /* 9 so far: not due */
    assert_int_equal(hs_world_ode_message_due(w, &m), -ENOENT);
    report(w, lcp, 1); /* 10 */
    report(w, other, 1);
    int due = 0;
    while (hs_world_ode_message_due(w, &m) == 0) {
        due++;
        if (m.count == 10)
            assert_int_equal(m.last_tick, 6);
    }
    assert_int_equal(due, 2); /* the 10th LCP report and the first of the other */
    report(w, lcp, 89);       /* 99 */
    assert_int_equal(hs_world_ode_message_due(w, &m), -ENOENT);
    report(w, lcp, 1); /* 100 */
    assert_int_equal(hs_world_ode_message_due(w, &m), 0);
    assert_int_equal(m.count, 100);
    uint64_t others = 1;
    assert_int_equal(hs_world_ode_message_count(w, &others), 2);
    assert_int_equal(others, 0);
    hs_world_destroy(w);
    mb_free(cube);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_documented_values),
        cmocka_unit_test(test_huge_torque_trips_on_the_first_step_and_latches),
        cmocka_unit_test(test_linear_velocity_bound_trips_on_the_analytic_step),
        cmocka_unit_test(test_joint_rate_bound_uses_the_model_velocity_limit),
        cmocka_unit_test(test_joint_rate_bound_follows_the_drive_limit),
        cmocka_unit_test(test_out_of_bounds_start_is_refused_or_trips_at_once),
        cmocka_unit_test(test_infinite_bounds_let_finite_motion_pass),
        cmocka_unit_test(test_ode_internal_assertion_in_a_step_returns_efault),
        cmocka_unit_test(test_ode_error_handler_returns_to_the_step),
        cmocka_unit_test(test_ode_messages_counted_and_rate_limited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
