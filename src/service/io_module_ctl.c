/* The control socket (hilsim/ctl.h): a Unix stream socket per bench, hilsim-BENCH.ctl in the
 * directory hs_ctl_socket_path picks, mode 0660 and owned by the service, like the shm segment.
 * A non-RT thread accepts one client at a time, checks its credentials (hs_ctl_peer_allowed)
 * and answers each line with one line: "ok ..." or "error: ...". Every command is parsed and
 * checked here (an injected step or a scenario file through the scenario's own parser and
 * binding, which allocate here, never in the tick); only checked commands go to the tick,
 * through the control stage's queue. The same thread frees the live steps that ended and
 * writes the verdict of a scenario file started here once the tick gives it back. `stop`
 * raises SIGTERM, the systemd stop path: the supervisor stops the loop at a tick boundary and
 * the safe stop runs. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hilsim/ctl.h"
#include "hilsim/log.h"
#include "hilsim/record.h"
#include "hilsim/scenario_live.h"
#include "hilsim/service/io_module.h"
#include "hilsim/service/runner.h"

#define CLIENT_TIMEOUT_MS 5000
#define REAP_MS 100 /* how often the idle socket thread looks for ended steps and scenarios */

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
    /* the scenario file started here (socket thread only) */
    char scen_name[HS_NAME_MAX];
    char junit[HS_CTL_LINE_MAX], json[HS_CTL_LINE_MAX];
    double scen_duration_s;
    uint32_t scen_count;
    char verdict[HS_CTL_LINE_MAX]; /* the last one's, "" before any ended */
    uint32_t rec_seq;              /* live-step/live-scenario files saved in the recording */
};

/* snprintf whose cut is accepted: answers are one line, a cut path still reads. */
static void say(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

static const char *const scen_state_names[] = {"idle", "starting", "running", "ended"};

static void status_line(struct ctl_server *s, char *out, size_t size)
{
    struct hs_ctl_counters c;
    hs_ctl_stage_counters(s->stage, &c);
    struct hs_ctl_loop p;
    bool have = hs_ctl_stage_loop(s->stage, &p);
    int n = snprintf(out, size,
                     "ok bench %s clock %s tick %llu; ctl accepted %llu applied %llu rejected %llu "
                     "queue_full %llu last_applied_tick %llu live_steps %u slots_full %llu "
                     "unauthorised %llu scenario %s",
                     hs_bench_config(s->bench)->bench.name, s->clock, (unsigned long long)c.tick,
                     (unsigned long long)c.accepted, (unsigned long long)c.applied,
                     (unsigned long long)c.rejected, (unsigned long long)c.queue_full,
                     (unsigned long long)c.last_applied_tick, c.live_steps,
                     (unsigned long long)c.slots_full, (unsigned long long)c.unauthorised,
                     scen_state_names[hs_ctl_stage_scenario_state(s->stage)]);
    if (n < 0 || (size_t)n >= size)
        return;
    if (!have) {
        snprintf(out + n, size - (size_t)n, "; loop starting");
        return;
    }
    /* the loop's counters as the tick published them at its last boundary */
    snprintf(out + n, size - (size_t)n,
             "; loop %s last_tick %llu ticks %llu overruns %llu missed %llu worst_tick_ns %lld "
             "safe_hold %d lockstep_timeouts %llu",
             p.running ? "running" : "stopped", (unsigned long long)p.last_tick,
             (unsigned long long)p.ticks, (unsigned long long)p.overruns,
             (unsigned long long)p.missed_periods, (long long)p.worst_tick_ns, (int)p.safe_hold,
             (unsigned long long)p.lockstep_timeouts);
}

/* The verdict of a scenario the tick gave back: summary in the log, the files, one line kept
 * for `scenario status`. */
static void verdict(struct ctl_server *s, struct hs_scenario *scen, bool stopped)
{
    hs_scenario_finish(scen);
    uint32_t n = hs_scenario_expect_count(scen), passed = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct hs_scenario_result r;
        hs_scenario_result(scen, i, &r);
        passed += r.status == HS_SCENARIO_PASS;
    }
    int wj = hs_scenario_write_junit(scen, s->junit), wr = hs_scenario_write_json(scen, s->json);
    const char *v = hs_scenario_passed(scen) ? "PASS" : "FAIL";
    say(s->verdict, sizeof s->verdict,
        "scenario %s ended %s: %u of %u expectations passed (%s); junit %s%s; json %s%s",
        s->scen_name, v, passed, n, stopped ? "stopped early" : "played to its end", s->junit,
        wj < 0 ? " (not written)" : "", s->json, wr < 0 ? " (not written)" : "");
    hs_log(HS_LOG_INFO, "ctl: %s", s->verdict);
    if (wj < 0)
        hs_log(HS_LOG_ERR, "ctl: %s: %s", s->junit, strerror(-wj));
    if (wr < 0)
        hs_log(HS_LOG_ERR, "ctl: %s: %s", s->json, strerror(-wr));
    hs_scenario_destroy(scen);
}

