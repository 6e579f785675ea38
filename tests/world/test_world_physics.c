/* Analytic physics checks of the ODE world on hand-built models. Tolerances are stated at each
 * check and derived from the integrator (semi-implicit Euler) or the requirement. */
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

#define G 9.80665

static void run(struct hs_world *w, int steps)
{
    for (int i = 0; i < steps; i++)
        hs_world_step(w);
}

/* A single link hinged to the world about y at the origin, centre of mass d below the pivot. */
static void check_pendulum(enum hs_solver solver)
{
    const double m = 2, d = 0.5, iyy = 0.02, q0 = 0.02;
    struct hs_model *mod = mb_new("pendulum", 1, 0, 0);
    mb_joint(&mod->links[0], HS_JOINT_ROTATE, 0, 1, 0);
    mb_mass(&mod->links[0], m, 0, 0, -d, 0.01, iyy, 0.01);
    double q0s[1] = {q0};
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, mod);
    s.q0 = q0s;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.solver = solver;
    struct hs_world *w = mb_world(&p, &s, 1);

    /* The initial pose is the model's pose rotated by q0 about +y, and reads back as q0. */
    struct hs_pose pose;
    hs_world_link_pose(w, 0, 0, &pose);
    assert_true(fabs(pose.R[2] - sin(q0)) < 1e-12 && fabs(pose.R[0] - cos(q0)) < 1e-12);
    assert_true(fabs(hs_world_joint_position(w, 0, 0) - q0) < 1e-12);

    const double T = 2 * M_PI * sqrt((iyy + m * d * d) / (m * G * d));
    double prev = hs_world_joint_position(w, 0, 0), first = -1, last = -1;
    int crossings = 0;
    for (int i = 0; i < (int)(6 * T / p.step_s); i++) {
        hs_world_step(w);
        double q = hs_world_joint_position(w, 0, 0);
        /* The read-back angle agrees with the body's orientation (same sign convention). */
        hs_world_link_pose(w, 0, 0, &pose);
        assert_true(fabs(atan2(pose.R[2], pose.R[0]) - q) < 1e-6);
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
    print_message("pendulum (%s) period %.6f s, analytic %.6f s, error %.4f %%\n",
                  solver == HS_SOLVER_QUICK ? "quick" : "standard", measured, T,
                  100 * fabs(measured - T) / T);
    assert_true(fabs(measured - T) / T < 0.005); /* requirement: 0.5 % */
    hs_world_destroy(w);
    mb_free(mod);
}

static void test_compound_pendulum_period(void **state)
{
    (void)state;
    check_pendulum(HS_SOLVER_QUICK);
    check_pendulum(HS_SOLVER_STANDARD);
}

static void test_free_fall(void **state)
{
    (void)state;
    struct hs_model *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, cube);
    s.root_pose.p[2] = 10;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.step_s = 1e-4;
    struct hs_world *w = mb_world(&p, &s, 1);
    run(w, 10000);
    struct hs_pose pose;
    double v[3], om[3];
    hs_world_link_pose(w, 0, 0, &pose);
    hs_world_link_velocity(w, 0, 0, v, om);
    double t = hs_world_time(w);
    assert_true(fabs(t - 1.0) < 1e-9);
    double drop = 10 - pose.p[2];
    print_message("free fall 1 s: drop %.6f m, analytic %.6f m\n", drop, 0.5 * G * t * t);
    /* Semi-implicit Euler overshoots by g t dt / 2 = 0.49 mm at dt = 0.1 ms; requirement 1 mm. */
    assert_true(fabs(drop - 0.5 * G * t * t) < 1e-3);
    assert_true(fabs(v[2] + G * t) < 1e-9); /* velocity is integrated exactly */
    assert_true(fabs(pose.p[0]) < 1e-12 && fabs(pose.p[1]) < 1e-12);
    assert_int_equal(hs_world_contact_count(w), 0);
    hs_world_destroy(w);
    mb_free(cube);
}

static void test_box_rests_on_floor(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], cube);
    s[1].root_pose.p[0] = 0.3;
    s[1].root_pose.p[2] = 0.05;
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, s, 2);
    run(w, 500);
    assert_true(hs_world_contact_count(w) >= 3);
    struct hs_pose a, b;
    hs_world_link_pose(w, 1, 0, &a);
    run(w, 10000);
    hs_world_link_pose(w, 1, 0, &b);
    double drift =
        sqrt(pow(b.p[0] - a.p[0], 2) + pow(b.p[1] - a.p[1], 2) + pow(b.p[2] - a.p[2], 2));
    print_message("box on floor: drift over 10 s %.3g m, height %.5f m\n", drift, b.p[2]);
    assert_true(drift < 1e-3);               /* requirement: 1 mm in 10 s */
    assert_true(fabs(b.p[2] - 0.05) < 2e-3); /* resting, sunk at most ~surface layer + CFM */
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(cube);
}

