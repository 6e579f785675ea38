/* The bench's control socket, from a thread of the view: "status" every half second, and the
 * commands a browser sends (with --allow-control), one at a time. The socket checks the view's
 * credentials as it checks any client's: the view can do no more than its user could with
 * hilsim ctl. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hilsim/ctl.h"
#include "view_internal.h"

#define STATUS_PERIOD_MS 500
#define ANSWER_TIMEOUT_MS 2000

struct hs_view_ctl {
    char bench[HS_CTL_LINE_MAX];
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;
    char status[4096];
    uint64_t status_gen;
    char cmd[HS_CTL_LINE_MAX];
    uint64_t cmd_session;
    bool cmd_pending, answer_ready;
    char answer[4096];
};

/* One line to the socket, one line back (a fresh connection each time, as hilsim ctl does). */
static void ask(const char *bench, const char *line, char *answer, size_t size)
{
    char path[108];
    int r = hs_ctl_socket_path(bench, true, path, sizeof path);
    if (r < 0) {
        snprintf(answer, size, "error control socket of '%s': %s", bench, strerror(-r));
        return;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        snprintf(answer, size, "error %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    char out[HS_CTL_LINE_MAX + 2];
    int n = snprintf(out, sizeof out, "%s\n", line);
    size_t have = 0;
    answer[0] = 0;
    if (send(fd, out, (size_t)n, MSG_NOSIGNAL) != n) {
        snprintf(answer, size, "error %s: %s", path, strerror(errno));
        close(fd);
        return;
    }
    while (have + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, ANSWER_TIMEOUT_MS) <= 0)
            break;
        ssize_t got = recv(fd, answer + have, size - 1 - have, 0);
        if (got <= 0)
            break;
        have += (size_t)got;
        answer[have] = 0;
        if (memchr(answer, '\n', have))
            break;
    }
    close(fd);
    answer[have] = 0;
    answer[strcspn(answer, "\n")] = 0;
    if (!have)
        snprintf(answer, size, "error %s: no answer", path);
}

static void *run(void *arg)
{
    struct hs_view_ctl *c = arg;
    char answer[4096];
    pthread_mutex_lock(&c->lock);
    while (!c->stop) {
        if (c->cmd_pending) {
            char cmd[HS_CTL_LINE_MAX];
            memcpy(cmd, c->cmd, sizeof cmd);
            pthread_mutex_unlock(&c->lock);
            ask(c->bench, cmd, answer, sizeof answer);
            pthread_mutex_lock(&c->lock);
            memcpy(c->answer, answer, sizeof answer);
            c->cmd_pending = false;
            c->answer_ready = true;
            continue;
        }
        pthread_mutex_unlock(&c->lock);
        ask(c->bench, "status", answer, sizeof answer);
        pthread_mutex_lock(&c->lock);
        memcpy(c->status, answer, sizeof answer);
        c->status_gen++;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += STATUS_PERIOD_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        while (!c->stop && !c->cmd_pending &&
               pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

int hs_view_ctl_start(const char *bench, struct hs_view_ctl **ret)
{
    struct hs_view_ctl *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    snprintf(c->bench, sizeof c->bench, "%s", bench);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, &ca);
    pthread_condattr_destroy(&ca);
    int r = pthread_create(&c->thread, NULL, run, c);
    if (r) {
        pthread_cond_destroy(&c->wake);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return -r;
    }
    *ret = c;
    return 0;
}

void hs_view_ctl_stop(struct hs_view_ctl *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->stop = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

uint64_t hs_view_ctl_status(struct hs_view_ctl *c, char *buf, size_t size)
{
    pthread_mutex_lock(&c->lock);
    snprintf(buf, size, "%s", c->status);
    uint64_t gen = c->status_gen;
    pthread_mutex_unlock(&c->lock);
    return gen;
}

int hs_view_ctl_submit(struct hs_view_ctl *c, const char *line, uint64_t session)
{
    int r = 0;
    pthread_mutex_lock(&c->lock);
    if (c->cmd_pending || c->answer_ready) {
        r = -EBUSY;
    } else {
        snprintf(c->cmd, sizeof c->cmd, "%s", line);
        c->cmd_session = session;
        c->cmd_pending = true;
        pthread_cond_signal(&c->wake);
    }
    pthread_mutex_unlock(&c->lock);
    return r;
}

int hs_view_ctl_answer(struct hs_view_ctl *c, uint64_t *ret_session, char *buf, size_t size)
{
    pthread_mutex_lock(&c->lock);
    int r = c->answer_ready;
    if (r) {
        *ret_session = c->cmd_session;
        snprintf(buf, size, "%s", c->answer);
        c->answer_ready = false;
    }
    pthread_mutex_unlock(&c->lock);
    return r;
}
