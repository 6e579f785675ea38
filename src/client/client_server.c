/* Is the server that created our segment still there? A server that stops marks the segment
 * (HS_SHM_SERVER_STOPPED); one that crashed cannot, so the client looks for its traces: the name
 * removed or naming another file (a new server took over), or the creator process gone (pid and
 * start time, as the server's own stale check). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_internal.h"

/* Field 22 of /proc/PID/stat (start time, clock ticks since boot). -ESRCH when no process. */
static int pid_start(int32_t pid, uint64_t *ret_start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -ESRCH;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
    if (p)
        p++; /* the space before field 3 */
    for (int field = 2; p && field < 21; field++)
        p = strchr(p + 1, ' ');
    if (!p)
        return -EPROTO;
    *ret_start = strtoull(p + 1, NULL, 10);
    return 0;
}

int hs__client_server_gone(const struct hs_client *c)
{
    if (atomic_load_explicit(&c->hdr->server_state, memory_order_acquire) == HS_SHM_SERVER_STOPPED)
        return -ESHUTDOWN;
    struct stat st;
    if (stat(c->path, &st) < 0 || st.st_dev != c->dev || st.st_ino != c->ino)
        return -EIDRM;
    if (c->server_pid <= 0)
        return 0;
    uint64_t start = 0;
    int r = pid_start(c->server_pid, &start);
    if (r == -ESRCH)
        return -EIDRM;
    if (r == 0 && c->server_start && start != c->server_start)
        return -EIDRM; /* the pid now belongs to another process */
    return 0;          /* alive, or /proc unreadable: assume alive */
}

int hs_client_server_check(const struct hs_client *c)
{
    return hs__client_server_gone(c);
}
