/* The Robstride path of the tick makes no heap allocation and no stdio call after warm-up:
 * config/arm2-robstride.yaml (both joints Robstride) on a socketpair bus, with replies: tick
 * (the tick builds every answer) and replies: immediate (the tick publishes for the reply
 * thread), 3000 ticks each while the host cycles through every frame type, every run mode and
 * every parameter read. Heap and stdio calls are counted on the ticking thread only
 * (tests/common/call_counter.c); the host's own sends and receives are outside the window. */
#include <math.h>
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
#include "common/call_counter.h"
#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/config.h"

#define HOST 0xFD

static const uint16_t PARAMS[] = {0x2005, 0x3016, 0x3017, 0x302C, 0x7005, 0x7006, 0x700A, 0x700B,
                                  0x7010, 0x7011, 0x7014, 0x7016, 0x7017, 0x7018, 0x7019, 0x701A,
                                  0x701B, 0x701C, 0x701D, 0x701E, 0x701F, 0x7020, 0x7021, 0x7022,
                                  0x7024, 0x7025, 0x7026, 0x7028, 0x7029, 0x1234};

static struct hs_can_frame rs_frame(unsigned type, unsigned data2, unsigned motor, uint16_t index,
                                    uint32_t value)
{
    struct hs_can_frame f = {.id = type << 24 | data2 << 8 | motor,
                             .flags = HS_CAN_FLAG_EXT,
                             .len = 8,
                             .data = {index & 0xFF, index >> 8, 0, 0, value & 0xFF,
                                      value >> 8 & 0xFF, value >> 16 & 0xFF, value >> 24}};
    return f;
}

static uint32_t f32(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

/* The host's frames for cycle k: a pattern through every type, mode and parameter. */
static unsigned host_frames(unsigned k, struct hs_can_frame *out)
{
    unsigned n = 0, m = 1 + k % 2;
    static const uint8_t modes[] = {0, 1, 2, 3, 5};
    switch (k / 2 % 8) {
    case 0: /* stop, run_mode, enable */
        out[n++] = rs_frame(4, HOST, m, 0, 0);
        out[n++] = rs_frame(18, HOST, m, 0x7005, modes[k / 16 % 5]);
        out[n++] = rs_frame(3, HOST, m, 0, 0);
        break;
    case 1: /* set points */
        out[n++] = rs_frame(18, HOST, m, 0x7016, f32(0.5f));
        out[n++] = rs_frame(18, HOST, m, 0x700A, f32(0.2f));
        out[n++] = rs_frame(18, HOST, m, 0x7006, f32(-1.0f));
        break;
    case 2: { /* a motion command: torque in the ID */
        struct hs_can_frame f = {.id = 1u << 24 | 0x7FFFu << 8 | m,
                                 .flags = HS_CAN_FLAG_EXT,
                                 .len = 8,
                                 .data = {0x88, 0x00, 0x7F, 0xFF, 0x0C, 0xCC, 0x05, 0x00}};
        out[n++] = f;
        break;
    }
    case 3: /* reads */
        for (unsigned i = 0; i < 4; i++)
            out[n++] = rs_frame(17, HOST, m, PARAMS[(k + i) % (sizeof PARAMS / 2)], 0);
        break;
    case 4:
        out[n++] = rs_frame(0, HOST, m, 0, 0); /* device ID */
        out[n++] = rs_frame(18, HOST, m, 0x7028, 0);
        break;
    case 5:
        out[n++] = rs_frame(6, HOST, m, 1, 0); /* set zero (byte 0 = 1) */
        break;
    case 6:
        out[n++] = rs_frame(7, HOST, m, 0, 0); /* set CAN ID: unsupported */
        out[n++] = rs_frame(4, HOST, m, 1, 0); /* stop, clear faults */
        break;
    default:
        break;
    }
    return n;
}

static void run(const char *replies)
{
    char path[4096], text[1 << 15], out[1 << 15];
    snprintf(path, sizeof path, "%s/config/arm2-robstride.yaml", getenv("HS_SOURCE_DIR"));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    char *at = strstr(text, "send_queue_policy: drop}");
    assert_non_null(at);
    snprintf(out, sizeof out, "%.*ssend_queue_policy: drop, replies: %s}%s", (int)(at - text), text,
             replies, at + strlen("send_queue_policy: drop}"));
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/config", getenv("HS_SOURCE_DIR"));
    const struct hs_config *cfg;
    struct hs_bench *bench = NULL;
    struct hs_bench_can *can;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(out, strlen(out), "arm2-robstride.yaml", dir, &cfg, &d) < 0 ||
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
    struct hs_can_bus *peer;
    assert_int_equal(hs_can_bus_open(&hs_can_socketpair_ops, &pc, &peer, &d), 0);
    assert_int_equal(hs_can_bus_start(peer), 0);
    long heap = 0, stdio = 0;
    struct hs_can_frame fr[8], rx[64];
    for (unsigned k = 0; k < 3200; k++) {
        unsigned n = host_frames(k, fr);
        assert_int_equal(hs_can_bus_send(peer, fr, n), (int)n);
        if (!strcmp(replies, "immediate")) /* the reply thread takes them into the tick's ring */
            usleep(200);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        bool window = k >= 200; /* after warm-up */
        heap_calls = 0, stdio_calls = 0;
        counting = window;
        int r = hs_bench_tick(bench, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, k);
        counting = 0;
        assert_int_equal(r, 0);
        heap += heap_calls, stdio += stdio_calls;
        while (hs_can_bus_recv(peer, rx, 64) > 0) {
        }
    }
    struct hs_bench_can_node_stats ns;
    assert_int_equal(hs_bench_can_node_stats(can, 0, &ns), 0);
    printf("replies %s: %llu frames taken by the shoulder, %llu answers; %ld heap and %ld stdio "
           "calls in 3000 ticks\n",
           replies, (unsigned long long)ns.node.frames_ok, (unsigned long long)ns.node.tx_frames,
           heap, stdio);
    assert_true(ns.node.frames_ok > 1000);
    assert_int_equal(heap, 0);
    assert_int_equal(stdio, 0);
    hs_can_bus_close(peer);
    hs_bench_destroy(bench);
    hs_config_free(cfg);
}

static void test_tick_answers(void **state)
{
    (void)state;
    run("tick");
}

static void test_reply_thread(void **state)
{
    (void)state;
    run("immediate");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tick_answers),
        cmocka_unit_test(test_reply_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
