/* Server lifecycle: create (validate, size, map, fill, publish magic) and destroy. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <unistd.h>

#include "shm_server_internal.h"

static int shm_name_for(const char *bench, char *buf, size_t size)
{
    if (!hs_shm_bench_valid(bench))
        return -EINVAL;
    int n = snprintf(buf, size, "%s%s", HS_SHM_PATH_PREFIX, bench);
    return n < 0 || (size_t)n >= size ? -EINVAL : 0;
}

int hs_shm_server_path(const char *bench, char *buf, size_t size)
{
    char name[sizeof HS_SHM_PATH_PREFIX + HS_SHM_BENCH_MAX];
    int r = shm_name_for(bench, name, sizeof name);
    if (r < 0)
        return r;
    int n = snprintf(buf, size, "/dev/shm%s", name);
    return n < 0 || (size_t)n >= size ? -EINVAL : 0;
}

static int bad_bench(const char *bench, struct hs_diag *diag)
{
    return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                       "shm: bench name '%s' invalid (1..%d characters of A-Z a-z 0-9 _ . -, not "
                       "starting with '.')",
                       bench ? bench : "(null)", HS_SHM_BENCH_MAX);
}

static int alloc_private(struct hs_shm_server *s, uint64_t state_size)
{
    uint32_t n = s->joint_count ? s->joint_count : 1;
    s->staging = calloc(1, state_size);
    s->scratch = calloc(n, sizeof *s->scratch);
    s->inputs = calloc(n, sizeof *s->inputs);
    s->received_ns = calloc(n, sizeof *s->received_ns);
    return s->staging && s->scratch && s->inputs && s->received_ns ? 0 : -ENOMEM;
}

static void free_private(struct hs_shm_server *s)
{
    free(s->staging);
    free(s->scratch);
    free(s->inputs);
    free(s->received_ns);
    free(s);
}

int hs_shm_server_create(const char *bench, const struct hs_shm_layout *layout, const char *group,
                         mode_t mode, struct hs_shm_server **ret_server, struct hs_diag *diag)
{
    int r;
    if (!ret_server)
        return hs_diag_set(diag, -EINVAL, NULL, 0, 0, "shm: ret_server is NULL");
    if (mode == 0)
        mode = 0660;
    if (mode & ~(mode_t)0770)
        return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                           "shm: mode 0%o refused: the segment is never world-accessible and has "
                           "no special bits (use at most 0770)",
                           (unsigned)mode);
    if ((r = hs__shm_layout_check(layout, diag)) < 0)
        return r;

    struct hs_shm_server *s = calloc(1, sizeof *s);
    if (!s)
        return hs_diag_set(diag, -ENOMEM, NULL, 0, 0, "shm: out of memory");
    if (shm_name_for(bench, s->shm_name, sizeof s->shm_name) < 0) {
        free(s);
        return bad_bench(bench, diag);
    }
    s->size = hs__shm_layout_total(layout, &s->imu_count, &s->ft_count);
    s->joint_count = layout->joint_count;
    s->command_timeout_ns = layout->command_timeout_ns;
    s->client_timeout_ns = layout->client_timeout_ns;
    uint64_t state_size = hs_shm_state_bytes(s->joint_count, s->imu_count, s->ft_count);
    s->state_words = (state_size - HS_SHM_SEQ_DATA_OFFSET) / 8;
    if (alloc_private(s, state_size) < 0) {
        free_private(s);
        return hs_diag_set(diag, -ENOMEM, NULL, 0, 0, "shm: out of memory");
    }
    if ((r = hs__shm_segment_create(s->shm_name, s->size, group, mode, &s->base, diag)) < 0) {
        free_private(s);
        return r;
    }

    hs__shm_layout_fill(s->base, layout, s->size);
    s->hdr = (struct hs_shm_header *)s->base;
    s->hdr->creator_pid = (int32_t)getpid();
    s->state = (struct hs_shm_state_head *)(s->base + s->hdr->state_offset);
    s->cmd = (struct hs_shm_command_head *)(s->base + s->hdr->command_offset);
    s->shm_cmds = (struct hs_shm_joint_command *)(s->cmd + 1);
    s->staging_head = (struct hs_shm_state_head *)s->staging;
    atomic_store_explicit(&s->hdr->server_state, HS_SHM_SERVER_RUNNING, memory_order_relaxed);
    /* Magic last: a client that sees it sees a complete segment. */
    atomic_store_explicit(&s->hdr->magic, HS_SHM_MAGIC, memory_order_release);
    *ret_server = s;
    return 0;
}

