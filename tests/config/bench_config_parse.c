/* Benchmark, not a test: the config parser on inputs at its limits (4 MiB files, nesting depth
 * 64), median of N loads each, side by side in one run. Usage:
 *   build/tests/config/bench_config_parse [runs]
 * The point is the shape: every row should cost about the same per byte, whatever the depth;
 * before the depth limit a 50,000-deep flow list took 9 s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hilsim/config.h"

#define FILE_MAX (4u << 20) /* the loader's limit (HS_CFG_FILE_MAX) */
#define DEPTH_MAX 64        /* HS_CFG_MAX_DEPTH */

struct buf {
    char *p;
    size_t n;
};

static void add(struct buf *b, const char *s, size_t n)
{
    if (b->n + n <= FILE_MAX - 1) {
        memcpy(b->p + b->n, s, n);
        b->n += n;
    }
}

static void adds(struct buf *b, const char *s)
{
    add(b, s, strlen(s));
}

static void repeat(struct buf *b, const char *s, size_t times)
{
    for (size_t i = 0; i < times; i++)
        adds(b, s);
}

/* "x: " then depth-1 lists (the root mapping is level 1), width items at the bottom, filled
 * up to about total bytes. */
static void flow(struct buf *b, unsigned depth, size_t total)
{
    adds(b, "bench: {name: b}\nx: ");
    repeat(b, "[", depth - 1);
    size_t closing = depth + 1;
    while (b->n + 3 + closing < total)
        adds(b, "1, ");
    adds(b, "1");
    repeat(b, "]", depth - 1);
    adds(b, "\n");
}

static void block(struct buf *b, unsigned depth)
{
    adds(b, "bench: {name: b}\nx:\n");
    for (unsigned k = 1; k < depth; k++) { /* the root, then depth-1 mappings */
        repeat(b, "  ", k);
        adds(b, "y:\n");
    }
}

static char outcome[160];

static double load_ms(const struct buf *b)
{
    struct timespec t0, t1;
    const struct hs_config *c = NULL;
    struct hs_diag d = {0};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = hs_config_load_buffer(b->p, b->n, "bench.yaml", NULL, &c, &d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (r == 0)
        hs_config_free(c);
    snprintf(outcome, sizeof outcome, "%d:%d: %.100s", d.line, d.column, r ? d.msg : "loaded");
    return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1 || runs > 100)
        runs = 5;
    struct buf b = {malloc(FILE_MAX), 0};
    if (!b.p)
        return 1;
    printf("%-44s %10s %10s %10s\n", "input", "bytes", "median ms", "ns/byte");
    double base = 0;
    for (int kase = 0; kase < 7; kase++) {
        const char *name;
        b.n = 0;
        switch (kase) {
        case 0:
            name = "flow list, depth 3, 4 MiB wide";
            flow(&b, 3, FILE_MAX - 1);
            break;
        case 1:
            name = "flow list, depth 64 (the limit), 4 MiB wide";
            flow(&b, DEPTH_MAX, FILE_MAX - 1);
            break;
        case 2:
            name = "flow list, depth 65, 4 MiB wide (refused)";
            flow(&b, DEPTH_MAX + 1, FILE_MAX - 1);
            break;
        case 3:
            name = "2,000,000 '[' (refused at 65)";
            adds(&b, "bench: {name: b}\nx: ");
            repeat(&b, "[", 2000000);
            break;
        case 4:
            name = "block mappings, depth 64";
            block(&b, DEPTH_MAX);
            break;
        case 5:
            name = "4 MiB of comments";
            adds(&b, "bench: {name: b}\n");
            while (b.n + 40 < FILE_MAX)
                adds(&b, "# a comment line of some forty bytes\n");
            break;
        default:
            name = "flow mappings, depth 64, 4 MiB wide";
            adds(&b, "bench: {name: b}\nx: ");
            repeat(&b, "{a: ", DEPTH_MAX - 2);
            adds(&b, "{");
            {
                size_t k = 0;
                char item[32];
                while (b.n + 16 + 2 * DEPTH_MAX < FILE_MAX - 1) {
                    snprintf(item, sizeof item, "%sk%zu: 1", k ? ", " : "", k);
                    adds(&b, item);
                    k++;
                }
            }
            repeat(&b, "}", DEPTH_MAX - 1);
            adds(&b, "\n");
        }
        double t[100];
        for (int i = 0; i < runs; i++)
            t[i] = load_ms(&b);
        qsort(t, (size_t)runs, sizeof t[0], cmp);
        double med = t[runs / 2];
        if (kase == 0)
            base = med;
        printf("%-44s %10zu %10.1f %10.1f", name, b.n, med, med * 1e6 / (double)b.n);
        if (kase > 0 && base > 0)
            printf("   (%.2fx the first row)", med / base);
        printf("\n    -> %s\n", outcome);
    }
    free(b.p);
    return 0;
}
