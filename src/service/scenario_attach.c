/* --scenario for `hilsim run` and `hilsim sim`: load a scenario file against the bench, hand
 * it to the bench as its scenario stage, and after the run print the verdict and write the
 * JUnit XML and JSON files asked for. */
#include <stdio.h>
#include <string.h>

#include "hilsim/service/exit_codes.h"
#include "hilsim/service/scenario_attach.h"

#include "hilsim/log.h"

int hs__scenario_attach(struct hs_bench *b, const char *path, struct hs_scenario **ret,
                        struct hs_diag *d)
{
    struct hs_scenario_spec *spec = NULL;
    struct hs_scenario *s = NULL;
    int r = hs_scenario_parse_file(path, &spec, d);
    if (r == 0)
        r = hs_scenario_compile(spec, b, &s, d);
    hs_scenario_spec_free(spec);
    if (r < 0)
        return r;
    if ((r = hs_scenario_attach(s, b)) < 0) {
        hs_scenario_destroy(s);
        return hs_diag_set(d, r, path, 0, 0, "cannot attach the scenario: %s", strerror(-r));
    }
    *ret = s;
    return 0;
}

int hs__scenario_report(struct hs_scenario *s, const char *junit, const char *json, FILE *out)
{
    hs_scenario_finish(s);
    hs_scenario_write_summary(s, out);
    int r;
    if (junit && (r = hs_scenario_write_junit(s, junit)) < 0) {
        hs_log(HS_LOG_ERR, "%s: %s", junit, strerror(-r));
        return HS_EXIT_FAILURE;
    }
    if (json && (r = hs_scenario_write_json(s, json)) < 0) {
        hs_log(HS_LOG_ERR, "%s: %s", json, strerror(-r));
        return HS_EXIT_FAILURE;
    }
    return hs_scenario_passed(s) ? HS_EXIT_OK : HS_EXIT_SCENARIO_FAIL;
}
