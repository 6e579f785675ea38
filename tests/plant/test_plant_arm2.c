/* The plant on the bundled two-joint arm (models/arm2.wrl, loaded by hs_model_load): defaults
 * come from the model's Joint fields and sensors, and a PD-held upright arm reads what statics
 * says at its tip IMU and wrist force sensor. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/plant.h"

#define G 9.80665

static struct hs_model *load_arm(void)
{
    const char *src = getenv("HS_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/models/arm2.wrl", src ? src : ".");
    struct hs_model *m = NULL;
    struct hs_diag d;
    if (hs_model_load(path, &m, &d))
        fail_msg("cannot load %s: %s", path, d.msg);
    return m;
}

static int find_sensor(const struct hs_model *m, const char *name)
{
    for (uint32_t s = 0; s < m->nsensors; s++)
        if (!strcmp(m->sensors[s].name, name))
            return (int)s;
    fail_msg("no sensor %s", name);
    return -1;
}

static void test_defaults_from_model(void **state)
{
    (void)state;
    struct hs_model *m = load_arm();
    struct hs_plant_params p;
    assert_int_equal(hs_plant_params_init(m, &p), 0);
    assert_int_equal(p.njoints, 2);
    assert_true(p.joints[0].actuator.gear_ratio == 50 && p.joints[1].actuator.gear_ratio == 30);
    assert_true(p.joints[1].actuator.gear_efficiency == 0.9);
    assert_true(p.joints[0].encoder.counts_per_motor_rev == 4096);
    assert_true(p.joints[1].actuator.dq_max == 8.0 && p.joints[0].actuator.q_max == 2.6);
    int ft = find_sensor(m, "WRIST_FT");
    assert_true(p.sensors[ft].channel[0].range[2] == 400 &&
                p.sensors[ft].channel[1].range[0] == 10);
    double *arm = calloc(m->nlinks, sizeof *arm);
    assert_int_equal(hs_plant_armature(m, &p, arm), 0);
    int shoulder = hs_model_find_link(m, "SHOULDER");
    assert_true(shoulder >= 0 && fabs(arm[shoulder] - 50.0 * 50 * 3e-5) < 1e-15);
    free(arm);
    hs_plant_params_free(&p);
    hs_model_free(m);
}

static void test_upright_arm_held_by_pd(void **state)
{
    (void)state;
    struct hs_model *m = load_arm();
    struct hs_plant_params p;
    assert_int_equal(hs_plant_params_init(m, &p), 0);
    double *arm = calloc(m->nlinks, sizeof *arm);
    hs_plant_armature(m, &p, arm);
    struct hs_world_params wp;
    hs_world_params_default(&wp);
    wp.solver = HS_SOLVER_STANDARD;
    struct hs_world_body_spec spec = {.model = m, .armature = arm};
    hs_pose_identity(&spec.root_pose);
    double q0[8] = {0};
    int elbow = hs_model_find_link(m, "ELBOW");
    assert_true(elbow >= 0 && (uint32_t)elbow < 8);
    q0[elbow] = 0.1; /* start off the top: the PD has work to do */
    spec.q0 = m->nlinks <= 8 ? q0 : NULL;
    struct hs_world *w = NULL;
    struct hs_plant *pl = NULL;
    struct hs_diag d;
    assert_int_equal(hs_world_create(&wp, &spec, 1, &w, &d), 0);
    assert_int_equal(hs_plant_create(w, 0, m, &p, &pl, &d), 0);
    int j0 = hs_plant_find_joint_id(pl, 0), j1 = hs_plant_find_joint_id(pl, 1);
    assert_true(j0 >= 0 && j1 >= 0);
    *hs_plant_command(pl, (uint32_t)j0) =
        (struct hs_joint_command){.mode = HS_JOINT_MODE_POSITION, .kp = 200, .kd = 15, .seq = 1};
    *hs_plant_command(pl, (uint32_t)j1) =
        (struct hs_joint_command){.mode = HS_JOINT_MODE_POSITION, .kp = 100, .kd = 5, .seq = 1};
    for (int k = 1; k <= 4000; k++) {
        hs_plant_apply_commands(pl, k * 1000000LL);
        hs_world_step(w);
        hs_plant_update_sensors(pl, k * 1000000LL, (uint64_t)k);
    }
    const struct hs_joint_reading *r1 = hs_plant_joint_reading(pl, (uint32_t)j1);
    assert_true(fabs(r1->q) < 1e-4);
    /* The tool (1 kg, centre of mass right above the wrist sensor) presses down on it. */
    const struct hs_sensor_reading *ft =
        hs_plant_sensor_reading(pl, (uint32_t)find_sensor(m, "WRIST_FT"));
    assert_true(fabs(ft->value[2] + 1.0 * G) < 1e-3 * G);
    for (int k = 0; k < 3; k++)
        assert_true(fabs(ft->torque[k]) < 1e-3);
    const struct hs_sensor_reading *acc =
        hs_plant_sensor_reading(pl, (uint32_t)find_sensor(m, "TIP_ACCEL"));
    const struct hs_sensor_reading *gy =
        hs_plant_sensor_reading(pl, (uint32_t)find_sensor(m, "TIP_GYRO"));
    assert_true(fabs(acc->value[2] - G) < 1e-3 && fabs(acc->value[0]) < 1e-3);
    assert_true(fabs(gy->value[1]) < 1e-3);
    hs_plant_destroy(pl);
    hs_world_destroy(w);
    free(arm);
    hs_plant_params_free(&p);
    hs_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_from_model),
        cmocka_unit_test(test_upright_arm_held_by_pd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
