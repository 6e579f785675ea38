/* Benchmark (not a test): what the CAN I/O module costs per tick with 8 nodes on 2 buses at
 * 1 kHz, on the host's socketpair backend (no SocketCAN here; the socketpair carries the same
 * can_frame records through the same batched recv/send code, but AF_UNIX is not the CAN stack).
 *
 *   bench_can_tick [CONFIG_DIR] [TICKS]
 *
 * Bench: config/biped-stand.yaml plus 4 MIT and 4 ODrive nodes (hips and knees) on buses a and
 * b, every ODrive streaming encoder estimates each tick. Part 1 runs the tick phases back to
 * back in simulated time, the peer sending one command per node per tick and draining the
 * replies, and times the CAN phases (inputs + outputs) against the rest of the tick, next to
 * the same bench without the CAN module. Part 2 runs a real 1 kHz loop (absolute sleeps on
 * CLOCK_MONOTONIC, as hilsim run does) with a peer thread sending MIT commands at random
 * moments and reports the module's command-to-reply latency percentiles (kernel receive stamp
 * of the command to the reply handed to the kernel). Not real-time here: no SCHED_FIFO, a
 * shared machine, so the percentiles' tail says more about the host than about the module.
 * Part 1 runs two more benches side by side: the same joints as 8 Robstride nodes (29-bit IDs),
 * the peer sending one motion command per node per tick, each answered by one feedback frame,
 * and as 8 moteus nodes on CAN FD buses, the peer sending one position command with a float
 * query of position, velocity and torque per node per tick (20-byte frames, 16-byte replies),
 * so the per-frame cost of the protocols compares in one run. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "canio_rig.h"
#include "hilsim/can_mit.h"
#include "hilsim/can_odrive.h"

static const char *CAN_YAML = "can:\n"
                              "  buses:\n"
                              "    - {name: a, interface: can0, replies: tick}\n"
                              "    - {name: b, interface: can1, replies: tick}\n"
                              "  nodes:\n"
                              "    - {name: rhy, bus: a, protocol: mit, id: 1, joint: R_HIP_Y}\n"
                              "    - {name: rhr, bus: a, protocol: mit, id: 2, joint: R_HIP_R}\n"
                              "    - {name: rhp, bus: a, protocol: odrive, id: 3, joint: R_HIP_P,\n"
                              "       odrive: {encoder_period_s: 0.001}}\n"
                              "    - {name: rkn, bus: a, protocol: odrive, id: 4, joint: R_KNEE,\n"
                              "       odrive: {encoder_period_s: 0.001}}\n"
                              "    - {name: lhy, bus: b, protocol: mit, id: 1, joint: L_HIP_Y}\n"
                              "    - {name: lhr, bus: b, protocol: mit, id: 2, joint: L_HIP_R}\n"
                              "    - {name: lhp, bus: b, protocol: odrive, id: 3, joint: L_HIP_P,\n"
                              "       odrive: {encoder_period_s: 0.001}}\n"
                              "    - {name: lkn, bus: b, protocol: odrive, id: 4, joint: L_KNEE,\n"
                              "       odrive: {encoder_period_s: 0.001}}\n";

static const char *RS_YAML = "can:\n"
                             "  buses:\n"
                             "    - {name: a, interface: can0, replies: tick}\n"
                             "    - {name: b, interface: can1, replies: tick}\n"
                             "  nodes:\n"
                             "    - {name: rhy, bus: a, protocol: robstride, id: 1, joint: "
                             "R_HIP_Y, robstride: {model: rs03}}\n"
                             "    - {name: rhr, bus: a, protocol: robstride, id: 2, joint: "
                             "R_HIP_R, robstride: {model: rs03}}\n"
                             "    - {name: rhp, bus: a, protocol: robstride, id: 3, joint: "
                             "R_HIP_P, robstride: {model: rs04}}\n"
                             "    - {name: rkn, bus: a, protocol: robstride, id: 4, joint: R_KNEE, "
                             "robstride: {model: rs04}}\n"
                             "    - {name: lhy, bus: b, protocol: robstride, id: 1, joint: "
                             "L_HIP_Y, robstride: {model: rs03}}\n"
                             "    - {name: lhr, bus: b, protocol: robstride, id: 2, joint: "
                             "L_HIP_R, robstride: {model: rs03}}\n"
                             "    - {name: lhp, bus: b, protocol: robstride, id: 3, joint: "
                             "L_HIP_P, robstride: {model: rs04}}\n"
                             "    - {name: lkn, bus: b, protocol: robstride, id: 4, joint: L_KNEE, "
                             "robstride: {model: rs04}}\n";

static const char *MT_YAML = "can:\n"
                             "  buses:\n"
                             "    - {name: a, interface: can0, fd: true, replies: tick}\n"
                             "    - {name: b, interface: can1, fd: true, replies: tick}\n"
                             "  nodes:\n"
                             "    - {name: rhy, bus: a, protocol: moteus, id: 1, joint: R_HIP_Y}\n"
                             "    - {name: rhr, bus: a, protocol: moteus, id: 2, joint: R_HIP_R}\n"
                             "    - {name: rhp, bus: a, protocol: moteus, id: 3, joint: R_HIP_P}\n"
                             "    - {name: rkn, bus: a, protocol: moteus, id: 4, joint: R_KNEE}\n"
                             "    - {name: lhy, bus: b, protocol: moteus, id: 1, joint: L_HIP_Y}\n"
                             "    - {name: lhr, bus: b, protocol: moteus, id: 2, joint: L_HIP_R}\n"
                             "    - {name: lhp, bus: b, protocol: moteus, id: 3, joint: L_HIP_P}\n"
                             "    - {name: lkn, bus: b, protocol: moteus, id: 4, joint: L_KNEE}\n";

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double pct(int64_t *v, long n, double p)
{
    long i = (long)(p / 100.0 * (double)(n - 1) + 0.5);
    return (double)v[i] / 1000.0;
}

static char *config_text(const char *dir, const char *can_yaml, char *buf, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/biped-stand.yaml", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, size - strlen(can_yaml) - 2, f);
    fclose(f);
    buf[n] = 0;
    strcat(buf, "\n");
    strcat(buf, can_yaml);
    return buf;
}

static const struct hs_mit_limits LIM = {-12.5, 12.5, -50, 50, 0, 500, 0, 5, -18, 18};

static void peer_commands(struct canio_rig *r, const struct hs_bench *b, bool enter)
{
    for (uint32_t bus = 0; bus < 2; bus++) {
        for (uint32_t id = 1; id <= 2; id++) {
            uint8_t d[8];
            if (enter) {
                hs_mit_pack_special(HS_MIT_ENTER, d);
            } else {
                struct hs_mit_command c = {0.0, 0, 50, 1, 0};
                hs_mit_pack_command(&LIM, &c, d);
            }
            canio_send(r, bus, id, d, 8);
        }
        for (uint32_t node = 3; node <= 4; node++) {
            uint8_t d[8] = {0};
            uint32_t cmd = enter ? HS_ODRIVE_SET_AXIS_STATE : HS_ODRIVE_SET_INPUT_POS;
            if (enter)
                hs_odrive_put_u32(d, HS_ODRIVE_STATE_CLOSED_LOOP);
            else
                hs_odrive_put_f32(d, 0.0f);
            canio_send(r, bus, hs_odrive_can_id((uint8_t)node, cmd), d, enter ? 4 : 8);
        }
    }
    (void)b;
}

/* Robstride: enable (type 3), then one motion command (type 1) per node, 29-bit IDs. */
static void peer_rs_commands(struct canio_rig *r, bool enter)
{
    for (uint32_t bus = 0; bus < 2; bus++)
        for (uint32_t id = 1; id <= 4; id++) {
            struct hs_can_frame f;
            memset(&f, 0, sizeof f);
            f.flags = HS_CAN_FLAG_EXT;
            f.len = 8;
            if (enter) {
                f.id = 3u << 24 | 0xFDu << 8 | id;
            } else {
                /* angle 0 (0x7FFF), velocity 0, kp 50/5000, kd 1/100, torque 0 */
                static const uint8_t d[8] = {0x7F, 0xFF, 0x7F, 0xFF, 0x02, 0x8F, 0x02, 0x8F};
                memcpy(f.data, d, 8);
                f.id = 1u << 24 | 0x7FFFu << 8 | id;
            }
            canio_send_frame(r, bus, &f);
        }
}

