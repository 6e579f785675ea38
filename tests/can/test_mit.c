/* MIT mode: bit packing against hand-computed frames, round trip within one quantum, and the
 * node state machine (enter/exit/zero/timeout, reply to every frame, bad frames). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/can_mit.h"

static const struct hs_mit_limits lim = {
    .p_min = -12.5,
    .p_max = 12.5,
    .v_min = -50,
    .v_max = 50,
    .kp_min = 0,
    .kp_max = 500,
    .kd_min = 0,
    .kd_max = 5,
    .t_min = -18,
    .t_max = 18,
};

static void test_pack_matches_hand_computed_bits(void **state)
{
    (void)state;
    /* p = max -> 0xFFFF; v = min -> 0x000; kp = max -> 0xFFF; kd = 0 -> 0x000;
     * t = 0 -> (18 * 4095 / 36) truncated = 2047 = 0x7FF */
    struct hs_mit_command c = {.p_rad = 12.5, .v_rad_s = -50, .kp = 500, .kd = 0, .t_ff_nm = 0};
    uint8_t d[8];
    hs_mit_pack_command(&lim, &c, d);
    const uint8_t want[8] = {0xFF, 0xFF, 0x00, 0x0F, 0xFF, 0x00, 0x07, 0xFF};
    assert_memory_equal(d, want, 8);
    /* reply: id 5, p = 0 -> 32767 = 0x7FFF, v = 0 -> 2047 = 0x7FF, t = max -> 0xFFF */
    uint8_t r[6];
    hs_mit_pack_reply(&lim, 5, 0.0, 0.0, 18.0, r);
    const uint8_t rwant[6] = {0x05, 0x7F, 0xFF, 0x7F, 0xFF, 0xFF};
    assert_memory_equal(r, rwant, 6);
    /* out of range and NaN clamp instead of wrapping */
    assert_int_equal(hs_mit_float_to_uint(99, -1, 1, 12), 4095);
    assert_int_equal(hs_mit_float_to_uint(NAN, -1, 1, 12), 0);
    /* truncation as in the firmware: 0.99 steps -> 0 */
    assert_int_equal(hs_mit_float_to_uint(-1 + 0.99 * 2.0 / 4095, -1, 1, 12), 0);
}

static void test_round_trip_within_one_quantum(void **state)
{
    (void)state;
    double q_p = 25.0 / 65535, q_v = 100.0 / 4095, q_kp = 500.0 / 4095, q_kd = 5.0 / 4095,
           q_t = 36.0 / 4095;
    for (int i = 0; i <= 100; i++) {
        double s = i / 100.0;
        struct hs_mit_command c = {.p_rad = -12.5 + 25 * s,
                                   .v_rad_s = 50 - 100 * s,
                                   .kp = 500 * s,
                                   .kd = 5 * (1 - s),
                                   .t_ff_nm = -18 + 36 * s};
        struct hs_mit_command back;
        uint8_t d[8];
        hs_mit_pack_command(&lim, &c, d);
        hs_mit_unpack_command(&lim, d, &back);
        /* truncation: decoded <= sent, within one step (plus float rounding) */
        assert_true(fabs(back.p_rad - c.p_rad) <= q_p * 1.01 + 1e-5);
        assert_true(fabs(back.v_rad_s - c.v_rad_s) <= q_v * 1.01 + 1e-5);
        assert_true(fabs(back.kp - c.kp) <= q_kp * 1.01 + 1e-4);
        assert_true(fabs(back.kd - c.kd) <= q_kd * 1.01 + 1e-6);
        assert_true(fabs(back.t_ff_nm - c.t_ff_nm) <= q_t * 1.01 + 1e-5);
        uint8_t r[6], id;
        double p, v, t;
        hs_mit_pack_reply(&lim, 9, c.p_rad, c.v_rad_s, c.t_ff_nm, r);
        assert_int_equal(hs_mit_unpack_reply(&lim, r, 6, &id, &p, &v, &t), 0);
        assert_int_equal(id, 9);
        assert_true(fabs(p - c.p_rad) <= q_p * 1.01 + 1e-5);
        assert_true(fabs(t - c.t_ff_nm) <= q_t * 1.01 + 1e-5);
    }
    uint8_t d[8];
    hs_mit_pack_special(HS_MIT_ZERO, d);
    assert_int_equal(hs_mit_special_kind(d, 8), HS_MIT_ZERO);
    assert_int_equal(hs_mit_special_kind(d, 7), HS_MIT_NOT_SPECIAL);
}

