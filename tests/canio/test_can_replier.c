/* replies: immediate on the host (socketpair bus, config/arm2-can.yaml: SHOULDER = MIT node 1,
 * initial q 0.3): the reply comes from the bus's I/O thread without any tick running, carries the
 * last published state, and the command it answers changes nothing in the plant until the next
 * tick, which then applies it. Judged in lockstep by content and counts; the waits for a reply
 * are generous (5 s) and never measured. The same with replies: tick: no reply until a tick. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/io_can.h"
#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/can_mit.h"
#include "hilsim/can_odrive.h"
#include "hilsim/config.h"
#include "can_protocol.h"

static const struct hs_mit_limits LIM = {-12.5, 12.5, -50, 50, 0, 500, 0, 10, -80, 80};

struct rig {
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_bench_can *can;
    struct hs_can_bus *peer;
    int shoulder;
};

/* Builds the bench with the bus's replies set to `replies` (more keys of the bus may follow it)
 * and attaches CAN; returns the attach's result with d set. */
static int open_rig_rc(struct rig *r, const char *replies, struct hs_diag *ret_d);

static void open_rig(struct rig *r, const char *replies)
{
    struct hs_diag d = {0};
    if (open_rig_rc(r, replies, &d) < 0)
        fail_msg("can: %s", d.msg);
}

static const char *mit_extra = ""; /* keys put first in the MIT node's mit section */

static int open_rig_rc(struct rig *r, const char *replies, struct hs_diag *ret_d)
{
    char path[4096], text[1 << 15];
    snprintf(path, sizeof path, "%s/config/arm2-can.yaml", getenv("HS_SOURCE_DIR"));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 64, f);
    fclose(f);
    text[n] = 0;
    /* the one bus gets the mode under test */
    char *at = strstr(text, "send_queue_policy: drop}");
    assert_non_null(at);
    const char *key = "send_queue_policy: drop}";
    size_t pre = (size_t)(at - text);
    char out[1 << 15];
    snprintf(out, sizeof out, "%.*ssend_queue_policy: drop, replies: %s}%s", (int)pre, text,
             replies, at + strlen(key));
    memcpy(text, out, sizeof text);
    if (mit_extra[0]) {
        char *m = strstr(text, "mit: {");
        assert_non_null(m);
        pre = (size_t)(m - text) + strlen("mit: {");
        snprintf(out, sizeof out, "%.*s%s, %s", (int)pre, text, mit_extra, text + pre);
        memcpy(text, out, sizeof text);
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/config", getenv("HS_SOURCE_DIR"));
    struct hs_diag d = {0};
    if (hs_config_load_buffer(text, strlen(text), "arm2-can.yaml", dir, &r->cfg, &d) < 0 ||
        hs_bench_create(r->cfg, &r->bench, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    int rc = hs_bench_can_attach(r->bench, &o, &r->can, ret_d);
    if (rc < 0) {
        close(sv[1]);
        r->peer = NULL;
        return rc;
    }
    struct hs_can_config pc;
    hs_can_config_init(&pc);
    pc.socketpair_fd = sv[1];
    assert_int_equal(hs_can_bus_open(&hs_can_socketpair_ops, &pc, &r->peer, &d), 0);
    assert_int_equal(hs_can_bus_start(r->peer), 0);
    r->shoulder = hs_bench_find_joint(r->bench, "SHOULDER");
    assert_true(r->shoulder >= 0);
    return 0;
}

static void close_rig(struct rig *r)
{
    if (r->peer)
        hs_can_bus_close(r->peer);
    hs_bench_destroy(r->bench);
    hs_config_free(r->cfg);
}

static void send_mit(struct rig *r, const uint8_t data[8])
{
    struct hs_can_frame f = {.id = 1, .len = 8};
    memcpy(f.data, data, 8);
    assert_int_equal(hs_can_bus_send(r->peer, &f, 1), 1);
}

/* Waits up to timeout_ms for the MIT reply (ID 0, 6 bytes); ODrive frames are skipped. */
static bool mit_reply(struct rig *r, int timeout_ms, double *ret_p)
{
    struct pollfd pfd = {.fd = hs_can_bus_fd(r->peer), .events = POLLIN};
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
        struct hs_can_frame f[16];
        int k = hs_can_bus_recv(r->peer, f, 16);
        for (int i = 0; i < k; i++) {
            uint8_t id;
            double v, t;
            if (f[i].id == 0 && f[i].len == 6 &&
                hs_mit_unpack_reply(&LIM, f[i].data, 6, &id, ret_p, &v, &t) == 0 && id == 1)
                return true;
        }
        if (k <= 0)
            poll(&pfd, 1, 10);
    }
    return false;
}

/* Waits up to timeout_ms for a frame on ID; returns its first float (ODrive answers). */
static bool odrive_answer(struct rig *r, uint32_t id, int timeout_ms, float *ret_f)
{
    struct pollfd pfd = {.fd = hs_can_bus_fd(r->peer), .events = POLLIN};
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
        struct hs_can_frame f[16];
        int k = hs_can_bus_recv(r->peer, f, 16);
        for (int i = 0; i < k; i++)
            if (f[i].id == id && f[i].len == 8) {
                *ret_f = hs_odrive_get_f32(f[i].data);
                return true;
            }
        if (k <= 0)
            poll(&pfd, 1, 10);
    }
    return false;
}

