/* Robstride through the CAN I/O module on the host: tests/canio/arm2-robstride-guest.yaml's
 * bench (SHOULDER an RS04 as motor 1, ELBOW an RS03 as motor 2, host 0xFD) on a socketpair bus,
 * ticked in simulated time at its 10 ms, the peer playing the host with frames packed here from
 * the CyberGear manual's tables (not hilsim's codec). The same script as the RT guest's
 * robstride_peer.py, judged against the plant.
 *
 * Tolerances: the host closes a PI loop over the bus (the node's PD plus an integral it computes
 * from the feedback), so gravity leaves no static error; 6 s is many time constants of the
 * loop: 0.01 rad. Feedback scaling: 16 bits over 8pi rad is 3.8e-4 rad, velocity over +-50 rad/s
 * (RS03: 50) 1.5e-3 rad/s; the frame is built from the reading the tick started from: against
 * that reading, one step. Speed
 * mode: without the firmware's integral term the loop settles at spd_ref - tau_gravity / (Kt
 * spd_kp), checked through the plant's own torque reading. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "canio_rig.h"

#define PI 3.14159265358979323846
#define HOST 0xFD
#define SH 1
#define EL 2
#define SH_TARGET 0.8
#define EL_TARGET 1.0

/* per motor: velocity range, torque range, kp and kd ranges (RS04, RS03) */
static const double RANGE[3][4] = {{0}, {15, 120, 5000, 100}, {50, 60, 5000, 100}};

static struct canio_rig rig;
static int j_sh, j_el;

static unsigned u16_of(double x, double lo, double hi)
{
    x = x < lo ? lo : x > hi ? hi : x;
    return (unsigned)((x - lo) * 65535.0 / (hi - lo));
}

static double of_u16(unsigned u, double lo, double hi)
{
    return lo + u * (hi - lo) / 65535.0;
}

static void send(unsigned type, unsigned data2, unsigned motor, const uint8_t *d)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = type << 24 | data2 << 8 | motor;
    f.flags = HS_CAN_FLAG_EXT;
    f.len = 8;
    if (d)
        memcpy(f.data, d, 8);
    assert_int_equal(canio_send_frame(&rig, 0, &f), 1);
}

static void motion(unsigned m, double p, double v, double kp, double kd, double t)
{
    const double *r = RANGE[m];
    unsigned up = u16_of(p, -4 * PI, 4 * PI), uv = u16_of(v, -r[0], r[0]);
    unsigned ukp = u16_of(kp, 0, r[2]), ukd = u16_of(kd, 0, r[3]);
    uint8_t d[8] = {up >> 8,  up & 0xFF,  uv >> 8,  uv & 0xFF,
                    ukp >> 8, ukp & 0xFF, ukd >> 8, ukd & 0xFF};
    send(1, u16_of(t, -r[1], r[1]), m, d);
}

static void write_f32(unsigned m, uint16_t index, float v)
{
    uint8_t d[8] = {index & 0xFF, index >> 8};
    memcpy(d + 4, &v, 4); /* little-endian host */
    send(18, HOST, m, d);
}

static void write_u8(unsigned m, uint16_t index, uint8_t v)
{
    uint8_t d[8] = {index & 0xFF, index >> 8, 0, 0, v};
    send(18, HOST, m, d);
}

static void read_param(unsigned m, uint16_t index)
{
    uint8_t d[8] = {index & 0xFF, index >> 8};
    send(17, HOST, m, d);
}

/* what the host last heard, per motor */
struct heard {
    unsigned feedbacks, mode, faults;
    double p, v, t;
    int read_status;
    uint16_t read_index;
    uint8_t read_value[4];
    unsigned reads, ids;
};
static struct heard H[3];

static void hear(void)
{
    struct hs_can_frame f[64];
    int n;
    while ((n = canio_recv(&rig, 0, f, 64)) > 0)
        for (int i = 0; i < n; i++) {
            assert_true(f[i].flags & HS_CAN_FLAG_EXT);
            unsigned type = f[i].id >> 24, m = f[i].id >> 8 & 0xFF;
            assert_true(m == SH || m == EL);
            const double *r = RANGE[m];
            const uint8_t *d = f[i].data;
            if (type == 2) {
                assert_int_equal(f[i].id & 0xFF, HOST);
                H[m].mode = f[i].id >> 22 & 3;
                H[m].faults = f[i].id >> 16 & 0x3F;
                H[m].p = of_u16(d[0] << 8 | d[1], -4 * PI, 4 * PI);
                H[m].v = of_u16(d[2] << 8 | d[3], -r[0], r[0]);
                H[m].t = of_u16(d[4] << 8 | d[5], -r[1], r[1]);
                H[m].feedbacks++;
            } else if (type == 17) {
                H[m].read_status = f[i].id >> 16 & 0xFF;
                H[m].read_index = (uint16_t)(d[0] | d[1] << 8);
                memcpy(H[m].read_value, d + 4, 4);
                H[m].reads++;
            } else if (type == 0) {
                assert_int_equal(f[i].id & 0xFF, 0xFE);
                H[m].ids++;
            }
        }
}

