/* A model that loads makes valid plant parameters, and a plant parameter that is made invalid
 * later (an API user, a config) is reported at the joint: its name, the field, and the file,
 * line and column of its Joint node. Real ODE world, real plant. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/delay_line.h"
#include "hilsim/model.h"
#include "hilsim/plant.h"
#include "hilsim/world.h"

struct fix {
    char path[4096];
    struct hs_model *m;
    struct hs_plant_params p;
    double *arm;
    struct hs_world *w;
};

static void setup_world(struct fix *f)
{
    const char *dir = getenv("HS_MODEL_LENIENT_DIR");
    assert_non_null(dir);
    snprintf(f->path, sizeof f->path, "%s/motor_zero_means_default.wrl", dir);
    struct hs_diag d = {0};
    assert_int_equal(hs_model_load(f->path, &f->m, &d), 0);
    assert_int_equal(hs_plant_params_init(f->m, &f->p), 0);
    f->arm = calloc(f->m->nlinks, sizeof *f->arm);
    assert_non_null(f->arm);
    hs_plant_armature(f->m, &f->p, f->arm);
    struct hs_world_params wp;
    hs_world_params_default(&wp);
    struct hs_world_body_spec spec = {.model = f->m, .armature = f->arm};
    hs_pose_identity(&spec.root_pose);
    assert_int_equal(hs_world_create(&wp, &spec, 1, &f->w, &d), 0);
}

static void teardown_world(struct fix *f)
{
    hs_world_destroy(f->w);
    free(f->arm);
    hs_plant_params_free(&f->p);
    hs_model_free(f->m);
}

/* gearRatio 0 in the file: the loader warned and chose 1, so the plant takes the defaults. */
static void test_loaded_zero_gear_makes_a_valid_plant(void **state)
{
    (void)state;
    struct fix f = {0};
    setup_world(&f);
    struct hs_plant *pl = NULL;
    struct hs_diag d = {0};
    int r = hs_plant_create(f.w, 0, f.m, &f.p, &pl, &d);
    if (r < 0)
        fprintf(stderr, "%s:%d:%d: %s\n", d.file, d.line, d.column, d.msg);
    assert_int_equal(r, 0);
    hs_plant_destroy(pl);
    teardown_world(&f);
}

static void expect_joint_error(struct fix *f, const char *field)
{
    struct hs_plant *pl = NULL;
    struct hs_diag d = {0};
    assert_true(hs_plant_create(f->w, 0, f->m, &f->p, &pl, &d) < 0);
    assert_null(pl);
    if (strcmp(d.file, f->path) || d.line != 11 || d.column != 13 || !strstr(d.msg, "joint ARM") ||
        !strstr(d.msg, field))
        fprintf(stderr, "got %s:%d:%d: %s\n", d.file, d.line, d.column, d.msg);
    assert_string_equal(d.file, f->path);
    assert_int_equal(d.line, 11);   /* DEF ARM Joint { */
    assert_int_equal(d.column, 13); /* at "Joint" */
    assert_non_null(strstr(d.msg, "joint ARM"));
    assert_non_null(strstr(d.msg, field));
}

static void test_invalid_params_name_joint_and_line(void **state)
{
    (void)state;
    struct fix f = {0};
    setup_world(&f);
    assert_int_equal(f.p.njoints, 1);
    f.p.joints[0].actuator.gear_ratio = 0;
    expect_joint_error(&f, "actuator.gear_ratio invalid");
    f.p.joints[0].actuator.gear_ratio = 1;
    f.p.joints[0].encoder.counts_per_motor_rev = 0;
    expect_joint_error(&f, "encoder.counts_per_motor_rev invalid");
    f.p.joints[0].encoder.counts_per_motor_rev = 1;
    f.p.joints[0].reading_delay_ticks = HS_DELAY_TICKS_MAX + 1;
    expect_joint_error(&f, "joints[0].reading_delay_ticks 100001 above 100000");
    teardown_world(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loaded_zero_gear_makes_a_valid_plant),
        cmocka_unit_test(test_invalid_params_name_joint_and_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
