/* Scenario hooks into CAN nodes through the bench's CAN module on a socketpair bus (the boards'
 * end here), checked on the frames a controller would see, byte for byte:
 * - an AK-format MIT node raising error 6 (MOSFET over-temperature): exactly the replies built
 *   while the fault lasts carry 6 in byte 7, the node leaves motor mode, and its state drives a
 *   `when` and an expectation; its thermal model's winding temperature is byte 6 of every reply;
 * - an ODrive axis raising the watchdog error 0x800: every heartbeat from then on carries it,
 *   with the axis idle, until the host's Clear_Errors; `when: {node, state: idle}` fires at once;
 * - a moteus servo reporting a fault code (register 0x00F, mode 1) and the thermal model's
 *   temperature (register 0x00E), a CiA 402 drive sending one EMCY with the raised code;
 * - a Robstride motor reporting its thermal model's temperature (×10, big-endian) in every
 *   feedback, then raising an over-temperature fault word: one type 21 report with the word
 *   and the feedback's fault flag and reset mode;
 * - names the bench does not have, codes a protocol cannot carry and states it does not know
 *   are refused when the scenario loads. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/can.h>
#include <sys/socket.h>

#include "hilsim/io_can.h"
#include "hilsim/can.h"
#include "hilsim/can_mit.h"
#include "hilsim/can_odrive.h"
#include "robstride/robstride.h"
#include "scenario/scen_rig.h"
#include "scenario/scen_rig_can.h"

static const char mit_odrive_bench[] =
    "bench: {name: scen-node}\n" RIG_ARM RIG_1KHZ RIG_CAN_NODES
    "    - {name: shoulder, bus: main, protocol: mit, id: 1, joint: SHOULDER,\n"
    "       mit: {reply_id: 0, reply_format: ak}}\n"
    "    - {name: elbow, bus: main, protocol: odrive, id: 3, joint: ELBOW,\n"
    "       odrive: {heartbeat_period_s: 0.001, encoder_period_s: 0, vel_limit_turn_s: 100,\n"
    "                vel_limit_tolerance: 0}}\n";

static void test_mit_and_odrive_faults_states_temperature(void **state)
{
    (void)state;
    rig_before_scenario = rig_attach_can;
    struct scen_rig r;
    rig_open(
        &r, mit_odrive_bench,
        "scenario: {name: node, duration_s: 0.5}\n"
        "steps:\n"
        "  - {name: hot, at_s: 0, thermal: {joint: SHOULDER, ambient_c: 36.6,\n"
        "     r_winding_ohm: 50, c_winding_j_per_k: 0.05}}\n"
        "  - {name: mosfet, at_s: 0.1, duration_s: 0.1, node_fault: {node: shoulder, code: 6}}\n"
        "  - {name: seen, when: {node: shoulder, state: fault}, duration_s: 0.01,\n"
        "     expect: {kind: command_torque, joint: SHOULDER, value: 0, hold: always}}\n"
        "  - {name: in_fault, at_s: 0.15, expect: {kind: node_state, node: shoulder,\n"
        "     state: fault}}\n"
        "  - {name: rests, at_s: 0.25, expect: {kind: node_state, node: shoulder,\n"
        "     state: rest_mode}}\n"
        "  - {name: watchdog, at_s: 0.3, node_fault: {node: elbow, code: 0x800}}\n"
        "  - {name: idled, when: {node: elbow, state: idle},\n"
        "     expect: {kind: node_state, node: elbow, state: idle}}\n"
        "  - {name: deaf, when: {node: elbow, state: idle}, duration_s: 0.01,\n"
        "     can_fault: {kind: drop, node: elbow, direction: rx}}\n");
    rig_before_scenario = NULL;
    struct hs_mit_limits lim = {-12.5, 12.5, -50, 50, 0, 500, 0, 5, -18, 18};
    int bad_err = 0, bad_temp = 0, mit_replies = 0, hb = 0, hb_bad = 0;
    int first_closed = -1;
    double temp_prev = NAN, temp_max = 0;
    const uint32_t hb_id = hs_odrive_can_id(3, HS_ODRIVE_HEARTBEAT);
    while (!hs_scenario_done(r.scen)) {
        uint64_t k = r.tick; /* the scenario tick this hilsim tick plays */
        uint8_t d[8] = {0};
        if (k == 0) {
            hs_mit_pack_special(HS_MIT_ENTER, d);
            rig_peer_send(&r, 1, d, 8);
            uint8_t st[8] = {HS_ODRIVE_STATE_CLOSED_LOOP};
            rig_peer_send(&r, hs_odrive_can_id(3, HS_ODRIVE_SET_AXIS_STATE), st, 8);
        } else {
            /* a torque the shoulder cannot follow: current flows and the winding heats */
            hs_mit_pack_command(&lim, &(struct hs_mit_command){.p_rad = 2.0, .kp = 20, .kd = 1}, d);
            rig_peer_send(&r, 1, d, 8);
        }
        if (k == 400) {
            uint8_t none[8] = {0};
            rig_peer_send(&r, hs_odrive_can_id(3, HS_ODRIVE_CLEAR_ERRORS), none, 0);
        }
        assert_int_equal(rig_tick(&r), 0);
        struct canfd_frame in;
        while (recv(r.peer_fd, &in, sizeof in, MSG_DONTWAIT) > 0) {
            if (in.can_id == 0 && in.data[0] == 1) {
                mit_replies++;
                assert_int_equal(in.len, 8);
                /* the fault acts from tick 100's commands stage, after that tick's reply was
                 * built, and ends at tick 200's, after that tick's reply: ticks 101..200 */
                int want_err = k >= 101 && k <= 200 ? HS_MIT_AK_MOSFET_OVERTEMP : 0;
                bad_err += in.data[7] != want_err;
                /* the temperature the model had after the previous tick, int8 rounded (the
                 * winding passes 127 °C before its 130 °C limit: the byte saturates) */
                int want_t = k == 0 ? 25 : (int)fmin(127, (double)lround(temp_prev));
                bad_temp += (int8_t)in.data[6] != want_t;
            } else if (in.can_id == hb_id) {
                hb++;
                uint32_t err = hs_odrive_get_u32(in.data);
                uint8_t axis = in.data[4];
                if (axis == HS_ODRIVE_STATE_CLOSED_LOOP && first_closed < 0)
                    first_closed = (int)k;
                /* raised at tick 300's commands stage: heartbeats from tick 301 on, until the
                 * Clear_Errors heard at tick 400 */
                uint32_t want = k >= 301 && k < 400 ? HS_ODRIVE_ERROR_WATCHDOG_TIMER_EXPIRED : 0;
                hb_bad += err != want || (k >= 301 && axis != HS_ODRIVE_STATE_IDLE);
            }
        }
        temp_prev = hs_scenario_winding_temp_c(r.scen, 0);
        temp_max = fmax(temp_max, temp_prev);
    }
    hs_scenario_finish(r.scen);
    hs_scenario_write_summary(r.scen, stdout);
    print_message("MIT: %d AK replies, %d with a wrong error byte, %d with a wrong temperature "
                  "(the winding reached %.2f °C); ODrive: %d heartbeats, %d wrong, closed loop "
                  "from tick %d\n",
                  mit_replies, bad_err, bad_temp, temp_max, hb, hb_bad, first_closed);
    assert_int_equal(mit_replies, 500);
    assert_int_equal(bad_err, 0);
    assert_int_equal(bad_temp, 0);
    assert_true(temp_max > 127); /* it moved through the byte's whole top range */
    assert_true(hb >= 499);
    assert_int_equal(hb_bad, 0);
    assert_true(first_closed >= 0 && first_closed < 300);
    /* the MIT node's fault was seen at tick 101 (state checked before that tick's faults) */
    int seen = hs_scenario_find_step(r.scen, "seen"),
        idled = hs_scenario_find_step(r.scen, "idled"),
        deaf = hs_scenario_find_step(r.scen, "deaf");
    assert_int_equal(hs_scenario_step_onset(r.scen, (uint32_t)seen), 101);
    assert_int_equal(hs_scenario_step_onset(r.scen, (uint32_t)idled), 301);
    /* a CAN fault started by a node's state binds that node too */
    assert_int_equal(hs_scenario_step_onset(r.scen, (uint32_t)deaf), 301);
    assert_true(hs_scenario_passed(r.scen));
    close(r.peer_fd);
    rig_close(&r);
}

