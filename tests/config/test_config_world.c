/* The config's physics defaults are the world's documented defaults (hs_world_params_default),
 * kept separately so hs_config does not need ODE; this catches the two drifting apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "hilsim/config.h"
#include "hilsim/world.h"

static void test_physics_defaults_match_world(void **state)
{
    (void)state;
    struct hs_config cfg;
    struct hs_world_params w;
    hs_config_defaults(&cfg);
    hs_world_params_default(&w);
    const struct hs_world_params *c = &cfg.physics;
    assert_true(c->step_s == w.step_s);
    assert_int_equal(c->substeps, w.substeps);
    assert_int_equal(c->solver, w.solver);
    assert_int_equal(c->quick_iterations, w.quick_iterations);
    for (int i = 0; i < 3; i++)
        assert_true(c->gravity[i] == w.gravity[i]);
    assert_true(c->erp == w.erp && c->cfm == w.cfm);
    assert_true(c->friction == w.friction);
    assert_true(c->bounce == w.bounce && c->bounce_min_vel == w.bounce_min_vel);
    assert_true(c->contact_erp == w.contact_erp && c->contact_cfm == w.contact_cfm);
    assert_true(c->surface_layer == w.surface_layer);
    assert_int_equal(c->max_contacts, w.max_contacts);
    assert_true(c->linear_damping == w.linear_damping);
    assert_true(c->angular_damping == w.angular_damping);
    assert_int_equal(c->self_collision, w.self_collision);
    assert_int_equal(c->contactless, w.contactless);
    assert_int_equal(c->warmup_steps, w.warmup_steps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_physics_defaults_match_world),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
