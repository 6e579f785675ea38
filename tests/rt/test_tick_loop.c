/* Tick loop behaviour with fake phases that sleep on chosen ticks: overrun policies, the leaky
 * counter, stop requests (also from a signal handler), phase errors, progress and the stall
 * hook. No timing is asserted. Periods are generous (10-20 ms) and stalls end mid-period, so
 * what a stall forces is deterministic (e.g. 35 ms at 10 ms skips at least 3 periods). Noise
 * from a loaded machine can add overruns, so every run is also checked tick by tick against a
 * reference model fed with the times the fake phases saw: the loop's overrun verdicts, skipped
 * periods, tick numbering, leaky counter and safe hold must match it exactly. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "hilsim/rt/rt_clock.h"
#include "hilsim/rt/tick_loop.h"

#define MS 1000000LL
#define MAX_SEEN 64
#define MAX_RECS 64

struct fake {
    struct hs_tick_loop *loop;
    int64_t stall_ns;
    uint64_t stall_seq[4]; /* seq numbers whose physics phase sleeps stall_ns */
    int nstall;
    uint64_t stop_at_seq; /* inputs phase requests a stop (UINT64_MAX: never) */
    bool stop_by_signal;
    uint64_t err_at_seq;    /* physics returns -EIO */
    uint64_t inject_at_seq; /* outputs phase injects a stall for the next tick */
    int phase_calls[5];
    uint64_t seen[MAX_SEEN]; /* tick numbers in execution order */
    bool seen_hold[MAX_SEEN];
    int64_t planned[MAX_SEEN];
    int64_t end[MAX_SEEN]; /* end of the outputs phase: just before the loop's own reading */
    int nseen;
    int hold_calls;
    uint64_t hold_tick;
    struct hs_rt_log_rec recs[MAX_RECS];
    int nrecs;
};

static struct hs_tick_loop *signal_loop;

static void on_usr1(int sig)
{
    hs_tick_loop_request_stop(signal_loop);
}

static void sleep_ns(int64_t ns)
{
    hs_rt_sleep_until(hs_rt_now_ns() + ns);
}

static int ph_inputs(void *c, const struct hs_tick_info *t)
{
    struct fake *f = c;
    f->phase_calls[0]++;
    if (f->nseen < MAX_SEEN) {
        f->seen_hold[f->nseen] = t->safe_hold;
        f->planned[f->nseen] = t->planned_ns;
        f->seen[f->nseen++] = t->tick;
    }
    if (t->seq == f->stop_at_seq) {
        if (f->stop_by_signal)
            raise(SIGUSR1);
        else
            hs_tick_loop_request_stop(f->loop);
    }
    return 0;
}

static int ph_actuation(void *c, const struct hs_tick_info *t)
{
    ((struct fake *)c)->phase_calls[1]++;
    return 0;
}

static int ph_physics(void *c, const struct hs_tick_info *t)
{
    struct fake *f = c;
    f->phase_calls[2]++;
    for (int i = 0; i < f->nstall; i++)
        if (t->seq == f->stall_seq[i])
            sleep_ns(f->stall_ns);
    return t->seq == f->err_at_seq ? -EIO : 0;
}

static int ph_sensors(void *c, const struct hs_tick_info *t)
{
    ((struct fake *)c)->phase_calls[3]++;
    return 0;
}

static int ph_outputs(void *c, const struct hs_tick_info *t)
{
    struct fake *f = c;
    f->phase_calls[4]++;
    if (t->seq == f->inject_at_seq)
        hs_tick_loop_inject_stall(f->loop, f->stall_ns);
    if (t->seq < MAX_SEEN)
        f->end[t->seq] = hs_rt_now_ns();
    return 0;
}

static void ph_hold(void *c, const struct hs_tick_info *t)
{
    struct fake *f = c;
    f->hold_calls++;
    f->hold_tick = t->tick;
}

