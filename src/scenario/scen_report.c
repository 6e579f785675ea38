/* The verdict after a run: a human summary, a JSON result and a JUnit XML file with one test
 * case per expectation (the format CI systems read). Non-RT. */
#include <sys/stat.h>
#include <fcntl.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scen_internal.h"
#include "hilsim/xml_escape.h"

static const char *status_word(enum hs_scenario_status st)
{
    return st == HS_SCENARIO_PASS    ? "PASS"
           : st == HS_SCENARIO_FAIL  ? "FAIL"
           : st == HS_SCENARIO_ERROR ? "ERROR"
                                     : "PENDING";
}

/* The counts every report states: passed, failed, not decided. */
static void count(const struct hs_scenario *s, uint32_t *ret_failed, uint32_t *ret_undecided)
{
    *ret_failed = *ret_undecided = 0;
    for (uint32_t i = 0; i < hs_scenario_expect_count(s); i++) {
        struct hs_scenario_result r;
        hs_scenario_result(s, i, &r);
        *ret_failed += r.status == HS_SCENARIO_FAIL || r.status == HS_SCENARIO_PENDING;
        *ret_undecided += r.status == HS_SCENARIO_ERROR;
    }
}

int hs_scenario_write_summary(const struct hs_scenario *s, FILE *out)
{
    uint32_t n = hs_scenario_expect_count(s), failed, undecided;
    count(s, &failed, &undecided);
    fprintf(out, "scenario %s: %llu ticks (%.3f s of %.3f s)\n", s->name, (unsigned long long)s->k,
            (double)s->k * (double)s->period_ns * 1e-9, s->duration_s);
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const struct hs__scen_step *st = &s->steps[i];
        if (hs__scen_is_expectation(st->kind))
            continue;
        fprintf(out, "  step %-20s %-14s ", s->specs[i].name[0] ? s->specs[i].name : "-",
                hs__scen_kind_names[st->kind]);
        if (st->onset < 0 || !st->activations)
            fprintf(out, "never started");
        else
            fprintf(out, "from tick %lld, %llu activation(s), %llu tick(s) active",
                    (long long)st->onset, (unsigned long long)st->activations,
                    (unsigned long long)st->active_ticks);
        if (hs__scen_kind(st->kind)->summary)
            hs__scen_kind(st->kind)->summary(s, i, out);
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < n; i++) {
        struct hs_scenario_result r;
        hs_scenario_result(s, i, &r);
        fprintf(out, "  %s %s (line %d): %s", status_word(r.status), r.name, r.line, r.what);
        if (r.tick >= 0)
            fprintf(out, "; tick %lld (t = %.3f s), value %g", (long long)r.tick, r.time_s,
                    r.value);
        fprintf(out, "%s%s\n", r.why[0] ? ": " : "", r.why);
    }
    int64_t tick;
    const char *error = hs_scenario_error(s, &tick);
    if (error)
        fprintf(out,
                "verdict: ERROR at tick %lld: %s (%u of %u expectations passed, %u failed, %u "
                "not decided)\n",
                (long long)tick, error, n - failed - undecided, n, failed, undecided);
    else
        fprintf(out, "verdict: %s (%u of %u expectations passed)\n", failed ? "FAIL" : "PASS",
                n - failed, n);
    return ferror(out) ? -EIO : 0;
}

