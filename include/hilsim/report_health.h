/* The world's solver health (hs_world_health_summary) in the run summary, report.txt and
 * report.json, beside the timing phases. Not RT: runs after the loop stops. */
#ifndef HILSIM_REPORT_HEALTH_H
#define HILSIM_REPORT_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "hilsim/world.h"

/* A table: per measure p50, p99, max and the steps over its budget. Returns like snprintf. */
int hs_report_health_text(const struct hs_world_health_summary *h, char *buf, size_t size);
/* {"steps", "weight_n", "penetration_m": {p50, p99, max, budget, steps_over_budget},
 *  "joint_error_m": {...}, "contact_force_jump_n": {...}}; a new reference or NULL. */
json_t *hs_report_health_json(const struct hs_world_health_summary *h);
/* True when some step went over a budget: the physics is not to be trusted there. */
bool hs_report_health_over_budget(const struct hs_world_health_summary *h);

#endif
