/* Protocol nodes: a simulated motor controller on the CAN bus.
 *
 * Each tick the CAN I/O module (src/bench/io_can.c), in the tick's inputs phase, feeds every
 * received frame to the nodes (on_frame), then polls every node with its joints' latest
 * readings (those of the previous tick's physics) to collect the frames to send (replies,
 * cyclic messages, answers to remote requests); physics then steps with the joint commands the
 * nodes hold, and the outputs phase sends the collected frames.
 * Node structs are plain memory owned by the caller (static or allocated at init); after
 * init nothing allocates. Units: SI, radians; protocol units are converted inside the node. */
#ifndef HILSIM_CAN_NODE_H
#define HILSIM_CAN_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/can.h"

enum hs_can_joint_mode {
    HS_CAN_JOINT_MODE_OFF = 0,     /* no torque (free wheeling) */
    HS_CAN_JOINT_MODE_TORQUE,      /* tau = tau_ff_nm */
    HS_CAN_JOINT_MODE_VELOCITY,    /* tau = kd (dq* - dq) + tau_ff */
    HS_CAN_JOINT_MODE_POSITION_PD, /* tau = kp (q* - q) + kd (dq* - dq) + tau_ff */
    HS_CAN_JOINT_MODE_MAX
};

/* What a node asks of its joint. The gains make every mode one formula:
 * tau = kp (q_ref - q) + kd (dq_ref - dq) + tau_ff, clamped to +-torque_limit_nm when > 0;
 * mode says which terms the protocol meant (kp = 0 outside POSITION_PD). */
struct hs_can_joint_command {
    enum hs_can_joint_mode mode;
    bool enabled;       /* false: output stage off, zero torque whatever the mode */
    double kp_nm_rad;   /* N*m/rad */
    double kd_nm_s_rad; /* N*m*s/rad */
    double q_ref_rad;   /* in the joint frame (node zero offsets already applied) */
    double dq_ref_rad_s;
    double tau_ff_nm;
    double torque_limit_nm; /* 0: unlimited */
    int64_t rx_time_ns;     /* now_ns when the last command was accepted */
    uint32_t seq;           /* increments on every accepted command */
};

/* What the integrator measured this tick. */
struct hs_can_joint_state {
    double q_rad;
    double dq_rad_s;
    double tau_nm;    /* applied joint torque */
    double current_a; /* motor q-axis current */
    double vbus_v;    /* supply voltage (0: node uses its configured value) */
    double temp_c;    /* winding temperature, °C (NAN: the node uses its configured value) */
};

struct hs_can_node_stats {
    uint64_t frames_ok;      /* frames for this node that were acted on */
    uint64_t frames_bad;     /* for this node but malformed: wrong DLC, FD, garbage */
    uint64_t frames_unknown; /* for this node but an unsupported command */
    uint64_t timeouts;       /* command/watchdog timeouts that cut the output */
    uint64_t tx_frames;      /* frames produced by poll */
    uint64_t tx_overflow;    /* frames poll could not place (out_max too small) */
};

struct hs_can_node;

#define HS_CAN_NODE_BROADCAST 1 /* on_frame: acted on, offer the frame to the other nodes too */

struct hs_can_node_ops {
    const char *name;
    /* RT-safe. 0: acted on; HS_CAN_NODE_BROADCAST: acted on, and the frame is addressed to
     * other nodes too (CANopen NMT, SYNC); -ENOENT: not addressed to this node; -EBADMSG:
     * addressed to it but malformed (counted); -EOPNOTSUPP: addressed to it, unsupported
     * command (counted). */
    int (*on_frame)(struct hs_can_node *node, const struct hs_can_frame *f, int64_t now_ns);
    /* RT-safe. Applies timeouts, updates *ret_cmd, writes up to out_max frames to out.
     * Returns the frame count. */
    int (*poll)(struct hs_can_node *node, int64_t now_ns, const struct hs_can_joint_state *js,
                struct hs_can_joint_command *ret_cmd, struct hs_can_frame *out, unsigned out_max);
};

/* Every protocol node struct starts with this. */
struct hs_can_node {
    const struct hs_can_node_ops *ops;
    struct hs_can_node_stats stats;
    struct hs_can_joint_command cmd; /* current command, also copied out by poll */
};

/* RT-safe wrappers. */
int hs_can_node_on_frame(struct hs_can_node *node, const struct hs_can_frame *f, int64_t now_ns);
int hs_can_node_poll(struct hs_can_node *node, int64_t now_ns, const struct hs_can_joint_state *js,
                     struct hs_can_joint_command *ret_cmd, struct hs_can_frame *out,
                     unsigned out_max);
/* RT-safe: offers f to each node until one takes it (a node that answers HS_CAN_NODE_BROADCAST
 * took it and lets the others see it too); returns the index of the first node that took it,
 * or -ENOENT (then *unclaimed is incremented, if given). */
int hs_can_nodes_dispatch(struct hs_can_node *const *nodes, unsigned n,
                          const struct hs_can_frame *f, int64_t now_ns, uint64_t *unclaimed);

#endif
