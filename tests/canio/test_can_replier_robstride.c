/* Robstride with replies: immediate on the host (socketpair bus, the bundled
 * config/arm2-robstride.yaml as it is: SHOULDER = RS04 motor 1, initial q 0.3, 1 kHz): every frame
 * is answered by the bus's I/O thread without a tick running, from the thread's own copy of the
 * drive's registers (a write reads back at once, an enable answers in run mode) and the state
 * the tick last published (0x3016 reads the joint's angle); the command reaches the plant only
 * at the next tick, and the tick sends no second answer. Judged by content and counts; the waits
 * for an answer are generous (5 s) and never measured. */
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
#include "can_protocol.h"
#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/config.h"

#define HOST 0xFD
#define SH 1

struct rig {
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_bench_can *can;
    struct hs_can_bus *peer;
    int shoulder;
};

static void open_rig(struct rig *r)
{
    char path[4096], text[1 << 15];
    snprintf(path, sizeof path, "%s/config/arm2-robstride.yaml", getenv("HS_SOURCE_DIR"));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/config", getenv("HS_SOURCE_DIR"));
    struct hs_diag d = {0};
    if (hs_config_load_buffer(text, strlen(text), "arm2-robstride.yaml", dir, &r->cfg, &d) < 0 ||
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
    assert_int_equal(hs_can_bus_open(&hs_can_socketpair_ops, &pc, &r->peer, &d), 0);
    assert_int_equal(hs_can_bus_start(r->peer), 0);
    r->shoulder = hs_bench_find_joint(r->bench, "SHOULDER");
    assert_true(r->shoulder >= 0);
}

static void close_rig(struct rig *r)
{
    hs_can_bus_close(r->peer);
    hs_bench_destroy(r->bench);
    hs_config_free(r->cfg);
}

/* frames packed here from the manual's layout, not hilsim's codec */
static void send_rs(struct rig *r, unsigned type, const uint8_t *d)
{
    struct hs_can_frame f = {.id = type << 24 | HOST << 8 | SH, .flags = HS_CAN_FLAG_EXT, .len = 8};
    if (d)
        memcpy(f.data, d, 8);
    assert_int_equal(hs_can_bus_send(r->peer, &f, 1), 1);
}

static void write_f32(struct rig *r, uint16_t index, float v)
{
    uint8_t d[8] = {index & 0xFF, index >> 8};
    memcpy(d + 4, &v, 4);
    send_rs(r, 18, d);
}

static void write_u8(struct rig *r, uint16_t index, uint8_t v)
{
    uint8_t d[8] = {index & 0xFF, index >> 8, 0, 0, v};
    send_rs(r, 18, d);
}

/* the next answer from motor 1, waiting up to 5 s */
static struct hs_can_frame answer(struct rig *r)
{
    struct pollfd pfd = {.fd = hs_can_bus_fd(r->peer), .events = POLLIN};
    for (int waited = 0; waited <= 5000; waited += 10) {
        struct hs_can_frame f;
        if (hs_can_bus_recv(r->peer, &f, 1) == 1) {
            if ((f.id >> 8 & 0xFF) == SH)
                return f;
            continue;
        }
        poll(&pfd, 1, 10);
    }
    fail_msg("no answer from motor 1 in 5 s");
    return (struct hs_can_frame){0};
}

static struct hs_can_frame read_param(struct rig *r, uint16_t index)
{
    uint8_t d[8] = {index & 0xFF, index >> 8};
    send_rs(r, 17, d);
    struct hs_can_frame f = answer(r);
    assert_int_equal(f.id >> 24, 17);
    assert_int_equal(f.id & 0xFF, HOST);
    assert_int_equal(f.data[0] | f.data[1] << 8, index);
    return f;
}

static float f32_of(const struct hs_can_frame *f)
{
    float v;
    memcpy(&v, f->data + 4, 4);
    return v;
}

static void tick(struct rig *r, uint64_t t)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    assert_int_equal(hs_bench_tick(r->bench, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, t), 0);
}

