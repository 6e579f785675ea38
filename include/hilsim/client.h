/* libhilsim-client: the local-controller side of the hilsim shared-memory interface.
 *
 * A client attaches to a running bench (/dev/shm/hilsim-<bench>), looks joints and sensors up by
 * name, waits for ticks (futex: lockstep with the simulator), reads consistent state snapshots and,
 * after claiming the command section, writes joint commands. Any number of clients may attach and
 * read; one at a time owns the commands.
 *
 * Lifecycle: hs_client_attach() (init only: allocates, maps) -> hs_client_claim() (to command) ->
 * per cycle hs_client_wait_tick(), hs_client_read_state(), hs_client_write_command(s)() (RT-safe:
 * no allocation, no locks; wait_tick blocks only in the futex, bounded by its timeout) ->
 * hs_client_detach(). A struct hs_client is used from one thread at a time.
 *
 * Lockstep (info.clock_mode HS_SHM_CLOCK_LOCKSTEP, `hilsim run --clock lockstep`): the server runs
 * tick N+1 only once the command owner is done with tick N. The owner's cycle is
 *   hs_client_wait_tick() -> hs_client_read_state() -> hs_client_write_commands() ->
 *   hs_client_step()
 * and sees every tick exactly once, as fast as both sides can go; simulated time (sim_time_s)
 * and every timeout of the server run on the tick count, not on the wall clock. A client that
 * attaches while a tick waits for its answer gets that tick from its first wait_tick. Readers
 * that do not own the commands just follow (they cannot release ticks). For byte-identical runs,
 * claim after the first wait_tick: a claim made earlier shows in the first state or not,
 * depending on when the client started. Errors: 0 or a negative
 * errno.
 *
 * When the server goes away. Two errors mean "this attachment is over: detach, then attach again
 * (retrying while attach says -ENOENT) to reach the next server":
 *   -ESHUTDOWN  the server stopped (it marked the segment: a normal stop, or a fatal signal);
 *   -EIDRM      the server is gone without saying so (crashed or killed): its segment was removed
 *               or replaced by a new server's, or its process (pid and start time) no longer runs.
 * wait_tick, read_state and the writes return them as described at each function. A write that
 * returned 0 was stored in the segment; it is applied only if the server is still running. */
#ifndef HILSIM_CLIENT_H
#define HILSIM_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "hilsim/shm_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HS_CLIENT_ERRBUF_MIN 256 /* an errbuf this large holds any attach message */

struct hs_client;

struct hs_client_info {
    uint32_t abi_version;
    uint32_t joint_count;
    uint32_t imu_count;
    uint32_t ft_count;
    uint64_t tick_period_ns;
    uint64_t command_timeout_ns;
    uint64_t client_timeout_ns;
    int32_t server_pid;
    uint32_t clock_mode; /* enum hs_shm_clock_mode: lockstep means hs_client_step every tick */
};

/* A snapshot. The arrays are owned by the caller, sized from hs_client_info (joint_count,
 * imu_count, ft_count entries); a NULL array is skipped. */
struct hs_client_state {
    uint64_t tick;          /* tick number of this snapshot */
    double sim_time_s;      /* simulated time, s */
    int64_t mono_ns;        /* server CLOCK_MONOTONIC at publish, ns */
    uint64_t command_seq;   /* newest command seq the server had consumed (any client) */
    uint32_t client_status; /* enum hs_shm_client_status */
    uint32_t stale_joints;  /* joints without a fresh command at that tick */
    uint64_t bench_flags;   /* HS_SHM_BENCH_* (e.g. the bench holds every joint in safe hold) */
    struct hs_shm_joint_state *joints;
    struct hs_shm_imu_state *imus;
    struct hs_shm_ft_state *fts;
};

/* One joint's command. Fields a mode does not use are ignored; all values must be finite. */
struct hs_client_command {
    uint32_t mode; /* enum hs_shm_mode */
    uint32_t reserved;
    double q, dq, tau_ff, current_a, kp, kd; /* units as in struct hs_shm_joint_command */
};

/* init only: allocates. Maps /dev/shm/hilsim-<bench> and checks it: missing bench (-ENOENT),
 * no permission (-EACCES), not yet initialised (-EAGAIN), wrong magic (-EPROTO), ABI mismatch
 * (-EPROTONOSUPPORT), truncated or inconsistent segment (-EBADMSG), invalid name (-EINVAL).
 * errbuf (may be NULL) receives a one-line message on failure. *ret_client set on success only. */
int hs_client_attach(const char *bench, struct hs_client **ret_client, char *errbuf,
                     size_t errbuf_size);

/* init only: allocates. As hs_client_attach, but the segment is opened O_RDONLY and mapped
 * PROT_READ, so this client can never write it (a viewer, a logger): claim and the writes return
 * -EPERM, and wait_tick, which cannot register as a futex waiter, looks at the tick word once a
 * tick period (at least 100 us) instead of sleeping in the futex. Needs only read permission
 * on the segment. */
int hs_client_attach_readonly(const char *bench, struct hs_client **ret_client, char *errbuf,
                              size_t errbuf_size);

/* init only. Releases the command section if owned, unmaps, frees. Accepts NULL. */
void hs_client_detach(struct hs_client *c);

/* RT-safe. */
int hs_client_get_info(const struct hs_client *c, struct hs_client_info *ret_info);

