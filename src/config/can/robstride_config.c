/* The config side of Robstride/CyberGear nodes: the robstride section's keys, defaults and the
 * IDs a node owns. Compiled into hs_config (see drivers/can/README.md). */
#include <math.h>

#include "robstride_config.h"
#include "robstride/robstride_defaults.h"

#include "cfg_can_proto.h"
#include "cfg_schema.h"

/* index = enum hs_rs_model (robstride.h) */
static const char *const model_names[] = {"cybergear", "rs00", "rs01", "rs02", "rs03",
                                          "rs04",      "rs05", "rs06", NULL};

#define RS struct hs_cfg_robstride
#define UNSET (HS__F_MIN_OPEN | HS__F_NAN_UNSET)
static const struct hs__cfg_field robstride_f[] = {
    F_("model", HS__K_ENUM, RS, model, .names = model_names),
    F_("host_id", HS__K_U32, RS, host_id, .min = 0, .max = 0xFF, .flags = HS__F_HEX),
    DBL("p_max", RS, p_max, 0, 1e4, UNSET),
    DBL("v_max", RS, v_max, 0, 1e4, UNSET),
    DBL("t_max", RS, t_max, 0, 1e5, UNSET),
    DBL("kp_max", RS, kp_max, 0, 1e5, UNSET),
    DBL("kd_max", RS, kd_max, 0, 1e4, UNSET),
    DBL("timeout_s", RS, timeout_s, 0, 10, 0),
    DBL("torque_constant_nm_a", RS, torque_constant_nm_a, 0, 1e3, UNSET),
    DBL("vbus_v", RS, vbus_v, 0, 1e3, 0),
    DBL("temperature_c", RS, temperature_c, -60, 300, 0),
};
#undef UNSET
#undef RS
TABLE(hs__can_robstride_section, robstride_f, NULL);

static void robstride_defaults(void *section)
{
    *(struct hs_cfg_robstride *)section = (struct hs_cfg_robstride){
        .model = HS_RS_DEFAULT_MODEL,
        .host_id = HS_RS_DEFAULT_HOST_ID,
        .p_max = NAN,
        .v_max = NAN,
        .t_max = NAN,
        .kp_max = NAN,
        .kd_max = NAN,
        .timeout_s = HS_RS_DEFAULT_TIMEOUT_S,
        .torque_constant_nm_a = NAN,
        .vbus_v = HS_RS_DEFAULT_VBUS_V,
        .temperature_c = HS_RS_DEFAULT_TEMPERATURE_C,
    };
}

/* Frames to the motor carry its CAN ID in ID bits 7-0 (29-bit IDs). */
static unsigned robstride_claims(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    out[0] = (struct hs_cfg_can_claim){.id = n->id, .mask = 0xFF, .ext = true};
    return 1;
}

/* The motor's frames carry its ID in bits 15-8 (feedback type 2, parameter reads 17, the
 * fault report 21, the device ID 0), its mode, faults or status above, the host in 7-0. */
static unsigned robstride_replies(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    static const uint32_t types[] = {2, 21, 17, 0};
    for (unsigned i = 0; i < 4; i++)
        out[i] = (struct hs_cfg_can_claim){
            .id = types[i] << 24 | n->id << 8, .mask = 0x1F00FF00u, .ext = true};
    return 4;
}

const struct hs__can_proto_cfg hs__can_robstride_cfg = {
    .section = &hs__can_robstride_section,
    .section_size = sizeof(struct hs_cfg_robstride),
    .defaults = robstride_defaults,
    .single_joint = true,
    .id_min = 0,
    .id_max = 127, /* the motor's CAN_ID parameter range */
    .claims = robstride_claims,
    .replies = robstride_replies,
};
