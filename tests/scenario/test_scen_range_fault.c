/* Scenario sensor faults on range scans (src/scenario/scen_sensor_fault.c through the kind's
 * layout), on tests/sensors/range_mast.wrl over range_scene.wrl, ticked offline. The scene is
 * static, so every beam's unfaulted value is the same each tick and each faulted value is an
 * exact function of it: scale, quantize and spikes to the bit, noise one draw per beam, delay
 * the sample count and time stamp of exactly `value` seconds before, a shm "stale" fault
 * holding a scan too. Faults that mean nothing for a scan are refused at load with
 * file:line:column and the field. The lockstep end-to-end run over shm is
 * tests/sensors/test_range_fault.py. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "scenario/scen_rig.h"

static const char *mast = "bench: {name: scen-range}\n"
                          "models:\n"
                          "  - name: mast\n"
                          "    file: @SRC@/tests/sensors/range_mast.wrl\n"
                          "  - name: scene\n"
                          "    file: @SRC@/tests/sensors/range_scene.wrl\n"
                          "    static: true\n"
                          "rt: {period_ns: 1000000}\n"
                          "controller: {type: pd_hold, defaults: {kp: 10, kd: 1}}\n";

static const struct hs_bench_sensor *sensor(struct scen_rig *r, const char *name)
{
    int i = hs_bench_find_sensor(r->bench, name, HS_SENSOR_RANGE);
    if (i < 0)
        fail_msg("no range sensor %s", name);
    return hs_bench_sensor(r->bench, (uint32_t)i);
}

static const struct hs_sensor_reading *reading(struct scen_rig *r, const char *name)
{
    return hs_bench_sensor_reading(r->bench,
                                   (uint32_t)(sensor(r, name) - hs_bench_sensor(r->bench, 0)));
}

static void tick_to(struct scen_rig *r, uint64_t k)
{
    while (r->tick < k)
        assert_int_equal(rig_tick(r), 0);
}

/* Scenario tick k is rig tick k + 1 (rig_open reads the sensors at tick 0, rig_tick counts
 * from 1). SCAN is 5 beams, 1.5 / cos(a) m; ONBOX one beam, 0.6 m. */
static void test_scale_quantize_spikes_noise_per_beam(void **state)
{
    (void)state;
    struct scen_rig r;
    rig_open(&r, mast,
             "scenario: {name: beams, duration_s: 0.1}\n"
             "steps:\n"
             "  - {at_s: 0.010, duration_s: 0.010, sensor_fault: {sensor: SCAN, kind: scale,\n"
             "     value: 2}}\n"
             "  - {at_s: 0.020, duration_s: 0.010, sensor_fault: {sensor: SCAN, kind: quantize,\n"
             "     value: 0.07}}\n"
             "  - {at_s: 0.030, duration_s: 0.010, sensor_fault: {sensor: SCAN, kind: spikes,\n"
             "     value: 0.3}}\n"
             "  - {at_s: 0.040, duration_s: 0.010, sensor_fault: {sensor: SCAN, kind: noise,\n"
             "     value: 0.01}}\n");
    const double *v = sensor(&r, "SCAN")->values;
    tick_to(&r, 10);
    double clean[5];
    for (int k = 0; k < 5; k++) {
        clean[k] = v[k];
        assert_true(fabs(clean[k] - 1.5 / cos(-0.5 + 0.25 * k)) < 1e-9);
    }
    tick_to(&r, 11);
    for (int k = 0; k < 5; k++)
        assert_true(v[k] == clean[k] * 2);
    tick_to(&r, 21);
    for (int k = 0; k < 5; k++) {
        assert_true(v[k] == 0.07 * round(clean[k] / 0.07));
        assert_true(v[k] != clean[k]); /* none of 1.5 / cos(a) is a multiple of 0.07 */
    }
    tick_to(&r, 31);
    for (int k = 0; k < 5; k++) /* probability 1: every beam spikes, each its own sign */
        assert_true(v[k] == clean[k] + 0.3 || v[k] == clean[k] - 0.3);
    tick_to(&r, 41);
    for (int k = 0; k < 5; k++) {
        assert_true(v[k] != clean[k] && fabs(v[k] - clean[k]) < 0.1); /* 10 sigma */
        for (int j = 0; j < k; j++) /* one draw per beam, not one per scan */
            assert_true(v[k] - clean[k] != v[j] - clean[j]);
    }
    tick_to(&r, 51);
    for (int k = 0; k < 5; k++)
        assert_true(v[k] == clean[k]);
    rig_close(&r);
}

/* delay 0.02 s on DOWN (one beam, one scan a tick, so undelayed its sample count grows by one
 * and its stamp by one period each tick): the scan of exactly 20 ticks before, with its
 * sample count and time stamp; the distance rides along. */
