/* ODrive CAN Simple node: arming, setpoints in each control mode, the controller's velocity
 * limit, overspeed fault and integrator, cyclic cadence, remote reads, watchdog, estop, bad
 * frames. Payloads are written out byte by byte from the protocol
 * (little-endian, IEEE single floats) so the test does not trust the codec it checks. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/can_odrive.h"

#define NODE 5
#define MS 1000000LL
#define TWO_PI 6.283185307179586

struct rig {
    struct hs_odrive_node node;
    struct hs_can_joint_state js;
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[16];
    int n_out;
};

static void rig_init(struct rig *r, int64_t watchdog_ns)
{
    struct hs_odrive_config cfg;
    hs_odrive_config_init(&cfg, NODE);
    cfg.watchdog_timeout_ns = watchdog_ns;
    memset(r, 0, sizeof *r);
    struct hs_diag d;
    assert_int_equal(hs_odrive_node_init(&r->node, &cfg, &d), 0);
}

static int send(struct rig *r, unsigned cmd, uint8_t flags, unsigned len, const uint8_t *data,
                int64_t t)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = hs_odrive_can_id(NODE, cmd), f.flags = flags, f.len = (uint8_t)len;
    if (data)
        memcpy(f.data, data, len);
    return hs_can_node_on_frame(&r->node.base, &f, t);
}

static void poll(struct rig *r, int64_t t)
{
    r->n_out = hs_can_node_poll(&r->node.base, t, &r->js, &r->cmd, r->out, 16);
    assert_true(r->n_out >= 0);
}

static const struct hs_can_frame *find(struct rig *r, unsigned cmd)
{
    for (int i = 0; i < r->n_out; i++)
        if (r->out[i].id == hs_odrive_can_id(NODE, cmd))
            return &r->out[i];
    return NULL;
}

static void arm(struct rig *r, int64_t t)
{
    const uint8_t closed_loop[4] = {8, 0, 0, 0};
    assert_int_equal(send(r, 0x007, 0, 4, closed_loop, t), 0);
}

static void put_f32(uint8_t *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    p[0] = (uint8_t)u, p[1] = (uint8_t)(u >> 8), p[2] = (uint8_t)(u >> 16),
    p[3] = (uint8_t)(u >> 24);
}

static void send_f32x2(struct rig *r, unsigned cmd, float a, float b, int64_t t)
{
    uint8_t d[8];
    put_f32(d, a);
    put_f32(d + 4, b);
    assert_int_equal(send(r, cmd, 0, 8, d, t), 0);
}

static void test_arm_then_position_setpoint(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    r.js.q_rad = 0.5 * TWO_PI; /* half a turn */
    poll(&r, 0);
    assert_false(r.cmd.enabled);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_OFF);
    arm(&r, 1 * MS);
    poll(&r, 1 * MS);
    assert_true(r.cmd.enabled);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_POSITION_PD);
    assert_true(fabs(r.cmd.q_ref_rad - 0.5 * TWO_PI) < 1e-9); /* holds where it is */
    /* Set_Limits: vel 100 turn/s (0x42C80000), current 10 A (0x41200000): this step's
     * velocity set point (18 turn/s) stays below the limit, so the plant gets the PD form */
    const uint8_t limits[8] = {0x00, 0x00, 0xC8, 0x42, 0x00, 0x00, 0x20, 0x41};
    assert_int_equal(send(&r, 0x00F, 0, 8, limits, 2 * MS), 0);
    /* pos 1.5 turn = 0x3FC00000, vel_ff -2.000 = -2000 = 0xF830, torque_ff 0.500 = 0x01F4 */
    const uint8_t pos[8] = {0x00, 0x00, 0xC0, 0x3F, 0x30, 0xF8, 0xF4, 0x01};
    assert_int_equal(send(&r, 0x00C, 0, 8, pos, 2 * MS), 0);
    poll(&r, 2 * MS);
    assert_true(fabs(r.cmd.q_ref_rad - 1.5 * TWO_PI) < 1e-9);
    assert_true(fabs(r.cmd.dq_ref_rad_s + 2.0 * TWO_PI) < 1e-9);
    assert_true(fabs(r.cmd.tau_ff_nm - 0.5) < 1e-9);
    /* cascade pos_gain 20, vel_gain 1/6 N*m/(turn/s) as a PD law in radians */
    assert_true(fabs(r.cmd.kp_nm_rad - 20.0 / 6.0 / TWO_PI) < 1e-12);
    assert_true(fabs(r.cmd.kd_nm_s_rad - 1.0 / 6.0 / TWO_PI) < 1e-12);
    assert_true(fabs(r.cmd.torque_limit_nm - 10 * 0.04) < 1e-12);
    assert_int_equal(r.cmd.rx_time_ns, 2 * MS);
}

