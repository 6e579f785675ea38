/* SIGHUP: re-read the bench config. What can change live (budgets) is applied; what cannot
 * (models, physics, period and RT settings, actuators, sensors, buses, shm) is refused with a
 * logged reason, and the loop is not disturbed either way. Runs on the supervisor thread. */
#ifndef HS_CLI_RELOAD_H
#define HS_CLI_RELOAD_H

#include "hilsim/config.h"

struct hs_runner;

void hs__runner_reload(struct hs_runner *r);
/* Names of the sections that differ in ways that cannot be applied live, comma-separated into
 * buf ("" when none). Pure, for tests. */
void hs__config_frozen_diff(const struct hs_config *a, const struct hs_config *b, char *buf,
                            unsigned long size);

#endif
