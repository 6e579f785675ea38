/* The bench's control socket, from a thread of the view: "status" every half second, "state
 * --json" at the display rate for the robots' root poses (view_pose.c), and the commands a
 * browser sends (with --allow-control), one at a time. The socket checks the view's
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
/* A bench that gives no state (an older one, or a lockstep bench nobody steps: the bench then
 * answers after its 2 s wait for a tick boundary, which holds up the status polls) is asked
 * again after this long, not at the display rate. */
#define STATE_RETRY_MS 5000
#define STATE_ANSWER_MAX (1u << 20)
#define ANSWER_MAX (256u << 10) /* a browser's `state` of a large bench */

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
    char *answer;            /* ANSWER_MAX: a command's answer (`state` included), for the server */
    char *cmd_buf;           /* ANSWER_MAX: where the thread reads it into */
    int64_t state_period_ns; /* 0: no root poses */
    char *state;             /* STATE_ANSWER_MAX: the last raw answer (thread only) */
    char pose[HS_VIEW_POSE_MAX];
    uint64_t pose_gen;
    char scen[HS_VIEW_SCEN_MAX];     /* the scenario message (view_scen.c) */
    uint64_t scen_gen;               /* raised when its text changed */
    char scen_new[HS_VIEW_SCEN_MAX]; /* thread only: the one just read */
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The size of a whole answer in buf: 0 while incomplete. One line, except `state`: the line
 * "ok state BYTES" and then BYTES of body. */
static size_t answer_size(const char *buf, size_t have)
{
    const char *nl = memchr(buf, '\n', have);
    if (!nl)
        return 0;
    size_t head = (size_t)(nl - buf) + 1;
    unsigned long body;
    if (strncmp(buf, "ok state ", 9) || sscanf(buf + 9, "%lu", &body) != 1)
        return head;
    return have - head >= body ? head + body : 0;
}

/* One line to the socket, one answer back (a fresh connection each time, as hilsim ctl does):
 * into answer, its first line; for `state` its body, after the header line too unless
 * body_only. */
static void ask(const char *bench, const char *line, char *answer, size_t size, bool body_only)
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
        if (answer_size(answer, have))
            break;
    }
    close(fd);
    answer[have] = 0;
    size_t whole = answer_size(answer, have);
    if (whole && !strncmp(answer, "ok state ", 9)) {
        size_t head = body_only ? strcspn(answer, "\n") + 1 : 0;
        memmove(answer, answer + head, whole - head);
        answer[whole - head] = 0;
        return;
    }
    answer[strcspn(answer, "\n")] = 0;
    if (!have)
        snprintf(answer, size, "error %s: no answer", path);
}

static void *run(void *arg)
{
    struct hs_view_ctl *c = arg;
    char answer[4096];
    char pose[HS_VIEW_POSE_MAX], err[160];
    int64_t next_status = 0, next_state = 0;
    pthread_mutex_lock(&c->lock);
    while (!c->stop) {
        if (c->cmd_pending) {
            char cmd[HS_CTL_LINE_MAX];
            memcpy(cmd, c->cmd, sizeof cmd);
            pthread_mutex_unlock(&c->lock);
            ask(c->bench, cmd, c->cmd_buf, ANSWER_MAX, false);
            pthread_mutex_lock(&c->lock);
            memcpy(c->answer, c->cmd_buf, strlen(c->cmd_buf) + 1);
            c->cmd_pending = false;
            c->answer_ready = true;
            continue;
        }
        int64_t now = mono_ns();
        if (now >= next_status) {
            pthread_mutex_unlock(&c->lock);
            ask(c->bench, "status", answer, sizeof answer, false);
            pthread_mutex_lock(&c->lock);
            memcpy(c->status, answer, sizeof answer);
            c->status_gen++;
            next_status = now + STATUS_PERIOD_MS * 1000000LL;
            continue;
        }
        if (c->state_period_ns && now >= next_state) {
            pthread_mutex_unlock(&c->lock);
            ask(c->bench, "state --json", c->state, STATE_ANSWER_MAX, true);
            /* one parse of the answer for both reductions (30 times a second) */
            json_t *root = hs__view_state_load(c->state, strlen(c->state), err, sizeof err);
            int r = root ? hs__view_pose_from(root, pose, sizeof pose, err, sizeof err) : -EINVAL;
            /* the same answer's scenario, when it has one (a bench before it: none) */
            int rs =
                r > 0 ? hs__view_scen_from(root, c->scen_new, sizeof c->scen_new, err, sizeof err)
                      : 0;
            json_decref(root);
            pthread_mutex_lock(&c->lock);
            if (r > 0) {
                memcpy(c->pose, pose, sizeof pose);
                c->pose_gen++;
            }
            if (rs > 0 && strcmp(c->scen, c->scen_new)) {
                memcpy(c->scen, c->scen_new, (size_t)rs + 1);
                c->scen_gen++;
            }
            next_state = now + (r > 0 ? c->state_period_ns : STATE_RETRY_MS * 1000000LL);
            continue;
        }
        int64_t until_ns = next_status;
        if (c->state_period_ns && next_state < until_ns)
            until_ns = next_state;
        struct timespec until = {.tv_sec = until_ns / 1000000000, .tv_nsec = until_ns % 1000000000};
        while (!c->stop && !c->cmd_pending &&
               pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

static void free_ctl(struct hs_view_ctl *c)
{
    free(c->state);
    free(c->answer);
    free(c->cmd_buf);
    free(c);
}

int hs_view_ctl_start(const char *bench, unsigned state_hz, struct hs_view_ctl **ret)
{
    struct hs_view_ctl *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    snprintf(c->bench, sizeof c->bench, "%s", bench);
    c->answer = malloc(ANSWER_MAX);
    c->cmd_buf = malloc(ANSWER_MAX);
    if (state_hz) {
        c->state_period_ns = 1000000000LL / state_hz;
        c->state = malloc(STATE_ANSWER_MAX);
    }
    if (!c->answer || !c->cmd_buf || (state_hz && !c->state)) {
        free_ctl(c);
        return -ENOMEM;
    }
    c->answer[0] = 0;
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
        free_ctl(c);
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
    free_ctl(c);
}

uint64_t hs_view_ctl_pose(struct hs_view_ctl *c, uint64_t have, struct hs_view_buf *out)
{
    pthread_mutex_lock(&c->lock);
    uint64_t gen = c->pose_gen;
    if (gen != have) {
        (void)hs_view_buf_set(out, c->pose); /* out of memory: empty, not sent */
    }
    pthread_mutex_unlock(&c->lock);
    return gen;
}

uint64_t hs_view_ctl_scen(struct hs_view_ctl *c, uint64_t have, struct hs_view_buf *out)
{
    pthread_mutex_lock(&c->lock);
    uint64_t gen = c->scen_gen;
    if (gen != have) {
        (void)hs_view_buf_set(out, c->scen); /* out of memory: empty, not sent */
    }
    pthread_mutex_unlock(&c->lock);
    return gen;
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

int hs_view_ctl_answer(struct hs_view_ctl *c, uint64_t *ret_session, struct hs_view_buf *out)
{
    pthread_mutex_lock(&c->lock);
    int r = c->answer_ready;
    if (r) {
        *ret_session = c->cmd_session;
        (void)hs_view_buf_set(out, c->answer); /* out of memory: empty, not sent */
        c->answer_ready = false;
    }
    pthread_mutex_unlock(&c->lock);
    return r;
}
