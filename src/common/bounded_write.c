/* Writes that wait for a reader only as long as the caller allows (bounded_write.h). */
#include "hilsim/bounded_write.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One piece without blocking: > 0 bytes written, 0 no room now, < 0 a failure. */
static long write_piece(int fd, const char *p, size_t n, int *is_socket)
{
    if (*is_socket) {
        ssize_t w = send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w >= 0)
            return (long)w;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return 0;
        if (errno != ENOTSOCK)
            return -errno;
        *is_socket = 0;
    }
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    int pr = poll(&pfd, 1, 0);
    if (pr < 0)
        return errno == EINTR ? 0 : -errno;
    if (pr == 0)
        return 0;
    if (pfd.revents & POLLNVAL)
        return -EBADF;
    /* POLLERR/POLLHUP: the write below reports the failure (EPIPE with SIGPIPE ignored). */
    ssize_t w = write(fd, p, n < PIPE_BUF ? n : PIPE_BUF);
    if (w < 0)
        return errno == EINTR || errno == EAGAIN ? 0 : -errno;
    return (long)w;
}

long hs_write_bounded(int fd, const void *buf, size_t len, int timeout_ms)
{
    const char *p = buf;
    size_t done = 0;
    int is_socket = 1;
    int64_t end = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    while (done < len) {
        long w = write_piece(fd, p + done, len - done, &is_socket);
        if (w < 0)
            return done ? (long)done : w;
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        int64_t left = end - now_ms();
        if (left <= 0)
            break;
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        if (poll(&pfd, 1, (int)(left < INT_MAX ? left : INT_MAX)) < 0 && errno != EINTR)
            return done ? (long)done : -errno;
    }
    return (long)done;
}
