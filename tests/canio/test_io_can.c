/* The CAN I/O module end to end on the host: config/arm2-can.yaml's bench (SHOULDER as an MIT
 * node, ELBOW as an ODrive node, gear 30) served over a socketpair bus, ticked in simulated
 * time at the config's 1 ms, with the peer playing the controller boards' host.
 *
 * Tolerances: the host closes a PI loop over the bus (the node's PD plus an integral the host
 * computes from the replies), so gravity leaves no static error; 3 s is > 6 time constants of
 * the slowest loop, leaving ~1e-3 rad. 0.01 rad allows for that with margin. Wire scaling is
 * checked against the plant's own reading: MIT position is 16 bits over 25 rad (3.8e-4 rad per
 * step), ODrive float32 turns (~5e-7 relative), both plus one tick of motion. */
#include "mit_config.h"
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "canio_rig.h"
#include "hilsim/can_mit.h"
#include "hilsim/can_odrive.h"

#define TWO_PI 6.283185307179586
#define GEAR_ELBOW 30.0
#define MIT_ID 1
#define MIT_MASTER 0
#define OD_NODE 2

static struct canio_rig rig;
static struct hs_mit_limits lim, lim_i; /* lim_i: the reply's current range */
static int j_sh, j_el;

static int setup(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR"), *cfg = getenv("HS_CANIO_CONFIG");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", src ? src : ".", cfg ? cfg : "config/arm2-can.yaml");
    if (canio_rig_open(&rig, path, NULL, NULL, true) < 0)
        return -1;
    const struct hs_cfg_mit *m = hs_cfg_mit(&rig.cfg->can.nodes[0]);
    lim = (struct hs_mit_limits){m->p_min,  m->p_max, m->v_min,  m->v_max, 0,
                                 m->kp_max, 0,        m->kd_max, m->t_min, m->t_max};
    lim_i = lim;
    lim_i.t_min = m->i_min, lim_i.t_max = m->i_max;
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

static double q_of(int j)
{
    return hs_bench_joint_reading(rig.bench, (uint32_t)j)->q;
}

/* ---- the host ---- */

struct host {
    bool mit_on, mit_feed, od_feed;
    double sh_target, el_target_turn;
    double sh_integ, el_integ;
    /* last heard */
    bool mit_reply;
    double mit_p, mit_v, mit_i;
    uint64_t mit_replies;
    bool od_est;
    double od_pos_turn, od_vel_turn_s;
    uint32_t od_error;
    uint8_t od_state;
    uint64_t heartbeats, estimates;
};

static void host_hear(struct host *h)
{
    struct hs_can_frame f[256];
    int n = canio_recv(&rig, 0, f, 256);
    for (int k = 0; k < n; k++) {
        if (f[k].id == MIT_MASTER) {
            uint8_t id;
            assert_int_equal(f[k].len, 6);
            assert_int_equal(
                hs_mit_unpack_reply(&lim_i, f[k].data, 6, &id, &h->mit_p, &h->mit_v, &h->mit_i), 0);
            assert_int_equal(id, MIT_ID);
            h->mit_reply = true;
            h->mit_replies++;
        } else if (f[k].id == hs_odrive_can_id(OD_NODE, HS_ODRIVE_HEARTBEAT)) {
            h->od_error = hs_odrive_get_u32(f[k].data);
            h->od_state = f[k].data[4];
            h->heartbeats++;
        } else if (f[k].id == hs_odrive_can_id(OD_NODE, HS_ODRIVE_GET_ENCODER_ESTIMATES)) {
            h->od_pos_turn = hs_odrive_get_f32(f[k].data);
            h->od_vel_turn_s = hs_odrive_get_f32(f[k].data + 4);
            h->od_est = true;
            h->estimates++;
        }
    }
}