static const struct hs_tick_ops fake_ops = {.inputs = ph_inputs,
                                            .actuation = ph_actuation,
                                            .physics = ph_physics,
                                            .sensors = ph_sensors,
                                            .outputs = ph_outputs,
                                            .on_safe_hold = ph_hold};

static void fake_init(struct fake *f)
{
    memset(f, 0, sizeof *f);
    f->stop_at_seq = UINT64_MAX;
    f->err_at_seq = UINT64_MAX;
    f->inject_at_seq = UINT64_MAX;
}

/* Runs the loop on its own thread (SCHED_FIFO 10 when allowed, so other load on the machine
 * does not add overruns), drains the log, returns the loop's return value. */
static int run(struct fake *f, const struct hs_tick_config *cfg, struct hs_tick_result *res)
{
    struct hs_rt_opts rt = {.priority = 10, .cpu = -1, .prefault_stack_kib = 64};
    struct hs_diag d = {0};
    assert_int_equal(hs_tick_loop_create(cfg, &rt, &fake_ops, f, &f->loop, &d), 0);
    signal_loop = f->loop;
    assert_int_equal(hs_tick_loop_start(f->loop), 0);
    int r = hs_tick_loop_join(f->loop);
    hs_tick_loop_result(f->loop, res);
    struct hs_rt_log_rec rec;
    while (hs_rt_ring_pop(hs_tick_loop_log(f->loop), &rec) == 0)
        if (f->nrecs < MAX_RECS)
            f->recs[f->nrecs++] = rec;
    return r;
}

static int count_recs(const struct fake *f, uint32_t kind)
{
    int n = 0;
    for (int i = 0; i < f->nrecs; i++)
        n += f->recs[i].kind == kind;
    return n;
}

static const struct hs_rt_log_rec *find_rec(const struct fake *f, uint32_t kind, uint64_t tick)
{
    for (int i = 0; i < f->nrecs; i++)
        if (f->recs[i].kind == kind && f->recs[i].tick == tick)
            return &f->recs[i];
    return NULL;
}

/* The reference model: replays the recorded times through the documented rules. */
static void check_model(const struct fake *f, const struct hs_tick_config *c,
                        const struct hs_tick_result *res)
{
    uint32_t leaky = 0;
    bool hold = false;
    uint64_t overruns = 0, missed = 0;
    assert_true(f->nseen < MAX_SEEN);
    assert_int_equal(res->ticks, f->nseen);
    for (int i = 0; i < f->nseen; i++) {
        assert_int_equal(f->seen_hold[i], hold);
        bool over = f->end[i] > f->planned[i] + c->period_ns;
        const struct hs_rt_log_rec *o = find_rec(f, HS_RT_LOG_OVERRUN, f->seen[i]);
        uint64_t next = f->seen[i] + 1;
        if (over) {
            int64_t passed = (f->end[i] - f->planned[i]) / c->period_ns;
            overruns++;
            assert_non_null(o);
            assert_int_equal(o->b, passed);
            if (c->policy == HS_OVERRUN_SKIP) {
                missed += (uint64_t)passed;
                next += (uint64_t)passed;
            }
            if (c->policy == HS_OVERRUN_STOP)
                assert_int_equal(i, f->nseen - 1);
            leaky += c->leaky_inc;
        } else {
            assert_null(o);
            if (leaky)
                leaky--;
        }
        if (c->leaky_threshold && leaky >= c->leaky_threshold) {
            if (c->leaky_action == HS_LEAKY_STOP) {
                assert_int_equal(i, f->nseen - 1);
                assert_int_equal(res->reason, HS_TICK_STOP_LEAKY);
            } else if (c->leaky_action == HS_LEAKY_SAFE_HOLD && !hold) {
                hold = true;
                assert_int_equal(f->hold_tick, f->seen[i]);
            }
        }
        if (i + 1 < f->nseen)
            assert_int_equal(f->seen[i + 1], next);
    }
    assert_int_equal(res->overruns, overruns);
    assert_int_equal(res->missed_periods, missed);
    assert_int_equal(res->safe_hold, hold);
    assert_int_equal(f->hold_calls, hold ? 1 : 0);
    assert_int_equal(count_recs(f, HS_RT_LOG_OVERRUN), overruns);
    struct hs_tick_progress p;
    hs_tick_loop_progress(f->loop, &p);
    assert_int_equal(p.leaky_count, leaky);
    assert_int_equal(p.overruns, overruns);
    assert_int_equal(p.missed_periods, missed);
    assert_int_equal(p.last_tick, f->seen[f->nseen - 1]);
}

