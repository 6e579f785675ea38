/* The client's private state, shared by the files of src/client only. */
#ifndef HILSIM_CLIENT_INTERNAL_H
#define HILSIM_CLIENT_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "hilsim/client.h"
#include "hilsim/rt/rt_clock.h" /* header-only: the monotonic clock, hs_rt_now_ns() */

#define HS_CLIENT_API __attribute__((visibility("default")))

struct hs_client {
    unsigned char *base; /* the mapping */
    uint64_t size;
    bool readonly; /* mapped PROT_READ (hs_client_attach_readonly): never writes the segment */
    struct hs_shm_header *hdr;
    struct hs_shm_state_head *state;
    struct hs_shm_command_head *cmd;
    struct hs_shm_joint_command *shm_cmds;
    struct hs_shm_name *names; /* private copy of the name table */
    uint32_t name_count, joint_count, imu_count, ft_count;
    struct hs_shm_reading_desc *readings; /* private copy of the readings descriptors */
    uint32_t reading_count, reading_values;
    const unsigned char *reading_data; /* stamps then values, in the segment */

    uint32_t last_futex; /* tick word at the last wait */
    uint64_t last_tick;  /* 64-bit tick matching last_futex */
    uint64_t missed_total;

    uint64_t owner_word; /* our claim (0: not the owner) */
    uint64_t next_seq;

    /* Who served the segment at attach, to tell a gone or replaced server (client_server.c). */
    char path[sizeof "/dev/shm" + sizeof HS_SHM_PATH_PREFIX + HS_SHM_BENCH_MAX];
    dev_t dev;
    ino_t ino;
    int32_t server_pid;
    uint64_t server_start; /* 0: the server did not record it */
    int64_t silent_ns;     /* a state older than this makes read_state check the server */
};

/* Not RT-safe (stat, /proc). 0, -ESHUTDOWN or -EIDRM as hs_client_server_check. */
int hs__client_server_gone(const struct hs_client *c);

/* init only. Validates the mapped header against the file size; message into errbuf. */
int hs__client_check_header(const struct hs_shm_header *h, uint64_t file_size, char *errbuf,
                            size_t errbuf_size);

/* RT-safe. Formats into errbuf when it is non-NULL; returns err. */
int hs__client_err(char *errbuf, size_t errbuf_size, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* init only: allocates. Copies and checks the readings section (none before ABI 1.3). */
int hs__client_copy_readings(struct hs_client *c, char *errbuf, size_t errbuf_size);

#endif
