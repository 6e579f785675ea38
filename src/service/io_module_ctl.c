/* The control socket (hilsim/ctl.h): a Unix stream socket per bench, hilsim-BENCH.ctl in the
 * directory hs_ctl_socket_path picks, mode 0660 and owned by the service, like the shm segment.
 * One non-RT thread serves every client under one poll (ctl_server.h): each connection has its
 * own input and output buffers and a deadline, every socket is non-blocking, a connection is
 * dropped when it sends no whole line for CLIENT_TIMEOUT_MS or lets more than OUT_MAX bytes of
 * answers pile up unread, and past HS_CTL_CLIENTS_MAX connections a new one gets one error
 * line. The peer's credentials are checked at accept (hs_ctl_peer_allowed). `status` and
 * `stop` are answered here; every other line goes, with the descriptors passed with it
 * (SCM_RIGHTS), to the worker (ctl_worker.c), which does all the file work; that client's
 * next line waits for the answer, other clients do not. `stop` raises SIGTERM, the systemd
 * stop path: the supervisor stops the loop at a tick boundary and the safe stop runs. The
 * thread wakes at least every POLL_MS, so it ends within that of server_stop whatever the
 * clients do. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_server.h"
#include "hilsim/ctl.h"
#include "hilsim/log.h"
#include "hilsim/scenario_live.h"
#include "hilsim/service/io_module.h"
#include "hilsim/service/runner.h"

#define CLIENT_TIMEOUT_MS 5000 /* a whole line (or the answer's way out) at least this often */
#define POLL_MS 50
/* Connects the kernel queues until the socket thread takes them: a flood of connects (the soak's
 * hostile client opens 40 at once) filled a queue of 16, and a legitimate connect at that instant
 * failed with EAGAIN. Taken up to ACCEPT_BURST per wake-up. */
#define LISTEN_BACKLOG 128
#define ACCEPT_BURST 64
#define CTL_NICE (-10)      /* the socket thread's nice: see serve() */
#define OUT_MAX (64 * 1024) /* answers waiting for a client that does not read */

enum client_state { C_FREE, C_OPEN, C_BUSY /* its job is with the worker */ };

struct client {
    enum client_state state;
    bool closing; /* the connection is gone; the slot is freed when its job comes back */
    int fd;
    uint32_t uid; /* the peer's, from SO_PEERCRED */
    int64_t deadline_ns;
    struct hs_ctl_inbuf in;
    int fds[HS_CTL_FDS_MAX]; /* descriptors received, for the next line */
    uint32_t nfds;
    bool fds_overflow;
    char *out; /* out_cap bytes: OUT_MAX, allocated at accept, more for one larger answer */
    size_t out_off, out_len, out_cap;
};

static struct client clients[HS_CTL_CLIENTS_MAX]; /* one server per process */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Best effort, never blocking: an error line to a socket we are about to close. */
static void say_and_close(int fd, const char *line)
{
    if (send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        /* the peer is gone or its buffer is full: it gets no line, only the close */
    }
    close(fd);
}

static void drop_fds(struct client *c)
{
    for (uint32_t k = 0; k < c->nfds; k++)
        close(c->fds[k]);
    c->nfds = 0;
    c->fds_overflow = false;
}

static void client_close(struct client *c)
{
    if (c->fd >= 0)
        close(c->fd), c->fd = -1;
    drop_fds(c);
    if (c->state == C_BUSY) {
        c->closing = true; /* the worker still holds its job */
        return;
    }
    free(c->out);
    c->out = NULL;
    c->state = C_FREE;
    c->closing = false;
}

/* Queues an answer line; false when the client lets too much pile up (it is dropped). One
 * answer larger than OUT_MAX (a `state` of many robots) is taken with at most OUT_MAX unread
 * before it, the buffer grown to hold it. */
