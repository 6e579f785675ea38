/* Contact materials changed while the world runs (src/world/world_material_set.c), on a cube
 * resting on a 20° slope, against Coulomb's law:
 *   - with mu 1 (tan 20° = 0.36 < 1) it stays put; from the step after its pair's mu drops to
 *     0.1 it slides down at a = g (sin θ − mu cos θ) (within 2 %); with mu back at 1 it stops;
 *   - made of another material (a link's material changed) it slides at that pair's mu;
 *   - names resolve as the world numbered them: default 0, then physics.materials in order. */
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
#include "world/slope_scene.h"

#define A 0.1 /* cube side, m */
#define THETA (20.0 * M_PI / 180.0)

struct slope {
    struct hs_model *mods[2];
    struct hs_world *w;
    double g;
    double u[3]; /* down the slope, unit */
};

static void assign(struct hs_world_params *p, const char *name, const char *material)
{
    struct hs_world_link_material *lm = &p->link_materials[p->nlink_materials++];
    snprintf(lm->name, sizeof lm->name, "%s", name);
    snprintf(lm->material, sizeof lm->material, "%s", material);
}

/* The floor turned by THETA (slope_scene.h); the cube on it, same orientation, just touching. The
 * slope is "stone", the cube "rubber"; "ice" against "ice" has mu 0.05. */
static void open_slope(struct slope *s)
{
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.friction = 1;
    assign(&p, "slope", "stone");
    assign(&p, "block", "rubber");
    assign(&p, "nothing_yet", "ice");
    struct hs_world_contact_material *cm = &p.contact_materials[p.ncontact_materials++];
    snprintf(cm->material1, sizeof cm->material1, "ice");
    snprintf(cm->material2, sizeof cm->material2, "stone");
    cm->stiffness_n_m = 2e6;
    cm->damping_n_s_m = 2e3;
    cm->friction = 0.05;
    s->mods[0] = mb_floor();
    s->mods[1] = mb_cube(A, 1.0);
    /* a link named nothing_yet: the ice material exists before any link is made of it */
    snprintf(s->mods[1]->links[0].name, sizeof s->mods[1]->links[0].name, "nothing_yet");
    struct hs_world_body_spec b[2];
    hs_world_spec_default(&b[0], s->mods[0]);
    b[0].name = "slope";
    hs_world_spec_default(&b[1], s->mods[1]);
    b[1].name = "block";
    slope_place(b, THETA, A / 2 + 1e-4, s->u);
    struct hs_diag d = {0};
    assert_int_equal(hs_world_create(&p, b, 2, &s->w, &d), 0);
    s->g = -p.gravity[2];
}

static void close_slope(struct slope *s)
{
    hs_world_destroy(s->w);
    mb_free(s->mods[0]);
    mb_free(s->mods[1]);
}

/* The cube's velocity down the slope, m/s. */
static double speed(struct slope *s)
{
    const dReal *v = dBodyGetLinearVel(hs_world_ode_body(s->w, 1, 0));
    return v[0] * s->u[0] + v[1] * s->u[1] + v[2] * s->u[2];
}

static double along(struct slope *s)
{
    struct hs_pose pose;
    hs_world_link_pose(s->w, 1, 0, &pose);
    return pose.p[0] * s->u[0] + pose.p[1] * s->u[1] + pose.p[2] * s->u[2];
}

static void steps(struct slope *s, int n)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(hs_world_step(s->w), 0);
}

