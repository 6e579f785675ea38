/* Robstride answers at firmware speed: the bus's reply thread (hilsim/can_replier.h) answers each
 * frame at once, from its own copy of the drive's registers (changed by the same frames through
 * hs_rs_regs_apply, so a write is read back and an enable answers in run mode) and the
 * measurements the tick last published. The tick still applies every frame to the node, which
 * alone drives the joint; what the node does on its own (a fault, CAN_TIMEOUT, the bench's stop)
 * reaches the copy as an event with the node's mode and fault words.
 *
 * Threads: hs_rs_replier_init before the thread starts; hs_rs_replier_publish on the tick;
 * hs_rs_replier_answer on the reply thread only. */
#ifndef HS_CAN_ROBSTRIDE_REPLY_H
#define HS_CAN_ROBSTRIDE_REPLY_H

#include <stdatomic.h>

#include "robstride.h"

struct hs_rs_replier {
    struct hs_rs_config cfg;
    /* reply thread only */
    struct hs_rs_regs regs;
    uint32_t events_seen;
    double zero_q_raw; /* the raw angle a set-zero frame took, until the tick has applied it */
    /* seqlock, tick writes: the measurements (double bit patterns), the node's own events */
    _Atomic uint32_t seq;
    _Atomic uint64_t q_raw, zero_offset, dq, tau, iq, vbus, temp;
    _Atomic uint32_t events, mode_faults, fault_word, zeros_applied;
};

/* init only: the copy starts from the node's registers. */
void hs_rs_replier_init(struct hs_rs_replier *rr, const struct hs_rs_node *n);
/* RT-safe, tick: the node's state after its poll; q_raw_rad the joint's angle before the zero
 * offset. */
void hs_rs_replier_publish(struct hs_rs_replier *rr, const struct hs_rs_node *n, double q_raw_rad);
/* Reply thread (hs_can_replier_answer_fn): 1 and the answer in *ret_out; 0: the frame is the
 * node's but has no answer yet (nothing published); -1: not the node's, or not answered. */
int hs_rs_replier_answer(void *ctx, const struct hs_can_frame *f, struct hs_can_frame *ret_out);

#endif