struct rig {
    struct hs_mit_node node;
    struct hs_can_joint_state js;
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[4];
};

static void rig_init(struct rig *r, int64_t timeout_ns)
{
    struct hs_mit_config cfg;
    hs_mit_config_init(&cfg, 3, 0);
    cfg.timeout_ns = timeout_ns;
    cfg.reply_current = false; /* the checks below read the reply's third field as torque */
    memset(r, 0, sizeof *r);
    struct hs_diag d;
    assert_int_equal(hs_mit_node_init(&r->node, &cfg, &d), 0);
}

static int send(struct rig *r, const uint8_t *data, unsigned len, int64_t t)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = 3, f.len = (uint8_t)len;
    memcpy(f.data, data, len);
    return hs_can_node_on_frame(&r->node.base, &f, t);
}

static int poll(struct rig *r, int64_t t)
{
    return hs_can_node_poll(&r->node.base, t, &r->js, &r->cmd, r->out, 4);
}

static void special(struct rig *r, enum hs_mit_special k, int64_t t)
{
    uint8_t d[8];
    hs_mit_pack_special(k, d);
    assert_int_equal(send(r, d, 8, t), 0);
}

static void command(struct rig *r, double p, double v, double kp, double kd, double tff, int64_t t)
{
    struct hs_mit_command c = {p, v, kp, kd, tff};
    uint8_t d[8];
    hs_mit_pack_command(&lim, &c, d);
    assert_int_equal(send(r, d, 8, t), 0);
}

static void test_node_enter_command_exit_with_reply_each_frame(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    assert_int_equal(poll(&r, 0), 0); /* nothing received: no reply */
    assert_false(r.cmd.enabled);
    command(&r, 1.0, 0, 100, 1, 0, 1000); /* before motor mode: decoded, not applied */
    assert_int_equal(poll(&r, 1000), 1);
    assert_false(r.cmd.enabled);
    special(&r, HS_MIT_ENTER, 2000);
    r.js.q_rad = 0.25, r.js.dq_rad_s = -3, r.js.tau_nm = 2;
    assert_int_equal(poll(&r, 2000), 1);
    assert_true(r.cmd.enabled);
    assert_true(r.cmd.kp_nm_rad == 0); /* entering zeroes the command */
    assert_int_equal(r.out[0].id, 0);  /* master id */
    assert_int_equal(r.out[0].len, 6);
    uint8_t id;
    double p, v, t;
    hs_mit_unpack_reply(&lim, r.out[0].data, 6, &id, &p, &v, &t);
    assert_int_equal(id, 3);
    assert_true(fabs(p - 0.25) < 25.0 / 65535 * 1.01);
    assert_true(fabs(v + 3) < 100.0 / 4095 * 1.01);
    assert_true(fabs(t - 2) < 36.0 / 4095 * 1.01);
    command(&r, 1.0, 0.5, 100, 1, -2, 3000);
    assert_int_equal(poll(&r, 3000), 1);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_POSITION_PD);
    assert_true(fabs(r.cmd.q_ref_rad - 1.0) < 25.0 / 65535 * 1.01);
    assert_true(fabs(r.cmd.kp_nm_rad - 100) < 500.0 / 4095 * 1.01);
    assert_true(fabs(r.cmd.tau_ff_nm + 2) < 36.0 / 4095 * 1.01);
    assert_int_equal(r.cmd.rx_time_ns, 3000);
    special(&r, HS_MIT_EXIT, 4000);
    assert_int_equal(poll(&r, 4000), 1);
    assert_false(r.cmd.enabled);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_OFF);
    assert_int_equal(r.node.base.stats.frames_ok, 4);
}

/* The firmware answers every frame: three frames before one poll owe three replies; beyond
 * the room the caller gives, replies are lost and counted. */
static void test_one_reply_per_frame(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    special(&r, HS_MIT_ENTER, 0);
    command(&r, 0.5, 0, 10, 1, 0, 10);
    command(&r, 0.6, 0, 10, 1, 0, 20);
    assert_int_equal(poll(&r, 30), 3);
    assert_int_equal(r.node.base.stats.tx_frames, 3);
    assert_int_equal(poll(&r, 40), 0);
    for (int i = 0; i < 6; i++)
        command(&r, 0.6, 0, 10, 1, 0, 50);
    assert_int_equal(poll(&r, 60), 4); /* out has 4 slots */
    assert_int_equal(r.node.base.stats.tx_overflow, 2);
    assert_int_equal(poll(&r, 70), 0);
}

