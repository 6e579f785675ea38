/* The per-tick path end to end on a socketpair bus: controller frames in, node dispatch, poll,
 * replies out. Checks the replies and that the tick path allocates nothing (malloc, calloc and
 * realloc are wrapped at link time; label nosan: ASan has its own allocator). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/can.h"
#include "hilsim/can_mit.h"
#include "hilsim/can_odrive.h"
#include "moteus/moteus.h"
#include "robstride/robstride.h"

static unsigned allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
    allocs++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t a, size_t b)
{
    allocs++;
    return __real_calloc(a, b);
}

void *__wrap_realloc(void *p, size_t n)
{
    allocs++;
    return __real_realloc(p, n);
}

#define MS 1000000LL

static void test_tick_path_replies_and_allocates_nothing(void **state)
{
    (void)state;
    struct hs_can_config cfg;
    hs_can_config_init(&cfg);
    cfg.fd = true; /* moteus speaks CAN FD; classic frames pass as they are */
    struct hs_can_bus *ctl, *sim;
    struct hs_diag d;
    assert_int_equal(hs_can_socketpair_open_pair(&cfg, &ctl, &sim, &d), 0);
    hs_can_bus_start(ctl);
    hs_can_bus_start(sim);
    struct hs_mit_config mc;
    hs_mit_config_init(&mc, 1, 0);
    mc.timeout_ns = 50 * MS;
    struct hs_mit_node mit;
    assert_int_equal(hs_mit_node_init(&mit, &mc, &d), 0);
    struct hs_odrive_config oc;
    hs_odrive_config_init(&oc, 3);
    oc.watchdog_timeout_ns = 20 * MS;
    struct hs_odrive_node odrv;
    assert_int_equal(hs_odrive_node_init(&odrv, &oc, &d), 0);
    struct hs_rs_config rc;
    hs_rs_config_init(&rc, HS_RS_MODEL_RS03, 5);
    struct hs_rs_node rs;
    assert_int_equal(hs_rs_node_init(&rs, &rc, &d), 0);
    struct hs_mt_config tc;
    hs_mt_config_init(&tc, 9);
    struct hs_mt_node mt;
    assert_int_equal(hs_mt_node_init(&mt, &tc, &d), 0);
    struct hs_can_node *nodes[] = {&mit.base, &odrv.base, &rs.base, &mt.base};
    struct hs_can_joint_state js[4] = {
        {.q_rad = 0.3}, {.q_rad = 1.0}, {.q_rad = -0.2}, {.q_rad = 0.5}};
    struct hs_can_joint_command cmd[4];

    struct hs_can_frame tx[7], rx[32], out[32];
    unsigned rs_feedback = 0, rs_reads = 0, mt_replies = 0;
    uint64_t unclaimed = 0;
    unsigned mit_replies = 0, encoder_msgs = 0, iq_answers = 0;
    unsigned allocs_after_warmup = 0;
    for (int tick = 0; tick < 200; tick++) {
        int64_t now = tick * MS;
        if (tick == 10)
            allocs_after_warmup = allocs;
        /* controller: MIT enter then commands, ODrive arm then a position setpoint each tick */
        memset(tx, 0, sizeof tx);
        tx[0].id = 1, tx[0].len = 8;
        if (tick == 0) {
            hs_mit_pack_special(HS_MIT_ENTER, tx[0].data);
        } else {
            struct hs_mit_command c = {.p_rad = 0.5, .kp = 20, .kd = 0.5};
            hs_mit_pack_command(&mc.limits, &c, tx[0].data);
        }
        tx[1].id =
            hs_odrive_can_id(3, tick == 0 ? HS_ODRIVE_SET_AXIS_STATE : HS_ODRIVE_SET_INPUT_POS);
        tx[1].len = 8;
        if (tick == 0)
            hs_odrive_put_u32(tx[1].data, HS_ODRIVE_STATE_CLOSED_LOOP);
        else
            hs_odrive_put_f32(tx[1].data, 0.25f);
        /* Robstride: enable, then a motion command each tick; a mechPos read every 10th */
        tx[2].id = (tick == 0 ? 3u << 24 | 0xFDu << 8 : 1u << 24 | 0x7FFFu << 8) | 5;
        tx[2].flags = HS_CAN_FLAG_EXT, tx[2].len = 8;
        tx[3].id = hs_odrive_can_id(3, HS_ODRIVE_GET_IQ), tx[3].flags = HS_CAN_FLAG_RTR;
        tx[4].id = 0x555, tx[4].len = 1; /* nobody's */
        tx[5].id = 17u << 24 | 0xFDu << 8 | 5, tx[5].flags = HS_CAN_FLAG_EXT, tx[5].len = 8;
        tx[5].data[0] = 0x19, tx[5].data[1] = 0x70;
        /* moteus (servo 9): position mode at 0.1 rev (int16) with a query, reply requested */
        tx[6] = tx[0];
        tx[6].id = 0x8009, tx[6].flags = HS_CAN_FLAG_FD | HS_CAN_FLAG_EXT, tx[6].len = 12;
        static const uint8_t mt_cmd[12] = {0x01, 0x00, 0x0a, 0x05, 0x20, 0xe8,
                                           0x03, 0x11, 0x00, 0x50, 0x50, 0x50};
        memcpy(tx[6].data, mt_cmd, 12);
        tx[3 + (tick % 10 == 0 ? 3 : 0)] = tx[6];
        assert_int_equal(hs_can_bus_send(ctl, tx, tick % 10 == 0 ? 7 : 4), tick % 10 ? 4 : 7);

        /* simulator tick: drain, dispatch, (physics), poll, send */
        int n = hs_can_bus_recv(sim, rx, 32);
        assert_true(n >= 2);
        for (int i = 0; i < n; i++)
            hs_can_nodes_dispatch(nodes, 4, &rx[i], now, &unclaimed);
        unsigned k = 0;
        for (unsigned j = 0; j < 4; j++) {
            int m = hs_can_node_poll(nodes[j], now, &js[j], &cmd[j], out + k, 32 - k);
            assert_true(m >= 0);
            k += (unsigned)m;
        }
        assert_int_equal(hs_can_bus_send(sim, out, k), (int)k);

        /* controller reads the answers */
        n = hs_can_bus_recv(ctl, rx, 32);
        for (int i = 0; i < n; i++) {
            if (rx[i].id == 0)
                mit_replies++;
            else if (rx[i].id == hs_odrive_can_id(3, HS_ODRIVE_GET_ENCODER_ESTIMATES))
                encoder_msgs++;
            else if (rx[i].id == hs_odrive_can_id(3, HS_ODRIVE_GET_IQ))
                iq_answers++;
            else if (rx[i].id >> 24 == 2 && (rx[i].flags & HS_CAN_FLAG_EXT))
                rs_feedback++;
            else if (rx[i].id >> 24 == 17 && (rx[i].flags & HS_CAN_FLAG_EXT))
                rs_reads++;
            else if (rx[i].id == 0x900 && (rx[i].flags & HS_CAN_FLAG_FD) &&
                     (rx[i].flags & HS_CAN_FLAG_EXT)) /* 0x900 is past 11 bits */
                mt_replies++;
        }
    }
    assert_true(allocs_after_warmup > 0); /* the wrap sees the library's set-up allocations */
    assert_int_equal(allocs, allocs_after_warmup);
    assert_int_equal(mit_replies, 200);
    assert_int_equal(encoder_msgs, 19); /* every 10 ms from the first poll: 10..190 ms */
    assert_int_equal(iq_answers, 20);
    assert_int_equal(unclaimed, 20);
    assert_int_equal(rs_feedback, 200);
    assert_int_equal(rs_reads, 20);
    assert_int_equal(mt_replies, 200);
    assert_true(cmd[0].enabled && cmd[1].enabled && cmd[2].enabled && cmd[3].enabled);
    assert_true(fabs(cmd[3].q_ref_rad - 0.1 * 2 * M_PI) < 1e-9);
    assert_true(fabs(cmd[0].q_ref_rad - 0.5) < 25.0 / 65535 * 1.01);
    assert_true(fabs(cmd[1].q_ref_rad - 0.25 * 2 * M_PI) < 1e-6);
    hs_can_bus_close(ctl);
    hs_can_bus_close(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tick_path_replies_and_allocates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
