/* `hilsim campaign run`: the runs of one shard, -j at a time. Each run is a child hilsim (`run`
 * in lockstep with the controller it spawns once the bench's segment is there, or `sim` with
 * hilsim's own PD hold when the campaign names no controller) in its own process group, with a
 * time limit; whatever happens to it, its processes, segment and control socket are gone before
 * its result is written, and the campaign goes on. */
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "campaign_internal.h"
#include "hilsim/campaign.h"

#define SLOTS_MAX 64
#define GRACE_S 5.0 /* a controller outliving its bench, or a bench its crashed controller */

struct slot {
    bool busy;
    int run;
    pid_t hs, ctl;
    bool hs_done, ctl_started, ctl_done, timed_out, ctl_failed_first;
    int hs_status, ctl_status;
    double t0, deadline, grace;
    char bench[64];
    char dir[PATH_MAX];
    char *ctl_argv[HS_CAMP_ARGV_MAX + 1];
    struct hs_camp_values v;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static void examples_dir(const char *hilsim, char *out)
{
    char tmp[PATH_MAX], exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    snprintf(tmp, sizeof tmp, "%s", n > 0 ? (exe[n] = 0, exe) : hilsim);
    const char *dir = dirname(tmp);
    snprintf(out, PATH_MAX, "%s/examples", dir); /* the build tree */
    if (access(out, X_OK) != 0)
        snprintf(out, PATH_MAX, "%s/../lib/hilsim/examples", dir); /* an install */
}

struct runner {
    const struct hs_campaign *c;
    const struct hs_camp_opts *o;
    char examples[PATH_MAX];
    int done, failed, errors, skipped, total;
    double t0;
};

static void free_argv(struct slot *s)
{
    for (int i = 0; s->ctl_argv[i]; i++) {
        free(s->ctl_argv[i]);
        s->ctl_argv[i] = NULL;
    }
}

/* Which command line build_args writes: a run, or a run without a controller again with
 * --record (its verdict files apart, to be compared with the first's). */
enum args_kind { ARGS_RUN, ARGS_RERUN_RECORDED };

/* A run without a controller is a deterministic `hilsim sim`, and recording one costs a sixth
 * more CPU (the writer thread's compression): with `record: failures` it runs unrecorded, and
 * a failed or error run is run again with --record (finish()). */
static bool record_on_rerun(const struct hs_campaign *c)
{
    return !c->ncontroller && c->record == HS_CAMP_RECORD_FAILURES;
}

/* hilsim's arguments for run r: the config, the rendered scenario, the verdict files, a unique
 * bench name and the campaign's --set keys. */
static int build_args(struct runner *R, struct slot *s, enum args_kind kind, char **argv,
                      char *store, size_t storelen, char *err, size_t errlen)
{
    const struct hs_campaign *c = R->c;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", c->file);
    const char *xn[] = {"bench", "examples", "dir"};
    const char *xv[] = {s->bench, R->examples, dirname(dir)};
    int n = 0;
    size_t used = 0;
#define ARG(...)                                                                                   \
    do {                                                                                           \
        int l_ = snprintf(store + used, storelen - used, __VA_ARGS__);                             \
        if (l_ < 0 || (size_t)l_ >= storelen - used || n >= 60)                                    \
            return -E2BIG;                                                                         \
        argv[n++] = store + used;                                                                  \
        used += (size_t)l_ + 1;                                                                    \
    } while (0)
    ARG("%s", R->o->hilsim);
    ARG("%s", c->ncontroller ? "run" : "sim");
    ARG("%s", c->config);
    if (c->ncontroller) {
        ARG("--no-rt");
        ARG("--clock");
        ARG("lockstep");
    }
    /* run and sim alike (sim waits for its writer) */
    if (kind == ARGS_RERUN_RECORDED || (c->record != HS_CAMP_RECORD_NONE && !record_on_rerun(c))) {
        ARG("--record");
        ARG("%s/rec", s->dir);
    }
    const char *pre = kind == ARGS_RERUN_RECORDED ? "rerun-" : "";
    ARG("--scenario");
    ARG("%s/scenario.yaml", s->dir);
    ARG("--junit");
    ARG("%s/%sjunit.xml", s->dir, pre);
    ARG("--result-json");
    ARG("%s/%sresult.json", s->dir, pre);
    ARG("--set");
    ARG("bench.name=%s", s->bench);
    for (int i = 0; i < c->nsets; i++) {
        char *v = hs_campaign_render(c, &s->v, s->run, xn, xv, 3, c->sets[i].value, err, errlen);
        if (!v)
            return -EINVAL;
        ARG("--set");
        int l = snprintf(store + used, storelen - used, "%s=%s", c->sets[i].key, v);
        free(v);
        if (l < 0 || (size_t)l >= storelen - used)
            return -E2BIG;
        argv[n++] = store + used;
        used += (size_t)l + 1;
    }
#undef ARG
    argv[n] = NULL;
    for (int i = 0; i < c->ncontroller; i++) {
        s->ctl_argv[i] =
            hs_campaign_render(c, &s->v, s->run, xn, xv, 3, c->controller[i], err, errlen);
        if (!s->ctl_argv[i])
            return -EINVAL;
    }
    s->ctl_argv[c->ncontroller] = NULL;
    return 0;
}

static int start(struct runner *R, struct slot *s, int run, char *err, size_t errlen)
{
    const struct hs_campaign *c = R->c;
    memset(s, 0, sizeof *s);
    s->run = run;
    hs_campaign_values(c, run, &s->v);
    snprintf(s->bench, sizeof s->bench, "hc%d-%d", (int)getpid(), run);
    snprintf(s->dir, sizeof s->dir, "%s/runs/r%06d", R->o->out, run);
    int r = mkdirs(s->dir);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", s->dir, strerror(-r));
        return r;
    }
    char path[PATH_MAX + 32], out[PATH_MAX + 32], errp[PATH_MAX + 32];
    char *scen = hs_campaign_render(c, &s->v, run, NULL, NULL, 0, c->scenario_text, err, errlen);
    if (!scen)
        return -EINVAL;
    snprintf(path, sizeof path, "%s/scenario.yaml", s->dir);
    r = hs__camp_write_atomic(path, scen);
    free(scen);
    if (r < 0) {
        if (snprintf(err, errlen, "%s: %s", path, strerror(-r)) < 0)
            err[0] = 0;
        return r;
    }
    char *argv[64], store[16384];
    if ((r = build_args(R, s, ARGS_RUN, argv, store, sizeof store, err, errlen)) < 0) {
        if (r == -E2BIG)
            snprintf(err, errlen, "run %d: the command line is too long", run);
        free_argv(s);
        return r;
    }
    /* The command line, for a person reproducing the run by hand. */
    FILE *f = fopen((snprintf(path, sizeof path, "%s/command.txt", s->dir), path), "w");
    if (f) {
        for (int i = 0; argv[i]; i++)
            fprintf(f, "%s%s", i ? " " : "", argv[i]);
        if (c->ncontroller) {
            fprintf(f, "\n");
            for (int i = 0; s->ctl_argv[i]; i++)
                fprintf(f, "%s%s", i ? " " : "", s->ctl_argv[i]);
        }
        fprintf(f, "\n");
        fclose(f);
    }
    snprintf(out, sizeof out, "%s/hilsim.out", s->dir);
    snprintf(errp, sizeof errp, "%s/hilsim.err", s->dir);
    if ((r = hs__camp_spawn(argv, out, errp, &s->hs)) < 0) {
        snprintf(err, errlen, "%s: %s", argv[0], strerror(-r));
        free_argv(s);
        return r;
    }
    s->busy = true;
    s->t0 = now_s();
    s->deadline = s->t0 + c->time_limit_s;
    return 0;
}

