/* ODrive "CAN Simple" (firmware 0.5.x, the protocol of odrive-cansimple.dbc) node.
 * 11-bit ID = node_id << 5 | cmd_id; little-endian; floats IEEE-754 single; positions in
 * turns, velocities in turns/s (converted to rad at the joint command). */
#ifndef HILSIM_CAN_ODRIVE_H
#define HILSIM_CAN_ODRIVE_H

#include "hilsim/can_node.h"
#include "hilsim/diag.h"

enum hs_odrive_cmd {
    HS_ODRIVE_HEARTBEAT = 0x001,
    HS_ODRIVE_ESTOP = 0x002,
    HS_ODRIVE_GET_MOTOR_ERROR = 0x003,
    HS_ODRIVE_GET_ENCODER_ERROR = 0x004,
    HS_ODRIVE_GET_SENSORLESS_ERROR = 0x005,
    HS_ODRIVE_SET_AXIS_NODE_ID = 0x006,
    HS_ODRIVE_SET_AXIS_STATE = 0x007,
    HS_ODRIVE_GET_ENCODER_ESTIMATES = 0x009,
    HS_ODRIVE_GET_ENCODER_COUNT = 0x00A,
    HS_ODRIVE_SET_CONTROLLER_MODE = 0x00B,
    HS_ODRIVE_SET_INPUT_POS = 0x00C,
    HS_ODRIVE_SET_INPUT_VEL = 0x00D,
    HS_ODRIVE_SET_INPUT_TORQUE = 0x00E,
    HS_ODRIVE_SET_LIMITS = 0x00F,
    HS_ODRIVE_GET_IQ = 0x014,
    HS_ODRIVE_GET_SENSORLESS_ESTIMATES = 0x015,
    HS_ODRIVE_REBOOT = 0x016,
    HS_ODRIVE_GET_VBUS_VOLTAGE = 0x017,
    HS_ODRIVE_CLEAR_ERRORS = 0x018,
    HS_ODRIVE_CMD_MAX = 0x020
};

enum {
    HS_ODRIVE_STATE_IDLE = 1,
    HS_ODRIVE_STATE_CLOSED_LOOP = 8,
};

/* Axis error bits (firmware 0.5.x Axis::Error) */
enum {
    HS_ODRIVE_ERROR_INVALID_STATE = 0x00000001,
    HS_ODRIVE_ERROR_CONTROLLER_FAILED = 0x00000200, /* the controller error is set */
    HS_ODRIVE_ERROR_WATCHDOG_TIMER_EXPIRED = 0x00000800,
    HS_ODRIVE_ERROR_ESTOP_REQUESTED = 0x00004000,
};

/* Controller error bits (firmware 0.5.x Controller::Error) */
enum {
    HS_ODRIVE_CONTROLLER_ERROR_OVERSPEED = 0x00000001,
};

enum hs_odrive_control_mode {
    HS_ODRIVE_CONTROL_VOLTAGE = 0, /* not simulated: refused as a bad frame */
    HS_ODRIVE_CONTROL_TORQUE = 1,
    HS_ODRIVE_CONTROL_VELOCITY = 2,
    HS_ODRIVE_CONTROL_POSITION = 3,
    HS_ODRIVE_CONTROL_MODE_MAX
};

struct hs_odrive_config {
    uint8_t node_id;                    /* 0..63 */
    int64_t heartbeat_period_ns;        /* 0: off; firmware default 100 ms */
    int64_t encoder_period_ns;          /* cyclic Get_Encoder_Estimates; 0: off; default 10 ms */
    int64_t watchdog_timeout_ns;        /* 0: watchdog disabled (firmware default) */
    double torque_constant_nm_a;        /* for Get_Iq and the current limit */
    double pos_gain;                    /* (turn/s)/turn, default 20 */
    double vel_gain_nm_s_turn;          /* N*m/(turn/s), default 1/6 */
    double vel_integrator_gain_nm_turn; /* N*m/(turn/s * s), default 1/3 */
    double vel_limit_turn_s;    /* clamps the velocity set point, default 2 (Set_Limits too) */
    double vel_limit_tolerance; /* overspeed error above this x vel_limit; 0 = off; 1.2 */
    bool enable_vel_limit;      /* default true */
    bool enable_torque_mode_vel_limit; /* torque mode keeps |vel| <= vel_limit; default true */
    double current_limit_a;            /* torque limit = current_limit * torque constant */
    double vbus_v;                     /* used when the joint state has no vbus_v */
    uint32_t encoder_cpr;              /* Get_Encoder_Count, default 8192 */
    enum hs_odrive_control_mode control_mode; /* at boot, default POSITION */
};

/* Firmware defaults (0.5.x) with the given node id. Init only. */
void hs_odrive_config_init(struct hs_odrive_config *cfg, uint8_t node_id);

struct hs_odrive_node {
    struct hs_can_node base;
    struct hs_odrive_config cfg;
    uint8_t axis_state;
    uint32_t axis_error;
    uint32_t controller_error; /* behind HS_ODRIVE_ERROR_CONTROLLER_FAILED */
    enum hs_odrive_control_mode control_mode;
    uint32_t input_mode;
    double input_pos_turn, input_vel_turn_s, input_torque_nm;
    double vel_limit_turn_s, current_limit_a;
    uint32_t rtr_pending; /* bit per cmd_id awaiting an answer */
    int64_t last_feed_ns; /* watchdog */
    int64_t last_heartbeat_ns, last_encoder_ns;
    bool started;             /* first poll seen: cyclic timers run from there */
    double last_q_turn;       /* from the last poll, for entering closed loop without a jump */
    double vel_integrator_nm; /* the velocity loop's integral term, motor side */
    int64_t last_poll_ns;
};

/* init only: validates cfg. */
int hs_odrive_node_init(struct hs_odrive_node *node, const struct hs_odrive_config *cfg,
                        struct hs_diag *d);
/* RT-safe: the axis detects an error (axis error bits, firmware 0.5.x Axis::Error): the bits
 * latch into the heartbeat's axis error and the axis drops to idle, as set by the firmware
 * itself; Clear_Errors clears them and closed loop needs a new Set_Axis_State. */
void hs_odrive_node_raise_error(struct hs_odrive_node *node, uint32_t axis_error);

/* RT-safe helpers for building and reading frames (also used by tests and tools): the one
 * place that knows CAN Simple's addressing. */
static inline uint32_t hs_odrive_can_id(uint8_t node_id, enum hs_odrive_cmd cmd)
{
    return (uint32_t)node_id << 5 | (uint32_t)cmd;
}
/* The ID bits that name the node: node n owns IDs n<<5 .. n<<5|31. */
#define HS_ODRIVE_NODE_MASK 0x7E0u
/* The node a standard ID addresses (the bits above the command). */
static inline uint32_t hs_odrive_node_of(uint32_t can_id)
{
    return can_id >> 5;
}
/* The command (cmd_id, 0..31) a standard ID carries. */
static inline unsigned hs_odrive_cmd_of(uint32_t can_id)
{
    return can_id & 0x1F;
}
void hs_odrive_put_f32(uint8_t *p, float v);
float hs_odrive_get_f32(const uint8_t *p);
void hs_odrive_put_u32(uint8_t *p, uint32_t v);
uint32_t hs_odrive_get_u32(const uint8_t *p);

#endif
