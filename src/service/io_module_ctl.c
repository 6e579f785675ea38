/* The control socket (src/ctl/ctl.h): a Unix stream socket per bench, hilsim-BENCH.ctl in the
 * directory hs_ctl_socket_path picks, mode 0660 and owned by the service, like the shm segment.
 * A non-RT thread accepts one client at a time and answers each line with one line: "ok ..."
 * or "error: ...". Every command is parsed and checked here; only checked commands go to the
 * tick, through the control stage's queue. `stop` raises SIGTERM, the systemd stop path: the
 * supervisor stops the loop at a tick boundary and the safe stop runs. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "hilsim/log.h"
#include "io_module.h"
#include "runner.h"

#define CLIENT_TIMEOUT_MS 5000

struct ctl_server {
    struct hs_ctl_stage *stage; /* owned by the bench */
    struct hs_runner *runner;
    struct hs_bench *bench;
    struct hs_ctl_names names;
    char path[108];
    int fd, wake[2];
    pthread_t thread;
    bool running;
    const char *clock;
    pthread_mutex_t lock; /* guards progress: supervisor writes, the socket thread reads */
    struct hs_tick_progress progress;
    bool have_progress;
};

static void status_line(struct ctl_server *s, char *out, size_t size)
{
    struct hs_ctl_counters c;
    hs_ctl_stage_counters(s->stage, &c);
    struct hs_tick_progress p = {0};
    pthread_mutex_lock(&s->lock);
    bool have = s->have_progress;
    p = s->progress;
    pthread_mutex_unlock(&s->lock);
    int n = snprintf(out, size,
                     "ok bench %s clock %s tick %llu; ctl accepted %llu applied %llu rejected %llu "
                     "queue_full %llu last_applied_tick %llu pushes_active %u faults_active %u",
                     hs_bench_config(s->bench)->bench.name, s->clock, (unsigned long long)c.tick,
                     (unsigned long long)c.accepted, (unsigned long long)c.applied,
                     (unsigned long long)c.rejected, (unsigned long long)c.queue_full,
                     (unsigned long long)c.last_applied_tick, c.pushes_active, c.faults_active);
    if (n < 0 || (size_t)n >= size)
        return;
    if (!have) {
        snprintf(out + n, size - (size_t)n, "; loop starting");
        return;
    }
    /* the loop's counters as the supervisor saw them last (about once a second) */
    snprintf(out + n, size - (size_t)n,
             "; loop %s last_tick %llu ticks %llu overruns %llu missed %llu worst_tick_ns %lld "
             "safe_hold %d lockstep_timeouts %llu",
             p.running ? "running" : "stopped", (unsigned long long)p.last_tick,
             (unsigned long long)p.ticks, (unsigned long long)p.overruns,
             (unsigned long long)p.missed_periods, (long long)p.worst_tick_ns, (int)p.safe_hold,
             (unsigned long long)p.lockstep_timeouts);
}

static void answer(struct ctl_server *s, const char *line, size_t len, char *out, size_t size)
{
    struct hs_ctl_cmd cmd;
    char err[200];
    if (hs_ctl_parse(line, len, &s->names, &cmd, err, sizeof err) < 0) {
        hs_ctl_stage_count_rejected(s->stage);
        snprintf(out, size, "error: %s", err);
        return;
    }
    switch (cmd.kind) {
    case HS_CTL_STATUS:
        status_line(s, out, size);
        return;
    case HS_CTL_STOP:
        hs_log(HS_LOG_WARNING, "ctl: stop requested on the control socket");
        kill(getpid(), SIGTERM);
        snprintf(out, size, "ok stopping");
        return;
    default:
        break;
    }
    if (hs_ctl_stage_push(s->stage, &cmd) < 0) {
        snprintf(out, size, "error: the tick's command queue is full (%d): try again",
                 HS_CTL_QUEUE_LEN);
        return;
    }
    snprintf(out, size, "ok queued for the next tick");
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n, len -= (size_t)n;
    }
    return 0;
}

/* One client: lines until it closes, goes quiet for CLIENT_TIMEOUT_MS, or sends a line too
 * long to be a command (answered once, then the connection is dropped). */
static void serve_client(struct ctl_server *s, int fd)
{
    char buf[HS_CTL_LINE_MAX + 1];
    size_t have = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, CLIENT_TIMEOUT_MS) <= 0)
            return;
        ssize_t n = recv(fd, buf + have, sizeof buf - have, 0);
        if (n <= 0)
            return;
        have += (size_t)n;
        char *nl;
        while ((nl = memchr(buf, '\n', have))) {
            size_t len = (size_t)(nl - buf) + 1;
            char out[1024];
            answer(s, buf, len, out, sizeof out);
            size_t olen = strlen(out);
            out[olen++] = '\n';
            if (write_all(fd, out, olen) < 0)
                return;
            memmove(buf, buf + len, have - len);
            have -= len;
        }
        if (have == sizeof buf) {
            hs_ctl_stage_count_rejected(s->stage);
            char out[96];
            int m =
                snprintf(out, sizeof out, "error: line longer than %d bytes\n", HS_CTL_LINE_MAX);
            write_all(fd, out, (size_t)m);
            return;
        }
    }
}

