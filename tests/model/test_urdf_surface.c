/* Gazebo contact surface tags on URDF links (mu1/mu2, kp/kd) through a real ODE world
 * (src/world/world_surface.c), against analytic results:
 *   - block.urdf (mu 0.2) on a slab inclined by 0.3 rad slides down with
 *     a = g (sin θ - mu cos θ); the same block without its tags takes the world's mu 1 and stays;
 *   - ball.urdf (10 kg, kp 1e5 N/m, kd 1e3 N·s/m, one contact point) rests on a level slab
 *     sunk by m g / kp plus the world's surface layer, which ODE allows before it pushes back. */
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
#include "world/slope_scene.h"

#define G 9.80665

static void test_tags_read(void **state)
{
    (void)state;
    struct hs_model *m = urdf_load("ball.urdf");
    const struct hs_link *l = &m->links[0];
    assert_int_equal(l->surface_given,
                     HS_SURFACE_MU1 | HS_SURFACE_MU2 | HS_SURFACE_KP | HS_SURFACE_KD);
    assert_true(l->mu1 == 0.3 && l->mu2 == 0.3 && l->contact_kp == 1e5 && l->contact_kd == 1e3);
    /* selfCollide is not honoured per link: a warning names it. */
    bool warned = false;
    for (uint32_t i = 0; i < m->nwarnings; i++)
        warned |= strstr(m->warnings[i], "selfCollide") != NULL;
    assert_true(warned);
    hs_model_free(m);
}

/* Distance the block travels down the slope in 1 s after 0.2 s of settling, and its
 * acceleration from the second difference of three positions 0.5 s apart. */
static void slide(struct hs_model *block, double *ret_travel, double *ret_a)
{
    struct hs_model *slab = urdf_load("slab.urdf");
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], slab);
    hs_world_spec_default(&s[1], block);
    double down[3];
    slope_place(s, 0.3, 0.05 + 0.1 + 1e-4, down); /* slab half thickness, block half size */
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.solver = HS_SOLVER_STANDARD;
    struct hs_world *w = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_world_create(&p, s, 2, &w, &d), 0);
    slope_slide(w, down, ret_travel, ret_a);
    hs_world_destroy(w);
    hs_model_free(slab);
}

static void test_inclined_plane(void **state)
{
    (void)state;
    struct hs_model *b = urdf_load("block.urdf");
    double travel, a;
    slide(b, &travel, &a);
    const double want = G * (sin(0.3) - 0.2 * cos(0.3));
    print_message("block mu 0.2 on 0.3 rad: a %.4f m/s², analytic %.4f (error %.2f %%)\n", a, want,
                  100 * fabs(a - want) / want);
    assert_true(fabs(a - want) / want < 0.02);
    /* Without its tags the block meets the world's mu 1 > tan 0.3 and sticks: it creeps by
     * less than 0.1 mm in 1 s (tests/world/test_world_slope.c), against about 0.5 m when it
     * slides with its tags. */
    b->links[0].surface_given = 0;
    slide(b, &travel, &a);
    print_message("block without tags: travel %.6f m in 1 s\n", travel);
    assert_true(fabs(travel) < 1e-4);
    hs_model_free(b);
}

static void test_ball_stiffness(void **state)
{
    (void)state;
    struct hs_model *slab = urdf_load("slab.urdf"), *ball = urdf_load("ball.urdf");
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], slab);
    s[0].is_static = true;
    s[0].root_pose.p[2] = -0.05; /* top at z = 0 */
    hs_world_spec_default(&s[1], ball);
    s[1].root_pose.p[2] = 0.1;
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_world_create(&p, s, 2, &w, &d), 0);
    for (int i = 0; i < 1500; i++)
        assert_int_equal(hs_world_step(w), 0);
    struct hs_pose ps;
    hs_world_link_pose(w, 1, 0, &ps);
    const double depth = 0.1 - ps.p[2];
    const double want = 10 * G / 1e5 + p.surface_layer;
    print_message("ball kp 1e5: sinks %.6f m, analytic %.6f m (error %.2f %%)\n", depth, want,
                  100 * fabs(depth - want) / want);
    assert_true(fabs(depth - want) / want < 0.02);
    hs_world_destroy(w);
    hs_model_free(slab);
    hs_model_free(ball);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tags_read),
        cmocka_unit_test(test_inclined_plane),
        cmocka_unit_test(test_ball_stiffness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
