/* Live control of a running bench (scenarios/README.md, "Live control"): one-line commands
 * read from the bench's control socket, parsed and checked in full on the socket's thread,
 * then handed to the tick through a preallocated single-producer single-consumer queue and
 * applied at the next tick boundary by the control stage (a bench stage after the scenario's).
 * Injected scenario steps (inject) and scenario files (scenario start) are checked by the
 * scenario's own parser and binding on the socket's thread (hilsim/scenario_live.h); the queue
 * carries only their bound slot or compiled scenario, and the stage plays them.
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

#define HS_CTL_LINE_MAX 1024       /* one command line, newline included */
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
    HS_CTL_INJECT,          /* a scenario step (text); queued as its bound slot */
    HS_CTL_SCENARIO_START,  /* a scenario file (file, junit, json); queued as the scenario */
    HS_CTL_SCENARIO_STOP,   /* the running scenario ends at the next tick */
    HS_CTL_SCENARIO_STATUS, /* never queued */
    HS_CTL_STATE,           /* never queued: the tick copies the plant on request */
    HS_CTL_KIND_MAX
};

/* Part of the parsed line: text at line + off, len bytes (len 0: not given). */
struct hs_ctl_arg {
    uint16_t off, len;
};

struct hs_scenario;

/* A checked command: every index resolved, every number finite and in range. */
struct hs_ctl_cmd {
    enum hs_ctl_kind kind;
    uint32_t body, link; /* push: world body and model link */
    uint32_t joint;      /* faults: bench joint */
    double force_n[3];
    double value; /* state: 1 for JSON; push: duration s; offset: rad (or m); derate: kept share in
                     [0, 1] */
    /* inject: the step mapping; scenario start: the file and the verdict files (absolute) */
    struct hs_ctl_arg text, file, junit, json;
    /* filled by the server before queueing: inject's bound slot, start's compiled scenario */
    uint32_t slot;
    struct hs_scenario *scenario;
    /* inject and scenario start: the recording's number for the step text or scenario file
     * the socket thread saved (live-step-N.yaml, live-scenario-N.yaml; 0: none saved). The
     * tick posts it as a HS_REC_EV_LIVE event when it applies the command. */
    uint32_t rec_seq;
};

/* How names resolve: the bench's (hs_ctl_bench_names) or a table in the tests. Each returns
 * the index (>= 0), -ENOENT when unknown, -EEXIST when a link name is in several models. */
struct hs_ctl_names {
    void *ctx;
    int (*link)(void *ctx, const char *name, uint32_t *ret_body, uint32_t *ret_link);
    int (*joint)(void *ctx, const char *name);
    /* Optional (may be NULL): the i-th valid name as commands take it (joint false: links, true:
     * joints) into buf: 0, or -ENOENT past the last. An unknown name's error lists them and
     * offers the closest ("did you mean"). */
    int (*name)(void *ctx, bool joint, uint32_t i, char *buf, size_t size);
};

/* Any thread: parses one line (trailing newline allowed; at most HS_CTL_LINE_MAX bytes, NUL
 * ends it early). 0 with *ret filled, or -EINVAL with one line (no newline) in err saying what
 * is wrong. Never reads past size. */
int hs_ctl_parse(const char *line, size_t size, const struct hs_ctl_names *names,
                 struct hs_ctl_cmd *ret, char *err, size_t errsize);
/* Any thread: the scenario step a short command (push, fault sensor, fault actuator) stands
 * for, as one YAML flow mapping for hs_scenario_live_prepare: its length, -EINVAL for another
 * kind, -ENAMETOOLONG when size is too small. */
int hs_ctl_step_text(const struct hs_ctl_cmd *c, const struct hs_bench *b, char *buf, size_t size);
/* Names of a bench: links as "LINK" (unique across the models) or "MODEL/LINK". */
void hs_ctl_bench_names(struct hs_bench *bench, struct hs_ctl_names *ret);

/* A client's input on the control socket: bytes in, whole lines out (ctl_frame.c). A line
 * is at most HS_CTL_LINE_MAX bytes, newline included; a client whose buffer fills without
 * one has sent a line too long to be a command. Zero-initialised. */