static void test_robstride_immediate(void **state)
{
    (void)state;
    struct rig r;
    open_rig(&r);
    const struct hs_joint_command *slot = hs_bench_joint(r.bench, (uint32_t)r.shoulder)->cmd;
    unsigned sent = 0;
    /* no tick has run: the angle published at attach, as the SDK's MEASURED_POSITION reads it */
    struct hs_can_frame f = read_param(&r, 0x3016);
    sent++;
    assert_int_equal(f.id >> 16 & 0xFF, 0); /* status ok */
    assert_true(fabsf(f32_of(&f) - 0.3f) < 1e-4f);
    f = read_param(&r, 0x302C); /* torque_fdb: a float, nothing applied yet */
    sent++;
    assert_int_equal(f.id >> 16 & 0xFF, 0);
    assert_true(isfinite(f32_of(&f)) && fabsf(f32_of(&f)) < 1e-3f);
    f = read_param(&r, 0x1234);
    sent++;
    assert_int_equal(f.id >> 16 & 0xFF, 1); /* unknown: status 1 */
    /* run_mode 5 (CSP) in reset mode, loc_ref: read back at once, before any tick */
    write_u8(&r, 0x7005, 5);
    f = answer(&r);
    assert_int_equal(f.id >> 24, 2);
    assert_int_equal(f.id >> 22 & 3, 0);
    write_f32(&r, 0x7016, 0.5f);
    f = answer(&r);
    assert_int_equal(f.id >> 24, 2);
    sent += 2;
    f = read_param(&r, 0x7005);
    assert_int_equal(f.data[4], 5);
    f = read_param(&r, 0x7016);
    assert_true(f32_of(&f) == 0.5f);
    sent += 2;
    /* enable: the answer is already in run mode; the plant has not seen it */
    send_rs(&r, 3, NULL);
    f = answer(&r);
    sent++;
    assert_int_equal(f.id >> 24, 2);
    assert_int_equal(f.id >> 22 & 3, 2);
    assert_int_equal(slot->seq, 0);
    /* ticks apply it: CSP lifts the shoulder toward 0.5 rad (3 s of 1 kHz ticks) */
    for (uint64_t t = 0; t < 3000; t++)
        tick(&r, t);
    double q = hs_bench_joint_reading(r.bench, (uint32_t)r.shoulder)->q;
    assert_true(slot->seq > 0);
    assert_true(fabs(q - 0.5) < 0.01); /* the speed loop's integral leaves no static error */
    f = read_param(&r, 0x3016);        /* the last published angle */
    sent++;
    assert_true(fabs(f32_of(&f) - q) < 0.05);
    /* a fault the node raises on its own (the scenario hook, on the tick) reaches the reply
     * thread with the next publish: the type 21 report goes out with that tick, then an enable
     * is refused and its answer, and faultSta (0x3022), show the fault */
    struct hs_can_port *port = hs_can_port_find(r.bench, &r.cfg->can.nodes[0]);
    assert_non_null(port);
    port->proto->raise_fault(port, 1u /* over-temperature */, true);
    tick(&r, 3000);
    f = answer(&r);
    assert_int_equal(f.id >> 24, 21);
    send_rs(&r, 3, NULL);
    f = answer(&r);
    sent++;
    assert_int_equal(f.id >> 24, 2);
    assert_int_equal(f.id >> 22 & 3, 0);          /* reset mode: enabling is refused */
    assert_int_equal(f.id >> 16 & 0x3F, 1u << 2); /* the feedback's over-temperature flag */
    f = read_param(&r, 0x3022);
    sent++;
    assert_int_equal(f.data[4], 1);
    tick(&r, 3001);
    struct hs_bench_can_node_stats ns;
    assert_int_equal(hs_bench_can_node_stats(r.can, 0, &ns), 0);
    assert_string_equal(ns.protocol, "robstride");
    assert_int_equal(ns.node.frames_ok, sent);
    assert_int_equal(ns.node.tx_frames, sent + 1); /* one answer each and the fault report */
    /* nothing else came: no second answer from the ticks */
    struct hs_can_frame extra;
    assert_int_equal(hs_can_bus_recv(r.peer, &extra, 1), 0);
    printf("robstride immediate: %u frames answered by the reply thread; shoulder at %.4f rad in "
           "CSP toward 0.5\n",
           sent, q);
    close_rig(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_robstride_immediate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