static bool client_say(struct ctl_server *s, struct client *c, const char *line)
{
    size_t n = strlen(line), unsent = c->out_len - c->out_off;
    size_t limit = n + 1 > OUT_MAX ? n + 1 + OUT_MAX : OUT_MAX;
    if (unsent + n + 1 > limit) {
        hs_log(HS_LOG_WARNING, "ctl: a client left more than %d bytes of answers unread: dropped",
               OUT_MAX);
        hs_ctl_stage_count_rejected(s->stage);
        return false;
    }
    if (c->out_len + n + 1 > c->out_cap) { /* make room: what was sent goes */
        memmove(c->out, c->out + c->out_off, unsent);
        c->out_len = unsent;
        c->out_off = 0;
    }
    if (c->out_len + n + 1 > c->out_cap) {
        char *b = realloc(c->out, limit);
        if (!b) {
            hs_log(HS_LOG_WARNING, "ctl: no memory for a %zu-byte answer: client dropped", n + 1);
            return false;
        }
        c->out = b;
        c->out_cap = limit;
    }
    memcpy(c->out + c->out_len, line, n);
    c->out[c->out_len + n] = '\n';
    c->out_len += n + 1;
    return true;
}

/* Sends what the socket takes now. false: the connection is gone. */
static bool client_flush(struct client *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n =
            send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n <= 0)
            return false;
        c->out_off += (size_t)n;
        c->deadline_ns = now_ns() + CLIENT_TIMEOUT_MS * 1000000LL; /* it reads: alive */
    }
    c->out_off = c->out_len = 0;
    return true;
}

static void queue_job(struct ctl_server *s, int idx)
{
    pthread_mutex_lock(&s->lock);
    s->queue[(s->qhead + s->qlen) % HS_CTL_CLIENTS_MAX] = idx;
    s->qlen++;
    s->finished[idx] = false;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* The lines a client has sent, until one goes to the worker. false: drop the client. */
static bool client_lines(struct ctl_server *s, int idx)
{
    struct client *c = &clients[idx];
    char line[HS_CTL_LINE_MAX + 1];
    size_t len;
    int got = 0;
    while (c->state == C_OPEN && (got = hs_ctl_inbuf_line(&c->in, line, &len)) == 1) {
        c->deadline_ns = now_ns() + CLIENT_TIMEOUT_MS * 1000000LL;
        struct hs_ctl_cmd cmd;
        char err[200], out[HS_CTL_ANSWER_MAX];
        bool quick = !c->nfds && !c->fds_overflow &&
                     hs_ctl_parse(line, len, &s->names, &cmd, err, sizeof err) == 0 &&
                     (cmd.kind == HS_CTL_STATUS || cmd.kind == HS_CTL_STOP);
        if (c->fds_overflow) {
            drop_fds(c);
            hs_ctl_stage_count_rejected(s->stage);
            snprintf(out, sizeof out, "error: more than %d descriptors passed with one command",
                     HS_CTL_FDS_MAX);
        } else if (quick && cmd.kind == HS_CTL_STATUS) {
            hs__ctl_status_line(s, out, sizeof out);
        } else if (quick) {
            hs_log(HS_LOG_WARNING, "ctl: stop requested on the control socket");
            kill(getpid(), SIGTERM);
            snprintf(out, sizeof out, "ok stopping");
        } else {
            struct ctl_job *job = &s->jobs[idx];
            memcpy(job->line, line, len + 1);
            job->len = len;
            memcpy(job->fds, c->fds, c->nfds * sizeof c->fds[0]);
            job->nfds = c->nfds;
            c->nfds = 0;
            c->state = C_BUSY;
            queue_job(s, idx);
            return true;
        }
        if (!client_say(s, c, out))
            return false;
    }
    if (got == -E2BIG) {
        char out[96];
        hs_ctl_stage_count_rejected(s->stage);
        snprintf(out, sizeof out, "error: line longer than %d bytes", HS_CTL_LINE_MAX);
        client_say(s, c, out);
        client_flush(c);
        return false;
    }
    return true;
}

/* Reads what the client sent, with any descriptors passed (closed on exec, kept for its next
 * line). false: closed or failed. */
static bool client_read(struct ctl_server *s, int idx)
{
    struct client *c = &clients[idx];
    (void)s;
    char *at;
    size_t room = hs_ctl_inbuf_room(&c->in, &at);
    if (!room)
        return true; /* full: client_lines answers it */
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int) * HS_CTL_FDS_MAX)];
    } ctrl;
    struct iovec iov = {.iov_base = at, .iov_len = room};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl.buf, .msg_controllen = sizeof ctrl};
    ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return true;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); n >= 0 && h; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
            continue;
        size_t nf = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t k = 0; k < nf; k++) {
            int fd;
            memcpy(&fd, CMSG_DATA(h) + k * sizeof(int), sizeof fd);
            if (c->nfds < HS_CTL_FDS_MAX)
                c->fds[c->nfds++] = fd;
            else
                close(fd), c->fds_overflow = true;
        }
    }
    if (m.msg_flags & MSG_CTRUNC)
        c->fds_overflow = true;
    if (n <= 0)
        return false;
    hs_ctl_inbuf_added(&c->in, (size_t)n);
    return true;
}

