/* The server's private bookkeeping, shared by the files of drivers/shm only. */
#ifndef HILSIM_SHM_SERVER_INTERNAL_H
#define HILSIM_SHM_SERVER_INTERNAL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hilsim/shm_server.h"

/* The SIGBUS guard of one mapping (shm_guard.c), owned by its server. */
struct hs_shm_guard {
    unsigned char *base;
    uint64_t size;
    _Atomic uint64_t hits; /* faults absorbed in the mapping: the handler adds, publish reads */
};

/* One guarded stretch of a server call on this thread, on the caller's stack: a fault in the
 * guard's mapping while it is entered is absorbed (shm_guard.c). Scopes nest. */
struct hs_shm_guard_scope {
    struct hs_shm_guard *guard;
    struct hs_shm_guard_scope *outer;
};

struct hs_shm_server {
    char shm_name[sizeof HS_SHM_PATH_PREFIX + HS_SHM_BENCH_MAX]; /* "/hilsim-<bench>" */
    unsigned char *base;                                         /* the mapping */
    uint64_t size;
    struct hs_shm_header *hdr;
    struct hs_shm_state_head *state;
    struct hs_shm_command_head *cmd;
    struct hs_shm_joint_command *shm_cmds;
    uint32_t joint_count, imu_count, ft_count;
    uint64_t state_words; /* seqlocked 64-bit words of the state section */

    /* Staging copy of the state section, same layout (published word by word). */
    unsigned char *staging;
    struct hs_shm_state_head *staging_head;
    /* The readings section's seqlocked part (stamps then values), staged the same way. */
    uint32_t reading_count;
    uint64_t readings_words;
    unsigned char *readings_staging;
    unsigned char *readings_data; /* in the segment */

    /* Command bookkeeping (all preallocated at create). */
    struct hs_shm_joint_command *scratch; /* copy being validated */
    struct hs_shm_joint_input *inputs;    /* last consistent commands, handed to the caller */
    int64_t *received_ns;                 /* when each joint's current command was first seen */
    uint64_t command_timeout_ns, client_timeout_ns;
    uint64_t tracked_owner;  /* owner word the heartbeat bookkeeping refers to */
    uint64_t last_heartbeat; /* heartbeat value last seen */
    int64_t heartbeat_ns;    /* when it last advanced (or the owner appeared) */
    bool owner_lost;
    uint64_t inputs_writer; /* owner word that wrote the commands in inputs */
    uint64_t torn_total, lost_total, rejected_total, newest_seq;

    /* Segment identity and repair (shm_guard.c explains the SIGBUS guard). */
    int fd;    /* our segment, kept open */
    dev_t dev; /* identity of our file: unlink only if the name still points here */
    ino_t ino;
    struct hs_shm_guard guard;
    uint64_t guard_seen; /* guard hits already repaired */
    uint64_t abuse_total;
    unsigned char *pristine; /* header and name table as created, for repair */
    uint64_t pristine_size;
    uint64_t audit_cursor; /* next name-table chunk hs__shm_server_audit compares */
    /* The readings section's head and descriptors as created (also never change). */
    unsigned char *readings_pristine;
    uint64_t readings_pristine_size, readings_cursor;
    char note[256]; /* takeover note for the caller to log ("" when none) */
};

/* What occupies a segment name (read with pread: a shrinking file cannot fault us). */
struct hs_shm_occupant {
    dev_t dev;
    ino_t ino;
    uint64_t size;
    uint32_t magic, server_state, tick;
    int32_t pid;
    uint64_t start;
    bool hilsim; /* size and magic right */
    bool alive;  /* hilsim and its creator (pid and start time) still runs */
};

/* init only. Validates the layout; fills diag naming the offending field. */
int hs__shm_layout_check(const struct hs_shm_layout *layout, struct hs_diag *diag);

/* init only. Writes header fields (not magic), the name table and zeroed sections into base. */
void hs__shm_layout_fill(unsigned char *base, const struct hs_shm_layout *layout, uint64_t total);

/* init only. Total segment size for a layout. */
uint64_t hs__shm_layout_total(const struct hs_shm_layout *layout, uint32_t *ret_imus,
                              uint32_t *ret_fts);
/* init only. Values in the readings section, all sensors together. */
uint32_t hs__shm_layout_reading_values(const struct hs_shm_layout *layout);

/* init only. Creates, sizes, chowns/chmods and maps the segment; on -EEXIST the diag explains
 * whether the occupant is alive or stale. */
int hs__shm_segment_create(const char *shm_name, uint64_t size, const char *group, mode_t mode,
                           unsigned char **ret_base, int *ret_fd, char *note, size_t note_size,
                           struct hs_diag *diag);

/* init only. Start time of pid (field 22 of /proc/PID/stat). -ESRCH when no such process. */
int hs__shm_pid_start(int32_t pid, uint64_t *ret_start);
/* init only. Nonzero when pid runs and, if start is not 0, started at start. */
int hs__shm_owner_alive(int32_t pid, uint64_t start);
/* init only. Describes the object at shm_name. -ENOENT when absent. */
int hs__shm_occupant(const char *shm_name, struct hs_shm_occupant *ret);
/* init only. Unlinks shm_name only while it still names the file dev/ino (-ESTALE if not). */
int hs__shm_unlink_if(const char *shm_name, dev_t dev, ino_t ino);

/* init only. Sets up the guard of a mapping and installs the SIGBUS handler if the current one
 * is not ours (0 or -errno of sigaction). */
int hs__shm_guard_init(struct hs_shm_guard *g, unsigned char *base, uint64_t size);
/* RT-safe and async-signal-safe. Every server call that loads or stores in the mapping runs
 * between these two, on the same thread, leaving in reverse order of entering. */
void hs__shm_guard_enter(struct hs_shm_guard_scope *sc, struct hs_shm_guard *g);
void hs__shm_guard_leave(struct hs_shm_guard_scope *sc);
/* RT-safe. Faults absorbed in this mapping since it was armed. */
uint64_t hs__shm_guard_hits(const struct hs_shm_guard *g);
/* RT-safe, called by publish when the guard fired: re-sizes, re-maps and re-fills the segment. */
void hs__shm_server_repair(struct hs_shm_server *s);
/* RT-safe, every publish: compares the fixed header and one chunk of the name table with the
 * copy made at create and puts back what a client overwrote (counted as abuse). */
void hs__shm_server_audit(struct hs_shm_server *s);

#endif