static void kill_groups(struct slot *s)
{
    if (!s->hs_done)
        kill(-s->hs, SIGKILL);
    if (s->ctl_started && !s->ctl_done)
        kill(-s->ctl, SIGKILL);
}

static json_t *read_result(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/result.json", dir);
    return json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
}

/* The last line hilsim wrote to stderr, as the reason of an unexpected exit. */
static void last_error_line(const char *dir, char *out, size_t outlen)
{
    char path[PATH_MAX + 32], line[512];
    out[0] = 0;
    snprintf(path, sizeof path, "%s/hilsim.err", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "error"))
            snprintf(out, outlen, "%s", line);
    fclose(f);
    out[strcspn(out, "\n")] = 0;
}

static bool same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    if (!fa && !fb)
        return true; /* neither run got as far as a verdict: alike too */
    while (same) {
        int ca = getc(fa), cb = getc(fb);
        same = ca == cb;
        if (ca == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* timing.json: the run's wall time, s, to the millisecond (kept apart from run.json, which is
 * the same for the same run on any machine). */
static void write_timing(const char *path, double wall_s)
{
    json_t *o = json_pack("{s:f}", "wall_s", round(wall_s * 1e3) / 1e3);
    /* 15 digits print a millisecond count back exactly, without the 17th digit's noise */
    char *text = o ? json_dumps(o, JSON_REAL_PRECISION(15)) : NULL;
    json_decref(o);
    size_t n = text ? strlen(text) : 0;
    char *line = text ? realloc(text, n + 2) : NULL;
    if (line) {
        memcpy(line + n, "\n", 2);
        text = line;
    }
    if (!line || hs__camp_write_atomic(path, text) < 0)
        fprintf(stderr, "hilsim campaign: %s: cannot write the run's timing\n", path);
    free(text);
}

/* The failed run again, recorded, waited for here (a run's time; only failures pay it). NULL
 * when its verdict file equals the first run's, as a deterministic run's must; else what went
 * wrong, for run.json (the recording is kept either way: it shows what the rerun did). */
static const char *rerun_recorded(struct runner *R, struct slot *s)
{
    char *argv[64], store[16384], err[256], out[PATH_MAX + 32], errp[PATH_MAX + 32];
    char first[PATH_MAX + 32], again[PATH_MAX + 32], junit[PATH_MAX + 32];
    if (build_args(R, s, ARGS_RERUN_RECORDED, argv, store, sizeof store, err, sizeof err) < 0) {
        free_argv(s);
        return "the recorded rerun's command line could not be built";
    }
    free_argv(s);
    snprintf(out, sizeof out, "%s/rerun.out", s->dir);
    snprintf(errp, sizeof errp, "%s/rerun.err", s->dir);
    int st = hs__camp_run_wait(argv, out, errp);
    snprintf(first, sizeof first, "%s/result.json", s->dir);
    snprintf(again, sizeof again, "%s/rerun-result.json", s->dir);
    snprintf(junit, sizeof junit, "%s/rerun-junit.xml", s->dir);
    const char *note = st < 0 ? "the recorded rerun could not be started"
                       : !same_file(first, again)
                           ? "the recorded rerun's result differs from the run's: "
                             "the recording shows the rerun, not the run"
                           : NULL;
    unlink(again);
    unlink(junit);
    if (!note) {
        unlink(out);
        unlink(errp);
    }
    return note;
}

static void finish(struct runner *R, struct slot *s)
{
    const struct hs_campaign *c = R->c;
    char shm[128], ctlsock[128];
    snprintf(shm, sizeof shm, "/dev/shm/hilsim-%s", s->bench);
    snprintf(ctlsock, sizeof ctlsock, "/tmp/hilsim-%s.ctl", s->bench);
    if (access(shm, F_OK) == 0 || access(ctlsock, F_OK) == 0) {
        /* A killed bench leaves its segment and socket: hilsim's own removal, which checks
         * nobody serves them any more. */
        char *argv[] = {(char *)R->o->hilsim, "shm", "remove", s->bench, "--force", NULL};
        hs__camp_run_wait(argv, "/dev/null", "/dev/null");
    }
    int code = WIFEXITED(s->hs_status) ? WEXITSTATUS(s->hs_status) : -1;
    const char *verdict = "error";
    char reason[600] = "";
    if (s->timed_out) {
        snprintf(reason, sizeof reason, "the time limit of %g s was reached: the run was killed",
                 c->time_limit_s);
    } else if (s->ctl_failed_first) {
        if (WIFSIGNALED(s->ctl_status))
            snprintf(reason, sizeof reason, "the controller was killed by signal %d (%s)",
                     WTERMSIG(s->ctl_status), strsignal(WTERMSIG(s->ctl_status)));
        else
            snprintf(reason, sizeof reason,
                     "the controller exited with status %d before the run "
                     "ended",
                     WEXITSTATUS(s->ctl_status));
    } else if (code == 0) {
        verdict = "pass";
    } else if (code == 5) {
        verdict = "fail";
    } else if (!WIFEXITED(s->hs_status)) {
        snprintf(reason, sizeof reason, "hilsim was killed by signal %d (%s)",
                 WTERMSIG(s->hs_status), strsignal(WTERMSIG(s->hs_status)));
    } else {
        char line[512];
        last_error_line(s->dir, line, sizeof line);
        snprintf(reason, sizeof reason, "hilsim exited with status %d%s%s", code,
                 line[0] ? ": " : "", line);
    }
    json_t *res = read_result(s->dir);
    if (res && json_is_string(json_object_get(res, "error")) && !s->timed_out &&
        !s->ctl_failed_first) {
        verdict = "error";
        snprintf(reason, sizeof reason, "%s", json_string_value(json_object_get(res, "error")));
    }
    char rec[PATH_MAX + 32];
    snprintf(rec, sizeof rec, "%s/rec", s->dir);
    const char *rerun_note = NULL;
    if (record_on_rerun(c) && strcmp(verdict, "pass") && !s->timed_out)
        rerun_note = rerun_recorded(R, s);
    bool recorded = access(rec, F_OK) == 0;
    if (recorded && !strcmp(verdict, "pass") && c->record == HS_CAMP_RECORD_FAILURES) {
        hs__camp_rmtree(rec);
        recorded = false;
    }

    json_t *o = json_object(), *params = json_object(), *axes = json_object();
    for (int i = 0; i < c->nparams; i++) {
        json_object_set_new(params, c->params[i].name, json_string(s->v.v[i]));
        if (c->params[i].kind == HS_CAMP_LIST || c->params[i].kind == HS_CAMP_RANGE)
            json_object_set_new(axes, c->params[i].name, json_string(s->v.v[i]));
    }
    char id[16];
    snprintf(id, sizeof id, "r%06d", s->run);
    json_object_set_new(o, "campaign", json_string(c->name));
    json_object_set_new(o, "run", json_integer(s->run));
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "cell", json_integer(s->v.cell));
    json_object_set_new(o, "rep", json_integer(s->v.rep));
    json_object_set_new(o, "seed", json_integer((json_int_t)s->v.seed));
    json_object_set_new(o, "params", params);
    json_object_set_new(o, "axes", axes);
    json_object_set_new(o, "verdict", json_string(verdict));
    json_object_set_new(o, "reason", json_string(reason));
    json_object_set_new(o, "exit_status", json_integer(code));
    if (s->ctl_started) /* what the controller said at the end is in controller.out/.err */
        json_object_set_new(o, "controller_status",
                            !s->ctl_done ? json_string("killed after the run")
                            : WIFEXITED(s->ctl_status)
                                ? json_integer(WEXITSTATUS(s->ctl_status))
                                : json_sprintf("signal %d", WTERMSIG(s->ctl_status)));
    json_object_set_new(o, "recording", recorded ? json_sprintf("runs/%s/rec", id) : json_null());
    if (rerun_note)
        json_object_set_new(o, "recording_note", json_string(rerun_note));
    json_t *ex = res ? json_object_get(res, "expectations") : NULL;
    json_object_set(o, "expectations", json_is_array(ex) ? ex : json_array());
    json_decref(res);
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(o);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/timing.json", s->dir);
    write_timing(path, now_s() - s->t0);
    snprintf(path, sizeof path, "%s/run.json", s->dir);
    if (!text || hs__camp_write_atomic(path, text) < 0)
        fprintf(stderr, "hilsim campaign: %s: cannot write the result\n", path);
    free(text);
    free_argv(s);
    s->busy = false;
    R->done++;
    if (!strcmp(verdict, "fail"))
        R->failed++;
    if (!strcmp(verdict, "error"))
        R->errors++;
    if (!R->o->quiet) {
        double el = now_s() - R->t0, rate = R->done / (el > 0 ? el : 1) * 60.0;
        double eta = rate > 0 ? (R->total - R->done) / rate * 60.0 : 0;
        bool tty = isatty(2);
        fprintf(stderr,
                "%scampaign: %d/%d done, %d failed, %d errors, %.1f runs/min, ETA %d:%02d%s",
                tty ? "\r" : "", R->done, R->total, R->failed, R->errors, rate, (int)eta / 60,
                (int)eta % 60, tty ? "  " : "\n");
        if (strcmp(verdict, "pass"))
            fprintf(stderr, "%s  %s %s%s%s\n", tty ? "\n" : "", id, verdict, reason[0] ? ": " : "",
                    reason);
    }
}

