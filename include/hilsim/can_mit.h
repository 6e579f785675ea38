/* MIT mode (mini-cheetah motor controller, CubeMars AK "MIT mode") codec and node.
 * Command (DLC 8, big-endian bit packing): p 16 bits, v 12, kp 12, kd 12, t_ff 12, each
 * mapped linearly over [min, max] in 2^bits - 1 steps as the firmware's float_to_uint /
 * uint_to_float do (truncating, not rounding). Reply (DLC 6): id, p 16, v 12, i/torque 12;
 * CubeMars AK's DLC 8 reply adds the motor temperature and an error code.
 * Special frames FF x7 + FC enter motor mode, FD exit, FE zero the position. */
#ifndef HILSIM_CAN_MIT_H
#define HILSIM_CAN_MIT_H

#include "hilsim/can_node.h"
#include "hilsim/diag.h"

struct hs_mit_limits {
    double p_min, p_max;   /* rad */
    double v_min, v_max;   /* rad/s */
    double kp_min, kp_max; /* N*m/rad */
    double kd_min, kd_max; /* N*m*s/rad */
    double t_min, t_max;   /* N*m (command feed-forward and the reply's torque field) */
};

struct hs_mit_command {
    double p_rad, v_rad_s, kp, kd, t_ff_nm;
};

enum hs_mit_special {
    HS_MIT_NOT_SPECIAL = 0,
    HS_MIT_ENTER, /* ... FC */
    HS_MIT_EXIT,  /* ... FD */
    HS_MIT_ZERO,  /* ... FE */
    HS_MIT_SPECIAL_MAX
};

/* RT-safe codec. */
uint32_t hs_mit_float_to_uint(double x, double x_min, double x_max, unsigned bits);
double hs_mit_uint_to_float(uint32_t x, double x_min, double x_max, unsigned bits);
void hs_mit_pack_command(const struct hs_mit_limits *lim, const struct hs_mit_command *c,
                         uint8_t data[8]);
void hs_mit_unpack_command(const struct hs_mit_limits *lim, const uint8_t data[8],
                           struct hs_mit_command *ret);
void hs_mit_pack_reply(const struct hs_mit_limits *lim, uint8_t motor_id, double p_rad,
                       double v_rad_s, double t_nm, uint8_t data[6]);
/* CubeMars AK's 8-byte reply adds data[6] = motor temperature, int8 °C (rounded, clamped to
 * -128..127), and data[7] = error code (enum hs_mit_ak_error). */
void hs_mit_pack_reply_ak_status(double temp_c, uint8_t error, uint8_t data[8]);
int hs_mit_unpack_reply(const struct hs_mit_limits *lim, const uint8_t *data, unsigned len,
                        uint8_t *ret_id, double *ret_p, double *ret_v, double *ret_t);
enum hs_mit_special hs_mit_special_kind(const uint8_t *data, unsigned len);
void hs_mit_pack_special(enum hs_mit_special kind, uint8_t data[8]);

/* The AK reply's error codes (CubeMars AK manual, shared with its servo mode). */
enum hs_mit_ak_error {
    HS_MIT_AK_OK = 0,
    HS_MIT_AK_MOTOR_OVERTEMP = 1,
    HS_MIT_AK_OVERCURRENT = 2,
    HS_MIT_AK_OVERVOLTAGE = 3,
    HS_MIT_AK_UNDERVOLTAGE = 4,
    HS_MIT_AK_ENCODER = 5,
    HS_MIT_AK_MOSFET_OVERTEMP = 6,
    HS_MIT_AK_MOTOR_STALL = 7,
    HS_MIT_AK_ERROR_MAX
};

struct hs_mit_config {
    uint8_t motor_id;   /* command CAN ID (11-bit; the firmware uses 1..127) */
    uint16_t master_id; /* reply CAN ID */
    struct hs_mit_limits limits;
    int64_t timeout_ns;          /* firmware CAN_TIMEOUT: 0 disables */
    bool reply_current;          /* reply field 3 carries current (A) instead of torque */
    double torque_constant_nm_a; /* with reply_current: i = tau / kt */
    double i_min, i_max;         /* A, the reply's current range with reply_current; equal
                                  * (e.g. both 0): the t range is used */
    bool reply_ak;               /* 8-byte AK reply: + temperature and error code */
    double temperature_c;        /* reply_ak: reported when the joint state has none */
};

/* The defaults of drivers/can/mit/mit_defaults.h, the same the config's mit section has:
 * CubeMars AK80-6 ranges (P +-12.5 rad, V +-50 rad/s, KP 0..500, KD 0..5, T +-18 N*m), the
 * reply carries current (I +-40 A), timeout 0.1 s. Init only. */
void hs_mit_config_init(struct hs_mit_config *cfg, uint8_t motor_id, uint16_t master_id);

struct hs_mit_node {
    struct hs_can_node base;
    struct hs_mit_config cfg;
    bool motor_mode;         /* entered with FC, left with FD */
    bool timed_out;          /* command timeout reached: output off until the next command */
    uint8_t replies_pending; /* the firmware answers every frame addressed to it: replies
                              * owed at the next poll (saturates at 255) */
    bool zero_pending;       /* FE received: latch the current position as zero at poll */
    double zero_offset_rad;  /* joint q at the last zero; reported p = q - offset */
    int64_t last_rx_ns;
    struct hs_mit_command last; /* last decoded command */
    uint8_t error;              /* AK error code the replies carry (0: none) */
    bool fault;                 /* a fault's cause is present: output off, FC refused */
};

/* init only: validates cfg (ranges ordered, ids in range). */
int hs_mit_node_init(struct hs_mit_node *node, const struct hs_mit_config *cfg, struct hs_diag *d);
/* RT-safe: on: the board detected fault `error` (1..7): motor mode ends (output off) and the
 * AK reply carries the code; FC is refused while it lasts. off: the cause is gone: the code
 * clears, and the host's FC brings motor mode back. */
void hs_mit_node_fault(struct hs_mit_node *node, uint8_t error, bool on);

#endif
