/* The Robstride/CyberGear node against frames built by hand from the CyberGear manual, ch. 4
 * (the 29-bit ID = type << 24 | data area 2 << 8 | target; u16 big-endian quantities mapped over
 * [min, max] in 65535 truncating steps; parameters little-endian). The test's own packing below
 * follows the manual's text, not hilsim's codec. Ranges: the CyberGear's (angle +-4pi rad,
 * velocity +-30 rad/s, torque +-12 N·m, kp 0..500, kd 0..5). Tolerance: one u16 step of each
 * range (8pi/65535 = 3.8e-4 rad, 9.2e-4 rad/s, 3.7e-4 N·m, 7.6e-3, 7.6e-5). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "robstride/robstride.h"

#define PI 3.14159265358979323846
#define MOTOR 0x7F
#define HOST 0xFD

/* ---- the manual's packing, written out for the test ---- */
static unsigned u16_of(double x, double lo, double hi)
{
    if (x < lo)
        x = lo;
    if (x > hi)
        x = hi;
    return (unsigned)((x - lo) * 65535.0 / (hi - lo));
}

static double of_u16(unsigned u, double lo, double hi)
{
    return lo + u * (hi - lo) / 65535.0;
}

static struct hs_can_frame frame(unsigned type, unsigned data2, const uint8_t *d)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = type << 24 | data2 << 8 | MOTOR;
    f.flags = HS_CAN_FLAG_EXT;
    f.len = 8;
    if (d)
        memcpy(f.data, d, 8);
    return f;
}

/* Type 1: torque in data area 2; angle, velocity, kp, kd big-endian in bytes 0-7. */
static struct hs_can_frame motion(double p, double v, double kp, double kd, double t)
{
    unsigned up = u16_of(p, -4 * PI, 4 * PI), uv = u16_of(v, -30, 30);
    unsigned ukp = u16_of(kp, 0, 500), ukd = u16_of(kd, 0, 5);
    uint8_t d[8] = {up >> 8,  up & 0xFF,  uv >> 8,  uv & 0xFF,
                    ukp >> 8, ukp & 0xFF, ukd >> 8, ukd & 0xFF};
    return frame(1, u16_of(t, -12, 12), d);
}

static struct hs_can_frame param_write_f32(uint16_t index, float value)
{
    uint8_t d[8] = {index & 0xFF, index >> 8, 0, 0};
    uint32_t u;
    memcpy(&u, &value, 4);
    d[4] = u & 0xFF, d[5] = u >> 8 & 0xFF, d[6] = u >> 16 & 0xFF, d[7] = u >> 24;
    return frame(18, HOST, d);
}

struct rig {
    struct hs_rs_node node;
    struct hs_can_joint_state js;
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[HS_RS_REPLY_MAX + 1];
    int64_t t;
};

static void rig_init(struct rig *r, int64_t timeout_ns)
{
    memset(r, 0, sizeof *r);
    r->js.temp_c = NAN; /* the node's configured temperature */
    struct hs_rs_config cfg;
    hs_rs_config_init(&cfg, HS_RS_MODEL_CYBERGEAR, MOTOR);
    cfg.timeout_ns = timeout_ns;
    cfg.torque_constant_nm_a = 0.5;
    struct hs_diag d;
    assert_int_equal(hs_rs_node_init(&r->node, &cfg, &d), 0);
}

static int offer(struct rig *r, struct hs_can_frame f)
{
    return hs_can_node_on_frame(&r->node.base, &f, r->t);
}

static int poll(struct rig *r)
{
    r->t += 1000000;
    return hs_can_node_poll(&r->node.base, r->t, &r->js, &r->cmd, r->out,
                            sizeof r->out / sizeof r->out[0]);
}

