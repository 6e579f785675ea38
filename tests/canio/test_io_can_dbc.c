/* DBC nodes of the CAN I/O module: tests/canio/arm2-dbc.yaml (ELBOW behind a DBC board next to
 * the MIT SHOULDER) over a socketpair bus at 1 ms in simulated time. Frames are built and read
 * with the DBC codec (tested on its own in tests/can).
 *
 * Physics check: with kp = 100 N·m/rad the elbow settles where kp (q* - q) balances gravity
 * and the plant's friction; the arm's gravity torque about the elbow is a few N·m, so q must end
 * within 0.1 rad of q* = 1.0 having started at 0.6, and must sag under gravity once disabled. */
#include "dbc_config.h"
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "canio_rig.h"
#include "hilsim/can_dbc.h"

static struct canio_rig rig;
static struct hs_dbc *dbc;
static const struct hs_dbc_message *m_cmd, *m_state, *m_wrist, *m_ack, *m_diag;
static int j_el;

static int setup(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/canio/arm2-dbc.yaml", src ? src : ".");
    if (canio_rig_open(&rig, path, NULL, NULL, true) < 0)
        return -1;
    struct hs_diag d = {0};
    if (hs_dbc_load_file(hs_cfg_dbc(&rig.cfg->can.nodes[1])->file, &dbc, &d) < 0)
        return -1;
    m_cmd = hs_dbc_find_by_name(dbc, "ElbowCmd");
    m_state = hs_dbc_find_by_name(dbc, "ElbowState");
    m_wrist = hs_dbc_find_by_name(dbc, "Wrist");
    m_ack = hs_dbc_find_by_name(dbc, "Ack");
    m_diag = hs_dbc_find_by_name(dbc, "ElbowDiag");
    j_el = hs_bench_find_joint(rig.bench, "ELBOW");
    return m_cmd && m_state && m_wrist && m_ack && m_diag && j_el >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    hs_dbc_free(dbc);
    canio_rig_close(&rig);
    return 0;
}

struct heard {
    unsigned state, wrist, ack, other;
    double state_pos, wrist_fz, ack_pos;
    /* ElbowDiag, multiplexed: frames per page, pages out of turn, each page's last values */
    unsigned diag[2], diag_bad_page, diag_out_of_turn;
    int last_page;
    double diag_pos, diag_current, diag_torque;
};

static double sig(const struct hs_dbc_message *m, const char *name, const struct hs_can_frame *f)
{
    double v = NAN;
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, name), f->data, f->len, &v);
    return v;
}

static void hear(struct heard *h)
{
    struct hs_can_frame f[64];
    int n = canio_recv(&rig, 0, f, 64);
    for (int k = 0; k < n; k++) {
        if (f[k].id == m_state->id) {
            h->state++;
            h->state_pos = sig(m_state, "Pos", &f[k]);
        } else if (f[k].id == m_wrist->id) {
            h->wrist++;
            h->wrist_fz = sig(m_wrist, "Fz", &f[k]);
        } else if (f[k].id == m_ack->id) {
            h->ack++;
            h->ack_pos = sig(m_ack, "Pos", &f[k]);
        } else if (f[k].id == m_diag->id) {
            int page = (int)sig(m_diag, "Page", &f[k]);
            if (page != 0 && page != 1) {
                h->diag_bad_page++;
                continue;
            }
            h->diag_out_of_turn += h->diag[0] + h->diag[1] > 0 && page == h->last_page;
            h->last_page = page;
            h->diag[page]++;
            if (page == 0) {
                h->diag_pos = sig(m_diag, "Pos", &f[k]);
            } else {
                h->diag_current = sig(m_diag, "Current", &f[k]);
                h->diag_torque = sig(m_diag, "Torque", &f[k]);
            }
        } else {
            h->other++;
        }
    }
}

static void send_cmd(double pos, double kp, double kd, double enable)
{
    uint8_t d[8] = {0};
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m_cmd, "Pos"), pos, d, 8);
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m_cmd, "Kp"), kp, d, 8);
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m_cmd, "Kd"), kd, d, 8);
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m_cmd, "Enable"), enable, d, 8);
    canio_send(&rig, 0, m_cmd->id, d, 8);
}

static double q_el(void)
{
    return hs_bench_joint_reading(rig.bench, (uint32_t)j_el)->q;
}

static void tick(struct heard *h)
{
    assert_int_equal(canio_rig_tick(&rig), 0);
    hear(h);
}

