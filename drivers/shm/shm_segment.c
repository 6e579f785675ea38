/* Creating the POSIX shm object: exclusive name, ownership and mode, size, mapping, mlock. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hilsim/file_open.h"
#include "shm_server_internal.h"

int hs__shm_pid_start(int32_t pid, uint64_t *ret_start)
{
    char path[64], buf[1024];
    if (pid <= 0)
        return -ESRCH;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -ESRCH; /* a process that exited between open and read */
    buf[n] = 0;
    /* The command name (field 2) may hold spaces and ')': fields are counted after the last ')'.
     * Field 3 (state) follows it; starttime is field 22. */
    char *p = strrchr(buf, ')');
    if (!p)
        return -EPROTO;
    p++;
    for (int field = 2; field < 21 && p; field++)
        p = strchr(p + 1, ' ');
    if (!p)
        return -EPROTO;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p + 1, &end, 10);
    if (errno || end == p + 1)
        return -EPROTO;
    *ret_start = v;
    return 0;
}

int hs__shm_owner_alive(int32_t pid, uint64_t start)
{
    uint64_t now;
    int r = hs__shm_pid_start(pid, &now);
    if (r == -ESRCH)
        return 0;
    if (r < 0) /* cannot tell: treat as alive, never take a segment that may be in use */
        return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
    return start == 0 || now == start; /* 0: a server that did not record its start time */
}

static int lookup_group(const char *group, gid_t *ret_gid, struct hs_diag *diag)
{
    char buf[4096];
    struct group gr, *res = NULL;
    int r = getgrnam_r(group, &gr, buf, sizeof buf, &res);
    if (r)
        return hs_diag_set(diag, -r, NULL, 0, 0, "shm: looking up group '%s': %s", group,
                           strerror(r));
    if (!res)
        return hs_diag_set(diag, -ENOENT, NULL, 0, 0, "shm: group '%s' does not exist", group);
    *ret_gid = gr.gr_gid;
    return 0;
}

int hs__shm_occupant(const char *shm_name, struct hs_shm_occupant *ret)
{
    memset(ret, 0, sizeof *ret);
    /* /dev/shm is world-writable: anyone can plant a FIFO or a link at a bench's name. The
     * open neither waits (O_NONBLOCK: a FIFO without a writer would block it, with the
     * runner's stop signals still blocked) nor follows a link, and only a regular file is
     * read. */
    char path[sizeof "/dev/shm" + sizeof HS_SHM_PATH_PREFIX + HS_SHM_BENCH_MAX];
    snprintf(path, sizeof path, "/dev/shm%s", shm_name);
    int fd;
    uint64_t size;
    int r = hs_open_regular_flags(path, HS_OPEN_NOFOLLOW, &fd, &size);
    if (r < 0)
        return r == -ELOOP || r == -EISDIR ? -EINVAL : r;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        r = -errno;
        close(fd);
        return r;
    }
    ret->dev = st.st_dev;
    ret->ino = st.st_ino;
    ret->size = (uint64_t)st.st_size;
    if ((uint64_t)st.st_size < sizeof(struct hs_shm_header)) {
        close(fd);
        return 0;
    }
    /* pread, not mmap: a client shrinking the file meanwhile gives a short read, not SIGBUS. */
    struct hs_shm_header h;
    ssize_t n = pread(fd, &h, sizeof h, 0);
    close(fd);
    if (n != (ssize_t)sizeof h)
        return 0;
    ret->magic = atomic_load_explicit(&h.magic, memory_order_relaxed);
    ret->pid = h.creator_pid;
    ret->start = h.creator_start;
    ret->server_state = atomic_load_explicit(&h.server_state, memory_order_relaxed);
    ret->tick = atomic_load_explicit(&h.tick_futex, memory_order_relaxed);
    ret->hilsim = ret->magic == HS_SHM_MAGIC;
    ret->alive = ret->hilsim && hs__shm_owner_alive(ret->pid, ret->start);
    return 0;
}

int hs__shm_unlink_if(const char *shm_name, dev_t dev, ino_t ino)
{
    char path[sizeof "/dev/shm" + sizeof HS_SHM_PATH_PREFIX + HS_SHM_BENCH_MAX];
    snprintf(path, sizeof path, "/dev/shm%s", shm_name);
    struct stat st;
    if (stat(path, &st) < 0)
        return -errno;
    /* The name now points at another file (someone removed ours and a new server created its
     * own): leave it. Between this stat and the unlink a third party could swap the name again;
     * that needs two new servers in that microsecond window and is accepted. */
    if (st.st_dev != dev || st.st_ino != ino)
        return -ESTALE;
    return shm_unlink(shm_name) < 0 ? -errno : 0;
}