static void tick(struct rig *r, uint64_t t)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    assert_int_equal(hs_bench_tick(r->bench, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, t), 0);
}

static void test_immediate(void **state)
{
    (void)state;
    struct rig r;
    open_rig(&r, "immediate");
    const struct hs_joint_command *slot = hs_bench_joint(r.bench, (uint32_t)r.shoulder)->cmd;
    uint8_t enter[8], cmd[8];
    hs_mit_pack_special(HS_MIT_ENTER, enter);
    struct hs_mit_command c = {.p_rad = 1.0, .kp = 50, .kd = 1};
    hs_mit_pack_command(&LIM, &c, cmd);

    /* no tick has run: answered anyway, with the initial pose published at attach */
    double p = NAN;
    send_mit(&r, enter);
    assert_true(mit_reply(&r, 5000, &p));
    assert_true(fabs(p - 0.3) < 1e-3);
    send_mit(&r, cmd);
    assert_true(mit_reply(&r, 5000, &p));
    assert_true(fabs(p - 0.3) < 1e-3);
    assert_int_equal(slot->seq, 0); /* the command has not reached the plant */

    /* ODrive node 2 (ELBOW, gear 30): a remote request for the encoder estimates is answered
     * without a tick too, in motor turns */
    int elbow = hs_bench_find_joint(r.bench, "ELBOW");
    assert_true(elbow >= 0);
    struct hs_can_frame rtr = {.id = hs_odrive_can_id(2, HS_ODRIVE_GET_ENCODER_ESTIMATES),
                               .flags = HS_CAN_FLAG_RTR,
                               .len = 8};
    assert_int_equal(hs_can_bus_send(r.peer, &rtr, 1), 1);
    float turns = NAN;
    assert_true(odrive_answer(&r, rtr.id, 5000, &turns));
    double q_el = hs_bench_joint_reading(r.bench, (uint32_t)elbow)->q;
    assert_true(fabs(turns - q_el * 30 / (2 * M_PI)) < 1e-4);

    /* the next tick applies it: position PD toward 1.0 rad */
    tick(&r, 0);
    assert_true(slot->seq > 0);
    assert_int_equal(slot->mode, HS_JOINT_MODE_POSITION);
    assert_true(fabs(slot->q - 1.0) < 1e-3);
    assert_true(fabs(slot->kp - 50) < 0.2);

    /* 200 ticks of PD later, a reply carries the moved joint: the last published state */
    for (uint64_t t = 1; t <= 200; t++)
        tick(&r, t);
    double q = hs_bench_joint_reading(r.bench, (uint32_t)r.shoulder)->q;
    assert_true(q > 0.35); /* it moved toward the set point */
    send_mit(&r, cmd);
    assert_true(mit_reply(&r, 5000, &p));
    /* published by tick 200's inputs phase, i.e. the state before its step; 16-bit packing */
    assert_true(fabs(p - q) < 0.05);

    tick(&r, 201); /* the third command reaches its node */
    hs_bench_safe_stop(r.bench);
    struct hs_bench_can_node_stats ns;
    assert_int_equal(hs_bench_can_node_stats(r.can, 0, &ns), 0);
    assert_string_equal(ns.protocol, "mit");
    assert_int_equal(ns.node.frames_ok, 3);
    assert_int_equal(ns.node.tx_frames, 3); /* one reply per frame, none again from the tick */
    assert_int_equal(hs_bench_can_node_stats(r.can, 1, &ns), 0);
    assert_string_equal(ns.protocol, "odrive");
    assert_int_equal(ns.node.frames_ok, 1);
    /* the answer, plus whatever cyclic frames fell due in wall time (ticks ran back to back) */
    assert_true(ns.node.tx_frames >= 1);
    close_rig(&r);
}

