/* A robot's mass and linear momentum, summed over the ODE bodies of its links, for tests that
 * check a push or gravity against F t (tests/scenario, tests/ctl). */
#ifndef HS_TEST_BENCH_MOMENTUM_H
#define HS_TEST_BENCH_MOMENTUM_H

#include <stdint.h>

#include "hilsim/bench.h"

double bench_model_mass(struct hs_bench *bench, uint32_t model);            /* kg */
void bench_momentum(struct hs_bench *bench, uint32_t model, double ret[3]); /* N·s */

#endif
