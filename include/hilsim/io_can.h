/* The CAN I/O module: serves a bench's joints to real motor-controller boards' host over CAN.
 * One bus per can.buses entry (SocketCAN, kernel filters for the nodes' IDs, error frames on,
 * the configured send-queue policy), one simulated node per can.nodes entry, built by its
 * protocol (drivers/can/<protocol>/, registered in hilsim/can_protocols.h; each protocol's
 * *_bind.c says its wire units, its plant slot mapping and its stop frame).
 *
 * Per tick (both phases RT-safe, bounded):
 *   inputs   drain each bus (at most HS_BENCH_CAN_RX_ROUNDS non-blocking batches; the rest
 *            waits for the next tick, kernel overflows are counted), skip error frames, offer
 *            each frame to the bus's nodes with its kernel receive time converted to
 *            CLOCK_MONOTONIC, then poll every node with the joints' present readings (the state
 *            the last physics step left, i.e. the state at now_ns) so a command heard this tick
 *            drives this tick's physics. The node's commands go into its joints' plant slots;
 *            the frames it produced (replies, heartbeats, encoder estimates) wait for outputs.
 *   outputs  send the waiting frames, non-blocking, under the bus's send-queue policy.
 *
 * Plant slots: rx_time_ns is the CLOCK_MONOTONIC time of the last frame the node acted on, so
 * the plant's command_timeout_s measures the host's silence the same way the node's own timeout
 * or watchdog does; seq advances when the node accepts a command frame or its output is
 * switched on or off. The node's torque limit is not applied here: the actuator's
 * torque_limit_nm / current_limit_a are.
 *
 * Safe stop (non-RT): each node's protocol stop frame (if it has one) goes out, then its
 * output is off for good. */
#ifndef HS_BENCH_IO_CAN_H
#define HS_BENCH_IO_CAN_H

#include <stdint.h>

#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/can_node.h"
#include "hilsim/diag.h"

#define HS_BENCH_CAN_RX_ROUNDS 8 /* receive batches per bus per tick */
#define HS_BENCH_CAN_LAT_MAX_US 20000

struct hs_bench_can;

struct hs_bench_can_opts {
    /* NULL: SocketCAN on each bus's interface. &hs_can_socketpair_ops: socketpair_fd[i] is bus
     * i's connected SOCK_SEQPACKET endpoint (the module owns it from the call on). */
    const struct hs_can_backend_ops *backend;
    int socketpair_fd[8];
    /* Stamp every frame with the tick's now_ns instead of its kernel receive time: for
     * simulated time (offline runs, tests), where now_ns is not CLOCK_MONOTONIC. Nodes then
     * answer with the tick whatever can.buses[].replies says (no I/O thread). */
    bool tick_time_stamps;
};

struct hs_bench_can_bus_stats {
    const char *name;  /* config bus name (owned by the config) */
    const char *iface; /* interface */
    struct hs_can_state state;
    uint64_t unclaimed;       /* frames no node took (IDs that passed the filter, no owner) */
    uint64_t err_frames;      /* controller error frames skipped before dispatch */
    uint64_t send_errors;     /* hs_can_bus_send failures other than back-pressure */
    uint64_t rx_capped_ticks; /* ticks that left frames queued after HS_BENCH_CAN_RX_ROUNDS */
    /* replies: immediate (the bus's I/O thread): its replies are in state.tx_frames and its
     * refused sends in state.tx_errors; frames it received that the tick had no room for: */
    uint64_t relay_drops;
};

struct hs_bench_can_node_stats {
    const char *name; /* config node name */
    const char *protocol;
    const char *joint;
    struct hs_can_node_stats node;
};

/* init only: allocates. Opens every bus and node for bench's config, claims their joints from
 * the demo controller and adds the module to the bench, which owns it from then on (*ret_can
 * stays valid until hs_bench_destroy). opts may be NULL. Errors name the config line of the
 * bus or node; nothing is left open on failure. */
int hs_bench_can_attach(struct hs_bench *bench, const struct hs_bench_can_opts *opts,
                        struct hs_bench_can **ret_can, struct hs_diag *diag);
/* init only: the buses bench's CAN module opens from now on are tapped by ops (NULL: not
 * tapped; the recorder's tap, hilsim/record.h). The bench holds the tap; nothing else does. */
void hs_bench_can_set_tap(struct hs_bench *bench, const struct hs_can_tap_ops *ops, void *ctx);
/* init only: the bus bench's CAN module opened on interface iface (a config bus's interface),
 * or NULL (no CAN module, or no such bus): for binding faults by config name. */
