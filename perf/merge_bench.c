/* Fixed-link merging (physics.merge_fixed_links) side by side in one run: the same robot on
 * the same floor under the quick look's PD hold (critically damped at 30 rad/s, clamped where
 * the bound says), once with its fixed links merged into their parents' bodies and once with a
 * body and a fixed joint each, ticked offline in turns of 200 ticks after a settling second.
 * Prints the ODE bodies of each, the median tick, and the ratio.
 * Usage: merge_bench ROBOT [ENV [ROUNDS]] (ENV default models/floor.wrl; ROUNDS default 30).
 * A URDF with package:// meshes needs HS_PACKAGE_PATH or ROS_PACKAGE_PATH, as the quick look. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hilsim/bench.h"
#include "hilsim/world.h"

#define BLOCK 200
#define PERIOD_NS 1000000LL
#define SETTLE_TICKS 1000

struct run {
    const char *name;
    bool merge;
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

static int tick(struct run *r)
{
    if (hs_bench_tick(r->b, r->now, r->tick) < 0) {
        fprintf(stderr, "merge_bench: %s: tick %llu failed (plant fault?)\n", r->name,
                (unsigned long long)r->tick);
        return -1;
    }
    r->now += PERIOD_NS;
    r->tick++;
    return 0;
}

static int make(struct run *r, const char *robot, const char *env, size_t samples)
{
    char yaml[4096];
    snprintf(yaml, sizeof yaml,
             "bench: {name: merge-bench-%d-%d}\n"
             "models:\n"
             "  - {name: robot, file: \"%s\", rest_on_static: true}\n"
             "  - {name: floor, file: \"%s\", static: true}\n"
             "physics: {merge_fixed_links: %s}\n"
             "rt: {period_ns: %lld}\n"
             "controller: {type: pd_hold, bandwidth_rad_s: 30}\n",
             (int)getpid(), r->merge, robot, env, r->merge ? "true" : "false", PERIOD_NS);
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, strlen(yaml), "merge_bench.yaml", HS_SOURCE_DIR, &r->cfg, &d) <
            0 ||
        hs_bench_create(r->cfg, &r->b, &d) < 0) {
        fprintf(stderr, "merge_bench: %s: %s:%d: %s\n", r->name, d.file, d.line, d.msg);
        return -1;
    }
    r->ns = calloc(samples, sizeof *r->ns);
    if (!r->ns)
        return -1;
    for (int k = 0; k < SETTLE_TICKS; k++)
        if (tick(r) < 0)
            return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: merge_bench ROBOT [ENV [ROUNDS]]\n");
        return 2;
    }
    const char *robot = argv[1], *env = argc > 2 ? argv[2] : "models/floor.wrl";
    int rounds = argc > 3 ? atoi(argv[3]) : 30;
    if (rounds < 1)
        rounds = 1;
    struct run runs[] = {{.name = "unmerged", .merge = false}, {.name = "merged", .merge = true}};
    const size_t nruns = sizeof runs / sizeof runs[0], samples = (size_t)rounds * BLOCK;
    for (size_t i = 0; i < nruns; i++)
        if (make(&runs[i], robot, env, samples) < 0)
            return 1;
    for (int round = 0; round < rounds; round++)
        for (size_t i = 0; i < nruns; i++) {
            struct run *r = &runs[i];
            for (int k = 0; k < BLOCK; k++) {
                int64_t t0 = mono_ns();
                if (tick(r) < 0)
                    return 1;
                r->ns[r->n++] = (double)(mono_ns() - t0);
            }
        }
    const struct hs_model *m = hs_bench_model(runs[0].b, 0);
    printf("%s: %u links; %d rounds x %d ticks each after %d settling ticks, turn by turn:\n",
           m->name, m->nlinks, rounds, BLOCK, SETTLE_TICKS);
    double base = 0;
    for (size_t i = 0; i < nruns; i++) {
        struct run *r = &runs[i];
        struct hs_world *w = hs_bench_world(r->b);
        uint32_t merged = hs_world_merged_links(w), bodies = 0;
        for (uint32_t l = 0; l < m->nlinks; l++)
            bodies += hs_world_ode_body(w, 0, l) && hs_world_link_body_link(w, 0, l) == l;
        qsort(r->ns, r->n, sizeof *r->ns, cmp_double);
        double med = r->ns[r->n / 2], p99 = r->ns[r->n * 99 / 100];
        if (i == 0)
            base = med;
        printf("  %-9s %3u ODE bodies (%2u links merged)  median %7.1f us/tick  p99 %7.1f us  "
               "x%.2f of unmerged\n",
               r->name, bodies, merged, med / 1e3, p99 / 1e3, med / base);
    }
    for (size_t i = 0; i < nruns; i++) {
        hs_bench_destroy(runs[i].b);
        hs_config_free(runs[i].cfg);
        free(runs[i].ns);
    }
    return 0;
}
