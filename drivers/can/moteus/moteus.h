/* mjbots moteus: the CAN-FD register protocol (codec and node).
 *
 * Facts from mjbots/moteus docs/protocol/can.md and registers.md (the canonical subframe
 * reference is mjlib multiplex/format.h):
 * - CAN-FD, 16-bit ID: high byte the source (bit 7 set: reply requested), low byte the
 *   destination servo ID (0..127); IDs above 0x7fff need a 29-bit frame, otherwise either.
 * - The payload is a run of subframes, little-endian, varuint counts (7 bits per byte, MSB =
 *   more, at most 5 bytes): write 0x00/04/08/0c (int8/int16/int32/float), read 0x10/14/18/1c,
 *   reply 0x20/24/28/2c (count in the 2 LSBs, or 0 and a varuint), write error 0x30 and read
 *   error 0x31 (register, error code), NOP 0x50 (also the padding to a valid FD length).
 * - Integer mappings per quantity (registers.md "Mappings"); the maximally negative integer, or
 *   NaN, means "unset".
 * - The mode register (0x000) must be written first in a command frame.
 * - The diagnostic stream ("tunnel", moteus_tool's channel): client data 0x40 and poll 0x42 in,
 *   server data 0x41 out (channel, length, bytes), as mjlib's multiplex micro_server frames it;
 *   the text protocol on it is docs/protocol/diagnostic.md's (`tel`, `conf`, `d stop`). */
#ifndef HS_CAN_MOTEUS_H
#define HS_CAN_MOTEUS_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/can_node.h"
#include "hilsim/diag.h"

enum hs_mt_width { HS_MT_INT8, HS_MT_INT16, HS_MT_INT32, HS_MT_FLOAT, HS_MT_WIDTH_MAX };

enum {
    HS_MT_WRITE = 0x00,
    HS_MT_READ = 0x10,
    HS_MT_REPLY = 0x20,
    HS_MT_WRITE_ERROR = 0x30,
    HS_MT_READ_ERROR = 0x31,
    HS_MT_STREAM_CLIENT_DATA = 0x40,
    HS_MT_STREAM_SERVER_DATA = 0x41,
    HS_MT_STREAM_CLIENT_POLL = 0x42,
    HS_MT_NOP = 0x50,
};

enum hs_mt_reg {
    HS_MT_R_MODE = 0x000,
    HS_MT_R_POSITION = 0x001,
    HS_MT_R_VELOCITY = 0x002,
    HS_MT_R_TORQUE = 0x003,
    HS_MT_R_Q_CURRENT = 0x004,
    HS_MT_R_D_CURRENT = 0x005,
    HS_MT_R_POWER = 0x007,
    HS_MT_R_MOTOR_TEMPERATURE = 0x00a,
    HS_MT_R_TRAJECTORY_COMPLETE = 0x00b,
    HS_MT_R_HOME_STATE = 0x00c,
    HS_MT_R_VOLTAGE = 0x00d,
    HS_MT_R_TEMPERATURE = 0x00e,
    HS_MT_R_FAULT = 0x00f,
    HS_MT_R_CMD_Q_CURRENT = 0x01c,
    HS_MT_R_CMD_POSITION = 0x020,
    HS_MT_R_CMD_VELOCITY = 0x021,
    HS_MT_R_CMD_FF_TORQUE = 0x022,
    HS_MT_R_CMD_KP_SCALE = 0x023,
    HS_MT_R_CMD_KD_SCALE = 0x024,
    HS_MT_R_CMD_MAX_TORQUE = 0x025,
    HS_MT_R_CMD_WATCHDOG = 0x027,
    HS_MT_R_CMD_VELOCITY_LIMIT = 0x028,
    HS_MT_R_CMD_ACCEL_LIMIT = 0x029,
    HS_MT_R_CONTROL_POSITION = 0x038,
    HS_MT_R_CONTROL_VELOCITY = 0x039,
    HS_MT_R_CONTROL_TORQUE = 0x03a,
    HS_MT_R_POSITION_ERROR = 0x03b,
    HS_MT_R_VELOCITY_ERROR = 0x03c,
    HS_MT_R_MODEL_NUMBER = 0x100,
    HS_MT_R_FIRMWARE_VERSION = 0x101,
    HS_MT_R_REGISTER_MAP_VERSION = 0x102,
    HS_MT_R_MULTIPLEX_ID = 0x110,
    HS_MT_R_SERIAL_NUMBER1 = 0x120,
    HS_MT_R_SERIAL_NUMBER2 = 0x121,
    HS_MT_R_SERIAL_NUMBER3 = 0x122,
};

