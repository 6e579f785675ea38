#include "hilsim/file_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_mode(mode_t m)
{
    if (S_ISREG(m))
        return 0;
    if (S_ISLNK(m))
        return -ELOOP;
    return S_ISDIR(m) ? -EISDIR : -EINVAL;
}

int hs_open_regular_flags(const char *path, unsigned flags, int *ret_fd, uint64_t *ret_size)
{
    struct stat st;
    bool nofollow = flags & HS_OPEN_NOFOLLOW;
    if ((nofollow ? lstat(path, &st) : stat(path, &st)) != 0)
        return -errno;
    int r = check_mode(st.st_mode);
    if (r < 0)
        return r;
    /* The path may have changed since the stat: O_NONBLOCK keeps a FIFO's open from waiting
     * for a writer, and the fstat below refuses whatever was opened if it is not a file. */
    int fd = open(path, ((flags & HS_OPEN_RDWR) ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY |
                            O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0)
        r = -errno;
    else
        r = check_mode(st.st_mode);
    int fl = r == 0 ? fcntl(fd, F_GETFL) : 0;
    if (r == 0 && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
        r = -errno;
    if (r < 0) {
        close(fd);
        return r;
    }
    *ret_fd = fd;
    if (ret_size)
        *ret_size = (uint64_t)st.st_size;
    return 0;
}

int hs_open_regular(const char *path, int *ret_fd)
{
    return hs_open_regular_flags(path, 0, ret_fd, NULL);
}

int hs_fopen_regular(const char *path, FILE **ret_file)
{
    int fd;
    int r = hs_open_regular(path, &fd);
    if (r < 0)
        return r;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        r = -errno;
        close(fd);
        return r;
    }
    *ret_file = f;
    return 0;
}

int hs_read_regular(const char *path, unsigned flags, size_t max, uint8_t **ret, size_t *ret_len)
{
    int fd;
    uint64_t size;
    int r = hs_open_regular_flags(path, flags, &fd, &size);
    if (r < 0)
        return r;
    if (size > max || max >= SIZE_MAX) {
        close(fd);
        return -EFBIG;
    }
    /* Sized by the fstat, grown only up to max: a file that grows while it is read (a run
     * still writing it) is read up to max, never further. */
    size_t cap = (size_t)size + 1, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        uint8_t probe;
        bool full = len + 1 == cap; /* read one byte aside to tell the end from growth */
        ssize_t n = full ? read(fd, &probe, 1) : read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = -EIO;
            break;
        }
        if (n == 0)
            break;
        if (!full) {
            len += (size_t)n;
            continue;
        }
        if (len >= max) {
            r = -EFBIG;
            break;
        }
        size_t nc = cap > max / 2 ? max + 1 : cap * 2;
        uint8_t *nb = realloc(buf, nc);
        if (!nb) {
            r = -ENOMEM;
            break;
        }
        buf = nb;
        cap = nc;
        buf[len++] = probe;
    }
    close(fd);
    if (!buf)
        return -ENOMEM;
    if (r < 0) {
        free(buf);
        return r;
    }
    buf[len] = 0;
    *ret = buf;
    *ret_len = len;
    return 0;
}

const char *hs_open_regular_strerror(int neg_errno)
{
    if (neg_errno == -EINVAL)
        return "not a regular file (a FIFO, device or socket)";
    if (neg_errno == -ELOOP)
        return "a symbolic link (refused here)";
    if (neg_errno == -EFBIG)
        return "too large";
    return strerror(-neg_errno);
}
