/* Adaptive quick-step iterations (src/world/world_iterations.c), the default: a calm scene (a
 * cube resting on the floor, a chain swinging slowly in the air) runs quick_iterations_min (8),
 * each step of a scene whose contacts move or stack, or whose jointed bodies turn fast, runs
 * quick_iterations (12); a push raises the count at once and it falls back only after the scene
 * has been calm for a while; a fixed count (quick_iterations_min 0) stays fixed; and two runs of
 * the same inputs step bit for bit alike through the changing counts. */
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
#define A 0.1 /* cube side, m */

/* This step's quick-step iterations: the health's mean over exactly one step. */
static double step_counted(struct hs_world *w)
{
    struct hs_world_health_summary h;
    hs_world_health_reset(w);
    assert_int_equal(hs_world_step(w), 0);
    hs_world_health_summary(w, &h);
    return h.quick_iterations_mean;
}

static double mean_over(struct hs_world *w, int steps)
{
    struct hs_world_health_summary h;
    hs_world_health_reset(w);
    for (int i = 0; i < steps; i++)
        assert_int_equal(hs_world_step(w), 0);
    hs_world_health_summary(w, &h);
    return h.quick_iterations_mean;
}

/* floor + n cubes of 1 kg; stacked: each on the one below, else side by side. */
static struct hs_world *cubes(const struct hs_world_params *p, struct hs_model *floor,
                              struct hs_model *cube, uint32_t n, bool stacked)
{
    struct hs_world_body_spec s[4];
    assert_true(n <= 3);
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    for (uint32_t i = 1; i <= n; i++) {
        hs_world_spec_default(&s[i], cube);
        s[i].root_pose.p[0] = stacked ? 0 : 0.3 * i;
        s[i].root_pose.p[2] = stacked ? A / 2 + (A + 0.0005) * (i - 1) : A / 2;
    }
    return mb_world(p, s, n + 1);
}

static void test_calm_and_busy_scenes(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *cube = mb_cube(A, 1.0);
    struct hs_world_params p;
    hs_world_params_default(&p);
    assert_int_equal(p.quick_iterations, 12);
    assert_int_equal(p.quick_iterations_min, 8);

    /* A cube at rest on the floor: the calm count, carrying its weight. */
    struct hs_world *w = cubes(&p, floor, cube, 1, false);
    for (int i = 0; i < 800; i++) /* it settles, then is at rest for 500 steps */
        assert_int_equal(hs_world_step(w), 0);
    double rest = mean_over(w, 200);
    struct hs_world_contact c[16];
    uint32_t n = hs_world_contacts(w, c, 16);
    double fz = 0;
    for (uint32_t k = 0; k < n; k++)
        fz += c[k].force_n[2];
    print_message("cube at rest: %.2f iterations, floor force %.5f N for %.5f N\n", rest, fz, G);
    assert_true(rest == 8.0);
    assert_true(fabs(fz - G) < 1e-3 * G);
    hs_world_destroy(w);

    /* The same with the count fixed: every step runs the full count. */
    struct hs_world_params fixed = p;
    fixed.quick_iterations_min = 0;
    w = cubes(&fixed, floor, cube, 1, false);
    for (int i = 0; i < 300; i++)
        assert_int_equal(hs_world_step(w), 0);
    assert_true(mean_over(w, 200) == 12.0);
    hs_world_destroy(w);

    /* Two cubes stacked: resting on each other keeps the full count (a fixed row order let a
     * tower of cubes come apart). */
    w = cubes(&p, floor, cube, 2, true);
    for (int i = 0; i < 300; i++)
        assert_int_equal(hs_world_step(w), 0);
    double stack = mean_over(w, 200);
    struct hs_pose top;
    hs_world_link_pose(w, 2, 0, &top);
    print_message("two cubes stacked: %.2f iterations, top at %.4f m\n", stack, top.p[2]);
    assert_true(stack == 12.0);
    assert_true(fabs(top.p[2] - 1.5 * A) < 2e-3); /* still on the lower one */
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(cube);
}

/* A crawler driving on the floor (test_world_physics's): its contacts move, so every step runs
 * the full count, as fixed-count 12 did; it goes straight. */