struct hs_ctl_inbuf {
    char in[HS_CTL_LINE_MAX + 1];
    size_t have, taken;
};
/* Where the next bytes go (*ret_at) and how many fit; 0 when full. */
size_t hs_ctl_inbuf_room(const struct hs_ctl_inbuf *b, char **ret_at);
void hs_ctl_inbuf_added(struct hs_ctl_inbuf *b, size_t n); /* n bytes were written there */
/* The next whole line into line (HS_CTL_LINE_MAX + 1 bytes: the line, newline included, then
 * a NUL) with its length: 1; 0 when no whole line is in yet; -E2BIG when more than
 * HS_CTL_LINE_MAX bytes came without a newline among the first HS_CTL_LINE_MAX. */
int hs_ctl_inbuf_line(struct hs_ctl_inbuf *b, char *line, size_t *ret_len);

/* Counters, any thread (relaxed atomics written by their one owner). */
struct hs_ctl_counters {
    uint64_t accepted; /* queued for the tick (socket thread) */
    uint64_t rejected; /* malformed, unknown or refused (socket thread) */
    uint64_t queue_full;
    uint64_t slots_full;   /* injected steps refused: every live step slot was in use */
    uint64_t unauthorised; /* connections refused by the peer credential check */
    uint32_t live_steps;   /* injected steps on the timeline now */
    uint64_t applied;      /* applied at a tick boundary (tick thread) */
    uint64_t state_copies; /* `state` requests the tick has answered with a copy (tick thread) */
    uint64_t last_applied_tick;
    uint64_t tick; /* the last tick the stage saw (0: none yet; warm-up ticks do not count) */
};

/* The tick loop's counters as of the last tick boundary, published by the tick (a seqlock the
 * control stage writes in its readings phase). */
struct hs_ctl_loop {
    uint64_t tick; /* the bench tick that published them (0: not yet) */
    uint64_t ticks, last_tick, overruns, missed_periods, lockstep_timeouts;
    int64_t worst_tick_ns;
    bool safe_hold, running;
};

struct hs_ctl_stage;
/* init only: allocates the queue, the per-joint fault table and the live step slots
 * (HS_SCENARIO_LIVE_SLOTS). */
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
void hs_ctl_stage_count_unauthorised(struct hs_ctl_stage *s);
void hs_ctl_stage_count_slots_full(struct hs_ctl_stage *s);
/* init only: fill(ctx, ret) runs on the tick thread in the readings phase (RT-safe: atomic
 * loads) and its result is published for hs_ctl_stage_loop. */
void hs_ctl_stage_set_loop_source(struct hs_ctl_stage *s,
                                  void (*fill)(void *ctx, struct hs_ctl_loop *ret), void *ctx);
/* Any thread: the last published loop counters; false when none was published yet. */
bool hs_ctl_stage_loop(const struct hs_ctl_stage *s, struct hs_ctl_loop *ret);
/* One thread at a time, never the tick's (the control worker): the plant as of the next tick
 * boundary after the call (links' world poses, joints' true q and dq, motor torque and the
 * encoder as reported, sensor readings as reported) and the scenario started live (its steps
 * and expectations as of that tick, or its verdict once decided; src/ctl/README.md), as text
 * or one JSON object, into buf.
 * The tick copies it into preallocated storage only when asked (ctl_state.c). Its length;
 * -ETIMEDOUT when no tick boundary came within timeout_ms (the loop stopped, or lockstep
 * waits for its controller); -ENOSPC when buf is too small, *ret_need (when not NULL) then the
 * size that holds it (a bench of many robots outgrows any fixed buffer), and
 * hs_ctl_stage_state_again formats the same copy into a larger one. */
int hs_ctl_stage_state(struct hs_ctl_stage *s, int timeout_ms, bool json, char *buf, size_t size,
                       size_t *ret_need);
int hs_ctl_stage_state_again(struct hs_ctl_stage *s, bool json, char *buf, size_t size);
/* init only: take(ctx, ret) runs on the tick thread when it copies a `state` request (RT-safe:
 * the tick loop's window of phase durations since the last copy, hs_tick_loop_take_window);
 * `state` shows their percentiles. Unset: it shows none. */
struct hs_tick_window;
void hs_ctl_stage_set_phase_source(struct hs_ctl_stage *s,
                                   void (*take)(void *ctx, struct hs_tick_window *ret), void *ctx);
/* init only: the bench's CAN module (NULL: none), for `state` to show its buses. */
struct hs_bench_can;
void hs_ctl_stage_set_can(struct hs_ctl_stage *s, const struct hs_bench_can *can);
/* Any thread but the tick's: the CAN buses as the tick last saw them (ctl_can.c), the text
 * `status` ends with ("can none", or "can main (can0) error-active drops 0, aux (can1) bus-off
 * drops 3"). Its length, or -ENOSPC (buf then holds the buses that fit, terminated). */
