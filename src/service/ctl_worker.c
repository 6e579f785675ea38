/* The control socket's worker (ctl_server.h): every command but `status` and `stop`, in the
 * order they arrived, and all the file work, so the socket thread never waits on a disk.
 *
 * No confused deputy: the bench opens no path a client names. `hilsim ctl` opens the scenario
 * file, its path CSVs and the verdict files with its own rights and passes the descriptors
 * with the line (SCM_RIGHTS); here they are checked (regular file, opened for reading or for
 * writing) and used as they are. Errors only quote what the client passed, which it could
 * read. The only files opened here by name are the bench's own: the default verdict files
 * next to the control socket (no symlink followed, ours or refused) and the recording's
 * copies. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_server.h"
#include "hilsim/log.h"
#include "hilsim/record.h"
#include "hilsim/scenario.h"
#include "hilsim/scenario_live.h"
#include "hilsim/service/runner.h"

#define REAP_MS 100 /* how often an idle worker looks for ended steps and scenarios */

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

void hs__ctl_status_line(struct ctl_server *s, char *out, size_t size)
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
    int m;
    if (!have) {
        m = snprintf(out + n, size - (size_t)n, "; loop starting");
    } else {
        /* the loop's counters as the tick published them at its last boundary */
        m = snprintf(out + n, size - (size_t)n,
                     "; loop %s last_tick %llu ticks %llu overruns %llu missed %llu worst_tick_ns "
                     "%lld safe_hold %d lockstep_timeouts %llu",
                     p.running ? "running" : "stopped", (unsigned long long)p.last_tick,
                     (unsigned long long)p.ticks, (unsigned long long)p.overruns,
                     (unsigned long long)p.missed_periods, (long long)p.worst_tick_ns,
                     (int)p.safe_hold, (unsigned long long)p.lockstep_timeouts);
    }
    if (m < 0 || (size_t)m + 3 > size - (size_t)n) /* no room left for "; " and more */
        return;
    n += m;
    /* last, so the line's earlier fields keep their places: each CAN bus as the tick saw it */
    memcpy(out + n, "; ", 3);
    hs_ctl_can_text(s->can, out + n + 2, size - (size_t)n - 2);
}

/* The verdict's text in memory (a memfd): rendering touches the scenario, and through it the
 * bench, so it is done before anything can wait on a disk. -errno, or the memfd. */
static int render_verdict(const struct hs_scenario *scen, bool junit)
{
    int m = memfd_create(junit ? "hilsim-junit" : "hilsim-json", MFD_CLOEXEC);
    if (m < 0)
        return -errno;
    int r = junit ? hs_scenario_write_junit_fd(scen, m) : hs_scenario_write_json_fd(scen, m);
    if (r < 0) {
        close(m);
        return r;
    }
    return m;
}

/* A verdict file: emptied, then written from its start with the rendered text (closed, as is
 * the descriptor). The one step that may wait on a slow or stuck file system: it touches only
 * the two descriptors, so a stop that does not wait for it (ctl_server.h) frees nothing it
 * uses. */
static int write_verdict(int text, int *fd)
{
    if (*fd < 0) {
        if (text >= 0)
            close(text);
        return -EBADF;
    }
    int r = text < 0 ? text : ftruncate(*fd, 0) < 0 || lseek(*fd, 0, SEEK_SET) < 0 ? -errno : 0;
    char buf[8192];
    for (off_t at = 0; r == 0;) {
        ssize_t n = pread(text, buf, sizeof buf, at);
        if (n <= 0) {
            r = n < 0 ? -errno : 0;
            break;
        }
        for (ssize_t done = 0; r == 0 && done < n;) {
            ssize_t w = write(*fd, buf + done, (size_t)(n - done));
            if (w < 0 && errno != EINTR)
                r = -errno;
            done += w > 0 ? w : 0;
        }
        at += n;
    }
    if (text >= 0)
        close(text);
    close(*fd);
    *fd = -1;
    return r;
}

/* The verdict of a scenario the tick gave back: summary in the log, the files, one line kept
 * for `scenario status`. */
