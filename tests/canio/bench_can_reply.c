/* Benchmark (not a test): command-to-reply latency as a controller board sees it, for every
 * protocol that answers requests (MIT, ODrive, moteus, CiA 402, Robstride), each with
 * can.buses[].replies `tick` and `immediate`, side by side in one run, and the tick's own cost.
 *
 *   bench_can_reply [BASE CONFIG (config/arm2-can.yaml)] [SECONDS per run (2)] [PROTOCOL...]
 *
 * The base config gives the bench (model, physics, 1 kHz period); its can section is replaced by
 * one bus with two nodes of the protocol under test (SHOULDER id 1, ELBOW id 2). The bench runs
 * in a real loop at its period (absolute sleeps on CLOCK_MONOTONIC, as hilsim run does) on the
 * host's socketpair backend (no SocketCAN here: AF_UNIX carries the same frames). The peer, on
 * the main thread, waits a random 0.2..1.6 ms, sends node 1 the protocol's request and waits
 * for its answer (poll on its socket), then again: the latency is its own send-to-receive time
 * on CLOCK_MONOTONIC. The requests: MIT a position command (after "enter motor mode"); ODrive a
 * remote request for the encoder estimates; moteus a query of the position register; CiA 402 an
 * SDO upload of 0x6064; Robstride a read of mechPos (0x7019).
 *
 * A protocol whose node has no reply-thread path on this build is answered by the tick even with
 * `replies: immediate`: its row says so. Not real-time here (no SCHED_FIFO, a shared machine):
 * compare the rows with each other, not with a budget. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hilsim/io_can.h"
#include "can_protocol.h"
#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/can_mit.h"
#include "hilsim/config.h"

#define MAX_SAMPLES 200000
#define MAX_TICKS 200000

static const struct hs_mit_limits LIM = {-12.5, 12.5, -50, 50, 0, 500, 0, 5, -18, 18};

/* One protocol under test: its nodes' config and its request/answer pair. */
struct proto {
    const char *name;
    enum hs_cfg_can_protocol id;
    const char *bus_extra; /* keys added to the bus */
    const char *node_extra[2];
    void (*setup)(struct hs_can_bus *peer); /* frames sent once first */
    struct hs_can_frame request;
    bool (*is_answer)(const struct hs_can_frame *f);
};

static void mit_setup(struct hs_can_bus *peer)
{
    struct hs_can_frame enter = {.id = 1, .len = 8};
    hs_mit_pack_special(HS_MIT_ENTER, enter.data);
    hs_can_bus_send(peer, &enter, 1);
}

static bool mit_answer(const struct hs_can_frame *f)
{
    return f->id == 0 && f->len == 6 && f->data[0] == 1;
}

static bool odrive_answer(const struct hs_can_frame *f)
{
    return f->id == (1u << 5 | 0x09) && f->len == 8 && !(f->flags & HS_CAN_FLAG_RTR);
}

static bool moteus_answer(const struct hs_can_frame *f)
{
    return (f->id >> 8 & 0x7F) == 1 && (f->id & 0xFF) == 0; /* servo 1 to source 0 */
}

static bool cia402_answer(const struct hs_can_frame *f)
{
    return f->id == 0x581 && f->len == 8 && f->data[1] == 0x64 && f->data[2] == 0x60;
}

static bool robstride_answer(const struct hs_can_frame *f)
{
    return (f->flags & HS_CAN_FLAG_EXT) && f->id >> 24 == 17 && (f->id >> 8 & 0xFF) == 1;
}

static struct proto protos[] = {
    {.name = "mit",
     .id = HS_CFG_PROTO_MIT,
     .node_extra = {"mit: {t_min: -80, t_max: 80, timeout_s: 0}",
                    "mit: {t_min: -80, t_max: 80, timeout_s: 0}"},
     .setup = mit_setup,
     .request = {.id = 1, .len = 8},
     .is_answer = mit_answer},
    {.name = "odrive",
     .id = HS_CFG_PROTO_ODRIVE,
     .node_extra = {"odrive: {}", "odrive: {}"},
     .request = {.id = 1u << 5 | 0x09, .flags = HS_CAN_FLAG_RTR, .len = 8},
     .is_answer = odrive_answer},
    {.name = "moteus",
     .id = HS_CFG_PROTO_MOTEUS,
     .bus_extra = ", fd: true",
     .node_extra = {"moteus: {}", "moteus: {}"},
     /* source 0 asking a reply (0x80), servo 1: read one float, register 0x001 */
     .request =
         {.id = 0x8001, .flags = HS_CAN_FLAG_EXT | HS_CAN_FLAG_FD, .len = 2, .data = {0x1D, 0x01}},
     .is_answer = moteus_answer},
    {.name = "cia402",
     .id = HS_CFG_PROTO_CIA402,
     .node_extra = {"cia402: {}", "cia402: {}"},
     .request = {.id = 0x601, .len = 8, .data = {0x40, 0x64, 0x60, 0}},
     .is_answer = cia402_answer},
    {.name = "robstride",
     .id = HS_CFG_PROTO_ROBSTRIDE,
     .node_extra = {"robstride: {model: rs04, host_id: 0xFD}",
                    "robstride: {model: rs03, host_id: 0xFD}"},
     .request = {.id = 17u << 24 | 0xFDu << 8 | 1,
                 .flags = HS_CAN_FLAG_EXT,
                 .len = 8,
                 .data = {0x19, 0x70}},
     .is_answer = robstride_answer},
};
#define NPROTOS (sizeof protos / sizeof protos[0])

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

