/* Packing ranges per model. The vendors publish them per model and the public sources differ,
 * which is why the config can override each one:
 * - CyberGear: the instruction manual's protocol tables (ch. 4.1.2/4.1.3): angle +-4pi rad,
 *   velocity +-30 rad/s, torque +-12 N·m, kp 0..500, kd 0..5 (its sample code uses +-12.5 rad
 *   for the angle; the tables are followed here).
 * - RS00..RS06: Seeed-Projects/RobStride_Control's per-model MIT scaling tables (the same
 *   numbers RobStride's Python samples carry): angle +-4pi for all; velocity 50, 44, 44, 50, 15,
 *   33, 20 rad/s; torque 17, 17, 17, 60, 120, 17, 60 N·m; kp 500, 500, 500, 5000, 5000, 500,
 *   5000; kd 5, 5, 5, 100, 100, 5, 100. kscalelabs/robstride gives RS00 as 33 rad/s, 14 N·m. */
#include "robstride.h"

#define FOUR_PI 12.566370614359172

static const struct hs_rs_limits models[HS_RS_MODEL_MAX] = {
    [HS_RS_MODEL_CYBERGEAR] = {FOUR_PI, 30, 12, 500, 5},
    [HS_RS_MODEL_RS00] = {FOUR_PI, 50, 17, 500, 5},
    [HS_RS_MODEL_RS01] = {FOUR_PI, 44, 17, 500, 5},
    [HS_RS_MODEL_RS02] = {FOUR_PI, 44, 17, 500, 5},
    [HS_RS_MODEL_RS03] = {FOUR_PI, 50, 60, 5000, 100},
    [HS_RS_MODEL_RS04] = {FOUR_PI, 15, 120, 5000, 100},
    [HS_RS_MODEL_RS05] = {FOUR_PI, 33, 17, 500, 5},
    [HS_RS_MODEL_RS06] = {FOUR_PI, 20, 60, 5000, 100},
};

const struct hs_rs_limits *hs_rs_model_limits(enum hs_rs_model m)
{
    return (unsigned)m < HS_RS_MODEL_MAX ? &models[m] : &models[HS_RS_MODEL_CYBERGEAR];
}