/* Socket thread: frees the live steps that ended and takes an ended scenario. no_tick: the
 * loop is gone, so a running scenario ends here. */
static void reap(struct ctl_server *s, bool no_tick)
{
    hs_scenario_live_reap(hs_ctl_stage_live(s->stage));
    bool stopped;
    struct hs_scenario *scen = hs_ctl_stage_take_scenario(s->stage, no_tick, &stopped);
    if (scen)
        verdict(s, scen, stopped);
}

/* A recorded run keeps what live control injected, so a replay can inject it again: the step's
 * text exactly as it was checked (or the scenario file as it was read) goes into the recording
 * folder as PREFIX-N.yaml here, on the socket thread; the tick only posts N when it applies the
 * command (src/record/README.md, "Live control"). Returns N, or 0 when the run is not recorded
 * or the file could not be written (the log says so: that injection will not replay). */
static uint32_t save_live(struct ctl_server *s, const char *prefix, const char *text, size_t len)
{
    if (!s->runner || !s->runner->rec)
        return 0;
    uint32_t n = s->rec_seq + 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%u.yaml", hs_rec_dir(s->runner->rec), prefix, n);
    FILE *f = fopen(path, "wx");
    bool ok = f && fwrite(text, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        hs_log(HS_LOG_WARNING, "ctl: %s: cannot keep the injection for replay: %s", path,
               strerror(errno));
        return 0;
    }
    s->rec_seq = n;
    return n;
}

/* The scenario file as read, for save_live (NULL when it cannot be read). */
static char *read_text(const char *file, size_t *ret_len)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0, n;
    do {
        if (len == cap) {
            char *b = realloc(buf, cap = cap ? 2 * cap : 4096);
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
    } while ((n = fread(buf + len, 1, cap - len, f)) > 0 && (len += n));
    fclose(f);
    *ret_len = len;
    return buf;
}

static void arg_copy(const char *line, struct hs_ctl_arg a, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s", (int)a.len, line + a.off);
}

/* A step (injected, or the one a short command stands for) bound into a live slot and queued. */
static void inject(struct ctl_server *s, const char *text, size_t len, char *out, size_t size)
{
    struct hs_scenario_live *live = hs_ctl_stage_live(s->stage);
    struct hs_diag d = {0};
    uint32_t slot;
    int r = hs_scenario_live_prepare(live, text, len, NULL, &slot, &d);
    if (r < 0) {
        if (r == -ENOSPC)
            hs_ctl_stage_count_slots_full(s->stage);
        else
            hs_ctl_stage_count_rejected(s->stage);
        char msg[512];
        hs_diag_format(&d, msg, sizeof msg);
        snprintf(out, size, "error: %s", msg);
        return;
    }
    struct hs_ctl_cmd q = {.kind = HS_CTL_INJECT, .slot = slot};
    q.rec_seq = save_live(s, "live-step", text, len);
    if (hs_ctl_stage_push(s->stage, &q) < 0) {
        hs_scenario_live_discard(live, slot);
        snprintf(out, size, "error: the tick's command queue is full (%d): try again",
                 HS_CTL_QUEUE_LEN);
        return;
    }
    /* the log keeps what was done to the bench, in order, for whoever reads the run later */
    hs_log(HS_LOG_INFO, "ctl: step queued (live slot %u): %.*s", slot, (int)len, text);
    snprintf(out, size, "ok step queued for the next tick (live slot %u of %d)", slot,
             HS_SCENARIO_LIVE_SLOTS);
}

