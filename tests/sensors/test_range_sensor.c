/* RangeSensor through the sensor kind registry (src/plant/sensors/sensor_range.c), checked
 * against geometry: a bench of range_mast.wrl over range_scene.wrl, ticked offline. A ray
 * down from 1 m reads the floor at 1 m, one onto the box top 0.6 m, a scanning sensor at
 * 1.5 m reads 1.5 / cos(a) per ray; beyond maxDistance reads +inf, under minDistance -inf.
 * Tolerance 1e-9 m: ODE's ray-box test is closed-form in double precision and the scene is
 * static, so only rounding separates it from the exact value. Also: the scan takes the ticks
 * its scanRate says (samples count), and the layout the users read (value count, unit,
 * params), and that the readings reach a shm client through the generic readings section. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/bench.h"
#include "hilsim/client.h"
#include "hilsim/io_shm.h"

#define PERIOD_NS 1000000LL
#define TOL_M 1e-9

struct fx {
    const struct hs_config *cfg;
    struct hs_bench *b;
    int64_t now;
    uint64_t tick;
};

static const char *source_dir(void)
{
    const char *s = getenv("HS_SOURCE_DIR");
    return s ? s : HS_TEST_SOURCE_DIR;
}

static void make(struct fx *f)
{
    memset(f, 0, sizeof *f);
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "bench:\n  name: range-%d\n"
             "models:\n  - name: mast\n    file: range_mast.wrl\n"
             "  - name: scene\n    file: range_scene.wrl\n    static: true\n"
             "rt:\n  period_ns: %lld\n"
             "controller:\n  type: pd_hold\n  defaults: {kp: 10, kd: 1}\n"
             "shm:\n  enabled: true\n",
             (int)getpid(), PERIOD_NS);
    char base[1024];
    snprintf(base, sizeof base, "%s/tests/sensors", source_dir());
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, strlen(yaml), "test.yaml", base, &f->cfg, &d) < 0)
        fail_msg("config: %s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    if (hs_bench_create(f->cfg, &f->b, &d) < 0)
        fail_msg("bench: %s", d.msg);
}

static void ticks(struct fx *f, int n)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(hs_bench_tick(f->b, f->now, f->tick), 0);
        f->now += PERIOD_NS;
        f->tick++;
    }
}

static void done(struct fx *f)
{
    hs_bench_destroy(f->b);
    hs_config_free(f->cfg);
}

static const struct hs_bench_sensor *sensor(struct fx *f, const char *name)
{
    int i = hs_bench_find_sensor(f->b, name, HS_SENSOR_RANGE);
    if (i < 0)
        fail_msg("no range sensor %s on the bench", name);
    return hs_bench_sensor(f->b, (uint32_t)i);
}

static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.12g, want %.12g (tolerance %g)", got, want, tol);
}

static void test_single_rays_read_the_geometry(void **state)
{
    (void)state;
    struct fx f;
    make(&f);
    /* From the first tick on (the first scan is taken at create), and after 50 ticks. */
    for (int round = 0; round < 2; round++) {
        ticks(&f, round ? 50 : 1);
        const struct hs_bench_sensor *down = sensor(&f, "DOWN"), *onbox = sensor(&f, "ONBOX");
        assert_int_equal(down->layout.nvalues, 1);
        assert_near(down->values[0], 1.0, TOL_M);
        assert_near(onbox->values[0], 0.6, TOL_M);
        /* Out of range, as documented (REP 117): +inf beyond maxDistance, -inf under
         * minDistance, +inf when nothing is in the way. */
        assert_true(isinf(sensor(&f, "SHORT")->values[0]) && sensor(&f, "SHORT")->values[0] > 0);
        assert_true(isinf(sensor(&f, "NEAR")->values[0]) && sensor(&f, "NEAR")->values[0] < 0);
        assert_true(isinf(sensor(&f, "LEVEL")->values[0]) && sensor(&f, "LEVEL")->values[0] > 0);
    }
    done(&f);
}

