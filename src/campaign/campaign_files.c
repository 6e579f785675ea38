/* The small file chores of a campaign: atomic result files, removing a passed run's recording. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "campaign_internal.h"

int hs__camp_write_atomic(const char *path, const char *text)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return -ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            unlink(tmp);
            return -e;
        }
        off += (size_t)n;
    }
    /* The rename publishes the file: its bytes must be on disk first, or a crash could leave a
     * complete-looking empty result that a resumed campaign would skip. */
    if (fsync(fd) < 0 || close(fd) < 0) {
        unlink(tmp);
        return -errno;
    }
    return rename(tmp, path) < 0 ? -errno : 0;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

int hs__camp_rmtree(const char *path)
{
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0 ? -errno : 0;
}