static void test_dbc_board(void **state)
{
    (void)state;
    struct heard h = {0};
    for (int i = 0; i < 1000; i++)
        tick(&h);
    assert_in_range(h.state, 99, 101); /* cyclic 10 ms over 1 s */
    assert_int_equal(h.ack, 0);
    assert_true(fabs(h.state_pos - q_el()) < 0.002); /* 1 mrad LSB, and at rest */

    /* position commands: every ElbowCmd is acknowledged, the joint goes to the set point */
    double q_start = q_el();
    for (int i = 0; i < 2000; i++) {
        send_cmd(1.0, 100, 3, 1);
        tick(&h);
    }
    printf("ELBOW %.4f -> %.4f (set point 1.0, kp 100)\n", q_start, q_el());
    assert_int_equal(h.ack, 2000);
    /* the multiplexed ElbowDiag: pages 0 and 1 in turn every 5 ms, each with its own signals
     * in the bits they share (position at page 0, current and torque at page 1) */
    const struct hs_joint_reading *je = hs_bench_joint_reading(rig.bench, (uint32_t)j_el);
    printf("ElbowDiag pages %u/%u: pos %.4f (joint %.4f), current %.3f A (%.3f), torque %.3f "
           "N*m (%.3f)\n",
           h.diag[0], h.diag[1], h.diag_pos, je->q, h.diag_current, je->current, h.diag_torque,
           je->torque);
    assert_in_range(h.diag[0] + h.diag[1], 599, 601);                  /* 3 s at 200 Hz */
    assert_true(h.diag[0] == h.diag[1] || h.diag[0] == h.diag[1] + 1); /* page 0 first */
    assert_int_equal(h.diag_out_of_turn, 0);
    assert_int_equal(h.diag_bad_page, 0);
    assert_true(fabs(h.diag_pos - je->q) < 0.002);
    assert_true(fabs(h.diag_current - je->current) < 0.01 + 0.02 * fabs(je->current));
    assert_true(fabs(h.diag_torque - je->torque) < 0.01 + 0.02 * fabs(je->torque));
    assert_true(fabs(je->torque) > 0.5); /* holding the forearm: the page-1 bits are not zero */
    assert_true(fabs(q_el() - 1.0) < 0.1);
    assert_true(fabs(q_el() - q_start) > 0.3);
    assert_true(fabs(h.ack_pos - q_el()) < 0.002);

    /* on request: one Wrist frame per remote frame, the F/T sensor's force z */
    int fs = -1;
    for (uint32_t i = 0; i < hs_bench_sensor_count(rig.bench); i++)
        if (!strcmp(hs_bench_sensor(rig.bench, i)->name, "WRIST_FT"))
            fs = (int)i;
    assert_true(fs >= 0);
    /* the answer carries the reading the tick started from (the state at the request) */
    double fz = hs_bench_sensor_reading(rig.bench, (uint32_t)fs)->value[2];
    struct hs_can_frame rtr = {.id = m_wrist->id, .flags = HS_CAN_FLAG_RTR, .len = 4};
    unsigned w0 = h.wrist;
    hs_can_bus_send(rig.peer[0], &rtr, 1);
    send_cmd(1.0, 100, 3, 1);
    tick(&h);
    assert_int_equal(h.wrist, w0 + 1);
    printf("Wrist Fz on request %.3f N, sensor %.3f N\n", h.wrist_fz, fz);
    assert_true(fabs(h.wrist_fz - fz) < 0.002 + 0.01 * fabs(fz));
    assert_true(fabs(fz) > 1.0); /* the hand's weight hangs on it */

    /* a short ElbowCmd is counted bad and ignored */
    struct hs_bench_can_node_stats before, after;
    assert_int_equal(hs_bench_can_node_stats(rig.can, 1, &before), 0);
    uint8_t junk[4] = {0};
    canio_send(&rig, 0, m_cmd->id, junk, 4);
    send_cmd(1.0, 100, 3, 1);
    tick(&h);
    assert_int_equal(hs_bench_can_node_stats(rig.can, 1, &after), 0);
    assert_int_equal(after.node.frames_bad, before.node.frames_bad + 1);

    /* enable 0: the output is off and the arm sags */
    double q_on = q_el();
    for (int i = 0; i < 300; i++) {
        send_cmd(1.0, 100, 3, 0);
        tick(&h);
    }
    printf("disabled: ELBOW %.4f -> %.4f\n", q_on, q_el());
    assert_true(fabs(q_el() - q_on) > 0.05);
    assert_int_equal(h.other, 0);
}

/* Binding the multiplexor itself is refused at attach, naming the binding's line: hilsim
 * writes the page number. */
static void test_multiplexor_binding_refused(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/tests/canio", src ? src : ".");
    snprintf(path, sizeof path, "%s/arm2-dbc.yaml", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    const char *anchor = "          - {message: ElbowDiag, signal: Pos,";
    char *at = strstr(text, anchor);
    assert_non_null(at);
    /* insert a binding of the multiplexor before the first ElbowDiag binding */
    static char edited[1 << 16];
    const char *bad =
        "          - {message: ElbowDiag, signal: Page, from: joint.ELBOW.position}\n";
    snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - text), text, bad, at);
    int line = 1;
    for (const char *p = edited; p < edited + (at - text); p++)
        line += *p == '\n';
    const struct hs_config *cfg = NULL;
    struct hs_bench *bench = NULL;
    struct hs_bench_can *can = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_config_load_buffer(edited, strlen(edited), "bad.yaml", dir, &cfg, &d), 0);
    assert_int_equal(hs_bench_create(cfg, &bench, &d), 0);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    assert_int_equal(hs_bench_can_attach(bench, &o, &can, &d), -EINVAL);
    char msg[1024], want[256];
    hs_diag_format(&d, msg, sizeof msg);
    printf("%s\n", msg);
    snprintf(want, sizeof want,
             "bad.yaml:%d:13: can.nodes[1].dbc.bindings: 'ElbowDiag.Page' is "
             "the multiplexor",
             line);
    assert_non_null(strstr(msg, want));
    close(sv[1]);
    hs_bench_destroy(bench);
    hs_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_dbc_board),
                                       cmocka_unit_test(test_multiplexor_binding_refused)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
