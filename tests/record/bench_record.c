/* Benchmark (not a test): what recording costs the tick.
 *
 *   bench_record [CONFIG] [TICKS]      (default config/biped-stand.yaml, 5000 ticks)
 *
 * Two benches from the same config in one process: A as it is, B with the recorder attached
 * (its writer thread draining the rings into a temporary folder). The ticks alternate, A then
 * B, in simulated time, so both see the same machine load; each tick is timed end to end on
 * CLOCK_MONOTONIC. Prints the median and p99 of each, the difference of the medians (the
 * recorder's outputs phase: the state record filled in place in the ring) and their ratio,
 * and what the writer wrote and dropped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hilsim/bench.h"
#include "hilsim/record.h"

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double pct(int64_t *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp);
    size_t i = (size_t)(p / 100.0 * (double)(n - 1));
    return (double)v[i] / 1e3;
}

int main(int argc, char **argv)
{
    char def[4096];
    const char *src = getenv("HS_SOURCE_DIR");
    snprintf(def, sizeof def, "%s/config/biped-stand.yaml", src ? src : HS_TEST_SOURCE_DIR);
    const char *path = argc > 1 ? argv[1] : def;
    size_t ticks = argc > 2 ? (size_t)atol(argv[2]) : 5000;
    const struct hs_config *cfg;
    struct hs_diag d = {0};
    struct hs_bench *a, *b;
    if (hs_config_load(path, &cfg, &d) < 0 || hs_bench_create(cfg, &a, &d) < 0 ||
        hs_bench_create(cfg, &b, &d) < 0) {
        fprintf(stderr, "%s:%d: %s\n", d.file, d.line, d.msg);
        return 1;
    }
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/hs-bench-record-%d", (int)getpid());
    struct hs_rec_opts o = {.dir = dir, .config_path = path, .version = "bench"};
    struct hs_recorder *rec;
    if (hs_rec_create(&o, b, &rec, &d) < 0 || hs_rec_attach(rec, b) < 0) {
        fprintf(stderr, "record: %s\n", d.msg);
        return 1;
    }
    int64_t *ta = calloc(ticks, sizeof *ta), *tb = calloc(ticks, sizeof *tb);
    int64_t period = hs_bench_tick_period_ns(a);
    for (size_t k = 0; k < ticks; k++) {
        int64_t now = (int64_t)(k + 1) * period;
        int64_t t0 = mono_ns();
        hs_bench_tick(a, now, k);
        int64_t t1 = mono_ns();
        hs_bench_tick(b, now, k);
        int64_t t2 = mono_ns();
        ta[k] = t1 - t0;
        tb[k] = t2 - t1;
    }
    hs_rec_finish(rec, "bench");
    struct hs_rec_stats st;
    hs_rec_stats(rec, &st);
    double ma = pct(ta, ticks, 50), mb = pct(tb, ticks, 50);
    double pa = pct(ta, ticks, 99), pb = pct(tb, ticks, 99);
    printf("%s: %u joints, %u sensors, %zu ticks each, alternating\n", path,
           hs_bench_joint_count(a), hs_bench_sensor_count(a), ticks);
    printf("tick without recording: median %.2f us, p99 %.2f us\n", ma, pa);
    printf("tick with recording:    median %.2f us, p99 %.2f us\n", mb, pb);
    printf("recording costs %.2f us per tick at the median (ratio %.3f)\n", mb - ma, mb / ma);
    printf("writer: %.1f KiB for %llu ticks (%.0f B/tick), dropped %llu states, %llu items\n",
           (double)st.bytes_written / 1024, (unsigned long long)st.ticks,
           (double)st.bytes_written / (double)(st.ticks ? st.ticks : 1),
           (unsigned long long)st.dropped_states, (unsigned long long)st.dropped_items);
    hs_bench_destroy(b);
    hs_bench_destroy(a);
    hs_rec_destroy(rec);
    hs_config_free(cfg);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    free(ta);
    free(tb);
    return system(cmd) == 0 ? 0 : 1;
}