static void test_driving_crawler_runs_the_full_count(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *m = mb_crawler();
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_on_floor(floor, m, 0.05, &p);
    hs_world_set_track_speed(w, 1, 1, 0.3);
    hs_world_set_track_speed(w, 1, 2, 0.3);
    double it = mean_over(w, 2000);
    struct hs_pose pose;
    hs_world_link_pose(w, 1, 0, &pose);
    print_message("crawler: %.2f iterations, x %.3f m, y %.4f m after 2 s\n", it, pose.p[0],
                  pose.p[1]);
    assert_true(it == 12.0);
    assert_true(pose.p[0] > 0.45 && fabs(pose.p[1]) < 0.02);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(m);
}

/* A flat slab (0.2 x 0.2 x 0.05 m, 1 kg: it slides without tipping) at rest is pushed along
 * the floor for 50 ms: the count rises the step after the push starts, stays full while the
 * slab slides and for at least the 10 calm steps after it stops, then falls back. Also: the
 * same inputs step bit for bit alike in a second world. */
#define PUSH_AT 800
#define PUSH_STEPS 50
#define STEPS 2000

static void push_run(double *ret_it, struct hs_pose *ret_pose)
{
    struct hs_model *floor = mb_floor(), *slab = mb_new("slab", 1, 1, 0);
    mb_mass(&slab->links[0], 1.0, 0, 0, 0, (0.04 + 0.0025) / 12, (0.04 + 0.0025) / 12, 0.08 / 12);
    mb_box(slab, 0, 0.2, 0.2, 0.05, 0, 0, 0);
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = mb_on_floor(floor, slab, 0.025, &p);
    dBodyID b = hs_world_ode_body(w, 1, 0);
    for (int i = 0; i < STEPS; i++) {
        if (i >= PUSH_AT && i < PUSH_AT + PUSH_STEPS)
            dBodyAddForce(b, 40, 0, 0); /* 4x the friction's 9.8 N: 3 cm/s after a step */
        ret_it[i] = step_counted(w);
        hs_world_link_pose(w, 1, 0, &ret_pose[i]);
    }
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(slab);
}

static void test_push_raises_the_count_then_it_falls_back(void **state)
{
    (void)state;
    static double it[STEPS], it2[STEPS];
    static struct hs_pose pose[STEPS], pose2[STEPS];
    push_run(it, pose);
    /* Calm before the push; its first step starts from rest, so it is calm too. */
    for (int i = 700; i <= PUSH_AT; i++)
        assert_true(it[i] == 8.0);
    int back = -1, full = 0;
    for (int i = PUSH_AT + 1; i < STEPS; i++) {
        full += it[i] == 12.0;
        if (back < 0 && it[i] == 8.0)
            back = i;
        if (back >= 0)
            assert_true(it[i] == 8.0); /* once back, stays: the slab is at rest again */
    }
    print_message("pushed at step %d: full count for %d steps, back to 8 at step %d, slid "
                  "%.1f mm\n",
                  PUSH_AT, full, back, 1e3 * (pose[STEPS - 1].p[0] - pose[PUSH_AT].p[0]));
    assert_true(pose[STEPS - 1].p[0] - pose[PUSH_AT].p[0] > 0.05); /* it did slide */
    assert_true(back > PUSH_AT + PUSH_STEPS + 500); /* held through the slide and its rest */
    assert_true(full == back - PUSH_AT - 1);
    for (int i = PUSH_AT + 1; i < back; i++)
        assert_true(it[i] == 12.0);

    /* A replay: the same inputs, the same counts, bit-identical poses at every step. */
    push_run(it2, pose2);
    for (int i = 0; i < STEPS; i++) {
        assert_true(it2[i] == it[i]);
        assert_memory_equal(&pose2[i], &pose[i], sizeof pose[i]);
    }
}

/* A chain of three 0.4 m, 1 kg links hinged about y below a fixed root, swinging in the air
 * from a bent pose scaled by amp (no contact: nothing a fixed row order was seen to bias). ret_dev:
 * each step's largest joint angle difference from the exact solver's run (ref), at most;
 * ret_q: the angles after each step; ret_it: the mean count over the steps after the first
 * second. */
#define CHAIN_STEPS 4000
#define CHAIN_LINKS 4