static int write_json(const struct hs_scenario *s, int fd)
{
    json_t *root = json_object(), *list = json_array(), *steps = json_array();
    if (!root || !list || !steps) {
        json_decref(root), json_decref(list), json_decref(steps);
        return -ENOMEM;
    }
    json_object_set_new(root, "scenario", json_string(s->name));
    json_object_set_new(root, "file", json_string(s->path));
    json_object_set_new(root, "ticks", json_integer((json_int_t)s->k));
    json_object_set_new(root, "period_ns", json_integer((json_int_t)s->period_ns));
    json_object_set_new(root, "passed", json_boolean(hs_scenario_passed(s)));
    int64_t etick;
    const char *error = hs_scenario_error(s, &etick);
    uint32_t failed, undecided;
    count(s, &failed, &undecided);
    json_object_set_new(root, "verdict", json_string(error ? "error" : failed ? "fail" : "pass"));
    json_object_set_new(root, "error",
                        error ? json_pack("{s:s, s:I}", "cause", error, "tick", (json_int_t)etick)
                              : json_null());
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const struct hs__scen_step *st = &s->steps[i];
        json_array_append_new(steps,
                              json_pack("{s:s, s:s, s:i, s:I, s:I, s:I}", "name", s->specs[i].name,
                                        "kind", hs__scen_kind_names[st->kind], "line",
                                        s->specs[i].src.line, "onset_tick", (json_int_t)st->onset,
                                        "activations", (json_int_t)st->activations, "active_ticks",
                                        (json_int_t)st->active_ticks));
    }
    for (uint32_t i = 0; i < hs_scenario_expect_count(s); i++) {
        struct hs_scenario_result r;
        hs_scenario_result(s, i, &r);
        json_t *e = json_pack("{s:s, s:s, s:i, s:s, s:I, s:s}", "name", r.name, "what", r.what,
                              "line", r.line, "status",
                              r.status == HS_SCENARIO_PASS    ? "pass"
                              : r.status == HS_SCENARIO_ERROR ? "error"
                                                              : "fail",
                              "tick", (json_int_t)r.tick, "reason", r.why);
        json_object_set_new(e, "time_s", r.tick >= 0 ? json_real(r.time_s) : json_null());
        json_object_set_new(e, "opened_tick",
                            r.opened_tick >= 0 ? json_integer((json_int_t)r.opened_tick)
                                               : json_null());
        json_object_set_new(e, "value", isfinite(r.value) ? json_real(r.value) : json_null());
        json_array_append_new(list, e);
    }
    json_object_set_new(root, "steps", steps);
    json_object_set_new(root, "expectations", list);
    int r = json_dumpfd(root, fd, JSON_INDENT(2) | JSON_SORT_KEYS) ? -EIO : 0;
    json_decref(root);
    return r;
}

/* A verdict file named by the bench's own user, opened at the run's end: a FIFO put in its
 * place meanwhile is refused, not waited on (the stop signals are blocked then), and it is
 * emptied only once it is known to be a regular file. -errno, or the descriptor. */
static int open_verdict(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd < 0)
        return -errno;
    struct stat st;
    int e = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
    int fl = e ? 0 : fcntl(fd, F_GETFL);
    if (!e && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 || ftruncate(fd, 0) < 0))
        e = -errno;
    if (e) {
        close(fd);
        return e;
    }
    return fd;
}

int hs_scenario_write_json(const struct hs_scenario *s, const char *path)
{
    int fd = open_verdict(path);
    if (fd < 0)
        return fd;
    int r = write_json(s, fd);
    if (close(fd) != 0 && !r)
        r = -errno;
    return r;
}

int hs_scenario_write_json_fd(const struct hs_scenario *s, int fd)
{
    return write_json(s, fd);
}

/* Each expectation's share of the run's time, for JUnit's per-case durations: every tick of
 * the run counts once, split evenly among the expectations being judged at that tick (window
 * open, not yet decided; one still open when the run ended counts to its end). So a case
 * judged alone takes its window's duration, and the cases never sum to more than the suite. */
static void time_shares(const struct hs_scenario *s, uint32_t n, double *ret)
{
    int64_t last = (int64_t)s->k - 1;
    int64_t *a = calloc(2 * (size_t)n + 1, sizeof *a), *b = a ? a + n : NULL;
    int64_t *cut = calloc(2 * (size_t)n + 1, sizeof *cut);
    for (uint32_t i = 0; i < n; i++)
        ret[i] = 0;
    if (!a || !cut) { /* out of memory: no shares rather than wrong ones */
        free(a), free(cut);
        return;
    }
    uint32_t ncut = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct hs_scenario_result r;
        hs_scenario_result(s, i, &r);
        a[i] = r.opened_tick;
        b[i] = r.tick >= 0 ? r.tick : last; /* inclusive */
        if (b[i] > last)
            b[i] = last;
        if (a[i] < 0 || b[i] < a[i])
            continue;
        cut[ncut++] = a[i];
        cut[ncut++] = b[i] + 1;
    }
    for (uint32_t i = 1; i < ncut; i++) /* a few dozen points: insertion sort */
        for (uint32_t j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
            int64_t t = cut[j];
            cut[j] = cut[j - 1], cut[j - 1] = t;
        }
    double period_s = (double)s->period_ns * 1e-9;
    for (uint32_t c = 0; c + 1 < ncut; c++) {
        int64_t x = cut[c], y = cut[c + 1];
        if (y <= x)
            continue;
        uint32_t open = 0;
        for (uint32_t i = 0; i < n; i++)
            open += a[i] >= 0 && a[i] <= x && b[i] + 1 >= y;
        for (uint32_t i = 0; open && i < n; i++)
            if (a[i] >= 0 && a[i] <= x && b[i] + 1 >= y)
                ret[i] += (double)(y - x) * period_s / open;
    }
    free(a);
    free(cut);
}

