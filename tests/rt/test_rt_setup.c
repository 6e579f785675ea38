/* RT set-up steps report granted/refused without aborting, refuse under require_rt, and the
 * baseline loop measures exactly the wake-ups asked for (or stops early on its flag). */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "hilsim/rt/rt_baseline.h"
#include "hilsim/rt/rt_setup.h"

static void test_refused_step_is_reported_not_fatal(void **state)
{
    struct hs_rt_report rep;
    struct hs_rt_opts o = {.priority = 0, .cpu = 100000, .prefault_stack_kib = 64};
    assert_int_equal(hs_rt_setup_thread(&o, &rep), 0);
    assert_int_equal(rep.sched_fifo.state, HS_RT_NOT_ASKED);
    assert_int_equal(rep.affinity.state, HS_RT_REFUSED);
    assert_int_equal(rep.affinity.err, EINVAL);
    assert_int_equal(rep.prefault.state, HS_RT_GRANTED);
    o.require_rt = true;
    assert_int_equal(hs_rt_setup_thread(&o, &rep), -EINVAL);
}

static void test_process_steps(void **state)
{
    struct hs_rt_process proc;
    struct hs_rt_report rep;
    struct hs_rt_opts o = HS_RT_OPTS_DEFAULT;
    o.require_rt = false;
    assert_int_equal(hs_rt_setup_process(&o, &proc, &rep), 0);
    /* Whatever this host grants, each asked step is decided and the fd matches the verdict. */
    assert_int_not_equal(rep.mlockall.state, HS_RT_NOT_ASKED);
    assert_int_not_equal(rep.dma_latency.state, HS_RT_NOT_ASKED);
    assert_true((proc.dma_fd >= 0) == (rep.dma_latency.state == HS_RT_GRANTED));
    print_message("mlockall %s, cpu_dma_latency %s\n", hs_rt_grant_name(rep.mlockall.state),
                  hs_rt_grant_name(rep.dma_latency.state));
    hs_rt_process_release(&proc);
    assert_int_equal(proc.dma_fd, -1);
    hs_rt_process_release(NULL);
    munlockall();
    o.lock_memory = false;
    o.hold_dma_latency = false;
    assert_int_equal(hs_rt_setup_process(&o, &proc, &rep), 0);
    assert_int_equal(rep.mlockall.state, HS_RT_NOT_ASKED);
    assert_int_equal(proc.dma_fd, -1);
}

static void test_baseline_counts_wakeups(void **state)
{
    struct hs_hist h;
    assert_int_equal(hs_hist_init(&h, HS_HIST_DEFAULT_RANGE_NS), 0);
    struct hs_rt_opts rt = {.priority = 10, .cpu = -1, .prefault_stack_kib = 64};
    struct hs_baseline_config cfg = {.period_ns = 1000000, .loops = 50, .own_thread = true};
    struct hs_baseline_result res;
    assert_int_equal(hs_baseline_run(&cfg, &rt, &h, NULL, &res), 0);
    assert_int_equal(res.loops, 50);
    assert_int_equal(h.count, 50);
    assert_true(h.min_ns >= 0); /* an absolute sleep never wakes early */
    print_message("baseline SCHED_FIFO %s, wake max %lld ns\n",
                  hs_rt_grant_name(res.rep.sched_fifo.state), (long long)h.max_ns);

    hs_hist_reset(&h);
    atomic_bool stop = true;
    cfg.own_thread = false;
    assert_int_equal(hs_baseline_run(&cfg, NULL, &h, &stop, &res), 0);
    assert_int_equal(res.loops, 0);
    assert_int_equal(h.count, 0);
    cfg.period_ns = 10;
    assert_int_equal(hs_baseline_run(&cfg, NULL, &h, NULL, &res), -EINVAL);
    hs_hist_destroy(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_step_is_reported_not_fatal),
        cmocka_unit_test(test_process_steps),
        cmocka_unit_test(test_baseline_counts_wakeups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
