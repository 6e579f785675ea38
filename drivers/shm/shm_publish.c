/* Per-tick state publication: seqlocked copy, then the futex tick word. */
#include <limits.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <unistd.h>

#include "shm_server_internal.h"

void hs_shm_server_publish(struct hs_shm_server *s, uint64_t tick, double sim_time_s,
                           int64_t mono_ns)
{
    struct hs_shm_guard_scope scope;
    hs__shm_guard_enter(&scope, &s->guard);
    /* One relaxed load while clients behave; a repair only in the tick after a truncation. */
    if (hs__shm_guard_hits(&s->guard) != s->guard_seen)
        hs__shm_server_repair(s);
    hs__shm_server_audit(s);
    struct hs_shm_state_head *h = s->staging_head;
    h->tick = tick;
    h->sim_time_s = sim_time_s;
    h->mono_ns = mono_ns;

    /* Sizes come from the server's private copy, never from the segment: clients map it
     * writable, and a buggy one must not be able to steer our stores. */
    uint64_t words = s->state_words;
    uint32_t odd = hs_shm_seq_write_begin(&s->state->seq);
    hs_shm_words_store((unsigned char *)s->state + HS_SHM_SEQ_DATA_OFFSET,
                       s->staging + HS_SHM_SEQ_DATA_OFFSET, words);
    /* The readings section's stamps and values, in the same write section (shm_abi.h). */
    hs_shm_words_store(s->readings_data, s->readings_staging, s->readings_words);
    hs_shm_seq_write_end(&s->state->seq, odd);

    /* seq_cst store then seq_cst load, paired with the client's seq_cst waiters increment and
     * re-check: either we see the waiter, or the waiter sees the new tick (no lost wake-up). */
    atomic_store_explicit(&s->hdr->tick_futex, (uint32_t)tick, memory_order_seq_cst);
    if (atomic_load_explicit(&s->hdr->waiters, memory_order_seq_cst))
        syscall(SYS_futex, &s->hdr->tick_futex, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    hs__shm_guard_leave(&scope);
}