/* moteus: mode position (int8), position 0 and ff 0 (floats), a float query of 0x001..0x003,
 * NOP-padded to 20 bytes, reply requested. */
static void peer_mt_commands(struct canio_rig *r)
{
    static const uint8_t d[20] = {0x01, 0x00, 0x0a, 0x0c, 0x01, 0x20, 0,    0,    0,    0,
                                  0x0d, 0x22, 0,    0,    0,    0,    0x1f, 0x01, 0x50, 0x50};
    for (uint32_t bus = 0; bus < 2; bus++)
        for (uint32_t id = 1; id <= 4; id++) {
            struct hs_can_frame f;
            memset(&f, 0, sizeof f);
            f.flags = HS_CAN_FLAG_FD | HS_CAN_FLAG_EXT;
            f.id = 0x8000 | id;
            f.len = sizeof d;
            memcpy(f.data, d, sizeof d);
            canio_send_frame(r, bus, &f);
        }
}

static unsigned peer_drain(struct canio_rig *r)
{
    struct hs_can_frame f[64];
    unsigned n = 0;
    for (uint32_t bus = 0; bus < 2; bus++)
        n += (unsigned)canio_recv(r, bus, f, 64);
    return n;
}

/* Part 1: phase costs in simulated time. */
enum proto_mix { MIX_MIT_ODRIVE, MIX_ROBSTRIDE, MIX_MOTEUS };