static void poll_slot(struct runner *R, struct slot *s)
{
    const struct hs_campaign *c = R->c;
    double t = now_s();
    int st;
    if (!s->hs_done && waitpid(s->hs, &st, WNOHANG) == s->hs) {
        s->hs_done = true;
        s->hs_status = st;
        s->grace = t + GRACE_S;
    }
    if (s->ctl_started && !s->ctl_done && waitpid(s->ctl, &st, WNOHANG) == s->ctl) {
        s->ctl_done = true;
        s->ctl_status = st;
        if (!s->hs_done && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            s->ctl_failed_first = true;
            s->grace = t + GRACE_S; /* the bench may notice by itself; else it is ended */
        }
    }
    if (c->ncontroller && !s->ctl_started && !s->hs_done) {
        char shm[128];
        snprintf(shm, sizeof shm, "/dev/shm/hilsim-%s", s->bench);
        if (access(shm, F_OK) == 0) {
            char out[PATH_MAX + 32], err[PATH_MAX + 32];
            snprintf(out, sizeof out, "%s/controller.out", s->dir);
            snprintf(err, sizeof err, "%s/controller.err", s->dir);
            if (hs__camp_spawn(s->ctl_argv, out, err, &s->ctl) == 0) {
                s->ctl_started = true;
            } else {
                s->ctl_failed_first = true;
                s->ctl_status = 127 << 8;
                kill(-s->hs, SIGKILL);
            }
        }
    }
    if (!s->hs_done || (s->ctl_started && !s->ctl_done)) {
        if (t > s->deadline) {
            s->timed_out |= !s->hs_done && !s->ctl_failed_first;
            kill_groups(s);
        } else if ((s->hs_done || s->ctl_failed_first) && t > s->grace) {
            kill_groups(s);
        }
        return;
    }
    finish(R, s);
}

