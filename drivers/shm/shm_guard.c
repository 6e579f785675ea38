/* Surviving a client that truncates the segment under the server.
 *
 * Clients must write the command section, so the segment is a group-writable file in /dev/shm,
 * and anyone who may write it may also ftruncate() it. Once it is shorter than the server's
 * mapping, the server's next load or store there raises SIGBUS. Linux offers no way to forbid
 * that on a named tmpfs file (file seals exist only for memfds, which a client of another user
 * could not open by name), and checking the size with fstat() before each access leaves a window
 * between check and access. So the server does not try to prevent the fault; it absorbs it:
 *
 * A SIGBUS handler looks at the faulting address. When it lies in the mapping of a server whose
 * guarded call this thread is in, the handler maps anonymous zero pages over the whole mapping
 * (mmap with MAP_FIXED, one syscall, async-signal-safe on Linux) and returns; the faulting
 * instruction runs again on the anonymous memory and the tick goes on. Zeroes read as "no owner,
 * no command": every joint takes its safe behaviour. The handler counts the hit in the server's
 * guard; the next publish sees the count change, counts the abuse and repairs the segment
 * (shm_server.c): sizes the file again, maps it again, rewrites header and names. A fault
 * anywhere else is not ours: the handler puts the previous disposition back and returns, so the
 * fault happens again and is handled as if this handler did not exist.
 *
 * Who owns what. A fault on a memory access is delivered to the thread that made it (POSIX:
 * a signal caused by a thread's own action goes to that thread), so the state the handler needs
 * is the thread's, not the process's: each server owns its guard (mapping, size, hits), and
 * every server call that touches the mapping runs inside a scope (hs__shm_guard_enter/leave, a
 * struct on the caller's stack) that a thread-local pointer links to, innermost first. The
 * handler reads only that chain. What must stay process-wide is the disposition itself:
 * sigaction() sets one handler per signal for the whole process, so the handler and the
 * disposition it chains to (g_prev) are the one process-global piece; nothing in it grows with
 * the number of servers, so it has no table to fill.
 *
 * Cost on the tick: two thread-local stores per guarded call, and one relaxed load in publish
 * while no client misbehaves. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "shm_server_internal.h"

/* The innermost guarded scope of this thread. initial-exec: the handler's read is then a plain
 * load from the thread pointer, with no lazy allocation that a signal handler must not do. */
static _Thread_local _Atomic(struct hs_shm_guard_scope *) tl_scope
    __attribute__((tls_model("initial-exec")));

/* The disposition before ours, for faults that are not ours (process-wide, as dispositions
 * are); written under g_install at init only. */
static struct sigaction g_prev;
static pthread_mutex_t g_install = PTHREAD_MUTEX_INITIALIZER;

/* async-signal-safe */
int hs_shm_server_absorb_fault(const siginfo_t *si)
{
    if (!si || si->si_code <= 0) /* sent by kill() or sigqueue(), not a fault */
        return 0;
    uintptr_t a = (uintptr_t)si->si_addr;
    for (struct hs_shm_guard_scope *sc = atomic_load_explicit(&tl_scope, memory_order_relaxed); sc;
         sc = sc->outer) {
        struct hs_shm_guard *g = sc->guard;
        uintptr_t base = (uintptr_t)g->base;
        if (a < base || a - base >= g->size)
            continue;
        void *p = mmap(g->base, g->size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p == MAP_FAILED)
            return 0;
        atomic_fetch_add_explicit(&g->hits, 1, memory_order_release);
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

int hs__shm_guard_init(struct hs_shm_guard *g, unsigned char *base, uint64_t size)
{
    /* (Re)installed whenever the current handler is not ours: something installed since (a
     * test harness, a library) gets chained behind it rather than silently disarming the guard. */
    int r = 0;
    pthread_mutex_lock(&g_install);
    struct sigaction cur;
    if (sigaction(SIGBUS, NULL, &cur) < 0) {
        r = -errno;
    } else if (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != on_sigbus) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        g_prev = cur;
        if (sigaction(SIGBUS, &sa, NULL) < 0)
            r = -errno;
    }
    pthread_mutex_unlock(&g_install);
    if (r < 0)
        return r;
    g->base = base;
    g->size = size;
    atomic_store_explicit(&g->hits, 0, memory_order_relaxed);
    return 0;
}

/* async-signal-safe, RT-safe: a handler may enter a scope on a thread that is inside another;
 * the signal fences keep the compiler from moving the guarded accesses out of the scope. */
void hs__shm_guard_enter(struct hs_shm_guard_scope *sc, struct hs_shm_guard *g)
{
    sc->guard = g;
    sc->outer = atomic_load_explicit(&tl_scope, memory_order_relaxed);
    atomic_store_explicit(&tl_scope, sc, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
}

void hs__shm_guard_leave(struct hs_shm_guard_scope *sc)
{
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&tl_scope, sc->outer, memory_order_relaxed);
}

/* RT-safe: one load. */
uint64_t hs__shm_guard_hits(const struct hs_shm_guard *g)
{
    return atomic_load_explicit(&g->hits, memory_order_acquire);
}
