/* Lock-free single-producer single-consumer ring of fixed-size log records, so the RT thread
 * can report events (overruns, policy actions) without stdio: it pushes, a non-RT thread pops
 * and prints. C11 acquire/release on the two indices; no locks, no allocation after init. */
#ifndef HS_RT_RING_H
#define HS_RT_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum hs_rt_log_kind {
    HS_RT_LOG_OVERRUN,     /* a: tick duration ns, b: deadlines missed by this tick */
    HS_RT_LOG_SKIP,        /* a: periods skipped, b: tick number the loop resumes at */
    HS_RT_LOG_SAFE_HOLD,   /* a: leaky counter value, b: threshold */
    HS_RT_LOG_STOP,        /* a: enum hs_tick_stop_reason, b: phase error (negative errno),
                              what: the reason's name */
    HS_RT_LOG_STALL,       /* a: injected stall ns */
    HS_RT_LOG_LOCKSTEP,    /* a lockstep wait expired. a: ns waited, b: enum hs_lockstep_expiry,
                              what: its name (hold, step, stop) */
    HS_RT_LOG_SYNC_LOCKED, /* the sync clock locked. a: phase error ns, b: drift ppb,
                              what: the event source */
    HS_RT_LOG_SYNC_LOST,   /* its events stopped: free-running. a: periods without one,
                              what: the event source */
    HS_RT_LOG_MAX
};

struct hs_rt_log_rec {
    uint64_t tick;   /* period number the record belongs to */
    int64_t time_ns; /* CLOCK_MONOTONIC when it was posted */
    int64_t a, b;    /* meaning per kind (see enum) */
    /* A static string naming what a record's numbers mean (e.g. the stop reason), set by the
     * producer so that formatting needs no knowledge of who posted it; may be NULL. */
    const char *what;
    uint32_t kind; /* enum hs_rt_log_kind */
    uint32_t pad;
};

struct hs_rt_ring {
    struct hs_rt_log_rec *recs; /* owned; capacity entries */
    uint32_t mask;              /* capacity - 1 */
    /* Indices on their own cache lines: the producer writes head, the consumer tail. */
    _Alignas(64) _Atomic uint64_t head;    /* rt:w consumer:r */
    _Alignas(64) _Atomic uint64_t tail;    /* rt:r consumer:w */
    _Alignas(64) _Atomic uint64_t dropped; /* rt:w consumer:r; pushes refused because full */
};

/* init only: allocates. capacity is rounded up to a power of two (>= 2). 0, -EINVAL, -ENOMEM. */
int hs_rt_ring_init(struct hs_rt_ring *r, uint32_t capacity);
/* init only. Accepts NULL. */
void hs_rt_ring_destroy(struct hs_rt_ring *r);
/* RT-safe, producer side only. 0, or -ENOBUFS when full (the record is dropped and counted). */
int hs_rt_ring_push(struct hs_rt_ring *r, const struct hs_rt_log_rec *rec);
/* RT-safe, consumer side only. 0 with the oldest record in *ret_rec, or -EAGAIN when empty. */
int hs_rt_ring_pop(struct hs_rt_ring *r, struct hs_rt_log_rec *ret_rec);
/* Non-RT: one human-readable line (no newline) for a record, from the record alone. Returns like
 * snprintf. */
int hs_rt_log_format(const struct hs_rt_log_rec *rec, char *buf, size_t size);

#endif