/* Reads a type 2 frame the way the manual describes it. */
static void check_feedback(const struct hs_can_frame *f, unsigned mode, unsigned faults, double p,
                           double v, double t, double temp)
{
    assert_true(f->flags & HS_CAN_FLAG_EXT);
    assert_int_equal(f->len, 8);
    assert_int_equal(f->id >> 24, 2);
    assert_int_equal(f->id >> 22 & 3, mode);
    assert_int_equal(f->id >> 16 & 0x3F, faults);
    assert_int_equal(f->id >> 8 & 0xFF, MOTOR);
    assert_int_equal(f->id & 0xFF, HOST);
    const uint8_t *d = f->data;
    assert_true(fabs(of_u16(d[0] << 8 | d[1], -4 * PI, 4 * PI) - p) <= 8 * PI / 65535);
    assert_true(fabs(of_u16(d[2] << 8 | d[3], -30, 30) - v) <= 60.0 / 65535);
    assert_true(fabs(of_u16(d[4] << 8 | d[5], -12, 12) - t) <= 24.0 / 65535);
    assert_int_equal(d[6] << 8 | d[7], (unsigned)lround(temp * 10));
}

static void test_enable_command_feedback(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    r.js.q_rad = 0.3, r.js.dq_rad_s = -1.5, r.js.tau_nm = 2.0;
    /* commands before enable are answered but drive nothing */
    assert_int_equal(offer(&r, motion(1.0, 0.5, 40, 1.5, 3.0)), 0);
    assert_int_equal(poll(&r), 1);
    assert_false(r.cmd.enabled);
    assert_int_equal(r.out[0].id & 0xFF, 0); /* no host heard yet: the configured one, 0 */
    /* enable (type 3, host ID in bits 15-8) */
    assert_int_equal(offer(&r, frame(3, HOST, NULL)), 0);
    assert_int_equal(poll(&r), 1);
    check_feedback(&r.out[0], 2, 0, 0.3, -1.5, 2.0, 25);
    assert_true(r.cmd.enabled);
    assert_true(r.cmd.kp_nm_rad == 0 && r.cmd.tau_ff_nm == 0); /* zeroed on enable */
    assert_int_equal(offer(&r, motion(1.0, 0.5, 40, 1.5, 3.0)), 0);
    assert_int_equal(poll(&r), 1);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_POSITION_PD);
    assert_true(fabs(r.cmd.q_ref_rad - 1.0) <= 8 * PI / 65535);
    assert_true(fabs(r.cmd.dq_ref_rad_s - 0.5) <= 60.0 / 65535);
    assert_true(fabs(r.cmd.kp_nm_rad - 40) <= 500.0 / 65535);
    assert_true(fabs(r.cmd.kd_nm_s_rad - 1.5) <= 5.0 / 65535);
    assert_true(fabs(r.cmd.tau_ff_nm - 3.0) <= 24.0 / 65535);
    check_feedback(&r.out[0], 2, 0, 0.3, -1.5, 2.0, 25);
    /* the manual's extremes: 0 and 65535 are the range ends */
    assert_int_equal(offer(&r, motion(-100, 100, 1e9, -1, 50)), 0);
    poll(&r);
    assert_true(fabs(r.cmd.q_ref_rad + 4 * PI) < 1e-9 && fabs(r.cmd.dq_ref_rad_s - 30) < 1e-9);
    assert_true(fabs(r.cmd.kp_nm_rad - 500) < 1e-9 && r.cmd.kd_nm_s_rad == 0);
    assert_true(fabs(r.cmd.tau_ff_nm - 12) < 1e-9);
    /* stop: reset mode, output off: the drive's torque is 0, whatever holds the joint */
    assert_int_equal(offer(&r, frame(4, HOST, NULL)), 0);
    assert_int_equal(poll(&r), 1);
    check_feedback(&r.out[0], 0, 0, 0.3, -1.5, 0.0, 25);
    assert_false(r.cmd.enabled);
}