static void verdict(struct ctl_server *s, struct hs_scenario *scen, bool stopped, bool no_tick)
{
    if (stopped)
        hs_scenario_set_stop_cause(scen, no_tick ? "the bench stopped"
                                                 : "scenario stop on the control socket");
    hs_scenario_finish(scen);
    uint32_t n = hs_scenario_expect_count(scen), passed = 0, undecided = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct hs_scenario_result r;
        hs_scenario_result(scen, i, &r);
        passed += r.status == HS_SCENARIO_PASS;
        undecided += r.status == HS_SCENARIO_ERROR;
    }
    int64_t tick;
    const char *error = hs_scenario_error(scen, &tick);
    char how[700];
    if (error)
        say(how, sizeof how, "ERROR at tick %lld: %s: %u of %u expectations passed, %u not decided",
            (long long)tick, error, passed, n, undecided);
    else
        say(how, sizeof how, "%s: %u of %u expectations passed (played to its end)",
            hs_scenario_passed(scen) ? "PASS" : "FAIL", passed, n);
    hs_ctl_stage_scenario_decided(s->stage, scen,
                                  error                      ? "ERROR"
                                  : hs_scenario_passed(scen) ? "PASS"
                                                             : "FAIL");
    int tj = render_verdict(scen, true), tr = render_verdict(scen, false);
    hs_scenario_destroy(scen); /* before any file waits: it releases what it held of the bench */
    /* Released here, taken by a stop that gives up waiting (server_stop): what this thread did
     * to the bench so far happens before the bench is destroyed without it. */
    pthread_mutex_lock(&s->lock);
    pthread_mutex_unlock(&s->lock);
    int wj = write_verdict(tj, &s->junit_fd);
    int wr = write_verdict(tr, &s->json_fd);
    say(s->verdict, sizeof s->verdict, "scenario %s ended %s; junit %s%s; json %s%s", s->scen_name,
        how, s->junit, wj < 0 ? " (not written)" : "", s->json, wr < 0 ? " (not written)" : "");
    hs_log(HS_LOG_INFO, "ctl: %s", s->verdict);
    if (wj < 0)
        hs_log(HS_LOG_ERR, "ctl: %s: %s", s->junit, strerror(-wj));
    if (wr < 0)
        hs_log(HS_LOG_ERR, "ctl: %s: %s", s->json, strerror(-wr));
}

void hs__ctl_reap(struct ctl_server *s, bool no_tick)
{
    hs_scenario_live_reap(hs_ctl_stage_live(s->stage));
    bool stopped;
    struct hs_scenario *scen = hs_ctl_stage_take_scenario(s->stage, no_tick, &stopped);
    if (scen)
        verdict(s, scen, stopped, no_tick);
}

/* A recorded run keeps what live control injected, so a replay can inject it again: the step's
 * text exactly as it was checked (or the scenario file as it was read) goes into the recording
 * folder as PREFIX-N.yaml, after a first line naming the run (HS_REC_COPY_MARK, which a replay
 * checks, so another run's file is not injected as this one's); the tick only posts N when it
 * applies the command
 * (src/record/README.md, "Live control"). Returns N, or 0 when the run is not recorded or the
 * file could not be written (the log says so: that injection will not replay). */
static uint32_t save_live(struct ctl_server *s, const char *prefix, const char *text, size_t len)
{
    if (!s->runner || !s->runner->rec)
        return 0;
    uint32_t n = s->rec_seq + 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%u.yaml", hs_rec_dir(s->runner->rec), prefix, n);
    FILE *f = fopen(path, "wx");
    char id[33];
    hs_rec_run_id_hex(s->runner->rec, id);
    /* the run it belongs to, for whoever finds the file outside its folder (a replay checks it) */
    bool ok = f &&
              fprintf(f, HS_REC_COPY_MARK "%s: %s injected by live control\n", id,
                      !strcmp(prefix, "live-step") ? "the step" : "the scenario file") > 0 &&
              fwrite(text, 1, len, f) == len;
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

/* save_live writes to the recording's folder and may wait on a slow or stuck file system past
 * the stop's bound; server_stop then declares the worker stuck (under s->lock) and the bench
 * goes on to free the stage and the live slots. True, with s->lock held until the caller has
 * handed its command to the stage (so the stop cannot declare us stuck in between), while they
 * are still ours; false, lock released, when the run went on without us. */
static bool stage_still_ours(struct ctl_server *s)
{
    pthread_mutex_lock(&s->lock);
    if (!s->worker_stuck)
        return true;
    pthread_mutex_unlock(&s->lock);
    return false;
}

static void arg_copy(const char *line, struct hs_ctl_arg a, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s", (int)a.len, line + a.off);
}

/* A passed descriptor fit for its use: a regular file opened for reading (or writing). */
static int check_fd(int fd, bool write, const char *what, char *out, size_t size)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    int mode = fl & O_ACCMODE;
    const char *why = NULL;
    if (fl < 0 || fstat(fd, &st) < 0)
        why = "not an open file";
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (write ? mode == O_RDONLY : mode == O_WRONLY)
        why = write ? "not opened for writing" : "not opened for reading";
    if (!why)
        return 0;
    say(out, size, "error: %s: %s", what, why);
    return -EINVAL;
}