static void chain_run(const struct hs_world_params *p, double amp, const double *ref, double *ret_q,
                      double *ret_dev, double *ret_it, double *ret_rate)
{
    struct hs_model *m = mb_new("chain", CHAIN_LINKS, 0, 0);
    mb_joint(&m->links[0], HS_JOINT_FIXED, 0, 0, 1);
    for (uint32_t i = 1; i < CHAIN_LINKS; i++) {
        mb_joint(&m->links[i], HS_JOINT_ROTATE, 0, 1, 0);
        m->links[i].origin.p[2] = i > 1 ? -0.4 : 0;
        mb_mass(&m->links[i], 1.0, 0, 0, -0.2, 0.0134, 0.0134, 1e-4);
    }
    double q0[CHAIN_LINKS] = {0, 2 * amp, -amp, amp};
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    s.q0 = q0;
    struct hs_world *w = mb_world(p, &s, 1);
    double dev = 0, rate = 0;
    struct hs_world_health_summary h;
    for (int i = 0; i < CHAIN_STEPS; i++) {
        if (i == 1000)
            hs_world_health_reset(w);
        assert_int_equal(hs_world_step(w), 0);
        for (uint32_t j = 1; j < CHAIN_LINKS; j++) {
            double q = hs_world_joint_position(w, 0, j);
            ret_q[i * (CHAIN_LINKS - 1) + j - 1] = q;
            if (ref)
                dev = fmax(dev, fabs(q - ref[i * (CHAIN_LINKS - 1) + j - 1]));
            double v[3], om[3];
            hs_world_link_velocity(w, 0, j, v, om);
            rate = fmax(rate, sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2]));
        }
    }
    hs_world_health_summary(w, &h);
    *ret_dev = dev;
    *ret_it = h.quick_iterations_mean;
    *ret_rate = rate;
    hs_world_destroy(w);
    mb_free(m);
}

/* A slow swing (every link turning under 0.5 rad/s, world_iterations.c's QUASI_STATIC_RAD_S)
 * loads the joints nearly as at rest: after its first REST_STEPS it runs the calm count and
 * follows the exact solver within 1e-4 of its amplitude (measured 3.8e-5; 2.4e-6 with the full
 * count and ODE's shuffle); the same chain swinging ten times wider (links turning at up to
 * about 4 rad/s) keeps the full count. */
#define CHAIN_N (CHAIN_STEPS * (CHAIN_LINKS - 1))

static void test_slow_chain_runs_the_calm_count(void **state)
{
    (void)state;
    static double exact[CHAIN_N], adapt[CHAIN_N], twelve[CHAIN_N], again[CHAIN_N], wide[CHAIN_N];
    struct hs_world_params p, fixed, std;
    hs_world_params_default(&p);
    fixed = p;
    fixed.quick_iterations_min = 0;
    std = p;
    std.solver = HS_SOLVER_STANDARD;
    const double amp = 0.015; /* rad */
    double d_exact, d_adapt, d_twelve, d_again, d_wide, it_exact, it_adapt, it_twelve, it_again,
        it_wide, r_exact, r_adapt, r_twelve, r_again, r_wide;
    chain_run(&std, amp, NULL, exact, &d_exact, &it_exact, &r_exact);
    chain_run(&p, amp, exact, adapt, &d_adapt, &it_adapt, &r_adapt);
    chain_run(&fixed, amp, exact, twelve, &d_twelve, &it_twelve, &r_twelve);
    chain_run(&p, amp, adapt, again, &d_again, &it_again, &r_again);
    chain_run(&p, 10 * amp, NULL, wide, &d_wide, &it_wide, &r_wide);
    double top = 0;
    for (int i = 0; i < CHAIN_N; i++)
        top = fmax(top, fabs(exact[i]));
    print_message("slow chain (largest angle %.4f rad, links turning at up to %.3f rad/s): "
                  "adaptive %.2f iterations, off the exact solver by %.3e rad at most; fixed "
                  "%u: %.3e rad; ten times wider (up to %.2f rad/s): %.2f iterations\n",
                  top, r_exact, it_adapt, d_adapt, p.quick_iterations, d_twelve, r_wide, it_wide);
    assert_true(r_exact < 0.5);
    assert_true(it_adapt == (double)p.quick_iterations_min);
    assert_true(it_twelve == (double)p.quick_iterations);
    assert_true(it_wide == (double)p.quick_iterations);
    assert_true(d_again == 0); /* bit for bit the same run */
    assert_true(d_adapt <= 1e-4 * top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calm_and_busy_scenes),
        cmocka_unit_test(test_driving_crawler_runs_the_full_count),
        cmocka_unit_test(test_push_raises_the_count_then_it_falls_back),
        cmocka_unit_test(test_slow_chain_runs_the_calm_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