/* The JUnit type of an ERROR verdict's cause (find_error's wording). */
static const char *error_type(const char *cause)
{
    return !strncmp(cause, "plant fault", 11)     ? "plant_fault"
           : !strncmp(cause, "SAFE HOLD", 9)      ? "safe_hold"
           : !strncmp(cause, "stopped early", 13) ? "stopped_early"
                                                  : "run";
}

static int write_junit(const struct hs_scenario *s, FILE *f)
{
    uint32_t n = hs_scenario_expect_count(s), failed, undecided;
    count(s, &failed, &undecided);
    int64_t etick;
    const char *error = hs_scenario_error(s, &etick);
    /* an ERROR verdict is one more test case, "run", in error: a CI that counts only the
     * expectations still sees the run fail, even with none left undecided */
    uint32_t tests = n + (error ? 1 : 0), errors = undecided + (error ? 1 : 0);
    double t = (double)s->k * (double)s->period_ns * 1e-9;
    double *share = calloc((size_t)n + 1, sizeof *share);
    if (!share) {
        fclose(f);
        return -ENOMEM;
    }
    time_shares(s, n, share);
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"%u\" "
            "failures=\"%u\" errors=\"%u\">\n<testsuite name=\"",
            tests, failed, errors);
    hs_xml_escape(f, s->name);
    fprintf(f, "\" tests=\"%u\" failures=\"%u\" errors=\"%u\" time=\"%.6f\">\n", tests, failed,
            errors, t);
    if (error) {
        fputs("  <testcase classname=\"", f);
        hs_xml_escape(f, s->name);
        /* the run's own case takes no time of its own: the expectations' shares hold it all */
        fprintf(f, "\" name=\"run\" time=\"0\">\n    <error type=\"%s\" message=\"",
                error_type(error));
        hs_xml_escape(f, error);
        fprintf(f, " at tick %lld\">", (long long)etick);
        hs_xml_escape(f, error);
        fprintf(f,
                " at scenario tick %lld (t = %.6f s); %u of %u expectations not decided (%s)"
                "</error>\n  </testcase>\n",
                (long long)etick, (double)etick * (double)s->period_ns * 1e-9, undecided, n,
                s->path);
    }
    for (uint32_t i = 0; i < n; i++) {
        struct hs_scenario_result r;
        hs_scenario_result(s, i, &r);
        fputs("  <testcase classname=\"", f);
        hs_xml_escape(f, s->name);
        fputs("\" name=\"", f);
        hs_xml_escape(f, r.name);
        fprintf(f, "\" time=\"%.6f\">\n", share[i]);
        if (r.status == HS_SCENARIO_ERROR) {
            fprintf(f, "    <error type=\"%s\" message=\"", error ? error_type(error) : "run");
            hs_xml_escape(f, r.why);
            fputs("\">", f);
            hs_xml_escape(f, r.what);
            fprintf(f, " (%s:%d)</error>\n", s->path, r.line);
        } else if (r.status != HS_SCENARIO_PASS) {
            /* the message alone says what was measured against which bound */
            fputs("    <failure type=\"expectation\" message=\"", f);
            if (r.tick >= 0) {
                fprintf(f, "measured %.6g at t = %.3f s; expected ", r.value, r.time_s);
                hs_xml_escape(f, r.what);
                fputs(": ", f);
            }
            hs_xml_escape(f, r.why);
            fputs("\">", f);
            hs_xml_escape(f, r.what);
            if (r.tick >= 0)
                fprintf(f, "; tick %lld (t = %.6f s), value %.9g", (long long)r.tick, r.time_s,
                        r.value);
            fprintf(f, " (%s:%d)</failure>\n", s->path, r.line);
        } else {
            fputs("    <system-out>", f);
            hs_xml_escape(f, r.what);
            fprintf(f, "; passed at tick %lld (t = %.6f s), value %.9g</system-out>\n",
                    (long long)r.tick, r.time_s, r.value);
        }
        fputs("  </testcase>\n", f);
    }
    fputs("</testsuite>\n</testsuites>\n", f);
    free(share);
    int r = ferror(f) ? -EIO : 0;
    if (fclose(f) != 0 && !r)
        r = -errno;
    return r;
}

int hs_scenario_write_junit(const struct hs_scenario *s, const char *path)
{
    int fd = open_verdict(path);
    if (fd < 0)
        return fd;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = -errno;
        close(fd);
        return e;
    }
    return write_junit(s, f);
}

int hs_scenario_write_junit_fd(const struct hs_scenario *s, int fd)
{
    int d = dup(fd);
    FILE *f = d < 0 ? NULL : fdopen(d, "w");
    if (!f) {
        int e = errno;
        if (d >= 0)
            close(d);
        return -e;
    }
    return write_junit(s, f);
}