static void test_velocity_and_torque_modes(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    poll(&r, 0);
    arm(&r, 0);
    const uint8_t vel_mode[8] = {2, 0, 0, 0, 1, 0, 0, 0};
    assert_int_equal(send(&r, 0x00B, 0, 8, vel_mode, 0), 0);
    /* vel 3.0 = 0x40400000, torque_ff 0.25 = 0x3E800000 */
    const uint8_t vel[8] = {0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x3E};
    assert_int_equal(send(&r, 0x00D, 0, 8, vel, 0), 0);
    poll(&r, 1 * MS);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_VELOCITY);
    /* 3 turn/s is clamped to the default vel_limit of 2 turn/s */
    assert_true(fabs(r.cmd.dq_ref_rad_s - 2.0 * TWO_PI) < 1e-9);
    assert_true(fabs(r.cmd.tau_ff_nm - 0.25) < 1e-9); /* the integrator starts at 0 */
    assert_true(fabs(r.cmd.kd_nm_s_rad - 1.0 / 6.0 / TWO_PI) < 1e-12);
    assert_true(r.cmd.kp_nm_rad == 0);
    const uint8_t torque_mode[8] = {1, 0, 0, 0, 1, 0, 0, 0};
    const uint8_t torque[4] = {0x00, 0x00, 0xA0, 0x3F}; /* 1.25 */
    assert_int_equal(send(&r, 0x00B, 0, 8, torque_mode, 0), 0);
    assert_int_equal(send(&r, 0x00E, 0, 4, torque, 0), 0);
    poll(&r, 2 * MS);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_TORQUE);
    /* torque mode's velocity limit at standstill: (vel_limit - vel) * vel_gain = 2/6 N*m */
    assert_true(fabs(r.cmd.tau_ff_nm - 2.0 / 6.0) < 1e-9);
    /* Set_Limits: vel 4 turn/s, current 20 A (0x41A00000) -> torque limit 0.8 N*m */
    const uint8_t limits[8] = {0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0xA0, 0x41};
    assert_int_equal(send(&r, 0x00F, 0, 8, limits, 0), 0);
    poll(&r, 3 * MS);
    assert_true(fabs(r.cmd.torque_limit_nm - 0.8) < 1e-9);
    assert_true(fabs(r.cmd.tau_ff_nm - 4.0 / 6.0) < 1e-9);
    r.js.dq_rad_s = 3.5 * TWO_PI; /* moving: only (4 - 3.5) / 6 is left */
    poll(&r, 4 * MS);
    assert_true(fabs(r.cmd.tau_ff_nm - 0.5 / 6.0) < 1e-9);
    r.js.dq_rad_s = -1.0 * TWO_PI; /* against the motion: up to (4 + 1) / 6 */
    poll(&r, 5 * MS);
    assert_true(fabs(r.cmd.tau_ff_nm - 5.0 / 6.0) < 1e-9);
    r.js.dq_rad_s = -4.0 * TWO_PI; /* (4 + 4) / 6 is above 1.25: it passes whole */
    poll(&r, 6 * MS);
    assert_true(fabs(r.cmd.tau_ff_nm - 1.25) < 1e-9);
}

/* A step bigger than vel_limit / pos_gain: the set point is clamped and commanded as a velocity
 * at the limit, then the PD form returns once the error is small. */
static void test_velocity_limit_clamps_position_steps(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    poll(&r, 0);
    arm(&r, 0);
    send_f32x2(&r, 0x00C, 1.0f, 0.0f, 0); /* 1 turn away: 20 turn/s wanted, 2 allowed */
    poll(&r, 1 * MS);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_VELOCITY);
    assert_true(fabs(r.cmd.dq_ref_rad_s - 2.0 * TWO_PI) < 1e-9);
    r.js.q_rad = 0.95 * TWO_PI; /* 0.05 turn away: 1 turn/s, inside the limit */
    poll(&r, 2 * MS);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_POSITION_PD);
    assert_true(fabs(r.cmd.q_ref_rad - 1.0 * TWO_PI) < 1e-9);
    send_f32x2(&r, 0x00C, -5.0f, 0.0f, 3 * MS); /* and the other way */
    poll(&r, 3 * MS);
    assert_true(fabs(r.cmd.dq_ref_rad_s + 2.0 * TWO_PI) < 1e-9);
}

