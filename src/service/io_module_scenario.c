/* The scenario stage's service half: `--scenario FILE` binds the file to the bench after the
 * CAN and shm modules (so its stage sees the slots they wrote and their buses are open for
 * CAN faults), and a run without --duration lasts the scenario. The verdict is printed and
 * written by the command after the run (scenario_attach.c). */
#include <math.h>

#include "hilsim/service/io_module.h"
#include "hilsim/service/runner.h"
#include "hilsim/service/scenario_attach.h"

static int scenario_attach(struct hs_runner *r, void **ret_state, struct hs_diag *d)
{
    if (!r->o.scenario)
        return 0;
    int rc = hs__scenario_attach(r->bench, r->o.scenario, &r->scenario, d);
    if (rc < 0)
        return rc;
    if (!(r->o.duration_s > 0))
        r->tick.max_ticks = (uint64_t)llround(hs_scenario_duration_s(r->scenario) * 1e9 /
                                              (double)r->tick.period_ns);
    *ret_state = r->scenario;
    return 0;
}

const struct hs_service_io hs_service_io_scenario = {
    .name = "scenario",
    .attach = scenario_attach,
};
