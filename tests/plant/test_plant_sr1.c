/* The plant on the OpenHRP SR1 humanoid from the shared models (skipped when HS_SHARED_DIR is
 * absent): every sensor kind on a real model. Dropped in free fall with its drives disabled,
 * the body falls as one rigid piece, so every accelerometer reads zero specific force, every
 * gyro zero rate and every force sensor zero load (a resting robot would read +g and its
 * weight instead). The per-tick cost of apply + update is printed, not asserted. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/plant.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_free_fall_reads_nothing(void **state)
{
    (void)state;
    const char *shared = getenv("HS_SHARED_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/models/openhrp/SR1.wrl", shared ? shared : "");
    if (!shared || access(path, R_OK) != 0)
        skip();
    struct hs_model *m = NULL;
    struct hs_diag d;
    if (hs_model_load(path, &m, &d))
        fail_msg("cannot load %s: %s", path, d.msg);
    struct hs_plant_params p;
    assert_int_equal(hs_plant_params_init(m, &p), 0);
    assert_true(p.njoints >= 29);
    double *arm = calloc(m->nlinks, sizeof *arm);
    hs_plant_armature(m, &p, arm);
    struct hs_world_params wp;
    hs_world_params_default(&wp); /* QuickStep, as in production */
    struct hs_world_body_spec spec = {.model = m, .armature = arm};
    hs_pose_identity(&spec.root_pose);
    spec.root_pose.p[2] = 10.0; /* no floor: free fall */
    struct hs_world *w = NULL;
    struct hs_plant *pl = NULL;
    assert_int_equal(hs_world_create(&wp, &spec, 1, &w, &d), 0);
    assert_int_equal(hs_plant_create(w, 0, m, &p, &pl, &d), 0);
    double t_plant = 0;
    for (int k = 1; k <= 300; k++) {
        double t0 = now_s();
        hs_plant_apply_commands(pl, k * 1000000LL);
        double t1 = now_s();
        hs_world_step(w);
        double t2 = now_s();
        hs_plant_update_sensors(pl, k * 1000000LL, (uint64_t)k);
        t_plant += (t1 - t0) + (now_s() - t2);
    }
    int kinds[HS_SENSOR_TYPE_MAX] = {0};
    for (uint32_t s = 0; s < m->nsensors; s++) {
        const struct hs_sensor_reading *r = hs_plant_sensor_reading(pl, s);
        enum hs_sensor_type t = m->sensors[s].type;
        kinds[t]++;
        if (t == HS_SENSOR_ACCEL || t == HS_SENSOR_GYRO || t == HS_SENSOR_FORCE) {
            assert_int_equal(r->samples, 300);
            /* Free fall: exact zero up to ODE's solver residue (1e-6 m/s², rad/s, N, N·m). */
            for (int k = 0; k < 3; k++)
                assert_true(fabs(r->value[k]) < 1e-6 && fabs(r->torque[k]) < 1e-6);
        }
    }
    assert_true(kinds[HS_SENSOR_ACCEL] >= 1 && kinds[HS_SENSOR_GYRO] >= 1 &&
                kinds[HS_SENSOR_FORCE] >= 2);
    /* It did fall: 300 ms of g. */
    struct hs_pose root;
    hs_world_link_pose(w, 0, 0, &root);
    assert_true(fabs(root.p[2] - (10.0 - 0.5 * 9.80665 * 0.3 * 0.3)) < 0.01);
    print_message("SR1: %u joints, %u sensors: plant apply + update %.1f us per tick\n", p.njoints,
                  m->nsensors, 1e6 * t_plant / 300);
    hs_plant_destroy(pl);
    hs_world_destroy(w);
    free(arm);
    hs_plant_params_free(&p);
    hs_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_fall_reads_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