static void test_names(void **state)
{
    (void)state;
    struct slope s;
    open_slope(&s);
    assert_int_equal(hs_world_material_count(s.w), 4);
    assert_int_equal(hs_world_material_find(s.w, "default"), 0);
    assert_int_equal(hs_world_material_find(s.w, "stone"), 1);
    assert_int_equal(hs_world_material_find(s.w, "rubber"), 2);
    assert_int_equal(hs_world_material_find(s.w, "ice"), 3);
    assert_int_equal(hs_world_material_find(s.w, "glass"), -ENOENT);
    assert_int_equal(hs_world_link_material(s.w, 0, 0), 1);
    assert_int_equal(hs_world_link_material(s.w, 1, 0), 3); /* its link entry came last */
    assert_int_equal(hs_world_link_material(s.w, 1, 7), -EINVAL);
    assert_true(hs_world_pair_friction(s.w, 3, 1) == 0.05);
    assert_true(hs_world_pair_friction(s.w, 1, 3) == 0.05);
    assert_true(hs_world_pair_friction(s.w, 2, 1) == 1);
    assert_int_equal(hs_world_set_pair_friction(s.w, 2, 1, -1), -EINVAL);
    assert_int_equal(hs_world_set_pair_friction(s.w, 2, 4, 1), -EINVAL);
    assert_int_equal(hs_world_set_pair_friction(s.w, 2, 1, INFINITY), 0);
    assert_true(isinf(hs_world_pair_friction(s.w, 1, 2)));
    assert_int_equal(hs_world_set_link_material(s.w, 1, 0, 4), -EINVAL);
    close_slope(&s);
}

static void test_slides_when_mu_drops(void **state)
{
    (void)state;
    struct slope s;
    open_slope(&s);
    uint32_t stone = 1, rubber = 2;
    assert_int_equal(hs_world_set_link_material(s.w, 1, 0, rubber), 0);
    double h = 0.001;
    steps(&s, 500); /* lands and settles */
    double x0 = along(&s);
    steps(&s, 300);
    double creep = along(&s) - x0, v_before = speed(&s);
    printf("mu 1: moved %.3g m in 0.3 s, speed %.3g m/s\n", creep, v_before);
    assert_true(fabs(creep) < 1e-5); /* no creep at rest (tests/world/test_world_slope.c) */
    assert_true(fabs(v_before) < 1e-4);

    /* mu 0.1 from this step on */
    assert_int_equal(hs_world_set_pair_friction(s.w, stone, rubber, 0.1), 0);
    double a = s.g * (sin(THETA) - 0.1 * cos(THETA));
    steps(&s, 1);
    double v1 = speed(&s);
    printf("after the first step at mu 0.1: %.4g m/s (a h = %.4g)\n", v1, a * h);
    assert_true(v1 > 0.5 * a * h && v1 < 1.5 * a * h + fabs(v_before));
    double va = speed(&s);
    steps(&s, 300);
    double vb = speed(&s);
    double measured = (vb - va) / (300 * h);
    printf("slides at %.4f m/s^2, analytic %.4f (%.2f %%)\n", measured, a,
           100 * (measured - a) / a);
    assert_true(fabs(measured - a) < 0.02 * a);

    /* mu 1 again: Coulomb decelerates it at g (mu cos θ − sin θ) until it sticks */
    assert_int_equal(hs_world_set_pair_friction(s.w, stone, rubber, 1), 0);
    steps(&s, 500);
    printf("mu 1 again: %.3g m/s after 0.5 s\n", speed(&s));
    assert_true(fabs(speed(&s)) < 1e-3);
    close_slope(&s);
}

static void test_slides_when_material_changes(void **state)
{
    (void)state;
    struct slope s;
    open_slope(&s);
    assert_int_equal(hs_world_set_link_material(s.w, 1, 0, 2), 0); /* rubber: mu 1 */
    steps(&s, 500);
    double x0 = along(&s);
    steps(&s, 200);
    assert_true(fabs(along(&s) - x0) < 1e-4);
    assert_int_equal(hs_world_set_link_material(s.w, 1, 0, 3), 0); /* ice on stone: mu 0.05 */
    steps(&s, 1);
    double va = speed(&s);
    steps(&s, 300);
    double measured = (speed(&s) - va) / 0.3, a = s.g * (sin(THETA) - 0.05 * cos(THETA));
    printf("ice: %.4f m/s^2, analytic %.4f\n", measured, a);
    assert_true(fabs(measured - a) < 0.02 * a);
    close_slope(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_slides_when_mu_drops),
        cmocka_unit_test(test_slides_when_material_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