/* |vel| above vel_limit_tolerance x vel_limit in closed loop: the controller's overspeed error,
 * reported as ERROR_CONTROLLER_FAILED in the heartbeat, the axis idle until Clear_Errors. */
static void test_overspeed_faults_the_axis(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    poll(&r, 0);
    arm(&r, 0);
    r.js.dq_rad_s = 2.39 * TWO_PI; /* below 1.2 x 2 turn/s */
    poll(&r, 1 * MS);
    assert_true(r.cmd.enabled);
    r.js.dq_rad_s = -2.41 * TWO_PI;
    poll(&r, 2 * MS);
    assert_false(r.cmd.enabled);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_OFF);
    assert_int_equal(r.node.controller_error, HS_ODRIVE_CONTROLLER_ERROR_OVERSPEED);
    poll(&r, 100 * MS); /* heartbeat due */
    const struct hs_can_frame *hb = find(&r, 0x001);
    assert_non_null(hb);
    const uint8_t want[5] = {0x00, 0x02, 0x00, 0x00, 0x01}; /* 0x200 controller failed, idle */
    assert_memory_equal(hb->data, want, 5);
    arm(&r, 101 * MS);
    poll(&r, 101 * MS);
    assert_false(r.cmd.enabled); /* latched */
    r.js.dq_rad_s = 0;
    assert_int_equal(send(&r, 0x018, 0, 0, NULL, 102 * MS), 0);
    assert_int_equal(r.node.controller_error, 0);
    arm(&r, 102 * MS);
    poll(&r, 102 * MS);
    assert_true(r.cmd.enabled);
    /* vel_limit_tolerance 0 turns the check off */
    struct hs_odrive_config cfg;
    hs_odrive_config_init(&cfg, NODE);
    cfg.vel_limit_tolerance = 0;
    struct hs_diag d;
    assert_int_equal(hs_odrive_node_init(&r.node, &cfg, &d), 0);
    r.js.dq_rad_s = 0;
    poll(&r, 0);
    arm(&r, 0);
    r.js.dq_rad_s = 50 * TWO_PI;
    poll(&r, 1 * MS);
    assert_true(r.cmd.enabled);
}

/* The integrator against a load that holds the axis still: after n ticks of dt with a
 * velocity error v_err it has added vel_integrator_gain * n * dt * v_err to the feed-forward
 * (exact), and while the torque saturates it decays by 0.99 per 125 us firmware cycle. */
static void test_integrator_accumulates_and_decays_when_saturated(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    poll(&r, 0);
    arm(&r, 0);
    send_f32x2(&r, 0x00C, 0.01f, 0.0f, 0); /* 0.01 turn: v_err = 20 x 0.01 = 0.2 turn/s */
    const double pos_ref = (double)0.01f, v_err = 20.0 * pos_ref, ki = 2.0 / 6.0, dt = 1e-3;
    for (int n = 1; n <= 100; n++) {
        poll(&r, n * MS);
        /* the value used at poll n is the one accumulated over the n - 1 earlier intervals */
        assert_true(fabs(r.cmd.tau_ff_nm - ki * (n - 1) * dt * v_err) < 1e-12);
        assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_POSITION_PD);
    }
    double before = r.node.vel_integrator_nm;
    assert_true(fabs(before - ki * 100 * dt * v_err) < 1e-12);
    /* torque = vel_gain * v_err + integrator = 0.033 + 0.0067: saturate it with a tiny limit
     * (Set_Limits: vel 2 turn/s, current 0.5 A -> 0.02 N*m) */
    send_f32x2(&r, 0x00F, 2.0f, 0.5f, 100 * MS);
    poll(&r, 101 * MS);
    assert_true(fabs(r.node.vel_integrator_nm - before * pow(0.99, 8)) < 1e-12);
    /* torque mode resets it */
    const uint8_t torque_mode[8] = {1, 0, 0, 0, 1, 0, 0, 0};
    assert_int_equal(send(&r, 0x00B, 0, 8, torque_mode, 102 * MS), 0);
    poll(&r, 102 * MS);
    assert_true(r.node.vel_integrator_nm == 0);
}

