/* The config side of ODrive nodes: the odrive section's keys, defaults and checks, and the IDs
 * a node owns. Compiled into hs_config (see drivers/can/README.md). */
#include "odrive_config.h"

#include "cfg_can_proto.h"
#include "cfg_schema.h"
#include "hilsim/can_odrive.h"
#include "odrive/odrive_defaults.h"

#define OD struct hs_cfg_odrive
static const struct hs__cfg_field odrive_f[] = {
    DBL("heartbeat_period_s", OD, heartbeat_period_s, 0, 10, 0),
    DBL("encoder_period_s", OD, encoder_period_s, 0, 10, 0),
    DBL("watchdog_timeout_s", OD, watchdog_timeout_s, 0, 10, 0),
    DBL("pos_gain", OD, pos_gain, 0, 1e6, 0),
    DBL("vel_gain_nm_s_turn", OD, vel_gain_nm_s_turn, 0, 1e6, 0),
    DBL("vel_integrator_gain_nm_turn", OD, vel_integrator_gain_nm_turn, 0, 1e6, 0),
    DBL("vel_limit_turn_s", OD, vel_limit_turn_s, 0, 1e6, 0),
    DBL("vel_limit_tolerance", OD, vel_limit_tolerance, 0, 100, 0),
    BOOL("enable_vel_limit", OD, enable_vel_limit),
    BOOL("enable_torque_mode_vel_limit", OD, enable_torque_mode_vel_limit),
    RENAMED("vel_gain", "vel_gain_nm_s_turn"),
    RENAMED("vel_integrator_gain", "vel_integrator_gain_nm_turn"),
    RENAMED("vel_limit", "vel_limit_turn_s"),
};
#undef OD
TABLE(hs__can_odrive_section, odrive_f, NULL);

static void odrive_defaults(void *section)
{
    *(struct hs_cfg_odrive *)section = (struct hs_cfg_odrive){
        .heartbeat_period_s = HS_ODRIVE_DEFAULT_HEARTBEAT_S,
        .encoder_period_s = HS_ODRIVE_DEFAULT_ENCODER_S,
        .watchdog_timeout_s = HS_ODRIVE_DEFAULT_WATCHDOG_S,
        .pos_gain = HS_ODRIVE_DEFAULT_POS_GAIN,
        .vel_gain_nm_s_turn = HS_ODRIVE_DEFAULT_VEL_GAIN,
        .vel_integrator_gain_nm_turn = HS_ODRIVE_DEFAULT_VEL_INTEGRATOR_GAIN,
        .vel_limit_turn_s = HS_ODRIVE_DEFAULT_VEL_LIMIT,
        .vel_limit_tolerance = HS_ODRIVE_DEFAULT_VEL_LIMIT_TOLERANCE,
        .enable_vel_limit = HS_ODRIVE_DEFAULT_ENABLE_VEL_LIMIT,
        .enable_torque_mode_vel_limit = HS_ODRIVE_DEFAULT_ENABLE_TORQUE_MODE_VEL_LIMIT,
    };
}

/* Cyclic messages go out with ticks: their periods must be whole ticks. */
static int odrive_validate(struct hs__ctx *c, uint32_t i)
{
    const struct hs_cfg_odrive *o = hs_cfg_odrive(&c->cfg->can.nodes[i]);
    double tick_s = (double)c->cfg->rt.period_ns * 1e-9;
    static const char *const keys[] = {"heartbeat_period_s", "encoder_period_s"};
    double v[] = {o->heartbeat_period_s, o->encoder_period_s};
    char p[160];
    for (int k = 0; k < 2; k++)
        if (v[k] > 0 && !hs__cfg_tick_multiple(v[k], tick_s)) {
            hs__cfg_pathf(p, sizeof p, "can.nodes[%u].odrive.%s", i, keys[k]);
            return hs__cfg_err_field(c, p, "%g s is not a whole number of ticks (%g s)", v[k],
                                     tick_s);
        }
    return 0;
}

/* CAN Simple: 11-bit ID = node_id << 5 | cmd_id, so a node owns id<<5 .. id<<5|31. */
static unsigned odrive_claims(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    out[0] = (struct hs_cfg_can_claim){
        .id = hs_odrive_can_id((uint8_t)n->id, 0), .mask = HS_ODRIVE_NODE_MASK, .ext = false};
    return 1;
}

const struct hs__can_proto_cfg hs__can_odrive_cfg = {
    .section = &hs__can_odrive_section,
    .section_size = sizeof(struct hs_cfg_odrive),
    .defaults = odrive_defaults,
    .single_joint = true,
    .id_min = 0,
    .id_max = 63,
    .validate = odrive_validate,
    .claims = odrive_claims,
    .replies = odrive_claims, /* answers and cyclic frames carry the node's own IDs */
};
