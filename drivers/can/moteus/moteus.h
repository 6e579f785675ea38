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
 * - The mode register (0x000) must be written first in a command frame. */
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
    HS_MT_NOP = 0x50,
};

enum hs_mt_reg {
    HS_MT_R_MODE = 0x000,
    HS_MT_R_POSITION = 0x001,
    HS_MT_R_VELOCITY = 0x002,
    HS_MT_R_TORQUE = 0x003,
    HS_MT_R_Q_CURRENT = 0x004,
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
};

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

struct hs_mt_config {
    uint8_t servo_id;            /* 0..127 */
    double kp_nm_rev;            /* servo.pid_position.kp, N·m per revolution */
    double kd_nm_s_rev;          /* servo.pid_position.kd, N·m·s per revolution */
    double max_torque_nm;        /* the system-wide maximum torque */
    double torque_constant_nm_a; /* current mode: output torque per Q ampere */
    int64_t default_timeout_ns;  /* servo.default_timeout_s; 0: no watchdog */
    double voltage_v, temperature_c;
};

/* init only. */
void hs_mt_config_init(struct hs_mt_config *cfg, uint8_t servo_id);

#define HS_MT_READS_MAX 8   /* read subframes answered per frame */
#define HS_MT_ERR_UNKNOWN 1 /* hilsim's error code for an unknown register or value */

struct hs_mt_read {
    uint8_t width;
    uint16_t count, start;
};

struct hs_mt_error {
    uint8_t type; /* HS_MT_WRITE_ERROR or HS_MT_READ_ERROR */
    uint16_t reg;
};

struct hs_mt_node {
    struct hs_can_node base;
    struct hs_mt_config cfg;
    enum hs_mt_mode mode;
    uint8_t fault;
    /* the command registers (SI at the output: revolutions, N·m, s) */
    double cmd_pos_rev; /* NAN: take the present position at the next poll */
    double cmd_vel_rev_s, cmd_ff_nm, kp_scale, kd_scale, cmd_max_torque_nm, cmd_q_a;
    double watchdog_s; /* NAN: none; 0: the default */
    int64_t last_cmd_ns, last_poll_ns;
    bool hold_pending; /* position unset: latch the present one at poll */
    /* the reply to build at the next poll */
    bool reply_owed;
    uint8_t reply_to; /* the requester's source ID (7 bits) */
    struct hs_mt_read reads[HS_MT_READS_MAX];
    unsigned nreads;
    struct hs_mt_error errors[HS_MT_READS_MAX];
    unsigned nerrors;
    double last_q_rev, last_dq_rev_s, last_tau_nm;
};

int hs_mt_node_init(struct hs_mt_node *node, const struct hs_mt_config *cfg, struct hs_diag *d);
/* RT-safe: a fault code (32..48): the servo goes to mode 1 until stopped. */
void hs_mt_node_fault(struct hs_mt_node *node, uint8_t code);

#endif
