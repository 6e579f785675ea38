/* The Robstride/CyberGear node's config section, can.nodes[].robstride (documented in
 * drivers/can/robstride/README.md). */
#ifndef HS_CAN_ROBSTRIDE_CONFIG_H
#define HS_CAN_ROBSTRIDE_CONFIG_H

#include "hilsim/config.h"

struct hs_cfg_robstride {
    uint32_t model;   /* enum hs_rs_model */
    uint32_t host_id; /* 0..255: where answers go until a frame names another host */
    /* packing ranges; NAN: the model's */
    double p_max, v_max, t_max, kp_max, kd_max;
    double timeout_s;            /* CAN_TIMEOUT, 0 = off */
    double torque_constant_nm_a; /* output N·m per iq A; NAN: the joint's Kt x gear x eta */
    double vbus_v;               /* reported bus voltage */
    double temperature_c;        /* reported temperature */
};

_Static_assert(sizeof(struct hs_cfg_robstride) <= HS_CFG_PROTO_SECTION_MAX,
               "robstride section too large");

static inline const struct hs_cfg_robstride *hs_cfg_robstride(const struct hs_cfg_node *n)
{
    return (const struct hs_cfg_robstride *)(const void *)n->proto[HS_CFG_PROTO_ROBSTRIDE].bytes;
}

#endif
