#ifndef HS_SERVICE_SCENARIO_ATTACH_H
#define HS_SERVICE_SCENARIO_ATTACH_H

#include <stdio.h>

#include "hilsim/bench.h"
#include "hilsim/scenario.h"

/* init only: parse, bind and attach (the bench owns it then). 0, or a negative errno with d
 * naming file:line:column (-EINVAL: the file is at fault). */
int hs__scenario_attach(struct hs_bench *b, const char *path, struct hs_scenario **ret,
                        struct hs_diag *d);
/* After the run: finish, summary to out, the files asked for (NULL: none). HS_EXIT_OK when
 * every expectation passed, HS_EXIT_SCENARIO_FAIL when one failed, HS_EXIT_FAILURE when a
 * file could not be written. */
int hs__scenario_report(struct hs_scenario *s, const char *junit, const char *json, FILE *out);

#endif
