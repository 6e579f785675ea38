/* The guard's floor check on real ODE worlds (the floor: a 10 x 10 x 0.2 m box, top at z = 0):
 * - a small fast cube that jumps the floor between two steps trips it on the step the analytic
 *   fall gives, with the link, its depth and the tick;
 * - a contact far too soft for its load lets a cube sink through: tripped; the default contact
 *   holds the same cube for seconds: never tripped;
 * - no scenery, or floor_depth_m .inf, or a contactless world: no check; an explicit
 *   floor_z_m checks even without scenery;
 * - a ramp is no flat floor: a cube resting low on it is far under its top, and not tripped. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <ode/ode.h>

#include "hilsim/world.h"
#include "world/model_builders.h"

#define G 9.80665
#define H 1e-3

/* Steps until a fault or max steps, with the tick numbered as the step; the step count. */
static int run(struct hs_world *w, int max, int *ret_rc)
{
    int n = 0, r = 0;
    while (r == 0 && n < max) {
        hs_world_set_tick(w, (uint64_t)n + 1000);
        r = hs_world_step(w);
        n++;
    }
    *ret_rc = r;
    return n;
}

struct scene {
    struct hs_model *floor, *cube;
    struct hs_world_body_spec s[2];
};

/* The floor (body 0, static) and a cube of side a and mass m with its centre at z (body 1). */
static void scene(struct scene *sc, double a, double m, double z)
{
    sc->floor = mb_floor();
    sc->cube = mb_cube(a, m);
    hs_world_spec_default(&sc->s[0], sc->floor);
    sc->s[0].is_static = true;
    hs_world_spec_default(&sc->s[1], sc->cube);
    sc->s[1].root_pose.p[2] = z;
}

static void scene_free(struct scene *sc)
{
    mb_free(sc->floor);
    mb_free(sc->cube);
}

/* A 2 cm cube at z = 0.35 thrown down at 300 m/s moves 0.3 m per step: at the collisions of
 * steps 1 and 2 it is above the floor (z = 0.35, then 0.05), after step 2 it is under it
 * (z = -0.25, top 0.24 m down, the floor's bottom is at 0.2): it never touched. It is under
 * floor - (reach + 0.05) from step 2 on (reach: the half-diagonal, 0.01 sqrt 3), so with the
 * default 0.01 s = 10 steps the check trips on step 11, at z_11 = 0.35 - 300·11·h - g h² 66
 * (semi-implicit Euler). */
static void test_tunnelling_cube_trips_on_the_analytic_step(void **state)
{
    (void)state;
    struct scene sc;
    scene(&sc, 0.02, 0.01, 0.35);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, sc.s, 2);
    dBodySetLinearVel(hs_world_ode_body(w, 1, 0), 0, 0, -300);
    int rc, n = run(w, 1000, &rc);
    assert_int_equal(rc, -ERANGE);
    assert_int_equal(n, 11);
    const struct hs_world_fault *f = hs_world_fault(w);
    assert_int_equal(f->kind, HS_WORLD_FAULT_BELOW_FLOOR);
    assert_int_equal(f->body, 1);
    assert_int_equal(f->link, 0);
    assert_int_equal(f->tick, 1010);
    assert_int_equal(f->step, 11);
    double z11 = 0.35 - 300 * 11 * H - G * H * H * 66;
    assert_true(fabs(f->value - -z11) < 1e-9);
    assert_true(fabs(f->limit - (0.01 * sqrt(3) + 0.05)) < 1e-12);
    char line[512];
    hs_world_fault_format(w, f, "cube", line, sizeof line);
    print_message("%s\n", line);
    assert_non_null(strstr(line, "tick 1010"));
    assert_non_null(strstr(line, "link L0 of cube"));
    assert_non_null(strstr(line, "2.95 m below the floor"));
    assert_non_null(strstr(line, "physics.guard.floor_depth_m"));
    /* Latched like every guard trip. */
    assert_int_equal(hs_world_step(w), -ERANGE);
    hs_world_destroy(w);

    /* floor_depth_m .inf: no floor check; the cube falls on, nothing else trips for 1 s. */
    p.guard.floor_depth_m = INFINITY;
    w = mb_world(&p, sc.s, 2);
    dBodySetLinearVel(hs_world_ode_body(w, 1, 0), 0, 0, -300);
    n = run(w, 1000, &rc);
    assert_int_equal(rc, 0);
    hs_world_destroy(w);
    scene_free(&sc);
}

/* A 1 kg, 10 cm cube resting on the floor. The default contact (2e6 N/m) holds it within a
 * millimetre for 3 s: never tripped. A contact of 10 N/m without damping would have to sink
 * 0.98 m to carry its weight, five times the floor's thickness: it sinks through and trips. */
