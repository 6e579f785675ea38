/* The moteus node against frames built by hand from mjbots/moteus docs/protocol/can.md and
 * registers.md: the document's own worked example (a position command with a query, and the
 * reply it shows, byte for byte), "no reply unless bit 15", unset values, error subframes,
 * varuint counts, the watchdog and faults. Mappings used below (registers.md): position int16
 * 0.0001 rev, velocity int16 0.00025 rev/s, torque int16 0.01 N·m, voltage int8 0.5 V,
 * temperature int8 1 C, time int16 1 ms. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "moteus/moteus.h"
#include "moteus/moteus_defaults.h"

#define TWO_PI 6.283185307179586

struct rig {
    struct hs_mt_node node;
    struct hs_can_joint_state js;
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[2];
    int64_t t;
};

/* The firmware's defaults, or none of its trajectory limits (positions taken at once). */
static void rig_init_limits(struct rig *r, double vlim, double alim)
{
    memset(r, 0, sizeof *r);
    struct hs_mt_config cfg;
    hs_mt_config_init(&cfg, 1);
    cfg.default_velocity_limit_rev_s = vlim;
    cfg.default_accel_limit_rev_s2 = alim;
    struct hs_diag d;
    assert_int_equal(hs_mt_node_init(&r->node, &cfg, &d), 0);
}

static void rig_init(struct rig *r)
{
    rig_init_limits(r, NAN, NAN);
}

static int offer(struct rig *r, uint32_t id, const uint8_t *data, unsigned len)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = id;
    f.flags = HS_CAN_FLAG_FD | (id > 0x7FF ? HS_CAN_FLAG_EXT : 0);
    f.len = (uint8_t)len;
    memcpy(f.data, data, len);
    return hs_can_node_on_frame(&r->node.base, &f, r->t);
}

static int poll(struct rig *r, int64_t dt_ns)
{
    r->t += dt_ns;
    return hs_can_node_poll(&r->node.base, r->t, &r->js, &r->cmd, r->out, 2);
}

/* can.md's "Example": command and query in one frame to 0x8001, and the reply it shows. */
static void test_the_documents_example(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    static const uint8_t cmd[] = {0x01, 0x00, 0x0a, 0x07, 0x20, 0x60, 0x00, 0x20,
                                  0x01, 0x50, 0xff, 0x14, 0x04, 0x00, 0x13, 0x0d};
    assert_int_equal(offer(&r, 0x8001, cmd, sizeof cmd), 0);
    /* the state the document's reply describes: 0.008 rev, 0.064 rev/s, -1.44 N·m, 12 V, 20 C */
    r.js.q_rad = 0.008 * TWO_PI, r.js.dq_rad_s = 0.064 * TWO_PI, r.js.tau_nm = -1.44;
    r.js.vbus_v = 12, r.js.temp_c = 20;
    assert_int_equal(poll(&r, 1000000), 1);
    static const uint8_t want[] = {0x24, 0x04, 0x00, 0x0a, 0x00, 0x50, 0x00, 0x00,
                                   0x01, 0x70, 0xff, 0x23, 0x0d, 0x18, 0x14, 0x00};
    assert_int_equal(r.out[0].id, 0x100); /* from 1 to 0 */
    assert_true(r.out[0].flags & HS_CAN_FLAG_FD);
    assert_int_equal(r.out[0].len, sizeof want);
    assert_memory_equal(r.out[0].data, want, sizeof want);
    /* the command: position mode, 96 x 0.0001 rev, 288 x 0.00025 rev/s, -176 x 0.01 N·m */
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_POSITION_PD);
    assert_true(fabs(r.cmd.q_ref_rad - 0.0096 * TWO_PI) < 1e-9 + 0.072 * TWO_PI * 1e-3);
    assert_true(fabs(r.cmd.dq_ref_rad_s - 0.072 * TWO_PI) < 1e-9);
    assert_true(fabs(r.cmd.tau_ff_nm + 1.76) < 1e-9);
    assert_true(fabs(r.cmd.kp_nm_rad - 4.0 / TWO_PI) < 1e-12); /* kp scale 1 by default */
    /* the command position advances at the command velocity: 0.072 rev/s x 10 ms */
    double q0 = r.cmd.q_ref_rad;
    poll(&r, 10000000);
    assert_true(fabs(r.cmd.q_ref_rad - q0 - 0.072 * TWO_PI * 0.01) < 1e-9);
}

