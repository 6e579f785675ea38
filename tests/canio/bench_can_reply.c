/* Benchmark (not a test): MIT command-to-reply latency as a controller board sees it, with
 * can.buses[].replies `tick` and `immediate` side by side in one run, and the tick's own cost in
 * both modes.
 *
 *   bench_can_reply [CONFIG (config/arm2-can.yaml)] [SECONDS per mode (3)]
 *
 * The bench runs in a real 1 kHz loop (absolute sleeps on CLOCK_MONOTONIC, as hilsim run does)
 * on the host's socketpair backend (no SocketCAN here: AF_UNIX carries the same can_frame
 * records). The peer, on the main thread, waits a random 0.2..1.6 ms, sends one MIT command to
 * the config's MIT node 1 and waits for its reply (poll on its socket), then again: the latency
 * is its own send-to-receive time on CLOCK_MONOTONIC. Not real-time here (no SCHED_FIFO, a
 * shared machine): compare the modes with each other, not with a budget. */
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
#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/can_mit.h"
#include "hilsim/config.h"

#define MAX_SAMPLES 200000
#define MAX_TICKS 200000

static const struct hs_mit_limits LIM = {-12.5, 12.5, -50, 50, 0, 500, 0, 5, -18, 18};

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

static int run_mode(const char *text, const char *dir, double seconds, struct result *res)
{
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_bench_can *can;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(text, strlen(text), "bench.yaml", dir, &cfg, &d) < 0 ||
        hs_bench_create(cfg, &bench, &d) < 0) {
        fprintf(stderr, "%s\n", d.msg);
        return -1;
    }
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops};
    int peer_fd[8];
    for (uint32_t i = 0; i < cfg->can.nbuses; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
            return -1;
        o.socketpair_fd[i] = sv[0];
        peer_fd[i] = sv[1];
    }
    if (hs_bench_can_attach(bench, &o, &can, &d) < 0) {
        fprintf(stderr, "%s\n", d.msg);
        return -1;
    }
    struct hs_can_config pc;
    hs_can_config_init(&pc);
    pc.socketpair_fd = peer_fd[0];
    struct hs_can_bus *peer;
    if (hs_can_bus_open(&hs_can_socketpair_ops, &pc, &peer, &d) < 0 || hs_can_bus_start(peer) < 0)
        return -1;
    for (uint32_t i = 1; i < cfg->can.nbuses; i++)
        close(peer_fd[i]);
    struct loop_arg a = {
        .bench = bench, .period_ns = hs_bench_tick_period_ns(bench), .tick_ns = res->tick_ns};
    pthread_t th;
    pthread_create(&th, NULL, loop_thread, &a);
    struct hs_can_frame enter = {.id = 1, .len = 8}, cmd = {.id = 1, .len = 8}, rx[16];
    hs_mit_pack_special(HS_MIT_ENTER, enter.data);
    struct hs_mit_command c = {0.3, 0, 20, 1, 0};
    hs_mit_pack_command(&LIM, &c, cmd.data);
    hs_can_bus_send(peer, &enter, 1);
    unsigned seed = 4242;
    int64_t t_end = mono_ns() + (int64_t)(seconds * 1e9);
    struct pollfd pfd = {.fd = hs_can_bus_fd(peer), .events = POLLIN};
    res->n = res->missing = 0;
    while (mono_ns() < t_end && res->n < MAX_SAMPLES) {
        struct timespec ts = {0, 200000 + (long)(rand_r(&seed) % 1400000)};
        nanosleep(&ts, NULL);
        while (hs_can_bus_recv(peer, rx, 16) > 0) {
        } /* whatever came meanwhile (heartbeats, a late reply) */
        int64_t t0 = mono_ns();
        if (hs_can_bus_send(peer, &cmd, 1) != 1)
            continue;
        bool got = false;
        while (!got && mono_ns() - t0 < 50000000) {
            if (poll(&pfd, 1, 50) <= 0)
                continue;
            int k = hs_can_bus_recv(peer, rx, 16);
            for (int i = 0; i < k; i++)
                if (rx[i].id == 0 && rx[i].len == 6 && rx[i].data[0] == 1)
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

static char *load_text(const char *path, const char *replies)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[2][1 << 16];
    char *out = buf[replies[0] == 't'];
    char raw[1 << 16];
    size_t n = fread(raw, 1, sizeof raw - 1, f);
    fclose(f);
    raw[n] = 0;
    /* every bus gets the mode: "interface: X" -> "interface: X, replies: MODE" */
    char *w = out, *r = raw;
    const char *key = "interface: ";
    char *hit;
    while ((hit = strstr(r, key))) {
        char *e = hit + strlen(key);
        while (*e && *e != ',' && *e != '}' && *e != '\n')
            e++;
        w += sprintf(w, "%.*s, replies: %s", (int)(e - r), r, replies);
        r = e;
    }
    strcpy(w, r);
    return out;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "config/arm2-can.yaml";
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        strcpy(dir, ".");
    const char *modes[2] = {"tick", "immediate"};
    struct result res[2];
    for (int m = 0; m < 2; m++) {
        res[m].lat = calloc(MAX_SAMPLES, sizeof(int64_t));
        res[m].tick_ns = calloc(MAX_TICKS, sizeof(int64_t));
        const char *text = load_text(path, modes[m]);
        if (!text || !res[m].lat || !res[m].tick_ns || seconds <= 0) {
            fprintf(stderr, "usage: bench_can_reply [CONFIG with an MIT node 1] [SECONDS]\n");
            return 2;
        }
        if (run_mode(text, dir, seconds, &res[m]) < 0)
            return 1;
        qsort(res[m].lat, (size_t)res[m].n, sizeof(int64_t), cmp_i64);
        qsort(res[m].tick_ns, (size_t)res[m].nticks, sizeof(int64_t), cmp_i64);
    }
    printf("%s, MIT node 1, 1 kHz loop, socketpair backend, %.0f s per mode (not RT: shared "
           "host, no SCHED_FIFO)\n",
           path, seconds);
    printf("%-10s %8s %8s | command -> reply at the peer (us): %7s %7s %7s %7s | tick (us): "
           "%6s %6s\n",
           "replies", "cmds", "missing", "p50", "p90", "p99", "max", "p50", "p99");
    for (int m = 0; m < 2; m++)
        printf("%-10s %8ld %8ld |                                   %7.1f %7.1f %7.1f %7.1f | "
               "           %6.1f %6.1f\n",
               modes[m], res[m].n, res[m].missing, pct_us(res[m].lat, res[m].n, 50),
               pct_us(res[m].lat, res[m].n, 90), pct_us(res[m].lat, res[m].n, 99),
               pct_us(res[m].lat, res[m].n, 100), pct_us(res[m].tick_ns, res[m].nticks, 50),
               pct_us(res[m].tick_ns, res[m].nticks, 99));
    if (res[0].n && res[1].n)
        printf("p50 ratio tick/immediate: %.1f\n",
               pct_us(res[0].lat, res[0].n, 50) / pct_us(res[1].lat, res[1].n, 50));
    return 0;
}
