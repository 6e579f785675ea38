/* Server lifecycle: create (validate, size, map, fill, publish magic) and destroy. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <unistd.h>

#include "hilsim/file_open.h"
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
    free(s->pristine);
    free(s->readings_pristine);
    free(s->staging);
    free(s->readings_staging);
    free(s->scratch);
    free(s->inputs);
    free(s->received_ns);
    free(s);
}

int hs_shm_server_create(const char *bench, const struct hs_shm_layout *layout, const char *group,
                         mode_t mode, struct hs_shm_server **ret_server, struct hs_diag *diag)
{
    int r;
    struct hs_shm_guard_scope scope;
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
    s->reading_count = layout->reading_count;
    uint64_t readings_data =
        hs_shm_readings_bytes(layout->reading_count, hs__shm_layout_reading_values(layout)) -
        sizeof(struct hs_shm_readings_head) -
        (uint64_t)layout->reading_count * sizeof(struct hs_shm_reading_desc);
    s->readings_words = readings_data / 8;
    s->readings_staging = calloc(1, readings_data ? readings_data : 8);
    if (!s->readings_staging || alloc_private(s, state_size) < 0) {
        free_private(s);
        return hs_diag_set(diag, -ENOMEM, NULL, 0, 0, "shm: out of memory");
    }
    s->fd = -1;
    if ((r = hs__shm_segment_create(s->shm_name, s->size, group, mode, &s->base, &s->fd, s->note,
                                    sizeof s->note, diag)) < 0) {
        free_private(s);
        return r;
    }
    struct stat st;
    if (fstat(s->fd, &st) < 0) {
        r = hs_diag_set(diag, -errno, NULL, 0, 0, "shm: fstat %s: %s", s->shm_name + 1,
                        strerror(errno));
        goto fail_unguarded;
    }
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    /* Guarded from the first store: a client may truncate the file as soon as it exists. */
    if ((r = hs__shm_guard_init(&s->guard, s->base, s->size)) < 0) {
        r = hs_diag_set(diag, r, NULL, 0, 0, "shm: arming the SIGBUS guard: %s", strerror(-r));
        goto fail_unguarded;
    }
    hs__shm_guard_enter(&scope, &s->guard);

    hs__shm_layout_fill(s->base, layout, s->size);
    s->hdr = (struct hs_shm_header *)s->base;
    s->hdr->creator_pid = (int32_t)getpid();
    uint64_t start = 0;
    (void)hs__shm_pid_start(s->hdr->creator_pid, &start); /* 0 (unknown) without /proc */
    s->hdr->creator_start = start;
    /* Header and names never change after this: keep them to rewrite after a truncation. */
    s->pristine_size = s->hdr->names_offset + s->hdr->names_size;
    s->pristine = malloc(s->pristine_size);
    if (!s->pristine) {
        r = hs_diag_set(diag, -ENOMEM, NULL, 0, 0, "shm: out of memory");
        goto fail;
    }
    memcpy(s->pristine, s->base, s->pristine_size);
    s->readings_pristine_size =
        sizeof(struct hs_shm_readings_head) +
        (uint64_t)layout->reading_count * sizeof(struct hs_shm_reading_desc);
    s->readings_pristine = malloc(s->readings_pristine_size);
    if (!s->readings_pristine) {
        r = hs_diag_set(diag, -ENOMEM, NULL, 0, 0, "shm: out of memory");
        goto fail;
    }
    memcpy(s->readings_pristine, s->base + s->hdr->readings_offset, s->readings_pristine_size);
    s->audit_cursor = sizeof(struct hs_shm_header);
    s->state = (struct hs_shm_state_head *)(s->base + s->hdr->state_offset);
    s->cmd = (struct hs_shm_command_head *)(s->base + s->hdr->command_offset);
    s->shm_cmds = (struct hs_shm_joint_command *)(s->cmd + 1);
    s->staging_head = (struct hs_shm_state_head *)s->staging;
    {
        const struct hs_shm_readings_head *rh =
            (const struct hs_shm_readings_head *)(s->base + s->hdr->readings_offset);
        s->readings_data = s->base + s->hdr->readings_offset + rh->stamp_offset;
    }
    atomic_store_explicit(&s->hdr->server_state, HS_SHM_SERVER_RUNNING, memory_order_relaxed);
    /* Magic last: a client that sees it sees a complete segment. */
    atomic_store_explicit(&s->hdr->magic, HS_SHM_MAGIC, memory_order_release);
    ((struct hs_shm_header *)s->pristine)->magic = HS_SHM_MAGIC; /* as clients must find it */
    hs__shm_guard_leave(&scope);
    *ret_server = s;
    return 0;