static void test_replies_only_when_asked_and_padded(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    static const uint8_t query[] = {0x14, 0x04, 0x00};
    assert_int_equal(offer(&r, 0x0001, query, sizeof query), 0); /* bit 15 clear */
    assert_int_equal(poll(&r, 1000000), 0);
    assert_int_equal(offer(&r, 0x0002, query, sizeof query), -ENOENT); /* servo 2 */
    /* a float query of position: 1 + 1 + 1 + 4 = 7 bytes, no padding needed; then int32 x 4
     * = 19 bytes: padded to 20 with NOPs */
    r.js.q_rad = TWO_PI * 0.25;
    static const uint8_t qf[] = {0x1d, 0x01};
    assert_int_equal(offer(&r, 0x8501, qf, sizeof qf), 0);
    assert_int_equal(poll(&r, 1000000), 1);
    assert_int_equal(r.out[0].id, 0x105); /* to source 5 */
    assert_int_equal(r.out[0].len, 6);
    float f;
    memcpy(&f, r.out[0].data + 2, 4);
    assert_true(r.out[0].data[0] == 0x2d && r.out[0].data[1] == 0x01 && f == 0.25f);
    static const uint8_t q32[] = {0x18, 0x04, 0x00};
    assert_int_equal(offer(&r, 0x8001, q32, sizeof q32), 0);
    assert_int_equal(poll(&r, 1000000), 1);
    assert_int_equal(r.out[0].len, 20);
    assert_true(r.out[0].data[0] == 0x28 && r.out[0].data[1] == 0x04 && r.out[0].data[2] == 0);
    assert_int_equal(r.out[0].data[19], 0x50);
    /* int32 position: 0.25 rev = 25000 x 0.00001 rev */
    int32_t p = (int32_t)(r.out[0].data[7] | r.out[0].data[8] << 8 | r.out[0].data[9] << 16 |
                          (uint32_t)r.out[0].data[10] << 24);
    assert_int_equal(p, 25000);
}

static void test_unset_errors_and_varuint(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    r.js.q_rad = 1.0;
    /* position mode with the position unset (int16 0x8000): hold the present one */
    static const uint8_t hold[] = {0x01, 0x00, 0x0a, 0x05, 0x20, 0x00, 0x80};
    assert_int_equal(offer(&r, 0x0001, hold, sizeof hold), 0);
    poll(&r, 1000000);
    assert_true(fabs(r.cmd.q_ref_rad - 1.0) < 1e-12);
    /* writes by float with a varuint count (type 0x0c, count 2 from 0x022): ff torque 0.5,
     * kp scale 0.25; a write to read-only 0x001 and a read of 0x0f0 give error subframes */
    uint8_t w[32] = {0x0c, 0x02, 0x22};
    float ff = 0.5f, kps = 0.25f;
    memcpy(w + 3, &ff, 4);
    memcpy(w + 7, &kps, 4);
    w[11] = 0x01, w[12] = 0x01, w[13] = 0x05; /* int8 write to position: read only */
    w[14] = 0x11, w[15] = 0xf0, w[16] = 0x01; /* read int8 0x0f0: unknown (varuint 0xf0) */
    assert_int_equal(offer(&r, 0x8001, w, 17), 0);
    assert_int_equal(poll(&r, 1000000), 1);
    assert_true(fabs(r.cmd.tau_ff_nm - 0.5) < 1e-6);
    assert_true(fabs(r.cmd.kp_nm_rad - 0.25 * 4.0 / TWO_PI) < 1e-6);
    /* the reply, in the request's order: the write error for 0x001 (2: not writable), then the
     * read error for 0x0f0 (1: unknown; 7 bytes: a valid FD length as it is, no padding) */
    static const uint8_t want[] = {0x30, 0x01, 0x02, 0x31, 0xf0, 0x01, 0x01};
    assert_int_equal(r.out[0].len, 7);
    assert_memory_equal(r.out[0].data, want, sizeof want);
    /* a reply subframe sent to a servo is not a command: the frame counts bad */
    static const uint8_t junk[] = {0x24, 0x01, 0x00, 0x00, 0x00};
    assert_int_equal(offer(&r, 0x8001, junk, sizeof junk), -EBADMSG);
    static const uint8_t cut[] = {0x07, 0x20, 0x60}; /* 3 int16 promised, 1 byte given */
    assert_int_equal(offer(&r, 0x0001, cut, sizeof cut), -EBADMSG);
    assert_int_equal(r.node.base.stats.frames_bad, 2);
}

