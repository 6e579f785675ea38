/* Server side of the shared-memory interface for local controllers (ABI: hilsim/shm_abi.h).
 *
 * Lifecycle: hs_shm_server_create() (init only: creates, sizes, fills, mlocks the segment) ->
 * per tick: fill hs_shm_server_joints()/imus()/fts(), hs_shm_server_publish(), and
 * hs_shm_server_read_commands() (both RT-safe: no allocation, no lock, no blocking) ->
 * hs_shm_server_destroy() (marks the segment stopped, wakes waiters, unlinks it).
 * One thread drives a server (the tick thread); the functions are not reentrant.
 *
 * Hostile clients. Group members map the segment writable, so they can scribble over it and can
 * ftruncate() it. Scribbles: the server never reads sizes, offsets or counts back from the
 * segment, and validates every command (shm_commands.c). Truncation: the server absorbs the
 * SIGBUS it causes and repairs the segment in the next publish (shm_guard.c says why this and
 * not sealing or separate segments). A process that installs its own SIGBUS handler after
 * hs_shm_server_create() must call hs_shm_server_absorb_fault() first in it.
 *
 * Ownership. The header records the creator's pid and start time. create() takes over a segment
 * whose creator is gone (hs_shm_server_note() says so, for the caller to log) and never touches a
 * live server's. destroy() unlinks the name only while it still names the file this server
 * created. */
#ifndef HILSIM_SHM_SERVER_H
#define HILSIM_SHM_SERVER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "hilsim/diag.h"
#include "hilsim/shm_abi.h"

struct hs_shm_server;

struct hs_shm_joint_desc {
    const char *name; /* < HS_SHM_NAME_MAX bytes, unique among joints */
    const char *unit; /* "rad" (rotary) or "m" (linear); NULL means "rad" */
};

struct hs_shm_sensor_desc {
    const char *name;      /* < HS_SHM_NAME_MAX bytes, unique among sensors */
    enum hs_shm_kind kind; /* HS_SHM_KIND_IMU or HS_SHM_KIND_FORCE */
};

/* Borrowed by create() only (copied into the segment). */
struct hs_shm_layout {
    const struct hs_shm_joint_desc *joints;
    uint32_t joint_count; /* 0 .. HS_SHM_JOINTS_MAX */
    const struct hs_shm_sensor_desc *sensors;
    uint32_t sensor_count;       /* 0 .. HS_SHM_SENSORS_MAX */
    uint64_t tick_period_ns;     /* > 0 */
    uint64_t command_timeout_ns; /* > 0: a joint command unchanged this long is stale */
    uint64_t client_timeout_ns;  /* > 0: a heartbeat silent this long means the client is lost */
    uint32_t clock_mode;         /* enum hs_shm_clock_mode, for clients (0: wall) */
    /* The readings section (shm_abi.h, ABI 1.3): one descriptor per sensor of any kind, as
     * the sensor kind's layout declares it; value_index is assigned by the server (in order).
     * Names < HS_SHM_NAME_MAX bytes and unique, kinds and units NUL-terminated in their
     * arrays, at most HS_SHM_READING_VALUES_MAX values in all. */
    const struct hs_shm_reading_desc *readings;
    uint32_t reading_count; /* 0 .. HS_SHM_SENSORS_MAX */
};

enum hs_shm_cmd_status {
    HS_SHM_CMD_NONE = 0, /* never commanded (or reset by a new owner): apply safe behaviour */
    HS_SHM_CMD_FRESH,    /* a new command arrived since the previous read */
    HS_SHM_CMD_HELD,     /* the same command as before, still within command_timeout_ns */
    HS_SHM_CMD_STALE,    /* older than command_timeout_ns, or its client is lost */
    HS_SHM_CMD_STATUS_MAX
};

/* Per joint result of hs_shm_server_read_commands(). */
struct hs_shm_joint_input {
    struct hs_shm_joint_command cmd; /* last consistent command (zeroes when NONE) */
    uint32_t status;                 /* enum hs_shm_cmd_status */
    uint32_t reserved;
    int64_t age_ns; /* now - time the server first saw this command (0 when NONE) */
};

struct hs_shm_command_report {
    uint32_t client_status;     /* enum hs_shm_client_status */
    int32_t client_pid;         /* owner pid (0: none) */
    uint32_t client_generation; /* owner claim generation */
    uint32_t fresh;             /* joints with status FRESH */
    uint32_t stale;             /* joints with status STALE or NONE */
    uint32_t torn;              /* 1 when this read found the section mid-write (previous kept) */
    uint64_t torn_total;        /* reads that found the section mid-write, since create */
    uint64_t lost_total;        /* clients declared lost, since create */
    uint64_t rejected_total;    /* joint reads that found an invalid command (bad mode,
                                 * non-finite value) and kept the previous one, since create */
    uint64_t newest_seq;        /* highest joint command seq seen */
    uint64_t repaired_total;    /* times the server found the segment shrunk (rebuilt: every
                                 * client has to attach again) or its header or names
                                 * overwritten (put back), since create */
};

/* init only: allocates. Creates /dev/shm/hilsim-<bench> with O_EXCL. group: a group name to
 * fchown the segment to (NULL: keep the creator's group). mode: permission bits, 0 means 0660;
 * any world bit (0007) is refused. A hilsim segment whose creator (pid and start time) is gone is
 * removed and created afresh (hs_shm_server_note() then says so). Anything else at the name is an
 * error (-EEXIST) whose diag says what it is: a live server's segment, or not a hilsim segment.
 * Arms the SIGBUS guard (installs a process-wide SIGBUS handler on first use). *ret_server is set
 * on success only. */