static double pct_us(int64_t *v, long n, double p)
{
    if (n <= 0)
        return 0;
    long i = (long)(p / 100.0 * (double)(n - 1) + 0.5);
    return (double)v[i] / 1000.0;
}

struct loop_arg {
    struct hs_bench *bench;
    int64_t period_ns;
    atomic_bool stop;
    int64_t *tick_ns;
    long nticks;
};

static void *loop_thread(void *p)
{
    struct loop_arg *a = p;
    int64_t wake = mono_ns();
    for (uint64_t t = 0; !atomic_load(&a->stop); t++) {
        wake += a->period_ns;
        struct timespec ts = {(time_t)(wake / 1000000000), (long)(wake % 1000000000)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        int64_t t0 = mono_ns();
        hs_bench_tick(a->bench, wake, t);
        if (a->nticks < MAX_TICKS)
            a->tick_ns[a->nticks++] = mono_ns() - t0;
    }
    return NULL;
}

struct result {
    long n, missing;
    int64_t *lat;
    int64_t *tick_ns;
    long nticks;
};

static int run(const char *text, const char *dir, double seconds, const struct proto *pr,
               struct result *res)
{
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_bench_can *can;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(text, strlen(text), "bench.yaml", dir, &cfg, &d) < 0 ||
        hs_bench_create(cfg, &bench, &d) < 0) {
        fprintf(stderr, "%s: %s:%d: %s\n", pr->name, d.file, d.line, d.msg);
        return -1;
    }
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops};
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
        return -1;
    o.socketpair_fd[0] = sv[0];
    if (hs_bench_can_attach(bench, &o, &can, &d) < 0) {
        fprintf(stderr, "%s: %s\n", pr->name, d.msg);
        return -1;
    }
    struct hs_can_config pc;
    hs_can_config_init(&pc);
    pc.socketpair_fd = sv[1];
    pc.fd = pr->bus_extra != NULL;
    struct hs_can_bus *peer;
    if (hs_can_bus_open(&hs_can_socketpair_ops, &pc, &peer, &d) < 0 || hs_can_bus_start(peer) < 0)
        return -1;
    struct loop_arg a = {
        .bench = bench, .period_ns = hs_bench_tick_period_ns(bench), .tick_ns = res->tick_ns};
    pthread_t th;
    pthread_create(&th, NULL, loop_thread, &a);
    struct hs_can_frame req = pr->request, rx[16];
    if (pr->id == HS_CFG_PROTO_MIT) {
        struct hs_mit_command c = {0.3, 0, 20, 1, 0};
        hs_mit_pack_command(&LIM, &c, req.data);
    }
    if (pr->setup)
        pr->setup(peer);
    unsigned seed = 4242;
    int64_t t_end = mono_ns() + (int64_t)(seconds * 1e9);
    struct pollfd pfd = {.fd = hs_can_bus_fd(peer), .events = POLLIN};
    res->n = res->missing = 0;
    while (mono_ns() < t_end && res->n < MAX_SAMPLES) {
        struct timespec ts = {0, 200000 + (long)(rand_r(&seed) % 1400000)};
        nanosleep(&ts, NULL);
        while (hs_can_bus_recv(peer, rx, 16) > 0) {
        } /* whatever came meanwhile (heartbeats, a late answer) */
        int64_t t0 = mono_ns();
        if (hs_can_bus_send(peer, &req, 1) != 1)
            continue;
        bool got = false;
        while (!got && mono_ns() - t0 < 50000000) {
            if (poll(&pfd, 1, 50) <= 0)
                continue;
            int k = hs_can_bus_recv(peer, rx, 16);
            for (int i = 0; i < k; i++)
                if (pr->is_answer(&rx[i]))
                    got = true;
        }
        if (got)
            res->lat[res->n++] = mono_ns() - t0;
        else
            res->missing++;
    }
    atomic_store(&a.stop, true);
    pthread_join(th, NULL);
    res->nticks = a.nticks;
    hs_can_bus_close(peer);
    hs_bench_destroy(bench);
    hs_config_free(cfg);
    return 0;
}

