/* Creating the POSIX shm object: exclusive name, ownership and mode, size, mapping, mlock. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm_server_internal.h"

int hs__shm_pid_alive(int32_t pid)
{
    if (pid <= 0)
        return 0;
    return kill(pid, 0) == 0 || errno != ESRCH;
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

/* Explains who occupies the name: a live server, a stale segment, or something else. */
static int describe_occupant(const char *shm_name, struct hs_diag *diag)
{
    int fd = shm_open(shm_name, O_RDONLY, 0);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size < sizeof(struct hs_shm_header)) {
        if (fd >= 0)
            close(fd);
        return hs_diag_set(diag, -EEXIST, "/dev/shm", 0, 0,
                           "shm: %s already exists and is not a complete hilsim segment; remove "
                           "/dev/shm%s if no server uses it",
                           shm_name + 1, shm_name);
    }
    struct hs_shm_header *h = mmap(NULL, sizeof *h, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (h == MAP_FAILED)
        return hs_diag_set(diag, -EEXIST, NULL, 0, 0, "shm: %s already exists (unreadable)",
                           shm_name + 1);
    uint32_t magic = atomic_load_explicit(&h->magic, memory_order_acquire);
    int32_t pid = h->creator_pid;
    munmap(h, sizeof *h);
    if (magic != HS_SHM_MAGIC)
        return hs_diag_set(diag, -EEXIST, NULL, 0, 0,
                           "shm: %s already exists but is not a hilsim segment (magic 0x%08x)",
                           shm_name + 1, magic);
    if (hs__shm_pid_alive(pid))
        return hs_diag_set(diag, -EEXIST, NULL, 0, 0,
                           "shm: bench segment %s is in use by running server pid %d", shm_name + 1,
                           (int)pid);
    return hs_diag_set(diag, -EEXIST, NULL, 0, 0,
                       "shm: stale segment %s: its creator pid %d is dead; remove /dev/shm%s "
                       "(or call hs_shm_server_remove_stale)",
                       shm_name + 1, (int)pid, shm_name);
}

int hs__shm_segment_create(const char *shm_name, uint64_t size, const char *group, mode_t mode,
                           unsigned char **ret_base, struct hs_diag *diag)
{
    gid_t gid = (gid_t)-1;
    int r;
    if (group && (r = lookup_group(group, &gid, diag)) < 0)
        return r;

    /* Created 0600 and opened up by fchmod below, so no one sees it before it is ours. */
    int fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            return describe_occupant(shm_name, diag);
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
    close(fd);
    *ret_base = base;
    return 0;
fail:
    if (base != MAP_FAILED)
        munmap(base, size);
    close(fd);
    shm_unlink(shm_name);
    return r;
}