static void host_command(struct host *h, double dt)
{
    if (h->mit_feed && h->mit_reply) {
        h->sh_integ += (h->sh_target - h->mit_p) * dt;
        double tff = fmax(-60, fmin(60, 600.0 * h->sh_integ));
        struct hs_mit_command c = {h->sh_target, 0, 200, 8, tff};
        uint8_t d[8];
        hs_mit_pack_command(&lim, &c, d);
        canio_send(&rig, 0, MIT_ID, d, 8);
    }
    if (h->od_feed && h->od_est) {
        h->el_integ += (h->el_target_turn - h->od_pos_turn) * dt;
        uint8_t d[8] = {0};
        hs_odrive_put_f32(d, (float)(h->el_target_turn + 2.0 * h->el_integ));
        canio_send(&rig, 0, hs_odrive_can_id(OD_NODE, HS_ODRIVE_SET_INPUT_POS), d, 8);
    }
}

static void run_ticks(struct host *h, long n)
{
    double dt = (double)rig.period_ns * 1e-9;
    for (long i = 0; i < n; i++) {
        host_command(h, dt);
        assert_int_equal(canio_rig_tick(&rig), 0);
        host_hear(h);
    }
}

static void run(struct host *h, double seconds)
{
    run_ticks(h, lround(seconds / ((double)rig.period_ns * 1e-9)));
}

static void mit_special(enum hs_mit_special k)
{
    uint8_t d[8];
    hs_mit_pack_special(k, d);
    canio_send(&rig, 0, MIT_ID, d, 8);
}

static void od_axis_state(uint32_t s)
{
    uint8_t d[4];
    hs_odrive_put_u32(d, s);
    canio_send(&rig, 0, hs_odrive_can_id(OD_NODE, HS_ODRIVE_SET_AXIS_STATE), d, 4);
}

static void node_stats(uint32_t i, struct hs_can_node_stats *ret)
{
    struct hs_bench_can_node_stats s;
    assert_int_equal(hs_bench_can_node_stats(rig.can, i, &s), 0);
    *ret = s.node;
}

/* Both joints closed over the bus to their targets; wire units against the plant. */
/* The host persists across the tests, as a real one would (it knows the last replies). */
static struct host h = {.sh_target = 0.8, .el_target_turn = 1.0 * GEAR_ELBOW / TWO_PI};

static void test_position_loops(void **state)
{
    (void)state;
    /* idle: heartbeats only, axis idle, no MIT traffic before the host speaks */
    run(&h, 1.0);
    assert_in_range(h.heartbeats, 9, 11); /* 100 ms period over 1 s */
    assert_int_equal(h.od_state, HS_ODRIVE_STATE_IDLE);
    assert_int_equal(h.mit_replies, 0);
    assert_true(h.od_est);
    assert_true(fabs(h.od_pos_turn - q_of(j_el) * GEAR_ELBOW / TWO_PI) < 0.01);

    mit_special(HS_MIT_ENTER);
    od_axis_state(HS_ODRIVE_STATE_CLOSED_LOOP);
    run(&h, 0.01);
    assert_true(h.mit_reply);
    assert_int_equal(h.od_state == HS_ODRIVE_STATE_CLOSED_LOOP || h.heartbeats, 1);
    h.mit_feed = h.od_feed = true;
    run(&h, 3.0);
    assert_int_equal(h.od_state, HS_ODRIVE_STATE_CLOSED_LOOP);
    assert_int_equal(h.od_error, 0);
    double qs = q_of(j_sh), qe = q_of(j_el);
    printf("SHOULDER q %.5f (target 0.8), ELBOW q %.5f (target 1.0)\n", qs, qe);
    assert_true(fabs(qs - 0.8) < 0.01);
    assert_true(fabs(qe - 1.0) < 0.01);
    /* wire scaling: MIT joint side rad; ODrive motor turns through the gear */
    assert_true(fabs(h.mit_p - qs) < 4e-4 + 1e-3);
    assert_true(fabs(h.od_pos_turn * TWO_PI / GEAR_ELBOW - qe) < 1e-3);
    double i_sh = hs_bench_joint_reading(rig.bench, (uint32_t)j_sh)->current;
    assert_true(fabs(h.mit_i - i_sh) < 2 * 80.0 / 4095 + 0.05 * fabs(i_sh));
    assert_true(fabs(i_sh) > 0.1); /* holding the arm against gravity takes current */
}

/* The host goes silent: MIT's timeout cuts the shoulder's torque (the arm falls before the
 * plant's 0.25 s backstop brakes it), the ODrive watchdog (0.5 s) idles the axis with the
 * error bit, reported in the heartbeat. */
