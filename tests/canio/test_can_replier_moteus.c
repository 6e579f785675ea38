/* replies: immediate for moteus on the host (socketpair CAN FD bus, tests/canio/
 * arm2-moteus-guest.yaml: SHOULDER = servo 1, initial q 0.3 rad): a query is answered by the
 * bus's I/O thread without any tick running, from the register table the tick last published,
 * byte for byte as the tick's node would build it; the command in the same frame reaches the
 * plant only at the next tick; the diagnostic stream stays with the tick. Judged in lockstep by
 * content and counts; the waits for a reply are generous (5 s) and never measured. */
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
#include "hilsim/config.h"

#define TWO_PI 6.283185307179586

struct rig {
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_bench_can *can;
    struct hs_can_bus *peer;
};

static void splice(char *text, size_t cap, const char *key, const char *with)
{
    char *at = strstr(text, key);
    assert_non_null(at);
    static char out[1 << 15];
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, with, at + strlen(key));
    snprintf(text, cap, "%s", out);
}

static void open_rig(struct rig *r, const char *replies)
{
    char path[4096];
    static char text[1 << 15];
    snprintf(path, sizeof path, "%s/tests/canio/arm2-moteus-guest.yaml", getenv("HS_SOURCE_DIR"));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 256, f);
    fclose(f);
    text[n] = 0;
    char with[128];
    snprintf(with, sizeof with, "send_queue_policy: drop, replies: %s}", replies);
    splice(text, sizeof text, "send_queue_policy: drop}", with);
    /* wall-clock ticks: the reply thread runs only outside simulated time */
    splice(text, sizeof text, "clock: {mode: lockstep, sync: {source: can}}", "");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/canio", getenv("HS_SOURCE_DIR"));
    struct hs_diag d = {0};
    if (hs_config_load_buffer(text, strlen(text), "arm2-moteus-guest.yaml", dir, &r->cfg, &d) < 0 ||
        hs_bench_create(r->cfg, &r->bench, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    if (hs_bench_can_attach(r->bench, &o, &r->can, &d) < 0)
        fail_msg("can: %s", d.msg);
    struct hs_can_config pc;
    hs_can_config_init(&pc);
    pc.socketpair_fd = sv[1];
    pc.fd = true;
    assert_int_equal(hs_can_bus_open(&hs_can_socketpair_ops, &pc, &r->peer, &d), 0);
    assert_int_equal(hs_can_bus_start(r->peer), 0);
}

static void close_rig(struct rig *r)
{
    hs_can_bus_close(r->peer);
    hs_bench_destroy(r->bench);
    hs_config_free(r->cfg);
}

static void send_fd(struct rig *r, uint32_t id, const uint8_t *d, unsigned len)
{
    struct hs_can_frame f = {
        .id = id, .flags = HS_CAN_FLAG_FD | HS_CAN_FLAG_EXT, .len = (uint8_t)len};
    memcpy(f.data, d, len);
    assert_int_equal(hs_can_bus_send(r->peer, &f, 1), 1);
}

/* Waits up to timeout_ms for a frame from servo 1 to source 0 whose first byte is FIRST. */
static bool reply(struct rig *r, uint8_t first, int timeout_ms, struct hs_can_frame *ret)
{
    struct pollfd pfd = {.fd = hs_can_bus_fd(r->peer), .events = POLLIN};
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
        struct hs_can_frame f[16];
        int k = hs_can_bus_recv(r->peer, f, 16);
        for (int i = 0; i < k; i++)
            if (f[i].id == 0x100 && f[i].len && f[i].data[0] == first) {
                *ret = f[i];
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

static float f32(const uint8_t *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

static void test_immediate(void **state)
{
    (void)state;
    struct rig r;
    open_rig(&r, "immediate");
    int sh = hs_bench_find_joint(r.bench, "SHOULDER");
    assert_true(sh >= 0);
    const struct hs_joint_command *slot = hs_bench_joint(r.bench, (uint32_t)sh)->cmd;
    /* no tick has run: a float query of position, velocity, torque is answered from the
     * initial pose; stopped, the torque reads 0 */
    static const uint8_t q[] = {0x1f, 0x01};
    send_fd(&r, 0x8001, q, sizeof q);
    struct hs_can_frame f;
    assert_true(reply(&r, 0x2f, 5000, &f));
    assert_true(fabs(f32(f.data + 2) - 0.3 / TWO_PI) < 1e-6);
    assert_true(f32(f.data + 10) == 0.0f);
    /* position mode, velocity only (position unset), with the same query: answered at once,
     * applied at the next tick */
    uint8_t c[16] = {0x01, 0x00, 0x0a, 0x0e, 0x20};
    float nan_ = NAN, v = 0.0f;
    memcpy(c + 5, &nan_, 4);
    memcpy(c + 9, &v, 4);
    c[13] = 0x1f, c[14] = 0x01, c[15] = 0x50; /* a NOP to the FD length 16 */
    send_fd(&r, 0x8001, c, 16);
    assert_true(reply(&r, 0x2f, 5000, &f));
    assert_int_equal(slot->seq, 0);
    tick(&r, 0);
    assert_true(slot->seq > 0);
    assert_int_equal(slot->mode, HS_JOINT_MODE_POSITION);
    assert_true(fabs(slot->q - 0.3) < 1e-3); /* latched where it was */
    /* the diagnostic stream is the tick's: a poll is answered after a tick */
    static const uint8_t poll_[] = {0x42, 0x01, 0x30};
    send_fd(&r, 0x8001, poll_, sizeof poll_);
    for (uint64_t t = 1; t <= 3; t++)
        tick(&r, t);
    assert_true(reply(&r, 0x41, 5000, &f));
    assert_int_equal(f.data[2], 0); /* nothing written yet: empty */
    hs_bench_safe_stop(r.bench);
    struct hs_bench_can_node_stats ns;
    assert_int_equal(hs_bench_can_node_stats(r.can, 0, &ns), 0);
    assert_string_equal(ns.protocol, "moteus");
    assert_int_equal(ns.node.frames_ok, 3);
    /* one reply per frame: two from the reply thread, the stream's poll from the tick, none
     * twice */
    assert_int_equal(ns.node.tx_frames, 3);
    close_rig(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_immediate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
