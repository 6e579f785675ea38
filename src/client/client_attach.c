/* Attaching to a bench segment and detaching. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_internal.h"

static int open_segment(const char *bench, bool readonly, int *ret_fd, uint64_t *ret_size,
                        struct stat *ret_st, char *errbuf, size_t errbuf_size)
{
    char name[sizeof HS_SHM_PATH_PREFIX + HS_SHM_BENCH_MAX];
    if (!hs_shm_bench_valid(bench))
        return hs__client_err(errbuf, errbuf_size, -EINVAL,
                              "invalid bench name '%s' (1..%d of A-Z a-z 0-9 _ . -)",
                              bench ? bench : "(null)", HS_SHM_BENCH_MAX);
    strcpy(name, HS_SHM_PATH_PREFIX);
    strcat(name, bench);
    /* /dev/shm is world-writable: a FIFO or device planted at the name must neither block the
     * open (O_NONBLOCK; shm_open adds O_NOFOLLOW) nor be mapped (the S_ISREG check below). */
    int fd = shm_open(name, (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK, 0);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return hs__client_err(errbuf, errbuf_size, -ENOENT,
                                  "no bench '%s': /dev/shm%s does not exist (is hilsim running?)",
                                  bench, name);
        if (e == EACCES)
            return hs__client_err(errbuf, errbuf_size, -EACCES,
                                  "bench '%s': permission denied on /dev/shm%s (join its group)",
                                  bench, name);
        return hs__client_err(errbuf, errbuf_size, -e, "bench '%s': opening /dev/shm%s: %s", bench,
                              name, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return hs__client_err(errbuf, errbuf_size, -e, "bench '%s': %s", bench, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return hs__client_err(errbuf, errbuf_size, -EBADMSG,
                              "bench '%s': /dev/shm%s is not a regular file (a FIFO, device or "
                              "socket): not a hilsim segment",
                              bench, name);
    }
    if ((uint64_t)st.st_size < sizeof(struct hs_shm_header)) {
        close(fd);
        return hs__client_err(errbuf, errbuf_size, -EBADMSG,
                              "bench '%s': truncated segment: %lld bytes, the header alone needs "
                              "%zu",
                              bench, (long long)st.st_size, sizeof(struct hs_shm_header));
    }
    *ret_fd = fd;
    *ret_st = st;
    *ret_size = (uint64_t)st.st_size;
    return 0;
}

static int copy_names(struct hs_client *c, char *errbuf, size_t errbuf_size)
{
    const struct hs_shm_header *h = c->hdr;
    c->name_count = h->name_count;
    c->names = calloc(c->name_count ? c->name_count : 1, sizeof *c->names);
    if (!c->names)
        return hs__client_err(errbuf, errbuf_size, -ENOMEM, "out of memory");
    memcpy(c->names, c->base + h->names_offset, h->names_size);
    for (uint32_t i = 0; i < c->name_count; i++) {
        struct hs_shm_name *n = &c->names[i];
        uint32_t limit = n->kind == HS_SHM_KIND_JOINT   ? h->joint_count
                         : n->kind == HS_SHM_KIND_IMU   ? h->imu_count
                         : n->kind == HS_SHM_KIND_FORCE ? h->ft_count
                                                        : 0;
        if (!memchr(n->name, 0, sizeof n->name) || !memchr(n->unit, 0, sizeof n->unit) ||
            n->index >= limit)
            return hs__client_err(errbuf, errbuf_size, -EBADMSG,
                                  "corrupt segment: name table entry %u", i);
    }
    return 0;
}

static int attach(const char *bench, bool readonly, struct hs_client **ret_client, char *errbuf,
                  size_t errbuf_size)
{
    int fd = -1, r;
    uint64_t size = 0;
    if (!ret_client)
        return hs__client_err(errbuf, errbuf_size, -EINVAL, "ret_client is NULL");
    struct stat seg_st = {0};
    if ((r = open_segment(bench, readonly, &fd, &size, &seg_st, errbuf, errbuf_size)) < 0)
        return r;
    /* Read-only: the kernel, not this library's care, keeps the client from writing. */
    unsigned char *base =
        mmap(NULL, size, readonly ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (base == MAP_FAILED)
        return hs__client_err(errbuf, errbuf_size, -e, "bench '%s': mapping: %s", bench,
                              strerror(e));
    struct hs_client *c = calloc(1, sizeof *c);
    if (!c) {
        r = hs__client_err(errbuf, errbuf_size, -ENOMEM, "out of memory");
        goto fail;
    }
    c->base = base;
    c->size = size;
    c->readonly = readonly;
    c->hdr = (struct hs_shm_header *)base;
    if ((r = hs__client_check_header(c->hdr, size, errbuf, errbuf_size)) < 0)
        goto fail;
    if ((r = copy_names(c, errbuf, errbuf_size)) < 0 ||
        (r = hs__client_copy_readings(c, errbuf, errbuf_size)) < 0)
        goto fail;
    c->joint_count = c->hdr->joint_count;
    c->imu_count = c->hdr->imu_count;
    c->ft_count = c->hdr->ft_count;
    c->state = (struct hs_shm_state_head *)(base + c->hdr->state_offset);
    c->cmd = (struct hs_shm_command_head *)(base + c->hdr->command_offset);
    c->shm_cmds = (struct hs_shm_joint_command *)(c->cmd + 1);
    snprintf(c->path, sizeof c->path, "/dev/shm%s%s", HS_SHM_PATH_PREFIX, bench);
    c->dev = seg_st.st_dev;
    c->ino = seg_st.st_ino;
    c->server_pid = c->hdr->creator_pid;
    c->server_start = c->hdr->creator_start;
    /* A running server publishes every period; ten client timeouts (at least 1 s) without a new
     * state is worth the cost of asking whether it still exists. */
    c->silent_ns = (int64_t)(c->hdr->client_timeout_ns * 10);
    if (c->silent_ns < 1000000000)
        c->silent_ns = 1000000000;

    /* Pair the 32-bit futex word with the full tick from the state head; a publish between the
     * two reads makes the state tick ahead by (low bits difference). */
    c->last_futex = atomic_load_explicit(&c->hdr->tick_futex, memory_order_acquire);
    struct hs_client_state st = {0};
    uint64_t tick = 0;
    if (hs_client_read_state(c, &st) == 0)
        tick = st.tick;
    c->last_tick = tick - (uint32_t)((uint32_t)tick - c->last_futex);
    /* Lockstep: a published tick nobody released yet waits for an answer; make the first
     * wait_tick return it rather than wait for a tick that cannot come. Only that one tick:
     * the ticks before it were not missed by this client (and when another source releases
     * the ticks, CAN lockstep, the release word lags far behind). */
    if (c->hdr->clock_mode == HS_SHM_CLOCK_LOCKSTEP) {
        uint32_t rel = atomic_load_explicit(&c->hdr->release_futex, memory_order_acquire);
        if ((int32_t)(c->last_futex - rel) > 0) {
            c->last_futex -= 1;
            c->last_tick -= 1;
        }
    }
    *ret_client = c;
    return 0;
fail:
    if (c)
        free(c->names);
    if (c)
        free(c->readings);
    free(c);
    munmap(base, size);
    return r;
}

int hs_client_attach(const char *bench, struct hs_client **ret_client, char *errbuf,
                     size_t errbuf_size)
{
    return attach(bench, false, ret_client, errbuf, errbuf_size);
}

int hs_client_attach_readonly(const char *bench, struct hs_client **ret_client, char *errbuf,
                              size_t errbuf_size)
{
    return attach(bench, true, ret_client, errbuf, errbuf_size);
}

void hs_client_detach(struct hs_client *c)
{
    if (!c)
        return;
    hs_client_release(c);
    munmap(c->base, c->size);
    free(c->names);
    free(c->readings);
    free(c);
}

int hs_client_get_info(const struct hs_client *c, struct hs_client_info *ret_info)
{
    const struct hs_shm_header *h = c->hdr;
    *ret_info = (struct hs_client_info){
        .abi_version = h->abi_version,
        .joint_count = c->joint_count,
        .imu_count = c->imu_count,
        .ft_count = c->ft_count,
        .tick_period_ns = h->tick_period_ns,
        .command_timeout_ns = h->command_timeout_ns,
        .client_timeout_ns = h->client_timeout_ns,
        .server_pid = h->creator_pid,
        .clock_mode = h->clock_mode,
    };
    return 0;
}