static void *serve(void *arg)
{
    struct ctl_server *s = arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = s->fd, .events = POLLIN},
                              {.fd = s->wake[0], .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        if (!(p[0].revents & POLLIN))
            continue;
        int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        serve_client(s, c);
        close(c);
    }
    return NULL;
}

/* A socket left by a process that died is taken over; one a live server answers is not. */
static int take_path(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISSOCK(st.st_mode))
        return -EEXIST;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int live = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    if (live)
        return -EADDRINUSE;
    return unlink(path) < 0 ? -errno : 0;
}

static void server_stop(struct ctl_server *s)
{
    if (s->running) {
        char x = 1;
        if (write(s->wake[1], &x, 1) != 1)
            hs_log(HS_LOG_WARNING, "ctl: cannot wake the control socket thread");
        pthread_join(s->thread, NULL);
        s->running = false;
        unlink(s->path);
    }
    if (s->fd >= 0)
        close(s->fd), s->fd = -1;
    for (int k = 0; k < 2; k++)
        if (s->wake[k] >= 0)
            close(s->wake[k]), s->wake[k] = -1;
}

static int server_start(struct ctl_server *s, struct hs_diag *d)
{
    int rc = take_path(s->path);
    if (rc < 0)
        return hs_diag_set(d, rc, s->path, 0, 0,
                           rc == -EADDRINUSE ? "control socket in use by a running bench"
                                             : "cannot take over the control socket path: %s",
                           strerror(-rc));
    if (pipe2(s->wake, O_CLOEXEC) < 0)
        return hs_diag_set(d, -errno, s->path, 0, 0, "pipe: %s", strerror(errno));
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        return hs_diag_set(d, -errno, s->path, 0, 0, "socket: %s", strerror(errno));
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", s->path);
    /* bound with no rights for others, then opened to the group: never wider than 0660 */
    mode_t old = umask(0177);
    int b = bind(s->fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (b < 0 || chmod(s->path, 0660) < 0 || listen(s->fd, 4) < 0)
        return hs_diag_set(d, -errno, s->path, 0, 0, "control socket: %s", strerror(errno));
    if ((rc = pthread_create(&s->thread, NULL, serve, s)) != 0) {
        unlink(s->path);
        return hs_diag_set(d, -rc, s->path, 0, 0, "control socket thread: %s", strerror(rc));
    }
    s->running = true;
    return 0;
}

/* Runs first when the bench destroys the stage: the socket thread is gone before the stage. */
static void server_free(void *arg)
{
    struct ctl_server *s = arg;
    server_stop(s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static int attach(struct hs_runner *r, void **ret_state, struct hs_diag *d)
{
    struct ctl_server *s = calloc(1, sizeof *s);
    if (!s)
        return hs_diag_set(d, -ENOMEM, r->cfg->path, 0, 0, "ctl: out of memory");
    s->fd = s->wake[0] = s->wake[1] = -1;
    s->bench = r->bench;
    s->runner = r;
    s->clock = hs_clock_mode_name(r->tick.clock.mode);
    pthread_mutex_init(&s->lock, NULL);
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
        server_free(s);
        return hs_diag_set(d, rc, r->cfg->path, 0, 0, "ctl: no bench stage left: %s",
                           strerror(-rc));
    }
    hs_ctl_stage_on_destroy(s->stage, server_free, s);
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

/* Supervisor thread, while the loop exists: the loop's counters for `status`. */
static void supervise(void *state, int64_t now_ns)
{
    struct ctl_server *s = state;
    (void)now_ns;
    struct hs_tick_progress p;
    hs_tick_loop_progress(s->runner->loop, &p);
    pthread_mutex_lock(&s->lock);
    s->progress = p;
    s->have_progress = true;
    pthread_mutex_unlock(&s->lock);
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
            "ctl: %llu commands accepted, %llu applied, %llu rejected, %llu refused (queue full)\n",
            (unsigned long long)c.accepted, (unsigned long long)c.applied,
            (unsigned long long)c.rejected, (unsigned long long)c.queue_full);
}

const struct hs_service_io hs_service_io_ctl = {
    .name = "ctl",
    .attach = attach,
    .supervise = supervise,
    .status = status,
    .summary = summary,
};