fail:
    hs__shm_guard_leave(&scope);
fail_unguarded:
    munlock(s->base, s->size);
    munmap(s->base, s->size);
    hs__shm_unlink_if(s->shm_name, s->dev, s->ino);
    close(s->fd);
    free_private(s);
    return r;
}

/* From the server's private copy of the header, never from the segment. */
static uint64_t readings_offset(const struct hs_shm_server *s)
{
    return ((const struct hs_shm_header *)s->pristine)->readings_offset;
}

void hs__shm_server_repair(struct hs_shm_server *s)
{
    /* Two to four syscalls, only in the tick after a client shrank the segment. A fault while we
     * repair (the client truncates again) is absorbed like the first and repaired next tick. */
    s->guard_seen = hs__shm_guard_hits(&s->guard);
    s->abuse_total++;
    if (ftruncate(s->fd, (off_t)s->size) < 0)
        return; /* keep the anonymous pages: the tick goes on, clients see nothing new */
    void *p = mmap(s->base, s->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s->fd, 0);
    if (p == MAP_FAILED)
        return;
    (void)mlock(s->base, s->size);
    /* Whatever the client left is not trusted: the state and command sections restart from
     * zero (no owner, no command), header and names as created. */
    memset(s->base + s->pristine_size, 0, s->size - s->pristine_size);
    memcpy(s->base, s->pristine, s->pristine_size);
    memcpy(s->base + readings_offset(s), s->readings_pristine, s->readings_pristine_size);
    atomic_store_explicit(&s->hdr->server_state, HS_SHM_SERVER_RUNNING, memory_order_relaxed);
    s->tracked_owner = 0;
}

/* Bytes of the header that never change after create (the control line follows). */
#define FIXED_HEADER_BYTES offsetof(struct hs_shm_header, tick_futex)
#define AUDIT_CHUNK 64

void hs__shm_server_audit(struct hs_shm_server *s)
{
    /* Clients trust the header and names they attach with; a client that overwrote them would
     * mislead every later one. Checked a constant amount per tick (the fixed header, then one
     * 64-byte chunk of the name table in turn: a memcmp of 192 bytes, tens of nanoseconds) and
     * put back when changed. Racing a client that writes meanwhile is harmless: it is put back
     * again on a later tick. */
    int bad = memcmp(s->base, s->pristine, FIXED_HEADER_BYTES) != 0;
    if (bad)
        memcpy(s->base, s->pristine, FIXED_HEADER_BYTES);
    uint64_t off = s->audit_cursor;
    uint64_t n = s->pristine_size - off < AUDIT_CHUNK ? s->pristine_size - off : AUDIT_CHUNK;
    if (memcmp(s->base + off, s->pristine + off, n)) {
        memcpy(s->base + off, s->pristine + off, n);
        bad = 1;
    }
    off += n;
    s->audit_cursor = off >= s->pristine_size ? sizeof(struct hs_shm_header) : off;
    /* The readings section's location (in the control line, written once) and its head every
     * tick, then one chunk of its descriptors in turn: the same bounded work. */
    const size_t loc = offsetof(struct hs_shm_header, readings_offset);
    const size_t loc_n = 2 * sizeof(uint64_t);
    if (memcmp(s->base + loc, s->pristine + loc, loc_n)) {
        memcpy(s->base + loc, s->pristine + loc, loc_n);
        bad = 1;
    }
    unsigned char *rs = s->base + readings_offset(s);
    const size_t head = sizeof(struct hs_shm_readings_head);
    if (memcmp(rs, s->readings_pristine, head)) {
        memcpy(rs, s->readings_pristine, head);
        bad = 1;
    }
    if (s->readings_pristine_size > head) {
        uint64_t ro = s->readings_cursor < head ? head : s->readings_cursor;
        uint64_t rn = s->readings_pristine_size - ro < AUDIT_CHUNK ? s->readings_pristine_size - ro
                                                                   : AUDIT_CHUNK;
        if (memcmp(rs + ro, s->readings_pristine + ro, rn)) {
            memcpy(rs + ro, s->readings_pristine + ro, rn);
            bad = 1;
        }
        ro += rn;
        s->readings_cursor = ro >= s->readings_pristine_size ? head : ro;
    }
    /* Only destroy and mark_stopped say STOPPED; a client must not fake it to the others. */
    if (atomic_load_explicit(&s->hdr->server_state, memory_order_relaxed) !=
        HS_SHM_SERVER_RUNNING) {
        atomic_store_explicit(&s->hdr->server_state, HS_SHM_SERVER_RUNNING, memory_order_relaxed);
        bad = 1;
    }
    s->abuse_total += (uint64_t)bad;
}