/* RT-safe (linear scan of the name table). -ENOENT when absent. */
int hs_client_find_joint(const struct hs_client *c, const char *name, uint32_t *ret_index);
/* RT-safe. ret_kind: HS_SHM_KIND_IMU or HS_SHM_KIND_FORCE; ret_index into that kind's array. */
int hs_client_find_sensor(const struct hs_client *c, const char *name, uint32_t *ret_kind,
                          uint32_t *ret_index);
/* The readings section (shm_abi.h, ABI 1.3): every sensor of every kind, each with its kind's
 * name, unit, value count and parameters; a server before 1.3 has none (count 0). RT-safe.
 * Descriptors are the client's copy, valid until detach; NULL when i is out of range. */
uint32_t hs_client_reading_count(const struct hs_client *c);
uint32_t hs_client_reading_value_count(const struct hs_client *c); /* all readings together */
const struct hs_shm_reading_desc *hs_client_reading(const struct hs_client *c, uint32_t i);
int hs_client_find_reading(const struct hs_client *c, const char *name, uint32_t *ret_index);
/* RT-safe. Copies every reading's stamp (reading_count entries) and the values
 * (reading_value_count doubles; reading i at its descriptor's value_index) of one published
 * tick (*ret_tick), through the state seqlock; NULL arguments are skipped. -EAGAIN if every
 * attempt overlapped a publish, -ESHUTDOWN (data filled) when the server stopped. */
int hs_client_read_readings(const struct hs_client *c, uint64_t *ret_tick,
                            struct hs_shm_reading_stamp *stamps, double *values);

/* RT-safe. Joint name and unit by index (pointers owned by the client, valid until detach);
 * NULL when out of range. */
const char *hs_client_joint_name(const struct hs_client *c, uint32_t index);
const char *hs_client_joint_unit(const struct hs_client *c, uint32_t index);

/* RT-safe (blocks in FUTEX_WAIT at most timeout_ns; 0 polls). Returns once a tick newer than the
 * last one this client saw is published: *ret_tick its number, *ret_missed how many ticks were
 * skipped since the previous wait (either pointer may be NULL). -ETIMEDOUT when none came and
 * the server still exists, -ESHUTDOWN when it stopped, -EIDRM when it is gone (checked only when
 * no tick came: a stat and a /proc read). The first wait after attach returns the next new tick. */
int hs_client_wait_tick(struct hs_client *c, int64_t timeout_ns, uint64_t *ret_tick,
                        uint32_t *ret_missed);

/* RT-safe. Total ticks missed by wait_tick since attach. */
uint64_t hs_client_missed_ticks(const struct hs_client *c);

/* RT-safe. Copies a consistent snapshot (seqlock, bounded retries): -EAGAIN if every attempt
 * overlapped a publish. The snapshot is filled but the server's last one, not current, when it
 * returns -ESHUTDOWN (the server stopped) or -EIDRM (gone: checked, with a stat and a /proc read,
 * only when the state is older than ten client timeouts, at least 1 s). */
int hs_client_read_state(const struct hs_client *c, struct hs_client_state *st);

/* Not RT-safe (a stat and a /proc read, bounded). 0 while the server that created this client's
 * segment runs; -ESHUTDOWN when it stopped; -EIDRM when it is gone (see the top of this file). */
int hs_client_server_check(const struct hs_client *c);

/* RT-safe (CAS, kill(pid, 0), no allocation). Takes the command section: free, owned by a dead
 * process, or owned by a client the server declared lost (this one included: a client that got
 * -ENOTCONN claims again). -EBUSY when a live client owns it (pid in errbuf). Resets all joint
 * commands to "none" so nothing a previous owner half-wrote can ever be applied. */
int hs_client_claim(struct hs_client *c, char *errbuf, size_t errbuf_size);

/* RT-safe. Gives the command section back (no-op if not owned). */
void hs_client_release(struct hs_client *c);

/* RT-safe. Writes one joint's command under the command seqlock with a new sequence number and
 * the CLOCK_MONOTONIC stamp; bumps the heartbeat. -EPERM when not the owner (never claimed or
 * taken over), -ENOTCONN when the server declared this client lost (claim again), -ESHUTDOWN
 * when the server stopped (nothing will apply it), -EINVAL for a bad index, mode or non-finite
 * value. Writes do not look for a crashed server (no syscall here): wait_tick and read_state do. */
int hs_client_write_command(struct hs_client *c, uint32_t joint,
                            const struct hs_client_command *cmd);

/* RT-safe. Writes joints 0..count-1 (count <= joint_count) in one seqlock section, one seq. */
int hs_client_write_commands(struct hs_client *c, const struct hs_client_command *cmds,
                             uint32_t count);

/* RT-safe. Sequence number of the last command written (0: none); the server echoes the newest
 * one it consumed in hs_client_state.command_seq. */
uint64_t hs_client_last_command_seq(const struct hs_client *c);

/* RT-safe (one atomic store, one FUTEX_WAKE when the server waits). Lockstep: the commands for
 * the last tick wait_tick returned are written; release the next tick (with no command written
 * since, the previous commands stay in effect: an explicit step). Only the owner releases:
 * -EPERM, -ENOTCONN or -ESHUTDOWN as hs_client_write_command. Outside lockstep it stores the
 * word and has no effect. */
int hs_client_step(struct hs_client *c);

/* RT-safe. Bumps the heartbeat without writing (wait_tick and writes do it too). */
void hs_client_heartbeat(struct hs_client *c);

#ifdef __cplusplus
}
#endif

#endif