static void test_timeouts(void **state)
{
    (void)state;
    h.mit_feed = h.od_feed = true;
    run(&h, 0.5);
    struct hs_can_node_stats before;
    node_stats(0, &before);
    double q0 = q_of(j_sh);
    h.mit_feed = h.od_feed = false;
    run(&h, 0.2);
    struct hs_can_node_stats after;
    node_stats(0, &after);
    assert_int_equal(after.timeouts, before.timeouts + 1);
    printf("SHOULDER moved %.4f rad in 0.2 s without commands\n", q0 - q_of(j_sh));
    assert_true(fabs(q0 - q_of(j_sh)) > 0.02);
    assert_int_equal(h.od_state, HS_ODRIVE_STATE_CLOSED_LOOP); /* watchdog not yet */
    run(&h, 0.5);
    assert_int_equal(h.od_state, HS_ODRIVE_STATE_IDLE);
    assert_true(h.od_error & HS_ODRIVE_ERROR_WATCHDOG_TIMER_EXPIRED);
    /* the latched error keeps it idle until Clear_Errors */
    od_axis_state(HS_ODRIVE_STATE_CLOSED_LOOP);
    run(&h, 0.2);
    assert_int_equal(h.od_state, HS_ODRIVE_STATE_IDLE);
    canio_send(&rig, 0, hs_odrive_can_id(OD_NODE, HS_ODRIVE_CLEAR_ERRORS), NULL, 0);
    /* The idle forearm swings freely meanwhile: re-armed faster than 1.2 x vel_limit the
     * firmware faults on overspeed (test_odrive), so the host raises the limit first
     * (Set_Limits: 100 turn/s, the node's 25 A). */
    uint8_t limits[8];
    hs_odrive_put_f32(limits, 100.0f);
    hs_odrive_put_f32(limits + 4, 25.0f);
    canio_send(&rig, 0, hs_odrive_can_id(OD_NODE, HS_ODRIVE_SET_LIMITS), limits, 8);
    od_axis_state(HS_ODRIVE_STATE_CLOSED_LOOP);
    run(&h, 0.2);
    assert_int_equal(h.od_state, HS_ODRIVE_STATE_CLOSED_LOOP);
    assert_int_equal(h.od_error, 0);
}

/* Wrong DLCs, remote frames on setters, unknown IDs, garbage and a flood: counted and
 * ignored; the nodes keep answering and the tick keeps running. */
