/* Benchmark (not a test): what a recording costs on disk and on the writer thread, zstd
 * against none (record.compression), for the shm biped with a controller commanding every
 * joint every tick.
 *
 *   bench_record_compression [CONFIG] [TICKS] [ROUNDS]
 *       (default config/biped-shm.yaml, 3000 ticks, 2 rounds)
 *
 * Each round records the same run four times in this process, one after the other: none and
 * zstd (level 3), each with the controller holding its set points (as pd_controller does on a
 * standing robot: q, kp, kd constant, only the slot's receive time and sequence number move)
 * and swaying them (every joint's q and dq on its own sinusoid: the less compressible case).
 * The ticks are paced at the config's period on CLOCK_MONOTONIC, so the writer thread drains
 * and flushes (every 200 ms) as it does in a real-time run; simulated time drives the bench.
 * Prints per run the bytes per second of run time, the compression ratio (the records'
 * uncompressed bytes over the bytes on disk) and the writer thread's CPU time as a share of
 * one core, then the medians per case and the ratio none/zstd of the bytes per second. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hilsim/bench.h"
#include "hilsim/client.h"
#include "hilsim/io_shm.h"
#include "hilsim/record.h"
#include "hilsim/shm_abi.h"

#define MAX_ROUNDS 16

struct result {
    double bytes_per_s, ratio, cpu_share;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
    struct timespec ts = {.tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
        ;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int record_once(const char *path, size_t ticks, bool zstd, bool sway, const char *dir,
                       struct result *ret)
{
    const struct hs_config *cfg;
    struct hs_diag d = {0};
    struct hs_bench *b;
    struct hs_bench_shm *shm;
    if (hs_config_load(path, &cfg, &d) < 0 || hs_bench_create(cfg, &b, &d) < 0 ||
        hs_bench_shm_attach(b, &shm, &d) < 0) {
        fprintf(stderr, "%s:%d: %s\n", d.file, d.line, d.msg);
        return -1;
    }
    struct hs_rec_opts o = {
        .dir = dir, .config_path = path, .version = "bench", .no_compression = !zstd};
    struct hs_recorder *rec;
    if (hs_rec_create(&o, b, &rec, &d) < 0 || hs_rec_attach(rec, b) < 0) {
        fprintf(stderr, "record: %s\n", d.msg);
        return -1;
    }
    struct hs_client *c;
    char err[HS_CLIENT_ERRBUF_MIN];
    if (hs_client_attach(cfg->bench.name, &c, err, sizeof err) < 0 ||
        hs_client_claim(c, NULL, 0) < 0) {
        fprintf(stderr, "client: %s\n", err);
        return -1;
    }
    uint32_t nj = hs_bench_joint_count(b);
    int64_t period = hs_bench_tick_period_ns(b);
    int64_t t0 = mono_ns();
    for (size_t k = 0; k < ticks; k++) {
        double t = (double)k * (double)period * 1e-9;
        for (uint32_t j = 0; j < nj; j++) {
            double w = 2.0 + 0.3 * j, a = sway ? 0.05 : 0.0;
            struct hs_client_command cmd = {.mode = HS_SHM_MODE_POSITION_PD,
                                            .q = 0.1 * (j % 3) + a * sin(w * t),
                                            .dq = a * w * cos(w * t),
                                            .kp = 100 + 10 * j,
                                            .kd = 2 + 0.1 * j};
            hs_client_write_command(c, j, &cmd);
        }
        hs_client_heartbeat(c);
        hs_bench_tick(b, (int64_t)(k + 1) * period, k);
        sleep_until(t0 + (int64_t)(k + 1) * period);
    }
    hs_bench_safe_stop(b);
    hs_rec_finish(rec, "bench");
    struct hs_rec_stats st;
    hs_rec_stats(rec, &st);
    double secs = (double)ticks * (double)period * 1e-9;
    *ret = (struct result){
        .bytes_per_s = (double)st.bytes_written / secs,
        .ratio = (double)st.bytes_raw / (double)(st.bytes_written ? st.bytes_written : 1),
        .cpu_share = (double)st.writer_cpu_ns * 1e-9 / secs,
    };
    printf("  %-4s %-5s %8.0f KiB/s on disk, ratio %5.2f, writer CPU %5.2f %% of a core, %llu "
           "shm records, dropped %llu\n",
           zstd ? "zstd" : "none", sway ? "sway" : "hold", ret->bytes_per_s / 1024, ret->ratio,
           100 * ret->cpu_share, (unsigned long long)st.items,
           (unsigned long long)(st.dropped_states + st.dropped_items));
    hs_client_detach(c);
    hs_bench_destroy(b);
    hs_rec_destroy(rec);
    hs_config_free(cfg);
    char cmdline[600];
    snprintf(cmdline, sizeof cmdline, "rm -rf '%s'", dir);
    return system(cmdline) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    char def[4096];
    const char *src = getenv("HS_SOURCE_DIR");
    snprintf(def, sizeof def, "%s/config/biped-shm.yaml", src ? src : HS_TEST_SOURCE_DIR);
    const char *path = argc > 1 ? argv[1] : def;
    size_t ticks = argc > 2 ? (size_t)atol(argv[2]) : 3000;
    int rounds = argc > 3 ? atoi(argv[3]) : 2;
    if (rounds < 1 || rounds > MAX_ROUNDS || ticks < 1) {
        fprintf(stderr, "usage: bench_record_compression [CONFIG] [TICKS] [ROUNDS 1..%d]\n",
                MAX_ROUNDS);
        return 2;
    }
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/hs-bench-record-z-%d", (int)getpid());
    static const char *const names[4] = {"none hold", "zstd hold", "none sway", "zstd sway"};
    double bps[4][MAX_ROUNDS], ratio[4][MAX_ROUNDS], cpu[4][MAX_ROUNDS];
    printf("%s: %zu ticks per run, paced at the config's period, %d rounds\n", path, ticks, rounds);
    for (int r = 0; r < rounds; r++)
        for (int m = 0; m < 4; m++) {
            struct result res;
            if (record_once(path, ticks, m & 1, m >= 2, dir, &res) < 0)
                return 1;
            bps[m][r] = res.bytes_per_s, ratio[m][r] = res.ratio, cpu[m][r] = res.cpu_share;
        }
    double mb[4];
    for (int m = 0; m < 4; m++) {
        mb[m] = median(bps[m], rounds);
        printf("median %s: %.0f KiB/s (%.2f GB per hour), ratio %.2f, writer CPU %.2f %% of a "
               "core\n",
               names[m], mb[m] / 1024, mb[m] * 3600 / 1e9, median(ratio[m], rounds),
               100 * median(cpu[m], rounds));
    }
    printf("none/zstd bytes per second: hold %.2f, sway %.2f\n", mb[0] / mb[1], mb[2] / mb[3]);
    return 0;
}
