/* Friction on a slope with the default compliant contact, on both solvers, against Coulomb:
 *   - a 20 kg block at rest on a 0.3 rad slope (and a steeper 0.6 rad one) with mu 1 > tan θ
 *     stays put: it creeps less than 0.1 mm/s (it crept 1.4 mm/s when the friction rows took
 *     the joints' CFM and acted as a viscous damper);
 *   - with mu 0.2 < tan θ it slides at g (sin θ - mu cos θ) within 1 %.
 * Judged in simulated time: positions after 0.2 s of settling and 0.5 s apart. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/world.h"
#include "world/model_builders.h"
#include "world/slope_scene.h"

#define G 9.80665
#define A 0.2 /* block edge, m */

/* Travel down the slope over 1 s after 0.2 s, and the acceleration from the positions at 0.2,
 * 0.7 and 1.2 s. */
static void slide(enum hs_solver solver, double th, double mu, double *ret_travel, double *ret_a)
{
    struct hs_model *floor = mb_floor(), *block = mb_cube(A, 20);
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], floor);
    hs_world_spec_default(&s[1], block);
    double down[3];
    slope_place(s, th, A / 2 + 1e-4, down);
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.solver = solver;
    p.friction = mu;
    struct hs_world *w = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_world_create(&p, s, 2, &w, &d), 0);
    slope_slide(w, down, ret_travel, ret_a);
    hs_world_destroy(w);
    mb_free(block);
    mb_free(floor);
}

static void test_block_sticks_where_mu_exceeds_the_slope(void **state)
{
    (void)state;
    const double angles[2] = {0.3, 0.6};
    for (int solver = 0; solver < 2; solver++)
        for (int i = 0; i < 2; i++) {
            double travel, a;
            slide(solver ? HS_SOLVER_STANDARD : HS_SOLVER_QUICK, angles[i], 1.0, &travel, &a);
            print_message("%s, %.1f rad, mu 1: creeps %.4f mm/s\n", solver ? "exact" : "quick",
                          angles[i], 1e3 * travel);
            assert_true(fabs(travel) < 1e-4); /* over 1 s */
        }
}

static void test_block_slides_at_coulomb_rate(void **state)
{
    (void)state;
    for (int solver = 0; solver < 2; solver++) {
        double travel, a;
        slide(solver ? HS_SOLVER_STANDARD : HS_SOLVER_QUICK, 0.3, 0.2, &travel, &a);
        const double want = G * (sin(0.3) - 0.2 * cos(0.3));
        print_message("%s, 0.3 rad, mu 0.2: a %.4f m/s², Coulomb %.4f (error %.2f %%)\n",
                      solver ? "exact" : "quick", a, want, 100 * fabs(a - want) / want);
        assert_true(fabs(a - want) / want < 0.01);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_sticks_where_mu_exceeds_the_slope),
        cmocka_unit_test(test_block_slides_at_coulomb_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
