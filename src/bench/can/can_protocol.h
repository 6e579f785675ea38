/* The CAN I/O module's side of a protocol: what src/bench/io_can.c asks of every node, whatever
 * its protocol. Each protocol's src/bench/can/<name>_bind.c defines
 * `const struct hs_can_protocol hs_can_<name>_protocol`; registry_bind.c gathers them
 * from the registry (hilsim/can_protocols.h). The bind files are compiled into hs_bench: they
 * bind a node to the bench's joints and sensors.
 *
 * A port is one configured node: a protocol-owned struct that starts with struct hs_can_port.
 * io_can.c owns the buses: it drains them, hands each frame to the nodes in config order
 * (hs_can_nodes_dispatch on port->node), stamps port->last_rx_ns, then calls poll once per tick,
 * sends what poll wrote, and at the end stops and destroys the ports. */
#ifndef HS_CAN_PROTOCOL_H
#define HS_CAN_PROTOCOL_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/can_node.h"
#include "hilsim/can_replier.h"
#include "hilsim/config.h"
#include "hilsim/diag.h"

#define HS_CAN_PORT_TX_DEFAULT 16 /* frames a poll may write when tx_max is NULL */

struct hs_can_protocol;
struct hs_can_joint_ops;

struct hs_can_port {
    const struct hs_can_protocol *proto; /* set by create */
    struct hs_can_node *node;            /* set by create: receives the bus's frames */
    const struct hs_cfg_node *cfg;       /* set by create */
    uint32_t index;                      /* config node index, set by create */
    /* io_can.c writes these; the protocol reads them */
    int64_t last_rx_ns;             /* CLOCK_MONOTONIC of the last frame the node acted on */
    struct hs_can_replier *replier; /* replies: immediate: the bus's I/O thread, else NULL */
    uint32_t replier_slot;          /* the node's snapshot in that thread */
    uint64_t frames_ok_at_poll;     /* node->stats.frames_ok after the last poll */
};

struct hs_can_protocol {
    const char *name;
    /* Single-joint protocols: the node builder of the shared bind skeleton (create is then
     * hs_can_joint_port_create, see below); NULL for protocols with their own create. */
    const struct hs_can_joint_ops *joint;
    /* init only: allocates. Builds the port for config node `index` of bench's config: finds and
     * claims its joints (hs_bench_claim_joint), loads what it needs. Errors name the config
     * line of the node or of the key at fault; nothing is left allocated on failure. */
    int (*create)(struct hs_bench *bench, uint32_t index, struct hs_can_port **ret_port,
                  struct hs_diag *diag);
    void (*destroy)(struct hs_can_port *port); /* accepts NULL */
    /* init only, optional: adds the node's kernel filters to cc; false: cc had no room (the bus
     * then receives every ID). NULL: the IDs the config claims for the node
     * (hs_config_can_node_claims). */
    bool (*filters)(const struct hs_can_port *port, struct hs_can_config *cc);
    /* init only, optional: frames poll may write per tick (NULL: HS_CAN_PORT_TX_DEFAULT). */
    unsigned (*tx_max)(const struct hs_can_port *port);
    /* RT-safe, bounded. Once per tick after this tick's frames were dispatched: applies the
     * node's timeouts, writes its joints' commands into their plant slots, writes up to out_max
     * frames (replies, cyclic messages) to out and returns how many. With port->replier set the
     * I/O thread answers commands and remote requests: poll publishes the state it answers from
     * (hs_can_replier_publish*) and leaves those answers out. */
    int (*poll)(struct hs_can_port *port, struct hs_bench *bench, int64_t now_ns,
                struct hs_can_frame *out, unsigned out_max);
    /* Async-signal-safe, optional (NULL: the protocol has no stop frame): the node's last word,
     * built from the joints' last readings alone without touching the port. Returns the frame
     * count (0 or 1). */
    int (*stop_frame)(const struct hs_can_port *port, const struct hs_bench *bench,
                      struct hs_can_frame *ret_frame);
    /* Not RT, optional: after the stop frame went out, the node's output is off for good. */
    void (*stop)(struct hs_can_port *port);
    /* init only, optional: replies: immediate; registers the node with the bus's I/O thread
     * (writes *ret_slot). NULL: the node answers with the tick. */
    int (*replier_add)(struct hs_can_port *port, struct hs_can_replier *replier, uint32_t *ret_slot,
                       struct hs_diag *diag);
    /* RT-safe, with replier_add: publishes the state the I/O thread answers from (also called
     * once before the thread starts, from the initial pose). */
    void (*replier_publish)(struct hs_can_port *port, const struct hs_bench *bench, int64_t now_ns);
    /* RT-safe, optional: for CAN lockstep (the clock waits until every node heard its command
     * for the cycle). 1: since its last poll the node accepted the frame(s) the protocol
     * counts as the cycle's command; 0: not yet; -ENOSYS: the node takes no per-cycle command
     * (a node that only sends). NULL: any frame the node acted on since its last poll counts
     * (node->stats.frames_ok moved past port->frames_ok_at_poll). Call between dispatch and
     * poll; poll starts the next cycle. */
    int (*command_heard)(const struct hs_can_port *port);
    /* Command-to-reply latency is sampled for this protocol's nodes answered by the tick. */
    bool reply_latency;
    /* ---- scenario hooks (src/scenario): optional, tick thread ---- */
    /* init only: NULL when the node can raise `code`, its protocol's own error in the
     * protocol's own encoding; else why not (static text). */
    const char *(*fault_check)(const struct hs_can_port *port, uint32_t code);
    /* RT-safe: on: the node raises `code` as its firmware does on detecting that fault (the
     * output goes off, the frames carry the code, it latches as the firmware latches it);
     * off: the fault's cause is gone (what stays latched is the protocol's business). */
    void (*raise_fault)(struct hs_can_port *port, uint32_t code, bool on);
    /* The names state may return (NULL-terminated), and RT-safe: the node's state now. */
    const char *const *state_names;
    const char *(*state)(const struct hs_can_port *port);
    /* RT-safe: the winding temperature the node reports (°C) from now on; NAN: its configured
     * temperature again. Every single-joint protocol's port takes it (hs_can_joint_port). */
};

