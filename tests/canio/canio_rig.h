/* A bench served by the CAN I/O module over socketpair buses, with the peer (the controller
 * boards' host) on the other end of each pair, ticked in simulated time. Used by the host test
 * and the benchmark. */
#ifndef HS_TESTS_CANIO_RIG_H
#define HS_TESTS_CANIO_RIG_H

#include <stdint.h>

#include "hilsim/io_can.h"
#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/config.h"

struct canio_rig {
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_bench_can *can; /* NULL when opened without CAN */
    struct hs_can_bus *peer[8];
    uint32_t npeers;
    int64_t now_ns, period_ns;
    uint64_t tick;
};

/* Loads the config (path, or yaml text when text is set with base_dir for relative paths),
 * builds the bench and, with_can, attaches the CAN module on socketpairs. 0 or -errno; the
 * error is printed. */
int canio_rig_open(struct canio_rig *r, const char *path, const char *text, const char *base_dir,
                   bool with_can);
void canio_rig_close(struct canio_rig *r);
/* One tick of the bench at now_ns, then now_ns advances by the period. */
int canio_rig_tick(struct canio_rig *r);
int canio_send(struct canio_rig *r, uint32_t bus, uint32_t id, const void *data, unsigned len);
int canio_send_frame(struct canio_rig *r, uint32_t bus, const struct hs_can_frame *f);
/* Receives up to max frames from bus's peer end; returns the count. */
int canio_recv(struct canio_rig *r, uint32_t bus, struct hs_can_frame *out, unsigned max);

#endif