static void test_parameters(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    r.js.q_rad = 1.25, r.js.dq_rad_s = 0.75;
    /* write run_mode = 2 (speed) in reset mode: one u8 in byte 4 */
    uint8_t rm[8] = {0x05, 0x70, 0, 0, 2, 0, 0, 0};
    assert_int_equal(offer(&r, frame(18, HOST, rm)), 0);
    assert_int_equal(offer(&r, param_write_f32(0x700A, 4.0f)), 0); /* spd_ref */
    assert_int_equal(offer(&r, param_write_f32(0x701F, 2.0f)), 0); /* spd_kp */
    /* read run_mode and mechPos, and an index that does not exist */
    uint8_t rd[8] = {0x05, 0x70};
    assert_int_equal(offer(&r, frame(17, HOST, rd)), 0);
    uint8_t rp[8] = {0x19, 0x70};
    assert_int_equal(offer(&r, frame(17, HOST, rp)), 0);
    uint8_t rx[8] = {0x34, 0x12};
    assert_int_equal(offer(&r, frame(17, HOST, rx)), 0);
    assert_int_equal(poll(&r), 6);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r.out[i].id >> 24, 2); /* each write answered with feedback */
    /* read answer: type 17, status 0, motor ID in 15-8, host in 7-0, index echoed */
    assert_int_equal(r.out[3].id, 17u << 24 | 0u << 16 | MOTOR << 8 | HOST);
    assert_true(r.out[3].data[0] == 0x05 && r.out[3].data[1] == 0x70 && r.out[3].data[4] == 2);
    assert_int_equal(r.out[4].id, 17u << 24 | MOTOR << 8 | HOST);
    float f;
    uint32_t u = (uint32_t)r.out[4].data[4] | (uint32_t)r.out[4].data[5] << 8 |
                 (uint32_t)r.out[4].data[6] << 16 | (uint32_t)r.out[4].data[7] << 24;
    memcpy(&f, &u, 4);
    assert_true(fabsf(f - 1.25f) < 1e-6f);
    assert_int_equal(r.out[5].id >> 16 & 0xFF, 1); /* unknown index: status 1 */
    /* enable: speed mode drives tau = Kt spd_kp (spd_ref - dq) */
    offer(&r, frame(3, HOST, NULL));
    poll(&r);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_VELOCITY);
    assert_true(r.cmd.dq_ref_rad_s == 4.0 && fabs(r.cmd.kd_nm_s_rad - 0.5 * 2.0) < 1e-12);
    /* run_mode cannot change while running: still speed after the write */
    rm[4] = 3;
    offer(&r, frame(18, HOST, rm));
    poll(&r);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_VELOCITY);
    /* after a stop it can: current mode, tau = Kt iq_ref */
    offer(&r, frame(4, HOST, NULL));
    offer(&r, frame(18, HOST, rm));
    offer(&r, param_write_f32(0x7006, 3.0f));
    offer(&r, frame(3, HOST, NULL));
    poll(&r);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_TORQUE);
    assert_true(fabs(r.cmd.tau_ff_nm - 1.5) < 1e-6);
    /* position mode: clamp(loc_kp (loc_ref - q), +-limit_spd) into the speed loop */
    offer(&r, frame(4, HOST, NULL));
    rm[4] = 1;
    offer(&r, frame(18, HOST, rm));
    offer(&r, param_write_f32(0x7016, 1.35f)); /* loc_ref: 0.1 rad ahead */
    offer(&r, frame(3, HOST, NULL));
    poll(&r);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_VELOCITY);
    assert_true(fabs(r.cmd.dq_ref_rad_s - 2.0) < 1e-6); /* 30 x 0.1 = 3, clamped to 2 */
}

static void test_fault_report_and_clear(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    offer(&r, frame(3, HOST, NULL));
    poll(&r);
    assert_true(r.cmd.enabled);
    hs_rs_node_fault(&r.node, HS_RS_FAULT_OVERTEMP);
    assert_int_equal(poll(&r), 1);
    assert_false(r.cmd.enabled);
    /* type 21: motor ID in bits 15-8, host in 7-0, fault word little-endian, bit 0 over-temp */
    assert_int_equal(r.out[0].id, 21u << 24 | MOTOR << 8 | HOST);
    assert_true(r.out[0].data[0] == 1 && r.out[0].data[1] == 0 && r.out[0].data[4] == 0);
    /* enable refused; the feedback shows over-temperature (ID bit 18) in reset mode */
    offer(&r, frame(3, HOST, NULL));
    assert_int_equal(poll(&r), 1);
    assert_false(r.cmd.enabled);
    assert_int_equal(r.out[0].id >> 16 & 0x3F, 1u << 2);
    assert_int_equal(r.out[0].id >> 22 & 3, 0);
    /* a plain stop keeps the fault; data[0] = 1 clears it */
    offer(&r, frame(4, HOST, NULL));
    offer(&r, frame(3, HOST, NULL));
    poll(&r);
    assert_false(r.cmd.enabled);
    uint8_t clear[8] = {1};
    offer(&r, frame(4, HOST, clear));
    offer(&r, frame(3, HOST, NULL));
    assert_int_equal(poll(&r), 2);
    assert_true(r.cmd.enabled);
    assert_int_equal(r.out[1].id >> 16 & 0x3F, 0);
}

