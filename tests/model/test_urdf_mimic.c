/* URDF mimic joints on a real ODE world (tests/model/urdf/mimic.urdf): the follower must track
 * multiplier * q_leader + offset at every step while the leader is driven through a sine of
 * torque against gravity. The world's coupling (src/world/world_mimic.c) leaves after each step
 * the error the leader's acceleration adds within it, |multiplier| * |ddq_l| * dt²; the bound
 * checked is twice that plus 1e-9 with the standard (exact) solver. QuickStep stops after its
 * iterations, so the motor holds to its residual: there the bound is at least 1e-3 of the
 * leader's travel (measured: 2e-4 on the fingers, within the analytic bound on the arm). */
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
#include "model/urdf_fixture.h"
#include "heap_counter.h"

static void test_model_fields(void **state)
{
    (void)state;
    struct hs_model *m = urdf_load("mimic.urdf");
    int lead = hs_model_find_link(m, "lead"), follow = hs_model_find_link(m, "follow");
    int left = hs_model_find_link(m, "finger_left"), right = hs_model_find_link(m, "finger_right");
    assert_true(lead >= 0 && follow >= 0 && left >= 0 && right >= 0);
    assert_true(m->links[follow].mimics);
    assert_int_equal(m->links[follow].mimic_of, lead);
    assert_true(m->links[follow].mimic_multiplier == -0.5);
    assert_true(m->links[follow].mimic_offset == 0.1);
    assert_true(m->links[right].mimics && m->links[right].mimic_of == left);
    assert_true(m->links[right].mimic_multiplier == 1 && m->links[right].mimic_offset == 0);
    assert_false(m->links[lead].mimics);
    /* Followers are not commanded: no joint id; the two leaders are 0 and 1. */
    assert_int_equal(m->links[follow].joint_id, -1);
    assert_int_equal(m->links[right].joint_id, -1);
    assert_int_equal(m->njoint_ids, 2);
    hs_model_free(m);
}

struct pair {
    uint32_t leader, follower;
    double mult, off, effort_amp, freq;
};

static void run(enum hs_solver solver, double step_s)
{
    struct hs_model *m = urdf_load("mimic.urdf");
    struct pair pairs[2] = {
        {(uint32_t)hs_model_find_link(m, "lead"), (uint32_t)hs_model_find_link(m, "follow"), -0.5,
         0.1, 0.3, 1.0},
        {(uint32_t)hs_model_find_link(m, "finger_left"),
         (uint32_t)hs_model_find_link(m, "finger_right"), 1, 0, 0.5, 2.0},
    };
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    double q0[16] = {0};
    assert_true(m->nlinks <= 16);
    q0[pairs[0].follower] = pairs[0].off; /* start coupled */
    s.q0 = q0;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.solver = solver;
    p.step_s = step_s;
    struct hs_world *w = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_world_create(&p, &s, 1, &w, &d);
    if (r)
        print_error("hs_world_create: %s\n", d.msg);
    assert_int_equal(r, 0);
    const int steps = (int)lround(2.0 / step_s);
    double worst[2] = {0}, max_ddq[2] = {0},
           range[2][2] = {{INFINITY, -INFINITY}, {INFINITY, -INFINITY}};
    double dq_prev[2];
    for (int k = 0; k < 2; k++)
        dq_prev[k] = hs_world_joint_velocity(w, 0, pairs[k].leader);
    for (int i = 0; i < steps; i++) {
        double t = hs_world_time(w);
        for (int k = 0; k < 2; k++)
            hs_world_set_joint_effort(w, 0, pairs[k].leader,
                                      pairs[k].effort_amp * sin(2 * M_PI * pairs[k].freq * t));
        assert_int_equal(hs_world_step(w), 0);
        for (int k = 0; k < 2; k++) {
            const struct pair *c = &pairs[k];
            double ql = hs_world_joint_position(w, 0, c->leader);
            double dql = hs_world_joint_velocity(w, 0, c->leader);
            double qf = hs_world_joint_position(w, 0, c->follower);
            double ddq = fabs(dql - dq_prev[k]) / step_s;
            dq_prev[k] = dql;
            double err = fabs(qf - (c->mult * ql + c->off));
            max_ddq[k] = fmax(max_ddq[k], ddq);
            range[k][0] = fmin(range[k][0], ql);
            range[k][1] = fmax(range[k][1], ql);
            worst[k] = fmax(worst[k], err);
        }
    }
    for (int k = 0; k < 2; k++) {
        double bound = 2 * fabs(pairs[k].mult) * max_ddq[k] * step_s * step_s + 1e-9;
        if (solver == HS_SOLVER_QUICK) /* iterative: the motor holds to the solver's residual */
            bound = fmax(bound, 1e-3 * (range[k][1] - range[k][0]));
        double ratio = worst[k] / bound;
        print_message("mimic %s (%s, dt %g): leader range [%.4f, %.4f], worst error %.3g, "
                      "worst error / bound %.3f\n",
                      k ? "prismatic" : "revolute",
                      solver == HS_SOLVER_QUICK ? "quick" : "standard", step_s, range[k][0],
                      range[k][1], worst[k], ratio);
        /* The leader must really move, or following it proves nothing. */
        assert_true(range[k][1] - range[k][0] > (k ? 0.005 : 0.5));
        assert_true(ratio <= 1.0);
    }
    hs_world_destroy(w);
    hs_model_free(m);
}

static void test_standard(void **state)
{
    (void)state;
    run(HS_SOLVER_STANDARD, 1e-3);
    run(HS_SOLVER_STANDARD, 5e-3);
}

static void test_quick(void **state)
{
    (void)state;
    run(HS_SOLVER_QUICK, 1e-3);
}

/* The per-step work this feature adds (mimic motor targets, per-link contact surfaces) is
 * real-time code: no heap call in 1000 steps of a world with both, after create. */
static void test_no_allocation_per_step(void **state)
{
    (void)state;
    if (!hs_heap_counter_active)
        skip(); /* sanitizer build: malloc is the sanitizer's */
    struct hs_model *m = urdf_load("mimic.urdf"), *slab = urdf_load("slab.urdf"),
                    *ball = urdf_load("ball.urdf");
    struct hs_world_body_spec s[3];
    hs_world_spec_default(&s[0], m);
    hs_world_spec_default(&s[1], slab);
    s[1].is_static = true;
    s[1].root_pose.p[2] = -0.05;
    hs_world_spec_default(&s[2], ball);
    s[2].root_pose.p[0] = 2;
    s[2].root_pose.p[2] = 0.1;
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_world_create(&p, s, 3, &w, &d), 0);
    uint32_t lead = (uint32_t)hs_model_find_link(m, "lead");
    long before = hs_heap_calls;
    hs_heap_counting = 1;
    for (int i = 0; i < 1000; i++) {
        hs_world_set_joint_effort(w, 0, lead, 0.3 * sin(i * 1e-3 * 2 * M_PI));
        if (hs_world_step(w) < 0)
            break;
    }
    hs_heap_counting = 0;
    assert_true(hs_world_contact_count(w) > 0); /* the ball's surface was in play */
    assert_int_equal(hs_heap_calls - before, 0);
    hs_world_destroy(w);
    hs_model_free(m);
    hs_model_free(slab);
    hs_model_free(ball);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_fields),
        cmocka_unit_test(test_standard),
        cmocka_unit_test(test_quick),
        cmocka_unit_test(test_no_allocation_per_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