/* The base config with its can section replaced by PR's bus and nodes. */
static char *make_text(const char *base, const struct proto *pr, const char *replies)
{
    static char out[1 << 16];
    const char *c = strstr(base, "\ncan:\n");
    if (!c)
        return NULL;
    const char *next = c + 6; /* the next top-level key, if any */
    while (*next == ' ' || *next == '#' || *next == '\n') {
        const char *nl = strchr(next, '\n');
        next = nl ? nl + 1 : next + strlen(next);
    }
    int n = snprintf(out, sizeof out,
                     "%.*s\ncan:\n  buses:\n    - {name: main, interface: vcan0, "
                     "send_queue_policy: drop, replies: %s%s}\n  nodes:\n"
                     "    - {name: n1, bus: main, protocol: %s, id: 1, joint: SHOULDER, %s}\n"
                     "    - {name: n2, bus: main, protocol: %s, id: 2, joint: ELBOW, %s}\n%s",
                     (int)(c - base), base, replies, pr->bus_extra ? pr->bus_extra : "", pr->name,
                     pr->node_extra[0], pr->name, pr->node_extra[1], next);
    return n > 0 && (size_t)n < sizeof out ? out : NULL;
}

static char *load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char raw[1 << 16];
    size_t n = fread(raw, 1, sizeof raw - 1, f);
    fclose(f);
    raw[n] = 0;
    return raw;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "config/arm2-can.yaml";
    double seconds = argc > 2 ? atof(argv[2]) : 2.0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        strcpy(dir, ".");
    const char *base = load(path);
    if (!base || seconds <= 0) {
        fprintf(stderr, "usage: bench_can_reply [BASE CONFIG] [SECONDS] [PROTOCOL...]\n");
        return 2;
    }
    const char *modes[2] = {"tick", "immediate"};
    static struct result res[NPROTOS][2];
    bool run_it[NPROTOS];
    for (size_t p = 0; p < NPROTOS; p++) {
        run_it[p] = argc <= 3;
        for (int i = 3; i < argc; i++)
            run_it[p] |= strcmp(argv[i], protos[p].name) == 0;
        for (int m = 0; run_it[p] && m < 2; m++) {
            res[p][m].lat = calloc(MAX_SAMPLES, sizeof(int64_t));
            res[p][m].tick_ns = calloc(MAX_TICKS, sizeof(int64_t));
            const char *text = make_text(base, &protos[p], modes[m]);
            if (!text || !res[p][m].lat || !res[p][m].tick_ns) {
                fprintf(stderr, "%s: the base config has no can section\n", path);
                return 2;
            }
            if (run(text, dir, seconds, &protos[p], &res[p][m]) < 0)
                return 1;
            qsort(res[p][m].lat, (size_t)res[p][m].n, sizeof(int64_t), cmp_i64);
            qsort(res[p][m].tick_ns, (size_t)res[p][m].nticks, sizeof(int64_t), cmp_i64);
        }
    }
    printf("%s's bench, node 1 of each protocol, socketpair backend, %.1f s per run (not RT: "
           "shared host, no SCHED_FIFO)\n",
           path, seconds);
    printf("%-10s %-10s %-22s %7s %7s | command -> answer at the peer (us): %7s %7s %7s %7s | "
           "tick (us): %6s %6s\n",
           "protocol", "replies", "answered by", "cmds", "missing", "p50", "p90", "p99", "max",
           "p50", "p99");
    for (size_t p = 0; p < NPROTOS; p++) {
        if (!run_it[p])
            continue;
        bool thread = hs_can_protocol_get(protos[p].id)->replier_add != NULL;
        for (int m = 0; m < 2; m++) {
            struct result *r = &res[p][m];
            printf("%-10s %-10s %-22s %7ld %7ld |                                     %7.1f %7.1f "
                   "%7.1f %7.1f |            %6.1f %6.1f\n",
                   protos[p].name, modes[m], m == 1 && thread ? "the reply thread" : "the tick",
                   r->n, r->missing, pct_us(r->lat, r->n, 50), pct_us(r->lat, r->n, 90),
                   pct_us(r->lat, r->n, 99), pct_us(r->lat, r->n, 100),
                   pct_us(r->tick_ns, r->nticks, 50), pct_us(r->tick_ns, r->nticks, 99));
        }
    }
    printf("p50 ratio replies tick / immediate:");
    for (size_t p = 0; p < NPROTOS; p++)
        if (run_it[p] && res[p][0].n && res[p][1].n)
            printf(" %s %.1f", protos[p].name,
                   pct_us(res[p][0].lat, res[p][0].n, 50) / pct_us(res[p][1].lat, res[p][1].n, 50));
    printf("\n");
    return 0;
}