int hs_campaign_run(const struct hs_campaign *c, const struct hs_camp_opts *o)
{
    struct runner R = {.c = c, .o = o};
    char err[1024] = "";
    int jobs = o->jobs < 1 ? 1 : o->jobs > SLOTS_MAX ? SLOTS_MAX : o->jobs;
    examples_dir(o->hilsim, R.examples);
    int r = mkdirs(o->out);
    if (r < 0) {
        fprintf(stderr, "hilsim campaign: %s: %s\n", o->out, strerror(-r));
        return 2;
    }
    /* Every placeholder of the first run renders, and its --set keys load, before any run
     * starts: a typo fails the campaign at once instead of every run. */
    struct slot probe = {.run = 0};
    hs_campaign_values(c, 0, &probe.v);
    snprintf(probe.bench, sizeof probe.bench, "hc%d-check", (int)getpid());
    char *scen =
        hs_campaign_render(c, &probe.v, 0, NULL, NULL, 0, c->scenario_text, err, sizeof err);
    if (!scen) {
        fprintf(stderr, "hilsim campaign: %s: %s\n", c->scenario, err);
        return 2;
    }
    free(scen);
    char *argv[64], store[16384];
    if (build_args(&R, &probe, ARGS_RUN, argv, store, sizeof store, err, sizeof err) < 0) {
        fprintf(stderr, "hilsim campaign: %s: %s\n", c->file, err[0] ? err : "command too long");
        free_argv(&probe);
        return 2;
    }
    free_argv(&probe);
    {
        char *check[72], log[PATH_MAX + 32];
        int n = 0;
        check[n++] = (char *)o->hilsim;
        check[n++] = "sim";
        check[n++] = (char *)c->config;
        check[n++] = "--duration";
        check[n++] = "0.001";
        for (int i = 0; argv[i]; i++)
            if (!strcmp(argv[i], "--set") && argv[i + 1] && n < 70) {
                check[n++] = argv[i];
                check[n++] = argv[i + 1];
            }
        check[n] = NULL;
        snprintf(log, sizeof log, "%s/check.err", o->out);
        int st = hs__camp_run_wait(check, "/dev/null", log);
        if (st != 0) {
            fprintf(stderr,
                    "hilsim campaign: %s: the bench config with the campaign's --set keys "
                    "does not load (hilsim sim exit %d); its errors are in %s\n",
                    c->file, st, log);
            return 2;
        }
    }

    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct slot *slots = calloc(SLOTS_MAX, sizeof *slots);
    if (!slots)
        return 1;
    for (int run = o->shard_k - 1; run < c->runs; run += o->shard_n)
        R.total++;
    R.t0 = now_s();
    int next = o->shard_k - 1, active = 0, status = 0;
    while (!stop_signal && (next < c->runs || active > 0)) {
        for (int i = 0; i < jobs && !stop_signal; i++)
            while (!slots[i].busy && next < c->runs && !stop_signal) {
                int run = next;
                next += o->shard_n;
                char done[PATH_MAX + 32];
                snprintf(done, sizeof done, "%s/runs/r%06d/run.json", o->out, run);
                if (access(done, F_OK) == 0) { /* resumed: finished before */
                    R.skipped++;
                    R.total--;
                } else if (start(&R, &slots[i], run, err, sizeof err) < 0) {
                    fprintf(stderr, "hilsim campaign: run %d: %s\n", run, err);
                    status = 1;
                    stop_signal = SIGTERM;
                }
            }
        active = 0;
        for (int i = 0; i < jobs; i++)
            if (slots[i].busy) {
                poll_slot(&R, &slots[i]);
                active += slots[i].busy;
            }
        if (active)
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (stop_signal) { /* every run still going is ended and cleaned up: no result written */
        for (int i = 0; i < jobs; i++)
            if (slots[i].busy) {
                kill_groups(&slots[i]);
                if (!slots[i].hs_done)
                    waitpid(slots[i].hs, NULL, 0);
                if (slots[i].ctl_started && !slots[i].ctl_done)
                    waitpid(slots[i].ctl, NULL, 0);
                char *rm[] = {(char *)o->hilsim, "shm", "remove", slots[i].bench, "--force", NULL};
                hs__camp_run_wait(rm, "/dev/null", "/dev/null");
                free_argv(&slots[i]);
            }
        free(slots);
        fprintf(stderr, "\nhilsim campaign: stopped; %d runs finished are kept (a rerun resumes)\n",
                R.done);
        return status ? status : 128 + SIGINT;
    }
    free(slots);
    if (!o->quiet && isatty(2))
        fprintf(stderr, "\n");
    if (R.skipped)
        fprintf(stderr, "hilsim campaign: %d runs finished before were skipped\n", R.skipped);
    if (o->no_report)
        return status ? status : R.errors ? 1 : R.failed ? 5 : 0;
    const char *dirs[] = {o->out};
    int rep = hs_campaign_report(dirs, 1, o->out, stdout);
    return status ? status : rep;
}