static void test_watchdog_fault_and_stop(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    /* position mode with a 50 ms watchdog (int16 time: 1 ms per LSB at 0x027) */
    static const uint8_t c[] = {0x01, 0x00, 0x0a, 0x05, 0x27, 50, 0x00};
    assert_int_equal(offer(&r, 0x0001, c, sizeof c), 0);
    poll(&r, 1000000);
    assert_int_equal(r.node.mode, HS_MT_MODE_POSITION);
    for (int i = 0; i < 6; i++)
        poll(&r, 10000000);
    assert_int_equal(r.node.mode, HS_MT_MODE_TIMEOUT); /* 61 ms > 50 ms */
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_VELOCITY);
    assert_int_equal(r.node.base.stats.timeouts, 1);
    /* a new position command does not leave timeout; a stop does */
    static const uint8_t pos[] = {0x01, 0x00, 0x0a};
    offer(&r, 0x0001, pos, sizeof pos);
    poll(&r, 1000000);
    assert_int_equal(r.node.mode, HS_MT_MODE_TIMEOUT);
    static const uint8_t stop[] = {0x01, 0x00, 0x00};
    offer(&r, 0x0001, stop, sizeof stop);
    poll(&r, 1000000);
    assert_false(r.cmd.enabled);
    offer(&r, 0x0001, pos, sizeof pos);
    poll(&r, 1000000);
    assert_int_equal(r.node.mode, HS_MT_MODE_POSITION);
    /* a fault: mode 1 and the code in 0x00f, read back as int8 */
    hs_mt_node_fault(&r.node, 38);
    static const uint8_t q[] = {0x10, 0x01, 0x00, 0x10, 0x01, 0x0f};
    offer(&r, 0x8001, q, sizeof q);
    assert_int_equal(poll(&r, 1000000), 1);
    static const uint8_t want[] = {0x21, 0x00, 0x01, 0x21, 0x0f, 38};
    assert_memory_equal(r.out[0].data, want, sizeof want);
    assert_false(r.cmd.enabled);
    offer(&r, 0x0001, stop, sizeof stop);
    poll(&r, 1000000);
    assert_int_equal(r.node.mode, HS_MT_MODE_STOPPED);
    assert_int_equal(r.node.fault, 0);
}

