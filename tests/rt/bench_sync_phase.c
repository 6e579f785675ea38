/* Benchmark, not a test: the sync clock's phase jitter against the wall clock, side by side in
 * one run on this host.
 *
 *   bench_sync_phase [ticks] [period_us] [offset_ppm]      (defaults 5000, 1000, -5000)
 *
 * A "master" thread runs its own absolute-deadline timer at period x (1 + offset) (a CANopen
 * master 0.5 % fast) and posts each wake's time. The real tick loop (rt/tick_loop) runs the
 * same number of ticks twice: on the wall clock, then on the sync clock with the discipline.
 * Per tick it takes the events posted before its planned wake and records their lead (planned
 * wake - event). Printed per mode: the lead's median and spread (p1..p99, standard deviation),
 * the ticks that took no event or two (the beat), and the wake latency p99, so the cost of
 * moving the deadlines shows too. The sync run's first ticks (pull-in) are left out of its
 * figures until it reports locked. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/rt/clock_discipline.h"
#include "hilsim/rt/rt_clock.h"
#include "hilsim/rt/tick_loop.h"

#define RING 4096

struct run {
    /* the master: SPSC ring of event times */
    int64_t ev[RING];
    _Atomic uint64_t head, tail;
    atomic_bool stop;
    int64_t master_period_ns;
    /* the loop */
    struct hs_clock_discipline disc;
    bool sync;
    int64_t *lead; /* per judged tick: lead of its first event, ns */
    uint64_t nlead, none, two, judged;
    int64_t *wake;
    uint64_t nwake;
};

static void *master(void *arg)
{
    struct run *r = arg;
    int64_t t = hs_rt_now_ns() + 2 * r->master_period_ns;
    while (!atomic_load(&r->stop)) {
        hs_rt_sleep_until(t);
        int64_t now = hs_rt_now_ns();
        uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
        if (h - atomic_load_explicit(&r->tail, memory_order_acquire) < RING) {
            r->ev[h % RING] = now;
            atomic_store_explicit(&r->head, h + 1, memory_order_release);
        }
        t += r->master_period_ns;
    }
    return NULL;
}

static int inputs(void *ctx, const struct hs_tick_info *t)
{
    struct run *r = ctx;
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint32_t n = 0;
    int64_t first = 0;
    while (tail != head && r->ev[tail % RING] <= t->planned_ns) {
        int64_t e = r->ev[tail % RING];
        if (n++ == 0)
            first = e;
        if (r->sync)
            hs_clock_discipline_event(&r->disc, e, t->planned_ns);
        tail++;
    }
    atomic_store_explicit(&r->tail, tail, memory_order_release);
    struct hs_sync_status st;
    hs_clock_discipline_status(&r->disc, &st);
    bool judged = !r->sync || st.state == HS_SYNC_LOCKED;
    if (judged && t->seq > 10) {
        r->judged++;
        r->none += n == 0;
        r->two += n >= 2;
        if (n)
            r->lead[r->nlead++] = t->planned_ns - first;
        r->wake[r->nwake++] = t->wake_ns - t->planned_ns;
    }
    return 0;
}