/* The peer's credentials as the kernel recorded them at connect: 0 when it may go on, else
 * the one error line has been sent. */
static int check_peer(struct ctl_server *s, int fd, uint32_t *ret_uid)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    char err[256];
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
        snprintf(err, sizeof err, "error: cannot read the peer's credentials: %s\n",
                 strerror(errno));
        say_and_close(fd, err);
        return -EACCES;
    }
    gid_t groups[256];
    len = sizeof groups;
    uint32_t ngroups = 0;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
        ngroups = len / sizeof groups[0]; /* else (more than 256): the primary group only */
    _Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits");
    struct hs_ctl_peer peer = {.pid = (uint32_t)cred.pid,
                               .uid = cred.uid,
                               .gid = cred.gid,
                               .groups = (const uint32_t *)groups,
                               .ngroups = ngroups};
    *ret_uid = cred.uid;
    if (hs_ctl_peer_allowed(&peer, geteuid(), s->sock_gid, err, sizeof err - 9) == 0)
        return 0;
    hs_ctl_stage_count_unauthorised(s->stage);
    hs_log(HS_LOG_WARNING, "ctl: %s", err);
    char line[300];
    snprintf(line, sizeof line, "error: %s\n", err);
    say_and_close(fd, line);
    return -EACCES;
}

/* false when no connection was waiting (or accept failed): the burst ends */
static bool accept_one(struct ctl_server *s)
{
    int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return false;
    uint32_t uid;
    if (check_peer(s, fd, &uid) < 0)
        return true;
    int held = 0;
    for (int i = 0; i < HS_CTL_CLIENTS_MAX; i++)
        held += clients[i].state != C_FREE && clients[i].uid == uid;
    if (uid != 0 && held >= HS_CTL_CLIENTS_PER_USER) {
        char line[160];
        snprintf(line, sizeof line,
                 "error: busy: uid %u holds %d control connections (at most %d per user); close "
                 "one or try again shortly\n",
                 uid, held, HS_CTL_CLIENTS_PER_USER);
        say_and_close(fd, line);
        return true;
    }
    int k = 0;
    while (k < HS_CTL_CLIENTS_MAX && clients[k].state != C_FREE)
        k++;
    char *out = k < HS_CTL_CLIENTS_MAX ? malloc(OUT_MAX) : NULL;
    if (!out) {
        char line[128];
        snprintf(line, sizeof line,
                 "error: busy: %d control connections are open; try again shortly\n",
                 HS_CTL_CLIENTS_MAX);
        say_and_close(fd, line);
        return true;
    }
    clients[k] = (struct client){.state = C_OPEN,
                                 .fd = fd,
                                 .uid = uid,
                                 .out = out,
                                 .out_cap = OUT_MAX,
                                 .deadline_ns = now_ns() + CLIENT_TIMEOUT_MS * 1000000LL};
    return true;
}

/* The worker's answers: queued to their clients, whose next lines can go on. */
static void collect_answers(struct ctl_server *s)
{
    char buf[64];
    while (read(s->done[0], buf, sizeof buf) > 0) {
    }
    for (int k = 0; k < HS_CTL_CLIENTS_MAX; k++) {
        struct client *c = &clients[k];
        if (c->state != C_BUSY)
            continue;
        pthread_mutex_lock(&s->lock);
        bool fin = s->finished[k];
        pthread_mutex_unlock(&s->lock);
        if (!fin)
            continue;
        c->state = C_OPEN;
        if (c->closing) {
            client_close(c);
            continue;
        }
        c->deadline_ns = now_ns() + CLIENT_TIMEOUT_MS * 1000000LL;
        const struct ctl_job *job = &s->jobs[k];
        if (!client_say(s, c, job->use_big ? job->big : job->answer) || !client_lines(s, k) ||
            !client_flush(c))
            client_close(c);
    }
}

