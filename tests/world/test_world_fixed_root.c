/* A fixed root is fixed whatever the contact forces, and bodies that start inside one another
 * are reported with their depth. Hand-built models, real ODE worlds. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/world.h"
#include "world/model_builders.h"

static struct hs_world *make(const struct hs_world_params *p, struct hs_world_body_spec *s,
                             uint32_t n)
{
    struct hs_world *w = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_world_create(p, s, n, &w, &d);
    if (r)
        print_error("hs_world_create: %d %s\n", r, d.msg);
    assert_int_equal(r, 0);
    return w;
}

/* A fixed-root base whose box sits 5 cm inside the floor, an arm hinged on it whose box is
 * pressed into the floor too (its joint driven down hard), and a 50 kg cube dropped onto the
 * base: three sources of contact force on the root for 10 s. Before the root was a kinematic
 * body it was held by a soft fixed joint and moved by millimetres to centimetres. */
static void check_fixed_root(enum hs_solver solver)
{
    struct hs_model *robot = mb_new("fixed", 2, 2, 0);
    mb_joint(&robot->links[0], HS_JOINT_FIXED, 0, 0, 0);
    mb_mass(&robot->links[0], 5, 0, 0, 0, 0.1, 0.1, 0.1);
    robot->links[0].origin.p[2] = 0.05; /* box from -0.05 to 0.15: 5 cm inside the floor */
    mb_box(robot, 0, 0.4, 0.4, 0.2, 0, 0, 0);
    mb_joint(&robot->links[1], HS_JOINT_ROTATE, 0, 1, 0);
    mb_mass(&robot->links[1], 2, 0.25, 0, 0, 0.01, 0.05, 0.05);
    robot->links[1].origin.p[0] = 0.25;
    mb_box(robot, 1, 0.5, 0.1, 0.1, 0.25, 0, 0);
    struct hs_model *floor = mb_floor(), *cube = mb_cube(0.2, 50);
    struct hs_world_body_spec s[3];
    hs_world_spec_default(&s[0], robot);
    hs_world_spec_default(&s[1], floor);
    s[1].is_static = true;
    hs_world_spec_default(&s[2], cube);
    s[2].root_pose.p[2] = 0.5;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.solver = solver;
    struct hs_world *w = make(&p, s, 3);

    struct hs_pose before, after;
    hs_world_link_pose(w, 0, 0, &before);
    unsigned max_contacts = 0;
    for (int i = 0; i < 10000; i++) {              /* 10 s at 1 ms */
        hs_world_set_joint_effort(w, 0, 1, 200.0); /* +y turns the arm's tip down */
        hs_world_step(w);
        if (hs_world_contact_count(w) > max_contacts)
            max_contacts = hs_world_contact_count(w);
    }
    hs_world_link_pose(w, 0, 0, &after);
    assert_true(max_contacts > 0); /* the contacts did push */
    /* The arm, driven into the floor it starts in, stays finite and near it. */
    double q = hs_world_joint_position(w, 0, 1);
    assert_true(isfinite(q) && fabs(q) < 0.5);
    /* Exact: a kinematic body with zero velocity is not integrated at all. */
    for (int k = 0; k < 3; k++)
        assert_true(after.p[k] == before.p[k]);
    for (int k = 0; k < 9; k++)
        assert_true(after.R[k] == before.R[k]);
    double v[3], om[3];
    hs_world_link_velocity(w, 0, 0, v, om);
    for (int k = 0; k < 3; k++)
        assert_true(v[k] == 0.0 && om[k] == 0.0);
    /* The cube came to rest on the base, not through it. */
    struct hs_pose c;
    hs_world_link_pose(w, 2, 0, &c);
    assert_true(c.p[2] > 0.15 && c.p[2] < 0.35);
    hs_world_destroy(w);
    mb_free(robot);
    mb_free(floor);
    mb_free(cube);
}

static void test_fixed_root_quick(void **state)
{
    (void)state;
    check_fixed_root(HS_SOLVER_QUICK);
}

static void test_fixed_root_standard(void **state)
{
    (void)state;
    check_fixed_root(HS_SOLVER_STANDARD);
}

/* A cube 30 mm inside the floor, a second cube inside the first by 20 mm, a third 1 mm above
 * the floor; a fixed-root body inside the floor (immovable against immovable: not reported). */
static void test_overlaps_reported_with_depth(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *c1 = mb_cube(0.2, 1), *c2 = mb_cube(0.2, 1),
                    *c3 = mb_cube(0.2, 1), *fixed = mb_new("fixed", 1, 1, 0);
    mb_joint(&fixed->links[0], HS_JOINT_FIXED, 0, 0, 0);
    mb_box(fixed, 0, 0.2, 0.2, 0.2, 0, 0, 0);
    struct hs_world_body_spec s[5];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], c1);
    s[1].root_pose.p[2] = 0.1 - 0.03;
    hs_world_spec_default(&s[2], c2);
    s[2].root_pose.p[2] = 0.07 + 0.2 - 0.02;
    hs_world_spec_default(&s[3], c3);
    s[3].root_pose.p[0] = 2.0;
    s[3].root_pose.p[2] = 0.101;
    hs_world_spec_default(&s[4], fixed);
    s[4].root_pose.p[0] = -2.0;
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = make(&p, s, 5);

    struct hs_world_overlap o[8];
    uint32_t n = 99;
    assert_int_equal(hs_world_overlaps(w, 1e-3, o, 8, &n), 0);
    assert_int_equal(n, 2);
    bool floor_c1 = false, c1_c2 = false;
    for (uint32_t k = 0; k < n; k++) {
        /* ODE's box-box depth is exact for face contact; 1e-6 m allows rounding. */
        if (o[k].body1 == 0 && o[k].body2 == 1) {
            floor_c1 = true;
            assert_true(fabs(o[k].depth_m - 0.03) < 1e-6);
        } else if (o[k].body1 == 1 && o[k].body2 == 2) {
            c1_c2 = true;
            assert_true(fabs(o[k].depth_m - 0.02) < 1e-6);
        }
    }
    assert_true(floor_c1 && c1_c2);
    /* A deeper threshold leaves out the shallower pair; max 1 keeps the count honest. */
    assert_int_equal(hs_world_overlaps(w, 0.025, o, 8, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(o[0].body2, 1);
    assert_int_equal(hs_world_overlaps(w, 1e-3, o, 1, &n), 0);
    assert_true(n >= 2);
    assert_int_equal(hs_world_overlaps(w, -1, o, 8, &n), -EINVAL);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(c1);
    mb_free(c2);
    mb_free(c3);
    mb_free(fixed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_root_quick),
        cmocka_unit_test(test_fixed_root_standard),
        cmocka_unit_test(test_overlaps_reported_with_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
