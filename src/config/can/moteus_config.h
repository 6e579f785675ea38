/* The moteus node's config section, can.nodes[].moteus (drivers/can/moteus/README.md). */
#ifndef HS_CAN_MOTEUS_CONFIG_H
#define HS_CAN_MOTEUS_CONFIG_H

#include "hilsim/config.h"

struct hs_cfg_moteus {
    double kp_nm_rev;                    /* servo.pid_position.kp, N·m/rev */
    double kd_nm_s_rev;                  /* servo.pid_position.kd, N·m·s/rev */
    double max_torque_nm;                /* system-wide maximum torque */
    double torque_constant_nm_a;         /* NAN: the joint's Kt x gear x eta */
    double default_timeout_s;            /* servo.default_timeout_s, 0 = none */
    double default_velocity_limit_rev_s; /* servo.default_velocity_limit; NAN: none */
    double default_accel_limit_rev_s2;   /* servo.default_accel_limit; NAN: none */
    double max_velocity_rev_s;           /* servo.max_velocity */
    double voltage_v;                    /* reported */
    double temperature_c;                /* reported */
};

_Static_assert(sizeof(struct hs_cfg_moteus) <= HS_CFG_PROTO_SECTION_MAX,
               "moteus section too large");

static inline const struct hs_cfg_moteus *hs_cfg_moteus(const struct hs_cfg_node *n)
{
    return (const struct hs_cfg_moteus *)(const void *)n->proto[HS_CFG_PROTO_MOTEUS].bytes;
}

#endif