/* A wheel spinning freely about z (no gravity): the unwrapped angle keeps counting turns. */
static void test_hinge_unwrap(void **state)
{
    (void)state;
    struct hs_model *mod = mb_new("wheel", 1, 0, 0);
    mb_joint(&mod->links[0], HS_JOINT_ROTATE, 0, 0, 1);
    mb_mass(&mod->links[0], 1, 0, 0, 0, 0.01, 0.01, 0.02);
    double q0[1] = {3.0}, dq0[1] = {10.0};
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, mod);
    s.q0 = q0;
    s.dq0 = dq0;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.gravity[2] = 0;
    struct hs_world *w = mb_world(&p, &s, 1);
    assert_true(fabs(hs_world_joint_position(w, 0, 0) - 3.0) < 1e-12);
    double integ = 3.0, prev = 3.0;
    for (int i = 0; i < 3000; i++) {
        hs_world_step(w);
        double q = hs_world_joint_position(w, 0, 0);
        integ += hs_world_joint_velocity(w, 0, 0) * p.step_s;
        assert_true(fabs(q - prev) < 0.1); /* continuous across ±pi */
        prev = q;
    }
    double q = hs_world_joint_position(w, 0, 0);
    print_message("unwrap: q %.6f rad (%.2f turns), integrated rate %.6f\n", q,
                  (q - 3) / (2 * M_PI), integ);
    assert_true(fabs(q - integ) < 1e-3);        /* rate integral, as in notes/ode.md */
    assert_true(fabs(q - (3.0 + 30.0)) < 1e-2); /* constant rate: 10 rad/s for 3 s */
    hs_world_destroy(w);
    mb_free(mod);
}

/* Slider root along z falls freely; a child fixed 0.2 m aside keeps its offset. */
static void test_slider_and_fixed(void **state)
{
    (void)state;
    struct hs_model *mod = mb_new("slider", 2, 0, 0);
    mb_joint(&mod->links[0], HS_JOINT_SLIDE, 0, 0, 1);
    mb_mass(&mod->links[0], 1, 0, 0, 0, 1e-3, 1e-3, 1e-3);
    mod->links[1].origin.p[0] = 0.2;
    mb_mass(&mod->links[1], 0.5, 0.05, 0, 0, 1e-3, 1e-3, 1e-3);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, mod);
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.step_s = 1e-4;
    struct hs_world *w = mb_world(&p, &s, 1);
    run(w, 10000);
    double q = hs_world_joint_position(w, 0, 0), t = hs_world_time(w);
    print_message("slider: q %.6f m, analytic %.6f m\n", q, -0.5 * G * t * t);
    assert_true(fabs(q + 0.5 * G * t * t) < 1e-3); /* as free fall: 0.49 mm integrator error */
    assert_true(fabs(hs_world_joint_velocity(w, 0, 0) + G * t) < 1e-6);
    struct hs_pose a, b;
    hs_world_link_pose(w, 0, 0, &a);
    hs_world_link_pose(w, 0, 1, &b);
    assert_true(fabs(b.p[0] - a.p[0] - 0.2) < 1e-4 && fabs(b.p[2] - a.p[2]) < 1e-4);
    hs_world_destroy(w);
    mb_free(mod);
}

/* Parallelogram four-bar: crank1 (link 1) and crank3 (link 3) hinge on the fixed root about y,
 * the coupler (link 2) hinges on crank1's tip; the extra joint closes coupler end to crank3's
 * tip. Driven by a torque on crank1, the loop must stay closed. */