static void test_bad_frames(void **state)
{
    (void)state;
    h.mit_feed = h.od_feed = true;
    run(&h, 3.0); /* back to the targets after the previous test's fall */
    struct hs_can_node_stats m0, o0, m1, o1;
    node_stats(0, &m0);
    node_stats(1, &o0);
    struct hs_bench_can_bus_stats b0, b1;
    assert_int_equal(hs_bench_can_bus_stats(rig.can, 0, &b0), 0);
    uint8_t junk[8] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4};
    canio_send(&rig, 0, MIT_ID, junk, 5);                                             /* short */
    canio_send(&rig, 0, hs_odrive_can_id(OD_NODE, HS_ODRIVE_SET_INPUT_POS), junk, 3); /* short */
    canio_send(&rig, 0, hs_odrive_can_id(OD_NODE, 0x1F), junk, 8); /* unknown cmd */
    uint8_t nan[8] = {0, 0, 0xc0, 0x7f, 0, 0, 0, 0};               /* NaN pos */
    canio_send(&rig, 0, hs_odrive_can_id(OD_NODE, HS_ODRIVE_SET_INPUT_POS), nan, 8);
    unsigned flood = 0, mit_bad = 0;
    for (unsigned k = 0; k < 5000; k++) {
        uint32_t id = k % 3 == 0 ? 0x123u : k % 3 == 1 ? (uint32_t)MIT_ID : 0x7FFu;
        /* MIT frames with DLC 0..6: all malformed */
        int sent = canio_send(&rig, 0, id, junk, k % 3 == 1 ? (k % 7) : 8);
        flood += sent > 0;
        mit_bad += sent > 0 && k % 3 == 1;
        if (k % 50 == 49)
            run_ticks(&h, 1);
    }
    run(&h, 0.5);
    node_stats(0, &m1);
    node_stats(1, &o1);
    assert_int_equal(hs_bench_can_bus_stats(rig.can, 0, &b1), 0);
    printf("flood %u delivered: mit bad +%llu, odrive bad +%llu unknown +%llu, bus rx +%llu, "
           "rx-capped ticks %llu\n",
           flood, (unsigned long long)(m1.frames_bad - m0.frames_bad),
           (unsigned long long)(o1.frames_bad - o0.frames_bad),
           (unsigned long long)(o1.frames_unknown - o0.frames_unknown),
           (unsigned long long)(b1.state.rx_frames - b0.state.rx_frames),
           (unsigned long long)b1.rx_capped_ticks);
    /* the short one and every flood frame to the MIT ID the socket took (an AF_UNIX
     * datagram queue holds few frames, so part of the flood is refused at the sender) */
    assert_true(mit_bad > 300);
    assert_int_equal(m1.frames_bad - m0.frames_bad, 1 + mit_bad);
    assert_true(o1.frames_bad - o0.frames_bad >= 2);
    assert_true(o1.frames_unknown - o0.frames_unknown >= 1);
    /* 0x123 and 0x7FF are filtered like the kernel would, never reaching the module */
    assert_int_equal(b1.unclaimed, b0.unclaimed);
    /* still in control: the nodes answer and hold the targets */
    uint64_t r0 = h.mit_replies, e0 = h.estimates;
    run(&h, 0.1);
    assert_true(h.mit_replies > r0 && h.estimates > e0);
    assert_true(fabs(q_of(j_sh) - 0.8) < 0.01);
    assert_true(fabs(q_of(j_el) - 1.0) < 0.01);
    assert_int_equal(h.od_state, HS_ODRIVE_STATE_CLOSED_LOOP);
}

/* The runner's warm-up ticks run back to back: nothing they build may reach the bus. The nodes
 * still run (their frames are counted as held), and the first real tick sends again. */
static void test_warm_up_sends_nothing(void **state)
{
    (void)state;
    struct hs_can_frame f[64];
    while (canio_recv(&rig, 0, f, 64) > 0)
        ;
    uint64_t held0 = hs_bench_can_warmup_frames_held(rig.can);
    hs_bench_set_warming_up(rig.bench, true);
    for (int k = 0; k < 500; k++)
        assert_int_equal(canio_rig_tick(&rig), 0);
    assert_int_equal(canio_recv(&rig, 0, f, 64), 0);
    assert_true(hs_bench_can_warmup_frames_held(rig.can) > held0);
    hs_bench_set_warming_up(rig.bench, false);
    int sent = 0;
    for (int k = 0; k < 500; k++) {
        assert_int_equal(canio_rig_tick(&rig), 0);
        int n;
        while ((n = canio_recv(&rig, 0, f, 64)) > 0)
            sent += n;
    }
    assert_true(sent > 0);
}

/* Safe stop: the ODrive says idle, MIT sends a last zero-current reply. */
static void test_safe_stop(void **state)
{
    (void)state;
    host_hear(&h);
    hs_bench_safe_stop(rig.bench);
    struct hs_can_frame f[16];
    int n = canio_recv(&rig, 0, f, 16);
    bool mit = false, od = false;
    for (int k = 0; k < n; k++) {
        if (f[k].id == MIT_MASTER) {
            uint8_t id;
            double p, v, i;
            hs_mit_unpack_reply(&lim_i, f[k].data, 6, &id, &p, &v, &i);
            mit = fabs(i) < 2 * 80.0 / 4095;
        }
        if (f[k].id == hs_odrive_can_id(OD_NODE, HS_ODRIVE_HEARTBEAT))
            od = f[k].data[4] == HS_ODRIVE_STATE_IDLE;
    }
    assert_true(mit);
    assert_true(od);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_position_loops), cmocka_unit_test(test_timeouts),
        cmocka_unit_test(test_bad_frames),     cmocka_unit_test(test_warm_up_sends_nothing),
        cmocka_unit_test(test_safe_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
