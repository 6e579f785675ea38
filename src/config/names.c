/* Enum spellings as written in the config file; index = enum value. */
#include "cfg_internal.h"

const char *const hs__names_solver[] = {"quick", "standard", NULL};
const char *const hs__names_overrun[] = {"skip", "catch_up", "stop", NULL};
const char *const hs__names_leaky[] = {"hold", "stop", NULL};
const char *const hs__names_sync_source[] = {"none", "can", "shm", NULL};
const char *const hs__names_lockstep_source[] = {"auto", "shm", "can_frame", "can_commands", NULL};
const char *const hs__names_controller[] = {"none", "pd_hold", "trajectory", NULL};
const char *const hs__names_mode[] = {"torque", "current", "velocity", "position", NULL};
const char *const hs__names_mesh_collision[] = {"convex", "exact", "box", "auto", NULL};
const char *const hs__names_record_compression[] = {"zstd", "none", NULL};
const char *const hs__names_model_sensor[] = {"accel", "gyro", "force", NULL};
const char *const hs__names_safe[] = {"zero_torque", "brake", "hold", NULL};
const char *const hs__names_source[] = {"auto", "controller", "can", "shm", NULL};
const char *const hs__names_encoder_mode[] = {"absolute", "incremental", NULL};
const char *const hs__names_send_queue[] = {"drop", "keep_latest", NULL};
const char *const hs__names_can_replies[] = {"immediate", "tick", NULL};
#define PROTOCOL_NAME(name, NAME) #name,
const char *const hs__names_protocol[] = {HS_CAN_PROTOCOLS(PROTOCOL_NAME) NULL};
#undef PROTOCOL_NAME
const char *const hs__names_tx_schedule[] = {"cyclic", "on_receive", "on_request", NULL};
const char *const hs__names_ref_kind[] = {"joint", "sensor", NULL};
const char *const hs__names_quantity[] = {"position_setpoint",
                                          "velocity_setpoint",
                                          "torque_setpoint",
                                          "current_setpoint",
                                          "kp",
                                          "kd",
                                          "enable",
                                          "position",
                                          "velocity",
                                          "torque",
                                          "current",
                                          "encoder_counts",
                                          "accel_x",
                                          "accel_y",
                                          "accel_z",
                                          "gyro_x",
                                          "gyro_y",
                                          "gyro_z",
                                          "force_x",
                                          "force_y",
                                          "force_z",
                                          "torque_x",
                                          "torque_y",
                                          "torque_z",
                                          "<value>", /* never parsed: see hs__cfg_parse_ref */
                                          NULL};

_Static_assert(sizeof hs__names_quantity / sizeof hs__names_quantity[0] == HS_CFG_QUANTITY_MAX + 1,
               "quantity names");
_Static_assert(sizeof hs__names_source / sizeof hs__names_source[0] ==
                   HS_CFG_COMMAND_SOURCE_MAX + 1,
               "source names");
_Static_assert(sizeof hs__names_protocol / sizeof hs__names_protocol[0] ==
                   HS_CFG_CAN_PROTOCOL_MAX + 1,
               "protocol names");

const char *hs_cfg_command_source_name(enum hs_cfg_command_source s)
{
    return (unsigned)s < HS_CFG_COMMAND_SOURCE_MAX ? hs__names_source[s] : NULL;
}

const char *hs_cfg_can_protocol_name(enum hs_cfg_can_protocol p)
{
    return (unsigned)p < HS_CFG_CAN_PROTOCOL_MAX ? hs__names_protocol[p] : NULL;
}

const char *hs_cfg_quantity_name(enum hs_cfg_quantity q)
{
    return (unsigned)q < HS_CFG_QUANTITY_MAX ? hs__names_quantity[q] : NULL;
}
