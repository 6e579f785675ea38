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

#define TWO_PI 6.283185307179586

struct rig {
    struct hs_mt_node node;
    struct hs_can_joint_state js;
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[2];
    int64_t t;
};

static void rig_init(struct rig *r)
{
    memset(r, 0, sizeof *r);
    struct hs_mt_config cfg;
    hs_mt_config_init(&cfg, 1);
    struct hs_diag d;
    assert_int_equal(hs_mt_node_init(&r->node, &cfg, &d), 0);
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
    /* the reply, in the request's order: the write error for 0x001, then the read error for
     * 0x0f0 (7 bytes: a valid FD length as it is, no padding) */
    static const uint8_t want[] = {0x30, 0x01, 0x01, 0x31, 0xf0, 0x01, 0x01};
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
        cmocka_unit_test(test_codec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