static struct hs_model *four_bar(enum hs_extra_joint_type type)
{
    struct hs_model *m = mb_new("fourbar", 4, 0, 1);
    struct hs_link *l = m->links;
    mb_joint(&l[0], HS_JOINT_FIXED, 0, 0, 1);
    mb_joint(&l[1], HS_JOINT_ROTATE, 0, 1, 0);
    mb_mass(&l[1], 1, 0, 0, -0.25, 0.0209, 0.0209, 1e-4);
    mb_joint(&l[2], HS_JOINT_ROTATE, 0, 1, 0);
    l[2].origin.p[2] = -0.5;
    mb_mass(&l[2], 0.5, 0.15, 0, 0, 1e-4, 0.00375, 0.00375);
    mb_joint(&l[3], HS_JOINT_ROTATE, 0, 1, 0);
    l[3].parent = 0;
    l[3].origin.p[0] = 0.3;
    mb_mass(&l[3], 1, 0, 0, -0.25, 0.0209, 0.0209, 1e-4);
    struct hs_extra_joint *e = &m->extra_joints[0];
    snprintf(e->name, sizeof e->name, "close");
    e->type = type;
    e->link1 = 2, e->link2 = 3;
    e->pos1[0] = 0.3;
    e->pos2[2] = -0.5;
    e->axis[1] = 1; /* piston: along the hinge axes, as ClosedLinkSample's J1J3 */
    return m;
}

static double check_four_bar(enum hs_extra_joint_type type)
{
    struct hs_model *m = four_bar(type);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, &s, 1);
    hs_world_set_joint_effort(w, 0, 1, 3.0);
    double worst = 0;
    for (int i = 0; i < 2000; i++) {
        if (i == 500)
            hs_world_set_joint_effort(w, 0, 1, 0.0);
        hs_world_step(w);
        struct hs_pose a, b;
        double pa[3], pb[3];
        hs_world_link_pose(w, 0, 2, &a);
        hs_world_link_pose(w, 0, 3, &b);
        hs_pose_apply(&a, m->extra_joints[0].pos1, pa);
        hs_pose_apply(&b, m->extra_joints[0].pos2, pb);
        /* Piston: only the components across the axis (world y) are constrained. */
        double e = hypot(pa[0] - pb[0], pa[2] - pb[2]);
        if (type == HS_EXTRA_BALL)
            e = hypot(e, pa[1] - pb[1]);
        worst = fmax(worst, e);
    }
    double q1 = hs_world_joint_position(w, 0, 1), q2 = hs_world_joint_position(w, 0, 2),
           q3 = hs_world_joint_position(w, 0, 3);
    print_message("four-bar (%s): worst closure error %.3g m, q1 %.3f q2 %.3f q3 %.3f\n",
                  type == HS_EXTRA_BALL ? "ball" : "piston", worst, q1, q2, q3);
    assert_true(worst < 1e-3);         /* loop closed within 1 mm */
    assert_true(fabs(q1) > 0.2);       /* it did move */
    assert_true(fabs(q1 - q3) < 1e-2); /* parallelogram: cranks turn together */
    assert_true(fabs(q1 + q2) < 1e-2); /* the coupler stays parallel to the ground */
    hs_world_destroy(w);
    mb_free(m);
    return q1;
}

static void test_ball_extra_joint_closes_loop(void **state)
{
    (void)state;
    check_four_bar(HS_EXTRA_BALL);
}

static void test_piston_extra_joint_closes_loop(void **state)
{
    (void)state;
    double q_piston = check_four_bar(HS_EXTRA_PISTON), q_ball = check_four_bar(HS_EXTRA_BALL);
    struct hs_model *m = four_bar(HS_EXTRA_PISTON);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, &s, 1);
    double com[3];
    hs_world_link_com(w, 0, 2, com); /* link1 gave up the block at (0.3, 0, 0): com moved away */
    assert_true(com[0] < m->links[2].com[0] - 1e-3);
    hs_world_link_com(w, 0, 3, com);
    assert_memory_equal(com, m->links[3].com, sizeof com);
    hs_world_destroy(w);
    mb_free(m);
    /* The piston's slider block is taken out of link1's mass, so the mechanism moves as with
     * the massless ball joint (without that correction: 0.010 rad apart). */
    assert_true(fabs(q_piston - q_ball) < 4e-3);
}