static void test_skip_counts_missed_periods(void **state)
{
    struct fake f;
    fake_init(&f);
    /* 10 ms period, tick seq 3 takes 35 ms: deadlines +10, +20, +30 pass, so at least 3
     * periods are skipped (exactly 3 unless the machine adds more than 5 ms). */
    f.stall_ns = 35 * MS;
    f.stall_seq[0] = 3;
    f.nstall = 1;
    struct hs_tick_config cfg = {.period_ns = 10 * MS, .policy = HS_OVERRUN_SKIP, .max_ticks = 8};
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, &res), 0);
    assert_int_equal(res.reason, HS_TICK_STOP_MAX_TICKS);
    assert_int_equal(res.ticks, 8);
    check_model(&f, &cfg, &res);
    uint64_t stalled = f.seen[3];
    const struct hs_rt_log_rec *o = find_rec(&f, HS_RT_LOG_OVERRUN, stalled);
    assert_non_null(o);
    assert_true(o->b >= 3);
    const struct hs_rt_log_rec *s = find_rec(&f, HS_RT_LOG_SKIP, stalled);
    assert_non_null(s);
    assert_int_equal(s->a, o->b);
    assert_int_equal(s->b, stalled + 1 + (uint64_t)o->b);
    assert_int_equal(f.seen[4], s->b);
    /* Every miss is counted and reported: the total equals the sum over the records and the
     * gaps in the tick numbering. */
    int64_t skipped = 0, gaps = 0;
    for (int i = 0; i < f.nrecs; i++)
        if (f.recs[i].kind == HS_RT_LOG_SKIP)
            skipped += f.recs[i].a;
    for (int i = 1; i < f.nseen; i++)
        gaps += (int64_t)(f.seen[i] - f.seen[i - 1] - 1);
    assert_int_equal(res.missed_periods, skipped);
    assert_int_equal(gaps, skipped);
    const struct hs_rt_stats *st = hs_tick_loop_stats(f.loop);
    assert_int_equal(st->ticks, 8);
    assert_int_equal(st->missed_periods, res.missed_periods);
    assert_int_equal(st->phase[HS_PHASE_TICK].count, 8);
    assert_true(st->phase[HS_PHASE_PHYSICS].max_ns >= 35 * MS);
    hs_tick_loop_destroy(f.loop);
}

static void test_catch_up_keeps_timeline(void **state)
{
    struct fake f;
    fake_init(&f);
    f.stall_ns = 35 * MS;
    f.stall_seq[0] = 3;
    f.nstall = 1;
    struct hs_tick_config cfg = {
        .period_ns = 10 * MS, .policy = HS_OVERRUN_CATCH_UP, .max_ticks = 10};
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, &res), 0);
    assert_int_equal(res.ticks, 10);
    assert_int_equal(res.missed_periods, 0);
    check_model(&f, &cfg, &res);
    for (int i = 0; i < f.nseen; i++)
        assert_int_equal(f.seen[i], i); /* no tick number skipped */
    /* Tick 3 ends after +35 ms; ticks 4 and 5 (deadlines +20 and +30) cannot start before
     * that, so all three overrun whatever else the machine does. */
    const struct hs_rt_log_rec *o = find_rec(&f, HS_RT_LOG_OVERRUN, 3);
    assert_non_null(o);
    assert_true(o->b >= 3);
    assert_non_null(find_rec(&f, HS_RT_LOG_OVERRUN, 4));
    assert_non_null(find_rec(&f, HS_RT_LOG_OVERRUN, 5));
    assert_int_equal(count_recs(&f, HS_RT_LOG_SKIP), 0);
    assert_true(res.overruns >= 3);
    hs_tick_loop_destroy(f.loop);
}