static void scenario_start(struct ctl_server *s, const char *line, const struct hs_ctl_cmd *cmd,
                           char *out, size_t size)
{
    if (hs_ctl_stage_scenario_state(s->stage) != HS_CTL_SCEN_IDLE) {
        hs_ctl_stage_count_rejected(s->stage);
        snprintf(out, size, "error: scenario %s is still running: scenario stop first",
                 s->scen_name);
        return;
    }
    char file[HS_CTL_LINE_MAX];
    arg_copy(line, cmd->file, file, sizeof file);
    struct hs_diag d = {0};
    struct hs_scenario_spec *spec = NULL;
    struct hs_scenario *scen = NULL;
    int r = hs_scenario_parse_file(file, &spec, &d);
    if (r == 0)
        r = hs_scenario_compile(spec, s->bench, &scen, &d);
    hs_scenario_spec_free(spec);
    if (r < 0) {
        hs_ctl_stage_count_rejected(s->stage);
        char msg[512];
        hs_diag_format(&d, msg, sizeof msg);
        snprintf(out, size, "error: %s", msg);
        return;
    }
    /* the verdict files: as given, else next to the control socket, numbered per run */
    s->scen_count++;
    size_t base = strlen(s->path) - strlen(".ctl");
    if (cmd->junit.len)
        arg_copy(line, cmd->junit, s->junit, sizeof s->junit);
    else
        say(s->junit, sizeof s->junit, "%.*s.scenario-%u.junit.xml", (int)base, s->path,
            s->scen_count);
    if (cmd->json.len)
        arg_copy(line, cmd->json, s->json, sizeof s->json);
    else
        say(s->json, sizeof s->json, "%.*s.scenario-%u.json", (int)base, s->path, s->scen_count);
    s->scen_duration_s = hs_scenario_duration_s(scen);
    /* the name is the file's `scenario.name`, read back from the JUnit suite's */
    snprintf(s->scen_name, sizeof s->scen_name, "%s", hs_scenario_name(scen));
    size_t tlen = 0;
    char *text = s->runner && s->runner->rec ? read_text(file, &tlen) : NULL;
    uint32_t seq = text ? save_live(s, "live-scenario", text, tlen) : 0;
    free(text);
    if (s->runner && s->runner->rec && !seq)
        hs_log(HS_LOG_WARNING, "ctl: %s: not kept in the recording: it will not replay", file);
    if ((r = hs_ctl_stage_start_scenario_rec(s->stage, scen, seq)) < 0) {
        hs_scenario_destroy(scen);
        snprintf(out, size, "error: %s",
                 r == -ENOBUFS ? "the tick's command queue is full: try again"
                               : "a scenario is already running");
        return;
    }
    hs_log(HS_LOG_INFO, "ctl: scenario %s (%s) queued to start", s->scen_name, file);
    say(out, size, "ok scenario %s starts at the next tick (%g s); junit %s; json %s", s->scen_name,
        s->scen_duration_s, s->junit, s->json);
}