/* The whole of a passed regular file, at most HS_CTL_SCENARIO_MAX bytes; NUL-terminated. */
static char *read_fd(int fd, size_t *ret_len, const char *what, char *out, size_t size)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < 0) {
        say(out, size, "error: %s: %s", what, strerror(errno));
        return NULL;
    }
    if ((uint64_t)st.st_size > HS_CTL_SCENARIO_MAX) {
        say(out, size, "error: %s: larger than %u bytes", what, HS_CTL_SCENARIO_MAX);
        return NULL;
    }
    size_t cap = (size_t)st.st_size, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        say(out, size, "error: out of memory");
        return NULL;
    }
    while (len < cap) { /* a file that shrank meanwhile ends early; one that grew is cut */
        ssize_t n = pread(fd, buf + len, cap - len, (off_t)len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            say(out, size, "error: %s: %s", what, strerror(errno));
            free(buf);
            return NULL;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = 0;
    *ret_len = len;
    return buf;
}

/* A step (injected, or the one a short command stands for) bound into a live slot and queued.
 * path_fd: a path step's CSV as the client passed it (-1: none). */
static void inject(struct ctl_server *s, const char *text, size_t len, int path_fd, char *out,
                   size_t size)
{
    struct hs_scenario_live *live = hs_ctl_stage_live(s->stage);
    struct hs_diag d = {0};
    uint32_t slot;
    if (path_fd >= 0 && check_fd(path_fd, false, "the path file passed", out, size) < 0) {
        hs_ctl_stage_count_rejected(s->stage);
        return;
    }
    int r = hs_scenario_live_prepare_client(live, text, len, path_fd, &slot, &d);
    if (r < 0) {
        if (r == -ENOSPC)
            hs_ctl_stage_count_slots_full(s->stage);
        else
            hs_ctl_stage_count_rejected(s->stage);
        char msg[512];
        hs_diag_format(&d, msg, sizeof msg);
        say(out, size, "error: %s", msg);
        return;
    }
    struct hs_ctl_cmd q = {.kind = HS_CTL_INJECT, .slot = slot};
    q.rec_seq = save_live(s, "live-step", text, len);
    if (!stage_still_ours(s)) {
        say(out, size, "error: the run stopped");
        return;
    }
    int pr = hs_ctl_stage_push(s->stage, &q);
    if (pr < 0)
        hs_scenario_live_discard(live, slot);
    pthread_mutex_unlock(&s->lock);
    if (pr < 0) {
        say(out, size, "error: the tick's command queue is full (%d): try again", HS_CTL_QUEUE_LEN);
        return;
    }
    /* the log keeps what was done to the bench, in order, for whoever reads the run later */
    hs_log(HS_LOG_INFO, "ctl: step queued (live slot %u): %.*s", slot, (int)len, text);
    say(out, size, "ok step queued for the next tick (live slot %u of %d)", slot,
        HS_SCENARIO_LIVE_SLOTS);
}

/* A default verdict file next to the socket: the bench's own name, but in a directory others
 * may write (/tmp): no symlink followed, nothing but a regular file of ours, and no other name
 * for it (a hard link planted there to a file of the bench's user, where fs.protected_hardlinks
 * is off, would have the verdict overwrite that file). */
static int open_default(const char *path, char *out, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0640);
    struct stat st;
    const char *why = NULL;
    if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_uid != geteuid())
        why = "owned by another user";
    else if (st.st_nlink != 1)
        why = "it has other hard links";
    if (!why)
        return fd;
    if (fd >= 0)
        close(fd);
    say(out, size, "error: %s: cannot write the verdict there: %s (give --junit/--result-json)",
        path, why);
    return -1;
}