static void test_stop_policy(void **state)
{
    struct fake f;
    fake_init(&f);
    f.stall_ns = 35 * MS;
    f.stall_seq[0] = 3;
    f.nstall = 1;
    struct hs_tick_config cfg = {.period_ns = 20 * MS, .policy = HS_OVERRUN_STOP, .max_ticks = 50};
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, &res), -ETIME);
    assert_int_equal(res.reason, HS_TICK_STOP_OVERRUN);
    assert_true(res.ticks >= 1 && res.ticks <= 4); /* 4 unless an earlier tick overran */
    assert_int_equal(res.overruns, 1);
    assert_int_equal(f.phase_calls[4], res.ticks); /* the overrunning tick completed */
    check_model(&f, &cfg, &res);
    hs_tick_loop_destroy(f.loop);
}

static void test_leaky_safe_hold_at_threshold(void **state)
{
    struct fake f;
    fake_init(&f);
    /* +4 per overrun, -1 per good tick, threshold 8: stalls at seq 2 and 3 reach 4 then 8, so
     * safe hold latches at seq 3 at the latest (earlier only if the machine adds overruns). */
    f.stall_ns = 15 * MS;
    f.stall_seq[0] = 2;
    f.stall_seq[1] = 3;
    f.nstall = 2;
    struct hs_tick_config cfg = {.period_ns = 10 * MS,
                                 .policy = HS_OVERRUN_SKIP,
                                 .leaky_inc = 4,
                                 .leaky_threshold = 8,
                                 .leaky_action = HS_LEAKY_SAFE_HOLD,
                                 .max_ticks = 7};
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, &res), 0);
    assert_int_equal(res.reason, HS_TICK_STOP_MAX_TICKS);
    assert_true(res.safe_hold);
    assert_int_equal(f.hold_calls, 1);
    assert_true(f.hold_tick <= f.seen[3]);
    assert_true(f.seen_hold[4] && f.seen_hold[6]);
    check_model(&f, &cfg, &res); /* exact trigger tick and per-tick hold flags */
    const struct hs_rt_log_rec *h = find_rec(&f, HS_RT_LOG_SAFE_HOLD, f.hold_tick);
    assert_non_null(h);
    assert_true(h->a >= 8);
    assert_int_equal(h->b, 8);
    assert_int_equal(count_recs(&f, HS_RT_LOG_SAFE_HOLD), 1);
    struct hs_tick_progress p;
    hs_tick_loop_progress(f.loop, &p);
    assert_true(p.safe_hold);
    hs_tick_loop_destroy(f.loop);
}

static void test_leaky_leaks_below_threshold(void **state)
{
    struct fake f;
    fake_init(&f);
    /* Stalls at seq 1 and 6: 4, then 4 good ticks leak it to 0, then 4 again: never 8 (the
     * model says what must happen if the machine adds overruns of its own). */
    f.stall_ns = 15 * MS;
    f.stall_seq[0] = 1;
    f.stall_seq[1] = 6;
    f.nstall = 2;
    struct hs_tick_config cfg = {.period_ns = 10 * MS,
                                 .policy = HS_OVERRUN_SKIP,
                                 .leaky_inc = 4,
                                 .leaky_threshold = 8,
                                 .leaky_action = HS_LEAKY_STOP,
                                 .max_ticks = 8};
    struct hs_tick_result res;
    int r = run(&f, &cfg, &res);
    check_model(&f, &cfg, &res);
    if (res.overruns == 2) {
        assert_int_equal(r, 0);
        assert_int_equal(res.reason, HS_TICK_STOP_MAX_TICKS);
    }
    assert_true(res.overruns >= 2 || res.reason == HS_TICK_STOP_LEAKY);
    hs_tick_loop_destroy(f.loop);
}

