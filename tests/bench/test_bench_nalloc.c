/* After warm-up the real tick makes no heap allocation, no stdio call and takes no page fault:
 * 10,000 ticks of the RT loop driving the whole bench (SR1 standing on the floor with contacts,
 * PD hold, motor models, encoders, the waist IMU and both ankle F/T sensors with noise and
 * delay lines). Heap and stdio calls are counted by interposition on the loop's thread
 * (tests/common/call_counter.c), page faults by getrusage(RUSAGE_THREAD). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "common/call_counter.h"
#include "hilsim/bench.h"
#include "rt/tick_loop.h"

enum { WARMUP = 200, MEASURED = 10000 };

struct probe {
    struct hs_bench *bench;
    struct rusage before, after;
    uint64_t contacts_min;
};

static int inputs(void *ctx, const struct hs_tick_info *t)
{
    struct probe *p = ctx;
    if (t->seq == WARMUP) {
        getrusage(RUSAGE_THREAD, &p->before);
        counting = 1;
    } else if (t->seq == WARMUP + MEASURED) {
        counting = 0;
        getrusage(RUSAGE_THREAD, &p->after);
    }
    return hs_bench_inputs(p->bench, t->wake_ns);
}

static int actuation(void *ctx, const struct hs_tick_info *t)
{
    return hs_bench_actuation(((struct probe *)ctx)->bench, t->wake_ns);
}

static int physics(void *ctx, const struct hs_tick_info *t)
{
    struct probe *p = ctx;
    int r = hs_bench_physics(p->bench, t->wake_ns);
    uint32_t c = hs_world_contact_count(hs_bench_world(p->bench));
    if (t->seq >= WARMUP && c < p->contacts_min)
        p->contacts_min = c;
    return r;
}

static int sensors(void *ctx, const struct hs_tick_info *t)
{
    return hs_bench_sensors(((struct probe *)ctx)->bench, t->wake_ns, t->tick);
}

static int outputs(void *ctx, const struct hs_tick_info *t)
{
    return hs_bench_outputs(((struct probe *)ctx)->bench, t->wake_ns, t->tick);
}

/* The folder of the workplace's OpenHRP models, or NULL when they are absent (then skip). */
static const char *shared_models(void)
{
    static char dir[4096], sr1[4200];
    const char *s = getenv("HS_SHARED_DIR");
    if (!s)
        return NULL;
    snprintf(dir, sizeof dir, "%s/models/openhrp", s);
    snprintf(sr1, sizeof sr1, "%s/SR1.wrl", dir);
    FILE *f = fopen(sr1, "r");
    if (!f)
        return NULL;
    fclose(f);
    return dir;
}

static void test_sr1_bench_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    const char *dir = shared_models();
    if (!dir)
        skip();
    /* 250 us ticks keep the test short; the physics step follows the period. */
    static const char yaml[] =
        "bench: {name: nalloc}\n"
        "models:\n"
        "  - {name: sr1, file: SR1.wrl}\n"
        "  - {name: floor, file: floor.wrl, static: true}\n"
        "physics: {step_s: 0.00025, substeps: 1}\n"
        "rt: {period_ns: 250000}\n"
        "controller: {type: pd_hold, bandwidth_rad_s: 30}\n"
        "actuators: {defaults: {command_timeout_s: 0.01, command_delay_ticks: 2}}\n"
        "sensors:\n"
        "  encoders: {defaults: {counter_bits: 24, velocity_window_ticks: 8, delay_ticks: 1}}\n"
        "  imu:\n"
        "    waist: {accel: WaistAccelSensor, gyro: WaistGyro, rate_hz: 2000,\n"
        "            noise_density: {accel: 0.002, gyro: 0.0002}, delay_ticks: 2}\n"
        "  force:\n"
        "    LeftAnkleForceSensor: {force_noise_n: 0.2, delay_ticks: 1}\n"
        "    RightAnkleForceSensor: {force_noise_n: 0.2, delay_ticks: 1}\n";
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, sizeof yaml - 1, "nalloc.yaml", dir, &cfg, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    struct probe p = {.contacts_min = UINT64_MAX};
    if (hs_bench_create(cfg, &p.bench, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);

    struct hs_tick_config tc = {
        .period_ns = 250000, .policy = HS_OVERRUN_SKIP, .max_ticks = WARMUP + MEASURED + 1};
    struct hs_rt_opts rt = HS_RT_OPTS_DEFAULT;
    rt.priority = 0; /* faults and heap calls do not depend on the scheduling class */
    rt.hold_dma_latency = false;
    struct hs_tick_ops ops = {inputs, actuation, physics, sensors, outputs, NULL};
    struct hs_tick_loop *loop = NULL;
    assert_int_equal(hs_tick_loop_create(&tc, &rt, &ops, &p, &loop, &d), 0);
    struct hs_rt_process proc = {.dma_fd = -1};
    struct hs_rt_report rep;
    hs_rt_setup_process(&rt, &proc, &rep);
    assert_int_equal(hs_tick_loop_run(loop), 0);

    long minflt = p.after.ru_minflt - p.before.ru_minflt;
    long majflt = p.after.ru_majflt - p.before.ru_majflt;
    struct hs_pose waist;
    hs_world_link_pose(hs_bench_world(p.bench), 0, 0, &waist);
    print_message("%d ticks of SR1 on the floor: %ld heap calls, %ld stdio calls, %ld minor / "
                  "%ld major faults (mlockall %s); contacts >= %llu; waist at %.4f m\n",
                  MEASURED, heap_calls, stdio_calls, minflt, majflt,
                  hs_rt_grant_name(rep.mlockall.state), (unsigned long long)p.contacts_min,
                  waist.p[2]);
    /* The robot really stood on the floor the whole time: the contacts path ran every tick. */
    assert_true(p.contacts_min >= 4);
    assert_true(waist.p[2] > 0.6);
    assert_int_equal(heap_calls, 0);
    assert_int_equal(stdio_calls, 0);
    assert_int_equal(majflt, 0);
    assert_int_equal(minflt, 0);

    hs_tick_loop_destroy(loop);
    hs_bench_destroy(p.bench);
    hs_config_free(cfg);
    hs_rt_process_release(&proc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sr1_bench_ticks_without_alloc_stdio_or_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
