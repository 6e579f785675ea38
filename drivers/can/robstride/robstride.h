/* Robstride (RS00..RS06) and Xiaomi CyberGear actuators: the "private protocol" codec and node.
 *
 * Facts, from the vendor's CyberGear instruction manual ch. 4 "Driver communication protocol"
 * (English translation: github.com/belovictor/cybergear-docs instructionmanual.md) and checked
 * against kscalelabs/robstride src/protocol.rs (a host driver) for byte order and the read
 * reply's status byte:
 * - CAN 2.0B 1 Mbit/s, 29-bit IDs: bits 28-24 communication type, 23-8 "data area 2", 7-0 the
 *   target address; 8 data bytes.
 * - Host to motor: data area 2 bits 15-8 (ID bits 15-8) carry the host's CAN ID, except type 1
 *   where data area 2 is the feed-forward torque (u16 over [-T, T]).
 * - Motor to host: ID bits 15-8 the motor's CAN ID, 7-0 the host's.
 * - Quantities in the motion command and feedback: u16 big-endian, mapped linearly over
 *   [min, max] in 65535 steps, truncating (the manual's float_to_uint); temperature x10.
 * - Parameters (types 17/18): index u16 little-endian in bytes 0-1, value little-endian in
 *   bytes 4-7 (a u8 in byte 4); the read reply's ID bits 23-16 are 0 on success, 1 on error.
 * Ranges are per model (robstride_models.c). */
#ifndef HS_CAN_ROBSTRIDE_H
#define HS_CAN_ROBSTRIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/can_node.h"
#include "hilsim/diag.h"

enum hs_rs_type {
    HS_RS_GET_ID = 0,
    HS_RS_MOTION = 1,   /* operation control: p, v, kp, kd in data, torque in the ID */
    HS_RS_FEEDBACK = 2, /* motor -> host */
    HS_RS_ENABLE = 3,
    HS_RS_STOP = 4,     /* data[0] == 1: also clear faults */
    HS_RS_SET_ZERO = 6, /* data[0] == 1 */
    HS_RS_SET_ID = 7,
    HS_RS_PARAM_READ = 17,
    HS_RS_PARAM_WRITE = 18,
    HS_RS_FAULT = 21, /* motor -> host: fault and warning words */
    HS_RS_TYPE_MAX = 32
};

/* Feedback (type 2) ID bits 23-22: the motor's mode. */
enum hs_rs_mode { HS_RS_MODE_RESET = 0, HS_RS_MODE_CALI = 1, HS_RS_MODE_RUN = 2 };

/* Feedback (type 2) ID bits 21-16: fault flags (bit 0 here = ID bit 16). */
enum {
    HS_RS_FB_UNDERVOLTAGE = 1u << 0,
    HS_RS_FB_OVERCURRENT = 1u << 1,
    HS_RS_FB_OVERTEMP = 1u << 2,
    HS_RS_FB_MAG_ENCODER = 1u << 3,
    HS_RS_FB_HALL_ENCODER = 1u << 4,
    HS_RS_FB_UNCALIBRATED = 1u << 5,
};

/* Fault report (type 21) bytes 0-3: the fault word. */
enum {
    HS_RS_FAULT_OVERTEMP = 1u << 0,
    HS_RS_FAULT_DRIVER = 1u << 1,
    HS_RS_FAULT_UNDERVOLTAGE = 1u << 2,
    HS_RS_FAULT_OVERVOLTAGE = 1u << 3,
    HS_RS_FAULT_OVERCURRENT_B = 1u << 4,
    HS_RS_FAULT_OVERCURRENT_C = 1u << 5,
    HS_RS_FAULT_UNCALIBRATED = 1u << 7,
    HS_RS_FAULT_OVERLOAD = 0xFFu << 8,
    HS_RS_FAULT_OVERCURRENT_A = 1u << 16,
};

/* run_mode (parameter 0x7005). 1 is the CyberGear's position mode (loc_ref under limit_spd);
 * on the RS series it is PP (profile position: loc_ref under vel_max and acc_set), and 5 is the
 * RS series' CSP (the CyberGear's position law). */
