/* A CiA 402 node's answers at firmware speed, from the bus's reply thread (hilsim/can_replier.h):
 * SDO requests, remote requests for TPDOs and the synchronous TPDOs of a SYNC are answered as
 * the frame arrives, from the dictionary the tick last published, while the tick stays the only
 * writer of the node and of the physics.
 *
 * How: the reply thread runs the node's own SDO server and TPDO code (cia402_sdo.c,
 * cia402_pdo.c) on a shadow node whose dictionary is the tick's published snapshot. The same
 * frames also reach the tick through the replier's ring, where the node applies them (SDO
 * downloads, SYNC's RPDOs) without answering again (hs_cia402_node_quiet). A download the
 * thread acknowledged is kept in a short log and laid over each newer snapshot until the tick
 * has taken it (counted in SDO requests), so a read-back right after a write sees it.
 *
 * Threads: hs_cia402_io_publish on the tick thread, hs_cia402_io_answer on the reply thread,
 * hs_cia402_io_init before the thread starts. The snapshot is a seqlock of atomic words. */
#ifndef HS_CIA402_IO_H
#define HS_CIA402_IO_H

#include <stdatomic.h>

#include "cia402/cia402.h"

#define HS_CIA402_IO_WORDS ((sizeof(struct hs_cia402_od) + 7) / 8)
#define HS_CIA402_IO_LOG 16 /* acknowledged downloads not yet in a snapshot */

struct hs_cia402_io {
    /* tick:w io:r */
    _Atomic uint32_t seq; /* odd while the tick writes */
    _Atomic uint64_t od[HS_CIA402_IO_WORDS];
    _Atomic uint32_t nmt;
    _Atomic uint32_t sdo_taken; /* SDO requests the tick has applied */
    /* io only */
    struct hs_cia402_node shadow;
    struct hs_cia402_od scratch;
    uint32_t sdo_seen; /* SDO requests this thread has answered (or seen) */
    struct {
        uint32_t at; /* sdo_seen after the request that wrote it */
        int16_t entry;
        uint32_t raw;
    } log[HS_CIA402_IO_LOG];
    unsigned nlog;
    uint8_t pdo_sig[2 * HS_CIA402_PDO_N *
                    (sizeof(struct hs_cia402_pdo_comm) + sizeof(struct hs_cia402_pdo_map))];
};

/* init only: the shadow takes the node's dictionary layout; node must not be answered by the
 * tick any more (hs_cia402_node_quiet is called here). */
void hs_cia402_io_init(struct hs_cia402_io *io, struct hs_cia402_node *node);
/* RT-safe, tick thread: publishes the node's dictionary and state after its poll. */
void hs_cia402_io_publish(struct hs_cia402_io *io, const struct hs_cia402_node *node);
/* Reply thread: answers f if it is the node's (SDO request, SYNC, RTR of a TPDO) from the last
 * snapshot; writes up to max frames to out and returns how many (0: nothing to send). */
int hs_cia402_io_answer(struct hs_cia402_io *io, const struct hs_can_frame *f, int64_t now_ns,
                        struct hs_can_frame *out, unsigned max);

#endif