/* The AK reply from the I/O thread: the 8 bytes with the temperature and error code the tick
 * last published, before any tick (the configured temperature) and after a fault the node raised
 * through its protocol's scenario hook (published by the next tick). */
static bool ak_reply(struct rig *r, int timeout_ms, uint8_t ret[8])
{
    struct pollfd pfd = {.fd = hs_can_bus_fd(r->peer), .events = POLLIN};
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
        struct hs_can_frame f[16];
        int k = hs_can_bus_recv(r->peer, f, 16);
        for (int i = 0; i < k; i++)
            if (f[i].id == 0 && f[i].len == 8 && f[i].data[0] == 1) {
                memcpy(ret, f[i].data, 8);
                return true;
            }
        if (k <= 0)
            poll(&pfd, 1, 10);
    }
    return false;
}

static void test_immediate_ak_reply(void **state)
{
    (void)state;
    struct rig r;
    mit_extra = "reply_format: ak, temperature_c: -7";
    open_rig(&r, "immediate");
    mit_extra = "";
    uint8_t enter[8], d[8];
    hs_mit_pack_special(HS_MIT_ENTER, enter);
    send_mit(&r, enter);
    assert_true(ak_reply(&r, 5000, d));
    assert_int_equal((int8_t)d[6], -7);
    assert_int_equal(d[7], 0);
    struct hs_can_port *port = hs_can_port_find(r.bench, &r.cfg->can.nodes[0]);
    assert_non_null(port);
    assert_null(port->proto->fault_check(port, HS_MIT_AK_OVERVOLTAGE));
    port->proto->raise_fault(port, HS_MIT_AK_OVERVOLTAGE, true);
    hs_can_port_set_temperature(port, 55.4);
    assert_string_equal(port->proto->state(port), "fault");
    tick(&r, 0);
    send_mit(&r, enter);
    assert_true(ak_reply(&r, 5000, d));
    print_message("AK reply from the I/O thread after the fault: temperature %d, error %u\n",
                  (int8_t)d[6], d[7]);
    assert_int_equal(d[6], 55);
    assert_int_equal(d[7], HS_MIT_AK_OVERVOLTAGE);
    close_rig(&r);
}

static void test_tick(void **state)
{
    (void)state;
    struct rig r;
    open_rig(&r, "tick");
    uint8_t enter[8];
    hs_mit_pack_special(HS_MIT_ENTER, enter);
    double p;
    send_mit(&r, enter);
    /* nothing answers between ticks; 100 ms of silence stands for "never" here, and the tick
     * below proves the frame was there to answer */
    assert_false(mit_reply(&r, 100, &p));
    tick(&r, 0);
    assert_true(mit_reply(&r, 5000, &p));
    assert_true(fabs(p - 0.3) < 1e-3);
    close_rig(&r);
}

/* The reply thread's own priority and CPU: CPU 0 (every machine has one) answers as before; a
 * CPU that does not exist is an error naming the key, not a thread left unpinned. */
static void test_reply_thread_cpu(void **state)
{
    (void)state;
    struct rig r;
    open_rig(&r, "immediate, reply_priority: 90, reply_cpu: 0");
    uint8_t enter[8];
    hs_mit_pack_special(HS_MIT_ENTER, enter);
    double p;
    send_mit(&r, enter);
    assert_true(mit_reply(&r, 5000, &p));
    close_rig(&r);
    struct hs_diag d = {0};
    assert_int_equal(open_rig_rc(&r, "immediate, reply_cpu: 4095", &d), -EINVAL);
    assert_non_null(strstr(d.msg, "reply_cpu 4095"));
    close_rig(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_immediate),
        cmocka_unit_test(test_immediate_ak_reply),
        cmocka_unit_test(test_tick),
        cmocka_unit_test(test_reply_thread_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