static void test_soft_contact_lets_a_cube_through_and_trips(void **state)
{
    (void)state;
    struct scene sc;
    scene(&sc, 0.1, 1.0, 0.05);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, sc.s, 2);
    int rc, n = run(w, 3000, &rc);
    assert_int_equal(rc, 0);
    struct hs_pose pose;
    hs_world_link_pose(w, 1, 0, &pose);
    assert_true(fabs(pose.p[2] - 0.05) < 1e-3);
    hs_world_destroy(w);

    p.contact_stiffness_n_m = 10;
    p.contact_damping_n_s_m = 0;
    w = mb_world(&p, sc.s, 2);
    n = run(w, 5000, &rc);
    assert_int_equal(rc, -ERANGE);
    const struct hs_world_fault *f = hs_world_fault(w);
    assert_int_equal(f->kind, HS_WORLD_FAULT_BELOW_FLOOR);
    assert_int_equal(f->body, 1);
    assert_true(f->value > f->limit);
    assert_true(fabs(f->limit - (0.05 * sqrt(3) + 0.05)) < 1e-12);
    hs_world_link_pose(w, 1, 0, &pose);
    assert_true(fabs(-pose.p[2] - f->value) < 1e-12);
    char line[512];
    hs_world_fault_format(w, f, NULL, line, sizeof line);
    print_message("after %d steps: %s\n", n, line);
    hs_world_destroy(w);
    scene_free(&sc);
}

/* A cube dropped in a world without scenery falls for 1 s (4.9 m) with no floor check; with
 * floor_z_m 0 it goes under that floor at once: its centre is deeper than reach + 0.05 from
 * the step where 0.5 - g h² n(n+1)/2 < -(0.05 sqrt 3 + 0.05), n = 360, and trips 9 steps
 * later. A contactless world has scenery but no check: its floor holds nothing up. */
static void test_no_scenery_no_check_unless_a_floor_is_given(void **state)
{
    (void)state;
    struct scene sc;
    scene(&sc, 0.1, 1.0, 0.5);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, &sc.s[1], 1);
    int rc, n = run(w, 1000, &rc);
    assert_int_equal(rc, 0);
    hs_world_destroy(w);

    double allowed = 0.05 * sqrt(3) + 0.05;
    int first = 1;
    while (0.5 - G * H * H * first * (first + 1) / 2 >= -allowed)
        first++;
    assert_int_equal(first, 360);
    p.guard.floor_z_m = 0;
    w = mb_world(&p, &sc.s[1], 1);
    n = run(w, 1000, &rc);
    assert_int_equal(rc, -ERANGE);
    assert_int_equal(n, first + 9);
    assert_int_equal(hs_world_fault(w)->kind, HS_WORLD_FAULT_BELOW_FLOOR);
    hs_world_destroy(w);

    p.guard.floor_z_m = NAN;
    p.contactless = true;
    w = mb_world(&p, sc.s, 2);
    n = run(w, 1000, &rc);
    assert_int_equal(rc, 0);
    hs_world_destroy(w);
    scene_free(&sc);
}

/* The scenery's floor is its lowest surface: a ramp alone (a 4 x 4 x 0.1 m box tilted 0.3 rad
 * about x: its top runs from z = -0.54 to +0.64 m) is no flat floor, so it offers the bottom of
 * its bounding box (-0.64 m). A cube dropped on its lower half rests there (mu 1 > tan 0.3),
 * its centre far under the ramp's highest point, and never trips. */
static void test_cube_resting_low_on_a_ramp_never_trips(void **state)
{
    (void)state;
    struct hs_model *ramp = mb_new("ramp", 1, 1, 0), *cube = mb_cube(0.1, 1.0);
    ramp->links[0].joint_type = HS_JOINT_FIXED;
    mb_box(ramp, 0, 4, 4, 0.1, 0, 0, 0);
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], ramp);
    s[0].is_static = true;
    double c = cos(0.3), sn = sin(0.3);
    s[0].root_pose.R[4] = c, s[0].root_pose.R[5] = -sn;
    s[0].root_pose.R[7] = sn, s[0].root_pose.R[8] = c;
    hs_world_spec_default(&s[1], cube);
    s[1].root_pose.p[1] = -1.5 * c - 0.11 * sn; /* 1 cm above the ramp's top at y = -1.5 */
    s[1].root_pose.p[2] = -1.5 * sn + 0.11 * c;
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, s, 2);
    int rc;
    run(w, 2000, &rc);
    assert_int_equal(rc, 0);
    struct hs_pose pose;
    hs_world_link_pose(w, 1, 0, &pose);
    print_message("cube at rest on the ramp: z = %.3f m\n", pose.p[2]);
    /* At rest on the ramp, more than reach + 0.05 m under the ramp's top (a floor taken at the
     * top would have tripped), and over its lowest point. */
    assert_true(pose.p[2] < 2 * sn + 0.05 * c - (0.05 * sqrt(3) + 0.05));
    assert_true(pose.p[2] > -2 * sn);
    hs_world_destroy(w);
    mb_free(ramp);
    mb_free(cube);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tunnelling_cube_trips_on_the_analytic_step),
        cmocka_unit_test(test_soft_contact_lets_a_cube_through_and_trips),
        cmocka_unit_test(test_no_scenery_no_check_unless_a_floor_is_given),
        cmocka_unit_test(test_cube_resting_low_on_a_ramp_never_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