enum hs_rs_run_mode {
    HS_RS_RUN_OPERATION = 0, /* the motion command (MIT-like) */
    HS_RS_RUN_POSITION = 1,  /* CyberGear: loc_ref under limit_spd; RS: PP */
    HS_RS_RUN_SPEED = 2,     /* spd_ref under limit_cur (RS: ramped at acc_rad) */
    HS_RS_RUN_CURRENT = 3,   /* iq_ref */
    HS_RS_RUN_CSP = 5,       /* RS series: loc_ref under limit_spd */
    HS_RS_RUN_MODE_MAX
};

enum hs_rs_param {
    HS_RS_P_MECH_OFFSET = 0x2005,  /* float rad, read only here: the zero offset */
    HS_RS_P_VBUS_3 = 0x300C,       /* float V */
    HS_RS_P_MOD_POS = 0x3015,      /* float rad, single turn */
    HS_RS_P_MECH_POS_3 = 0x3016,   /* float rad, multi-turn */
    HS_RS_P_MECH_VEL_3 = 0x3017,   /* float rad/s */
    HS_RS_P_IQF_3 = 0x301E,        /* float A */
    HS_RS_P_FAULT_STA = 0x3022,    /* u32, the fault word */
    HS_RS_P_TORQUE_FDB = 0x302C,   /* float N·m */
    HS_RS_P_RUN_MODE = 0x7005,     /* u8 */
    HS_RS_P_IQ_REF = 0x7006,       /* float A */
    HS_RS_P_SPD_REF = 0x700A,      /* float rad/s */
    HS_RS_P_LIMIT_TORQUE = 0x700B, /* float N·m */
    HS_RS_P_CUR_KP = 0x7010,
    HS_RS_P_CUR_KI = 0x7011,
    HS_RS_P_CUR_FILT_GAIN = 0x7014,
    HS_RS_P_LOC_REF = 0x7016,   /* float rad */
    HS_RS_P_LIMIT_SPD = 0x7017, /* float rad/s */
    HS_RS_P_LIMIT_CUR = 0x7018, /* float A */
    HS_RS_P_MECH_POS = 0x7019,  /* float rad, read only */
    HS_RS_P_IQF = 0x701A,       /* float A, read only */
    HS_RS_P_MECH_VEL = 0x701B,  /* float rad/s, read only */
    HS_RS_P_VBUS = 0x701C,      /* float V, read only */
    HS_RS_P_ROTATION = 0x701D,  /* int16 turns */
    HS_RS_P_LOC_KP = 0x701E,
    HS_RS_P_SPD_KP = 0x701F,
    HS_RS_P_SPD_KI = 0x7020,
    HS_RS_P_SPD_FILT_GAIN = 0x7021, /* RS series from here */
    HS_RS_P_ACC_RAD = 0x7022,       /* float rad/s², speed mode's ramp */
    HS_RS_P_VEL_MAX = 0x7024,       /* float rad/s, PP */
    HS_RS_P_ACC_SET = 0x7025,       /* float rad/s², PP */
    HS_RS_P_EPSCAN_TIME = 0x7026,   /* u16 */
    HS_RS_P_CAN_TIMEOUT = 0x7028,   /* u32, 20000 = 1 s */
    HS_RS_P_ZERO_STA = 0x7029,      /* u8 */
    HS_RS_P_DAMPER = 0x702A,        /* u8 */
    HS_RS_P_ADD_OFFSET = 0x702B,    /* float rad */
};

/* Packing ranges: p in [-p_max, p_max], v, t likewise; kp in [0, kp_max], kd in [0, kd_max]. */
struct hs_rs_limits {
    double p_max, v_max, t_max, kp_max, kd_max;
};

enum hs_rs_model {
    HS_RS_MODEL_CYBERGEAR,
    HS_RS_MODEL_RS00,
    HS_RS_MODEL_RS01,
    HS_RS_MODEL_RS02,
    HS_RS_MODEL_RS03,
    HS_RS_MODEL_RS04,
    HS_RS_MODEL_RS05,
    HS_RS_MODEL_RS06,
    HS_RS_MODEL_MAX
};

/* RT-safe. The model's packing ranges (robstride_models.c says where each number comes from). */
const struct hs_rs_limits *hs_rs_model_limits(enum hs_rs_model m);

