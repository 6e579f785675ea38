/* The config side of moteus nodes: the moteus section, its defaults and checks (its bus must be
 * CAN FD), and the IDs a node owns. Compiled into hs_config (see drivers/can/README.md). */
#include <math.h>

#include "moteus_config.h"
#include "moteus/moteus_defaults.h"

#include "cfg_can_proto.h"
#include "cfg_schema.h"

#define MT struct hs_cfg_moteus
static const struct hs__cfg_field moteus_f[] = {
    DBL("kp_nm_rev", MT, kp_nm_rev, 0, 1e5, 0),
    DBL("kd_nm_s_rev", MT, kd_nm_s_rev, 0, 1e4, 0),
    DBL("max_torque_nm", MT, max_torque_nm, 0, 1e5, HS__F_MIN_OPEN),
    DBL("torque_constant_nm_a", MT, torque_constant_nm_a, 0, 1e3, HS__F_MIN_OPEN | HS__F_NAN_UNSET),
    DBL("default_timeout_s", MT, default_timeout_s, 0, 10, 0),
    DBL("default_velocity_limit_rev_s", MT, default_velocity_limit_rev_s, 0, 1e5,
        HS__F_MIN_OPEN | HS__F_NAN_UNSET),
    DBL("default_accel_limit_rev_s2", MT, default_accel_limit_rev_s2, 0, 1e6,
        HS__F_MIN_OPEN | HS__F_NAN_UNSET),
    DBL("max_velocity_rev_s", MT, max_velocity_rev_s, 0, 1e5, HS__F_MIN_OPEN),
    DBL("voltage_v", MT, voltage_v, 0, 1e3, 0),
    DBL("temperature_c", MT, temperature_c, -60, 300, 0),
    RENAMED("kp", "kp_nm_rev"),
    RENAMED("kd", "kd_nm_s_rev"),
};
#undef MT
TABLE(hs__can_moteus_section, moteus_f, NULL);

static void moteus_defaults(void *section)
{
    *(struct hs_cfg_moteus *)section = (struct hs_cfg_moteus){
        .kp_nm_rev = HS_MT_DEFAULT_KP_NM_REV,
        .kd_nm_s_rev = HS_MT_DEFAULT_KD_NM_S_REV,
        .max_torque_nm = HS_MT_DEFAULT_MAX_TORQUE_NM,
        .torque_constant_nm_a = NAN, /* the joint's; HS_MT_DEFAULT_TORQUE_CONSTANT_NM_A without */
        .default_timeout_s = HS_MT_DEFAULT_TIMEOUT_S,
        .default_velocity_limit_rev_s = HS_MT_DEFAULT_VELOCITY_LIMIT_REV_S,
        .default_accel_limit_rev_s2 = HS_MT_DEFAULT_ACCEL_LIMIT_REV_S2,
        .max_velocity_rev_s = HS_MT_DEFAULT_MAX_VELOCITY_REV_S,
        .voltage_v = HS_MT_DEFAULT_VOLTAGE_V,
        .temperature_c = HS_MT_DEFAULT_TEMPERATURE_C,
    };
}

/* moteus speaks CAN FD: its bus must be an FD bus. */
static int moteus_validate(struct hs__ctx *c, uint32_t i)
{
    const struct hs_cfg_can *can = &c->cfg->can;
    char p[64];
    if (!can->buses[can->nodes[i].bus_index].fd) {
        hs__cfg_pathf(p, sizeof p, "can.nodes[%u].protocol", i);
        return hs__cfg_err_field(c, p, "moteus needs a CAN FD bus (can.buses[%u].fd: true)",
                                 can->nodes[i].bus_index);
    }
    return 0;
}

/* The low byte of the 16-bit ID is the destination; 11-bit or 29-bit frames alike. */
static unsigned moteus_claims(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    out[0] = (struct hs_cfg_can_claim){.id = n->id, .mask = 0xFF, .ext = false};
    out[1] = (struct hs_cfg_can_claim){.id = n->id, .mask = 0xFF, .ext = true};
    return 2;
}

/* Replies: the servo is the source (high byte of the 16-bit ID, bit 15 clear), the requester
 * the destination (low byte). */
static unsigned moteus_replies(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    out[0] = (struct hs_cfg_can_claim){.id = n->id << 8, .mask = 0x1FFFFF00u, .ext = false};
    out[1] = (struct hs_cfg_can_claim){.id = n->id << 8, .mask = 0x1FFFFF00u, .ext = true};
    return 2;
}

const struct hs__can_proto_cfg hs__can_moteus_cfg = {
    .section = &hs__can_moteus_section,
    .section_size = sizeof(struct hs_cfg_moteus),
    .defaults = moteus_defaults,
    .single_joint = true,
    .id_min = 0,
    .id_max = 127,
    .validate = moteus_validate,
    .claims = moteus_claims,
    .replies = moteus_replies,
};