const char *hs_shm_server_note(const struct hs_shm_server *s)
{
    return s->note;
}

void hs_shm_server_mark_stopped(struct hs_shm_server *s)
{
    if (!s)
        return;
    /* May run in a fatal-signal handler on any thread: the scope is that thread's. */
    struct hs_shm_guard_scope scope;
    hs__shm_guard_enter(&scope, &s->guard);
    atomic_store_explicit(&s->hdr->server_state, HS_SHM_SERVER_STOPPED, memory_order_seq_cst);
    /* Bump the futex word so waiters re-check and see STOPPED. */
    atomic_fetch_add_explicit(&s->hdr->tick_futex, 1, memory_order_seq_cst);
    syscall(SYS_futex, &s->hdr->tick_futex, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    hs__shm_guard_leave(&scope);
}

void hs_shm_server_destroy(struct hs_shm_server *s)
{
    if (!s)
        return;
    hs_shm_server_mark_stopped(s);
    /* Unmapped while still guarded: a fault up to here is absorbed. */
    munlock(s->base, s->size);
    munmap(s->base, s->size);
    /* Only our own file: someone may have removed it and a new server created the name again. */
    hs__shm_unlink_if(s->shm_name, s->dev, s->ino);
    close(s->fd);
    free_private(s);
}

int hs_shm_server_inspect(const char *bench, struct hs_shm_segment_info *ret, struct hs_diag *diag)
{
    char name[sizeof HS_SHM_PATH_PREFIX + HS_SHM_BENCH_MAX];
    if (shm_name_for(bench, name, sizeof name) < 0)
        return bad_bench(bench, diag);
    struct hs_shm_occupant o;
    int r = hs__shm_occupant(name, &o);
    if (r < 0)
        return hs_diag_set(diag, r, NULL, 0, 0, "shm: %s: %s", name + 1,
                           hs_open_regular_strerror(r));
    memset(ret, 0, sizeof *ret);
    ret->size = o.size;
    ret->hilsim = o.hilsim;
    ret->alive = o.alive;
    ret->pid = o.pid;
    ret->start = o.start;
    ret->server_state = o.server_state;
    ret->tick = o.tick;
    return 0;
}

int hs_shm_server_remove(const char *bench, int force, struct hs_diag *diag)
{
    char name[sizeof HS_SHM_PATH_PREFIX + HS_SHM_BENCH_MAX];
    if (shm_name_for(bench, name, sizeof name) < 0)
        return bad_bench(bench, diag);
    struct hs_shm_occupant o;
    int r = hs__shm_occupant(name, &o);
    if (r < 0)
        return hs_diag_set(diag, r, NULL, 0, 0, "shm: %s: %s", name + 1,
                           hs_open_regular_strerror(r));
    if (!o.hilsim && !force)
        return hs_diag_set(diag, -EPROTO, NULL, 0, 0,
                           "shm: %s is not a hilsim segment (size %llu, magic 0x%08x); left alone",
                           name + 1, (unsigned long long)o.size, o.magic);
    if (o.alive && !force)
        return hs_diag_set(diag, -EBUSY, NULL, 0, 0, "shm: %s is in use by running pid %d",
                           name + 1, (int)o.pid);
    r = hs__shm_unlink_if(name, o.dev, o.ino);
    if (r == -ESTALE)
        return hs_diag_set(diag, -EAGAIN, NULL, 0, 0,
                           "shm: %s was replaced while checking it; look again", name + 1);
    if (r < 0)
        return hs_diag_set(diag, r, NULL, 0, 0, "shm: removing %s: %s", name + 1, strerror(-r));
    return 0;
}

int hs_shm_server_remove_stale(const char *bench, struct hs_diag *diag)
{
    return hs_shm_server_remove(bench, 0, diag);
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

struct hs_shm_reading_stamp *hs_shm_server_reading_stamps(struct hs_shm_server *s)
{
    return (struct hs_shm_reading_stamp *)s->readings_staging;
}

double *hs_shm_server_reading_values(struct hs_shm_server *s)
{
    return (double *)(s->readings_staging +
                      (uint64_t)s->reading_count * sizeof(struct hs_shm_reading_stamp));
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