/* Closed loop against a constant load torque L on a rigid axis (J, integrated here per 0.1 ms
 * with the PD part applied at every step, as the plant does): the static error is L / kp
 * without the integrator. With it (and J -> 0) the error obeys
 * vel_gain e'' + (vel_gain pos_gain + ki) e' + ki pos_gain e = 0, whose roots are -pos_gain and
 * -ki / vel_gain: the error dies out at 2 /s with the firmware's gains (J adds a fast root far
 * above). */
static double settle_against_load(double ki, double load_nm, double seconds)
{
    struct rig r;
    struct hs_odrive_config cfg;
    hs_odrive_config_init(&cfg, NODE);
    cfg.vel_integrator_gain_nm_turn = ki;
    memset(&r, 0, sizeof r);
    struct hs_diag d;
    assert_int_equal(hs_odrive_node_init(&r.node, &cfg, &d), 0);
    const double J = 1e-4; /* kg m^2 at the motor */
    double q = 0, dq = 0;
    poll(&r, 0);
    arm(&r, 0);
    for (int64_t t = 0; t < (int64_t)(seconds * 1000) * MS; t += MS) { /* 1 ms ticks */
        r.js.q_rad = q, r.js.dq_rad_s = dq;
        poll(&r, t);
        for (int k = 0; k < 10; k++) {
            double tau = r.cmd.kp_nm_rad * (r.cmd.q_ref_rad - q) +
                         r.cmd.kd_nm_s_rad * (r.cmd.dq_ref_rad_s - dq) + r.cmd.tau_ff_nm;
            tau = fmax(fmin(tau, r.cmd.torque_limit_nm), -r.cmd.torque_limit_nm);
            dq += (tau - load_nm) / J * 1e-4;
            q += dq * 1e-4;
        }
    }
    return q / TWO_PI; /* turns; the set point is 0 */
}

static void test_integrator_removes_the_static_error(void **state)
{
    (void)state;
    const double load = 0.05;    /* N*m, within the 0.4 N*m torque limit */
    double kp_turn = 20.0 / 6.0; /* N*m per turn: pos_gain x vel_gain */
    double e0 = -load / kp_turn;
    double without = settle_against_load(0, load, 2);
    double at2 = settle_against_load(2.0 / 6.0, load, 2);
    double at3 = settle_against_load(2.0 / 6.0, load, 3);
    double at5 = settle_against_load(2.0 / 6.0, load, 5);
    double pg = 20, kv = 1.0 / 6.0, ki = 2.0 / 6.0;
    double rate = fmin(pg, ki / kv), measured = log(at2 / at3);
    print_message("error against %.3f N*m: %.6f turn without the integrator (L/kp = %.6f); with "
                  "it %.3e turn at 2 s, %.3e at 3 s (decay %.4f /s, analytic %.4f), %.1e at 5 s\n",
                  load, without, e0, at2, at3, measured, rate, at5);
    assert_true(fabs(without - e0) < 1e-3 * fabs(e0));
    assert_true(fabs(measured - rate) < 0.02 * rate);
    assert_true(fabs(at5) < 1e-4 * fabs(e0));
}

static void test_cyclic_heartbeat_and_encoder_cadence(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    int heartbeats = 0, encoders = 0;
    int64_t last_hb = -1;
    for (int64_t t = 0; t <= 1000 * MS; t += MS) {
        r.js.q_rad = t * 1e-9; /* 1 rad/s */
        r.js.dq_rad_s = 1.0;
        poll(&r, t);
        const struct hs_can_frame *hb = find(&r, 0x001);
        if (hb) {
            heartbeats++;
            if (last_hb >= 0)
                assert_int_equal(t - last_hb, 100 * MS);
            last_hb = t;
            assert_int_equal(hb->len, 8);
            assert_int_equal(hb->data[4], 1); /* idle */
        }
        const struct hs_can_frame *enc = find(&r, 0x009);
        if (enc) {
            encoders++;
            float pos, vel;
            memcpy(&pos, enc->data, 4); /* little-endian host */
            memcpy(&vel, enc->data + 4, 4);
            assert_true(fabs(pos - t * 1e-9 / TWO_PI) < 1e-6);
            assert_true(fabs(vel - 1.0 / TWO_PI) < 1e-6);
        }
    }
    assert_int_equal(heartbeats, 10);
    assert_int_equal(encoders, 100);
}

