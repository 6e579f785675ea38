/* What assimp may open while it imports one mesh (urdf_mesh.c): the mesh itself, served from the
 * bytes already read and checked, and the files the format references beside it (a glTF's
 * external buffers, `uri: "x.bin"`). A reference is read only when it is a regular file inside
 * the mesh's directory: a relative name without "..", resolved beneath that directory with no
 * symbolic link leading out of it (openat2, RESOLVE_BENEATH), opened without waiting (a FIFO
 * there cannot hang the load), fstat-checked, and no larger than what is left of the mesh's
 * byte budget; it is then read whole and assimp reads the copy. Anything else is refused, and
 * the refusal (not assimp's "could not open") is what the error says. init only. */
#include <assimp/cfileio.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "urdf_internal.h"

/* One open file: bytes in memory, a read position. */
struct mem_file {
    struct aiFile f;
    const uint8_t *data;
    size_t len, pos;
    uint8_t *owned; /* a reference's copy (freed at close); NULL for the mesh's own bytes */
};

static size_t mem_read(struct aiFile *f, char *buf, size_t size, size_t count)
{
    struct mem_file *m = (struct mem_file *)f->UserData;
    if (!size || !count || m->pos >= m->len)
        return 0;
    size_t n = (m->len - m->pos) / size;
    if (n > count)
        n = count;
    memcpy(buf, m->data + m->pos, n * size);
    m->pos += n * size;
    return n;
}

static size_t mem_write(struct aiFile *f, const char *buf, size_t size, size_t count)
{
    (void)f, (void)buf, (void)size, (void)count;
    return 0; /* read-only: assimp writes nothing here */
}

static size_t mem_tell(struct aiFile *f)
{
    return ((struct mem_file *)f->UserData)->pos;
}

static size_t mem_size(struct aiFile *f)
{
    return ((struct mem_file *)f->UserData)->len;
}

/* offset is unsigned: a step back from the current position arrives wrapped, and wraps back. */
static enum aiReturn mem_seek(struct aiFile *f, size_t offset, enum aiOrigin origin)
{
    struct mem_file *m = (struct mem_file *)f->UserData;
    size_t base = origin == aiOrigin_SET ? 0 : origin == aiOrigin_CUR ? m->pos : m->len;
    size_t to = base + offset;
    if (to > m->len)
        return aiReturn_FAILURE;
    m->pos = to;
    return aiReturn_SUCCESS;
}

static void mem_flush(struct aiFile *f)
{
    (void)f;
}

static struct aiFile *mem_open(const uint8_t *data, size_t len, uint8_t *owned)
{
    struct mem_file *m = calloc(1, sizeof *m);
    if (!m) {
        free(owned);
        return NULL;
    }
    m->data = data;
    m->len = len;
    m->owned = owned;
    m->f = (struct aiFile){.ReadProc = mem_read,
                           .WriteProc = mem_write,
                           .TellProc = mem_tell,
                           .FileSizeProc = mem_size,
                           .SeekProc = mem_seek,
                           .FlushProc = mem_flush,
                           .UserData = (aiUserData)m};
    return &m->f;
}

/* The first refusal is the one reported (later ones follow from it). Returns err. */
static int refuse(struct hs__mesh_io *io, int err, const char *rel, const char *why)
{
    if (!io->err) {
        io->err = err;
        snprintf(io->why, sizeof io->why, "referenced file '%.300s': %.180s", rel, why);
    }
    return err;
}

/* A relative name that stays below its directory by its words alone. */
static const char *escape(const char *rel)
{
    if (!rel[0])
        return "an empty name";
    if (rel[0] == '/')
        return "an absolute path (only files in the mesh's directory are read)";
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return "leaves the mesh's directory (..)";
        p += n + (p[n] == '/');
    }
    return NULL;
}

static int open_beneath(const struct hs__mesh_io *io, const char *rel)
{
    struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, io->dirfd, rel, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS)
        return fd;
    /* a kernel before 5.6: a name right in the directory only, and not a link */
    if (strchr(rel, '/')) {
        errno = EXDEV;
        return -1;
    }
    return openat(io->dirfd, rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
}

static int read_reference(struct hs__mesh_io *io, const char *name, uint8_t **ret, size_t *ret_len)
{
    /* assimp names a reference as the mesh's directory followed by what the file says */
    if (strncmp(name, io->path, io->dirlen) != 0)
        return refuse(io, -EXDEV, name, "not in the mesh's directory");
    const char *rel = name + io->dirlen, *why = escape(rel);
    if (why)
        return refuse(io, -EXDEV, rel, why);
    int fd = open_beneath(io, rel);
    if (fd < 0) {
        int e = errno;
        return refuse(io, -e, rel,
                      e == EXDEV   ? "leaves the mesh's directory (through a symbolic link)"
                      : e == ELOOP ? "a symbolic link (refused here)"
                                   : strerror(e));
    }
    struct stat st;
    int r = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
    if (r == 0 && (uint64_t)st.st_size > io->budget) {
        char why_big[128];
        snprintf(why_big, sizeof why_big, "%llu bytes, more than the %zu left of the mesh's %u",
                 (unsigned long long)st.st_size, io->budget, HS_URDF_MESH_FILE_MAX);
        close(fd);
        return refuse(io, -EFBIG, rel, why_big);
    }
    if (r < 0) {
        close(fd);
        return refuse(io, r, rel,
                      r == -EINVAL ? "not a regular file (a FIFO, device or socket)"
                                   : strerror(-r));
    }
    /* read no more than fstat said: a file that grows meanwhile is cut there */
    size_t cap = (size_t)st.st_size, len = 0;
    uint8_t *buf = malloc(cap ? cap : 1);
    while (buf && len < cap) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            r = -errno;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    if (!buf)
        return refuse(io, -ENOMEM, rel, "out of memory");
    if (r < 0) {
        free(buf);
        return refuse(io, r, rel, strerror(-r));
    }
    io->budget -= len;
    *ret = buf;
    *ret_len = len;
    return 0;
}

static struct aiFile *io_open(struct aiFileIO *fio, const char *name, const char *mode)
{
    struct hs__mesh_io *io = (struct hs__mesh_io *)fio->UserData;
    if (!name || !mode || mode[0] != 'r' || strchr(mode, '+'))
        return NULL;
    if (!strcmp(name, io->path))
        return mem_open(io->data, io->len, NULL);
    uint8_t *buf;
    size_t len;
    if (read_reference(io, name, &buf, &len) < 0)
        return NULL;
    return mem_open(buf, len, buf);
}

static void io_close(struct aiFileIO *fio, struct aiFile *f)
{
    (void)fio;
    if (!f)
        return;
    struct mem_file *m = (struct mem_file *)f->UserData;
    free(m->owned);
    free(m);
}

int hs__mesh_io_init(struct hs__mesh_io *io, const char *path, const uint8_t *data, size_t len,
                     struct aiFileIO *ret_fio)
{
    memset(io, 0, sizeof *io);
    io->path = path;
    io->data = data;
    io->len = len;
    io->budget = len < HS_URDF_MESH_FILE_MAX ? HS_URDF_MESH_FILE_MAX - len : 0;
    const char *slash = strrchr(path, '/');
    io->dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
             slash ? path : ".");
    io->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (io->dirfd < 0)
        return -errno;
    *ret_fio =
        (struct aiFileIO){.OpenProc = io_open, .CloseProc = io_close, .UserData = (aiUserData)io};
    return 0;
}

void hs__mesh_io_fini(struct hs__mesh_io *io)
{
    if (io->dirfd >= 0)
        close(io->dirfd);
    io->dirfd = -1;
}