static const char robstride_bench[] =
    "bench: {name: scen-node-rs}\n" RIG_ARM RIG_1KHZ RIG_CAN_NODES
    "    - {name: shoulder, bus: main, protocol: robstride, id: 0x7f, joint: SHOULDER}\n";

static void test_robstride_temperature_and_fault_word(void **state)
{
    (void)state;
    rig_before_scenario = rig_attach_can;
    struct scen_rig r;
    rig_open(&r, robstride_bench,
             "scenario: {name: rs, duration_s: 0.3}\n"
             "steps:\n"
             "  - {at_s: 0, thermal: {joint: SHOULDER, ambient_c: 31.23, r_winding_ohm: 50,\n"
             "     c_winding_j_per_k: 0.05}}\n"
             "  - {name: gone, at_s: 0.05, duration_s: 0.05, can_fault: {node: shoulder,\n"
             "     kind: silent}}\n"
             "  - {name: hot, at_s: 0.2, node_fault: {node: shoulder, code: 0x1}}\n"
             "  - {at_s: 0.25, expect: {kind: node_state, node: shoulder, state: fault}}\n");
    rig_before_scenario = NULL;
    const struct hs_rs_limits *lim = hs_rs_model_limits(HS_RS_MODEL_CYBERGEAR);
    int feedback = 0, bad_temp = 0, bad_fault = 0, reports = 0, report_tick = -1, silent_bad = 0;
    double temp_prev = NAN, temp_max = 0;
    uint32_t report_word = 0;
    while (!hs_scenario_done(r.scen)) {
        uint64_t k = r.tick;
        uint8_t d[8] = {0};
        if (k == 0) {
            rig_peer_send(&r, hs_rs_can_id(HS_RS_ENABLE, 0, 0x7f), d, 8);
        } else {
            struct hs_rs_motion m = {.p_rad = 2.0, .kp = 20, .kd = 1};
            rig_peer_send(&r, hs_rs_pack_motion(lim, 0x7f, &m, d), d, 8);
        }
        assert_int_equal(rig_tick(&r), 0);
        struct canfd_frame in;
        while (recv(r.peer_fd, &in, sizeof in, MSG_DONTWAIT) > 0) {
            uint32_t id = in.can_id & CAN_EFF_MASK;
            if (hs_rs_id_type(id) == HS_RS_FEEDBACK) {
                feedback++;
                /* silent from tick 50's commands stage to tick 100's: the node hears no
                 * command of ticks 51..100 and says nothing in ticks 50..99 */
                silent_bad += k >= 50 && k <= 100;
                unsigned t10 = (unsigned)in.data[6] << 8 | in.data[7];
                long want = k == 0 ? 250 : lround(temp_prev * 10);
                bad_temp += (long)t10 != want;
                /* raised at tick 200's commands stage: feedback from tick 201 on shows the
                 * over-temperature flag (ID bit 18) and reset mode (bits 23-22 = 0) */
                bool flagged = id >> 18 & 1, reset = (id >> 22 & 3) == HS_RS_MODE_RESET;
                bad_fault += k >= 201 ? !(flagged && reset) : flagged;
            } else if (hs_rs_id_type(id) == HS_RS_FAULT) {
                reports++;
                report_tick = (int)k;
                report_word = (uint32_t)in.data[0] | (uint32_t)in.data[1] << 8 |
                              (uint32_t)in.data[2] << 16 | (uint32_t)in.data[3] << 24;
            }
        }
        temp_prev = hs_scenario_winding_temp_c(r.scen, 0);
        temp_max = fmax(temp_max, temp_prev);
    }
    hs_scenario_finish(r.scen);
    print_message("Robstride: %d feedback frames, %d with a wrong temperature (winding up to "
                  "%.2f °C), %d with wrong fault bits; %d fault report(s), word 0x%x at tick %d\n",
                  feedback, bad_temp, temp_max, bad_fault, reports, report_word, report_tick);
    print_message("Robstride silent: %d feedback frames in its window; %llu frames swallowed\n",
                  silent_bad, (unsigned long long)hs_scenario_can_frames_acted(r.scen, 1));
    assert_int_equal(silent_bad, 0);
    /* 50 commands unheard (ticks 51..100), 1 reply swallowed (tick 50's command, answered in
     * tick 50) and 249 answered: feedback for ticks 0..49 and 101..299 */
    assert_int_equal(hs_scenario_can_frames_acted(r.scen, 1), 51);
    assert_int_equal(feedback, 249);
    assert_int_equal(bad_temp, 0);
    assert_true(temp_max > 35);
    assert_int_equal(bad_fault, 0);
    assert_int_equal(reports, 1);
    assert_int_equal(report_word, HS_RS_FAULT_OVERTEMP);
    assert_int_equal(report_tick, 201);
    assert_true(hs_scenario_passed(r.scen));
    close(r.peer_fd);
    rig_close(&r);
}