static void test_armature(void **state)
{
    (void)state;
    const double izz = 0.05, arm = 0.02, tau = 0.5;
    struct hs_model *m = mb_new("rotor", 2, 0, 0);
    mb_joint(&m->links[0], HS_JOINT_FIXED, 0, 0, 1);
    mb_joint(&m->links[1], HS_JOINT_ROTATE, 0, 0, 1);
    mb_mass(&m->links[1], 3, 0, 0, 0.1, 0.04, 0.04, izz);
    double armature[2] = {0, arm};
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    s.armature = armature;
    struct hs_world_params p;
    hs_world_params_default(&p);
    /* In the link's tensor, and as a joint-space rotor row (world_create.c), on both solvers. */
    for (int mode = 0; mode < 3; mode++) {
        p.armature_joint_space = mode > 0;
        p.solver = mode == 2 ? HS_SOLVER_STANDARD : HS_SOLVER_QUICK;
        struct hs_world *w = mb_world(&p, &s, 1);
        hs_world_set_joint_effort(w, 0, 1, tau);
        run(w, 500);
        double alpha = hs_world_joint_velocity(w, 0, 1) / hs_world_time(w);
        double expect = tau / (izz + arm);
        print_message("armature (%s): alpha %.6f rad/s², expected %.6f\n",
                      mode == 0   ? "tensor"
                      : mode == 1 ? "rotor row, quick"
                                  : "rotor row, exact",
                      alpha, expect);
        assert_true(fabs(alpha - expect) / expect < 0.005); /* requirement: 0.5 % */
        hs_world_destroy(w);
    }
    mb_free(m);
}

static void test_contactless_counts_pairs_only(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], cube);
    s[1].root_pose.p[2] = 0.03; /* 2 cm into the floor */
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.contactless = true;
    struct hs_world *w = mb_world(&p, s, 2);
    hs_world_step(w);
    assert_int_equal(hs_world_colliding_pairs(w), 1);
    assert_int_equal(hs_world_contact_count(w), 0);
    run(w, 499);
    struct hs_pose pose;
    hs_world_link_pose(w, 1, 0, &pose);
    assert_true(pose.p[2] < -0.5); /* nothing held it: it fell through */
    hs_world_destroy(w);

    p.contactless = false; /* same scene with contacts: held up, contacts reported */
    w = mb_world(&p, s, 2);
    hs_world_step(w);
    assert_int_equal(hs_world_colliding_pairs(w), 1);
    assert_true(hs_world_contact_count(w) >= 1 && hs_world_contact_count(w) <= p.max_contacts);
    run(w, 499);
    hs_world_link_pose(w, 1, 0, &pose);
    assert_true(pose.p[2] > 0.02);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(cube);
}

/* Chassis on two crawler links whose track boxes touch the floor; axis +y, floor normal +z:
 * a positive track speed drives along y × z = +x. */
static void test_crawler_drives(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *m = mb_crawler();
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_on_floor(floor, m, 0.05, &p);
    hs_world_set_track_speed(w, 1, 1, 0.3);
    hs_world_set_track_speed(w, 1, 2, 0.3);
    run(w, 2000);
    struct hs_pose pose;
    double v[3], om[3];
    hs_world_link_pose(w, 1, 0, &pose);
    hs_world_link_velocity(w, 1, 0, v, om);
    print_message("crawler: x %.3f m, vx %.4f m/s after 2 s at 0.3 m/s\n", pose.p[0], v[0]);
    assert_true(fabs(v[0] - 0.3) < 0.015); /* no slip with mu 1 on flat ground: 5 % */
    assert_true(pose.p[0] > 0.45);
    assert_true(fabs(pose.p[1]) < 0.02);
    hs_world_set_track_speed(w, 1, 1, -0.3);
    hs_world_set_track_speed(w, 1, 2, -0.3);
    run(w, 1000);
    hs_world_link_velocity(w, 1, 0, v, om);
    assert_true(fabs(v[0] + 0.3) < 0.015);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(m);
}

static struct hs_model *one_geom(struct hs_geom g, double mass)
{
    struct hs_model *m = mb_new("shape", 1, 1, 0);
    mb_mass(&m->links[0], mass, 0, 0, 0, 1e-3, 1e-3, 1e-3);
    m->geoms[0] = g;
    m->links[0].geom_count = 1;
    m->ngeoms = 1;
    return m;
}

/* Each primitive rests on the floor at the height its shape and orientation imply: this pins
 * VRML's Y-axis cylinders and cones onto ODE's conventions and the cone mesh's winding. */
