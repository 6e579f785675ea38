/* Emergency stop on the way out of a process that is dying from a signal.
 *
 * `hilsim run` stops cleanly on SIGINT/SIGTERM (the supervisor thread takes them). Every other
 * signal that would end the process (SIGQUIT, SIGABRT from the systemd watchdog or abort(),
 * SIGALRM, SIGUSR2, and the faults SIGSEGV, SIGBUS, SIGFPE, SIGILL) goes through one handler
 * that runs the registered hooks once, writes one line to stderr and then dies of the same
 * signal with its default action (so systemd and the shell see the real cause and a core is
 * dumped where the signal asks for one). SIGPIPE is ignored: every socket write already uses
 * MSG_NOSIGNAL, and a closed stdout/stderr must not take the bench down (writes fail with
 * EPIPE instead).
 *
 * Hooks are the async-signal-safe part of each I/O module's safe stop: sending stop frames
 * from memory allocated before the loop over sockets already open (send with MSG_DONTWAIT),
 * raising a flag in shared memory. They may run on any thread, at any point of a tick, and
 * must not allocate, lock, use stdio or wait.
 *
 * Who registers what (init only, after the module is attached; the runner does it):
 *   can  hs_bench_can_emergency_stop (src/bench/io_can.c): one stop frame per MIT/ODrive node.
 *   shm  hs_bench_shm_mark_stopped (src/bench/io_shm.c): the segment's state says "stopped", so
 *        waiting clients get ESHUTDOWN at once. Registered by the runner after the emergency
 *        handler is installed, hence after it: the shm SIGBUS guard (installed when the
 *        segment is created) sees a truncating client's fault first and chains to this
 *        handler for any other SIGBUS.
 * Not RT: the registry is written at init only; the handler reads it lock-free. */
#ifndef HS_CLI_EMERGENCY_H
#define HS_CLI_EMERGENCY_H

#include <signal.h>

#define HS_EMERGENCY_MAX_HOOKS 8

typedef void (*hs_emergency_fn)(void *ctx); /* async-signal-safe */

/* init only: adds a hook; hooks run in registration order. name is a static string. 0 or
 * -ENOSPC. */
int hs__emergency_register(const char *name, hs_emergency_fn fn, void *ctx);
/* init only: forgets every hook, so nothing calls into modules about to be destroyed. If a
 * handler is running its hooks on another thread, waits for it (the process is then dying). */
void hs__emergency_clear(void);
/* Async-signal-safe, any thread: runs every hook, at most once per registration set (until
 * hs__emergency_clear). Returns the hooks run, 0 when they already ran or are running. */
int hs__emergency_run(void);
/* The signals the handler takes (SIGPIPE is not among them: it is ignored). */
void hs__emergency_signals(sigset_t *ret);
/* init only: installs the handler for hs__emergency_signals() (with an alternate stack for the
 * calling thread, so a stack overflow still gets its stop frames) and ignores SIGPIPE.
 * 0 or -errno. */
int hs__emergency_install(void);

#endif
