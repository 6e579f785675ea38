/* Replies at firmware speed: an I/O thread per bus that owns the bus's receive side, answers each
 * MIT command frame and each ODrive remote request at once from the state the tick last
 * published (a seqlock snapshot per node), and hands every frame to the tick through a lock-free
 * single-producer ring, so the command itself still takes effect at the next tick (physics keeps
 * one writer).
 *
 * Threads: hs_can_replier_publish, _recv and _live belong to the tick thread; the I/O thread
 * is the only caller of the bus's receive path while it runs. Sends from both threads are
 * separate send(2) calls on the one socket, which the kernel keeps whole. */
#ifndef HILSIM_CAN_REPLIER_H
#define HILSIM_CAN_REPLIER_H

#include <stdint.h>

#include "hilsim/can.h"
#include "hilsim/can_mit.h"
#include "hilsim/diag.h"

#define HS_CAN_REPLIER_MAX_NODES 16
#define HS_CAN_REPLIER_RING 512    /* frames between the I/O thread and the tick; power of two */
#define HS_CAN_REPLIER_REGS_MAX 48 /* moteus: the register table a slot answers from */

struct hs_can_replier;

struct hs_can_replier_stats {
    uint64_t frames;      /* received by the I/O thread */
    uint64_t replies;     /* MIT replies sent at once */
    uint64_t unanswered;  /* MIT commands before the first published state (no reply) */
    uint64_t send_errors; /* replies the socket refused (lost, as on a full controller queue) */
    uint64_t ring_drops;  /* frames the tick had no room for; 0 by design (see io_thread) */
};

/* init only: a replier for BUS (not started; the bus must outlive it). */
int hs_can_replier_create(struct hs_can_bus *bus, struct hs_can_replier **ret_replier,
                          struct hs_diag *d);
/* init only: answer MIT frames on cfg->motor_id from slot *ret_slot's snapshot, with the node's
 * reply ranges (cfg->reply_current selects the current range). */
int hs_can_replier_add_mit(struct hs_can_replier *r, const struct hs_mit_config *cfg,
                           uint32_t *ret_slot);
/* init only: answer remote requests (or empty frames) for the ODrive getters in GETTERS (bit per
 * cmd ID) of node NODE_ID from slot *ret_slot's answers. */
int hs_can_replier_add_odrive(struct hs_can_replier *r, uint8_t node_id, uint32_t getters,
                              uint32_t *ret_slot);
/* A protocol's own answers on the I/O thread (Robstride): called there for every frame, after
 * the frame went into the tick's ring. 1: the answer is in *ret_out (sent at once); 0: the
 * frame is the node's but has no answer yet (nothing published: counted unanswered); -1: not
 * its frame. CTX is the protocol's and outlives the replier. */
typedef int (*hs_can_replier_answer_fn)(void *ctx, const struct hs_can_frame *f,
                                        struct hs_can_frame *ret_out);
/* init only: a slot answered by ANSWER (its replies counted as the slot's). */
int hs_can_replier_add_answerer(struct hs_can_replier *r, hs_can_replier_answer_fn answer,
                                void *ctx, uint32_t *ret_slot);
/* init only: answer moteus queries to servo SERVO_ID (frames with bit 15 of the ID set, read,
 * write and NOP subframes only: the diagnostic stream stays with the tick) from slot *ret_slot's
 * register table, with the node's own frame walker and reply builder (moteus_frame.c). */
int hs_can_replier_add_moteus(struct hs_can_replier *r, uint8_t servo_id, uint32_t *ret_slot);
/* RT-safe, tick thread: a moteus slot's register table (N <= HS_CAN_REPLIER_REGS_MAX values, by
 * the node's register index), as the node built it from this tick's state. */
void hs_can_replier_publish_regs(struct hs_can_replier *r, uint32_t slot, const double *regs,
                                 unsigned n);
struct hs_cia402_io;
/* init only: answer a CiA 402 node's SDO requests, remote requests and SYNCs (its synchronous
 * TPDOs) with hs_cia402_io_answer (drivers/can/cia402/cia402_io.h) on IO, which the caller owns
 * and publishes to from the tick; IO must outlive the replier. */
int hs_can_replier_add_cia402(struct hs_can_replier *r, struct hs_cia402_io *io,
                              uint32_t *ret_slot);
/* init only: start the I/O thread, SCHED_FIFO at PRIORITY when allowed (0: the caller's), pinned
 * to CPU when cpu >= 0 (an error, not a silent fallback, when that CPU cannot be used). */
int hs_can_replier_start(struct hs_can_replier *r, int priority, int cpu, struct hs_diag *d);
/* RT-safe, tick thread: the state a reply carries (the node's zero offset already applied). */
void hs_can_replier_publish(struct hs_can_replier *r, uint32_t slot, double p_rad, double v_rad_s,
                            double t);
/* RT-safe, tick thread: an AK-format MIT slot's temperature (°C) and error code, bytes 6 and 7
 * of its replies (hs_mit_pack_reply_ak_status). */
void hs_can_replier_publish_ak_status(struct hs_can_replier *r, uint32_t slot, double temp_c,
                                      uint8_t error);
/* RT-safe, tick thread: an ODrive slot's answers (8 data bytes each, the cmd ID in id's low 5
 * bits), as the node's own code built them from this tick's state. */
void hs_can_replier_publish_answers(struct hs_can_replier *r, uint32_t slot,
                                    const struct hs_can_frame *frames, unsigned n);
/* RT-safe, tick thread: up to MAX frames the I/O thread received, in arrival order. */
int hs_can_replier_recv(struct hs_can_replier *r, struct hs_can_frame *out, unsigned max);
/* RT-safe, tick thread: the bus state and kernel drops as the I/O thread last saw them. */
void hs_can_replier_live(const struct hs_can_replier *r, enum hs_can_bus_state *ret_state,
                         uint64_t *ret_drops);
/* RT-safe: replies sent for SLOT so far. */
uint64_t hs_can_replier_slot_replies(const struct hs_can_replier *r, uint32_t slot);
void hs_can_replier_stats(const struct hs_can_replier *r, struct hs_can_replier_stats *ret);
/* Stops and joins the I/O thread (returns within one poll timeout, 10 ms). Idempotent. */
void hs_can_replier_stop(struct hs_can_replier *r);
void hs_can_replier_destroy(struct hs_can_replier *r);

#endif