/* The values hilsim reports as the firmware's identity (fw/moteus_hw.h, moteus_controller.cc). */
#define HS_MT_MODEL_NUMBER 0x0000
#define HS_MT_FIRMWARE_VERSION 0x010100
#define HS_MT_REGISTER_MAP_VERSION 5

enum hs_mt_mode {
    HS_MT_MODE_STOPPED = 0,
    HS_MT_MODE_FAULT = 1,
    HS_MT_MODE_CURRENT = 9,
    HS_MT_MODE_POSITION = 10,
    HS_MT_MODE_TIMEOUT = 11,
    HS_MT_MODE_ZERO_VELOCITY = 12,
    HS_MT_MODE_BRAKE = 15,
};

/* The quantity a register holds, for its integer mapping. */
enum hs_mt_quantity {
    HS_MT_Q_INT, /* mode, fault: the integer itself */
    HS_MT_Q_POSITION,
    HS_MT_Q_VELOCITY,
    HS_MT_Q_TORQUE,
    HS_MT_Q_CURRENT,
    HS_MT_Q_VOLTAGE,
    HS_MT_Q_TEMPERATURE,
    HS_MT_Q_TIME,
    HS_MT_Q_SCALE, /* kp/kd scale, PWM */
    HS_MT_Q_ACCEL,
    HS_MT_Q_POWER,
    HS_MT_Q_MAX
};

/* RT-safe codec. */
unsigned hs_mt_width_bytes(enum hs_mt_width w);
/* The value as the register's width and mapping carry it (NAN for "unset"). */
double hs_mt_decode(enum hs_mt_quantity q, enum hs_mt_width w, const uint8_t *p);
/* Writes the value, saturated to the width (NAN: the maximally negative integer). */
void hs_mt_encode(enum hs_mt_quantity q, enum hs_mt_width w, double v, uint8_t *p);
/* 0 and the bytes read, or -EBADMSG (past end, or more than 5 bytes). */
int hs_mt_varuint_get(const uint8_t *p, unsigned len, uint32_t *ret);
unsigned hs_mt_varuint_put(uint32_t v, uint8_t *p);
/* The smallest valid CAN-FD length >= n (n <= 64). */
unsigned hs_mt_fd_len(unsigned n);

/* The registers hilsim has, in one table: index, quantity, whether a host may write them.
 * RT-safe. -ENOENT for a register the node does not have. */
#define HS_MT_NREGS 35
int hs_mt_reg_index(uint32_t reg, enum hs_mt_quantity *ret_q, bool *ret_writable);

/* Error codes of error subframes (mjlib multiplex MicroServer::Server::WriteAction). */
#define HS_MT_ERR_UNKNOWN 1
#define HS_MT_ERR_NOT_WRITABLE 2

/* One frame to a servo, walked in order (RT-safe): reads (answered from a register table), write
 * errors, read errors (an unknown register in a read range: as on the firmware, the range is
 * answered by one read error and the rest of the frame is not processed) and diagnostic-stream
 * subframes. WRITE, when not NULL, applies each write and returns 0 or an error code; with NULL
 * writes are only checked (the reply thread's view). */
#define HS_MT_ITEMS_MAX 16
enum hs_mt_item_kind { HS_MT_I_READ, HS_MT_I_WERR, HS_MT_I_RERR, HS_MT_I_STREAM, HS_MT_I_MAX };
struct hs_mt_item {
    uint8_t kind, width;
    uint16_t count; /* read: registers; stream: the poll's maximum or the data's length */
    uint16_t reg;   /* read: the first register; errors: the register; stream: the channel */
    uint8_t code;   /* errors */
};
struct hs_mt_scan {
    struct hs_mt_item items[HS_MT_ITEMS_MAX];
    unsigned n;
    bool stream; /* the frame touches the diagnostic stream (answered with the tick) */
};
typedef int (*hs_mt_write_fn)(void *ctx, uint32_t reg, double v);
typedef void (*hs_mt_stream_fn)(void *ctx, uint32_t channel, const uint8_t *p, unsigned n);
/* 0, or -EBADMSG for a malformed frame (nothing to answer). */
int hs_mt_scan(const uint8_t *p, unsigned len, struct hs_mt_scan *ret, hs_mt_write_fn write,
               hs_mt_stream_fn stream, void *ctx);
