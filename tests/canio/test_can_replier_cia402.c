/* replies: immediate for CiA 402 on the host (socketpair bus, config/arm2-cia402.yaml: SHOULDER
 * = node 1): SDO answers (expedited and segmented, aborts), a download's acknowledgement and its
 * read-back, the synchronous TPDO of a SYNC and the answer to a TPDO's remote request all come
 * from the bus's reply thread while no tick runs, from the dictionary the tick last published;
 * what the frames say (the download, NMT) takes effect at the next tick, which answers nothing
 * again. Judged by content and counts; the waits for an answer are generous (5 s) and never
 * measured. */
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

static const struct hs_config *cfg;
static struct hs_bench *bench;
static struct hs_bench_can *can;
static struct hs_can_bus *peer;
static uint64_t ticks;

static void open_rig(void)
{
    char path[4096], text[1 << 15], out[1 << 15];
    snprintf(path, sizeof path, "%s/config/arm2-cia402.yaml", getenv("HS_SOURCE_DIR"));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 64, f);
    fclose(f);
    text[n] = 0;
    const char *key = "send_queue_policy: drop}";
    char *at = strstr(text, key);
    assert_non_null(at);
    snprintf(out, sizeof out, "%.*ssend_queue_policy: drop, replies: immediate}%s",
             (int)(at - text), text, at + strlen(key));
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/config", getenv("HS_SOURCE_DIR"));
    struct hs_diag d = {0};
    if (hs_config_load_buffer(out, strlen(out), "arm2-cia402.yaml", dir, &cfg, &d) < 0 ||
        hs_bench_create(cfg, &bench, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    if (hs_bench_can_attach(bench, &o, &can, &d) < 0)
        fail_msg("can: %s", d.msg);
    struct hs_can_config pc;
    hs_can_config_init(&pc);
    pc.socketpair_fd = sv[1];
    assert_int_equal(hs_can_bus_open(&hs_can_socketpair_ops, &pc, &peer, &d), 0);
    assert_int_equal(hs_can_bus_start(peer), 0);
}

static void tick(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    assert_int_equal(hs_bench_tick(bench, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, ticks++),
                     0);
}

static void send_frame(uint32_t id, const uint8_t *d, unsigned len, bool rtr)
{
    struct hs_can_frame f = {.id = id, .len = (uint8_t)len, .flags = rtr ? HS_CAN_FLAG_RTR : 0};
    if (d)
        memcpy(f.data, d, len);
    assert_int_equal(hs_can_bus_send(peer, &f, 1), 1);
}

/* Waits up to 5 s for a frame on id (others are dropped); false when none came. */
static bool wait_for(uint32_t id, struct hs_can_frame *ret)
{
    struct pollfd pfd = {.fd = hs_can_bus_fd(peer), .events = POLLIN};
    for (int waited = 0; waited <= 5000; waited += 10) {
        struct hs_can_frame f[16];
        int k = hs_can_bus_recv(peer, f, 16);
        for (int i = 0; i < k; i++)
            if (f[i].id == id) {
                *ret = f[i];
                return true;
            }
        if (k <= 0)
            poll(&pfd, 1, 10);
    }
    return false;
}

/* Frames on id already in the socket (none waited for). */
static int pending(uint32_t id)
{
    struct hs_can_frame f[64];
    int k, c = 0;
    while ((k = hs_can_bus_recv(peer, f, 64)) > 0)
        for (int i = 0; i < k; i++)
            c += f[i].id == id;
    return c;
}

static uint32_t le(const uint8_t *p, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static struct hs_can_frame sdo(uint8_t cmd, uint16_t index, uint8_t sub, uint32_t v)
{
    uint8_t d[8] = {cmd, (uint8_t)index, (uint8_t)(index >> 8), sub};
    for (int i = 0; i < 4; i++)
        d[4 + i] = (uint8_t)(v >> (8 * i));
    send_frame(0x601, d, 8, false);
    struct hs_can_frame a;
    assert_true(wait_for(0x581, &a));
    return a;
}

static void test_cia402_answers_from_the_reply_thread(void **state)
{
    (void)state;
    open_rig();
    tick(); /* boot-up: pre-operational, published */
    uint64_t t0 = ticks;
    /* expedited upload, no tick: 0x1000 device type */
    struct hs_can_frame a = sdo(0x40, 0x1000, 0, 0);
    assert_int_equal(a.data[0], 0x43);
    assert_int_equal(le(a.data + 4, 4), 0x00020192);
    /* abort: the statusword is read only */
    a = sdo(0x2B, 0x6041, 0, 0);
    assert_int_equal(a.data[0], 0x80);
    assert_int_equal(le(a.data + 4, 4), 0x06010002);
    /* download acknowledged and read back before any tick takes it */
    a = sdo(0x2F, 0x6060, 0, 9);
    assert_int_equal(a.data[0], 0x60);
    a = sdo(0x40, 0x6060, 0, 0);
    assert_int_equal(a.data[0], 0x4F);
    assert_int_equal(a.data[4], 9);
    /* segmented upload of the device name */
    a = sdo(0x40, 0x1008, 0, 0);
    assert_int_equal(a.data[0], 0x41);
    uint32_t size = le(a.data + 4, 4);
    char name[64] = {0};
    for (uint32_t got = 0, t = 0; got < size; t ^= 0x10) {
        a = sdo((uint8_t)(0x60 | t), 0, 0, 0);
        unsigned nb = 7 - ((a.data[0] >> 1) & 7);
        memcpy(name + got, a.data + 1, nb);
        got += nb;
    }
    assert_string_equal(name, "hilsim CiA 402 drive");
    assert_int_equal(ticks, t0); /* all of it without a tick */
    /* the next tick applies the download and answers nothing again */
    tick();
    assert_int_equal(pending(0x581), 0);
    a = sdo(0x40, 0x6061, 0, 0);
    assert_int_equal(a.data[4], 9); /* modes display: the tick's drive cycle took it */
    /* TPDO1 (the statusword) every SYNC, with RTR allowed (COB-ID bit 30 clear); operational */
    assert_int_equal(sdo(0x2F, 0x1800, 2, 1).data[0], 0x60);
    assert_int_equal(sdo(0x23, 0x1800, 1, 0x181).data[0], 0x60);
    const uint8_t start[2] = {0x01, 1};
    send_frame(0x000, start, 2, false);
    /* The reply thread hands frames to the tick in arrival order: once it has answered an SDO
     * sent after the NMT start, the start is in the tick's ring (without this barrier the two
     * ticks below could run before the thread had read it, and the node stayed pre-operational:
     * it failed 2 runs in 3). */
    sdo(0x40, 0x1000, 0, 0);
    tick();
    tick();
    pending(0x181);
    uint64_t t1 = ticks;
    send_frame(0x080, NULL, 0, false);
    assert_true(wait_for(0x181, &a));
    assert_int_equal(a.len, 2);
    assert_int_equal(le(a.data, 2) & 0x4F, 0x40); /* switch on disabled, as published */
    send_frame(0x181, NULL, 2, true);             /* remote request */
    assert_true(wait_for(0x181, &a));
    assert_int_equal(le(a.data, 2) & 0x4F, 0x40);
    assert_int_equal(ticks, t1);
    tick(); /* the SYNC and the RTR reach the node: nothing sent again */
    assert_int_equal(pending(0x181), 0);
    hs_bench_safe_stop(bench);
    struct hs_bench_can_node_stats ns;
    assert_int_equal(hs_bench_can_node_stats(can, 0, &ns), 0);
    assert_string_equal(ns.protocol, "cia402");
    assert_int_equal(ns.node.frames_bad, 0);
    assert_true(ns.node.tx_frames >= 13); /* 11 SDO answers, a TPDO on SYNC, one on RTR */
    hs_bench_destroy(bench);
    hs_config_free(cfg);
    hs_can_bus_close(peer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cia402_answers_from_the_reply_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