static int64_t adjust(void *ctx, const struct hs_tick_info *t)
{
    (void)t;
    return hs_clock_discipline_adjust(&((struct run *)ctx)->disc, NULL);
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double pct(int64_t *v, uint64_t n, double p)
{
    return n ? (double)v[(uint64_t)(p / 100.0 * (double)(n - 1))] : 0.0;
}

static int one(const char *name, bool sync, uint64_t ticks, int64_t period, int64_t mperiod,
               double *ret_sd)
{
    struct run *r = calloc(1, sizeof *r);
    r->lead = calloc(ticks, sizeof *r->lead);
    r->wake = calloc(ticks, sizeof *r->wake);
    if (!r || !r->lead || !r->wake)
        return -ENOMEM;
    r->sync = sync;
    r->master_period_ns = mperiod;
    struct hs_clock_discipline_config dc = {
        .period_ns = period, .lead_ns = -1, .max_slew_ppm = 10000};
    hs_clock_discipline_init(&r->disc, &dc, NULL);
    struct hs_tick_config tc = {.period_ns = period,
                                .policy = HS_OVERRUN_SKIP,
                                .max_ticks = ticks,
                                .no_trace = true,
                                .clock = {.mode = sync ? HS_CLOCK_SYNC : HS_CLOCK_WALL}};
    struct hs_rt_opts rt = HS_RT_OPTS_DEFAULT;
    rt.priority = 0;
    rt.hold_dma_latency = false;
    struct hs_tick_ops ops = {.inputs = inputs};
    struct hs_tick_loop *loop;
    struct hs_diag d = {0};
    if (hs_tick_loop_create(&tc, &rt, &ops, r, &loop, &d) < 0) {
        fprintf(stderr, "%s\n", d.msg);
        return -EINVAL;
    }
    if (sync)
        hs_tick_loop_set_discipline(loop, &(struct hs_tick_discipline){.adjust = adjust, .ctx = r});
    pthread_t th;
    pthread_create(&th, NULL, master, r);
    int rc = hs_tick_loop_run(loop);
    atomic_store(&r->stop, true);
    pthread_join(th, NULL);
    qsort(r->lead, r->nlead, sizeof *r->lead, cmp);
    qsort(r->wake, r->nwake, sizeof *r->wake, cmp);
    double m = 0, sd = 0;
    for (uint64_t i = 0; i < r->nlead; i++)
        m += (double)r->lead[i];
    m = r->nlead ? m / (double)r->nlead : 0;
    for (uint64_t i = 0; i < r->nlead; i++)
        sd += ((double)r->lead[i] - m) * ((double)r->lead[i] - m);
    sd = r->nlead ? sqrt(sd / (double)r->nlead) : 0;
    struct hs_sync_status st;
    hs_clock_discipline_status(&r->disc, &st);
    printf("%-5s %8llu %9.1f %9.1f %9.1f %9.1f %9llu %9llu %9.1f", name,
           (unsigned long long)r->judged, pct(r->lead, r->nlead, 50) / 1e3,
           pct(r->lead, r->nlead, 1) / 1e3, pct(r->lead, r->nlead, 99) / 1e3, sd / 1e3,
           (unsigned long long)r->none, (unsigned long long)r->two,
           pct(r->wake, r->nwake, 99) / 1e3);
    if (sync)
        printf("   drift %+.0f ppm", st.drift_ppm);
    printf("\n");
    *ret_sd = sd;
    hs_tick_loop_destroy(loop);
    free(r->lead);
    free(r->wake);
    free(r);
    return rc;
}

int main(int argc, char **argv)
{
    uint64_t ticks = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000;
    int64_t period = (argc > 2 ? atoll(argv[2]) : 1000) * 1000;
    double off = (argc > 3 ? atof(argv[3]) : -5000) * 1e-6;
    int64_t mperiod = (int64_t)llround((double)period * (1 + off));
    printf("sync clock phase against the wall clock: %llu ticks of %.3f ms, master period %.6f "
           "ms (%+.0f ppm)\n",
           (unsigned long long)ticks, (double)period / 1e6, (double)mperiod / 1e6, off * 1e6);
    printf("lead = planned wake - the event it consumed [us]; none/two: ticks without an "
           "event / with two or more\n");
    printf("%-5s %8s %9s %9s %9s %9s %9s %9s %9s\n", "clock", "ticks", "lead p50", "p1", "p99",
           "sd", "none", "two", "wake p99");
    double sd_wall, sd_sync;
    if (one("wall", false, ticks, period, mperiod, &sd_wall) < 0 ||
        one("sync", true, ticks, period, mperiod, &sd_sync) < 0)
        return 1;
    printf("phase jitter (sd of the lead): sync / wall = %.3f\n",
           sd_wall > 0 ? sd_sync / sd_wall : 0.0);
    return 0;
}
