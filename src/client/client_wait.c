/* Lockstep: waiting for the next published tick on the futex word. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"

static int stopped(const struct hs_client *c)
{
    return atomic_load_explicit(&c->hdr->server_state, memory_order_acquire) ==
           HS_SHM_SERVER_STOPPED;
}

/* Waits while the futex word equals last, until abs_deadline (CLOCK_MONOTONIC). Returns the new
 * word, or last when the deadline passed or the server stopped. */
/* A read-only client cannot raise waiters, and the server wakes nobody without it: it looks at
 * the word once a tick period (at least 100 us) until it changes or the deadline passes. */
static uint32_t poll_change(struct hs_client *c, uint32_t last, int64_t deadline_ns)
{
    int64_t step = (int64_t)c->hdr->tick_period_ns;
    if (step < 100000)
        step = 100000;
    uint32_t cur;
    for (;;) {
        cur = atomic_load_explicit(&c->hdr->tick_futex, memory_order_acquire);
        int64_t now = hs_rt_now_ns();
        if (cur != last || stopped(c) || now >= deadline_ns)
            break;
        int64_t ns = deadline_ns - now < step ? deadline_ns - now : step;
        struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
        nanosleep(&ts, NULL);
    }
    return cur;
}

static uint32_t futex_wait_change(struct hs_client *c, uint32_t last, int64_t deadline_ns)
{
    if (c->readonly)
        return poll_change(c, last, deadline_ns);
    _Atomic uint32_t *word = &c->hdr->tick_futex;
    struct timespec abs = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    uint32_t cur;
    atomic_fetch_add_explicit(&c->hdr->waiters, 1, memory_order_seq_cst);
    for (;;) {
        cur = atomic_load_explicit(word, memory_order_seq_cst);
        if (cur != last || stopped(c))
            break;
        /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so spurious wake-ups
         * and EINTR never extend the wait. Not FUTEX_PRIVATE: the word is in a shared mapping. */
        long r =
            syscall(SYS_futex, word, FUTEX_WAIT_BITSET, last, &abs, NULL, FUTEX_BITSET_MATCH_ANY);
        /* EAGAIN (the word already changed) and EINTR re-check; anything else (ETIMEDOUT, or
         * an error that would repeat) ends the wait with what the word holds now. */
        if (r == -1 && errno != EAGAIN && errno != EINTR) {
            cur = atomic_load_explicit(word, memory_order_seq_cst);
            break;
        }
    }
    atomic_fetch_sub_explicit(&c->hdr->waiters, 1, memory_order_seq_cst);
    return cur;
}

int hs_client_wait_tick(struct hs_client *c, int64_t timeout_ns, uint64_t *ret_tick,
                        uint32_t *ret_missed)
{
    hs_client_heartbeat(c);
    uint32_t last = c->last_futex;
    uint32_t cur = atomic_load_explicit(&c->hdr->tick_futex, memory_order_acquire);
    if (cur == last && !stopped(c) && timeout_ns > 0)
        cur = futex_wait_change(c, last, hs_rt_now_ns() + timeout_ns);
    if (stopped(c))
        return -ESHUTDOWN;
    if (cur == last) {
        /* Only after a timeout (a stat and a /proc read): a crashed server never says STOPPED,
         * and waiting on would time out forever even once a new server runs. */
        int gone = hs__client_server_gone(c);
        return gone < 0 ? gone : -ETIMEDOUT;
    }
    uint32_t delta = cur - last;
    c->last_futex = cur;
    c->last_tick += delta;
    c->missed_total += delta - 1;
    if (ret_tick)
        *ret_tick = c->last_tick;
    if (ret_missed)
        *ret_missed = delta - 1;
    return 0;
}

uint64_t hs_client_missed_ticks(const struct hs_client *c)
{
    return c->missed_total;
}
