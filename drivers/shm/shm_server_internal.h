/* The server's private bookkeeping, shared by the files of drivers/shm only. */
#ifndef HILSIM_SHM_SERVER_INTERNAL_H
#define HILSIM_SHM_SERVER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "shm_server.h"

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
};

/* init only. Validates the layout; fills diag naming the offending field. */
int hs__shm_layout_check(const struct hs_shm_layout *layout, struct hs_diag *diag);

/* init only. Writes header fields (not magic), the name table and zeroed sections into base. */
void hs__shm_layout_fill(unsigned char *base, const struct hs_shm_layout *layout, uint64_t total);

/* init only. Total segment size for a layout. */
uint64_t hs__shm_layout_total(const struct hs_shm_layout *layout, uint32_t *ret_imus,
                              uint32_t *ret_fts);

/* init only. Creates, sizes, chowns/chmods and maps the segment; on -EEXIST the diag explains
 * whether the occupant is alive or stale. */
int hs__shm_segment_create(const char *shm_name, uint64_t size, const char *group, mode_t mode,
                           unsigned char **ret_base, struct hs_diag *diag);

/* init only. Nonzero when a process with this pid exists. */
int hs__shm_pid_alive(int32_t pid);

#endif
