#ifndef HS_SERVICE_SCENARIO_ATTACH_H
#define HS_SERVICE_SCENARIO_ATTACH_H

#include <stdio.h>

#include "hilsim/bench.h"
#include "hilsim/scenario.h"

/* init only: parse, bind and attach (the bench owns it then). 0, or a negative errno with d
 * naming file:line:column (-EINVAL: the file is at fault). */
int hs__scenario_attach(struct hs_bench *b, const char *path, struct hs_scenario **ret,
                        struct hs_diag *d);
/* Before the run: the verdict files asked for (NULL: none) can be written, so a run is not
 * wasted on a path found unwritable at its end. 0, or -EINVAL with d naming the file. */
int hs__scenario_check_outputs(const char *junit, const char *json, struct hs_diag *d);
/* After the run: finish, summary to out, the files asked for (NULL: none). HS_EXIT_OK when
 * every expectation passed, HS_EXIT_SCENARIO_FAIL when one failed, HS_EXIT_FAILURE when a
 * file could not be written or the verdict is ERROR (a plant fault, a SAFE HOLD, an early
 * stop: hs_scenario_error; the run's own status, e.g. 3 for a plant fault, comes first). */
int hs__scenario_report(struct hs_scenario *s, const char *junit, const char *json, FILE *out);

#endif