static int cost(const char *text, const char *dir, long ticks, bool with_can, enum proto_mix mix,
                int64_t *can_ns, int64_t *rest_ns, double *frames_in, double *frames_out)
{
    struct canio_rig r;
    if (canio_rig_open(&r, NULL, text, dir, with_can) < 0)
        return -1;
    uint64_t in = 0, out = 0;
    for (long t = -200; t < ticks; t++) { /* 200 warm-up ticks */
        if (with_can && mix == MIX_ROBSTRIDE)
            peer_rs_commands(&r, t == -200);
        else if (with_can && mix == MIX_MOTEUS)
            peer_mt_commands(&r);
        else if (with_can)
            peer_commands(&r, r.bench, t == -200);
        in += with_can && t >= 0 ? 8 : 0;
        int64_t t0 = mono_ns();
        hs_bench_inputs(r.bench, r.now_ns);
        int64_t t1 = mono_ns();
        hs_bench_actuation(r.bench, r.now_ns);
        hs_bench_physics(r.bench, r.now_ns, r.tick);
        hs_bench_sensors(r.bench, r.now_ns, r.tick);
        int64_t t2 = mono_ns();
        hs_bench_outputs(r.bench, r.now_ns, r.tick);
        int64_t t3 = mono_ns();
        r.now_ns += r.period_ns;
        r.tick++;
        if (with_can) {
            unsigned k = peer_drain(&r);
            out += t >= 0 ? k : 0;
        }
        if (t >= 0) {
            can_ns[t] = (t1 - t0) + (t3 - t2);
            rest_ns[t] = t2 - t1;
        }
    }
    *frames_in = (double)in / (double)ticks;
    *frames_out = (double)out / (double)ticks;
    canio_rig_close(&r);
    return 0;
}

/* Part 2: a real 1 kHz loop, a peer thread commanding the MIT nodes at random moments. */
struct peer_arg {
    struct canio_rig *r;
    atomic_bool stop;
    uint64_t sent;
};

static void *peer_thread(void *p)
{
    struct peer_arg *a = p;
    unsigned seed = 12345;
    while (!atomic_load(&a->stop)) {
        struct timespec ts = {0, 200000 + (long)(rand_r(&seed) % 1600000)};
        nanosleep(&ts, NULL);
        struct hs_mit_command c = {0.0, 0, 50, 1, 0};
        uint8_t d[8];
        hs_mit_pack_command(&LIM, &c, d);
        for (uint32_t bus = 0; bus < 2; bus++)
            for (uint32_t id = 1; id <= 2; id++)
                a->sent += canio_send(a->r, bus, id, d, 8) > 0;
        struct hs_can_frame f[64];
        for (uint32_t bus = 0; bus < 2; bus++)
            canio_recv(a->r, bus, f, 64);
    }
    return NULL;
}

