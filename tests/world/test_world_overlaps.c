/* Bodies that start inside one another are reported with their depth, and a fixed root is
 * scenery that no contact can move. Hand-built models, real ODE worlds. */
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

/* A cube 30 mm inside the floor, a second cube inside the first by 20 mm, a third 1 mm above
 * the floor; a fixed-root body 100 mm inside the floor: static like the floor, nothing pushes
 * it out, so it is not an overlap to report. */
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
    struct hs_world *w = mb_world(&p, s, 5);

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
    assert_true(o[0].body2 != 2);
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

/* A fixed-root arm (base box, one hinge link sticking out along x) with a 200 kg cube dropped
 * on its base and a 50 kg one on its link: the base is exactly where it was put, bit for bit,
 * after 2 s of contact (a fixed joint to the world gave way by millimetres); the hinge, joined
 * to the world, turns under the load as a hinge should; no contact is made between the base
 * and its own link, which meet at the joint, even with self collision on. */
static void test_fixed_root_never_moves(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *arm = mb_new("arm", 2, 2, 0), *big = mb_cube(0.3, 200),
                    *small = mb_cube(0.1, 50);
    mb_joint(&arm->links[0], HS_JOINT_FIXED, 0, 0, 0);
    mb_box(arm, 0, 0.4, 0.4, 0.4, 0, 0, 0);
    arm->links[1].origin.p[0] = 0.2; /* the hinge on the base's +x face, about y */
    mb_joint(&arm->links[1], HS_JOINT_ROTATE, 0, 1, 0);
    mb_mass(&arm->links[1], 2.0, 0.3, 0, 0, 0.01, 0.06, 0.06);
    mb_box(arm, 1, 0.6, 0.1, 0.1, 0.3, 0, 0);
    struct hs_world_body_spec s[4];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], arm);
    s[1].root_pose.p[2] = 1.0;
    hs_world_spec_default(&s[2], big);
    s[2].root_pose.p[2] = 1.0 + 0.2 + 0.15 + 0.05;
    hs_world_spec_default(&s[3], small);
    s[3].root_pose.p[0] = 0.45;
    s[3].root_pose.p[2] = 1.0 + 0.05 + 0.05 + 0.02;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.self_collision = true;
    struct hs_world *w = mb_world(&p, s, 4);
    assert_null(hs_world_ode_body(w, 1, 0));
    assert_null(hs_world_ode_joint(w, 1, 0));
    assert_false(hs_world_body_is_static(w, 1));
    struct hs_pose before, after;
    hs_world_link_pose(w, 1, 0, &before);
    double q_max = 0;
    for (int i = 0; i < 2000; i++) {
        assert_int_equal(hs_world_step(w), 0);
        q_max = fmax(q_max, fabs(hs_world_joint_position(w, 1, 1)));
    }
    hs_world_link_pose(w, 1, 0, &after);
    assert_memory_equal(&before, &after, sizeof before);
    double v[3], om[3];
    hs_world_link_velocity(w, 1, 0, v, om);
    assert_true(v[0] == 0 && v[1] == 0 && v[2] == 0 && om[0] == 0 && om[1] == 0 && om[2] == 0);
    /* The big cube rests on the base's top (z = 1.2 m): its centre 0.15 m above, within the
     * soft contact's sinkage (2 mm). */
    struct hs_pose c;
    hs_world_link_pose(w, 2, 0, &c);
    assert_true(fabs(c.p[2] - 1.35) < 2e-3);
    /* The free hinge swings down under its own weight and the 50 kg cube. */
    assert_true(q_max > 0.5);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(arm);
    mb_free(big);
    mb_free(small);
}

/* rest_on_static raises a robot whose geoms start inside the floor to 1 mm above it, a free
 * one or one bolted to the world (before the first step; never after), and leaves alone one
 * that did not ask. */
