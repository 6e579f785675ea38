/* A RangeSensor's values bound to DBC signals by the names its kind declares (r0, r1, ...; see
 * src/plant/sensors/README.md), with no range-specific code in src/bench/can/dbc_bind.c: the
 * range bench of tests/sensors (range_mast.wrl over range_scene.wrl) with a DBC board sending
 * tests/canio/range.dbc's RangeScan, over a socketpair bus at 1 ms in simulated time.
 *
 * Geometry (as tests/sensors/test_range_sensor.c): SCAN at 1.5 m scans -0.5 .. 0.5 rad in 0.25
 * rad steps, so ray k reads 1.5 / cos(-0.5 + 0.25 k); DOWN at 1 m reads the floor at 1.0 m.
 * The signals have a 1 mm step, so the decoded value is the exact distance rounded to the
 * step: tolerance half a step (plus 1e-9 for the cast). Also: a value the kind does not
 * declare is refused at attach, naming the binding's line and the value. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "canio_rig.h"
#include "hilsim/can_dbc.h"

#define STEP_M 0.001

static const char *source_dir(void)
{
    const char *s = getenv("HS_SOURCE_DIR");
    return s ? s : ".";
}

/* The bench's YAML with `scan_right` as the value bound to the Right signal. */
static void yaml(char *buf, size_t size, const char *scan_right)
{
    snprintf(buf, size,
             "bench:\n  name: range-dbc-%d\n"
             "models:\n  - name: mast\n    file: ../sensors/range_mast.wrl\n"
             "  - name: scene\n    file: ../sensors/range_scene.wrl\n    static: true\n"
             "rt:\n  period_ns: 1000000\n"
             "controller:\n  type: pd_hold\n  defaults: {kp: 10, kd: 1}\n"
             "can:\n"
             "  buses:\n    - {name: main, interface: vcan0}\n"
             "  nodes:\n"
             "    - name: mast-board\n"
             "      bus: main\n"
             "      protocol: dbc\n"
             "      dbc:\n"
             "        file: range.dbc\n"
             "        bindings:\n"
             "          - {message: RangeScan, signal: Left, from: sensor.SCAN.r0}\n"
             "          - {message: RangeScan, signal: Centre, from: sensor.SCAN.r2}\n"
             "          - {message: RangeScan, signal: Right, from: sensor.SCAN.%s}\n"
             "          - {message: RangeScan, signal: Down, from: sensor.DOWN.r0}\n"
             "        tx:\n"
             "          - {message: RangeScan, schedule: cyclic, period_s: 0.01}\n",
             (int)getpid(), scan_right);
}

static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.12g, want %.12g (tolerance %g)", got, want, tol);
}

static void test_range_values_reach_dbc_signals(void **state)
{
    (void)state;
    char dir[4096], text[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/tests/canio", source_dir());
    yaml(text, sizeof text, "r4");
    struct canio_rig rig;
    assert_int_equal(canio_rig_open(&rig, NULL, text, dir, true), 0);
    snprintf(path, sizeof path, "%s/range.dbc", dir);
    struct hs_dbc *dbc = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_dbc_load_file(path, &dbc, &d), 0);
    const struct hs_dbc_message *m = hs_dbc_find_by_name(dbc, "RangeScan");
    assert_non_null(m);
    /* 100 ticks: ten scans done (100 Hz), ten cyclic frames; check the last. */
    struct hs_can_frame last = {0};
    unsigned frames = 0;
    for (int i = 0; i < 100; i++) {
        assert_int_equal(canio_rig_tick(&rig), 0);
        struct hs_can_frame f[16];
        int n = canio_recv(&rig, 0, f, 16);
        for (int k = 0; k < n; k++)
            if (f[k].id == m->id) {
                last = f[k];
                frames++;
            }
    }
    assert_int_equal(frames, 10);
    assert_int_equal(last.len, 8);
    const char *sig[4] = {"Left", "Centre", "Right", "Down"};
    const double want[4] = {1.5 / cos(-0.5), 1.5, 1.5 / cos(0.5), 1.0};
    for (int k = 0; k < 4; k++) {
        double v = NAN;
        assert_int_equal(
            hs_dbc_signal_decode(hs_dbc_signal_by_name(m, sig[k]), last.data, last.len, &v), 0);
        printf("%-6s %.3f m (exact %.9f)\n", sig[k], v, want[k]);
        assert_near(v, want[k], STEP_M / 2 + 1e-9);
    }
    hs_dbc_free(dbc);
    canio_rig_close(&rig);
}

/* SCAN has five rays (r0 .. r4): r5 is refused where the binding is written. */
static void test_undeclared_value_refused(void **state)
{
    (void)state;
    char dir[4096], text[4096];
    snprintf(dir, sizeof dir, "%s/tests/canio", source_dir());
    yaml(text, sizeof text, "r5");
    const struct hs_config *cfg = NULL;
    struct hs_bench *bench = NULL;
    struct hs_bench_can *can = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_config_load_buffer(text, strlen(text), "bad.yaml", dir, &cfg, &d), 0);
    assert_int_equal(hs_bench_create(cfg, &bench, &d), 0);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    assert_int_equal(hs_bench_can_attach(bench, &o, &can, &d), -EINVAL);
    char msg[1024];
    hs_diag_format(&d, msg, sizeof msg);
    printf("%s\n", msg);
    int line = 1;
    for (const char *p = text; p < strstr(text, "signal: Right"); p++)
        line += *p == '\n';
    char want[256];
    snprintf(want, sizeof want, "bad.yaml:%d:", line);
    assert_non_null(strstr(msg, want));
    assert_non_null(strstr(msg, "sensor 'SCAN' declares no value 'r5'"));
    close(sv[1]);
    hs_bench_destroy(bench);
    hs_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_range_values_reach_dbc_signals),
                                       cmocka_unit_test(test_undeclared_value_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