/* The static part of a write's check: 0, or the error code. */
int hs_mt_write_check(uint32_t reg, double v);
/* Builds the reply to SCAN from REGS (the register table, by hs_mt_reg_index) into out (64
 * bytes); stream items take up to their maximum from POP (NULL: nothing). Returns the padded
 * length, 0 when there is nothing to say. */
typedef unsigned (*hs_mt_pop_fn)(void *ctx, uint8_t *out, unsigned max);
unsigned hs_mt_reply(const struct hs_mt_scan *scan, const double *regs, hs_mt_pop_fn pop, void *ctx,
                     uint8_t *out);

struct hs_mt_config {
    uint8_t servo_id;                    /* 0..127 */
    double kp_nm_rev;                    /* servo.pid_position.kp, N·m per revolution */
    double kd_nm_s_rev;                  /* servo.pid_position.kd, N·m·s per revolution */
    double max_torque_nm;                /* the system-wide maximum torque */
    double torque_constant_nm_a;         /* current mode: output torque per Q ampere */
    int64_t default_timeout_ns;          /* servo.default_timeout_s; 0: no watchdog */
    double default_velocity_limit_rev_s; /* servo.default_velocity_limit; NAN: none */
    double default_accel_limit_rev_s2;   /* servo.default_accel_limit; NAN: none */
    double max_velocity_rev_s;           /* servo.max_velocity */
    double voltage_v, temperature_c;
};

/* init only. */
void hs_mt_config_init(struct hs_mt_config *cfg, uint8_t servo_id);

#define HS_MT_DIAG_LINE 128 /* a command line on the diagnostic stream */
#define HS_MT_DIAG_OUT 2048 /* its output not yet polled */

struct hs_mt_diag {
    char line[HS_MT_DIAG_LINE];
    unsigned line_len;
    bool line_overflow;
    uint8_t out[HS_MT_DIAG_OUT];
    unsigned out_len, out_off;
};

/* The trajectory state (fw/bldc_servo_position.h's "control" position and velocity). */
struct hs_mt_control {
    bool valid; /* latched: set on entering position mode, kept across commands */
    double pos_rev, vel_rev_s, acc_rev_s2;
    bool done; /* register 0x00b */
};

struct hs_mt_node {
    struct hs_can_node base;
    struct hs_mt_config cfg;
    enum hs_mt_mode mode;
    uint8_t fault;
    /* the command registers (SI at the output: revolutions, N·m, s) */
    double cmd_pos_rev; /* NAN: none (velocity only, from the control position) */
    double cmd_vel_rev_s, cmd_ff_nm, kp_scale, kd_scale, cmd_max_torque_nm, cmd_q_a;
    double cmd_vel_limit, cmd_accel_limit; /* NAN: the defaults; negative: none */
    double watchdog_s;                     /* NAN: none; 0: the default */
    int64_t last_cmd_ns, last_poll_ns;
    struct hs_mt_control ctl;
    double regs[HS_MT_NREGS]; /* the register table of the last poll */
    /* the reply to build at the next poll */
    bool reply_owed;
    bool wrote;             /* the frame being walked wrote a register */
    bool replies_elsewhere; /* the reply thread answers frames without stream items */
    uint8_t reply_to;       /* the requester's source ID (7 bits) */
    struct hs_mt_scan scan;
    struct hs_mt_diag diag;
};

int hs_mt_node_init(struct hs_mt_node *node, const struct hs_mt_config *cfg, struct hs_diag *d);
/* RT-safe: a fault code (32..48): the servo goes to mode 1 until stopped. */
void hs_mt_node_fault(struct hs_mt_node *node, uint8_t code);
/* RT-safe: the register table (node->regs) from JS without a tick's step: the state the reply
 * thread answers from before the first tick. */
void hs_mt_node_regs(struct hs_mt_node *node, const struct hs_can_joint_state *js);
/* RT-safe: the trajectory's advance over dt_s from the measured q (rev) and dq (rev/s), in
 * position mode (moteus_traj.c). */
void hs__mt_trajectory(struct hs_mt_node *n, double dt_s, double q_rev, double dq_rev_s);
/* RT-safe: one command line of the diagnostic stream, its answer appended to the output
 * (moteus_diag.c). */
void hs__mt_diag_line(struct hs_mt_node *n, const char *line, unsigned len);

#endif