static double f32_at(const uint8_t *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

/* Velocity control with the position unset (client set_position(position=nan, velocity=v)):
 * the control position latches on entering position mode and then advances at v on every
 * frame, whatever the joint does, so a sagging joint is pulled back (fw/bldc_servo_position.h).
 * Tolerance: one int32 LSB of the command velocity (1e-5 rev/s) over 1 s = 1e-5 rev. */
static void test_velocity_with_nan_position_latches_once(void **state)
{
    (void)state;
    struct rig r;
    rig_init_limits(&r, NAN, NAN);
    r.js.q_rad = 0.3 * TWO_PI;
    /* mode 10, position int32 unset (0x80000000), velocity int32 -0.03 rev/s = -3000 LSB */
    static const uint8_t c[] = {0x01, 0x00, 0x0a, 0x0a, 0x20, 0x00, 0x00,
                                0x00, 0x80, 0x48, 0xf4, 0xff, 0xff};
    for (int i = 0; i < 100; i++) {
        assert_int_equal(offer(&r, 0x0001, c, sizeof c), 0);
        poll(&r, 10000000);
        r.js.q_rad -= 0.002 * TWO_PI; /* the joint sags under gravity, 0.2 rev/s */
    }
    /* 100 polls: the first latches (the node's first poll has no step), 99 steps of 10 ms */
    double want = 0.3 - 0.03 * 0.99;
    assert_true(fabs(r.cmd.q_ref_rad / TWO_PI - want) < 1e-5);
    assert_true(fabs(r.cmd.dq_ref_rad_s / TWO_PI + 0.03) < 1e-9);
    /* the control position reads back as 0x038 */
    static const uint8_t q[] = {0x1d, 0x38};
    offer(&r, 0x8001, q, sizeof q);
    assert_int_equal(poll(&r, 0), 1);
    assert_true(fabs(f32_at(r.out[0].data + 2) - want) < 1e-5);
    /* leaving position mode (stop) and entering again latches anew, at the measured position
     * and (below 0.05 rev/s) at rest: the first step does not move */
    static const uint8_t stop[] = {0x01, 0x00, 0x00};
    offer(&r, 0x0001, stop, sizeof stop);
    poll(&r, 10000000);
    offer(&r, 0x0001, c, sizeof c);
    poll(&r, 10000000);
    assert_true(fabs(r.cmd.q_ref_rad - r.js.q_rad) < 1e-9);
    offer(&r, 0x0001, c, sizeof c);
    poll(&r, 10000000);
    assert_true(fabs(r.cmd.q_ref_rad - r.js.q_rad + 0.03 * 0.01 * TWO_PI) < 1e-9);
}

/* A move limited to 0.5 rev/s and 1 rev/s² (registers 0x028/0x029) from rest at 0 to 1 rev:
 * the control velocity never passes the limits, and the move takes the analytic trapezoid's
 * t = v/a + d/v = 0.5 + 2 = 2.5 s (within five 1 ms ticks: the latching tick and the
 * discrete switch points); 0x00b reads 0 until it is done. */
static void test_limited_trajectory_and_complete_flag(void **state)
{
    (void)state;
    struct rig r;
    rig_init_limits(&r, NAN, NAN);
    uint8_t c[32] = {0x01, 0x00, 0x0a, 0x0c, 0x01, 0x20};
    float pos = 1.0f, vl = 0.5f, al = 1.0f;
    memcpy(c + 6, &pos, 4);
    c[10] = 0x0e, c[11] = 0x28; /* float x2 from 0x028 */
    memcpy(c + 12, &vl, 4);
    memcpy(c + 16, &al, 4);
    c[20] = 0x11, c[21] = 0x0b; /* read int8 0x00b */
    double t = 0, done_at = -1, vmax = 0, prev_v = 0, amax = 0;
    for (int i = 0; i < 4000 && done_at < 0; i++) {
        assert_int_equal(offer(&r, 0x8001, c, 22), 0);
        assert_int_equal(poll(&r, 1000000), 1);
        t += 1e-3;
        double v = r.cmd.dq_ref_rad_s / TWO_PI;
        vmax = fmax(vmax, fabs(v));
        if (i > 0)
            amax = fmax(amax, fabs(v - prev_v) / 1e-3);
        prev_v = v;
        r.js.q_rad = r.cmd.q_ref_rad; /* a stiff joint follows */
        assert_true(r.out[0].data[0] == 0x21 && r.out[0].data[1] == 0x0b);
        if (r.out[0].data[2])
            done_at = t;
    }
    assert_true(vmax <= 0.5 + 1e-6);
    assert_true(amax <= 1.0 + 1e-6);
    if (!(fabs(done_at - 2.5) <= 5e-3))
        fail_msg("done at %.4f s, vmax %.6f, amax %.6f", done_at, vmax, amax);
    assert_true(fabs(r.cmd.q_ref_rad / TWO_PI - 1.0) < 1e-6);
    /* the case: limited to 0.01 rev/s, 0.42 s of steps (the first poll latches)
     * travel 0.0042 rev, not 0.034 */
    rig_init_limits(&r, NAN, NAN);
    vl = 0.01f, al = -1.0f; /* negative: no acceleration limit */
    memcpy(c + 12, &vl, 4);
    memcpy(c + 16, &al, 4);
    for (int i = 0; i < 43; i++) {
        offer(&r, 0x8001, c, 22);
        poll(&r, 10000000);
    }
    if (!(fabs(r.cmd.q_ref_rad / TWO_PI - 0.0042) < 1e-6))
        fail_msg("travelled %.6f rev", r.cmd.q_ref_rad / TWO_PI);
    assert_int_equal(r.out[0].data[2], 0);
}

/* The firmware's defaults: 50 rev/s² and no velocity limit (servo.max_velocity 500 rev/s). */
static void test_default_limits_are_the_firmwares(void **state)
{
    (void)state;
    struct rig r;
    rig_init_limits(&r, HS_MT_DEFAULT_VELOCITY_LIMIT_REV_S, HS_MT_DEFAULT_ACCEL_LIMIT_REV_S2);
    static const uint8_t c[] = {0x01, 0x00, 0x0a, 0x0d, 0x20, 0x00, 0x00, 0x80, 0x3f}; /* 1 */
    offer(&r, 0x0001, c, sizeof c);
    poll(&r, 1000000);
    offer(&r, 0x0001, c, sizeof c);
    poll(&r, 1000000);
    /* one 1 ms step at 50 rev/s²: 0.05 rev/s */
    assert_true(fabs(r.cmd.dq_ref_rad_s / TWO_PI - 0.05) < 1e-9);
}

/* Reads: the registers a query asks for (d current included) answer, and a range holding a
 * register hilsim does not have is answered by one read error that ends the frame, as the
 * firmware's multiplex server does. Stopped before any command, the torque reads 0 whatever
 * holds the joint. */
static void test_reads_unknown_registers_and_stopped_torque(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    r.js.q_rad = 0.5 * TWO_PI, r.js.tau_nm = 33.0, r.js.current_a = 4;
    static const uint8_t q[] = {0x1c, 0x05, 0x01}; /* float x5 from 0x001: .. d current */
    offer(&r, 0x8001, q, sizeof q);
    assert_int_equal(poll(&r, 1000000), 1);
    assert_true(r.out[0].data[0] == 0x2c && r.out[0].data[1] == 5 && r.out[0].data[2] == 1);
    assert_true(f32_at(r.out[0].data + 3) == 0.5f);
    assert_true(f32_at(r.out[0].data + 11) == 0.0f); /* torque: stopped, the output is off */
    assert_true(f32_at(r.out[0].data + 15) == 0.0f); /* q current */
    /* 0x006 (absolute position, no aux encoder here): read error; the read of 0x001 after it
     * is not processed */
    static const uint8_t u[] = {0x11, 0x06, 0x11, 0x01};
    offer(&r, 0x8001, u, sizeof u);
    assert_int_equal(poll(&r, 1000000), 1);
    static const uint8_t want[] = {0x31, 0x06, 0x01};
    assert_int_equal(r.out[0].len, 3);
    assert_memory_equal(r.out[0].data, want, 3);
}

/* The diagnostic stream as moteus_tool drives it: client data (0x40) carries a line, polls
 * (0x42) fetch the answer in pieces of at most the asked length. */
static unsigned diag(struct rig *r, const char *line, uint8_t *ans, unsigned max)
{
    uint8_t f[64] = {0x40, 0x01, (uint8_t)strlen(line)};
    memcpy(f + 3, line, strlen(line));
    assert_int_equal(offer(r, 0x0001, f, 3 + (unsigned)strlen(line)), 0);
    assert_int_equal(poll(r, 1000000), 0); /* no reply asked for */
    unsigned n = 0;
    for (int i = 0; i < 100; i++) {
        static const uint8_t p[] = {0x42, 0x01, 0x30};
        assert_int_equal(offer(r, 0x8001, p, sizeof p), 0);
        assert_int_equal(poll(r, 1000000), 1);
        const uint8_t *d = r->out[0].data;
        assert_true(d[0] == 0x41 && d[1] == 0x01 && d[2] <= 0x30);
        if (!d[2])
            break;
        assert_true(n + d[2] <= max);
        memcpy(ans + n, d + 3, d[2]);
        n += d[2];
    }
    return n;
}

static void test_diagnostic_stream(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    uint8_t a[2048];
    unsigned n = diag(&r, "tel stop\n", a, sizeof a);
    assert_int_equal(n, 4);
    assert_memory_equal(a, "OK\r\n", 4);
    n = diag(&r, "conf get servo.pid_position.kp\n", a, sizeof a);
    assert_int_equal(n, 10);
    assert_memory_equal(a, "4.000000\r\n", 10);
    n = diag(&r, "conf get nosuch.key\n", a, sizeof a);
    assert_memory_equal(a, "ERR unknown group\r\n", n);
    /* the firmware channel's data: "emit firmware\r\n", its size (4 + 12 + 4 + 1 + 1 = 22),
     * version 0x010100, the serial number, model, family, hardware revision */
    n = diag(&r, "tel get firmware\n", a, sizeof a);
    assert_int_equal(n, 15 + 4 + 22);
    assert_memory_equal(a, "emit firmware\r\n", 15);
    assert_true(a[15] == 22 && a[16] == 0 && a[19 + 0] == 0x00 && a[19 + 1] == 0x01 &&
                a[19 + 2] == 0x01);
    /* conf enumerate ends with OK; `d stop` stops a servo in position mode */
    n = diag(&r, "conf enumerate\n", a, sizeof a);
    assert_true(n > 4 && !memcmp(a + n - 4, "OK\r\n", 4));
    static const uint8_t pos[] = {0x01, 0x00, 0x0a};
    offer(&r, 0x0001, pos, sizeof pos);
    poll(&r, 1000000);
    assert_int_equal(r.node.mode, HS_MT_MODE_POSITION);
    n = diag(&r, "d stop\n", a, sizeof a);
    assert_int_equal(r.node.mode, HS_MT_MODE_STOPPED);
    assert_false(r.cmd.enabled);
    /* conf set reaches the gains */
    n = diag(&r, "conf set servo.pid_position.kp 40\n", a, sizeof a);
    assert_memory_equal(a, "OK\r\n", 4);
    assert_true(r.node.cfg.kp_nm_rev == 40);
}

/* moteus_tool drains the stream with polls for 0.2 s, gives up on the last one, and sends
 * "conf enumerate": when that poll and the line land in one tick, the poll's reply holds what
 * was there when it arrived (nothing), as the firmware's would, and the whole answer waits for
 * the next poll (the reply is built with the tick; it carried the answer's first 48 bytes,
 * which the client never read: moteus_tool --dump-config lost its first lines in the guest). */
static void test_poll_before_a_line_gets_nothing_of_its_answer(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r);
    static const uint8_t p[] = {0x42, 0x01, 0x30};
    assert_int_equal(offer(&r, 0x8001, p, sizeof p), 0);
    static const char line[] = "conf get servo.pid_position.kp\n";
    uint8_t f[64] = {0x40, 0x01, (uint8_t)strlen(line)};
    memcpy(f + 3, line, strlen(line));
    assert_int_equal(offer(&r, 0x0001, f, 3 + (unsigned)strlen(line)), 0);
    assert_int_equal(poll(&r, 1000000), 1);
    static const uint8_t empty[] = {0x41, 0x01, 0x00};
    assert_int_equal(r.out[0].len >= 3, 1);
    assert_memory_equal(r.out[0].data, empty, 3);
    uint8_t a[64];
    unsigned n = diag(&r, "", a, sizeof a); /* polls only: the answer, whole */
    assert_int_equal(n, 10);
    assert_memory_equal(a, "4.000000\r\n", 10);
}