/* RT-safe codec. */
static inline uint32_t hs_rs_can_id(enum hs_rs_type type, uint16_t data2, uint8_t target)
{
    return (uint32_t)type << 24 | (uint32_t)data2 << 8 | target;
}
static inline enum hs_rs_type hs_rs_id_type(uint32_t id)
{
    return (enum hs_rs_type)(id >> 24 & 0x1F);
}
uint16_t hs_rs_float_to_u16(double x, double x_min, double x_max);
double hs_rs_u16_to_float(uint16_t u, double x_min, double x_max);

struct hs_rs_motion {
    double p_rad, v_rad_s, kp, kd, t_nm;
};
/* Type 1 frame (ID and data) to a command. */
void hs_rs_unpack_motion(const struct hs_rs_limits *lim, uint32_t id, const uint8_t data[8],
                         struct hs_rs_motion *ret);
/* A type 1 frame's ID and data from a command (for tests and tools). */
uint32_t hs_rs_pack_motion(const struct hs_rs_limits *lim, uint8_t motor_id,
                           const struct hs_rs_motion *c, uint8_t data[8]);

struct hs_rs_feedback {
    uint8_t motor_id, host_id;
    enum hs_rs_mode mode;
    uint8_t faults; /* HS_RS_FB_* */
    double p_rad, v_rad_s, t_nm, temp_c;
};
/* Type 2 frame: ID and data. */
uint32_t hs_rs_pack_feedback(const struct hs_rs_limits *lim, const struct hs_rs_feedback *fb,
                             uint8_t data[8]);
/* 0, or -EBADMSG when id is not a type 2 ID. */
int hs_rs_unpack_feedback(const struct hs_rs_limits *lim, uint32_t id, const uint8_t data[8],
                          struct hs_rs_feedback *ret);

/* The firmware-default loop gains and limits of a model's parameter table
 * (robstride_params.c says where each number comes from). */
struct hs_rs_gains {
    float limit_spd, limit_cur, loc_kp, spd_kp, spd_ki, cur_kp, cur_ki, cur_filt_gain;
    float spd_filt_gain, acc_rad, vel_max, acc_set;
};

struct hs_rs_config {
    uint8_t motor_id;            /* CAN_ID, 0..127 */
    uint8_t host_id;             /* replies go here until a frame names another host */
    enum hs_rs_model model;      /* which parameter table (CyberGear or RS series) */
    struct hs_rs_limits limits;  /* the model's, or the config's overrides */
    struct hs_rs_gains gains;    /* the model's firmware defaults */
    int64_t timeout_ns;          /* CAN_TIMEOUT: silent this long while running: reset; 0 off */
    double torque_constant_nm_a; /* output torque per iq ampere (current mode, iqf) */
    double vbus_v;               /* reported when the joint state has none */
    double temp_c;               /* reported when the joint state has none */
    uint64_t mcu_uid;            /* the type 0 answer */
    int64_t loop_period_ns;      /* the loops' step: the bench's tick (physics advances by it);
                                  * 0: the time between polls */
};

/* Defaults for a model: host 0 (the manual's CAN_MASTER default), timeout off, 24 V, 25 °C
 * (robstride_defaults.h), the model's ranges and gains. Init only. */
void hs_rs_config_init(struct hs_rs_config *cfg, enum hs_rs_model model, uint8_t motor_id);
/* RT-safe: the model's firmware-default gains (robstride_params.c). */
const struct hs_rs_gains *hs_rs_model_gains(enum hs_rs_model m);

/* What a host can set and what the drive's protocol state is: the node's, and the reply
 * thread's own copy, both changed by hs_rs_regs_apply() from the same frames. */
struct hs_rs_regs {
    enum hs_rs_mode mode;
    enum hs_rs_run_mode run_mode;
    uint8_t host_id;     /* the last host heard */
    uint8_t faults;      /* HS_RS_FB_* as the feedback shows them */
    uint32_t fault_word; /* the type 21 fault word */
    uint32_t zeros;      /* set-zero requests taken */
    float iq_ref, spd_ref, limit_torque, cur_kp, cur_ki, cur_filt_gain, loc_ref, limit_spd;
    float limit_cur, loc_kp, spd_kp, spd_ki, spd_filt_gain, acc_rad, vel_max, acc_set, add_offset;
    uint32_t can_timeout; /* 20000 per second */
    uint16_t epscan_time;
    uint8_t zero_sta, damper;
};