static void test_delay_holds_scans_back(void **state)
{
    (void)state;
    struct scen_rig r;
    rig_open(&r, mast,
             "scenario: {name: delay, duration_s: 0.2}\n"
             "steps:\n"
             "  - {at_s: 0.050, duration_s: 0.100, sensor_fault: {sensor: DOWN, kind: delay,\n"
             "     value: 0.02}}\n");
    const struct hs_sensor_reading *rd = reading(&r, "DOWN");
    const double *v = sensor(&r, "DOWN")->values;
    uint64_t samples[200];
    int64_t stamp[200];
    for (uint64_t k = 1; k < 200; k++) {
        tick_to(&r, k);
        samples[k] = rd->samples;
        stamp[k] = rd->time_ns;
        assert_true(fabs(v[0] - 1.0) < 1e-9);
    }
    /* undelayed (before rig tick 51, scenario tick 50), then the ring: filled with the
     * onset's scan, each scan 20 ticks late; active for rig ticks 51..150 */
    for (uint64_t k = 2; k <= 199; k++) {
        uint64_t from = k;
        if (k >= 51 && k <= 150)
            from = k - 20 < 51 ? 51 : k - 20;
        uint64_t want_n = samples[50] + (from - 50);
        int64_t want_t = stamp[50] + (int64_t)(from - 50) * 1000000;
        if (samples[k] != want_n || stamp[k] != want_t)
            fail_msg("tick %lu: samples %lu stamp %ld, want tick %lu's %lu %ld", (unsigned long)k,
                     (unsigned long)samples[k], (long)stamp[k], (unsigned long)from,
                     (unsigned long)want_n, (long)want_t);
    }
    rig_close(&r);
}

/* shm "stale" repeats every reading of its first tick, a range scan with the rest: an offset
 * that ends under it stays in the published scan until the stale fault ends. */
static void test_shm_stale_holds_a_scan(void **state)
{
    (void)state;
    struct scen_rig r;
    rig_open(&r, mast,
             "scenario: {name: stale, duration_s: 0.1}\n"
             "steps:\n"
             "  - {at_s: 0.010, duration_s: 0.020, sensor_fault: {sensor: SCAN, kind: offset,\n"
             "     value: 0.25}}\n"
             "  - {at_s: 0.020, duration_s: 0.020, shm_fault: {kind: stale}}\n");
    const double *v = sensor(&r, "SCAN")->values;
    tick_to(&r, 10);
    double clean[5];
    memcpy(clean, v, sizeof clean);
    for (uint64_t k = 11; k <= 45; k++) {
        tick_to(&r, k);
        double add = k <= 40 ? 0.25 : 0; /* offset 10..29, stale 20..39 (scenario ticks) */
        for (int b = 0; b < 5; b++)
            if (!(v[b] == clean[b] + add))
                fail_msg("tick %lu beam %d: %.12g, want %.12g", (unsigned long)k, b, v[b],
                         clean[b] + add);
    }
    rig_close(&r);
}

static void test_meaningless_faults_refused(void **state)
{
    (void)state;
    rig_expect_error(mast,
                     "scenario: {name: x, duration_s: 1}\nsteps:\n"
                     "  - {at_s: 0, sensor_fault: {sensor: DOWN, kind: stuck}}\n"
                     "  - {at_s: 0, sensor_fault: {sensor: SCAN, kind: saturate, value: 2}}\n",
                     "scen.yaml:4:5: steps[1].sensor_fault: range sensor 'SCAN': kind: saturate");
    rig_expect_error(mast,
                     "scenario: {name: x, duration_s: 1}\nsteps:\n"
                     "  - {at_s: 0, sensor_fault: {sensor: SCAN, kind: offset, value: 1,\n"
                     "     field: torque}}\n",
                     "scen.yaml:3:5: steps[0].sensor_fault: range sensor 'SCAN': field: torque");
    rig_expect_error(mast,
                     "scenario: {name: x, duration_s: 1}\nsteps:\n"
                     "  - {at_s: 0, sensor_fault: {sensor: SCAN, kind: skip_counts, value: 3}}\n",
                     "steps[0].sensor_fault: skip_counts is an encoder fault: name a joint");
    rig_expect_error(mast,
                     "scenario: {name: x, duration_s: 1}\nsteps:\n"
                     "  - {at_s: 0, sensor_fault: {sensor: NOPE, kind: stuck}}\n",
                     "scen.yaml:3:5: steps[0]: the bench has no simulated sensor 'NOPE'");
    char msg[512];
    assert_int_equal(rig_try(mast,
                             "scenario: {name: x, duration_s: 1}\nsteps:\n"
                             "  - {at_s: 0, sensor_fault: {sensor: SCAN, kind: off}}\n",
                             msg, sizeof msg),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale_quantize_spikes_noise_per_beam),
        cmocka_unit_test(test_delay_holds_scans_back),
        cmocka_unit_test(test_shm_stale_holds_a_scan),
        cmocka_unit_test(test_meaningless_faults_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