static void close_fds(int *fds, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        if (fds[k] >= 0)
            close(fds[k]), fds[k] = -1;
}

static void scenario_start(struct ctl_server *s, const char *line, const struct hs_ctl_cmd *cmd,
                           struct ctl_job *job, char *out, size_t size)
{
    if (hs_ctl_stage_scenario_state(s->stage) != HS_CTL_SCEN_IDLE) {
        hs_ctl_stage_count_rejected(s->stage);
        say(out, size, "error: scenario %s is still running: scenario stop first", s->scen_name);
        return;
    }
    /* the descriptors, in the order hilsim ctl passes them: the file, --junit, --result-json,
     * then the path CSVs the file names */
    uint32_t want = 1 + (cmd->junit.len > 0) + (cmd->json.len > 0);
    if (job->nfds < want) {
        hs_ctl_stage_count_rejected(s->stage);
        say(out, size,
            "error: scenario start needs its files passed with the line (SCM_RIGHTS), as hilsim "
            "ctl does: the bench opens no file a client names");
        return;
    }
    char file[HS_CTL_LINE_MAX], junit[HS_CTL_LINE_MAX] = "", json[HS_CTL_LINE_MAX] = "";
    arg_copy(line, cmd->file, file, sizeof file);
    uint32_t k = 1;
    int junit_fd = -1, json_fd = -1;
    if (cmd->junit.len) {
        arg_copy(line, cmd->junit, junit, sizeof junit);
        if (check_fd(job->fds[k], true, junit, out, size) < 0)
            goto refused;
        junit_fd = job->fds[k++];
    }
    if (cmd->json.len) {
        arg_copy(line, cmd->json, json, sizeof json);
        if (check_fd(job->fds[k], true, json, out, size) < 0)
            goto refused;
        json_fd = job->fds[k++];
    }
    if (check_fd(job->fds[0], false, file, out, size) < 0)
        goto refused;
    for (uint32_t p = k; p < job->nfds; p++)
        if (check_fd(job->fds[p], false, "a path file passed", out, size) < 0)
            goto refused;
    size_t tlen = 0;
    char *text = read_fd(job->fds[0], &tlen, file, out, size);
    if (!text)
        goto refused;
    struct hs_diag d = {0};
    struct hs_scenario_spec *spec = NULL;
    struct hs_scenario *scen = NULL;
    char dir[HS_CTL_LINE_MAX];
    snprintf(dir, sizeof dir, "%s", file);
    int r = hs_scenario_parse(text, tlen, file, dirname(dir), &spec, &d);
    if (r == 0 && hs_scenario_spec_file_count(spec) != job->nfds - k)
        r = hs_diag_set(&d, -EINVAL, file, 0, 0,
                        "names %u path file(s), %u passed: hilsim ctl passes each one",
                        hs_scenario_spec_file_count(spec), job->nfds - k);
    if (r == 0) {
        hs_scenario_spec_client_files(spec, job->fds + k, job->nfds - k);
        r = hs_scenario_compile(spec, s->bench, &scen, &d);
    }
    hs_scenario_spec_free(spec);
    if (r < 0) {
        free(text);
        char msg[512];
        hs_diag_format(&d, msg, sizeof msg);
        say(out, size, "error: %s", msg);
        goto refused;
    }
    /* the verdict files: the client's, else next to the control socket, numbered per run */
    uint32_t count = s->scen_count + 1;
    size_t base = strlen(s->path) - strlen(".ctl");
    char def_junit[HS_CTL_LINE_MAX], def_json[HS_CTL_LINE_MAX];
    say(def_junit, sizeof def_junit, "%.*s.scenario-%u.junit.xml", (int)base, s->path, count);
    say(def_json, sizeof def_json, "%.*s.scenario-%u.json", (int)base, s->path, count);
    if (junit_fd < 0 && (junit_fd = open_default(def_junit, out, size)) < 0) {
        hs_scenario_destroy(scen);
        free(text);
        goto refused;
    }
    if (json_fd < 0 && (json_fd = open_default(def_json, out, size)) < 0) {
        if (!cmd->junit.len)
            close(junit_fd);
        hs_scenario_destroy(scen);
        free(text);
        goto refused;
    }
    /* from here the verdict's descriptors are the server's, not the job's */
    for (uint32_t q = 1; q < k; q++)
        job->fds[q] = -1;
    s->junit_fd = junit_fd;
    s->json_fd = json_fd;
    s->scen_count = count;
    snprintf(s->junit, sizeof s->junit, "%s", cmd->junit.len ? junit : def_junit);
    snprintf(s->json, sizeof s->json, "%s", cmd->json.len ? json : def_json);
    s->scen_duration_s = hs_scenario_duration_s(scen);
    /* the name is the file's `scenario.name`, read back from the JUnit suite's */
    snprintf(s->scen_name, sizeof s->scen_name, "%s", hs_scenario_name(scen));
    bool recording = s->runner && s->runner->rec; /* read while the run surely goes on */
    uint32_t seq = save_live(s, "live-scenario", text, tlen);
    free(text);
    if (recording && !seq)
        hs_log(HS_LOG_WARNING, "ctl: %s: not kept in the recording: it will not replay", file);
    if (!stage_still_ours(s)) { /* the verdict descriptors stay the server's, left to us */
        hs_scenario_destroy(scen);
        say(out, size, "error: the run stopped");
        return;
    }
    r = hs_ctl_stage_start_scenario_rec(s->stage, scen, seq);
    pthread_mutex_unlock(&s->lock);
    if (r < 0) {
        hs_scenario_destroy(scen);
        close_fds(&s->junit_fd, 1);
        close_fds(&s->json_fd, 1);
        say(out, size, "error: %s",
            r == -ENOBUFS ? "the tick's command queue is full: try again"
                          : "a scenario is already running");
        return;
    }
    hs_log(HS_LOG_INFO, "ctl: scenario %s (%s) queued to start", s->scen_name, file);
    say(out, size, "ok scenario %s starts at the next tick (%g s); junit %s; json %s", s->scen_name,
        s->scen_duration_s, s->junit, s->json);
    return;
refused:
    hs_ctl_stage_count_rejected(s->stage);
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
        say(out, size, "ok no scenario started");
}

