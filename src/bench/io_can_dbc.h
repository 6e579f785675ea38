/* DBC nodes of the CAN I/O module (internal to io_can.c): a board described by a DBC file and
 * the config's bindings.
 *
 * Receive: a frame whose ID (minus dbc.id_offset) is a DBC message with to: bindings is decoded
 * (physical values, multiplexing honoured) into the bound joints' commands; a frame shorter than
 * the message is counted bad and ignored. A remote frame for an on_request tx message, or a
 * message that is an on_receive trigger, schedules that tx message. Other IDs: not this node.
 * Joint command (at poll, written into the plant slot): the quantities a joint's bindings name
 * decide the mode: current_setpoint -> CURRENT; position_setpoint or kp -> POSITION (kp/kd the
 * bound values, else the bench's hold gains for that joint); velocity_setpoint -> VELOCITY;
 * torque_setpoint -> TORQUE; a bound enable that reads 0 -> DISABLED. seq advances and
 * rx_time_ns is the frame's time for every received message that carries one of its signals.
 * Transmit: cyclic messages every period_s (whole ticks, from the first poll), on_receive and
 * on_request ones at the poll after their trigger (one frame per trigger or request); from:
 * bindings fill the payload (zeros elsewhere; multiplexed signals are all written). Safe stop sends
 * nothing (a DBC board has no protocol-defined disable frame). */
#ifndef HS_BENCH_IO_CAN_DBC_H
#define HS_BENCH_IO_CAN_DBC_H

#include <stdint.h>

#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/can_node.h"
#include "hilsim/diag.h"

struct hs__can_dbc_node;

/* init only: allocates; loads the node's DBC and resolves every binding. Errors name the
 * binding's config line. Claims the driven joints. */
int hs__can_dbc_node_create(struct hs_bench *bench, uint32_t node_index,
                            struct hs__can_dbc_node **ret_node, struct hs_diag *d);
void hs__can_dbc_node_destroy(struct hs__can_dbc_node *n); /* accepts NULL */
struct hs_can_node *hs__can_dbc_node_base(struct hs__can_dbc_node *n);
unsigned hs__can_dbc_node_tx_max(const struct hs__can_dbc_node *n);
/* init only: adds one exact-ID filter per received message; returns false when cfg has no room
 * (then the caller must receive every ID). */
bool hs__can_dbc_node_filters(const struct hs__can_dbc_node *n, struct hs_can_config *cfg);
/* RT-safe: writes the joint commands, returns the frames to send (<= tx_max). */
int hs__can_dbc_node_poll(struct hs__can_dbc_node *n, struct hs_bench *bench, int64_t now_ns,
                          struct hs_can_frame *out, unsigned out_max);

#endif