static void test_primitives_rest_at_their_height(void **state)
{
    (void)state;
    struct hs_geom sphere = {.type = HS_GEOM_SPHERE, .u.sphere.radius = 0.05};
    struct hs_geom upright = {.type = HS_GEOM_CYLINDER, .u.cylinder = {0.04, 0.2}};
    struct hs_geom lying = upright;
    struct hs_geom cone = {.type = HS_GEOM_CONE, .u.cone = {0.05, 0.1}};
    hs_pose_identity(&sphere.pose);
    hs_pose_identity(&upright.pose);
    hs_pose_identity(&lying.pose);
    hs_pose_identity(&cone.pose);
    /* Rx(+90°) turns the shapes' Y axis onto world Z: upright cylinder, cone apex up. */
    hs_rot_from_axis_angle((double[3]){1, 0, 0}, M_PI / 2, upright.pose.R);
    cone.pose = upright.pose;
    struct hs_model *models[5] = {mb_floor(), one_geom(sphere, 1), one_geom(upright, 1),
                                  one_geom(lying, 1), one_geom(cone, 1)};
    const double expect[5] = {0, 0.05, 0.1, 0.04, 0.05};
    struct hs_world_body_spec s[5];
    for (int i = 0; i < 5; i++) {
        hs_world_spec_default(&s[i], models[i]);
        s[i].root_pose.p[0] = 0.5 * i;
        s[i].root_pose.p[2] = i ? expect[i] + 0.01 : 0.0;
    }
    s[0].is_static = true;
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_world(&p, s, 5);
    run(w, 1000);
    for (uint32_t i = 1; i < 5; i++) {
        struct hs_pose pose;
        hs_world_link_pose(w, i, 0, &pose);
        print_message("shape %u rests at %.4f m (expected %.4f)\n", i, pose.p[2], expect[i]);
        assert_true(fabs(pose.p[2] - expect[i]) < 2e-3); /* ~ surface layer + soft contact */
    }
    hs_world_destroy(w);
    for (int i = 0; i < 5; i++)
        mb_free(models[i]);
}

/* Root and link 2 overlap but are not jointed to each other (link 1 is between them). Link 2
 * is fixed to link 1, a hinge, so it rides on link 1's ODE body (merged): that body's hinge
 * to the root must not hide the pair. */
static void test_self_collision_switch(void **state)
{
    (void)state;
    struct hs_model *m = mb_new("self", 3, 2, 0);
    mb_joint(&m->links[1], HS_JOINT_ROTATE, 0, 0, 1);
    mb_box(m, 0, 0.2, 0.2, 0.2, 0, 0, 0);
    m->links[2].origin.p[0] = 0.15;
    mb_box(m, 2, 0.2, 0.2, 0.2, 0, 0, 0);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.gravity[2] = 0;
    p.contactless = true;
    struct hs_world *w = mb_world(&p, &s, 1);
    hs_world_step(w);
    assert_int_equal(hs_world_colliding_pairs(w), 0);
    hs_world_destroy(w);
    p.self_collision = true;
    w = mb_world(&p, &s, 1);
    hs_world_step(w);
    assert_int_equal(hs_world_colliding_pairs(w), 1);
    hs_world_destroy(w);
    mb_free(m);
}

/* Distinct robots still meet after the per-body broadphase bits (world_create.c): a row of
 * cubes, each overlapping the next, with a fixed-root body among them; with more dynamic bodies
 * than category bits every pair is still seen. */
static void test_bodies_collide_with_each_other(void **state)
{
    (void)state;
    enum { NMAX = 70 };
    struct hs_model *cube = mb_cube(0.1, 1.0), *fixed = mb_new("post", 2, 1, 0);
    fixed->links[0].joint_type = HS_JOINT_FIXED;
    mb_joint(&fixed->links[1], HS_JOINT_ROTATE, 0, 0, 1);
    mb_box(fixed, 1, 0.1, 0.1, 0.1, 0, 0, 0);
    struct hs_world_body_spec s[NMAX];
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.gravity[2] = 0;
    p.contactless = true;
    const uint32_t counts[] = {3, NMAX};
    for (int c = 0; c < 2; c++) {
        uint32_t n = counts[c];
        for (uint32_t i = 0; i < n; i++) {
            hs_world_spec_default(&s[i], i == 1 ? fixed : cube);
            s[i].root_pose.p[0] = 0.09 * i;
        }
        struct hs_world *w = mb_world(&p, s, n);
        hs_world_step(w);
        print_message("%u bodies in a row: %u colliding pairs\n", n, hs_world_colliding_pairs(w));
        assert_int_equal(hs_world_colliding_pairs(w), n - 1);
        hs_world_destroy(w);
    }
    mb_free(cube);
    mb_free(fixed);
}

