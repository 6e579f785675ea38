/* Clock modes of the tick loop (hilsim/rt/tick_pace.h) with fake phases and fake gates: lockstep
 * runs every tick once, in order, on simulated time and never overruns however slow its controller;
 * each lockstep expiry behaviour (hold, step, stop); a stop request ends a hold; a missing gate or
 * a failing gate; the sync discipline moves every later deadline. No timing is asserted: the
 * counts follow from what the fake gates do, not from how fast the machine is. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/rt/rt_clock.h"
#include "hilsim/rt/tick_loop.h"

#define MS 1000000LL
#define MAX_SEEN 4096

enum gate_kind {
    GATE_CONTROLLER, /* released by the controller thread's answers */
    GATE_NEVER,      /* never releases: sleeps to the deadline */
    GATE_AFTER_3,    /* releases once the loop has counted 3 expiries */
    GATE_ERROR,      /* fails with -EIO */
};

struct fake {
    struct hs_tick_loop *loop;
    enum gate_kind gate;
    int nseen;
    uint64_t tick[MAX_SEEN];
    int64_t planned[MAX_SEEN], now[MAX_SEEN], wake[MAX_SEEN];
    uint64_t early; /* ticks that ran before the controller answered the previous one */
    _Atomic uint64_t published, answered;
    atomic_bool done;
    int adjust_calls;
    int64_t correction_ns;
    int nrecs_lockstep;
    const char *last_what;
};

static int ph_inputs(void *c, const struct hs_tick_info *t)
{
    struct fake *f = c;
    if (f->nseen < MAX_SEEN) {
        f->tick[f->nseen] = t->tick;
        f->planned[f->nseen] = t->planned_ns;
        f->now[f->nseen] = t->now_ns;
        f->wake[f->nseen] = t->wake_ns;
        f->nseen++;
    }
    if (f->gate == GATE_CONTROLLER && t->tick > 0 && atomic_load(&f->answered) < t->tick)
        f->early++;
    return 0;
}

static int ph_outputs(void *c, const struct hs_tick_info *t)
{
    atomic_store(&((struct fake *)c)->published, t->tick + 1);
    return 0;
}

static const struct hs_tick_ops ops = {.inputs = ph_inputs, .outputs = ph_outputs};

static int gate_wait(void *ctx, uint64_t tick, int64_t deadline_ns)
{
    struct fake *f = ctx;
    struct hs_tick_progress p;
    switch (f->gate) {
    case GATE_CONTROLLER:
        while (atomic_load(&f->answered) < tick) {
            if (hs_rt_now_ns() >= deadline_ns)
                return -ETIMEDOUT;
            hs_rt_sleep_until(hs_rt_now_ns() + 50000);
        }
        return 0;
    case GATE_AFTER_3:
        hs_tick_loop_progress(f->loop, &p);
        if (p.lockstep_timeouts >= 3)
            return 0;
        hs_rt_sleep_until(deadline_ns);
        return -ETIMEDOUT;
    case GATE_NEVER:
        hs_rt_sleep_until(deadline_ns);
        return -ETIMEDOUT;
    default:
        return -EIO;
    }
}

/* The controller: answers every published tick once, taking longer than a period to think. */
static void *controller(void *p)
{
    struct fake *f = p;
    uint64_t k = 0;
    while (!atomic_load(&f->done)) {
        if (atomic_load(&f->published) > k) {
            hs_rt_sleep_until(hs_rt_now_ns() + 300000 + (int64_t)(k % 3) * 100000);
            atomic_store(&f->answered, ++k);
        } else {
            hs_rt_sleep_until(hs_rt_now_ns() + 20000);
        }
    }
    return NULL;
}

static int64_t adjust(void *ctx, const struct hs_tick_info *t)
{
    struct fake *f = ctx;
    (void)t;
    f->adjust_calls++;
    return f->correction_ns;
}

static struct hs_tick_config lockstep_cfg(int64_t period, int64_t timeout, uint64_t ticks,
                                          enum hs_lockstep_expiry e)
{
    return (struct hs_tick_config){
        .period_ns = period,
        .max_ticks = ticks,
        .no_trace = true,
        .clock = {.mode = HS_CLOCK_LOCKSTEP, .lockstep_timeout_ns = timeout, .on_timeout = e}};
}

