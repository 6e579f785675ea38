/* Where a bench's control socket lives, computed the same way by the service and by
 * `hilsim ctl`, next to how the shm segment names the bench (/dev/shm/hilsim-BENCH). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hilsim/ctl.h"

static int format(const char *dir, const char *bench, char *buf, size_t size)
{
    size_t max = sizeof(((struct sockaddr_un *)0)->sun_path);
    int n = snprintf(buf, size, "%s/hilsim-%s.ctl", dir, bench);
    if (n < 0 || (size_t)n >= size || (size_t)n >= max)
        return -ENAMETOOLONG;
    return 0;
}

int hs_ctl_socket_path(const char *bench, bool existing, char *buf, size_t size)
{
    if (!bench[0] || strchr(bench, '/'))
        return -EINVAL;
    const char *dirs[3];
    int n = 0;
    const char *env = getenv("HILSIM_CTL_DIR");
    if (env && env[0])
        return format(env, bench, buf, size);
    if (access("/run/hilsim", W_OK | X_OK) == 0)
        dirs[n++] = "/run/hilsim"; // NOLINT(bugprone-branch-clone): two reasons, one directory
    else if (existing)
        dirs[n++] = "/run/hilsim"; /* the service may write where the client cannot */
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg && xdg[0])
        dirs[n++] = xdg;
    dirs[n++] = "/tmp";
    if (existing) {
        struct stat st;
        for (int k = 0; k < n; k++)
            if (format(dirs[k], bench, buf, size) == 0 && stat(buf, &st) == 0 &&
                S_ISSOCK(st.st_mode))
                return 0;
    }
    /* the service's choice: the first writable directory */
    for (int k = 0; k < n; k++)
        if (access(dirs[k], W_OK | X_OK) == 0)
            return format(dirs[k], bench, buf, size);
    return format("/tmp", bench, buf, size);
}

int hs_ctl_socket_take(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISSOCK(st.st_mode))
        return -EEXIST;
    /* Non-blocking: a listener whose backlog is full (anyone may plant one in /tmp) makes a
     * blocking connect wait for good, at start-up, with the stop signals blocked; here it
     * answers EAGAIN, and the socket counts as in use. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    /* a live server accepts (into its backlog, even when busy); a dead one's socket refuses;
     * anything else (no permission) says nothing about its owner: left alone */
    int r = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : errno;
    close(fd);
    if (r == 0 || r == EAGAIN)
        return -EADDRINUSE;
    if (r != ECONNREFUSED)
        return -r;
    return unlink(path) < 0 ? -errno : 1;
}