static int latency(const char *text, const char *dir, double seconds)
{
    struct canio_rig r;
    memset(&r, 0, sizeof r);
    struct hs_diag d = {0};
    /* the rig stamps with tick time; here the kernel stamps are the point, so attach anew */
    if (hs_config_load_buffer(text, strlen(text), "bench.yaml", dir, &r.cfg, &d) < 0 ||
        hs_bench_create(r.cfg, &r.bench, &d) < 0) {
        fprintf(stderr, "%s\n", d.msg);
        return -1;
    }
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops};
    int peer_fd[2];
    for (int i = 0; i < 2; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
            return -1;
        o.socketpair_fd[i] = sv[0];
        peer_fd[i] = sv[1];
    }
    if (hs_bench_can_attach(r.bench, &o, &r.can, &d) < 0) {
        fprintf(stderr, "%s\n", d.msg);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        struct hs_can_config pc;
        hs_can_config_init(&pc);
        pc.socketpair_fd = peer_fd[i];
        if (hs_can_bus_open(&hs_can_socketpair_ops, &pc, &r.peer[i], &d) < 0)
            return -1;
        hs_can_bus_start(r.peer[i]);
        r.npeers++;
    }
    r.period_ns = hs_bench_tick_period_ns(r.bench);
    peer_commands(&r, r.bench, true);
    struct peer_arg a = {.r = &r};
    pthread_t th;
    pthread_create(&th, NULL, peer_thread, &a);
    int64_t wake = mono_ns();
    long n = (long)(seconds * 1e9 / (double)r.period_ns);
    for (long t = 0; t < n; t++) {
        wake += r.period_ns;
        struct timespec ts = {(time_t)(wake / 1000000000), (long)(wake % 1000000000)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        hs_bench_tick(r.bench, wake, (uint64_t)t);
    }
    atomic_store(&a.stop, true);
    pthread_join(th, NULL);
    double p50, p90, p99, pmax;
    uint64_t k = hs_bench_can_latency_us(r.can, 50, &p50);
    hs_bench_can_latency_us(r.can, 90, &p90);
    hs_bench_can_latency_us(r.can, 99, &p99);
    hs_bench_can_latency_us(r.can, 100, &pmax);
    printf("latency (1 kHz loop, %.0f s, %llu MIT commands sent, %llu node-ticks answered): oldest "
           "command kernel "
           "stamp -> reply sent: p50 %.0f us, p90 %.0f us, p99 %.0f us, max %.0f us\n"
           "  (a command waits for the next tick: expect about half a period at p50)\n",
           seconds, (unsigned long long)a.sent, (unsigned long long)k, p50, p90, p99, pmax);
    canio_rig_close(&r);
    return 0;
}

