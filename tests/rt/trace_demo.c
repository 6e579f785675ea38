/* A short traced run for the tracing test: N ticks of a loop whose phases burn a little CPU.
 * With the catch-up policy every tick number 0..N-1 is executed; with skip and a stall, the
 * skipped periods are gaps in the numbering. Prints the in-process stats as JSON on stdout (one
 * line, report.json's "stats" object) and as the text table on stderr, for comparison with
 * scripts/trace-analyze.py. trace_demo [ticks=2000] [period_ns=1000000] [policy=catch-up]
 * [stall_seq stall_ns] */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "hilsim/report_json.h"
#include "hilsim/rt/rt_clock.h"
#include "hilsim/rt/tick_loop.h"
#include "hilsim/rt/trace.h"

static uint64_t stall_seq = UINT64_MAX;
static int64_t stall_ns;

static void burn(int64_t ns)
{
    int64_t end = hs_rt_now_ns() + ns;
    while (hs_rt_now_ns() < end)
        ;
}

static int inputs(void *ctx, const struct hs_tick_info *t)
{
    burn(2000 + (int64_t)(t->tick % 7) * 300);
    if (t->seq == stall_seq)
        hs_rt_sleep_until(hs_rt_now_ns() + stall_ns);
    return 0;
}

static int actuation(void *ctx, const struct hs_tick_info *t)
{
    burn(1000);
    return 0;
}

static int physics(void *ctx, const struct hs_tick_info *t)
{
    burn(20000 + (int64_t)(t->tick % 13) * 1000);
    return 0;
}

static int sensors(void *ctx, const struct hs_tick_info *t)
{
    burn(3000);
    return 0;
}

static int outputs(void *ctx, const struct hs_tick_info *t)
{
    const uint8_t frame[8] = {(uint8_t)t->tick, 1, 2, 3, 4, 5, 6, 7};
    HS_TRACE_CAN_FRAME(t->tick, 1, 0, 0x141u, frame, 8u);
    burn(1500);
    return 0;
}

int main(int argc, char **argv)
{
    struct hs_tick_config cfg = {
        .period_ns = argc > 2 ? atoll(argv[2]) : 1000000,
        .policy = HS_OVERRUN_CATCH_UP,
        .max_ticks = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000,
    };
    if (argc > 3 && hs_overrun_policy_parse(argv[3], &cfg.policy) < 0) {
        fprintf(stderr, "trace_demo: unknown policy '%s'\n", argv[3]);
        return 2;
    }
    if (argc > 5) {
        stall_seq = strtoull(argv[4], NULL, 10);
        stall_ns = atoll(argv[5]);
    }
    struct hs_rt_opts rt = HS_RT_OPTS_DEFAULT;
    rt.priority = 10;
    const struct hs_tick_ops ops = {.inputs = inputs,
                                    .actuation = actuation,
                                    .physics = physics,
                                    .sensors = sensors,
                                    .outputs = outputs};
    struct hs_tick_loop *loop = NULL;
    struct hs_diag d = {0};
    if (hs_tick_loop_create(&cfg, &rt, &ops, NULL, &loop, &d) < 0) {
        char msg[600];
        hs_diag_format(&d, msg, sizeof msg);
        fprintf(stderr, "trace_demo: %s\n", msg);
        return 2;
    }
    int r = hs_tick_loop_start(loop);
    if (r == 0)
        r = hs_tick_loop_join(loop);
    if (r < 0) {
        fprintf(stderr, "trace_demo: loop failed: %d\n", r);
        hs_tick_loop_destroy(loop);
        return 1;
    }
    json_t *j = hs_report_stats_json(hs_tick_loop_stats(loop));
    if (!j || json_dumpf(j, stdout, JSON_REAL_PRECISION(HS_REPORT_JSON_PRECISION)) != 0) {
        fprintf(stderr, "trace_demo: cannot write the stats\n");
        json_decref(j);
        hs_tick_loop_destroy(loop);
        return 1;
    }
    json_decref(j);
    fputc('\n', stdout);
    static char buf[16384];
    hs_rt_stats_format_text(hs_tick_loop_stats(loop), buf, sizeof buf);
    fputs(buf, stderr);
    hs_tick_loop_destroy(loop);
    return 0;
}