/* init only: the port bench built for its config node cfg (an element of the bench's config's
 * can.nodes), or NULL. Single-joint ports register with their bench when bound and leave when
 * freed. */
struct hs_can_port *hs_can_port_find(const struct hs_bench *bench, const struct hs_cfg_node *cfg);
/* RT-safe: the reported temperature (see above) of a port hs_can_port_find returned. */
void hs_can_port_set_temperature(struct hs_can_port *port, double temp_c);

/* The registered protocol for p (never NULL for p < HS_CFG_CAN_PROTOCOL_MAX). */
const struct hs_can_protocol *hs_can_protocol_get(enum hs_cfg_can_protocol p);

/* RT-safe: the command_heard contract above, with the default applied. */
int hs_can_port_command_heard(const struct hs_can_port *port);

/* ---- helpers for protocols whose node drives one joint (id + joint keys) ---- */

/* A node that drives one joint through the generic node API (struct hs_can_node's joint
 * command). Wire units are joint side, or motor side (motor_side: positions x gear, torques
 * through Kt), as the protocol's boards measure. */
struct hs_can_joint_port {
    struct hs_can_port port;
    struct hs_bench *bench; /* set by init: the bench whose port table lists this port */
    uint32_t joint;         /* bench joint index */
    bool motor_side;        /* wire units are the motor's */
    double gear, eta;       /* motor turns per joint turn, gear efficiency */
    double kt;              /* motor torque constant, N·m/A */
    double current_max;     /* actuator current limit, A (inf: none) */
    double temp_c;          /* reported winding temperature, °C; NAN: the node's configured one */
    uint32_t node_seq;      /* node command seq at the last mapping */
    uint32_t slot_mode;     /* mode written at the last mapping */
    uint64_t slot_seq;
};

/* RT-safe: the joint's present reading in wire units (before the node's zero offsets). */
struct hs_can_joint_state hs_can_joint_port_state(const struct hs_can_joint_port *jp,
                                                  const struct hs_joint_reading *r);
/* RT-safe: writes the node's joint command into the joint's plant slot (brought to the joint
 * side, rx_time_ns = port.last_rx_ns, seq advanced when the node's command or the mode
 * changed). Nothing until the node produced its first command. */
void hs_can_joint_port_command(struct hs_can_joint_port *jp, struct hs_bench *bench,
                               const struct hs_can_joint_command *c);
/* RT-safe: the generic poll for such nodes: the joint's reading in, hs_can_node_poll, the
 * command out. Returns the node's frame count. */
int hs_can_joint_port_poll(struct hs_can_joint_port *jp, struct hs_bench *bench, int64_t now_ns,
                           struct hs_can_joint_state *ret_js, struct hs_can_frame *out,
                           unsigned out_max);

/* The one bind skeleton of such protocols: the protocol fills in this table and sets
 * `.create = hs_can_joint_port_create, .destroy = hs_can_joint_port_free, .joint = &its_ops`;
 * the skeleton allocates the port, finds the joint, has the protocol build its node, names the
 * config node in the node's errors, claims the joint and lists the port with the bench. */
struct hs_can_joint_ops {
    size_t port_size; /* the protocol's port: one allocation starting with hs_can_joint_port */
    bool motor_side;  /* wire units are the motor's (see hs_can_joint_port) */
    /* init only: builds the node for config node cn in jp's allocation (zeroed, the joint found:
     * jp->gear, eta, kt, current_max are set) and sets *ret_node. On failure returns negative
     * errno with the node's own message in nd (the skeleton puts the config node's place and
     * name before it) or, nd left empty, a complete diag in d (e.g. naming a file's line). */
    int (*build)(struct hs_can_joint_port *jp, struct hs_bench *bench, const struct hs_cfg_node *cn,
                 struct hs_can_node **ret_node, struct hs_diag *nd, struct hs_diag *d);
};

/* The ops such ports share: create is the skeleton above (the config node's protocol's
 * `joint` ops); destroy frees the allocation; poll is the generic poll. */
int hs_can_joint_port_create(struct hs_bench *bench, uint32_t index, struct hs_can_port **ret_port,
                             struct hs_diag *diag);
void hs_can_joint_port_free(struct hs_can_port *port);
int hs_can_joint_port_poll_op(struct hs_can_port *port, struct hs_bench *bench, int64_t now_ns,
                              struct hs_can_frame *out, unsigned out_max);

#endif
