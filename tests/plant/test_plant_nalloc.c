/* hs_plant_apply_commands and hs_plant_update_sensors make no heap call over 1000 ticks. The
 * test binary interposes malloc and friends (tests/common/call_counter.c) and counts the calls
 * made while a flag is set. Labelled "nosan": ASan replaces the allocator itself. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/call_counter.h"
#include "hilsim/plant.h"
#include "plant_test_model.h"

static void test_tick_path_makes_no_heap_call(void **state)
{
    (void)state;
    /* Every feature on: three joints in all modes, delays, noise, all sensor kinds. */
    struct hs_model *m = tm_new(4, 3);
    m->links[2].axis[2] = 0, m->links[2].axis[1] = 1;
    m->links[3].joint_type = HS_JOINT_SLIDE;
    m->links[3].ulimit = 0.1, m->links[3].llimit = -0.1;
    m->links[2].ulimit = 1, m->links[2].llimit = -1;
    m->sensors[0].type = HS_SENSOR_ACCEL, m->sensors[0].link = 2;
    m->sensors[1].type = HS_SENSOR_GYRO, m->sensors[1].link = 2;
    m->sensors[2].type = HS_SENSOR_FORCE, m->sensors[2].link = 3;
    struct hs_plant_params params;
    assert_int_equal(hs_plant_params_init(m, &params), 0);
    params.seed = 3;
    for (uint32_t j = 0; j < params.njoints; j++) {
        params.joints[j].command_delay_ticks = 2;
        params.joints[j].reading_delay_ticks = 3;
        params.joints[j].actuator.timeout_ns = 20000000;
        params.joints[j].actuator.safe = HS_SAFE_HOLD;
        params.joints[j].actuator.hold_kp = 5;
        params.joints[j].actuator.coulomb = 0.01;
        params.joints[j].actuator.viscous = 0.01;
        params.joints[j].actuator.torque_max = 2;
        params.joints[j].encoder.velocity_window = 8;
    }
    params.joints[1].actuator.velocity_loop = HS_VELOCITY_LOOP_ODE_MOTOR;
    for (uint32_t s = 0; s < params.nsensors; s++) {
        params.sensors[s].channel[0].white_std = 0.01;
        params.sensors[s].channel[0].bias_rw_std = 0.01;
        params.sensors[s].channel[1].white_std = 0.01;
        params.sensors[s].rate_divider = 2;
        params.sensors[s].delay_ticks = 1;
    }
    struct hs_world *w = tm_world(m, -9.80665, NULL, NULL);
    assert_non_null(w);
    struct hs_plant *p = NULL;
    struct hs_diag d;
    assert_int_equal(hs_plant_create(w, 0, m, &params, &p, &d), 0);

    unsigned long in_plant = 0;
    for (int k = 1; k <= 1000; k++) {
        int64_t now = (int64_t)k * 1000000;
        uint32_t mode = (uint32_t)(k / 100) % HS_JOINT_MODE_MAX;
        for (uint32_t j = 0; j < hs_plant_joint_count(p); j++) {
            struct hs_joint_command *c = hs_plant_command(p, j);
            c->mode = mode;
            c->q = 0.3 * sin(k * 0.01), c->kp = 3, c->kd = 0.1, c->tau_ff = 0.05;
            c->current = 0.2, c->velocity = 0.5;
            /* Commands stop between ticks 600 and 700: the fallback runs too. */
            if (k < 600 || k > 700)
                c->rx_time_ns = now, c->seq++;
        }
        heap_calls = 0;
        counting = 1;
        hs_plant_apply_commands(p, now);
        counting = 0;
        in_plant += heap_calls;
        hs_world_step(w);
        heap_calls = 0;
        counting = 1;
        hs_plant_update_sensors(p, now, (uint64_t)k);
        counting = 0;
        in_plant += heap_calls;
    }
    assert_int_equal(in_plant, 0);
    struct hs_plant_joint_counters c;
    hs_plant_joint_counters(p, 0, &c);
    assert_true(c.stale_events >= 1); /* the fallback path was exercised */
    hs_plant_destroy(p);
    hs_world_destroy(w);
    hs_plant_params_free(&params);
    tm_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tick_path_makes_no_heap_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
