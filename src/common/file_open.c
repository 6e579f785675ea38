#include "hilsim/file_open.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_mode(mode_t m)
{
    if (S_ISREG(m))
        return 0;
    return S_ISDIR(m) ? -EISDIR : -EINVAL;
}

int hs_open_regular(const char *path, int *ret_fd)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -errno;
    int r = check_mode(st.st_mode);
    if (r < 0)
        return r;
    /* The path may have changed since the stat: O_NONBLOCK keeps a FIFO's open from waiting
     * for a writer, and the fstat below refuses whatever was opened if it is not a file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
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
    return 0;
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

const char *hs_open_regular_strerror(int neg_errno)
{
    if (neg_errno == -EINVAL)
        return "not a regular file (a FIFO, device or socket)";
    return strerror(-neg_errno);
}
