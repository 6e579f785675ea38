/* moteus through the CAN I/O module on the host: tests/canio/arm2-moteus-guest.yaml's bench
 * (SHOULDER servo 1, ELBOW servo 2, on a CAN FD bus) over a socketpair bus, ticked in simulated
 * time at its 10 ms, the peer packing subframes by hand from mjbots/moteus docs/protocol/can.md
 * and registers.md. The same script as the RT guest's moteus_peer.py, judged against the plant.
 *
 * Each tick the host sends, per servo, one frame with reply requested: mode = position (int8),
 * position and feed-forward torque (float, 0x020 and 0x022), and a float query of position,
 * velocity and torque (0x001..0x003). The feed-forward is the integral the host computes from
 * the telemetry, so gravity leaves no static error: 0.01 rad after 6 s. Telemetry against the
 * reading the tick's poll saw (before its physics): floats, so 1e-6 relative. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "canio_rig.h"

#define TWO_PI 6.283185307179586
#define SH 1
#define EL 2

static struct canio_rig rig;
static int joint_of[3];
static const double TARGET[3] = {0, 0.8, 1.0}; /* rad */

static void frame(unsigned servo, const uint8_t *d, unsigned len)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = 0x8000 | servo; /* from source 0, reply requested: a 29-bit frame (ID > 0x7fff) */
    f.flags = HS_CAN_FLAG_FD | HS_CAN_FLAG_EXT;
    f.len = (uint8_t)len;
    memcpy(f.data, d, len);
    assert_int_equal(canio_send_frame(&rig, 0, &f), 1);
}

/* mode position, position and ff torque as floats, then a float query of 0x001..0x003: 18
 * bytes, padded with NOPs to the FD length 20 */
static void command(unsigned servo, double pos_rev, double ff_nm)
{
    uint8_t d[20] = {0x01, 0x00, 0x0a, 0x0c, 0x01, 0x20}, *p = d + 6;
    float f = (float)pos_rev;
    memcpy(p, &f, 4);
    p[4] = 0x0d, p[5] = 0x22; /* one float write at 0x022 */
    f = (float)ff_nm;
    memcpy(p + 6, &f, 4);
    p[10] = 0x1f, p[11] = 0x01; /* read 3 floats from 0x001 */
    p[12] = p[13] = 0x50;
    frame(servo, d, 20);
}

struct telemetry {
    double pos_rev, vel_rev_s, torque_nm;
    unsigned n;
};
static struct telemetry T[3];

static void hear(void)
{
    struct hs_can_frame f[64];
    int n;
    while ((n = canio_recv(&rig, 0, f, 64)) > 0)
        for (int i = 0; i < n; i++) {
            unsigned servo = f[i].id >> 8;
            assert_true(f[i].flags & HS_CAN_FLAG_FD);
            assert_int_equal(f[i].id & 0xFF, 0); /* to source 0 */
            assert_true(servo == SH || servo == EL);
            const uint8_t *d = f[i].data;
            /* 0x2f: reply, float, count 3; register 0x001 */
            assert_true(d[0] == 0x2f && d[1] == 0x01);
            float v[3];
            memcpy(v, d + 2, sizeof v);
            T[servo] = (struct telemetry){v[0], v[1], v[2], T[servo].n + 1};
        }
}

static const struct hs_joint_reading *joint(unsigned servo)
{
    return hs_bench_joint_reading(rig.bench, (uint32_t)joint_of[servo]);
}

static int setup(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/canio/arm2-moteus-guest.yaml", src ? src : ".");
    if (canio_rig_open(&rig, path, NULL, NULL, true) < 0)
        return -1;
    joint_of[SH] = hs_bench_find_joint(rig.bench, "SHOULDER");
    joint_of[EL] = hs_bench_find_joint(rig.bench, "ELBOW");
    return joint_of[SH] >= 0 && joint_of[EL] >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    canio_rig_close(&rig);
    return 0;
}

static void test_moteus_host_over_the_bus(void **state)
{
    (void)state;
    double integ[3] = {0};
    struct hs_joint_reading seen[3];
    for (int k = 0; k < 600; k++) {
        for (unsigned s = SH; s <= EL; s++) {
            double q = T[s].n ? T[s].pos_rev * TWO_PI : joint(s)->q;
            integ[s] += (TARGET[s] - q) * 0.01;
            command(s, TARGET[s] / TWO_PI, fmax(-50, fmin(50, 300 * integ[s])));
            seen[s] = *joint(s);
        }
        assert_int_equal(canio_rig_tick(&rig), 0);
        hear();
    }
    printf("position mode with feed-forward: SHOULDER %.5f (target %.2f), ELBOW %.5f (%.2f)\n",
           joint(SH)->q, TARGET[SH], joint(EL)->q, TARGET[EL]);
    for (unsigned s = SH; s <= EL; s++) {
        assert_int_equal(T[s].n, 600);
        assert_true(fabs(joint(s)->q - TARGET[s]) < 0.01);
        /* telemetry of the last tick against the reading its poll saw */
        assert_true(fabs(T[s].pos_rev * TWO_PI - seen[s].q) < 1e-6 * (1 + fabs(seen[s].q)));
        assert_true(fabs(T[s].vel_rev_s * TWO_PI - seen[s].dq) < 1e-6 * (1 + fabs(seen[s].dq)));
        assert_true(fabs(T[s].torque_nm - seen[s].torque) < 1e-5 * (1 + fabs(seen[s].torque)));
    }
    /* stop the shoulder (mode 0, no reply asked): the output goes off and the arm falls */
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = 0x0001, f.flags = HS_CAN_FLAG_FD, f.len = 3;
    f.data[0] = 0x01, f.data[1] = 0x00, f.data[2] = 0x00;
    assert_int_equal(canio_send_frame(&rig, 0, &f), 1);
    double q0 = joint(SH)->q;
    for (int k = 0; k < 50; k++) {
        command(EL, TARGET[EL] / TWO_PI, fmax(-50, fmin(50, 300 * integ[EL])));
        assert_int_equal(canio_rig_tick(&rig), 0);
        hear();
    }
    printf("stopped: SHOULDER moved %.3f rad in 0.5 s\n", joint(SH)->q - q0);
    assert_true(fabs(joint(SH)->q - q0) > 0.02);
    struct hs_bench_can_node_stats st;
    for (uint32_t i = 0; i < 2; i++) {
        assert_int_equal(hs_bench_can_node_stats(rig.can, i, &st), 0);
        assert_string_equal(st.protocol, "moteus");
        assert_int_equal(st.node.frames_bad, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moteus_host_over_the_bus),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