static void *serve(void *arg)
{
    struct ctl_server *s = arg;
    struct pollfd p[3 + HS_CTL_CLIENTS_MAX];
    int who[HS_CTL_CLIENTS_MAX];
    /* `stop` and `status` must be answered while the machine is loaded with other work: at nice
     * 0 beside stress-ng and a build this thread waited up to 450 ms for a CPU (perf/soak_ctl.py).
     * Its work per wake-up is bounded (connection, line and answer caps), so a larger share
     * cannot starve anyone, and the tick stays above it in SCHED_FIFO. Without CAP_SYS_NICE the
     * kernel refuses and the thread keeps nice 0 (`ps -L` shows which). */
    pthread_setname_np(pthread_self(), "hs-ctl");
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), CTL_NICE) != 0)
        hs_log(HS_LOG_INFO, "ctl: the socket thread keeps nice 0 (nice %d refused: %s)", CTL_NICE,
               strerror(errno));
    for (;;) {
        int n = 0;
        p[n++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
        p[n++] = (struct pollfd){.fd = s->done[0], .events = POLLIN};
        p[n++] = (struct pollfd){.fd = s->fd, .events = POLLIN};
        int64_t now = now_ns();
        for (int k = 0; k < HS_CTL_CLIENTS_MAX; k++) {
            struct client *c = &clients[k];
            if (c->state == C_FREE || c->fd < 0)
                continue;
            if (c->state == C_OPEN && now > c->deadline_ns) {
                client_close(c); /* too slow: a whole line, or reading its answers */
                continue;
            }
            short ev = c->out_len > c->out_off ? POLLOUT : 0;
            if (c->state == C_OPEN)
                ev |= POLLIN;
            who[n - 3] = k;
            p[n++] = (struct pollfd){.fd = c->fd, .events = ev};
        }
        int r = poll(p, (nfds_t)n, POLL_MS);
        if (r < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        if (r <= 0)
            continue;
        if (p[1].revents)
            collect_answers(s);
        /* a burst of connects is taken in one wake-up, so the kernel's queue (LISTEN_BACKLOG)
         * empties at once instead of one connection per poll round */
        for (int k = 0; (p[2].revents & POLLIN) && k < ACCEPT_BURST && accept_one(s); k++) {
        }
        for (int i = 3; i < n; i++) {
            struct client *c = &clients[who[i - 3]];
            if (!p[i].revents || c->fd != p[i].fd)
                continue;
            bool ok = true;
            if (p[i].revents & POLLOUT)
                ok = client_flush(c);
            if (ok && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) && c->state == C_OPEN) {
                ok = client_read(s, who[i - 3]);
                if (ok)
                    ok = client_lines(s, who[i - 3]) && client_flush(c);
                else if (c->out_len > c->out_off)
                    client_flush(c); /* it closed its side: what it may still read */
            }
            if (!ok)
                client_close(c);
        }
    }
    return NULL;
}

static void server_stop(struct ctl_server *s)
{
    if (s->running) {
        char x = 1;
        if (write(s->wake[1], &x, 1) != 1)
            hs_log(HS_LOG_WARNING, "ctl: cannot wake the control socket thread");
        pthread_join(s->thread, NULL); /* it polls at most POLL_MS at a time */
        s->running = false;
        unlink(s->path);
    }
    if (s->worker_running) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->lock);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += HS_CTL_WORKER_STOP_MS / 1000;
        until.tv_nsec += (HS_CTL_WORKER_STOP_MS % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L)
            until.tv_sec++, until.tv_nsec -= 1000000000L;
        int jr = pthread_timedjoin_np(s->worker, NULL, &until);
        if (jr != 0) {
            pthread_mutex_lock(&s->lock);
            s->worker_stuck = true;
            pthread_mutex_unlock(&s->lock);
            pthread_detach(s->worker); /* never joined: the process ends without it */
            /* It waits on a disk (a verdict file on a slow or stuck file system): the process
             * ends without it. What it still uses is the server itself and its two verdict
             * descriptors (ctl_worker.c), which are left to it; it takes no further command. */
            hs_log(HS_LOG_ERR,
                   "ctl: the control worker is still writing (a slow or stuck file system?) %d "
                   "ms after the stop: the run ends without it; %s and %s may be incomplete",
                   HS_CTL_WORKER_STOP_MS, s->junit[0] ? s->junit : "the verdict files",
                   s->json[0] ? s->json : "");
            return;
        }
        s->worker_running = false;
        /* jobs queued but never taken: their descriptors */
        for (uint32_t q = 0; q < s->qlen; q++) {
            struct ctl_job *job = &s->jobs[s->queue[(s->qhead + q) % HS_CTL_CLIENTS_MAX]];
            for (uint32_t k = 0; k < job->nfds; k++)
                close(job->fds[k]);
            job->nfds = 0;
        }
        s->qlen = 0;
    }
    for (int k = 0; k < HS_CTL_CLIENTS_MAX; k++) {
        if (clients[k].state == C_BUSY)
            clients[k].state = C_OPEN; /* the worker is gone */
        if (clients[k].state != C_FREE)
            client_close(&clients[k]);
    }
    if (s->fd >= 0)
        close(s->fd), s->fd = -1;
    for (int k = 0; k < 2; k++) {
        if (s->wake[k] >= 0)
            close(s->wake[k]), s->wake[k] = -1;
        if (s->done[k] >= 0)
            close(s->done[k]), s->done[k] = -1;
    }
}

