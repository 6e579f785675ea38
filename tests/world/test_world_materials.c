/* Contact materials and solver health on hand-built bodies, against analytic results:
 *   - a cube resting on the floor sinks by its weight over the pair's stiffness, plus ODE's
 *     surface layer (within 1 % of the spring part): the default contact and a named material
 *     pair with its own stiffness, in one world;
 *   - Coulomb friction per material pair: the same horizontal push (half the weight) holds a
 *     cube on a mu 1 pair and slides one on a mu 0.2 pair at (0.5 - 0.2) g (within 2 %);
 *   - the health measures: penetration equals that sinkage, no jump at rest, a jump when a
 *     cube lands;
 *   - names that match nothing are refused with the entry's place. */
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
#define A 0.1 /* cube side, m */

static void assign(struct hs_world_params *p, const char *name, const char *material)
{
    struct hs_world_link_material *lm = &p->link_materials[p->nlink_materials++];
    snprintf(lm->name, sizeof lm->name, "%s", name);
    snprintf(lm->material, sizeof lm->material, "%s", material);
}

static void pair(struct hs_world_params *p, const char *m1, const char *m2, double k, double c,
                 double mu)
{
    struct hs_world_contact_material *cm = &p->contact_materials[p->ncontact_materials++];
    snprintf(cm->material1, sizeof cm->material1, "%s", m1);
    snprintf(cm->material2, sizeof cm->material2, "%s", m2);
    cm->stiffness_n_m = k;
    cm->damping_n_s_m = c;
    cm->friction = mu;
    cm->restitution = 0;
}

/* floor + cubes "a" (mass ma at x = -0.5) and "b" (mass mb at x = +0.5), resting. */
static struct hs_world *cubes(const struct hs_world_params *p, struct hs_model **mods, double ma,
                              double mb, double z, int *ret_rc, struct hs_diag *d)
{
    mods[0] = mb_floor();
    mods[1] = mb_cube(A, ma);
    mods[2] = mb_cube(A, mb);
    struct hs_world_body_spec s[3];
    hs_world_spec_default(&s[0], mods[0]);
    s[0].is_static = true;
    s[0].name = "floor";
    const char *names[2] = {"a", "b"};
    for (int i = 1; i < 3; i++) {
        hs_world_spec_default(&s[i], mods[i]);
        s[i].name = names[i - 1];
        s[i].root_pose.p[0] = i == 1 ? -0.5 : 0.5;
        s[i].root_pose.p[2] = z;
    }
    struct hs_world *w = NULL;
    memset(d, 0, sizeof *d);
    *ret_rc = hs_world_create(p, s, 3, &w, d);
    return w;
}

static void free_models(struct hs_model **mods)
{
    for (int i = 0; i < 3; i++)
        mb_free(mods[i]);
}

static void test_sinkage_is_weight_over_pair_stiffness(void **state)
{
    (void)state;
    struct hs_world_params p;
    hs_world_params_default(&p);
    assign(&p, "b", "foam");
    pair(&p, "foam", "default", 1e5, 2e3, 1);
    struct hs_model *mods[3];
    struct hs_diag d;
    int rc;
    /* Start at the expected rest height, so the cubes settle quickly. */
    struct hs_world *w = cubes(&p, mods, 1.0, 10.0, A / 2, &rc, &d);
    assert_int_equal(rc, 0);
    for (int i = 0; i < 3000; i++)
        assert_int_equal(hs_world_step(w), 0);
    const double k[2] = {p.contact_stiffness_n_m, 1e5}, m[2] = {1.0, 10.0};
    for (int c = 0; c < 2; c++) {
        struct hs_pose pose;
        hs_world_link_pose(w, (uint32_t)c + 1, 0, &pose);
        double sink = A / 2 - pose.p[2], spring = m[c] * G / k[c];
        print_message("cube %c: sinks %.4f mm, expected %.4f mm (spring) + %.4f mm (layer)\n",
                      'a' + c, 1e3 * sink, 1e3 * spring, 1e3 * p.surface_layer);
        assert_true(fabs(sink - p.surface_layer - spring) < 0.01 * spring);
    }
    /* Health: the deepest point is the heavier cube's, nothing jumps at rest. */
    struct hs_world_health_sample h;
    hs_world_health_last(w, &h);
    struct hs_pose pb;
    hs_world_link_pose(w, 2, 0, &pb);
    assert_true(fabs(h.penetration_m - (A / 2 - pb.p[2])) < 1e-6);
    assert_true(h.force_jump_n < 1e-3 * 10 * G);
    assert_true(h.joint_error_m == 0); /* no joints */
    struct hs_world_health_summary s;
    hs_world_health_summary(w, &s);
    assert_int_equal(s.steps, 3000);
    assert_true(fabs(s.weight_n - 11 * G) < 1e-9);
    assert_int_equal(s.penetration_m.over_budget, 0);
    hs_world_destroy(w);
    free_models(mods);
}