static double mean_us(const int64_t *v, long n)
{
    double m = 0;
    for (long i = 0; i < n; i++)
        m += (double)v[i] / 1000.0 / (double)n;
    return m;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "config";
    long ticks = argc > 2 ? atol(argv[2]) : 5000;
    static char buf_mix[1 << 16], buf_rs[1 << 16], buf_mt[1 << 16];
    const char *text = config_text(dir, CAN_YAML, buf_mix, sizeof buf_mix);
    const char *text_rs = config_text(dir, RS_YAML, buf_rs, sizeof buf_rs);
    const char *text_mt = config_text(dir, MT_YAML, buf_mt, sizeof buf_mt);
    if (!text || !text_rs || !text_mt || ticks < 100) {
        fprintf(stderr, "usage: bench_can_tick [CONFIG_DIR with biped-stand.yaml] [TICKS>=100]\n");
        return 2;
    }
    int64_t *can_ns = calloc((size_t)ticks, sizeof *can_ns);
    int64_t *rest_ns = calloc((size_t)ticks, sizeof *rest_ns);
    int64_t *base_can = calloc((size_t)ticks, sizeof *base_can);
    int64_t *base_rest = calloc((size_t)ticks, sizeof *base_rest);
    int64_t *rs_can = calloc((size_t)ticks, sizeof *rs_can);
    int64_t *rs_rest = calloc((size_t)ticks, sizeof *rs_rest);
    int64_t *mt_can = calloc((size_t)ticks, sizeof *mt_can);
    int64_t *mt_rest = calloc((size_t)ticks, sizeof *mt_rest);
    double fin, fout, rin, rout, min_, mout, x, y;
    if (!can_ns || !rest_ns || !base_can || !base_rest || !rs_can || !rs_rest || !mt_can ||
        !mt_rest ||
        cost(text, dir, ticks, false, MIX_MIT_ODRIVE, base_can, base_rest, &x, &y) < 0 ||
        cost(text, dir, ticks, true, MIX_MIT_ODRIVE, can_ns, rest_ns, &fin, &fout) < 0 ||
        cost(text_rs, dir, ticks, true, MIX_ROBSTRIDE, rs_can, rs_rest, &rin, &rout) < 0 ||
        cost(text_mt, dir, ticks, true, MIX_MOTEUS, mt_can, mt_rest, &min_, &mout) < 0)
        return 1;
    double mt_mean = mean_us(mt_can, ticks);
    qsort(mt_can, (size_t)ticks, sizeof *mt_can, cmp_i64);
    qsort(mt_rest, (size_t)ticks, sizeof *mt_rest, cmp_i64);
    double mean = mean_us(can_ns, ticks), rs_mean = mean_us(rs_can, ticks);
    qsort(can_ns, (size_t)ticks, sizeof *can_ns, cmp_i64);
    qsort(rest_ns, (size_t)ticks, sizeof *rest_ns, cmp_i64);
    qsort(base_rest, (size_t)ticks, sizeof *base_rest, cmp_i64);
    qsort(base_can, (size_t)ticks, sizeof *base_can, cmp_i64);
    qsort(rs_can, (size_t)ticks, sizeof *rs_can, cmp_i64);
    qsort(rs_rest, (size_t)ticks, sizeof *rs_rest, cmp_i64);
    printf("biped-stand + 8 CAN nodes on 2 buses (socketpair backend), %ld ticks of 1 ms:\n",
           ticks);
    printf("  MIT + ODrive: frames per tick: %.2f in, %.2f out\n", fin, fout);
    double mix_pf = pct(can_ns, ticks, 50) / (fin + fout);
    double rs_pf = pct(rs_can, ticks, 50) / (rin + rout);
    printf("  CAN phases (inputs+outputs): p50 %.1f us, p99 %.1f us, max %.1f us, mean %.1f us; "
           "median per frame %.2f us\n",
           pct(can_ns, ticks, 50), pct(can_ns, ticks, 99), pct(can_ns, ticks, 100), mean, mix_pf);
    printf("  rest of the tick (actuation+physics+sensors): p50 %.1f us, p99 %.1f us\n",
           pct(rest_ns, ticks, 50), pct(rest_ns, ticks, 99));
    printf("  Robstride: frames per tick: %.2f in, %.2f out\n", rin, rout);
    printf("  CAN phases (inputs+outputs): p50 %.1f us, p99 %.1f us, max %.1f us, mean %.1f us; "
           "median per frame %.2f us = %.2fx MIT + ODrive's\n",
           pct(rs_can, ticks, 50), pct(rs_can, ticks, 99), pct(rs_can, ticks, 100), rs_mean, rs_pf,
           rs_pf / mix_pf);
    printf("  rest of the tick: p50 %.1f us, p99 %.1f us\n", pct(rs_rest, ticks, 50),
           pct(rs_rest, ticks, 99));
    double mt_pf = pct(mt_can, ticks, 50) / (min_ + mout);
    printf("  moteus (CAN FD, 20-byte commands, 16-byte replies): frames per tick: %.2f in, "
           "%.2f out\n",
           min_, mout);
    printf("  CAN phases (inputs+outputs): p50 %.1f us, p99 %.1f us, max %.1f us, mean %.1f us; "
           "median per frame %.2f us = %.2fx MIT + ODrive's\n",
           pct(mt_can, ticks, 50), pct(mt_can, ticks, 99), pct(mt_can, ticks, 100), mt_mean, mt_pf,
           mt_pf / mix_pf);
    printf("  rest of the tick: p50 %.1f us, p99 %.1f us\n", pct(mt_rest, ticks, 50),
           pct(mt_rest, ticks, 99));
    printf("  same bench without the CAN module: I/O phases p50 %.1f us; rest p50 %.1f us, "
           "p99 %.1f us\n",
           pct(base_can, ticks, 50), pct(base_rest, ticks, 50), pct(base_rest, ticks, 99));
    free(can_ns), free(rest_ns), free(base_can), free(base_rest), free(rs_can), free(rs_rest);
    free(mt_can), free(mt_rest);
    return latency(text, dir, 3.0) < 0;
}
