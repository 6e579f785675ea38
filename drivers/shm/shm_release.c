/* Lockstep: the server waits for the command owner to release the next tick (futex on
 * release_futex, the mirror image of a client waiting on tick_futex). */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shm_server_internal.h"
#include "hilsim/rt/rt_clock.h"

/* Wrap-safe: the client released `tick` or a later one. */
static int released(uint32_t word, uint64_t tick)
{
    return (int32_t)(word - (uint32_t)tick) >= 0;
}

static int wait_release(struct hs_shm_server *s, uint64_t tick, int64_t deadline_ns)
{
    _Atomic uint32_t *word = &s->hdr->release_futex;
    uint32_t cur = atomic_load_explicit(word, memory_order_acquire);
    if (released(cur, tick))
        return 0;
    struct timespec abs = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    /* seq_cst flag store then re-load, paired with the client's seq_cst release store then flag
     * load: either we see the release, or the client sees us waiting and wakes us. */
    atomic_store_explicit(&s->hdr->release_waiting, 1, memory_order_seq_cst);
    int r = -ETIMEDOUT;
    /* Bounded: every pass either returns or sleeps in the kernel until the absolute deadline;
     * a client that keeps changing the word without releasing can only cost passes until then. */
    while (hs_rt_now_ns() < deadline_ns) {
        cur = atomic_load_explicit(word, memory_order_seq_cst);
        if (released(cur, tick)) {
            r = 0;
            break;
        }
        long e =
            syscall(SYS_futex, word, FUTEX_WAIT_BITSET, cur, &abs, NULL, FUTEX_BITSET_MATCH_ANY);
        if (e == -1 && errno != EAGAIN && errno != EINTR) {
            if (errno != ETIMEDOUT)
                r = -errno;
            break;
        }
    }
    if (r == -ETIMEDOUT && released(atomic_load_explicit(word, memory_order_seq_cst), tick))
        r = 0;
    atomic_store_explicit(&s->hdr->release_waiting, 0, memory_order_relaxed);
    return r;
}

int hs_shm_server_wait_release(struct hs_shm_server *s, uint64_t tick, int64_t deadline_ns)
{
    struct hs_shm_guard_scope scope;
    hs__shm_guard_enter(&scope, &s->guard);
    int r = wait_release(s, tick, deadline_ns);
    hs__shm_guard_leave(&scope);
    return r;
}