static int server_start(struct ctl_server *s, struct hs_diag *d)
{
    int rc = hs_ctl_socket_take(s->path);
    if (rc < 0)
        return hs_diag_set(d, rc, s->path, 0, 0,
                           rc == -EADDRINUSE ? "control socket in use by a running bench"
                                             : "cannot take over the control socket path: %s",
                           strerror(-rc));
    if (pipe2(s->wake, O_CLOEXEC) < 0 || pipe2(s->done, O_CLOEXEC | O_NONBLOCK) < 0)
        return hs_diag_set(d, -errno, s->path, 0, 0, "pipe: %s", strerror(errno));
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s->fd < 0)
        return hs_diag_set(d, -errno, s->path, 0, 0, "socket: %s", strerror(errno));
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", s->path);
    /* bound with no rights for others, then opened to the group: never wider than 0660 */
    mode_t old = umask(0177);
    int b = bind(s->fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    struct stat st;
    if (b < 0 || chmod(s->path, 0660) < 0 || listen(s->fd, LISTEN_BACKLOG) < 0 ||
        stat(s->path, &st) < 0)
        return hs_diag_set(d, -errno, s->path, 0, 0, "control socket: %s", strerror(errno));
    s->sock_gid = st.st_gid;
    if ((rc = pthread_create(&s->worker, NULL, hs__ctl_worker, s)) != 0) {
        unlink(s->path);
        return hs_diag_set(d, -rc, s->path, 0, 0, "control worker thread: %s", strerror(rc));
    }
    s->worker_running = true;
    if ((rc = pthread_create(&s->thread, NULL, serve, s)) != 0) {
        unlink(s->path);
        return hs_diag_set(d, -rc, s->path, 0, 0, "control socket thread: %s", strerror(rc));
    }
    s->running = true;
    return 0;
}

/* Runs first when the bench destroys the stage: the socket's threads are gone before the
 * stage. */
static void server_free(void *arg)
{
    struct ctl_server *s = arg;
    bool worker_started = s->worker_running;
    server_stop(s);
    if (s->worker_stuck)
        return; /* left to the worker, which may still use it (server_stop) */
    if (s->stage && !worker_started)
        hs__ctl_reap(s, true); /* no worker judged a scenario still running: none can be */
    if (s->junit_fd >= 0)
        close(s->junit_fd);
    if (s->json_fd >= 0)
        close(s->json_fd);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    for (int k = 0; k < HS_CTL_CLIENTS_MAX; k++)
        free(s->jobs[k].big);
    free(s);
}

/* Tick thread, in the control stage's readings: the loop exists before the first tick and
 * outlives the last, and its counters are relaxed atomics (hilsim/rt/tick_loop.h). */
static void loop_fill(void *ctx, struct hs_ctl_loop *ret)
{
    struct hs_runner *r = ctx;
    struct hs_tick_progress p;
    hs_tick_loop_progress(r->loop, &p);
    *ret = (struct hs_ctl_loop){.ticks = p.ticks,
                                .last_tick = p.last_tick,
                                .overruns = p.overruns,
                                .missed_periods = p.missed_periods,
                                .lockstep_timeouts = p.lockstep_timeouts,
                                .worst_tick_ns = p.worst_tick_ns,
                                .safe_hold = p.safe_hold,
                                .running = p.running};
}