static void test_zero_timeout_and_id(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 5000000);
    r.js.q_rad = 2.0;
    uint8_t one[8] = {1};
    offer(&r, frame(6, HOST, one));
    offer(&r, frame(3, HOST, NULL));
    assert_int_equal(poll(&r), 2);
    check_feedback(&r.out[1], 2, 0, 0.0, 0, 0, 25); /* the present angle became 0 */
    offer(&r, motion(0.5, 0, 10, 1, 0));
    poll(&r);
    assert_true(fabs(r.cmd.q_ref_rad - 2.5) <= 8 * PI / 65535); /* commands are after zero */
    for (int i = 0; i < 5; i++)
        poll(&r);
    assert_false(r.cmd.enabled); /* 6 ms of silence > 5 ms CAN_TIMEOUT */
    assert_int_equal(r.node.base.stats.timeouts, 1);
    /* type 0: the UID, to target 0xFE, motor ID in bits 15-8 */
    offer(&r, frame(0, HOST, NULL));
    assert_int_equal(poll(&r), 1);
    assert_int_equal(r.out[0].id, MOTOR << 8 | 0xFE);
}

static void test_not_for_it_or_malformed(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    struct hs_can_frame f = frame(3, HOST, NULL);
    f.id = (f.id & ~0xFFu) | 0x10; /* another motor */
    assert_int_equal(offer(&r, f), -ENOENT);
    f = frame(3, HOST, NULL);
    f.flags = 0; /* an 11-bit frame with the same number */
    assert_int_equal(offer(&r, f), -ENOENT);
    f = frame(2, 0x1234, NULL); /* a feedback to a host whose ID is ours */
    assert_int_equal(offer(&r, f), -ENOENT);
    f = frame(3, HOST, NULL);
    f.len = 4;
    assert_int_equal(offer(&r, f), -EBADMSG);
    f = frame(3, HOST, NULL);
    f.flags |= HS_CAN_FLAG_RTR;
    assert_int_equal(offer(&r, f), -EBADMSG);
    assert_int_equal(offer(&r, frame(7, HOST, NULL)), -EOPNOTSUPP); /* set CAN ID */
    assert_int_equal(r.node.base.stats.frames_bad, 2);
    assert_int_equal(r.node.base.stats.frames_unknown, 1);
    assert_int_equal(poll(&r), 0);
}

static void test_codec_round_trip_and_models(void **state)
{
    (void)state;
    const struct hs_rs_limits *l = hs_rs_model_limits(HS_RS_MODEL_RS04);
    assert_true(l->t_max == 120 && l->v_max == 15 && l->kp_max == 5000 && l->kd_max == 100);
    struct hs_rs_feedback fb = {3, 0xAA, HS_RS_MODE_RUN, HS_RS_FB_OVERCURRENT, 1.0, -2, 50, 36.6};
    uint8_t d[8];
    uint32_t id = hs_rs_pack_feedback(l, &fb, d);
    assert_int_equal(id, 2u << 24 | 2u << 22 | 2u << 16 | 3u << 8 | 0xAA);
    struct hs_rs_feedback back;
    assert_int_equal(hs_rs_unpack_feedback(l, id, d, &back), 0);
    assert_true(fabs(back.t_nm - 50) <= 240.0 / 65535 && fabs(back.temp_c - 36.6) < 1e-9);
    assert_int_equal(hs_rs_unpack_feedback(l, 1u << 24, d, &back), -EBADMSG);
}

/* Reads of every parameter the vendor SDK names (robstride_dynamics ParameterType: index and
 * type), on an enabled RS04 at q 1.25 rad (zero offset 0), dq 0.75, torque 6 N·m: status 0, and the
 * value where hilsim knows it (the SDK unpacks int8 from byte 4, uint16 from 4-5, uint32 and
 * float32 from 4-7). The CyberGear has no 0x3xxx reads and nothing above 0x7020. */
struct sdk_param {
    uint16_t index;
    char type;   /* b int8, B uint8, H uint16, L uint32, f float32 */
    double want; /* NAN: any finite value */
};