static void tick(void)
{
    assert_int_equal(canio_rig_tick(&rig), 0);
    hear();
}

static int setup(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/canio/arm2-robstride-guest.yaml", src ? src : ".");
    if (canio_rig_open(&rig, path, NULL, NULL, true) < 0)
        return -1;
    j_sh = hs_bench_find_joint(rig.bench, "SHOULDER");
    j_el = hs_bench_find_joint(rig.bench, "ELBOW");
    return j_sh >= 0 && j_el >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    canio_rig_close(&rig);
    return 0;
}

static const struct hs_joint_reading *joint(int j)
{
    return hs_bench_joint_reading(rig.bench, (uint32_t)j);
}

static void test_robstride_host_over_the_bus(void **state)
{
    (void)state;
    /* who is there: type 0 to each motor, answered to 0xFE */
    send(0, HOST, SH, NULL);
    send(0, HOST, EL, NULL);
    read_param(SH, 0x7005);
    tick();
    assert_int_equal(H[SH].ids, 1);
    assert_int_equal(H[EL].ids, 1);
    assert_int_equal(H[SH].reads, 1);
    assert_int_equal(H[SH].read_status, 0);
    assert_int_equal(H[SH].read_value[0], 0); /* run_mode: operation control at power-up */
    /* enable both: feedback in run mode at the angle the tick's poll saw */
    send(3, HOST, SH, NULL);
    send(3, HOST, EL, NULL);
    double q_sh = joint(j_sh)->q, q_el = joint(j_el)->q;
    tick();
    assert_int_equal(H[SH].mode, 2);
    assert_true(fabs(H[SH].p - q_sh) <= 8 * PI / 65535);
    assert_true(fabs(H[EL].p - q_el) <= 8 * PI / 65535);
    /* a PI loop over the bus: the motor's PD plus the host's integral as feed-forward */
    double integ[3] = {0};
    const double target[3] = {0, SH_TARGET, EL_TARGET};
    for (int k = 0; k < 600; k++) {
        for (unsigned m = SH; m <= EL; m++) {
            integ[m] += (target[m] - H[m].p) * 0.01;
            double tff = fmax(-50, fmin(50, 300 * integ[m]));
            motion(m, target[m], 0, 200, 8, tff);
        }
        tick();
    }
    printf("PI loop: SHOULDER %.5f (target %.2f), ELBOW %.5f (target %.2f)\n", joint(j_sh)->q,
           SH_TARGET, joint(j_el)->q, EL_TARGET);
    assert_true(fabs(joint(j_sh)->q - SH_TARGET) < 0.01);
    assert_true(fabs(joint(j_el)->q - EL_TARGET) < 0.01);
    /* feedback against the plant: angle, velocity, torque of the tick's reading */
    /* feedback against the plant: the reading the tick's poll saw (the one before its physics) */
    struct hs_joint_reading seen = *joint(j_sh);
    motion(SH, SH_TARGET, 0, 200, 8, fmax(-50, fmin(50, 300 * integ[SH])));
    motion(EL, EL_TARGET, 0, 200, 8, fmax(-50, fmin(50, 300 * integ[EL])));
    tick();
    printf("steady: feedback p %.6f v %.5f t %.4f; SHOULDER q %.6f dq %.5f torque %.4f\n", H[SH].p,
           H[SH].v, H[SH].t, seen.q, seen.dq, seen.torque);
    assert_true(fabs(H[SH].p - seen.q) <= 8 * PI / 65535);
    assert_true(fabs(H[SH].v - seen.dq) <= 30.0 / 65535);
    assert_true(fabs(H[SH].t - seen.torque) <= 240.0 / 65535);
    /* mechPos read: the plant's angle as a float */
    read_param(SH, 0x7019);
    tick();
    float f;
    memcpy(&f, H[SH].read_value, 4);
    assert_int_equal(H[SH].read_index, 0x7019);
    assert_true(fabs(f - joint(j_sh)->q) < 1e-3); /* one tick of residual motion */
    /* ELBOW in speed mode: stop, run_mode 2, spd_kp, spd_ref, enable */
    send(4, HOST, EL, NULL);
    write_u8(EL, 0x7005, 2);
    write_f32(EL, 0x701F, 10.0f);
    write_f32(EL, 0x700A, 0.3f);
    send(3, HOST, EL, NULL);
    double q0 = joint(j_el)->q, qh = 0, vsum = 0;
    for (int k = 0; k < 300; k++) {
        motion(SH, SH_TARGET, 0, 200, 8, fmax(-50, fmin(50, 300 * integ[SH])));
        write_f32(EL, 0x700A, 0.3f); /* the host streams its reference: each write is answered */
        tick();
        if (k == 249)
            qh = joint(j_el)->q;
        if (k >= 250)
            vsum += H[EL].v;
    }
    const struct hs_joint_reading *e = joint(j_el);
    double kd = 2.5 * 10; /* Kt (the config's 2.5 N·m/A) x spd_kp */
    double v_fb = vsum / 50, v_pos = (e->q - qh) / 0.5;
    printf("speed mode: ELBOW dq %.4f rad/s for spd_ref 0.3, torque %.3f N·m (proportional part "
           "%.3f), moved %.4f rad in 3 s; last 0.5 s: feedback mean %.4f rad/s, from the angle "
           "%.4f\n",
           e->dq, e->torque, kd * (0.3 - e->dq), e->q - q0, v_fb, v_pos);
    assert_int_equal(H[EL].mode, 2);
    /* the speed loop's integral carries the load: the speed is the reference within 5 % (the
     * load grows as the elbow turns, which leaves the integrator a ramp to follow: about
     * d(tau_g)/dt / (Kt spd_ki 5 kHz) = 1.5 / 250 = 0.006 rad/s), where the proportional part
     * alone would sag by tau_g / (Kt spd_kp) = 2.4 / 25 = 0.1 rad/s; and most of the torque is
     * not the proportional part's */
    assert_true(fabs(v_pos - 0.3) < 0.015);
    assert_true(fabs(e->torque) > 0.5 && fabs(e->torque - kd * (0.3 - e->dq)) > 0.5);
    /* the feedback's velocity is the joint's: it integrates to the distance moved (5 %) */
    assert_true(fabs(v_fb - v_pos) < 0.05 * v_pos);
    /* SHOULDER, an RS04 with its firmware-default gains, lifts its loaded link: CSP to 0.5 rad
     * (run_mode 5, loc_ref under limit_spd), then PP to 1.0 rad (run_mode 1: vel_max 10 rad/s,
     * acc_set 10 rad/s²: a triangular profile over 0.5 rad peaks at sqrt(10 x 0.5) = 2.24 rad/s).
     * Within 0.01 rad after 3 s each; the PP peak speed within 15 % of the profile's. */
    send(4, HOST, SH, NULL);
    write_u8(SH, 0x7005, 5);
    write_f32(SH, 0x7016, 0.5f);
    send(3, HOST, SH, NULL);
    for (int k = 0; k < 300; k++)
        tick();
    printf("CSP: SHOULDER %.5f (loc_ref 0.5), torque %.3f N·m\n", joint(j_sh)->q,
           joint(j_sh)->torque);
    assert_int_equal(H[SH].mode, 2);
    assert_true(fabs(joint(j_sh)->q - 0.5) < 0.01);
    send(4, HOST, SH, NULL);
    write_u8(SH, 0x7005, 1);
    write_f32(SH, 0x7016, 1.0f);
    send(3, HOST, SH, NULL);
    double peak = 0;
    for (int k = 0; k < 300; k++) {
        tick();
        peak = fmax(peak, fabs(joint(j_sh)->dq));
    }
    printf("PP: SHOULDER %.5f (loc_ref 1.0), peak speed %.3f rad/s (profile 2.236)\n",
           joint(j_sh)->q, peak);
    assert_true(fabs(joint(j_sh)->q - 1.0) < 0.01);
    assert_true(fabs(peak - sqrt(10 * 0.5)) < 0.15 * sqrt(10 * 0.5));
    /* stop with fault clear: reset mode, the output off, the shoulder falls */
    uint8_t clear[8] = {1};
    send(4, HOST, SH, clear);
    tick();
    assert_int_equal(H[SH].mode, 0);
    double s0 = joint(j_sh)->q;
    for (int k = 0; k < 50; k++)
        tick();
    printf("stopped: SHOULDER moved %.3f rad in 0.5 s\n", joint(j_sh)->q - s0);
    assert_true(fabs(joint(j_sh)->q - s0) > 0.02);
    struct hs_bench_can_node_stats st;
    for (uint32_t i = 0; i < 2; i++) {
        assert_int_equal(hs_bench_can_node_stats(rig.can, i, &st), 0);
        assert_string_equal(st.protocol, "robstride");
        assert_int_equal(st.node.frames_bad, 0);
        assert_int_equal(st.node.tx_overflow, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_robstride_host_over_the_bus),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
