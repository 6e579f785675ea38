/* The analytic checks of tests/world/test_world_physics.c repeated on URDF models loaded from
 * tests/model/urdf: a compound pendulum's period and a free fall. Same tolerances and reasons. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/model.h"
#include "hilsim/world.h"
#include "world/model_builders.h"
#include "model/urdf_fixture.h"

#define G 9.80665

/* pendulum.urdf: m = 2 kg, d = 0.5 m, iyy = 0.02 kg·m², hinged to the world about y. */
static void check_pendulum(enum hs_solver solver)
{
    const double m = 2, d = 0.5, iyy = 0.02, q0 = 0.02;
    struct hs_model *mod = urdf_load("pendulum.urdf");
    double q0s[1] = {q0};
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, mod);
    s.q0 = q0s;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.solver = solver;
    struct hs_world *w = mb_world(&p, &s, 1);
    const double T = 2 * M_PI * sqrt((iyy + m * d * d) / (m * G * d));
    double prev = hs_world_joint_position(w, 0, 0), first = -1, last = -1;
    int crossings = 0;
    for (int i = 0; i < (int)(6 * T / p.step_s); i++) {
        hs_world_step(w);
        double q = hs_world_joint_position(w, 0, 0);
        if (prev > 0 && q <= 0) {
            double t = hs_world_time(w) - p.step_s * q / (q - prev);
            if (first < 0)
                first = t;
            last = t;
            crossings++;
        }
        prev = q;
    }
    assert_true(crossings >= 5);
    double measured = (last - first) / (crossings - 1);
    print_message("URDF pendulum (%s) period %.6f s, analytic %.6f s, error %.4f %%\n",
                  solver == HS_SOLVER_QUICK ? "quick" : "standard", measured, T,
                  100 * fabs(measured - T) / T);
    assert_true(fabs(measured - T) / T < 0.005); /* requirement: 0.5 % */
    hs_world_destroy(w);
    hs_model_free(mod);
}

static void test_pendulum_period(void **state)
{
    (void)state;
    check_pendulum(HS_SOLVER_QUICK);
    check_pendulum(HS_SOLVER_STANDARD);
}

static void test_free_fall(void **state)
{
    (void)state;
    struct hs_model *cube = urdf_load("cube.urdf");
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, cube);
    s.root_pose.p[2] = 10;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.step_s = 1e-4;
    struct hs_world *w = mb_world(&p, &s, 1);
    for (int i = 0; i < 10000; i++)
        hs_world_step(w);
    struct hs_pose pose;
    double v[3], om[3];
    hs_world_link_pose(w, 0, 0, &pose);
    hs_world_link_velocity(w, 0, 0, v, om);
    double t = hs_world_time(w);
    assert_true(fabs(t - 1.0) < 1e-9);
    double drop = 10 - pose.p[2];
    print_message("URDF free fall 1 s: drop %.6f m, analytic %.6f m\n", drop, 0.5 * G * t * t);
    /* Semi-implicit Euler overshoots by g t dt / 2 = 0.49 mm at dt = 0.1 ms; requirement 1 mm. */
    assert_true(fabs(drop - 0.5 * G * t * t) < 1e-3);
    assert_true(fabs(v[2] + G * t) < 1e-9);
    assert_int_equal(hs_world_contact_count(w), 0);
    hs_world_destroy(w);
    hs_model_free(cube);
}

/* full.urdf builds a world (every geometry kind but mesh, fixed, slide, rotate joints). */
static void test_full_builds(void **state)
{
    (void)state;
    struct hs_model *mod = urdf_load("full.urdf");
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, mod);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, &s, 1);
    for (int i = 0; i < 1000; i++)
        hs_world_step(w);
    struct hs_pose pose;
    hs_world_link_pose(w, 0, 0, &pose);
    assert_true(isfinite(pose.p[2]) && pose.p[2] < 0); /* it floats, so it falls */
    hs_world_destroy(w);
    hs_model_free(mod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pendulum_period),
        cmocka_unit_test(test_free_fall),
        cmocka_unit_test(test_full_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
