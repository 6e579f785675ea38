#include "hilsim/rt/rt_ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_rt_ring_init(struct hs_rt_ring *r, uint32_t capacity)
{
    memset(r, 0, sizeof *r);
    if (capacity == 0 || capacity > (1u << 30))
        return -EINVAL;
    uint32_t cap = 2;
    while (cap < capacity)
        cap <<= 1;
    struct hs_rt_log_rec *recs = malloc((size_t)cap * sizeof *recs); /* init only */
    if (!recs)
        return -ENOMEM;
    memset(recs, 0, (size_t)cap * sizeof *recs); /* resident before the RT thread writes */
    r->recs = recs;
    r->mask = cap - 1;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->dropped, 0);
    return 0;
}

void hs_rt_ring_destroy(struct hs_rt_ring *r)
{
    if (!r)
        return;
    free(r->recs);
    r->recs = NULL;
    r->mask = 0;
}

int hs_rt_ring_push(struct hs_rt_ring *r, const struct hs_rt_log_rec *rec)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail > r->mask) {
        atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
        return -ENOBUFS;
    }
    r->recs[head & r->mask] = *rec;
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
    return 0;
}

int hs_rt_ring_pop(struct hs_rt_ring *r, struct hs_rt_log_rec *ret_rec)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (tail == head)
        return -EAGAIN;
    *ret_rec = r->recs[tail & r->mask];
    atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
    return 0;
}

int hs_rt_log_format(const struct hs_rt_log_rec *rec, char *buf, size_t size)
{
    unsigned long long t = (unsigned long long)rec->tick;
    long long a = (long long)rec->a, b = (long long)rec->b;
    switch (rec->kind) {
    case HS_RT_LOG_OVERRUN:
        return snprintf(buf, size, "tick %llu: overrun, took %lld ns, missed %lld deadline(s)", t,
                        a, b);
    case HS_RT_LOG_SKIP:
        return snprintf(buf, size, "tick %llu: skipped %lld period(s), resuming at tick %lld", t, a,
                        b);
    case HS_RT_LOG_SAFE_HOLD:
        return snprintf(buf, size, "tick %llu: overrun counter %lld reached %lld: safe hold", t, a,
                        b);
    case HS_RT_LOG_STOP:
        if (rec->what)
            return snprintf(buf, size, "tick %llu: loop stopped: %s (error %lld)", t, rec->what, b);
        return snprintf(buf, size, "tick %llu: loop stopped: reason %lld (error %lld)", t, a, b);
    case HS_RT_LOG_STALL:
        return snprintf(buf, size, "tick %llu: injected stall of %lld ns", t, a);
    case HS_RT_LOG_LOCKSTEP:
        return snprintf(buf, size,
                        "tick %llu: lockstep: no release from the controller after %.3f s (%s)", t,
                        (double)a / 1e9, rec->what ? rec->what : "?");
    case HS_RT_LOG_SYNC_LOCKED:
        return snprintf(buf, size,
                        "tick %llu: sync: locked to %s (phase error %+.1f us, drift %+.1f ppm)", t,
                        rec->what ? rec->what : "the event", (double)a / 1e3, (double)b / 1e3);
    case HS_RT_LOG_SYNC_LOST:
        return snprintf(buf, size,
                        "tick %llu: sync: no %s for %lld periods: free-running on the nominal "
                        "period until it comes back",
                        t, rec->what ? rec->what : "event", a);
    default:
        return snprintf(buf, size, "tick %llu: unknown record kind %u", t, rec->kind);
    }
}