static int run(struct fake *f, const struct hs_tick_config *cfg, bool with_gate,
               struct hs_tick_result *res)
{
    struct hs_diag d = {0};
    assert_int_equal(hs_tick_loop_create(cfg, NULL, &ops, f, &f->loop, &d), 0);
    if (with_gate)
        hs_tick_loop_set_gate(f->loop, &(struct hs_tick_gate){.wait = gate_wait, .ctx = f});
    hs_tick_loop_set_discipline(f->loop, &(struct hs_tick_discipline){.adjust = adjust, .ctx = f});
    int r = hs_tick_loop_run(f->loop);
    hs_tick_loop_result(f->loop, res);
    struct hs_rt_log_rec rec;
    while (hs_rt_ring_pop(hs_tick_loop_log(f->loop), &rec) == 0)
        if (rec.kind == HS_RT_LOG_LOCKSTEP) {
            f->nrecs_lockstep++;
            f->last_what = rec.what;
        }
    return r;
}

static void test_lockstep_every_tick_once_on_simulated_time(void **state)
{
    (void)state;
    static struct fake f;
    memset(&f, 0, sizeof f);
    f.gate = GATE_CONTROLLER;
    /* 100 us period, a controller that takes 300-500 us per answer: wall mode would overrun
     * every tick; lockstep waits instead. */
    struct hs_tick_config cfg = lockstep_cfg(100000, 5000 * MS, 1000, HS_LOCKSTEP_STOP);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, controller, &f), 0);
    struct hs_tick_result res;
    int r = run(&f, &cfg, true, &res);
    atomic_store(&f.done, true);
    pthread_join(th, NULL);
    assert_int_equal(r, 0);
    assert_int_equal(res.reason, HS_TICK_STOP_MAX_TICKS);
    assert_int_equal(res.ticks, 1000);
    assert_int_equal(f.nseen, 1000);
    assert_int_equal(res.overruns, 0);
    assert_int_equal(res.missed_periods, 0);
    assert_int_equal(res.lockstep_timeouts, 0);
    assert_int_equal(f.early, 0);
    for (int i = 0; i < f.nseen; i++) {
        assert_int_equal(f.tick[i], (uint64_t)i);
        assert_int_equal(f.now[i], f.planned[i]); /* the tick clock is simulated time */
        assert_int_equal(f.now[i] - f.now[0], (int64_t)i * cfg.period_ns);
    }
    /* The run took longer than its simulated time (the controller is slow), yet nothing was
     * late: the last tick woke well after its planned (simulated) time. */
    assert_true(f.wake[f.nseen - 1] > f.planned[f.nseen - 1]);
    /* The last tick's answer was awaited before the stop. */
    assert_int_equal(atomic_load(&f.answered), 1000);
    assert_int_equal(f.adjust_calls, 0); /* the discipline is for sync only */
    hs_tick_loop_destroy(f.loop);
}

static void test_lockstep_expiry_step_runs_the_tick(void **state)
{
    (void)state;
    static struct fake f;
    memset(&f, 0, sizeof f);
    f.gate = GATE_NEVER;
    struct hs_tick_config cfg = lockstep_cfg(MS, 2 * MS, 5, HS_LOCKSTEP_STEP);
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, true, &res), 0);
    assert_int_equal(res.reason, HS_TICK_STOP_MAX_TICKS);
    assert_int_equal(res.ticks, 5);
    /* Ticks 1..4 each waited once; the wait for the last tick's answer expired too. */
    assert_int_equal(res.lockstep_timeouts, 5);
    assert_int_equal(f.nrecs_lockstep, 5);
    assert_string_equal(f.last_what, "step");
    for (int i = 0; i < f.nseen; i++)
        assert_int_equal(f.now[i] - f.now[0], (int64_t)i * MS);
    hs_tick_loop_destroy(f.loop);
}