static void test_zero_moves_reported_position_and_setpoints(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    special(&r, HS_MIT_ENTER, 0);
    r.js.q_rad = 2.0;
    poll(&r, 0);
    special(&r, HS_MIT_ZERO, 10);
    poll(&r, 10);
    uint8_t id;
    double p, v, t;
    hs_mit_unpack_reply(&lim, r.out[0].data, 6, &id, &p, &v, &t);
    assert_true(fabs(p) < 25.0 / 65535 * 1.01); /* the reported position is now zero */
    r.js.q_rad = 2.5;
    command(&r, 0.0, 0, 10, 0, 0, 20);
    poll(&r, 20);
    hs_mit_unpack_reply(&lim, r.out[0].data, 6, &id, &p, &v, &t);
    assert_true(fabs(p - 0.5) < 25.0 / 65535 * 1.01);
    /* p* = 0 in the motor's frame is q = 2.0 in the joint's frame */
    assert_true(fabs(r.cmd.q_ref_rad - 2.0) < 25.0 / 65535 * 1.01);
}

static void test_timeout_zeroes_torque_then_resumes(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 500000); /* 0.5 ms */
    special(&r, HS_MIT_ENTER, 0);
    command(&r, 1.0, 0, 50, 2, 3, 100000);
    poll(&r, 100000);
    assert_true(r.cmd.kp_nm_rad > 49);
    poll(&r, 600000); /* exactly the timeout: still fine */
    assert_true(r.cmd.kp_nm_rad > 49);
    assert_int_equal(poll(&r, 600001), 0); /* no frame, no reply */
    assert_true(r.cmd.enabled);            /* still in motor mode ... */
    assert_true(r.cmd.kp_nm_rad == 0 && r.cmd.kd_nm_s_rad == 0 && r.cmd.tau_ff_nm == 0);
    assert_int_equal(r.node.base.stats.timeouts, 1);
    poll(&r, 900000);
    assert_int_equal(r.node.base.stats.timeouts, 1); /* counted once per event */
    command(&r, 1.0, 0, 50, 2, 3, 1000000);
    poll(&r, 1000000);
    assert_true(r.cmd.kp_nm_rad > 49);
}

static void test_bad_frames_counted_and_ignored(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    uint8_t d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(send(&r, d, 6, 0), -EBADMSG);
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = 3, f.len = 8, f.flags = HS_CAN_FLAG_RTR;
    assert_int_equal(hs_can_node_on_frame(&r.node.base, &f, 0), -EBADMSG);
    f.flags = HS_CAN_FLAG_FD, f.len = 12;
    assert_int_equal(hs_can_node_on_frame(&r.node.base, &f, 0), -EBADMSG);
    f.flags = 0, f.id = 4, f.len = 8;
    assert_int_equal(hs_can_node_on_frame(&r.node.base, &f, 0), -ENOENT);
    f.flags = HS_CAN_FLAG_EXT, f.id = 3;
    assert_int_equal(hs_can_node_on_frame(&r.node.base, &f, 0), -ENOENT);
    assert_int_equal(r.node.base.stats.frames_bad, 3);
    assert_int_equal(r.node.base.stats.frames_ok, 0);
    assert_int_equal(poll(&r, 0), 0); /* bad frames get no reply */
    struct hs_can_node *nodes[] = {&r.node.base};
    uint64_t unclaimed = 0;
    assert_int_equal(hs_can_nodes_dispatch(nodes, 1, &f, 0, &unclaimed), -ENOENT);
    assert_int_equal(unclaimed, 1);
}

static void test_config_validation(void **state)
{
    (void)state;
    struct hs_mit_config cfg;
    struct hs_mit_node n;
    struct hs_diag d;
    hs_mit_config_init(&cfg, 1, 1);
    assert_int_equal(hs_mit_node_init(&n, &cfg, &d), -EINVAL);
    hs_mit_config_init(&cfg, 1, 0);
    cfg.limits.p_min = cfg.limits.p_max;
    assert_int_equal(hs_mit_node_init(&n, &cfg, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "min < max"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_matches_hand_computed_bits),
        cmocka_unit_test(test_round_trip_within_one_quantum),
        cmocka_unit_test(test_node_enter_command_exit_with_reply_each_frame),
        cmocka_unit_test(test_one_reply_per_frame),
        cmocka_unit_test(test_zero_moves_reported_position_and_setpoints),
        cmocka_unit_test(test_timeout_zeroes_torque_then_resumes),
        cmocka_unit_test(test_bad_frames_counted_and_ignored),
        cmocka_unit_test(test_config_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
