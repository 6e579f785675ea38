/* The MIT node's config section, can.nodes[].mit (documented in drivers/can/mit/README.md). */
#ifndef HS_CAN_MIT_CONFIG_H
#define HS_CAN_MIT_CONFIG_H

#include "hilsim/config.h"

enum hs_cfg_mit_reply { HS_CFG_MIT_REPLY_CURRENT, HS_CFG_MIT_REPLY_TORQUE, HS_CFG_MIT_REPLY_MAX };
/* mini_cheetah: the 6-byte reply; ak: CubeMars AK's 8-byte reply (+ temperature, error code) */
enum hs_cfg_mit_format {
    HS_CFG_MIT_FORMAT_MINI_CHEETAH,
    HS_CFG_MIT_FORMAT_AK,
    HS_CFG_MIT_FORMAT_MAX
};

struct hs_cfg_mit {
    double p_min, p_max; /* rad */
    double v_min, v_max; /* rad/s */
    double kp_max;       /* N·m/rad (kp_min is 0) */
    double kd_max;       /* N·m·s/rad (kd_min is 0) */
    double t_min, t_max; /* N·m */
    double i_min, i_max; /* A, reply range when reply = current */
    enum hs_cfg_mit_reply reply;
    uint32_t reply_id; /* master CAN ID replies go to, 0 .. 0x7ff */
    double timeout_s;  /* no command for this long: output off, s; 0 = never */
    enum hs_cfg_mit_format reply_format;
    double temperature_c; /* ak: the reply's temperature when nothing models it, °C */
};

_Static_assert(sizeof(struct hs_cfg_mit) <= HS_CFG_PROTO_SECTION_MAX, "mit section too large");

static inline const struct hs_cfg_mit *hs_cfg_mit(const struct hs_cfg_node *n)
{
    return (const struct hs_cfg_mit *)(const void *)n->proto[HS_CFG_PROTO_MIT].bytes;
}

#endif