static void test_codec(void **state)
{
    (void)state;
    uint8_t b[5];
    assert_int_equal(hs_mt_varuint_put(300, b), 2); /* 300 = 0b10_0101100 */
    assert_true(b[0] == 0xAC && b[1] == 0x02);
    uint32_t v;
    assert_int_equal(hs_mt_varuint_get(b, 2, &v), 2);
    assert_int_equal(v, 300);
    static const uint8_t six[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    assert_int_equal(hs_mt_varuint_get(six, 6, &v), -EBADMSG); /* more than 5 bytes */
    assert_int_equal(hs_mt_varuint_get(six, 2, &v), -EBADMSG); /* runs off the end */
    assert_int_equal(hs_mt_fd_len(9), 12);
    assert_int_equal(hs_mt_fd_len(33), 48);
    hs_mt_encode(HS_MT_Q_TORQUE, HS_MT_INT16, 1e9, b); /* saturates, never "unset" */
    assert_true(b[0] == 0xff && b[1] == 0x7f);
    hs_mt_encode(HS_MT_Q_TORQUE, HS_MT_INT16, -1e9, b);
    assert_true(b[0] == 0x01 && b[1] == 0x80);
    hs_mt_encode(HS_MT_Q_TORQUE, HS_MT_INT16, NAN, b);
    assert_true(b[0] == 0x00 && b[1] == 0x80);
    assert_true(isnan(hs_mt_decode(HS_MT_Q_TORQUE, HS_MT_INT16, b)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_documents_example),
        cmocka_unit_test(test_replies_only_when_asked_and_padded),
        cmocka_unit_test(test_unset_errors_and_varuint),
        cmocka_unit_test(test_watchdog_fault_and_stop),
        cmocka_unit_test(test_velocity_with_nan_position_latches_once),
        cmocka_unit_test(test_limited_trajectory_and_complete_flag),
        cmocka_unit_test(test_default_limits_are_the_firmwares),
        cmocka_unit_test(test_reads_unknown_registers_and_stopped_torque),
        cmocka_unit_test(test_diagnostic_stream),
        cmocka_unit_test(test_poll_before_a_line_gets_nothing_of_its_answer),
        cmocka_unit_test(test_codec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