static void test_friction_per_material_pair(void **state)
{
    (void)state;
    struct hs_world_params p;
    hs_world_params_default(&p);
    assign(&p, "floor", "ground");
    assign(&p, "a", "rubber");
    assign(&p, "b", "ice");
    pair(&p, "rubber", "ground", 2e6, 1e4, 1.0);
    pair(&p, "ground", "ice", 2e6, 1e4, 0.2); /* either order */
    struct hs_model *mods[3];
    struct hs_diag d;
    int rc;
    struct hs_world *w = cubes(&p, mods, 1.0, 1.0, A / 2, &rc, &d);
    assert_int_equal(rc, 0);
    for (int i = 0; i < 500; i++) /* settle */
        assert_int_equal(hs_world_step(w), 0);
    struct hs_pose a0, b0, a1, b1;
    hs_world_link_pose(w, 1, 0, &a0);
    hs_world_link_pose(w, 2, 0, &b0);
    const int n = 500; /* 0.5 s */
    for (int i = 0; i < n; i++) {
        for (uint32_t c = 1; c <= 2; c++)
            dBodyAddForce(hs_world_ode_body(w, c, 0), 0.5 * G, 0, 0);
        assert_int_equal(hs_world_step(w), 0);
    }
    hs_world_link_pose(w, 1, 0, &a1);
    hs_world_link_pose(w, 2, 0, &b1);
    double t = n * p.step_s, expect = 0.5 * (0.5 - 0.2) * G * t * t;
    double da = a1.p[0] - a0.p[0], db = b1.p[0] - b0.p[0];
    print_message("push of half the weight for %.1f s: mu 1 moved %.3g m, mu 0.2 moved %.4f m "
                  "(expected %.4f m)\n",
                  t, da, db, expect);
    assert_true(fabs(da) < 1e-3);
    assert_true(fabs(db - expect) < 0.02 * expect);
    hs_world_destroy(w);
    free_models(mods);
}

static void test_landing_shows_as_a_force_jump(void **state)
{
    (void)state;
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_model *mods[3];
    struct hs_diag d;
    int rc;
    /* Dropped from 2 cm: lands at 0.63 m/s. */
    struct hs_world *w = cubes(&p, mods, 1.0, 1.0, A / 2 + 0.02, &rc, &d);
    assert_int_equal(rc, 0);
    for (int i = 0; i < 300; i++)
        assert_int_equal(hs_world_step(w), 0);
    struct hs_world_health_summary s;
    hs_world_health_summary(w, &s);
    print_message("landing: contact force jump max %.1f N (budget %.3f N, %llu steps over)\n",
                  s.force_jump_n.max, s.force_jump_n.budget,
                  (unsigned long long)s.force_jump_n.over_budget);
    assert_true(s.force_jump_n.max > G); /* more than the cube's weight at once */
    assert_true(s.force_jump_n.over_budget > 0);
    hs_world_health_reset(w);
    hs_world_health_summary(w, &s);
    assert_int_equal(s.steps, 0);
    hs_world_destroy(w);
    free_models(mods);
}

/* Adaptive iterations (quick_iterations_min): the count stays within its bounds, sinks towards
 * the minimum while nothing jumps (two cubes falling), rises towards the worst case when they
 * land (the contact force jumps past its budget), and at rest keeps the noise within budget. */
static void test_adaptive_iterations_stay_bounded(void **state)
{
    (void)state;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.quick_iterations = 40;
    p.quick_iterations_min = 5;
    struct hs_model *mods[3];
    struct hs_diag d;
    int rc;
    struct hs_world *w = cubes(&p, mods, 1.0, 1.0, A / 2 + 0.05, &rc, &d); /* lands at ~100 ms */
    assert_int_equal(rc, 0);
    struct hs_world_health_summary fall, land, rest;
    for (int i = 0; i < 90; i++)
        assert_int_equal(hs_world_step(w), 0);
    hs_world_health_summary(w, &fall);
    hs_world_health_reset(w);
    for (int i = 0; i < 60; i++)
        assert_int_equal(hs_world_step(w), 0);
    hs_world_health_summary(w, &land);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(hs_world_step(w), 0);
    hs_world_health_reset(w);
    for (int i = 0; i < 200; i++)
        assert_int_equal(hs_world_step(w), 0);
    hs_world_health_summary(w, &rest);
    print_message("adaptive 5..40: mean iterations falling %.1f, landing %.1f, resting %.1f\n",
                  fall.quick_iterations_mean, land.quick_iterations_mean,
                  rest.quick_iterations_mean);
    /* Falling: 40 down by one per step to 5 in the first 36 steps, then 5. */
    assert_true(fall.quick_iterations_mean < 15 && fall.quick_iterations_mean > 5);
    assert_true(land.quick_iterations_mean > 7);
    assert_true(land.quick_iterations_mean <= 40);
    /* Resting: the count settles where the tick-to-tick force noise stays within its budget,
     * below the worst case. */
    assert_true(rest.quick_iterations_mean >= 5 && rest.quick_iterations_mean < 40);
    assert_int_equal(rest.force_jump_n.over_budget, 0);
    hs_world_destroy(w);
    free_models(mods);
}

static void test_unknown_names_are_refused(void **state)
{
    (void)state;
    struct hs_world_params p;
    hs_world_params_default(&p);
    assign(&p, "nosuchlink", "rubber");
    p.link_materials[0].src = (struct hs_world_src){12, 5};
    struct hs_model *mods[3];
    struct hs_diag d;
    int rc;
    struct hs_world *w = cubes(&p, mods, 1, 1, A / 2, &rc, &d);
    assert_null(w);
    assert_int_equal(rc, -EINVAL);
    assert_int_equal(d.line, 12);
    assert_non_null(strstr(d.msg, "nosuchlink"));
    free_models(mods);

    hs_world_params_default(&p);
    assign(&p, "a", "rubber");
    pair(&p, "rubber", "granite", 1e6, 1e3, 1);
    w = cubes(&p, mods, 1, 1, A / 2, &rc, &d);
    assert_null(w);
    assert_int_equal(rc, -EINVAL);
    assert_non_null(strstr(d.msg, "granite"));
    free_models(mods);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sinkage_is_weight_over_pair_stiffness),
        cmocka_unit_test(test_friction_per_material_pair),
        cmocka_unit_test(test_landing_shows_as_a_force_jump),
        cmocka_unit_test(test_adaptive_iterations_stay_bounded),
        cmocka_unit_test(test_unknown_names_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
