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

/* Registry order is attach order; the bench runs its modules' phases and safe stops in it. */
extern const struct hs_service_io *const hs_service_io_modules[];
extern const uint32_t hs_service_io_count;

/* The modules' service halves (io_module_<name>.c). */
extern const struct hs_service_io hs_service_io_can;
extern const struct hs_service_io hs_service_io_shm;
extern const struct hs_service_io hs_service_io_record;      /* first: creates, taps CAN */
extern const struct hs_service_io hs_service_io_record_tick; /* last: the tick half */
extern const struct hs_service_io hs_service_io_scenario;
extern const struct hs_service_io hs_service_io_ctl; /* after the scenario: its stage runs next */

#endif