static void test_sdk_parameters_per_model(void **state)
{
    (void)state;
    static const struct sdk_param sdk[] = {
        {0x2005, 'f', 0},    {0x3016, 'f', 1.25}, {0x3017, 'f', 0.75}, {0x302C, 'f', 6},
        {0x7005, 'b', 0},    {0x7006, 'f', 0},    {0x700A, 'f', 0},    {0x700B, 'f', 120},
        {0x7010, 'f', NAN},  {0x7011, 'f', NAN},  {0x7014, 'f', NAN},  {0x7016, 'f', 0},
        {0x7017, 'f', 15},   {0x7018, 'f', 90},   {0x7019, 'f', 1.25}, {0x701A, 'f', NAN},
        {0x701B, 'f', 0.75}, {0x701C, 'f', 24},   {0x701E, 'f', 30},   {0x701F, 'f', 6},
        {0x7020, 'f', 0.02}, {0x7021, 'f', NAN},  {0x7022, 'f', 100},  {0x7024, 'f', 10},
        {0x7025, 'f', 10},   {0x7026, 'H', 1},    {0x7028, 'L', 0},    {0x7029, 'B', 0},
    };
    struct hs_rs_config cfg;
    hs_rs_config_init(&cfg, HS_RS_MODEL_RS04, MOTOR);
    struct hs_rs_node n;
    assert_int_equal(hs_rs_node_init(&n, &cfg, NULL), 0);
    struct hs_can_joint_state js = {.q_rad = 1.25, .dq_rad_s = 0.75, .tau_nm = 6, .temp_c = NAN};
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[HS_RS_REPLY_MAX];
    /* enabled (in run mode the drive's torque is the plant's; in reset mode 0) */
    struct hs_can_frame en = frame(3, HOST, NULL);
    assert_int_equal(hs_can_node_on_frame(&n.base, &en, 0), 0);
    assert_int_equal(hs_can_node_poll(&n.base, 1000000, &js, &cmd, out, HS_RS_REPLY_MAX), 1);
    for (size_t i = 0; i < sizeof sdk / sizeof sdk[0]; i++) {
        uint8_t d[8] = {sdk[i].index & 0xFF, sdk[i].index >> 8};
        struct hs_can_frame f = frame(17, HOST, d);
        assert_int_equal(hs_can_node_on_frame(&n.base, &f, 0), 0);
        assert_int_equal(hs_can_node_poll(&n.base, 1000000, &js, &cmd, out, HS_RS_REPLY_MAX), 1);
        assert_int_equal(out[0].id, 17u << 24 | MOTOR << 8 | HOST); /* status 0 */
        const uint8_t *v = out[0].data + 4;
        double got;
        switch (sdk[i].type) {
        case 'b':
            got = (int8_t)v[0];
            break;
        case 'B':
            got = v[0];
            break;
        case 'H':
            got = v[0] | v[1] << 8;
            break;
        case 'L':
            got =
                (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 | (uint32_t)v[3] << 24;
            break;
        default: {
            float fl;
            memcpy(&fl, v, 4);
            got = fl;
        }
        }
        if (isnan(sdk[i].want))
            assert_true(isfinite(got));
        else if (fabs(got - sdk[i].want) > 1e-6 * fmax(1, fabs(sdk[i].want)))
            fail_msg("parameter 0x%04X reads %g, want %g", sdk[i].index, got, sdk[i].want);
    }
    /* the CyberGear's table: 0x3016 and 0x7024 unknown (status 1) */
    hs_rs_config_init(&cfg, HS_RS_MODEL_CYBERGEAR, MOTOR);
    assert_int_equal(hs_rs_node_init(&n, &cfg, NULL), 0);
    for (int i = 0; i < 2; i++) {
        uint16_t index = i ? 0x7024 : 0x3016;
        uint8_t d[8] = {index & 0xFF, index >> 8};
        struct hs_can_frame f = frame(17, HOST, d);
        hs_can_node_on_frame(&n.base, &f, 0);
        assert_int_equal(hs_can_node_poll(&n.base, 1000000, &js, &cmd, out, HS_RS_REPLY_MAX), 1);
        assert_int_equal(out[0].id >> 16 & 0xFF, 1);
    }
}

/* RS series: run_mode 5 is CSP; PP (run_mode 1) moves a trapezoidal profile; canTimeout
 * (0x7028, 20000 per second) written by the host arms the timeout. */
static void test_rs_modes_and_timeout(void **state)
{
    (void)state;
    struct hs_rs_config cfg;
    hs_rs_config_init(&cfg, HS_RS_MODEL_RS00, MOTOR);
    cfg.torque_constant_nm_a = 1;
    struct hs_rs_node n;
    assert_int_equal(hs_rs_node_init(&n, &cfg, NULL), 0);
    struct hs_can_joint_state js = {.temp_c = NAN};
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[HS_RS_REPLY_MAX];
    int64_t t = 0;
    uint8_t rm[8] = {0x05, 0x70, 0, 0, 5};
    struct hs_can_frame f = frame(18, HOST, rm);
    assert_int_equal(hs_can_node_on_frame(&n.base, &f, t), 0);
    f = param_write_f32(0x7016, 0.1f);
    hs_can_node_on_frame(&n.base, &f, t);
    f = frame(3, HOST, NULL);
    hs_can_node_on_frame(&n.base, &f, t);
    hs_can_node_poll(&n.base, t += 1000000, &js, &cmd, out, HS_RS_REPLY_MAX);
    /* CSP: v* = loc_kp (30) x 0.1 = 3 rad/s (under limit_spd, the model's 50), kd = Kt spd_kp */
    assert_int_equal(cmd.mode, HS_CAN_JOINT_MODE_VELOCITY);
    assert_true(fabs(cmd.dq_ref_rad_s - 3.0) < 1e-6 && fabs(cmd.kd_nm_s_rad - 5.0) < 1e-6);
    /* PP: from rest, acc_set 10 rad/s² for two 1 ms ticks: the profile's speed 0.02 rad/s */
    f = frame(4, HOST, NULL);
    hs_can_node_on_frame(&n.base, &f, t);
    rm[4] = 1;
    f = frame(18, HOST, rm);
    hs_can_node_on_frame(&n.base, &f, t);
    f = frame(3, HOST, NULL);
    hs_can_node_on_frame(&n.base, &f, t);
    hs_can_node_poll(&n.base, t += 1000000, &js, &cmd, out, HS_RS_REPLY_MAX); /* enters run */
    hs_can_node_poll(&n.base, t += 1000000, &js, &cmd, out, HS_RS_REPLY_MAX);
    assert_true(fabs(n.pp_vel_rad_s - 0.02) < 1e-9);
    /* run_mode 4 does not exist: refused, still PP */
    f = frame(4, HOST, NULL);
    hs_can_node_on_frame(&n.base, &f, t);
    rm[4] = 4;
    f = frame(18, HOST, rm);
    hs_can_node_on_frame(&n.base, &f, t);
    assert_int_equal(n.regs.run_mode, HS_RS_RUN_POSITION);
    /* canTimeout 2000 = 0.1 s: enabled, silent 0.2 s: reset */
    uint8_t to[8] = {0x28, 0x70, 0, 0, 0xD0, 0x07, 0, 0};
    f = frame(18, HOST, to);
    hs_can_node_on_frame(&n.base, &f, t);
    f = frame(3, HOST, NULL);
    hs_can_node_on_frame(&n.base, &f, t);
    hs_can_node_poll(&n.base, t + 50000000, &js, &cmd, out, HS_RS_REPLY_MAX);
    assert_int_equal(n.regs.mode, HS_RS_MODE_RUN);
    hs_can_node_poll(&n.base, t + 200000000, &js, &cmd, out, HS_RS_REPLY_MAX);
    assert_int_equal(n.regs.mode, HS_RS_MODE_RESET);
    assert_int_equal(n.base.stats.timeouts, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enable_command_feedback),
        cmocka_unit_test(test_parameters),
        cmocka_unit_test(test_fault_report_and_clear),
        cmocka_unit_test(test_zero_timeout_and_id),
        cmocka_unit_test(test_not_for_it_or_malformed),
        cmocka_unit_test(test_codec_round_trip_and_models),
        cmocka_unit_test(test_sdk_parameters_per_model),
        cmocka_unit_test(test_rs_modes_and_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