static const char moteus_cia402_bench[] =
    "bench: {name: scen-node-mt}\n" RIG_ARM RIG_1KHZ RIG_CAN_FD_NODES
    "    - {name: shoulder, bus: main, protocol: moteus, id: 1, joint: "
    "SHOULDER}\n"
    "    - {name: elbow, bus: main, protocol: cia402, id: 5, joint: ELBOW}\n";

/* moteus: a fault code in register 0x00F with mode 1, and the thermal model's temperature in
 * register 0x00E (int16, 0.1 °C), read back with the protocol's own read subframes; CiA 402: one
 * EMCY with the raised code, and the drive's state machine in fault. */
static void test_moteus_and_cia402_faults_and_temperature(void **state)
{
    (void)state;
    rig_before_scenario = rig_attach_can;
    struct scen_rig r;
    rig_open(&r, moteus_cia402_bench,
             "scenario: {name: mt, duration_s: 0.2}\n"
             "steps:\n"
             "  - {at_s: 0, thermal: {joint: SHOULDER, ambient_c: 33.33}}\n"
             "  - {at_s: 0.05, node_fault: {node: shoulder, code: 38}}\n"
             "  - {at_s: 0.1, node_fault: {node: elbow, code: 0x4310}}\n"
             "  - {at_s: 0.15, expect: {kind: node_state, node: shoulder, state: fault}}\n"
             "  - {at_s: 0.15, expect: {kind: node_state, node: elbow, state: fault}}\n");
    rig_before_scenario = NULL;
    int replies = 0, bad_mode = 0, bad_temp = 0, emcy = 0, emcy_tick = -1;
    unsigned emcy_code = 0;
    double temp_prev = NAN;
    while (!hs_scenario_done(r.scen)) {
        uint64_t k = r.tick;
        /* reply wanted (ID bit 15), source 0, to servo 1: read mode and fault as int8, the
         * temperature as int16 */
        struct canfd_frame q = {.can_id = 0x8001 | CAN_EFF_FLAG, .len = 6, .flags = CANFD_BRS};
        const uint8_t ask[6] = {0x11, 0x00, 0x11, 0x0F, 0x15, 0x0E};
        memcpy(q.data, ask, sizeof ask);
        assert_int_equal(send(r.peer_fd, &q, sizeof q, 0), (ssize_t)sizeof q);
        assert_int_equal(rig_tick(&r), 0);
        struct canfd_frame in;
        ssize_t n;
        while ((n = recv(r.peer_fd, &in, sizeof in, MSG_DONTWAIT)) > 0) {
            uint32_t id = in.can_id & CAN_EFF_MASK;
            if (n == (ssize_t)sizeof(struct canfd_frame) && id == 0x0100) {
                replies++;
                /* 0x21 0x00 mode, 0x21 0x0F fault, 0x25 0x0E temperature lo hi */
                assert_true(in.len >= 10);
                static const uint8_t heads[3][2] = {{0x21, 0x00}, {0x21, 0x0F}, {0x25, 0x0E}};
                assert_memory_equal(heads[0], in.data, 2);
                assert_memory_equal(heads[1], in.data + 3, 2);
                assert_memory_equal(heads[2], in.data + 6, 2);
                bool faulted = k >= 51; /* raised at tick 50's commands stage */
                bad_mode += in.data[2] != (faulted ? 1 : 0) || in.data[5] != (faulted ? 38 : 0);
                int16_t t10 = (int16_t)(in.data[8] | in.data[9] << 8);
                bad_temp += t10 != (k == 0 ? 300 : lround(temp_prev * 10));
            } else if (id == 0x85 && in.len == 8) {
                emcy++;
                emcy_tick = (int)k;
                emcy_code = in.data[0] | (unsigned)in.data[1] << 8;
            }
        }
        temp_prev = hs_scenario_winding_temp_c(r.scen, 0);
    }
    hs_scenario_finish(r.scen);
    print_message("moteus: %d replies, %d with a wrong mode/fault, %d with a wrong temperature; "
                  "CiA 402: %d EMCY, code 0x%04x at tick %d\n",
                  replies, bad_mode, bad_temp, emcy, emcy_code, emcy_tick);
    assert_int_equal(replies, 200);
    assert_int_equal(bad_mode, 0);
    assert_int_equal(bad_temp, 0);
    assert_int_equal(emcy, 1);
    assert_int_equal(emcy_code, 0x4310);
    assert_int_equal(emcy_tick, 101);
    assert_true(hs_scenario_passed(r.scen));
    close(r.peer_fd);
    rig_close(&r);
}