static void scenario_status(struct ctl_server *s, char *out, size_t size)
{
    enum hs_ctl_scen_state st = hs_ctl_stage_scenario_state(s->stage);
    if (st == HS_CTL_SCEN_STARTING || st == HS_CTL_SCEN_RUNNING)
        say(out, size, "ok scenario %s %s (%g s); junit %s; json %s", s->scen_name,
            scen_state_names[st], s->scen_duration_s, s->junit, s->json);
    else if (s->verdict[0])
        say(out, size, "ok %s", s->verdict);
    else
        snprintf(out, size, "ok no scenario started");
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
    reap(s, false); /* so a scenario that just ended reads as ended */
    switch (cmd.kind) {
    case HS_CTL_STATUS:
        status_line(s, out, size);
        return;
    case HS_CTL_INJECT:
        inject(s, line + cmd.text.off, cmd.text.len, out, size);
        return;
    case HS_CTL_PUSH:
    case HS_CTL_SENSOR_STUCK:
    case HS_CTL_SENSOR_OFFSET:
    case HS_CTL_ACT_DERATE:
    case HS_CTL_ACT_NO_RESPONSE: {
        char step[HS_CTL_LINE_MAX];
        int n = hs_ctl_step_text(&cmd, s->bench, step, sizeof step);
        if (n < 0) {
            hs_ctl_stage_count_rejected(s->stage);
            snprintf(out, size, "error: %s", strerror(-n));
            return;
        }
        inject(s, step, (size_t)n, out, size);
        return;
    }
    case HS_CTL_SCENARIO_START:
        scenario_start(s, line, &cmd, out, size);
        return;
    case HS_CTL_SCENARIO_STATUS:
        scenario_status(s, out, size);
        return;
    case HS_CTL_SCENARIO_STOP:
        if (hs_ctl_stage_scenario_state(s->stage) != HS_CTL_SCEN_RUNNING &&
            hs_ctl_stage_scenario_state(s->stage) != HS_CTL_SCEN_STARTING) {
            hs_ctl_stage_count_rejected(s->stage);
            snprintf(out, size, "error: no scenario is running");
            return;
        }
        break;
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
            char out[4096];
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

/* The peer's credentials as the kernel recorded them at connect. 0 when it may go on; else the
 * one error line has been sent. */
static int check_peer(struct ctl_server *s, int fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    char err[256];
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
        snprintf(err, sizeof err, "error: cannot read the peer's credentials: %s\n",
                 strerror(errno));
        write_all(fd, err, strlen(err));
        return -EACCES;
    }
    gid_t groups[256];
    len = sizeof groups;
    uint32_t ngroups = 0;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
        ngroups = len / sizeof groups[0]; /* else (more than 256): the primary group only */
    struct stat st;
    gid_t sock_gid = stat(s->path, &st) == 0 ? st.st_gid : getegid();
    _Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits");
    struct hs_ctl_peer peer = {.pid = (uint32_t)cred.pid,
                               .uid = cred.uid,
                               .gid = cred.gid,
                               .groups = (const uint32_t *)groups,
                               .ngroups = ngroups};
    if (hs_ctl_peer_allowed(&peer, geteuid(), sock_gid, err, sizeof err - 9) == 0)
        return 0;
    hs_ctl_stage_count_unauthorised(s->stage);
    hs_log(HS_LOG_WARNING, "ctl: %s", err);
    char line[300];
    int n = snprintf(line, sizeof line, "error: %s\n", err);
    write_all(fd, line, (size_t)n);
    return -EACCES;
}

static void *serve(void *arg)
{
    struct ctl_server *s = arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = s->fd, .events = POLLIN},
                              {.fd = s->wake[0], .events = POLLIN}};
        int r = poll(p, 2, REAP_MS);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        reap(s, false);
        if (r == 0 || !(p[0].revents & POLLIN))
            continue;
        int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        if (check_peer(s, c) == 0)
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
    if (s->stage)
        reap(s, true); /* the loop has stopped: a scenario still running gets its verdict */
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

static int attach(struct hs_runner *r, void **ret_state, struct hs_diag *d)
{
    struct ctl_server *s = calloc(1, sizeof *s);
    if (!s)
        return hs_diag_set(d, -ENOMEM, r->cfg->path, 0, 0, "ctl: out of memory");
    s->fd = s->wake[0] = s->wake[1] = -1;
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