int hs_shm_server_create(const char *bench, const struct hs_shm_layout *layout, const char *group,
                         mode_t mode, struct hs_shm_server **ret_server, struct hs_diag *diag);

/* init only. "" or a line for the caller to log (a stale segment taken over at create). */
const char *hs_shm_server_note(const struct hs_shm_server *s);

/* What a bench's segment says about its server (hs_shm_server_inspect). */
struct hs_shm_segment_info {
    uint64_t size;         /* file size, bytes */
    int hilsim;            /* a complete header with the hilsim magic */
    int alive;             /* hilsim, and the creator pid runs with the recorded start time */
    int32_t pid;           /* creator pid */
    uint64_t start;        /* creator start time, clock ticks since boot (0: not recorded) */
    uint32_t server_state; /* enum hs_shm_server_state */
    uint32_t tick;         /* low 32 bits of the last published tick */
};

/* init only. Reads the segment's header without mapping it. -ENOENT when absent. */
int hs_shm_server_inspect(const char *bench, struct hs_shm_segment_info *ret, struct hs_diag *diag);

/* init only. Unlinks /dev/shm/hilsim-<bench>. Returns 0 when removed, -ENOENT when absent,
 * -EBUSY when its creator is alive and -EPROTO when it is not a hilsim segment (both left
 * alone unless force). */
int hs_shm_server_remove(const char *bench, int force, struct hs_diag *diag);
/* init only. hs_shm_server_remove(bench, 0, diag). */
int hs_shm_server_remove_stale(const char *bench, struct hs_diag *diag);

/* Async-signal-safe, any thread: two atomic stores and one FUTEX_WAKE. Marks the segment stopped
 * and wakes waiting clients (they get -ESHUTDOWN), without unmapping or unlinking anything: for a
 * fatal-signal handler, before the process dies. The next server takes the segment over. The
 * process keeps no list of its servers: whoever created one marks it (the shm I/O module's
 * emergency hook). */
void hs_shm_server_mark_stopped(struct hs_shm_server *s);

/* Async-signal-safe. For a SIGBUS handler installed after hs_shm_server_create(): returns 1 when
 * the fault hit the segment of a server whose call this thread is in (a client truncated it) and
 * was absorbed (the handler should then return), 0 when it is not ours. */
int hs_shm_server_absorb_fault(const siginfo_t *si);

/* init only. Marks the segment stopped, wakes every waiter, unmaps and unlinks it, frees the
 * server. Accepts NULL. */
void hs_shm_server_destroy(struct hs_shm_server *s);

/* RT-safe. Staging arrays owned by the server, valid until destroy; the tick fills them, then
 * publishes. Counts: the layout's joint count, and the IMU and F/T counts in layout order. */
struct hs_shm_joint_state *hs_shm_server_joints(struct hs_shm_server *s);
struct hs_shm_imu_state *hs_shm_server_imus(struct hs_shm_server *s);
struct hs_shm_ft_state *hs_shm_server_fts(struct hs_shm_server *s);
uint32_t hs_shm_server_joint_count(const struct hs_shm_server *s);
uint32_t hs_shm_server_imu_count(const struct hs_shm_server *s);
uint32_t hs_shm_server_ft_count(const struct hs_shm_server *s);
/* RT-safe. Staging of the readings section: reading_count stamps, and the values (reading i
 * at its descriptor's value_index), published with the state. */
struct hs_shm_reading_stamp *hs_shm_server_reading_stamps(struct hs_shm_server *s);
double *hs_shm_server_reading_values(struct hs_shm_server *s);

/* RT-safe. Copies the staging arrays into the state section under the seqlock, then advances the
 * tick futex word and wakes waiting clients (FUTEX_WAKE only when some are waiting). */
void hs_shm_server_publish(struct hs_shm_server *s, uint64_t tick, double sim_time_s,
                           int64_t mono_ns);

/* RT-safe. Reads the command section without blocking: a section found mid-write keeps the
 * previous consistent commands (they age into STALE). now_ns: CLOCK_MONOTONIC. Fills *ret_report;
 * the per-joint results are in hs_shm_server_joint_inputs(). */
void hs_shm_server_read_commands(struct hs_shm_server *s, int64_t now_ns,
                                 struct hs_shm_command_report *ret_report);

/* RT-safe, bounded by deadline_ns (absolute CLOCK_MONOTONIC): the lockstep gate. Returns 0
 * once a client released tick (low 32 bits compared, wrap-safe: release_futex at or past it),
 * else waits in FUTEX_WAIT on release_futex and returns -ETIMEDOUT at the deadline. */
int hs_shm_server_wait_release(struct hs_shm_server *s, uint64_t tick, int64_t deadline_ns);

/* RT-safe. Overrides the stale-joint count the next publish reports (read_commands sets it):
 * for a server whose owner stopped applying the commands for its own reasons (a bench in its
 * overrun safe hold), so clients see that their commands have no effect. */
void hs_shm_server_set_stale_joints(struct hs_shm_server *s, uint32_t stale);
/* RT-safe: the HS_SHM_BENCH_* bits the next publish carries (kept until set again). */
void hs_shm_server_set_bench_flags(struct hs_shm_server *s, uint64_t flags);

/* RT-safe. Server-owned array of joint_count entries, updated by read_commands. */
const struct hs_shm_joint_input *hs_shm_server_joint_inputs(const struct hs_shm_server *s);

/* The segment path for a bench ("/dev/shm/hilsim-<bench>") into buf. Returns 0 or -EINVAL. */
int hs_shm_server_path(const char *bench, char *buf, size_t size);

#endif
