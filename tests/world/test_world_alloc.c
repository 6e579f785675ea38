/* After create (which warms up), hs_world_step makes no heap call: malloc, calloc, realloc and
 * free (and the aligned allocators) are interposed in this binary by hilsim's one heap counter
 * (perf/heap_counter.c; ODE's shared library binds to them) and counted across
 * 1000 steps of a scene with contacts, trimeshes (cone), cylinders, hinges and a crawler.
 * Labelled "nosan": sanitizers interpose malloc themselves. */
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heap_counter.h"
#include "hilsim/world.h"
#include "world/model_builders.h"

static void add_geom(struct hs_model *m, uint32_t li, struct hs_geom g)
{
    m->geoms[m->ngeoms] = g;
    m->links[li].geom_first = m->ngeoms;
    m->links[li].geom_count = 1;
    m->ngeoms++;
}

static void test_step_makes_no_heap_call(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor();
    /* Free root box with a hinged cone (trimesh) and a hinged cylinder resting on the floor. */
    struct hs_model *m = mb_new("robot", 3, 3, 0);
    mb_mass(&m->links[0], 3, 0, 0, 0, 0.02, 0.02, 0.02);
    mb_box(m, 0, 0.3, 0.3, 0.1, 0, 0, 0);
    struct hs_geom cone = {.type = HS_GEOM_CONE, .u.cone = {.bottom_radius = 0.05, .height = 0.1}};
    hs_pose_identity(&cone.pose);
    hs_rot_from_axis_angle((double[3]){1, 0, 0}, M_PI / 2, cone.pose.R); /* apex up (+z) */
    struct hs_geom cyl = {.type = HS_GEOM_CYLINDER, .u.cylinder = {.radius = 0.04, .height = 0.2}};
    hs_pose_identity(&cyl.pose);
    for (int i = 1; i <= 2; i++) {
        mb_joint(&m->links[i], i == 1 ? HS_JOINT_ROTATE : HS_JOINT_CRAWLER, 0, 1, 0);
        m->links[i].parent = 0;
        m->links[i].origin.p[0] = i == 1 ? 0.2 : -0.2;
        m->links[i].origin.p[2] = -0.05;
        mb_mass(&m->links[i], 0.5, 0, 0, 0, 1e-3, 1e-3, 1e-3);
        add_geom(m, (uint32_t)i, i == 1 ? cone : cyl);
    }
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], m);
    s[1].root_pose.p[2] = 0.12;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.warmup_steps = 200; /* let it land during warm-up so the contact arena has grown */
    struct hs_world *w = NULL;
    struct hs_diag d;
    assert_int_equal(hs_world_create(&p, s, 2, &w, &d), 0);
    for (int i = 0; i < 300; i++) /* land (warm-up restores the start pose) */
        hs_world_step(w);
    unsigned long contacts = 0;
    assert_true(hs_heap_counter_active); /* built only without sanitizers: counts for real */
    hs_heap_counting = 1;
    for (int i = 0; i < 1000; i++) {
        hs_world_set_joint_effort(w, 1, 1, 0.1 * sin(i * 0.01));
        hs_world_set_track_speed(w, 1, 2, 0.1);
        hs_world_step(w);
        contacts += hs_world_contact_count(w);
    }
    hs_heap_counting = 0;
    print_message("heap calls in 1000 steps: %ld (contacts per step %.1f)\n", hs_heap_calls,
                  contacts / 1000.0);
    assert_true(contacts > 1000); /* the scene really collided */
    assert_int_equal(hs_heap_calls, 0);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(m);
}

/* Contacts that grow after create: cubes that start in the air (the warm-up touches nothing)
 * land on the floor, yet no step allocates, because create sized ODE's contact and step arenas
 * for the most contacts a step can make (src/world/world_reserve.c). With more cubes than that
 * reserve holds (1024 contacts, 4 per cube), the extra points are dropped and counted. */
static void land_cubes(uint32_t n, bool stacked, uint32_t *ret_contacts, uint64_t *ret_dropped,
                       uint32_t *ret_reserved)
{
    struct hs_model *floor = mb_floor();
    struct hs_model *cube = mb_cube(0.1, 1.0);
    struct hs_world_body_spec *s = calloc(n + 1, sizeof *s);
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    for (uint32_t i = 1; i <= n; i++) {
        hs_world_spec_default(&s[i], cube);
        s[i].root_pose.p[0] = stacked ? 0.01 * (i % 3) : 0.2 * (i % 20);
        s[i].root_pose.p[1] = stacked ? 0 : 0.2 * (i / 20);
        s[i].root_pose.p[2] = stacked ? 0.06 + 0.102 * i : 0.3;
    }
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = NULL;
    struct hs_diag d;
    assert_int_equal(hs_world_create(&p, s, n + 1, &w, &d), 0);
    hs_heap_calls = 0;
    hs_heap_counting = 1;
    for (int i = 0; i < 400; i++) /* 0.23 m of fall take 0.22 s */
        assert_int_equal(hs_world_step(w), 0);
    hs_heap_counting = 0;
    struct hs_world_health_summary h;
    hs_world_health_summary(w, &h);
    *ret_contacts = hs_world_contact_count(w);
    *ret_dropped = h.contacts_dropped;
    *ret_reserved = h.contacts_reserved;
    print_message("%u cubes landing%s: %ld heap calls in 400 steps, %u contacts at the end, %llu "
                  "dropped, %u reserved\n",
                  n, stacked ? " on each other" : "", hs_heap_calls, *ret_contacts,
                  (unsigned long long)h.contacts_dropped, h.contacts_reserved);
    assert_int_equal(hs_heap_calls, 0);
    hs_world_destroy(w);
    free(s);
    mb_free(cube);
    mb_free(floor);
}

static void test_contacts_growing_after_create_make_no_heap_call(void **state)
{
    (void)state;
    uint32_t contacts, reserved;
    uint64_t dropped;
    land_cubes(16, false, &contacts, &dropped, &reserved);
    assert_int_equal(contacts, 16 * 4); /* every cube on its four corners */
    assert_int_equal(dropped, 0);
    land_cubes(300, false, &contacts, &dropped, &reserved);
    assert_int_equal(reserved, 1024);
    assert_int_equal(contacts, 1024); /* 1200 found, the reserve made */
    assert_true(dropped >= 176);
    /* A tower: the cubes land on each other, one island of every body and contact, the largest
     * ODE's step memory must hold. */
    land_cubes(60, true, &contacts, &dropped, &reserved);
    assert_true(contacts > 60); /* on the floor and on each other */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_makes_no_heap_call),
        cmocka_unit_test(test_contacts_growing_after_create_make_no_heap_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