static void test_lockstep_expiry_stop_ends_the_run(void **state)
{
    (void)state;
    static struct fake f;
    memset(&f, 0, sizeof f);
    f.gate = GATE_NEVER;
    struct hs_tick_config cfg = lockstep_cfg(MS, 2 * MS, 100, HS_LOCKSTEP_STOP);
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, true, &res), -ETIMEDOUT);
    assert_int_equal(res.reason, HS_TICK_STOP_LOCKSTEP_TIMEOUT);
    assert_int_equal(res.ticks, 1); /* tick 0 runs at once; tick 1 never came */
    assert_int_equal(res.lockstep_timeouts, 1);
    assert_string_equal(f.last_what, "stop");
    hs_tick_loop_destroy(f.loop);
}

static void test_lockstep_expiry_hold_keeps_waiting(void **state)
{
    (void)state;
    static struct fake f;
    memset(&f, 0, sizeof f);
    f.gate = GATE_AFTER_3;
    struct hs_tick_config cfg = lockstep_cfg(MS, 2 * MS, 3, HS_LOCKSTEP_HOLD);
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, true, &res), 0);
    assert_int_equal(res.reason, HS_TICK_STOP_MAX_TICKS);
    assert_int_equal(res.ticks, 3);
    /* Tick 1 held through three expiries, then the gate released everything at once. */
    assert_int_equal(res.lockstep_timeouts, 3);
    assert_int_equal(f.nrecs_lockstep, 3);
    assert_string_equal(f.last_what, "hold");
    assert_int_equal(f.now[2] - f.now[0], 2 * MS); /* holding did not move simulated time */
    hs_tick_loop_destroy(f.loop);
}

static void *stop_after_two_expiries(void *p)
{
    struct fake *f = p;
    struct hs_tick_progress pr;
    for (;;) {
        hs_tick_loop_progress(f->loop, &pr);
        if (pr.lockstep_timeouts >= 2)
            break;
        hs_rt_sleep_until(hs_rt_now_ns() + MS);
    }
    hs_tick_loop_request_stop(f->loop);
    return NULL;
}

static void test_stop_request_ends_a_hold(void **state)
{
    (void)state;
    static struct fake f;
    memset(&f, 0, sizeof f);
    f.gate = GATE_NEVER;
    struct hs_tick_config cfg = lockstep_cfg(MS, 5 * MS, 0, HS_LOCKSTEP_HOLD);
    struct hs_diag d = {0};
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, &ops, &f, &f.loop, &d), 0);
    hs_tick_loop_set_gate(f.loop, &(struct hs_tick_gate){.wait = gate_wait, .ctx = &f});
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stop_after_two_expiries, &f), 0);
    assert_int_equal(hs_tick_loop_run(f.loop), 0);
    pthread_join(th, NULL);
    struct hs_tick_result res;
    hs_tick_loop_result(f.loop, &res);
    assert_int_equal(res.reason, HS_TICK_STOP_REQUESTED);
    assert_int_equal(res.ticks, 1);
    assert_true(res.lockstep_timeouts >= 2);
    /* The hold kept polling the gate (what systemd's watchdog sees as alive), and is over. */
    struct hs_tick_progress pr;
    hs_tick_loop_progress(f.loop, &pr);
    assert_true(pr.gate_polls >= res.lockstep_timeouts);
    assert_false(pr.waiting);
    assert_int_equal(pr.lockstep_timeouts, res.lockstep_timeouts);
    hs_tick_loop_destroy(f.loop);
}

static void test_lockstep_needs_a_gate_and_stops_on_its_error(void **state)
{
    (void)state;
    static struct fake f;
    memset(&f, 0, sizeof f);
    struct hs_tick_config cfg = lockstep_cfg(MS, 2 * MS, 10, HS_LOCKSTEP_HOLD);
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, false, &res), -EINVAL);
    assert_int_equal(res.reason, HS_TICK_STOP_SETUP_FAILED);
    assert_int_equal(f.nseen, 0);
    hs_tick_loop_destroy(f.loop);

    memset(&f, 0, sizeof f);
    f.gate = GATE_ERROR;
    assert_int_equal(run(&f, &cfg, true, &res), -EIO);
    assert_int_equal(res.reason, HS_TICK_STOP_PHASE_ERROR);
    assert_int_equal(res.ticks, 1);
    hs_tick_loop_destroy(f.loop);
}

