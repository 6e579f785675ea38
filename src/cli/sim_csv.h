/* CSV log of an offline run: time, per joint q, dq, torque and encoder count, per robot the root
 * pose, per sensor its reading. Numbers use %.9g so two runs of the same input are
 * byte-identical. Not RT (stdio). */
#ifndef HS_CLI_SIM_CSV_H
#define HS_CLI_SIM_CSV_H

#include <stdio.h>

#include "hilsim/bench.h"

void hs__sim_csv_header(FILE *out, struct hs_bench *b);
void hs__sim_csv_row(FILE *out, struct hs_bench *b, double t_s);

#endif
