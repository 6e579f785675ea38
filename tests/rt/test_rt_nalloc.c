/* The RT path makes no heap allocation, no stdio call and takes no page fault: 10,000 ticks of
 * the loop (with a CPU-burning physics phase, tracing compiled in when available, overrun
 * records posted) are counted by interposing malloc & co. and the stdio output functions in
 * this binary, and by getrusage(RUSAGE_THREAD) fault counts. Counting is per thread, so the
 * LTTng-UST listener threads do not disturb it. Label "nosan": ASan replaces malloc. */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/rt/rt_clock.h"
#include "hilsim/rt/rt_setup.h"
#include "hilsim/rt/tick_loop.h"

#include "common/call_counter.h"

enum { WARMUP = 2, MEASURED = 10000 };

struct probe {
    struct hs_tick_loop *loop;
    struct rusage before, after;
    uint64_t first_seq, last_seq;
};

static void burn(int64_t ns)
{
    int64_t end = hs_rt_now_ns() + ns;
    while (hs_rt_now_ns() < end)
        ;
}

/* The window opens in tick WARMUP's inputs phase and closes in tick WARMUP+MEASURED's inputs
 * phase: exactly MEASURED whole ticks (accounting, tracing, overrun handling included). */
static int inputs(void *ctx, const struct hs_tick_info *t)
{
    struct probe *p = ctx;
    if (t->seq == WARMUP) {
        getrusage(RUSAGE_THREAD, &p->before);
        counting = 1;
    } else if (t->seq == WARMUP + 10) {
        hs_tick_loop_inject_stall(p->loop, 1000000); /* one overrun: the miss path runs too */
    } else if (t->seq == WARMUP + MEASURED) {
        counting = 0;
        getrusage(RUSAGE_THREAD, &p->after);
    }
    return 0;
}

static int physics(void *ctx, const struct hs_tick_info *t)
{
    burn(20000);
    return 0;
}

static void test_no_alloc_no_stdio_no_faults(void **state)
{
    struct hs_rt_opts rt = HS_RT_OPTS_DEFAULT;
    rt.priority = 10;
    rt.hold_dma_latency = false;
    struct hs_rt_process proc;
    struct hs_rt_report rep;
    assert_int_equal(hs_rt_setup_process(&rt, &proc, &rep), 0);
    print_message("mlockall %s\n", hs_rt_grant_name(rep.mlockall.state));

    struct probe p = {0};
    struct hs_tick_config cfg = {.period_ns = 100000,
                                 .policy = HS_OVERRUN_SKIP,
                                 .leaky_inc = 1,
                                 .leaky_threshold = 1000000,
                                 .leaky_action = HS_LEAKY_SAFE_HOLD,
                                 .max_ticks = WARMUP + MEASURED + 1};
    const struct hs_tick_ops ops = {.inputs = inputs, .physics = physics};
    struct hs_tick_loop *l = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_tick_loop_create(&cfg, &rt, &ops, &p, &l, &d), 0);
    p.loop = l;
    assert_int_equal(hs_tick_loop_run(l), 0);
    struct hs_tick_result res;
    hs_tick_loop_result(l, &res);
    assert_int_equal(res.ticks, WARMUP + MEASURED + 1);

    long minflt = p.after.ru_minflt - p.before.ru_minflt;
    long majflt = p.after.ru_majflt - p.before.ru_majflt;
    print_message("%d ticks: heap calls %ld, stdio calls %ld, faults minor %ld major %ld, "
                  "overruns %llu\n",
                  MEASURED, heap_calls, stdio_calls, minflt, majflt,
                  (unsigned long long)res.overruns);
    assert_int_equal(heap_calls, 0);
    assert_int_equal(stdio_calls, 0);
    assert_int_equal(minflt, 0);
    assert_int_equal(majflt, 0);
    assert_true(res.overruns >= 1);
    hs_tick_loop_destroy(l);
    hs_rt_process_release(&proc);
    munlockall();
}

/* Lockstep: the gate's wait, the release bookkeeping and the expiry path (every 1000th tick the
 * gate lets its deadline pass: a logged expiry, then on_timeout step) allocate nothing either. */
static int gate(void *ctx, uint64_t tick, int64_t deadline_ns)
{
    (void)ctx;
    if (tick % 1000 != 500)
        return 0;
    hs_rt_sleep_until(deadline_ns);
    return -ETIMEDOUT;
}

static void test_lockstep_no_alloc_no_stdio_no_faults(void **state)
{
    struct hs_rt_opts rt = HS_RT_OPTS_DEFAULT;
    rt.priority = 10;
    rt.hold_dma_latency = false;
    struct hs_rt_process proc;
    struct hs_rt_report rep;
    assert_int_equal(hs_rt_setup_process(&rt, &proc, &rep), 0);
    heap_calls = stdio_calls = 0;
    struct probe p = {0};
    struct hs_tick_config cfg = {.period_ns = 100000,
                                 .max_ticks = WARMUP + MEASURED + 1,
                                 .clock = {.mode = HS_CLOCK_LOCKSTEP,
                                           .lockstep_timeout_ns = HS_LOCKSTEP_TIMEOUT_MIN_NS,
                                           .on_timeout = HS_LOCKSTEP_STEP}};
    const struct hs_tick_ops ops = {.inputs = inputs, .physics = physics};
    struct hs_tick_loop *l = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_tick_loop_create(&cfg, &rt, &ops, &p, &l, &d), 0);
    hs_tick_loop_set_gate(l, &(struct hs_tick_gate){.wait = gate});
    p.loop = l;
    assert_int_equal(hs_tick_loop_run(l), 0);
    struct hs_tick_result res;
    hs_tick_loop_result(l, &res);
    assert_int_equal(res.ticks, WARMUP + MEASURED + 1);
    long minflt = p.after.ru_minflt - p.before.ru_minflt;
    long majflt = p.after.ru_majflt - p.before.ru_majflt;
    print_message("lockstep %d ticks: heap calls %ld, stdio calls %ld, faults minor %ld major "
                  "%ld, expired waits %llu\n",
                  MEASURED, heap_calls, stdio_calls, minflt, majflt,
                  (unsigned long long)res.lockstep_timeouts);
    assert_int_equal(heap_calls, 0);
    assert_int_equal(stdio_calls, 0);
    assert_int_equal(minflt, 0);
    assert_int_equal(majflt, 0);
    assert_int_equal(res.lockstep_timeouts, 10); /* ticks 500, 1500, ..., 9500 */
    assert_int_equal(res.overruns, 0);
    hs_tick_loop_destroy(l);
    hs_rt_process_release(&proc);
    munlockall();
}

/* The counters can fail: the same window around a printf and a malloc counts them. */
static void test_counters_detect(void **state)
{
    counting = 1;
    void *volatile q = malloc(16);
    free(q);
    printf("counter check %ld\n", heap_calls);
    counting = 0;
    assert_int_equal(heap_calls, 2);
    assert_true(stdio_calls >= 1);
    heap_calls = stdio_calls = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters_detect),
        cmocka_unit_test(test_no_alloc_no_stdio_no_faults),
        cmocka_unit_test(test_lockstep_no_alloc_no_stdio_no_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