static void test_sync_discipline_moves_later_deadlines(void **state)
{
    (void)state;
    static struct fake f;
    memset(&f, 0, sizeof f);
    f.correction_ns = 2 * MS;
    struct hs_tick_config cfg = {.period_ns = 10 * MS, .max_ticks = 4, .no_trace = true};
    cfg.clock.mode = HS_CLOCK_SYNC;
    struct hs_tick_result res;
    assert_int_equal(run(&f, &cfg, false, &res), 0);
    assert_int_equal(f.adjust_calls, 4);
    for (int i = 1; i < f.nseen; i++) {
        /* Planned wakes, not measured ones: exact whatever the load. A late tick makes the
         * skip policy jump periods; the tick numbers say how many. */
        int64_t n = (int64_t)(f.tick[i] - f.tick[i - 1]);
        assert_int_equal(f.planned[i] - f.planned[i - 1], n * 10 * MS + 2 * MS);
    }
    for (int i = 0; i < f.nseen; i++)
        assert_int_equal(f.now[i], f.wake[i]); /* sync runs on the wall clock */

    /* The same discipline in wall mode is ignored. */
    hs_tick_loop_destroy(f.loop);
    memset(&f, 0, sizeof f);
    f.correction_ns = 2 * MS;
    cfg.clock.mode = HS_CLOCK_WALL;
    assert_int_equal(run(&f, &cfg, false, &res), 0);
    assert_int_equal(f.adjust_calls, 0);
    for (int i = 1; i < f.nseen; i++)
        assert_int_equal(f.planned[i] - f.planned[i - 1],
                         (int64_t)(f.tick[i] - f.tick[i - 1]) * 10 * MS);
    hs_tick_loop_destroy(f.loop);
}

static void test_clock_validation_and_names(void **state)
{
    (void)state;
    struct hs_tick_loop *l = NULL;
    struct hs_diag d = {0};
    struct hs_tick_config cfg = lockstep_cfg(MS, 0, 10, HS_LOCKSTEP_HOLD);
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, &ops, NULL, &l, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "lockstep_timeout_ns"));
    cfg.clock.lockstep_timeout_ns = MS;
    cfg.clock.on_timeout = HS_LOCKSTEP_EXPIRY_MAX;
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, &ops, NULL, &l, &d), -EINVAL);
    cfg.clock.on_timeout = HS_LOCKSTEP_HOLD;
    cfg.clock.mode = HS_CLOCK_MODE_MAX;
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, &ops, NULL, &l, &d), -EINVAL);
    cfg.clock.mode = HS_CLOCK_WALL;
    cfg.clock.lockstep_timeout_ns = 0; /* unused outside lockstep */
    assert_int_equal(hs_tick_loop_create(&cfg, NULL, &ops, NULL, &l, &d), 0);
    hs_tick_loop_destroy(l);

    enum hs_clock_mode m;
    enum hs_lockstep_expiry e;
    for (int i = 0; i < HS_CLOCK_MODE_MAX; i++) {
        assert_int_equal(hs_clock_mode_parse(hs_clock_mode_name(i), &m), 0);
        assert_int_equal(m, i);
    }
    for (int i = 0; i < HS_LOCKSTEP_EXPIRY_MAX; i++) {
        assert_int_equal(hs_lockstep_expiry_parse(hs_lockstep_expiry_name(i), &e), 0);
        assert_int_equal(e, i);
    }
    assert_int_equal(hs_clock_mode_parse("lock-step", &m), -EINVAL);
    assert_int_equal(hs_lockstep_expiry_parse("", &e), -EINVAL);
}

static int teardown(void **state)
{
    (void)state;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lockstep_every_tick_once_on_simulated_time),
        cmocka_unit_test(test_lockstep_expiry_step_runs_the_tick),
        cmocka_unit_test(test_lockstep_expiry_stop_ends_the_run),
        cmocka_unit_test(test_lockstep_expiry_hold_keeps_waiting),
        cmocka_unit_test(test_stop_request_ends_a_hold),
        cmocka_unit_test(test_lockstep_needs_a_gate_and_stops_on_its_error),
        cmocka_unit_test(test_sync_discipline_moves_later_deadlines),
        cmocka_unit_test(test_clock_validation_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
