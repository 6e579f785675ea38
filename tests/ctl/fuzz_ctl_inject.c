/* libFuzzer target: an injected step (hilsim ctl BENCH inject '{...}') on arbitrary bytes,
 * through the scenario's step parser and binding against a real bench (the bundled arm, with a
 * material to name). Every refusal names "live" and says why; an accepted step holds a slot,
 * starts and ticks on the bench like the socket thread and the tick would run it, and is then
 * cleared; no slot is ever lost. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/scenario_live.h"

static struct hs_bench *bench;
static struct hs_scenario_live *live;
static uint64_t tick;

static void open_bench(void)
{
    static const struct hs_config *cfg;
    static const char yaml[] = "bench: {name: fuzz-inject}\n"
                               "models:\n"
                               "  - {name: arm, file: arm2.wrl}\n"
                               "  - {name: floor, file: floor.wrl, static: true}\n"
                               "physics: {materials: {floor: {material: stone}}}\n"
                               "sensors: {imu: {tip: {accel: TIP_ACCEL, gyro: TIP_GYRO}}}\n";
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, sizeof yaml - 1, "arm.yaml", HS_TEST_SOURCE_DIR "/models", &cfg,
                              &d) < 0 ||
        hs_bench_create(cfg, &bench, &d) < 0 || hs_scenario_live_create(bench, 1, &live) < 0) {
        fprintf(stderr, "fuzz_ctl_inject: %s\n", d.msg);
        abort();
    }
}

static void run(uint32_t n)
{
    int64_t period = hs_bench_tick_period_ns(bench);
    for (uint32_t k = 0; k < n; k++) {
        tick++;
        hs_scenario_live_commands(live, (int64_t)tick * period);
        hs_scenario_live_substep(live);
        hs_scenario_live_readings(live);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!bench)
        open_bench();
    struct hs_diag d = {0};
    uint32_t slot;
    int r = hs_scenario_live_prepare(live, (const char *)data, size, NULL, &slot, &d);
    if (r < 0) {
        if (r == -ENOSPC || !d.msg[0] || strcmp(d.file, "live"))
            abort(); /* every refusal says why and where; the slots were all freed */
        return 0;
    }
    if (slot >= HS_SCENARIO_LIVE_SLOTS)
        abort();
    hs_scenario_live_start(live, slot);
    if (hs_scenario_live_running(live) != 1)
        abort();
    run(3); /* the world does not step here: the step's own code runs on the bench's state */
    hs_scenario_live_clear(live);
    run(1);
    if (hs_scenario_live_running(live) != 0 || hs_scenario_live_reap(live) != 1)
        abort();
    return 0;
}
