/* DBC parser cost: generated files of growing size, parsed from memory; prints the median of
 * several runs per size and the time per signal, so a quadratic step shows as a per-signal
 * time growing with the size (issue 11: 100,000 signals in one message took 34 s before the
 * signal names were hashed). Not a test: nothing is asserted.
 *
 *   ./build/tests/can/dbc_bench [runs]            (default 5 runs per size) */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hilsim/can_dbc.h"

struct text {
    char *p;
    size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...)
{
    if (t->cap - t->len < 256) {
        t->cap = t->cap ? t->cap * 2 : 1 << 20;
        t->p = realloc(t->p, t->cap);
        if (!t->p)
            abort();
    }
    va_list ap;
    va_start(ap, fmt);
    t->len += (size_t)vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
}

/* messages x signals, plus one CM_ SG_ and one VAL_ per signal naming it (lookups by name) */
static struct text gen(unsigned messages, unsigned signals)
{
    struct text t = {0};
    put(&t, "VERSION \"\"\nBU_: ECU\n");
    for (unsigned m = 0; m < messages; m++) {
        put(&t, "BO_ %u M%u: 8 ECU\n", m, m);
        for (unsigned s = 0; s < signals; s++)
            put(&t, " SG_ Signal_%u : %u|8@1+ (0.5,-10) [0|0] \"unit\" ECU\n", s, (s % 8) * 8);
    }
    for (unsigned m = 0; m < messages; m++)
        for (unsigned s = 0; s < signals; s++) {
            put(&t, "CM_ SG_ %u Signal_%u \"comment\";\n", m, s);
            put(&t, "VAL_ %u Signal_%u 0 \"zero\" 1 \"one\" ;\n", m, s);
        }
    return t;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_parse(const struct text *t, int runs)
{
    double dt[32];
    for (int r = 0; r < runs; r++) {
        struct hs_dbc *dbc = NULL;
        struct hs_diag d;
        double t0 = now_s();
        if (hs_dbc_load_buffer(t->p, t->len, "bench.dbc", &dbc, &d) < 0) {
            fprintf(stderr, "dbc_bench: %s:%d:%d: %s\n", d.file, d.line, d.column, d.msg);
            exit(1);
        }
        dt[r] = now_s() - t0;
        hs_dbc_free(dbc);
    }
    qsort(dt, (size_t)runs, sizeof dt[0], cmp_double);
    return dt[runs / 2];
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1 || runs > 31)
        runs = 5;
    static const struct {
        const char *what;
        unsigned messages, signals;
    } cases[] = {
        {"one message", 1, 1000},     {"one message", 1, 10000},   {"one message", 1, 100000},
        {"many messages", 100, 10},   {"many messages", 1000, 10}, {"many messages", 16384, 10},
        {"at every limit", 4, 65536},
    };
    printf("DBC parse, median of %d runs (signals each with a CM_ SG_ and a VAL_)\n", runs);
    printf("%-15s %9s %9s %10s %12s %12s\n", "shape", "messages", "signals", "MB", "median ms",
           "ns/signal");
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct text t = gen(cases[i].messages, cases[i].signals);
        double med = median_parse(&t, runs);
        double n = (double)cases[i].messages * cases[i].signals;
        printf("%-15s %9u %9u %10.1f %12.2f %12.1f\n", cases[i].what, cases[i].messages,
               cases[i].signals, (double)t.len / 1e6, med * 1e3, med * 1e9 / n);
        free(t.p);
    }
    return 0;
}
