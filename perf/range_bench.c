/* The cost of range sensors in the tick (issue 17), side by side in one run: three benches
 * over the same scene (tests/sensors/range_scene.wrl), ticked offline in turns of 200 ticks:
 *   bare   the mast with no sensor (range_mast_bare.wrl): the baseline tick;
 *   six    tests/sensors/range_mast.wrl: six range sensors, 2.53 rays a tick on average;
 *   lrf    range_mast_lrf.wrl: a 1081-ray, 40 Hz laser scanner, 44 rays a tick at 1 kHz.
 * Prints the median tick per bench, the ratio to bare and the median extra per ray cast.
 * Usage: range_bench [ROUNDS] (default 50; each round runs 200 ticks of each bench). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hilsim/bench.h"

#define BLOCK 200
#define PERIOD_NS 1000000LL

struct run {
    const char *name, *model;
    double rays_per_tick;
    const struct hs_config *cfg;
    struct hs_bench *b;
    int64_t now;
    uint64_t tick;
    double *ns;
    size_t n;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int make(struct run *r, size_t samples)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "bench: {name: range-bench-%d}\n"
             "models:\n"
             "  - {name: mast, file: %s}\n"
             "  - {name: scene, file: tests/sensors/range_scene.wrl, static: true}\n"
             "rt: {period_ns: %lld}\n"
             "controller: {type: pd_hold, defaults: {kp: 10, kd: 1}}\n",
             (int)getpid(), r->model, PERIOD_NS);
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, strlen(yaml), "range_bench.yaml", HS_SOURCE_DIR, &r->cfg, &d) <
            0 ||
        hs_bench_create(r->cfg, &r->b, &d) < 0) {
        fprintf(stderr, "range_bench: %s: %s:%d: %s\n", r->name, d.file, d.line, d.msg);
        return -1;
    }
    r->ns = calloc(samples, sizeof *r->ns);
    return r->ns ? 0 : -1;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    if (rounds < 1)
        rounds = 1;
    struct run runs[] = {
        {.name = "bare", .model = "perf/range_mast_bare.wrl", .rays_per_tick = 0},
        /* range_mast.wrl: DOWN and ONBOX one ray every tick (1 kHz); SCAN one ray on 5 of its
         * 10 ticks; SHORT, NEAR and LEVEL one ray per 100 ticks (the default 10 Hz). */
        {.name = "six", .model = "tests/sensors/range_mast.wrl", .rays_per_tick = 2.53},
        {.name = "lrf", .model = "perf/range_mast_lrf.wrl", .rays_per_tick = 1081.0 / 25},
    };
    const size_t nruns = sizeof runs / sizeof runs[0], samples = (size_t)rounds * BLOCK;
    for (size_t i = 0; i < nruns; i++)
        if (make(&runs[i], samples) < 0)
            return 1;
    for (int round = 0; round < rounds; round++)
        for (size_t i = 0; i < nruns; i++) {
            struct run *r = &runs[i];
            for (int k = 0; k < BLOCK; k++) {
                int64_t t0 = mono_ns();
                if (hs_bench_tick(r->b, r->now, r->tick) < 0) {
                    fprintf(stderr, "range_bench: %s: tick %llu failed\n", r->name,
                            (unsigned long long)r->tick);
                    return 1;
                }
                r->ns[r->n++] = (double)(mono_ns() - t0);
                r->now += PERIOD_NS;
                r->tick++;
            }
        }
    printf("range sensors in the tick, %d rounds x %d ticks each, turn by turn, median:\n", rounds,
           BLOCK);
    double base = 0;
    for (size_t i = 0; i < nruns; i++) {
        struct run *r = &runs[i];
        qsort(r->ns, r->n, sizeof *r->ns, cmp_double);
        double med = r->ns[r->n / 2];
        if (i == 0)
            base = med;
        printf("  %-5s %8.0f ns/tick  x%.2f of bare", r->name, med, med / base);
        if (r->rays_per_tick > 0)
            printf("  (%.1f rays/tick: %.0f ns per ray)", r->rays_per_tick,
                   (med - base) / r->rays_per_tick);
        printf("\n");
    }
    for (size_t i = 0; i < nruns; i++) {
        hs_bench_destroy(runs[i].b);
        hs_config_free(runs[i].cfg);
        free(runs[i].ns);
    }
    return 0;
}
