/* Surviving a client that truncates the segment under the server.
 *
 * Clients must write the command section, so the segment is a group-writable file in /dev/shm,
 * and anyone who may write it may also ftruncate() it. Once it is shorter than the server's
 * mapping, the server's next load or store there raises SIGBUS. Linux offers no way to forbid
 * that on a named tmpfs file (file seals exist only for memfds, which a client of another user
 * could not open by name), and checking the size with fstat() before each access leaves a window
 * between check and access. So the server does not try to prevent the fault; it absorbs it:
 *
 * A SIGBUS handler looks at the faulting address. When it lies in a live server's mapping, the
 * handler maps anonymous zero pages over the whole mapping (mmap with MAP_FIXED, one syscall,
 * async-signal-safe on Linux) and returns; the faulting instruction runs again on the anonymous
 * memory and the tick goes on. Zeroes read as "no owner, no command": every joint takes its safe
 * behaviour. The handler counts the hit; the next publish sees the count change, counts the abuse
 * and repairs the segment (shm_server.c): sizes the file again, maps it again, rewrites header and
 * names. A fault anywhere else is not ours: the handler puts the previous disposition back and
 * returns, so the fault happens again and is handled as if this handler did not exist.
 *
 * Cost on the tick: nothing while no client misbehaves (one relaxed load in publish). */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <unistd.h>

#include "shm_server_internal.h"

#define GUARD_SLOTS 8

struct guard_slot {
    _Atomic uintptr_t base; /* 0: free */
    _Atomic uint64_t size;
    _Atomic uint64_t hits;
};

static struct guard_slot g_slots[GUARD_SLOTS];
static struct sigaction g_prev;

/* async-signal-safe */
int hs_shm_server_absorb_fault(const siginfo_t *si)
{
    if (!si || si->si_code <= 0) /* sent by kill() or sigqueue(), not a fault */
        return 0;
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t base = atomic_load_explicit(&g_slots[i].base, memory_order_acquire);
        uint64_t size = atomic_load_explicit(&g_slots[i].size, memory_order_relaxed);
        if (base <= 1 || a < base || a - base >= size)
            continue;
        void *p = mmap((void *)base, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p == MAP_FAILED)
            return 0;
        atomic_fetch_add_explicit(&g_slots[i].hits, 1, memory_order_release);
        return 1;
    }
    return 0;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    if (hs_shm_server_absorb_fault(si)) {
        errno = saved;
        return;
    }
    /* Not ours: the previous disposition handles the repeated fault (or the re-raised signal). */
    sigaction(sig, &g_prev, NULL);
    if (!si || si->si_code <= 0)
        raise(sig);
    errno = saved;
}

int hs__shm_guard_add(unsigned char *base, uint64_t size, struct hs_shm_guard **ret_guard)
{
    /* (Re)installed whenever the current handler is not ours: something installed since (a
     * test harness, a library) gets chained behind it rather than silently disarming the guard. */
    struct sigaction cur;
    if (sigaction(SIGBUS, NULL, &cur) < 0)
        return -errno;
    if (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != on_sigbus) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        g_prev = cur;
        if (sigaction(SIGBUS, &sa, NULL) < 0)
            return -errno;
    }
    for (int i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t expect = 0;
        if (atomic_compare_exchange_strong(&g_slots[i].base, &expect, (uintptr_t)1)) {
            atomic_store_explicit(&g_slots[i].hits, 0, memory_order_relaxed);
            atomic_store_explicit(&g_slots[i].size, size, memory_order_relaxed);
            atomic_store_explicit(&g_slots[i].base, (uintptr_t)base, memory_order_release);
            *ret_guard = (struct hs_shm_guard *)&g_slots[i];
            return 0;
        }
    }
    return -ENOSPC;
}

void hs__shm_guard_remove(struct hs_shm_guard *g)
{
    if (g)
        atomic_store_explicit(&((struct guard_slot *)g)->base, 0, memory_order_release);
}

/* RT-safe: one relaxed load. */
uint64_t hs__shm_guard_hits(const struct hs_shm_guard *g)
{
    return atomic_load_explicit(&((const struct guard_slot *)g)->hits, memory_order_acquire);
}

/* async-signal-safe */
void hs_shm_server_mark_all_stopped(void)
{
    for (int i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t base = atomic_load_explicit(&g_slots[i].base, memory_order_acquire);
        if (base > 1) {
            struct hs_shm_header *h = (struct hs_shm_header *)base;
            atomic_store_explicit(&h->server_state, HS_SHM_SERVER_STOPPED, memory_order_seq_cst);
            atomic_fetch_add_explicit(&h->tick_futex, 1, memory_order_seq_cst);
            syscall(SYS_futex, &h->tick_futex, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
        }
    }
}
