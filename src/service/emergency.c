#include "emergency.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct hook {
    const char *name;
    hs_emergency_fn fn;
    void *ctx;
};

static struct hook hooks[HS_EMERGENCY_MAX_HOOKS];
static _Atomic unsigned nhooks;
/* ARMED -> RUNNING (one caller wins) -> DONE; clear returns to ARMED. */
enum { ARMED, RUNNING, DONE };
static _Atomic int state = ARMED;

static const int handled[] = {SIGQUIT, SIGABRT, SIGALRM, SIGUSR2, SIGSEGV, SIGBUS, SIGFPE, SIGILL};

int hs__emergency_register(const char *name, hs_emergency_fn fn, void *ctx)
{
    unsigned n = atomic_load(&nhooks);
    if (n == HS_EMERGENCY_MAX_HOOKS)
        return -ENOSPC;
    hooks[n] = (struct hook){name, fn, ctx};
    atomic_store_explicit(&nhooks, n + 1, memory_order_release); /* the hook is complete */
    return 0;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* async-signal-safe */
}

void hs__emergency_clear(void)
{
    while (atomic_load(&state) == RUNNING)
        nap_ms(10);
    atomic_store(&nhooks, 0);
    atomic_store(&state, ARMED);
}

int hs__emergency_run(void)
{
    int expect = ARMED;
    if (!atomic_compare_exchange_strong(&state, &expect, RUNNING))
        return 0;
    unsigned n = atomic_load_explicit(&nhooks, memory_order_acquire);
    for (unsigned i = 0; i < n; i++)
        hooks[i].fn(hooks[i].ctx);
    atomic_store(&state, DONE);
    return (int)n;
}

void hs__emergency_signals(sigset_t *ret)
{
    sigemptyset(ret);
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
        sigaddset(ret, handled[i]);
}

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGQUIT:
        return "SIGQUIT";
    case SIGABRT:
        return "SIGABRT";
    case SIGALRM:
        return "SIGALRM";
    case SIGUSR2:
        return "SIGUSR2";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    default:
        return "signal";
    }
}

/* write(2) in pieces: the only output a signal handler may make. */
static void say(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w, n -= (size_t)w;
    }
}

static void on_fatal(int sig)
{
    int saved = errno;
    unsigned n = atomic_load_explicit(&nhooks, memory_order_acquire);
    int ran = hs__emergency_run();
    say("hilsim: ");
    say(sig_name(sig));
    if (ran > 0) {
        say(": emergency stop (");
        for (unsigned i = 0; i < n; i++) {
            say(i ? ", " : "");
            say(hooks[i].name);
        }
        say(") done");
    } else if (n) {
        /* Another thread is running the hooks (or ran them): give it a moment to finish. */
        for (int i = 0; i < 100 && atomic_load(&state) == RUNNING; i++)
            nap_ms(10);
        say(": emergency stop already made");
    } else {
        say(": no I/O to stop");
    }
    say("; exiting with the signal\n");
    /* Die of the same signal: it is blocked while this handler runs, so raise() leaves it
     * pending and the default action takes the process as the handler returns (a fault that
     * came from an instruction would also fault again on return). */
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    // cppcheck-suppress unreachableCode ; raise() returns: the signal is blocked in its handler
    errno = saved;
}

int hs__emergency_install(void)
{
    static char alt[64 * 1024];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
    if (sigaltstack(&ss, NULL) < 0)
        return -errno;
    struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_ONSTACK};
    /* A second fatal signal while the hooks run waits: they are short and bounded. */
    hs__emergency_signals(&sa.sa_mask);
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
        if (sigaction(handled[i], &sa, NULL) < 0)
            return -errno;
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigemptyset(&ign.sa_mask);
    if (sigaction(SIGPIPE, &ign, NULL) < 0)
        return -errno;
    return 0;
}