/* Tick thread, when it copies a `state` request: the loop's phase durations since the last. */
static void phases_take(void *ctx, struct hs_tick_window *ret)
{
    struct hs_runner *r = ctx;
    if (r->loop) /* created right after the modules attach, before any tick copies a state */
        hs_tick_loop_take_window(r->loop, ret);
}

static int attach(struct hs_runner *r, void **ret_state, struct hs_diag *d)
{
    struct ctl_server *s = calloc(1, sizeof *s);
    if (!s)
        return hs_diag_set(d, -ENOMEM, r->cfg->path, 0, 0, "ctl: out of memory");
    s->fd = s->wake[0] = s->wake[1] = s->done[0] = s->done[1] = -1;
    s->junit_fd = s->json_fd = -1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->bench = r->bench;
    s->runner = r;
    s->clock = hs_clock_mode_name(r->tick.clock.mode);
    hs_ctl_bench_names(r->bench, &s->names);
    int rc = hs_ctl_socket_path(r->cfg->bench.name, false, s->path, sizeof s->path);
    if (rc < 0) {
        server_free(s);
        return hs_diag_set(d, rc, r->cfg->path, 0, 0, "bench.name '%s': no control socket path: %s",
                           r->cfg->bench.name, strerror(-rc));
    }
    if ((rc = hs_ctl_stage_create(r->bench, &s->stage)) < 0) {
        server_free(s);
        return hs_diag_set(d, rc, r->cfg->path, 0, 0, "ctl: %s", strerror(-rc));
    }
    if ((rc = hs_ctl_stage_attach(s->stage, r->bench)) < 0) {
        hs_ctl_stage_destroy(s->stage);
        s->stage = NULL;
        server_free(s);
        return hs_diag_set(d, rc, r->cfg->path, 0, 0, "ctl: no bench stage left: %s",
                           strerror(-rc));
    }
    hs_ctl_stage_on_destroy(s->stage, server_free, s);
    hs_ctl_stage_set_loop_source(s->stage, loop_fill, r);
    hs_ctl_stage_set_phase_source(s->stage, phases_take, r);
    /* The CAN module attached before this one (registry order), if the config has CAN: its
     * buses' states for `status` and `state`. */
    for (uint32_t i = 0; i < r->nio; i++)
        if (r->io[i].module == &hs_service_io_can)
            s->can = r->io[i].state;
    hs_ctl_stage_set_can(s->stage, s->can);
    /* Without its socket the bench still runs (a second bench of the same name, a directory
     * it may not write): live control is missing, which the log says once. */
    struct hs_diag sd = {0};
    if (server_start(s, &sd) < 0) {
        server_stop(s);
        hs_log(HS_LOG_WARNING, "ctl: no live control for this run: %s: %s", s->path, sd.msg);
        return 0; /* the bench frees the stage, and with it the server */
    }
    hs_log(HS_LOG_INFO, "ctl: control socket %s (hilsim ctl %s status)", s->path,
           r->cfg->bench.name);
    *ret_state = s;
    return 0;
}

static void status(const void *state, char *buf, size_t size)
{
    const struct ctl_server *s = state;
    struct hs_ctl_counters c;
    hs_ctl_stage_counters(s->stage, &c);
    snprintf(buf, size, "; ctl %llu applied, %llu rejected", (unsigned long long)c.applied,
             (unsigned long long)c.rejected);
}

static void summary(const void *state, FILE *out)
{
    const struct ctl_server *s = state;
    struct hs_ctl_counters c;
    hs_ctl_stage_counters(s->stage, &c);
    fprintf(out,
            "ctl: %llu commands accepted, %llu applied, %llu rejected, %llu refused (queue full), "
            "%llu steps refused (all %d live step slots in use), %llu connections unauthorised\n",
            (unsigned long long)c.accepted, (unsigned long long)c.applied,
            (unsigned long long)c.rejected, (unsigned long long)c.queue_full,
            (unsigned long long)c.slots_full, HS_SCENARIO_LIVE_SLOTS,
            (unsigned long long)c.unauthorised);
}

const struct hs_service_io hs_service_io_ctl = {
    .name = "ctl",
    .attach = attach,
    .status = status,
    .summary = summary,
};