struct hs_can_bus *hs_bench_can_bus_find(const struct hs_bench *bench, const char *iface);

/* Counters (any thread, no allocation; exact once the loop has stopped). */
uint32_t hs_bench_can_bus_count(const struct hs_bench_can *can);
int hs_bench_can_bus_stats(const struct hs_bench_can *can, uint32_t i,
                           struct hs_bench_can_bus_stats *ret_stats);
uint32_t hs_bench_can_node_count(const struct hs_bench_can *can);
int hs_bench_can_node_stats(const struct hs_bench_can *can, uint32_t i,
                            struct hs_bench_can_node_stats *ret_stats);
/* RT-safe, for CAN lockstep (rt.clock.lockstep_source can_commands: the gate calls it until it
 * returns 0): reads the buses one frame at a time, offering each to the nodes (its effect waits
 * for the tick's poll) stamped with now_ns, and stops at the frame after which every node has
 * accepted its command for this cycle (hs_can_port_command_heard: since its last poll), so later
 * frames wait for the next cycle. Returns how many nodes still wait (0: the tick may run), or a
 * bus's negative errno. Nodes that take no per-cycle command (a DBC node that only sends) are
 * not counted. Bounded: it returns after a few hundred frames whatever they completed. */
int hs_bench_can_commands_missing(struct hs_bench_can *can, int64_t now_ns);
/* Command-to-reply latency of MIT nodes answered with the tick (replies: tick, or simulated
 * time; the I/O thread's immediate replies are not sampled here: tests/canio/bench_can_reply
 * measures them at the peer), one sample per node and tick that answered: from the
 * kernel receive time of the oldest command answered that tick to the replies handed to the
 * kernel, in rt's log-linear histogram (hilsim/rt/rt_hist.h: exact below 128 µs, within
 * 0.39 % above) up to HS_BENCH_CAN_LAT_MAX_US (beyond: that value). Writes the p-th percentile
 * (0..100) in µs; returns the sample count (0: none, *ret_us untouched). Not meaningful on the
 * socketpair backend (no kernel stamps: then measured from the tick's start). Where frames carry
 * the tick clock (lockstep, simulated time: hs_bench_can_latency_in_ticks) the samples are whole
 * ticks from the tick that took the command to the tick whose frames carry the reply, not µs. */
/* Any thread, while the loop runs: bus i's name, its state and the kernel's receive drops as of
 * the last tick (for systemd STATUS=). 0 or -ENOENT. */
int hs_bench_can_bus_live(const struct hs_bench_can *can, uint32_t i, const char **ret_name,
                          enum hs_can_bus_state *ret_state, uint64_t *ret_drops);
/* Any thread: bus i's interface (owned by the config), or NULL past the last bus. */
const char *hs_bench_can_bus_interface(const struct hs_bench_can *can, uint32_t i);
/* Not RT-safe (netlink), from one housekeeping thread (the runner's supervisor, about once a
 * second): reads each managed bus's controller state and error counters and applies the
 * bus-off restart policy (hs_can_bus_link_poll). Buses without a controller (vcan, socketpair)
 * are skipped. Returns how many buses answered. */
int hs_bench_can_link_poll(struct hs_bench_can *can, int64_t now_ns);
/* Not RT-safe, same thread: bus i as the controller last reported it. 0 or -ENOENT. */
int hs_bench_can_link_view(const struct hs_bench_can *can, uint32_t i,
                           struct hs_can_state *ret_state);
uint64_t hs_bench_can_latency_us(const struct hs_bench_can *can, double p, double *ret_us);
bool hs_bench_can_latency_in_ticks(const struct hs_bench_can *can);
/* Frames the nodes built during the warm-up (hs_bench_set_warming_up) and that were held
 * back from the bus. Not RT: read after the run. */
uint64_t hs_bench_can_warmup_frames_held(const struct hs_bench_can *can);
/* Async-signal-safe (for a fatal-signal handler; the tick may be stopped anywhere): one
 * send(MSG_DONTWAIT | MSG_NOSIGNAL) per node with a protocol stop frame on its bus's open socket,
 * with the frame can_safe_stop would send, built on the stack from the joint's last reading.
 * Bypasses the bus's send queue and counters and leaves the nodes untouched; frames the kernel
 * refuses are lost. Nodes without one (DBC) send nothing. */
void hs_bench_can_emergency_stop(struct hs_bench_can *can, const struct hs_bench *bench);

#endif
