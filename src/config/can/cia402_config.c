/* The config side of CiA 402 drives: the cia402 section's keys, defaults and the IDs a node
 * owns. Compiled into hs_config (see drivers/can/README.md). */
#include <math.h>
#include <stdlib.h>

#include "cia402_config.h"
#include "cia402/cia402_defaults.h"

#include "cfg_can_proto.h"
#include "cfg_schema.h"

#define C4 struct hs_cfg_cia402
static const struct hs__cfg_field cia402_f[] = {
    U32("counts_per_rev", C4, counts_per_rev, 1, 1 << 30, 0),
    DBL("rated_torque_nm", C4, rated_torque_nm, 0, 4e6, HS__F_MIN_OPEN),
    DBL("rated_current_a", C4, rated_current_a, 0, 4e6, HS__F_MIN_OPEN),
    DBL("torque_constant_nm_a", C4, torque_constant_nm_a, 0, 1e3, HS__F_MIN_OPEN | HS__F_NAN_UNSET),
    DBL("max_torque_permille", C4, max_torque_permille, 0, 65535, 0),
    DBL("position_kp_nm_rad", C4, position_kp_nm_rad, 0, 1e7, 0),
    DBL("velocity_kd_nm_s_rad", C4, velocity_kd_nm_s_rad, 0, 1e6, 0),
    DBL("velocity_ki_nm_rad", C4, velocity_ki_nm_rad, 0, 1e7, 0),
    U32("heartbeat_ms", C4, heartbeat_ms, 0, 65535, 0),
    U32("boot_time_ms", C4, boot_time_ms, 0, 10000, 0),
    U32("following_error_window_counts", C4, following_error_window_counts, 0, 0xFFFFFFFFu, 0),
    U32("following_error_timeout_ms", C4, following_error_timeout_ms, 0, 65535, 0),
    PATH("eds", C4, eds, 0),
    RENAMED("following_error_window", "following_error_window_counts"),
};
#undef C4
TABLE(hs__can_cia402_section, cia402_f, NULL);

/* The library's defaults (hs_cia402_config_init), so a section with no keys is that drive. */
static void cia402_defaults(void *section)
{
    *(struct hs_cfg_cia402 *)section = (struct hs_cfg_cia402){
        .counts_per_rev = HS_CIA402_DEFAULT_COUNTS_PER_REV,
        .rated_torque_nm = HS_CIA402_DEFAULT_RATED_TORQUE_NM,
        .rated_current_a = HS_CIA402_DEFAULT_RATED_CURRENT_A,
        .torque_constant_nm_a = NAN, /* the joint's, else HS_CIA402_DEFAULT_TORQUE_CONSTANT */
        .max_torque_permille = HS_CIA402_DEFAULT_MAX_TORQUE_PERMILLE,
        .position_kp_nm_rad = HS_CIA402_DEFAULT_POSITION_KP_NM_RAD,
        .velocity_kd_nm_s_rad = HS_CIA402_DEFAULT_VELOCITY_KD_NM_S_RAD,
        .velocity_ki_nm_rad = HS_CIA402_DEFAULT_VELOCITY_KI_NM_RAD,
        .heartbeat_ms = HS_CIA402_DEFAULT_HEARTBEAT_MS,
        .boot_time_ms = HS_CIA402_DEFAULT_BOOT_TIME_MS,
        .following_error_window_counts = HS_CIA402_DEFAULT_FOLLOWING_ERROR_WINDOW_COUNTS,
        .following_error_timeout_ms = HS_CIA402_DEFAULT_FOLLOWING_ERROR_TIMEOUT_MS,
        .eds = NULL,
    };
}

static void cia402_release(void *section)
{
    struct hs_cfg_cia402 *s = section;
    free(s->eds);
    s->eds = NULL;
}

/* The frames only this node takes: its SDO requests and its RPDOs' default COB-IDs. NMT, SYNC
 * and heartbeats are shared by every CANopen node on the bus and not claimed. */
static unsigned cia402_claims(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    out[0] = (struct hs_cfg_can_claim){.id = 0x600 + n->id, .mask = 0x7FF};
    out[1] = (struct hs_cfg_can_claim){.id = 0x200 + n->id, .mask = 0x7FF};
    out[2] = (struct hs_cfg_can_claim){.id = 0x300 + n->id, .mask = 0x7FF};
    out[3] = (struct hs_cfg_can_claim){.id = 0x400 + n->id, .mask = 0x7FF};
    return 4;
}

/* What the node sends, on the predefined connection set: EMCY 0x080, TPDOs 0x180-0x480, SDO
 * responses 0x580 and the heartbeat 0x700, each + node-ID: every 11-bit ID whose low 7 bits
 * are the node-ID (hilsim sends none of the others: NMT, SYNC, RPDOs, SDO requests). */
static unsigned cia402_replies(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    out[0] = (struct hs_cfg_can_claim){.id = n->id, .mask = 0x1FFFF87Fu, .ext = false};
    return 1;
}

const struct hs__can_proto_cfg hs__can_cia402_cfg = {
    .section = &hs__can_cia402_section,
    .section_size = sizeof(struct hs_cfg_cia402),
    .defaults = cia402_defaults,
    .release = cia402_release,
    .single_joint = true,
    .id_min = 1,
    .id_max = 127, /* CANopen node-IDs */
    .claims = cia402_claims,
    .replies = cia402_replies,
};