/* What the parameter reads report from the plant (the node's last poll). */
struct hs_rs_measured {
    double q_rad; /* zero offset applied */
    double dq_rad_s, tau_nm, iq_a, vbus_v, temp_c, zero_offset_rad;
};

/* init only: the registers at power-up (reset mode, run_mode 0, the model's gains). */
void hs_rs_regs_init(struct hs_rs_regs *g, const struct hs_rs_config *cfg);

/* hs_rs_regs_apply effects */
enum {
    HS_RS_FX_COMMAND = 1u << 0, /* the joint's command changed (run, stop, a set point) */
    HS_RS_FX_ENABLED = 1u << 1, /* reset -> run: no stale set point */
    HS_RS_FX_ZERO = 1u << 2,    /* set the present angle as zero */
};

/* RT-safe: what frame f does to the registers of motor cfg->motor_id. Returns the answer's
 * type (HS_RS_FEEDBACK, HS_RS_PARAM_READ, HS_RS_GET_ID), or -ENOENT (not for it), -EBADMSG
 * (malformed), -EOPNOTSUPP (a type not simulated). *ret_effects: HS_RS_FX_*. */
int hs_rs_regs_apply(struct hs_rs_regs *g, const struct hs_rs_config *cfg,
                     const struct hs_can_frame *f, unsigned *ret_effects);
/* RT-safe: a parameter read's value bytes (bytes 4-7 of the answer); false: the model has no
 * such parameter (the answer's status 1, value 0). */
bool hs_rs_param_read(const struct hs_rs_regs *g, const struct hs_rs_config *cfg,
                      const struct hs_rs_measured *m, uint16_t index, uint8_t out[4]);
/* RT-safe: the answer of type `type` (to a read of `index`) with the registers and measurements
 * given. */
void hs_rs_build_answer(const struct hs_rs_regs *g, const struct hs_rs_config *cfg,
                        const struct hs_rs_measured *m, int type, uint16_t index,
                        struct hs_can_frame *out);

#define HS_RS_REPLY_MAX 16

struct hs_rs_reply {
    uint8_t type;   /* HS_RS_FEEDBACK, HS_RS_PARAM_READ or HS_RS_GET_ID */
    uint16_t index; /* PARAM_READ */
};

struct hs_rs_node {
    struct hs_can_node base;
    struct hs_rs_config cfg;
    struct hs_rs_regs regs;
    bool fault_report_due; /* a new fault: one type 21 frame at the next poll */
    struct hs_rs_motion motion;
    double zero_offset_rad;
    uint32_t zeros_applied; /* set-zero requests the polls applied */
    uint32_t events;        /* the node went to reset on its own (fault, timeout, stop) */
    bool timed_out;
    int64_t last_rx_ns, last_poll_ns;
    double spd_integral_a;           /* the speed loop's integrator */
    double spd_cmd_rad_s;            /* speed mode's ramped reference (acc_rad) */
    double pp_pos_rad, pp_vel_rad_s; /* PP's profile */
    bool loop_fresh;                 /* entering run: the loops start from the present state */
    struct hs_rs_reply replies[HS_RS_REPLY_MAX];
    unsigned nreplies;
    struct hs_rs_measured meas; /* from the last poll: parameter reads */
};

/* init only: validates cfg. */
int hs_rs_node_init(struct hs_rs_node *node, const struct hs_rs_config *cfg, struct hs_diag *d);
/* RT-safe: raise faults as the firmware would detect them (fault word bits, HS_RS_FAULT_*):
 * the output goes off (reset mode), the feedback shows them, one fault report goes out. */
void hs_rs_node_fault(struct hs_rs_node *node, uint32_t fault_word);
/* RT-safe: the output off for good (the bench's stop): reset mode. */
void hs_rs_node_stop(struct hs_rs_node *node);

/* The firmware's speed-loop rate is not published: spd_ki is taken as the integrator's gain per
 * sample of a 5 kHz loop (hilsim's choice, a quarter of a 20 kHz current loop; it integrates
 * once per tick at that rate). */
#define HS_RS_SPEED_LOOP_HZ 5000.0

#endif
