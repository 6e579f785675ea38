/* Live control of a running bench (scenarios/README.md, "Live control"): one-line commands
 * read from the bench's control socket, parsed and checked in full on the socket's thread,
 * then handed to the tick through a preallocated single-producer single-consumer queue and
 * applied at the next tick boundary by the control stage (a bench stage after the scenario's).
 *
 * Threads: hs_ctl_parse and the producer side of the queue run on the control socket's thread;
 * the stage (commands, substep, readings) on the tick thread: RT-safe, pops at most
 * HS_CTL_POP_PER_TICK commands a tick, no allocation, no stdio, no locks. */
#ifndef HS_CTL_H
#define HS_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/bench.h"

#define HS_CTL_LINE_MAX 256        /* one command line, newline included */
#define HS_CTL_QUEUE_LEN 64        /* commands in flight to the tick (power of two) */
#define HS_CTL_POP_PER_TICK 4      /* commands the tick applies at one boundary at most */
#define HS_CTL_FORCE_MAX_N 1e5     /* |F| of a push */
#define HS_CTL_DURATION_MAX_S 60.0 /* a push's duration */
#define HS_CTL_OFFSET_MAX 1e3      /* a sensor offset, rad (or m) */

enum hs_ctl_kind {
    HS_CTL_STATUS,
    HS_CTL_PUSH,
    HS_CTL_SENSOR_STUCK,
    HS_CTL_SENSOR_OFFSET,
    HS_CTL_ACT_DERATE,
    HS_CTL_ACT_NO_RESPONSE,
    HS_CTL_CLEAR,
    HS_CTL_STOP,
    HS_CTL_KIND_MAX
};

/* A checked command: every index resolved, every number finite and in range. */
struct hs_ctl_cmd {
    enum hs_ctl_kind kind;
    uint32_t body, link; /* push: world body and model link */
    uint32_t joint;      /* faults: bench joint */
    double force_n[3];
    double value; /* push: duration s; offset: rad (or m); derate: kept share in [0, 1] */
};

/* How names resolve: the bench's (hs_ctl_bench_names) or a table in the tests. Each returns
 * the index (>= 0), -ENOENT when unknown, -EEXIST when a link name is in several models. */
struct hs_ctl_names {
    void *ctx;
    int (*link)(void *ctx, const char *name, uint32_t *ret_body, uint32_t *ret_link);
    int (*joint)(void *ctx, const char *name);
};

/* Any thread: parses one line (trailing newline allowed; at most HS_CTL_LINE_MAX bytes, NUL
 * ends it early). 0 with *ret filled, or -EINVAL with one line (no newline) in err saying what
 * is wrong. Never reads past size. */
int hs_ctl_parse(const char *line, size_t size, const struct hs_ctl_names *names,
                 struct hs_ctl_cmd *ret, char *err, size_t errsize);
/* Names of a bench: links as "LINK" (unique across the models) or "MODEL/LINK". */
void hs_ctl_bench_names(struct hs_bench *bench, struct hs_ctl_names *ret);

/* Counters, any thread (relaxed atomics written by their one owner). */
struct hs_ctl_counters {
    uint64_t accepted; /* queued for the tick (socket thread) */
    uint64_t rejected; /* malformed, unknown or refused (socket thread) */
    uint64_t queue_full;
    uint64_t applied; /* applied at a tick boundary (tick thread) */
    uint64_t last_applied_tick;
    uint64_t tick; /* the last tick the stage saw (0: none yet; warm-up ticks do not count) */
    uint32_t pushes_active, faults_active;
};

struct hs_ctl_stage;
/* init only: allocates the queue and the per-joint fault table. */
int hs_ctl_stage_create(struct hs_bench *bench, struct hs_ctl_stage **ret);
/* init only: hands the stage to the bench (its destroy frees it). */
int hs_ctl_stage_attach(struct hs_ctl_stage *s, struct hs_bench *bench);
void hs_ctl_stage_destroy(struct hs_ctl_stage *s); /* accepts NULL; not once attached */
/* init only: fn(arg) runs first when the stage is destroyed (the socket thread stops there). */
void hs_ctl_stage_on_destroy(struct hs_ctl_stage *s, void (*fn)(void *), void *arg);
/* Producer side, one thread only: 0 or -ENOBUFS when the queue is full. */
int hs_ctl_stage_push(struct hs_ctl_stage *s, const struct hs_ctl_cmd *cmd);
void hs_ctl_stage_count_rejected(struct hs_ctl_stage *s);
void hs_ctl_stage_counters(const struct hs_ctl_stage *s, struct hs_ctl_counters *ret);
/* The stage's ops, for tests that drive a bench by hand. */
extern const struct hs_bench_io_ops hs_ctl_stage_ops;

/* The control socket's path for a bench: the file hilsim-BENCH.ctl (the shm segment's name plus
 * .ctl) in $HILSIM_CTL_DIR if set, else /run/hilsim when it is a writable directory, else
 * $XDG_RUNTIME_DIR, else /tmp. existing (the client): the first of those where the socket
 * exists, as the server may have had rights the client lacks; when none has it, the server's
 * choice. 0, -EINVAL for a bench name with '/', -ENAMETOOLONG past a sockaddr_un. */
int hs_ctl_socket_path(const char *bench, bool existing, char *buf, size_t size);

#endif