static void test_leaky_stop_at_threshold(void **state)
{
    struct fake f;
    fake_init(&f);
    f.stall_ns = 15 * MS;
    f.stall_seq[0] = 2;
    f.stall_seq[1] = 3;
    f.nstall = 2;
    struct hs_tick_config cfg = {.period_ns = 10 * MS,
                                 .policy = HS_OVERRUN_SKIP,
                                 .leaky_inc = 4,
                                 .leaky_threshold = 8,
                                 .leaky_action = HS_LEAKY_STOP,
                                 .max_ticks = 50};
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, &res), -ETIME);
    assert_int_equal(res.reason, HS_TICK_STOP_LEAKY);
    assert_true(res.ticks >= 2 && res.ticks <= 4); /* 4 unless the machine added overruns */
    assert_int_equal(f.hold_calls, 0);
    check_model(&f, &cfg, &res);
    hs_tick_loop_destroy(f.loop);
}

static void check_stopped_at_boundary(struct fake *f, const struct hs_tick_result *res)
{
    assert_int_equal(res->reason, HS_TICK_STOP_REQUESTED);
    assert_int_equal(res->ticks, 6); /* seq 5 asked, and still completed */
    for (int i = 0; i < 5; i++)
        assert_int_equal(f->phase_calls[i], 6);
    /* The stop record names its reason, so the ring formats it without the loop's help. */
    assert_int_equal(count_recs(f, HS_RT_LOG_STOP), 1);
    const struct hs_rt_log_rec *stop = &f->recs[f->nrecs - 1];
    assert_int_equal(stop->kind, HS_RT_LOG_STOP);
    assert_int_equal(stop->a, HS_TICK_STOP_REQUESTED);
    char line[128];
    hs_rt_log_format(stop, line, sizeof line);
    assert_non_null(strstr(line, ": loop stopped: stop requested (error 0)"));
}

static void test_stop_flag_at_tick_boundary(void **state)
{
    struct fake f;
    fake_init(&f);
    f.stop_at_seq = 5;
    struct hs_tick_config cfg = {.period_ns = 1 * MS, .policy = HS_OVERRUN_CATCH_UP};
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, &res), 0);
    check_stopped_at_boundary(&f, &res);
    hs_tick_loop_destroy(f.loop);
}

static void test_stop_from_signal_handler(void **state)
{
    struct sigaction sa = {.sa_handler = on_usr1}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);
    struct fake f;
    fake_init(&f);
    f.stop_at_seq = 5;
    f.stop_by_signal = true;
    struct hs_tick_config cfg = {.period_ns = 1 * MS, .policy = HS_OVERRUN_CATCH_UP};
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, &res), 0);
    check_stopped_at_boundary(&f, &res);
    sigaction(SIGUSR1, &old, NULL);
    hs_tick_loop_destroy(f.loop);
}

static void test_phase_error_stops_after_tick(void **state)
{
    struct fake f;
    fake_init(&f);
    f.err_at_seq = 2;
    struct hs_tick_config cfg = {.period_ns = 1 * MS, .max_ticks = 100};
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, &res), -EIO);
    assert_int_equal(res.reason, HS_TICK_STOP_PHASE_ERROR);
    assert_int_equal(res.err, -EIO);
    assert_int_equal(res.ticks, 3);
    assert_int_equal(f.phase_calls[4], 3); /* sensors and outputs still ran on the bad tick */
    hs_tick_loop_destroy(f.loop);
}