void hs_shm_server_destroy(struct hs_shm_server *s)
{
    if (!s)
        return;
    atomic_store_explicit(&s->hdr->server_state, HS_SHM_SERVER_STOPPED, memory_order_seq_cst);
    /* Bump the futex word so waiters re-check and see STOPPED. */
    atomic_fetch_add_explicit(&s->hdr->tick_futex, 1, memory_order_seq_cst);
    syscall(SYS_futex, &s->hdr->tick_futex, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    munlock(s->base, s->size);
    munmap(s->base, s->size);
    shm_unlink(s->shm_name);
    free_private(s);
}

int hs_shm_server_remove_stale(const char *bench, struct hs_diag *diag)
{
    char name[sizeof HS_SHM_PATH_PREFIX + HS_SHM_BENCH_MAX];
    if (shm_name_for(bench, name, sizeof name) < 0)
        return bad_bench(bench, diag);
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0)
        return hs_diag_set(diag, -errno, NULL, 0, 0, "shm: %s: %s", name + 1, strerror(errno));
    struct stat st;
    struct hs_shm_header *h = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= sizeof *h)
        h = mmap(NULL, sizeof *h, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (h == MAP_FAILED)
        return hs_diag_set(diag, -EPROTO, NULL, 0, 0,
                           "shm: %s is not a hilsim segment (too small); left alone", name + 1);
    uint32_t magic = atomic_load_explicit(&h->magic, memory_order_acquire);
    int32_t pid = h->creator_pid;
    munmap(h, sizeof *h);
    if (magic != HS_SHM_MAGIC)
        return hs_diag_set(diag, -EPROTO, NULL, 0, 0,
                           "shm: %s is not a hilsim segment (magic 0x%08x); left alone", name + 1,
                           magic);
    if (hs__shm_pid_alive(pid))
        return hs_diag_set(diag, -EBUSY, NULL, 0, 0, "shm: %s is in use by running pid %d",
                           name + 1, (int)pid);
    if (shm_unlink(name) < 0)
        return hs_diag_set(diag, -errno, NULL, 0, 0, "shm: removing %s: %s", name + 1,
                           strerror(errno));
    return 0;
}

struct hs_shm_joint_state *hs_shm_server_joints(struct hs_shm_server *s)
{
    return (struct hs_shm_joint_state *)(s->staging + sizeof(struct hs_shm_state_head));
}

struct hs_shm_imu_state *hs_shm_server_imus(struct hs_shm_server *s)
{
    return (struct hs_shm_imu_state *)(hs_shm_server_joints(s) + s->joint_count);
}

struct hs_shm_ft_state *hs_shm_server_fts(struct hs_shm_server *s)
{
    return (struct hs_shm_ft_state *)(hs_shm_server_imus(s) + s->imu_count);
}

uint32_t hs_shm_server_joint_count(const struct hs_shm_server *s)
{
    return s->joint_count;
}

uint32_t hs_shm_server_imu_count(const struct hs_shm_server *s)
{
    return s->imu_count;
}

uint32_t hs_shm_server_ft_count(const struct hs_shm_server *s)
{
    return s->ft_count;
}

const struct hs_shm_joint_input *hs_shm_server_joint_inputs(const struct hs_shm_server *s)
{
    return s->inputs;
}