/* `state`: the header line, then the body (text or JSON) whose length it gives, so a client
 * reads exactly that much; the body is formatted in place after room for the header. One that
 * does not fit out is formatted again, from the same copy, into the job's own buffer of its
 * size (job->use_big), which the socket thread then sends. */
static void state(struct ctl_server *s, struct ctl_job *job, bool json, char *out, size_t size)
{
    const size_t head = 32;
    size_t need = 0;
    char *dst = out;
    int n =
        hs_ctl_stage_state(s->stage, HS_CTL_STATE_TIMEOUT_MS, json, out + head, size - head, &need);
    if (n == -ETIMEDOUT) {
        say(out, size,
            "error: no tick boundary in %d ms to copy the plant at (the loop stopped, or in "
            "lockstep it waits for its controller)",
            HS_CTL_STATE_TIMEOUT_MS);
        return;
    }
    if (n == -ENOSPC && need > 0 && need <= HS_CTL_STATE_MAX - head) {
        if (job->big_size < need + head) {
            char *b = realloc(job->big, need + head);
            if (b) {
                job->big = b;
                job->big_size = need + head;
            }
        }
        if (job->big_size >= need + head) {
            dst = job->big;
            n = hs_ctl_stage_state_again(s->stage, json, dst + head, job->big_size - head);
        }
    }
    if (n == -ENOSPC && need > HS_CTL_STATE_MAX - head) {
        say(out, size, "error: the state takes %zu bytes, more than the %zu an answer may take",
            need, (size_t)HS_CTL_STATE_MAX - head);
        return;
    }
    if (n == -ENOSPC) {
        say(out, size, "error: no memory for the state's %zu bytes", need);
        return;
    }
    if (n < 0) {
        say(out, size, "error: the state could not be built: %s", strerror(-n));
        return;
    }
    if (n > 0 && dst[head + (size_t)n - 1] == '\n')
        dst[head + (size_t)--n] = 0; /* the socket thread ends every answer with one */
    char h[head];
    int hn = snprintf(h, sizeof h, "ok state %d\n", n + 1);
    memmove(dst + hn, dst + head, (size_t)n + 1);
    memcpy(dst, h, (size_t)hn);
    job->use_big = dst != out;
}

