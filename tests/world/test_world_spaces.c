/* Several robots in one world collide through a quadtree (world_create.c), one robot through
 * the simple space. Real ODE worlds, simulated time:
 * - two runs of the same multi-robot world are bit-identical, step by step (lockstep replays
 *   rely on the pair order being a function of the state);
 * - robots still meet: a cube pushed into another moves it (the quadtree hands that pair over);
 * - a robot far from the others still lands on the floor;
 * - the floor's force on each landed cube shows in the solver health whichever geom of the pair
 *   came first (the quadtree puts the floor first: a contact joint on one body keeps its force
 *   in f1). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ode/ode.h>

#include "hilsim/world.h"
#include "world/model_builders.h"

#define NCUBES 6
#define A 0.1

static struct hs_world *cubes(struct hs_model *floor, struct hs_model *cube, const double (*xy)[2],
                              int n, double z)
{
    struct hs_world_body_spec s[NCUBES + 1];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    for (int i = 1; i <= n; i++) {
        hs_world_spec_default(&s[i], cube);
        s[i].root_pose.p[0] = xy[i - 1][0];
        s[i].root_pose.p[1] = xy[i - 1][1];
        s[i].root_pose.p[2] = z;
    }
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = NULL;
    struct hs_diag d = {0};
    int r = hs_world_create(&p, s, (uint32_t)n + 1, &w, &d);
    if (r)
        fail_msg("hs_world_create: %d %s", r, d.msg);
    return w;
}

/* One run of the pushed cubes: every cube's pose after every step. ODE's quick step draws
 * from one process-wide generator (seeded at create), so runs go one after the other, as a
 * replay does, not interleaved. */
#define STEPS 1500
static void run(struct hs_model *floor, struct hs_model *cube, const double (*xy)[2],
                struct hs_pose (*ret)[NCUBES])
{
    struct hs_world *w = cubes(floor, cube, xy, NCUBES, 0.2);
    for (int i = 0; i < STEPS; i++) {
        for (int c = 1; c <= NCUBES; c++) /* pushed towards the middle, then let go */
            if (i < 600)
                dBodyAddForce(hs_world_ode_body(w, (uint32_t)c, 0), -8 * xy[c - 1][0],
                              -8 * xy[c - 1][1] + (c == 1 ? 3 : 0), 0);
        assert_int_equal(hs_world_step(w), 0);
        for (uint32_t c = 1; c <= NCUBES; c++)
            hs_world_link_pose(w, c, 0, &ret[i][c - 1]);
    }
    hs_world_destroy(w);
}

static void runs_are_bit_identical(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *cube = mb_cube(A, 1.0);
    /* close enough to knock into each other when pushed together */
    static const double xy[NCUBES][2] = {{0, 0},    {0.15, 0}, {0.3, 0.02},
                                         {0, 0.15}, {2, 2},    {-3, 1}};
    struct hs_pose(*p0)[NCUBES] = calloc(STEPS, sizeof *p0);
    struct hs_pose(*p1)[NCUBES] = calloc(STEPS, sizeof *p1);
    assert_non_null(p0);
    assert_non_null(p1);
    run(floor, cube, xy, p0);
    run(floor, cube, xy, p1);
    int differ = -1;
    for (int i = 0; i < STEPS && differ < 0; i++)
        if (memcmp(p0[i], p1[i], sizeof p0[i]) != 0)
            differ = i;
    double moved = fabs(p0[STEPS - 1][1].p[0] - xy[1][0]);
    print_message("first differing step: %d; cube 2 moved %.3f m\n", differ, moved);
    assert_int_equal(differ, -1);
    assert_true(moved > 0.01); /* the cubes did meet and move */
    free(p0);
    free(p1);
    mb_free(cube);
    mb_free(floor);
}

static void robots_meet_and_far_ones_land(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *cube = mb_cube(A, 1.0);
    /* the third 4.5 m away (the floor is 10 m wide): another cell of the quadtree */
    static const double xy[3][2] = {{0, 0}, {0.2, 0}, {-4.5, 0}};
    struct hs_world *w = cubes(floor, cube, xy, 3, A / 2 + 0.02);
    for (int i = 0; i < 1500; i++) {
        dBodyAddForce(hs_world_ode_body(w, 1, 0), 9.0, 0, 0); /* mu 1: sliding needs 9.8 N */
        if (i > 300)
            dBodyAddForce(hs_world_ode_body(w, 1, 0), 6.0, 0, 0);
        assert_int_equal(hs_world_step(w), 0);
    }
    struct hs_pose a, b, far;
    hs_world_link_pose(w, 1, 0, &a);
    hs_world_link_pose(w, 2, 0, &b);
    hs_world_link_pose(w, 3, 0, &far);
    struct hs_world_health_summary h;
    hs_world_health_summary(w, &h);
    print_message("pushed cube x %.4f, the other x %.4f (started 0.2), far cube z %.4f, force jump "
                  "max %.2f N\n",
                  a.p[0], b.p[0], far.p[2], h.force_jump_n.max);
    assert_true(a.p[0] > 0.09);              /* it slid up to the other ... */
    assert_true(b.p[0] > 0.2 + 0.05);        /* ... and pushed it along */
    assert_true(b.p[0] - a.p[0] > A - 2e-3); /* not through it */
    assert_float_equal(far.p[2], A / 2, 2e-3);
    assert_true(h.force_jump_n.max > 9.8); /* landing: more than a cube's weight at once */
    hs_world_destroy(w);
    mb_free(cube);
    mb_free(floor);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runs_are_bit_identical),
        cmocka_unit_test(robots_meet_and_far_ones_land),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