static void test_remote_reads_answered_next_poll(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    r.js.q_rad = 2.25 * TWO_PI, r.js.dq_rad_s = -0.5 * TWO_PI, r.js.current_a = 3.5;
    poll(&r, 0);
    assert_int_equal(send(&r, 0x009, HS_CAN_FLAG_RTR, 8, NULL, 1), 0);
    assert_int_equal(send(&r, 0x014, HS_CAN_FLAG_RTR, 8, NULL, 1), 0);
    assert_int_equal(send(&r, 0x017, 0, 0, NULL, 1), 0); /* empty data frame reads too */
    assert_int_equal(send(&r, 0x00A, HS_CAN_FLAG_RTR, 8, NULL, 1), 0);
    poll(&r, 1);
    assert_int_equal(r.n_out, 4);
    const struct hs_can_frame *e = find(&r, 0x009);
    assert_non_null(e);
    const uint8_t want_pos[4] = {0x00, 0x00, 0x10, 0x40}; /* 2.25 */
    const uint8_t want_vel[4] = {0x00, 0x00, 0x00, 0xBF}; /* -0.5 */
    assert_memory_equal(e->data, want_pos, 4);
    assert_memory_equal(e->data + 4, want_vel, 4);
    const struct hs_can_frame *iq = find(&r, 0x014);
    assert_true(hs_odrive_get_f32(iq->data + 4) == 3.5f);
    const uint8_t want_vbus[4] = {0x00, 0x00, 0xC0, 0x41}; /* 24.0 */
    assert_memory_equal(find(&r, 0x017)->data, want_vbus, 4);
    const struct hs_can_frame *cnt = find(&r, 0x00A);
    assert_int_equal(hs_odrive_get_u32(cnt->data), 2.25 * 8192);
    assert_int_equal(hs_odrive_get_u32(cnt->data + 4), 0.25 * 8192);
    poll(&r, 2);
    assert_int_equal(r.n_out, 0); /* answered once */
    /* a data frame on a read ID is somebody's answer, not a request */
    const uint8_t junk[8] = {0};
    assert_int_equal(send(&r, 0x009, 0, 8, junk, 3), -EOPNOTSUPP);
    assert_int_equal(r.node.base.stats.frames_unknown, 1);
}

static void test_watchdog_idles_with_error_until_cleared(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 50 * MS);
    poll(&r, 0);
    arm(&r, 0);
    for (int64_t t = 0; t <= 200 * MS; t += 10 * MS) {
        const uint8_t torque[4] = {0, 0, 0, 0};
        assert_int_equal(send(&r, 0x00E, 0, 4, torque, t), 0); /* any frame feeds */
        poll(&r, t);
        assert_true(r.cmd.enabled);
    }
    poll(&r, 250 * MS); /* exactly the timeout: still armed */
    assert_true(r.cmd.enabled);
    poll(&r, 250 * MS + 1);
    assert_false(r.cmd.enabled);
    assert_int_equal(r.cmd.mode, HS_CAN_JOINT_MODE_OFF);
    assert_int_equal(r.node.base.stats.timeouts, 1);
    poll(&r, 300 * MS); /* heartbeat due: error and idle state */
    const struct hs_can_frame *hb = find(&r, 0x001);
    assert_non_null(hb);
    const uint8_t want[5] = {0x00, 0x08, 0x00, 0x00, 0x01}; /* 0x800 watchdog, idle */
    assert_memory_equal(hb->data, want, 5);
    arm(&r, 301 * MS); /* refused while the error is latched */
    poll(&r, 301 * MS);
    assert_false(r.cmd.enabled);
    assert_int_equal(send(&r, 0x018, 0, 0, NULL, 302 * MS), 0); /* Clear_Errors */
    arm(&r, 302 * MS);
    poll(&r, 302 * MS);
    assert_true(r.cmd.enabled);
}

