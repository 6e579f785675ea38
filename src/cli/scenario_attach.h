#ifndef HS_CLI_SCENARIO_ATTACH_H
#define HS_CLI_SCENARIO_ATTACH_H

#include <stdio.h>

#include "hilsim/bench.h"
#include "hilsim/scenario.h"

/* init only: parse, bind and attach (the bench owns it). 0 or an exit code, reported. */
int hs__scenario_attach(struct hs_bench *b, const char *path, struct hs_scenario **ret);
/* After the run: finish, summary to out, the files asked for (NULL: none). HS_EXIT_OK when
 * every expectation passed, HS_EXIT_SCENARIO_FAIL when one failed, HS_EXIT_FAILURE when a
 * file could not be written. */
int hs__scenario_report(struct hs_scenario *s, const char *junit, const char *json, FILE *out);

#endif