static void test_injected_stall_hook(void **state)
{
    struct fake f;
    fake_init(&f);
    f.inject_at_seq = 1;
    f.stall_ns = 35 * MS;
    struct hs_tick_config cfg = {.period_ns = 10 * MS, .policy = HS_OVERRUN_SKIP, .max_ticks = 4};
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, &res), 0);
    assert_int_equal(count_recs(&f, HS_RT_LOG_STALL), 1); /* once only */
    const struct hs_rt_log_rec *st = find_rec(&f, HS_RT_LOG_STALL, f.seen[2]);
    assert_non_null(st);
    assert_int_equal(st->a, 35 * MS);
    const struct hs_rt_log_rec *o = find_rec(&f, HS_RT_LOG_OVERRUN, f.seen[2]);
    assert_non_null(o);
    assert_true(o->b >= 3);
    check_model(&f, &cfg, &res);
    hs_tick_loop_destroy(f.loop);
}

static void test_progress_from_other_thread(void **state)
{
    struct fake f;
    fake_init(&f);
    struct hs_tick_config cfg = {.period_ns = 1 * MS, .policy = HS_OVERRUN_SKIP};
    struct hs_rt_opts rt = {.priority = 10, .cpu = -1};
    struct hs_diag d = {0};
    assert_int_equal(hs_tick_loop_create(&cfg, &rt, &fake_ops, &f, &f.loop, &d), 0);
    struct hs_tick_progress p;
    hs_tick_loop_progress(f.loop, &p);
    assert_false(p.running);
    assert_int_equal(p.ticks, 0);
    assert_int_equal(hs_tick_loop_start(f.loop), 0);
    uint64_t last = 0;
    for (int i = 0; i < 10000; i++) {
        hs_tick_loop_progress(f.loop, &p);
        assert_true(p.ticks >= last);
        last = p.ticks;
        if (p.ticks >= 5)
            break;
        sleep_ns(1 * MS);
    }
    assert_true(p.ticks >= 5);
    hs_tick_loop_request_stop(f.loop);
    assert_int_equal(hs_tick_loop_join(f.loop), 0);
    hs_tick_loop_progress(f.loop, &p);
    assert_false(p.running);
    assert_int_equal(p.ticks, hs_tick_loop_stats(f.loop)->ticks);
    assert_true(p.worst_tick_ns > 0);
    char line[256];
    p = (struct hs_tick_progress){.ticks = 12034,
                                  .last_tick = 12036,
                                  .overruns = 2,
                                  .missed_periods = 2,
                                  .worst_tick_ns = 85210,
                                  .worst_wake_ns = 40100,
                                  .safe_hold = true};
    hs_tick_progress_format(&p, line, sizeof line);
    assert_string_equal(line, "tick 12036, 12034 run, 2 overruns, 2 missed, worst tick 85.2 us, "
                              "worst wake 40.1 us, SAFE HOLD, stopped");
    hs_tick_loop_destroy(f.loop);
}

static void test_run_in_calling_thread_without_rt(void **state)
{
    struct fake f;
    fake_init(&f);
    struct hs_tick_config cfg = {.period_ns = 1 * MS, .max_ticks = 5};
    struct hs_diag d = {0};
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, NULL, NULL, &f.loop, &d), 0);
    assert_int_equal(hs_tick_loop_run(f.loop), 0);
    struct hs_tick_result res;
    hs_tick_loop_result(f.loop, &res);
    assert_int_equal(res.reason, HS_TICK_STOP_MAX_TICKS);
    assert_int_equal(res.ticks, 5);
    assert_int_equal(hs_tick_loop_rt_report(f.loop)->sched_fifo.state, HS_RT_NOT_ASKED);
    hs_tick_loop_destroy(f.loop);
}

/* The live window of phase durations: taken from a phase (the loop's own thread) at ticks 5
 * and 20, each holds the ticks since the take before, and the one holding a physics phase that
 * slept 3 ms has at least that as its physics maximum, its p99 over 15 ticks is that maximum
 * and its p50 a tick that did not sleep. */
struct window_probe {
    struct hs_tick_loop *loop;
    struct hs_tick_window w[2];
    int taken;
};

static int win_physics(void *c, const struct hs_tick_info *t)
{
    if (t->seq == 10)
        sleep_ns(3 * MS);
    return 0;
}

