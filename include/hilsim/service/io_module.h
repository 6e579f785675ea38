/* The registry of bench I/O modules as the service runs them.
 *
 * An I/O module (CAN, shared memory, and the stages that follow: fault injection, recording,
 * the control socket) has two halves: its tick half lives in src/bench or drivers/ and plugs
 * into the bench with hs_bench_add_io; its service half is one struct hs_service_io here, in
 * its own file io_module_<name>.c, listed once in io_registry.c. The runner knows no module by
 * name: it attaches each in registry order and calls the optional hooks below, so adding a
 * module touches the registry and the module's own files only.
 *
 * Threads: attach and summary on the main thread (init / after the loop); emergency from the
 * emergency signal handler (any thread, async-signal-safe); supervise and status on the
 * supervisor thread while the loop runs; input_drops after the loop. */
#ifndef HS_SERVICE_IO_MODULE_H
#define HS_SERVICE_IO_MODULE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hilsim/diag.h"

struct hs_runner;

struct hs_service_io {
    const char *name; /* static: logs and the emergency hook's name */
    /* init only. When the config asks for the module: build it, hand it to the bench
     * (hs_bench_add_io; the bench owns it from then on) and set *ret_state to its handle for
     * the hooks below. When it does not: leave *ret_state NULL and return 0. Else -errno with
     * d set (-EINVAL: the config is at fault). */
    int (*attach)(struct hs_runner *r, void **ret_state, struct hs_diag *d);
    /* Async-signal-safe: the module's part of an emergency stop (stop frames from memory it
     * allocated at attach, a stopped flag in shared memory). NULL: nothing to do. */
    void (*emergency)(struct hs_runner *r, void *state);
    /* Supervisor thread, about once a second: poll what needs polling, log changes. */
    void (*supervise)(void *state, int64_t now_ns);
    /* Supervisor thread: "; ..." appended to systemd's STATUS= line (empty: nothing to say). */
    void (*status)(const void *state, char *buf, size_t size);
    /* Main thread, after the loop: the module's lines of the run's summary. */
    void (*summary)(const void *state, FILE *out);
    /* After the loop: inputs lost before the module could read them (kernel receive queue
     * overflows), which fail a timing validation run. */
    uint64_t (*input_drops)(const void *state);
};

#define HS_SERVICE_IO_MAX 8

/* The registry of bench I/O modules, one line each: X(name) is hs_service_io_<name>, defined
 * in its module's file (src/service/io_module_<module>.c). The order is attach order: the bench
 * runs its modules' phases and safe stops in it.
 *   record       first: creates the recording and taps the buses as they open
 *   can          boards see their nodes before a local controller attaches over shm
 *   shm
 *   scenario     its stage sees what CAN and shm wrote
 *   ctl          live control: its stage after the scenario's
 *   record_tick  last: the recording's inputs phase must come after every module's */
#define HS_SERVICE_IO_MODULES(X) X(record) X(can) X(shm) X(scenario) X(ctl) X(record_tick)

#define HS_SERVICE_IO_DECL(name) extern const struct hs_service_io hs_service_io_##name;
HS_SERVICE_IO_MODULES(HS_SERVICE_IO_DECL)
#undef HS_SERVICE_IO_DECL

/* The registry as a table (io_registry.c), in its order. */
extern const struct hs_service_io *const hs_service_io_modules[];
extern const uint32_t hs_service_io_count;

#endif