int hs_ctl_can_text(const struct hs_bench_can *can, char *buf, size_t size);
/* The same buses as a jansson array for `state --json`: [{"name","interface","state","drops"}]
 * (a new reference; NULL when out of memory). struct json_t is jansson's json_t. */
struct json_t;
struct json_t *hs_ctl_can_json(const struct hs_bench_can *can);
/* Socket thread: the live step slots (prepare, discard, reap). */
struct hs_scenario_live *hs_ctl_stage_live(struct hs_ctl_stage *s);

/* A scenario file started live. Its states: idle -> starting (queued) -> running (the tick
 * plays it in this stage's phases) -> ended (it played to its end, or `scenario stop` ended
 * it: the tick gave it back) -> idle (the socket thread took it to write its verdict). */
enum hs_ctl_scen_state {
    HS_CTL_SCEN_IDLE,
    HS_CTL_SCEN_STARTING,
    HS_CTL_SCEN_RUNNING,
    HS_CTL_SCEN_ENDED,
    HS_CTL_SCEN_STATE_MAX
};
enum hs_ctl_scen_state hs_ctl_stage_scenario_state(const struct hs_ctl_stage *s);
/* Socket thread: queues a compiled scenario for the tick. 0; -EBUSY when one is not idle;
 * -ENOBUFS when the queue is full (the caller keeps the scenario). */
int hs_ctl_stage_start_scenario(struct hs_ctl_stage *s, struct hs_scenario *scen);
/* The same, with the recording's number of the file's copy (live-scenario-N.yaml). */
int hs_ctl_stage_start_scenario_rec(struct hs_ctl_stage *s, struct hs_scenario *scen,
                                    uint32_t rec_seq);
/* Socket thread: the scenario the tick gave back, or NULL; the caller owns it then. With
 * no_tick (the loop has stopped for good) a running or queued scenario is taken too.
 * *ret_stopped: `scenario stop` (or no_tick) ended it before its end. */
struct hs_scenario *hs_ctl_stage_take_scenario(struct hs_ctl_stage *s, bool no_tick,
                                               bool *ret_stopped);
/* The thread that reads `state` (the control worker), after hs_scenario_finish on the
 * scenario it took: its verdict word ("PASS", "FAIL", "ERROR") and results, copied, are what
 * `state` shows for it from then on (its "always" windows close only there). */
void hs_ctl_stage_scenario_decided(struct hs_ctl_stage *s, const struct hs_scenario *scen,
                                   const char *verdict);

/* Who may use a bench's control socket: root, the bench's own user, or a member of the
 * socket's group (the peer's primary group or one of its supplementary groups). Pure, for
 * tests; the server reads the peer's credentials with SO_PEERCRED and SO_PEERGROUPS. 0 when
 * allowed, -EACCES with one line in err saying who was refused and why. */
struct hs_ctl_peer {
    uint32_t pid, uid, gid;
    const uint32_t *groups; /* supplementary groups, ngroups of them */
    uint32_t ngroups;
};
int hs_ctl_peer_allowed(const struct hs_ctl_peer *peer, uint32_t bench_uid, uint32_t socket_gid,
                        char *err, size_t errsize);

/* The stage's ops, for tests that drive a bench by hand. */
extern const struct hs_bench_io_ops hs_ctl_stage_ops;

/* The control socket's path for a bench: the file hilsim-BENCH.ctl (the shm segment's name plus
 * .ctl) in $HILSIM_CTL_DIR if set, else /run/hilsim when it is a writable directory, else
 * $XDG_RUNTIME_DIR, else /tmp. existing (the client): the first of those where the socket
 * exists, as the server may have had rights the client lacks; when none has it, the server's
 * choice. 0, -EINVAL for a bench name with '/', -ENAMETOOLONG past a sockaddr_un. */
int hs_ctl_socket_path(const char *bench, bool existing, char *buf, size_t size);
/* A control socket left behind by a bench that died (SIGKILL) is removed: 1 when removed, 0
 * when there is none, -EADDRINUSE when a live server answers on it, -EEXIST when the path is
 * not a socket. The server at start and `hilsim shm remove` call it. */
int hs_ctl_socket_take(const char *path);

#endif