static void test_estop_and_invalid_state(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    poll(&r, 0);
    arm(&r, 0);
    poll(&r, 0);
    assert_true(r.cmd.enabled);
    assert_int_equal(send(&r, 0x002, 0, 0, NULL, 1), 0);
    poll(&r, 1);
    assert_false(r.cmd.enabled);
    assert_int_equal(r.node.axis_error, HS_ODRIVE_ERROR_ESTOP_REQUESTED);
    assert_int_equal(r.node.axis_state, HS_ODRIVE_STATE_IDLE);
    send(&r, 0x018, 0, 0, NULL, 2);
    const uint8_t sensorless[4] = {5, 0, 0, 0};
    assert_int_equal(send(&r, 0x007, 0, 4, sensorless, 3), 0);
    assert_int_equal(r.node.axis_error, HS_ODRIVE_ERROR_INVALID_STATE);
    const uint8_t calib[4] = {3, 0, 0, 0};
    send(&r, 0x018, 0, 0, NULL, 4);
    assert_int_equal(send(&r, 0x007, 0, 4, calib, 5), 0); /* pre-calibrated: no error */
    assert_int_equal(r.node.axis_error, 0);
    assert_int_equal(r.node.axis_state, HS_ODRIVE_STATE_IDLE);
}

static void test_bad_frames_counted_and_ignored(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, 0);
    poll(&r, 0);
    arm(&r, 0);
    const uint8_t pos[8] = {0x00, 0x00, 0xC0, 0x3F, 0, 0, 0, 0};
    const uint8_t nan[8] = {0x00, 0x00, 0xC0, 0x7F, 0, 0, 0, 0};
    assert_int_equal(send(&r, 0x00C, 0, 4, pos, 1), -EBADMSG);                /* short */
    assert_int_equal(send(&r, 0x00C, HS_CAN_FLAG_RTR, 8, NULL, 1), -EBADMSG); /* RTR setter */
    const uint8_t pos12[12] = {0x00, 0x00, 0xC0, 0x3F};
    assert_int_equal(send(&r, 0x00C, HS_CAN_FLAG_FD, 12, pos12, 1), -EBADMSG); /* FD */
    assert_int_equal(send(&r, 0x00C, 0, 8, nan, 1), -EBADMSG);                 /* NaN */
    const uint8_t voltage_mode[8] = {0, 0, 0, 0, 1, 0, 0, 0};
    assert_int_equal(send(&r, 0x00B, 0, 8, voltage_mode, 1), -EBADMSG);
    assert_int_equal(send(&r, 0x010, 0, 0, NULL, 1), -EOPNOTSUPP); /* anticogging */
    struct hs_can_frame other;
    memset(&other, 0, sizeof other);
    other.id = hs_odrive_can_id(NODE + 1, HS_ODRIVE_SET_INPUT_POS), other.len = 8;
    assert_int_equal(hs_can_node_on_frame(&r.node.base, &other, 1), -ENOENT);
    assert_int_equal(r.node.base.stats.frames_bad, 5);
    assert_int_equal(r.node.base.stats.frames_unknown, 1);
    poll(&r, 1);
    assert_true(r.cmd.enabled);
    assert_true(fabs(r.cmd.q_ref_rad) < 1e-12); /* the bad setpoints were not applied */
}

static void test_config_validation(void **state)
{
    (void)state;
    struct hs_odrive_config cfg;
    struct hs_odrive_node n;
    struct hs_diag d;
    hs_odrive_config_init(&cfg, 64);
    assert_int_equal(hs_odrive_node_init(&n, &cfg, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "node_id"));
    hs_odrive_config_init(&cfg, 1);
    cfg.torque_constant_nm_a = 0;
    assert_int_equal(hs_odrive_node_init(&n, &cfg, &d), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arm_then_position_setpoint),
        cmocka_unit_test(test_velocity_and_torque_modes),
        cmocka_unit_test(test_velocity_limit_clamps_position_steps),
        cmocka_unit_test(test_overspeed_faults_the_axis),
        cmocka_unit_test(test_integrator_accumulates_and_decays_when_saturated),
        cmocka_unit_test(test_integrator_removes_the_static_error),
        cmocka_unit_test(test_cyclic_heartbeat_and_encoder_cadence),
        cmocka_unit_test(test_remote_reads_answered_next_poll),
        cmocka_unit_test(test_watchdog_idles_with_error_until_cleared),
        cmocka_unit_test(test_estop_and_invalid_state),
        cmocka_unit_test(test_bad_frames_counted_and_ignored),
        cmocka_unit_test(test_config_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