static void expect_refused(const char *bench, const char *steps, const char *want)
{
    char scen[1024], msg[512];
    snprintf(scen, sizeof scen, "scenario: {name: bad, duration_s: 1}\nsteps:\n%s", steps);
    rig_before_scenario = rig_attach_can;
    struct scen_rig r = {0};
    int rc = rig_try(bench, scen, msg, sizeof msg);
    rig_before_scenario = NULL;
    (void)r;
    print_message("%s\n", msg);
    assert_true(rc < 0);
    assert_non_null(strstr(msg, want));
}

static void test_bad_nodes_codes_states_refused(void **state)
{
    (void)state;
    expect_refused(mit_odrive_bench, "  - {at_s: 0, node_fault: {node: wrist, code: 1}}\n",
                   "no CAN node 'wrist'");
    expect_refused(mit_odrive_bench, "  - {at_s: 0, node_fault: {node: shoulder, code: 9}}\n",
                   "error codes are 1..7");
    expect_refused(mit_odrive_bench, "  - {at_s: 0, node_fault: {node: elbow, code: 0}}\n",
                   "needs at least one bit");
    expect_refused(mit_odrive_bench,
                   "  - {at_s: 0, expect: {kind: node_state, node: elbow, state: armed}}\n",
                   "no state 'armed'; its states: idle, closed_loop_control");
    expect_refused(mit_odrive_bench,
                   "  - {when: {node: shoulder, state: idle}, node_fault: {node: elbow, "
                   "code: 1}}\n",
                   "a mit node has no state 'idle'");
    expect_refused(robstride_bench, "  - {at_s: 0, node_fault: {node: shoulder, code: 0x40}}\n",
                   "documented bits");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mit_and_odrive_faults_states_temperature),
        cmocka_unit_test(test_robstride_temperature_and_fault_word),
        cmocka_unit_test(test_moteus_and_cia402_faults_and_temperature),
        cmocka_unit_test(test_bad_nodes_codes_states_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