/* Two worlds built from the same specs step bit for bit alike, whatever ran in between. */
static void test_repeatable(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], cube);
    s[1].root_pose.p[2] = 0.2;
    hs_rot_from_axis_angle((double[3]){1, 1, 0}, 0.4, s[1].root_pose.R);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_pose a, b;
    struct hs_world *w = mb_world(&p, s, 2);
    run(w, 700);
    hs_world_link_pose(w, 1, 0, &a);
    hs_world_destroy(w);
    w = mb_world(&p, s, 2);
    run(w, 700);
    hs_world_link_pose(w, 1, 0, &b);
    hs_world_destroy(w);
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(a.p[2] < 0.1); /* it fell and tumbled onto the floor */
    mb_free(floor);
    mb_free(cube);
}

/* quick_same_shuffle: quick-step's row shuffle (at its 8th iteration, from ODE's global
 * generator) is the same every step, so another world stepping in between, which draws from that
 * generator, changes nothing; with ODE's own shuffle it does (a tumbling cube on the floor, the
 * default 12 iterations). */
static void test_same_shuffle_ignores_other_worlds(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], cube);
    s[1].root_pose.p[2] = 0.2;
    hs_rot_from_axis_angle((double[3]){1, 1, 0}, 0.4, s[1].root_pose.R);
    for (int same = 0; same <= 1; same++) {
        struct hs_world_params p;
        hs_world_params_default(&p);
        assert_true(p.quick_iterations > 8 && !p.quick_same_shuffle);
        p.quick_same_shuffle = same;
        struct hs_world *w1 = mb_world(&p, s, 2), *w2 = mb_world(&p, s, 2),
                        *other = mb_world(&p, s, 2);
        for (int i = 0; i < 700; i++) {
            assert_int_equal(hs_world_step(w1), 0);
            assert_int_equal(hs_world_step(other), 0);
            assert_int_equal(hs_world_step(w2), 0);
        }
        struct hs_pose a, b;
        hs_world_link_pose(w1, 1, 0, &a);
        hs_world_link_pose(w2, 1, 0, &b);
        assert_true(a.p[2] < 0.1); /* it fell and tumbled onto the floor */
        bool equal = memcmp(&a, &b, sizeof a) == 0;
        print_message("%s: the two worlds end %s\n", same ? "same shuffle" : "ODE's shuffle",
                      equal ? "bit for bit alike" : "apart");
        assert_true(equal == (same == 1));
        hs_world_destroy(w1);
        hs_world_destroy(w2);
        hs_world_destroy(other);
    }
    mb_free(floor);
    mb_free(cube);
}

static void test_bad_input_is_reported(void **state)
{
    (void)state;
    struct hs_model *m = mb_cube(0.1, 1);
    m->path = "cube.wrl";
    m->links[0].source_line = 12;
    m->geoms[0].u.box.size[1] = -1;
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = (struct hs_world *)&p; /* must stay untouched */
    struct hs_diag d;
    assert_int_equal(hs_world_create(&p, &s, 1, &w, &d), -EINVAL);
    assert_ptr_equal(w, (struct hs_world *)&p);
    char buf[600];
    hs_diag_format(&d, buf, sizeof buf);
    assert_non_null(strstr(buf, "cube.wrl:12"));
    assert_non_null(strstr(buf, "Box size"));

    m->geoms[0].u.box.size[1] = 0.1;
    p.step_s = 0;
    assert_int_equal(hs_world_create(&p, &s, 1, &w, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "step_s"));
    hs_world_params_default(&p);
    m->links[0].mass = 0; /* falls back rather than failing */
    assert_int_equal(hs_world_create(&p, &s, 1, &w, &d), 0);
    assert_int_equal(hs_world_mass_fixups(w), 1);
    hs_world_destroy(w);
    hs_world_destroy(NULL);
    mb_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compound_pendulum_period),
        cmocka_unit_test(test_same_shuffle_ignores_other_worlds),
        cmocka_unit_test(test_free_fall),
        cmocka_unit_test(test_box_rests_on_floor),
        cmocka_unit_test(test_hinge_unwrap),
        cmocka_unit_test(test_slider_and_fixed),
        cmocka_unit_test(test_ball_extra_joint_closes_loop),
        cmocka_unit_test(test_piston_extra_joint_closes_loop),
        cmocka_unit_test(test_armature),
        cmocka_unit_test(test_contactless_counts_pairs_only),
        cmocka_unit_test(test_crawler_drives),
        cmocka_unit_test(test_primitives_rest_at_their_height),
        cmocka_unit_test(test_self_collision_switch),
        cmocka_unit_test(test_bodies_collide_with_each_other),
        cmocka_unit_test(test_repeatable),
        cmocka_unit_test(test_bad_input_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