/* Handles an occupied name: a dead hilsim server's segment is removed (takeover, said in note);
 * anything else is explained in diag and left alone. Returns 0 when the name is free again. */
static int clear_occupant(const char *shm_name, char *note, size_t note_size, struct hs_diag *diag)
{
    struct hs_shm_occupant o;
    int r = hs__shm_occupant(shm_name, &o);
    if (r == -ENOENT)
        return 0; /* gone meanwhile */
    if (r < 0)
        return hs_diag_set(diag, -EEXIST, NULL, 0, 0, "shm: %s already exists (unreadable: %s)",
                           shm_name + 1, hs_open_regular_strerror(r));
    if (o.size < sizeof(struct hs_shm_header))
        return hs_diag_set(diag, -EEXIST, "/dev/shm", 0, 0,
                           "shm: %s already exists and is not a complete hilsim segment; remove "
                           "/dev/shm%s if no server uses it",
                           shm_name + 1, shm_name);
    if (!o.hilsim)
        return hs_diag_set(diag, -EEXIST, NULL, 0, 0,
                           "shm: %s already exists but is not a hilsim segment (magic 0x%08x)",
                           shm_name + 1, o.magic);
    if (o.alive)
        return hs_diag_set(diag, -EEXIST, NULL, 0, 0,
                           "shm: bench segment %s is in use by running server pid %d", shm_name + 1,
                           (int)o.pid);
    r = hs__shm_unlink_if(shm_name, o.dev, o.ino);
    if (r < 0 && r != -ENOENT && r != -ESTALE)
        return hs_diag_set(diag, r, NULL, 0, 0,
                           "shm: removing stale segment %s of dead server pid %d: %s", shm_name + 1,
                           (int)o.pid, strerror(-r));
    if (note)
        snprintf(note, note_size,
                 "shm: took over stale segment %s: its server pid %d is dead (state %u, tick %u)",
                 shm_name + 1, (int)o.pid, o.server_state, o.tick);
    return 0;
}

int hs__shm_segment_create(const char *shm_name, uint64_t size, const char *group, mode_t mode,
                           unsigned char **ret_base, int *ret_fd, char *note, size_t note_size,
                           struct hs_diag *diag)
{
    gid_t gid = (gid_t)-1;
    int r;
    if (group && (r = lookup_group(group, &gid, diag)) < 0)
        return r;

    /* Created 0600 and opened up by fchmod below, so no one sees it before it is ours. */
    int fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        if ((r = clear_occupant(shm_name, note, note_size, diag)) < 0)
            return r;
        fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
            return hs_diag_set(diag, -EEXIST, NULL, 0, 0,
                               "shm: %s was created again by another server while this one took "
                               "it over",
                               shm_name + 1);
    }
    if (fd < 0) {
        r = -errno;
        return hs_diag_set(diag, r, NULL, 0, 0, "shm: creating %s: %s", shm_name + 1, strerror(-r));
    }
    unsigned char *base = MAP_FAILED;
    if (group && fchown(fd, (uid_t)-1, gid) < 0) {
        r = hs_diag_set(diag, -errno, NULL, 0, 0, "shm: giving %s to group '%s': %s", shm_name + 1,
                        group, strerror(errno));
        goto fail;
    }
    if (fchmod(fd, mode) < 0) {
        r = hs_diag_set(diag, -errno, NULL, 0, 0, "shm: chmod %s to 0%o: %s", shm_name + 1,
                        (unsigned)mode, strerror(errno));
        goto fail;
    }
    if (ftruncate(fd, (off_t)size) < 0) {
        r = hs_diag_set(diag, -errno, NULL, 0, 0, "shm: sizing %s to %llu bytes: %s", shm_name + 1,
                        (unsigned long long)size, strerror(errno));
        goto fail;
    }
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        r = hs_diag_set(diag, -errno, NULL, 0, 0, "shm: mapping %s: %s", shm_name + 1,
                        strerror(errno));
        goto fail;
    }
    if (mlock(base, size) < 0) {
        r = hs_diag_set(diag, -errno, NULL, 0, 0,
                        "shm: mlock of %s (%llu bytes): %s (raise RLIMIT_MEMLOCK)", shm_name + 1,
                        (unsigned long long)size, strerror(errno));
        goto fail;
    }
    *ret_base = base;
    *ret_fd = fd; /* kept: repair after a client truncated it, identity check before unlink */
    return 0;
fail:
    if (base != MAP_FAILED)
        munmap(base, size);
    close(fd);
    shm_unlink(shm_name);
    return r;
}
