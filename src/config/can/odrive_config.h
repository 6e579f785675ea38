/* The ODrive node's config section, can.nodes[].odrive (documented in
 * drivers/can/odrive/README.md). */
#ifndef HS_CAN_ODRIVE_CONFIG_H
#define HS_CAN_ODRIVE_CONFIG_H

#include "hilsim/config.h"

struct hs_cfg_odrive {
    double heartbeat_period_s; /* 0 = off */
    double encoder_period_s;   /* Get_Encoder_Estimates cyclic period, 0 = on request only */
    double watchdog_timeout_s; /* 0 = off */
    double pos_gain;           /* (turn/s)/turn = 1/s: no unit in the name */
    double vel_gain_nm_s_turn; /* N*m/(turn/s) */
    double vel_integrator_gain_nm_turn; /* N*m/(turn/s * s) = N*m/turn */
    double vel_limit_turn_s;            /* motor side */
    double vel_limit_tolerance;         /* overspeed error above this x vel_limit_turn_s; 0 = off */
    bool enable_vel_limit;
    bool enable_torque_mode_vel_limit;
};

_Static_assert(sizeof(struct hs_cfg_odrive) <= HS_CFG_PROTO_SECTION_MAX,
               "odrive section too large");

static inline const struct hs_cfg_odrive *hs_cfg_odrive(const struct hs_cfg_node *n)
{
    return (const struct hs_cfg_odrive *)(const void *)n->proto[HS_CFG_PROTO_ODRIVE].bytes;
}

#endif
