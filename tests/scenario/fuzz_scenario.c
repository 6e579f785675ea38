/* libFuzzer target: any input either fails cleanly with a diag that names file:line:column,
 * or parses into a spec whose every step has one action; a parsed spec is then bound to a
 * real bench (the bundled arm), where names that do not exist fail cleanly too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/scenario.h"

static struct hs_bench *arm_bench(void)
{
    static struct hs_bench *b;
    static const struct hs_config *cfg;
    if (b)
        return b;
    static const char yaml[] = "bench: {name: fuzz-scen}\n"
                               "models:\n"
                               "  - {name: arm, file: arm2.wrl}\n"
                               "  - {name: floor, file: floor.wrl, static: true}\n"
                               "sensors: {imu: {tip: {accel: TIP_ACCEL, gyro: TIP_GYRO}}}\n";
    struct hs_diag d;
    if (hs_config_load_buffer(yaml, sizeof yaml - 1, "arm.yaml", HS_TEST_SOURCE_DIR "/models", &cfg,
                              &d) < 0 ||
        hs_bench_create(cfg, &b, &d) < 0) {
        fprintf(stderr, "fuzz_scenario: %s\n", d.msg);
        abort();
    }
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_scenario_spec *spec = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    if (hs_scenario_parse((const char *)data, size, "fuzz.yaml", "/", &spec, &d) < 0) {
        if (!d.msg[0] || strcmp(d.file, "fuzz.yaml"))
            abort(); /* every failure must say why, and where */
        return 0;
    }
    struct hs_scenario *s = NULL;
    memset(&d, 0, sizeof d);
    int r = hs_scenario_compile(spec, arm_bench(), &s, &d);
    hs_scenario_spec_free(spec);
    if (r < 0) {
        if (!d.msg[0])
            abort();
        return 0;
    }
    /* a bound scenario reports without a run: the run could not decide it, so the verdict is
     * ERROR and every expectation is not decided, saying why */
    hs_scenario_finish(s);
    if (!hs_scenario_error(s, NULL) || hs_scenario_passed(s))
        abort();
    for (uint32_t i = 0; i < hs_scenario_expect_count(s); i++) {
        struct hs_scenario_result res;
        hs_scenario_result(s, i, &res);
        if (res.status != HS_SCENARIO_ERROR || !res.what || strncmp(res.why, "not decided: ", 13))
            abort();
    }
    hs_scenario_destroy(s);
    return 0;
}