static void test_scan_reads_each_ray_and_keeps_its_rate(void **state)
{
    (void)state;
    struct fx f;
    make(&f);
    const struct hs_bench_sensor *scan = sensor(&f, "SCAN");
    /* scanAngle 1.0, scanStep 0.25: rays at -0.5, -0.25, 0, 0.25, 0.5 rad. */
    assert_int_equal(scan->layout.nvalues, 5);
    assert_string_equal(scan->layout.kind, "range");
    assert_string_equal(scan->layout.unit, "m");
    assert_near(scan->layout.param[0], -0.5, 1e-12);
    assert_near(scan->layout.param[1], 0.25, 1e-12);
    assert_near(scan->layout.param[3], 5.0, 1e-12);
    const struct hs_sensor_reading *r =
        hs_bench_sensor_reading(f.b, (uint32_t)(scan - hs_bench_sensor(f.b, 0)));
    ticks(&f, 100);
    for (uint32_t k = 0; k < 5; k++) {
        double a = -0.5 + 0.25 * k;
        assert_near(scan->values[k], 1.5 / cos(a), TOL_M);
    }
    /* 100 Hz at a 1 kHz tick: one finished scan per 10 ticks. */
    assert_int_equal(r->samples, 10);
    /* A one-ray sensor at scanRate 1000 finishes one per tick. */
    int down = hs_bench_find_sensor(f.b, "DOWN", HS_SENSOR_RANGE);
    assert_int_equal(hs_bench_sensor_reading(f.b, (uint32_t)down)->samples, 100);
    done(&f);
}

/* A libhilsim-client in the same process finds the range sensors by name in the readings
 * section, with their kind, unit and layout, and reads the same distances. */
static void test_readings_reach_a_shm_client(void **state)
{
    (void)state;
    struct fx f;
    make(&f);
    struct hs_bench_shm *shm;
    struct hs_diag d = {0};
    if (hs_bench_shm_attach(f.b, &shm, &d) < 0)
        fail_msg("shm attach: %s", d.msg);
    struct hs_client *c;
    char err[HS_CLIENT_ERRBUF_MIN], name[64];
    snprintf(name, sizeof name, "range-%d", (int)getpid());
    if (hs_client_attach(name, &c, err, sizeof err) < 0)
        fail_msg("client attach: %s", err);
    ticks(&f, 30);
    /* Every bench sensor is there, whatever its kind. */
    assert_int_equal(hs_client_reading_count(c), hs_bench_sensor_count(f.b));
    uint32_t nv = hs_client_reading_value_count(c), scan_i, down_i;
    assert_int_equal(hs_client_find_reading(c, "SCAN", &scan_i), 0);
    assert_int_equal(hs_client_find_reading(c, "DOWN", &down_i), 0);
    assert_int_equal(hs_client_find_reading(c, "NOPE", &down_i), -ENOENT);
    const struct hs_shm_reading_desc *scan = hs_client_reading(c, scan_i),
                                     *down = hs_client_reading(c, down_i);
    assert_string_equal(scan->kind, "range");
    assert_string_equal(scan->unit, "m");
    assert_int_equal(scan->value_count, 5);
    assert_near(scan->param[0], -0.5, 1e-12);
    assert_near(scan->param[1], 0.25, 1e-12);
    double *v = calloc(nv, sizeof *v);
    struct hs_shm_reading_stamp *st = calloc(hs_client_reading_count(c), sizeof *st);
    uint64_t tick = 0;
    assert_int_equal(hs_client_read_readings(c, &tick, st, v), 0);
    assert_int_equal(tick, 30);
    assert_near(v[down->value_index], 1.0, TOL_M);
    for (uint32_t k = 0; k < 5; k++)
        assert_near(v[scan->value_index + k], 1.5 / cos(-0.5 + 0.25 * k), TOL_M);
    assert_int_equal(st[scan_i].samples, 3); /* 30 ticks at 10 ticks a scan */
    free(v);
    free(st);
    hs_client_detach(c);
    done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_rays_read_the_geometry),
        cmocka_unit_test(test_scan_reads_each_ray_and_keeps_its_rate),
        cmocka_unit_test(test_readings_reach_a_shm_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
