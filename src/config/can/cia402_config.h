/* The CiA 402 drive's config section, can.nodes[].cia402 (documented in
 * drivers/can/cia402/README.md). */
#ifndef HS_CAN_CIA402_CONFIG_H
#define HS_CAN_CIA402_CONFIG_H

#include "hilsim/config.h"

struct hs_cfg_cia402 {
    uint32_t counts_per_rev;                /* position increments per joint revolution */
    double rated_torque_nm;                 /* 0x6076: torques are per mille of this */
    double rated_current_a;                 /* 0x6075 */
    double torque_constant_nm_a;            /* joint N·m per A; NAN: the joint's Kt x gear x eta */
    double max_torque_permille;             /* 0x6072 default */
    double position_kp_nm_rad;              /* the drive's position loop */
    double velocity_kd_nm_s_rad;            /* the drive's velocity loop, proportional */
    double velocity_ki_nm_rad;              /* the drive's velocity loop, integral */
    uint32_t heartbeat_ms;                  /* 0x1017 default; 0: off */
    uint32_t boot_time_ms;                  /* reset node to boot-up message */
    uint32_t following_error_window_counts; /* 0x6065 default, increments */
    uint32_t following_error_timeout_ms;    /* 0x6066 default */
    char *eds; /* EDS/DCF with object dictionary defaults (absolute path, owned), or NULL */
};

_Static_assert(sizeof(struct hs_cfg_cia402) <= HS_CFG_PROTO_SECTION_MAX,
               "cia402 section too large");

static inline const struct hs_cfg_cia402 *hs_cfg_cia402(const struct hs_cfg_node *n)
{
    return (const struct hs_cfg_cia402 *)(const void *)n->proto[HS_CFG_PROTO_CIA402].bytes;
}

#endif