static void test_rest_on_static(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *c1 = mb_cube(0.2, 1), *c2 = mb_cube(0.2, 1),
                    *fixed = mb_new("fixed", 1, 1, 0);
    mb_joint(&fixed->links[0], HS_JOINT_FIXED, 0, 0, 0);
    mb_box(fixed, 0, 0.2, 0.2, 0.2, 0, 0, 0);
    struct hs_world_body_spec s[4];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], c1); /* centre at z = 0: half of it inside the floor */
    s[1].rest_on_static = true;
    hs_world_spec_default(&s[2], c2);
    s[2].root_pose.p[0] = 2.0; /* the same placement, not asked to rest */
    hs_world_spec_default(&s[3], fixed);
    s[3].root_pose.p[0] = -2.0;
    s[3].rest_on_static = true;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.warmup_steps = 0; /* the placement itself, before any step */
    struct hs_world *w = mb_world(&p, s, 4);
    struct hs_pose a, b, c;
    hs_world_link_pose(w, 1, 0, &a);
    hs_world_link_pose(w, 2, 0, &b);
    hs_world_link_pose(w, 3, 0, &c);
    assert_true(fabs(a.p[2] - (0.1 + 1e-3)) < 1e-9);
    assert_true(a.p[0] == 0.0 && a.p[1] == 0.0);
    assert_true(b.p[2] == 0.0);
    assert_true(fabs(c.p[2] - (0.1 + 1e-3)) < 1e-9);
    assert_true(c.p[0] == -2.0);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(c1);
    mb_free(c2);
    mb_free(fixed);
}

/* A fixed-root arm lying in the floor (OpenHRP's ClosedLinkSample in the quick look) is raised
 * with its hinge: the hinge is anchored where its link now is (no joint error), the link's
 * geometry clears the floor, and from then on the root never moves while the link swings. */
static void test_rest_on_static_fixed_root_arm(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *arm = mb_new("arm", 2, 2, 0);
    mb_joint(&arm->links[0], HS_JOINT_FIXED, 0, 0, 0);
    mb_box(arm, 0, 0.2, 0.2, 0.2, 0, 0, 0);
    arm->links[1].origin.p[0] = 0.1; /* on the base's +x face, about x: it can swing freely */
    mb_joint(&arm->links[1], HS_JOINT_ROTATE, 1, 0, 0);
    mb_mass(&arm->links[1], 1.0, 0.2, 0.1, 0, 0.004, 0.004, 0.004);
    mb_box(arm, 1, 0.1, 0.3, 0.1, 0.2, 0.1, 0); /* reaches 0.05 m below the root */
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], arm);
    s[1].rest_on_static = true;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.warmup_steps = 0;
    struct hs_world *w = mb_world(&p, s, 2);
    struct hs_pose root, link, after;
    hs_world_link_pose(w, 1, 0, &root);
    hs_world_link_pose(w, 1, 1, &link);
    assert_true(fabs(root.p[2] - (0.1 + 1e-3)) < 1e-9); /* the lower of base and link: 0.1 */
    assert_true(fabs(link.p[2] - root.p[2]) < 1e-9 && fabs(link.p[0] - 0.1) < 1e-9);
    dJointID j = (dJointID)hs_world_ode_joint(w, 1, 1);
    dVector3 a1, a2;
    dJointGetHingeAnchor(j, a1);
    dJointGetHingeAnchor2(j, a2);
    assert_true(fabs(a1[2] - root.p[2]) < 1e-9 && fabs(a2[2] - a1[2]) < 1e-9);
    assert_true(fabs(hs_world_joint_position(w, 1, 1)) < 1e-12);
    for (int i = 0; i < 500; i++)
        assert_int_equal(hs_world_step(w), 0);
    hs_world_link_pose(w, 1, 0, &after);
    assert_memory_equal(&root, &after, sizeof root);
    hs_world_link_pose(w, 1, 1, &link);
    assert_true(fabs(link.p[2] - root.p[2]) < 1e-4 && fabs(link.p[0] - 0.1) < 1e-4);
    /* It swung down until its far edge met the floor (about 0.2 rad). */
    assert_true(fabs(hs_world_joint_position(w, 1, 1)) > 0.1);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(arm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlaps_reported_with_depth),
        cmocka_unit_test(test_fixed_root_never_moves),
        cmocka_unit_test(test_rest_on_static),
        cmocka_unit_test(test_rest_on_static_fixed_root_arm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