static int win_outputs(void *c, const struct hs_tick_info *t)
{
    struct window_probe *p = c;
    if (t->seq == 5 || t->seq == 20)
        hs_tick_loop_take_window(p->loop, &p->w[p->taken++]);
    return 0;
}

static void test_phase_window(void **state)
{
    (void)state;
    static struct window_probe p;
    struct hs_tick_ops ops = {.physics = win_physics, .outputs = win_outputs};
    struct hs_tick_config cfg = {.period_ns = 10 * MS, .max_ticks = 25};
    struct hs_diag d = {0};
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, &ops, &p, &p.loop, &d), 0);
    assert_int_equal(hs_tick_loop_run(p.loop), 0);
    assert_int_equal(p.taken, 2);
    assert_int_equal(p.w[0].ticks, 5);  /* ticks 0..4: a take inside tick 5 precedes its account */
    assert_int_equal(p.w[1].ticks, 15); /* 5..19 */
    int64_t mx = p.w[1].max_ns[HS_PHASE_PHYSICS];
    assert_true(mx >= 3 * MS);
    /* the run's own histogram saw it too (it may have seen more: a loaded machine can stall
     * another tick's phase, and the ticks after the last take are in no window) */
    assert_true(hs_tick_loop_stats(p.loop)->phase[HS_PHASE_PHYSICS].max_ns >= mx);
    assert_int_equal(hs_tick_window_percentile(&p.w[1], HS_PHASE_PHYSICS, 100), mx);
    assert_int_equal(hs_tick_window_percentile(&p.w[1], HS_PHASE_PHYSICS, 99), mx);
    int64_t p50 = hs_tick_window_percentile(&p.w[1], HS_PHASE_PHYSICS, 50);
    assert_true(p50 >= 0 && p50 < 3 * MS && p50 <= mx);
    assert_true(p.w[1].max_ns[HS_PHASE_TICK] >= mx);
    /* an empty window has no percentile */
    static struct hs_tick_window empty;
    assert_int_equal(hs_tick_window_percentile(&empty, HS_PHASE_TICK, 50), -1);
    hs_tick_loop_destroy(p.loop);
}

static void test_config_validation(void **state)
{
    struct hs_tick_loop *l = (struct hs_tick_loop *)0x1;
    struct hs_diag d = {0};
    struct hs_tick_config cfg = {.period_ns = 50000};
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, NULL, NULL, &l, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "period_ns"));
    assert_ptr_equal(l, (struct hs_tick_loop *)0x1); /* untouched on failure */
    cfg.period_ns = 1 * MS;
    cfg.policy = HS_OVERRUN_MAX;
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, NULL, NULL, &l, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "policy"));
    cfg.policy = HS_OVERRUN_SKIP;
    cfg.leaky_threshold = 3;
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, NULL, NULL, &l, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "leaky_inc"));
    enum hs_overrun_policy p;
    assert_int_equal(hs_overrun_policy_parse("catch-up", &p), 0);
    assert_int_equal(p, HS_OVERRUN_CATCH_UP);
    assert_int_equal(hs_overrun_policy_parse("never", &p), -EINVAL);
    hs_tick_loop_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip_counts_missed_periods),
        cmocka_unit_test(test_catch_up_keeps_timeline),
        cmocka_unit_test(test_stop_policy),
        cmocka_unit_test(test_leaky_safe_hold_at_threshold),
        cmocka_unit_test(test_leaky_leaks_below_threshold),
        cmocka_unit_test(test_leaky_stop_at_threshold),
        cmocka_unit_test(test_stop_flag_at_tick_boundary),
        cmocka_unit_test(test_stop_from_signal_handler),
        cmocka_unit_test(test_phase_error_stops_after_tick),
        cmocka_unit_test(test_injected_stall_hook),
        cmocka_unit_test(test_progress_from_other_thread),
        cmocka_unit_test(test_run_in_calling_thread_without_rt),
        cmocka_unit_test(test_config_validation),
        cmocka_unit_test(test_phase_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