static void answer(struct ctl_server *s, struct ctl_job *job, char *out, size_t size)
{
    struct hs_ctl_cmd cmd;
    char err[2048]; /* an unknown name lists the valid ones */
    const char *line = job->line;
    if (hs_ctl_parse(line, job->len, &s->names, &cmd, err, sizeof err) < 0) {
        hs_ctl_stage_count_rejected(s->stage);
        say(out, size, "error: %s", err);
        return;
    }
    if (job->nfds && cmd.kind != HS_CTL_SCENARIO_START && cmd.kind != HS_CTL_INJECT) {
        hs_ctl_stage_count_rejected(s->stage);
        say(out, size, "error: descriptors passed with a command that takes no file");
        return;
    }
    hs__ctl_reap(s, false); /* so a scenario that just ended reads as ended */
    pthread_mutex_lock(&s->lock);
    bool stopping = s->stopping; /* the reap may have waited on a disk past the stop's wait */
    pthread_mutex_unlock(&s->lock);
    if (stopping) {
        say(out, size, "error: the bench is stopping");
        return;
    }
    switch (cmd.kind) {
    case HS_CTL_INJECT:
        if (job->nfds > 1) {
            hs_ctl_stage_count_rejected(s->stage);
            say(out, size, "error: inject takes at most one file (a path step's CSV)");
            return;
        }
        inject(s, line + cmd.text.off, cmd.text.len, job->nfds ? job->fds[0] : -1, out, size);
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
            say(out, size, "error: %s", strerror(-n));
            return;
        }
        inject(s, step, (size_t)n, -1, out, size);
        return;
    }
    case HS_CTL_SCENARIO_START:
        scenario_start(s, line, &cmd, job, out, size);
        return;
    case HS_CTL_SCENARIO_STATUS:
        scenario_status(s, out, size);
        return;
    case HS_CTL_STATE:
        state(s, job, cmd.value > 0, out, size);
        return;
    case HS_CTL_STATUS: /* the socket thread answers these itself; here only for completeness */
        hs__ctl_status_line(s, out, size);
        return;
    case HS_CTL_SCENARIO_STOP:
        if (hs_ctl_stage_scenario_state(s->stage) != HS_CTL_SCEN_RUNNING &&
            hs_ctl_stage_scenario_state(s->stage) != HS_CTL_SCEN_STARTING) {
            hs_ctl_stage_count_rejected(s->stage);
            say(out, size, "error: no scenario is running");
            return;
        }
        break;
    default:
        break;
    }
    if (hs_ctl_stage_push(s->stage, &cmd) < 0) {
        say(out, size, "error: the tick's command queue is full (%d): try again", HS_CTL_QUEUE_LEN);
        return;
    }
    say(out, size, "ok queued for the next tick");
}

void hs__ctl_work(struct ctl_server *s, struct ctl_job *job)
{
    job->use_big = false;
    answer(s, job, job->answer, sizeof job->answer);
    close_fds(job->fds, job->nfds);
    job->nfds = 0;
}

void *hs__ctl_worker(void *arg)
{
    struct ctl_server *s = arg;
    pthread_setname_np(pthread_self(), "hs-ctl-work"); /* `ps -L`, `top -H`: which thread is it */
    pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        if (!s->qlen) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += REAP_MS * 1000000L;
            if (until.tv_nsec >= 1000000000L)
                until.tv_sec++, until.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&s->cond, &s->lock, &until);
            if (!s->qlen) {
                pthread_mutex_unlock(&s->lock);
                hs__ctl_reap(s, false);
                pthread_mutex_lock(&s->lock);
                continue;
            }
        }
        int c = s->queue[s->qhead];
        s->qhead = (s->qhead + 1) % HS_CTL_CLIENTS_MAX;
        s->qlen--;
        pthread_mutex_unlock(&s->lock);
        hs__ctl_work(s, &s->jobs[c]); /* the job is the worker's until finished is set */
        pthread_mutex_lock(&s->lock);
        s->finished[c] = true;
        char x = 1;
        if (write(s->done[1], &x, 1) < 0) { /* full: the socket thread has wake-ups pending */
        }
    }
    /* The loop has stopped (the server stops when the bench is destroyed): a scenario still
     * running is judged here, not on the thread that stops the server, which must not wait on
     * a disk; unless that thread already stopped waiting (a write above outlasted
     * HS_CTL_WORKER_STOP_MS): then the stage may be gone. */
    bool left = s->worker_stuck;
    pthread_mutex_unlock(&s->lock);
    if (!left)
        hs__ctl_reap(s, true);
    return NULL;
}
