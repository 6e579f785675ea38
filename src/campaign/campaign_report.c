/* `hilsim campaign report|merge`: every run.json under the given output folders (shards of one
 * campaign, or one folder), each run once, in run order, so a sharded campaign merges to the
 * same aggregate as the local one. Writes junit.xml (one testcase per run and expectation, the
 * parameters in the name; a run that could not decide its verdict is an <error>),
 * summary.json, and summary.txt (pass rate per cell, the failed runs with their parameters and
 * the command that replays each). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "campaign_internal.h"
#include "hilsim/campaign.h"
#include "hilsim/xml_escape.h"

struct run {
    json_t *j;
    int index;
    const char *dir;
};

static int cmp_run(const void *a, const void *b)
{
    return ((const struct run *)a)->index - ((const struct run *)b)->index;
}

/* When a failed run first failed (its earliest failed expectation's time), s. */
static double first_failure_s(json_t *run)
{
    double t = INFINITY;
    size_t k;
    json_t *e;
    json_array_foreach(json_object_get(run, "expectations"), k, e)
    {
        json_t *st = json_object_get(e, "status"), *ts = json_object_get(e, "time_s");
        if (json_is_string(st) && !strcmp(json_string_value(st), "fail") && json_is_number(ts) &&
            json_number_value(ts) < t)
            t = json_number_value(ts);
    }
    return t;
}

struct ranked {
    int i;         /* into runs[] */
    int error;     /* 1 for an error run: those come first */
    double fail_s; /* a failed run: the sooner it failed, the worse */
};

static int cmp_worst(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->error != y->error)
        return y->error - x->error;
    if (x->fail_s != y->fail_s)
        return x->fail_s < y->fail_s ? -1 : 1;
    return x->i - y->i;
}

/* Adds dir's runs to *runs, skipping run indices already there. */
static int collect(const char *dir, struct run **runs, int *n, int *cap)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/runs", dir);
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] != 'r' || strlen(e->d_name) != 7)
            continue;
        char file[PATH_MAX + 300];
        snprintf(file, sizeof file, "%s/runs/%s/run.json", dir, e->d_name);
        json_error_t je;
        json_t *j = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
        if (!j)
            continue; /* a run not finished (no run.json): not counted */
        int index = (int)json_integer_value(json_object_get(j, "run"));
        int dup = 0;
        for (int i = 0; i < *n && !dup; i++)
            dup = (*runs)[i].index == index;
        if (dup) {
            json_decref(j);
            continue;
        }
        if (*n == *cap) {
            int nc = *cap ? *cap * 2 : 256;
            struct run *g = realloc(*runs, (size_t)nc * sizeof *g);
            if (!g) {
                json_decref(j);
                closedir(d);
                return -ENOMEM;
            }
            *runs = g, *cap = nc;
        }
        (*runs)[(*n)++] = (struct run){j, index, dir};
    }
    closedir(d);
    return 0;
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* "k=v, k=v" of a params object, in its (sorted) key order. */
static void params_text(json_t *params, char *out, size_t outlen)
{
    const char *k;
    json_t *v;
    size_t n = 0;
    out[0] = 0;
    json_object_foreach(params, k, v)
    {
        int l = snprintf(out + n, outlen - n, "%s%s=%s", n ? ", " : "", k, json_string_value(v));
        if (l < 0 || (size_t)l >= outlen - n)
            break;
        n += (size_t)l;
    }
}

/* One testcase's opening: classname CAMPAIGN.rNNNNNN, name "WHAT [params]". */
static void case_open(FILE *f, const char *campaign, const char *id, const char *what,
                      const char *params)
{
    fputs("  <testcase classname=\"", f);
    hs_xml_escape(f, campaign);
    fprintf(f, ".%s\" name=\"", id);
    hs_xml_escape(f, what);
    fputs(" [", f);
    hs_xml_escape(f, params);
    fputs("]\"", f);
}

static void write_junit(FILE *f, const char *name, struct run *runs, int n, int tests, int fails,
                        int errs)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    for (int level = 0; level < 2; level++) {
        fprintf(f, "<%s name=\"", level ? "testsuite" : "testsuites");
        hs_xml_escape(f, name);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\">\n", tests, fails, errs);
    }
    for (int i = 0; i < n; i++) {
        json_t *r = runs[i].j;
        char params[900];
        params_text(json_object_get(r, "params"), params, sizeof params);
        if (!strcmp(str(r, "verdict"), "error")) {
            case_open(f, name, str(r, "id"), "run", params);
            fputs(">\n    <error type=\"run_error\" message=\"", f);
            hs_xml_escape(f, str(r, "reason"));
            fputs("\"/>\n  </testcase>\n", f);
        }
        size_t k;
        json_t *e;
        json_array_foreach(json_object_get(r, "expectations"), k, e)
        {
            const char *st = str(e, "status");
            case_open(f, name, str(r, "id"), str(e, "name"), params);
            if (!strcmp(st, "fail")) {
                char msg[1024];
                snprintf(msg, sizeof msg, "%s; value %.9g: %s", str(e, "what"),
                         json_number_value(json_object_get(e, "value")), str(e, "reason"));
                fputs(">\n    <failure type=\"expectation\" message=\"", f);
                hs_xml_escape(f, msg);
                fputs("\"/>\n  </testcase>\n", f);
            } else if (strcmp(st, "pass")) {
                fputs(">\n    <skipped message=\"not decided: ", f);
                hs_xml_escape(f, str(e, "reason"));
                fputs("\"/>\n  </testcase>\n", f);
            } else {
                fputs("/>\n", f);
            }
        }
    }
    fprintf(f, "</testsuite>\n</testsuites>\n");
}

int hs_campaign_report(const char *const *dirs, int ndirs, const char *outdir, FILE *out)
{
    struct run *runs = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < ndirs; i++) {
        int r = collect(dirs[i], &runs, &n, &cap);
        if (r < 0) {
            fprintf(stderr, "hilsim campaign: %s/runs: %s\n", dirs[i], strerror(-r));
            for (int k = 0; k < n; k++)
                json_decref(runs[k].j);
            free(runs);
            return 2;
        }
    }
    if (n == 0) {
        fprintf(stderr, "hilsim campaign: no finished run under the folder(s) given\n");
        free(runs);
        return 2;
    }
    qsort(runs, (size_t)n, sizeof *runs, cmp_run);
    if (mkdir(outdir, 0755) < 0 && errno != EEXIST)
        fprintf(stderr, "hilsim campaign: %s: %s\n", outdir, strerror(errno));
    const char *name = str(runs[0].j, "campaign");
    int passed = 0, failed = 0, errors = 0, tests = 0, tfail = 0, terr = 0, ncells = 0;
    for (int i = 0; i < n; i++) {
        const char *v = str(runs[i].j, "verdict");
        passed += !strcmp(v, "pass");
        failed += !strcmp(v, "fail");
        errors += !strcmp(v, "error");
        terr += !strcmp(v, "error");
        tests += !strcmp(v, "error");
        size_t k;
        json_t *e;
        json_array_foreach(json_object_get(runs[i].j, "expectations"), k, e)
        {
            tests++;
            tfail += !strcmp(str(e, "status"), "fail");
        }
        int cell = (int)json_integer_value(json_object_get(runs[i].j, "cell"));
        if (cell + 1 > ncells)
            ncells = cell + 1;
    }

    json_t *sum = json_object(), *cells = json_array(), *fails = json_array();
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/summary.txt", outdir);
    FILE *txt = fopen(path, "w");
    FILE *outs[2] = {out, txt};
    for (int w = 0; w < 2; w++)
        if (outs[w])
            fprintf(outs[w],
                    "campaign %s: %d runs: %d passed, %d failed, %d errors (pass rate "
                    "%.1f %%)\n\n  %-6s %-9s %-9s %-9s %-7s  %s\n",
                    name, n, passed, failed, errors, 100.0 * passed / n, "cell", "runs", "failed",
                    "errors", "pass", "parameters");
    for (int cell = 0; cell < ncells; cell++) {
        int cn = 0, cp = 0, cf = 0, ce = 0;
        json_t *axes = NULL;
        for (int i = 0; i < n; i++) {
            if ((int)json_integer_value(json_object_get(runs[i].j, "cell")) != cell)
                continue;
            const char *v = str(runs[i].j, "verdict");
            cn++, cp += !strcmp(v, "pass"), cf += !strcmp(v, "fail"), ce += !strcmp(v, "error");
            axes = json_object_get(runs[i].j, "axes");
        }
        if (!cn)
            continue;
        char at[900];
        params_text(axes, at, sizeof at);
        json_t *co = json_object();
        json_object_set_new(co, "cell", json_integer(cell));
        json_object_set(co, "axes", axes);
        json_object_set_new(co, "runs", json_integer(cn));
        json_object_set_new(co, "passed", json_integer(cp));
        json_object_set_new(co, "failed", json_integer(cf));
        json_object_set_new(co, "errors", json_integer(ce));
        json_object_set_new(co, "pass_rate", json_real((double)cp / cn));
        json_array_append_new(cells, co);
        for (int w = 0; w < 2; w++)
            if (outs[w])
                fprintf(outs[w], "  %-6d %-9d %-9d %-9d %5.1f %%  %s\n", cell, cn, cf, ce,
                        100.0 * cp / cn, at[0] ? at : "(one cell)");
    }
    int listed = 0, nrank = 0, werr_nomem = 0;
    /* The worst first: error runs (they could not even be judged), then failures by how soon
     * they failed, then run order. */
    struct ranked *rank = calloc((size_t)n, sizeof *rank);
    for (int i = 0; rank && i < n; i++) {
        const char *v = str(runs[i].j, "verdict");
        if (!strcmp(v, "error") || !strcmp(v, "fail"))
            rank[nrank++] = (struct ranked){
                .i = i, .error = !strcmp(v, "error"), .fail_s = first_failure_s(runs[i].j)};
    }
    if (!rank) {
        fprintf(stderr, "hilsim campaign: out of memory\n");
        werr_nomem = 1;
    } else {
        qsort(rank, (size_t)nrank, sizeof *rank, cmp_worst);
    }
    for (int ri = 0; ri < nrank; ri++) {
        int i = rank[ri].i;
        {
            json_t *r = runs[i].j;
            const char *v = str(r, "verdict");
            int pass = !rank[ri].error;
            json_t *fo = json_object();
            json_object_set_new(fo, "id", json_string(str(r, "id")));
            json_object_set(fo, "params", json_object_get(r, "params"));
            json_object_set_new(fo, "verdict", json_string(v));
            char why[900] = "";
            if (!pass) {
                snprintf(why, sizeof why, "%s", str(r, "reason"));
            } else {
                size_t k;
                json_t *e;
                json_array_foreach(json_object_get(r, "expectations"), k,
                                   e) if (!strcmp(str(e, "status"), "fail") && !why[0])
                    snprintf(why, sizeof why, "%s: %s, value %.6g", str(e, "name"), str(e, "what"),
                             json_number_value(json_object_get(e, "value")));
            }
            json_object_set_new(fo, "why", json_string(why));
            json_object_set(fo, "recording", json_object_get(r, "recording"));
            json_array_append_new(fails, fo);
            if (listed++ == 0)
                for (int w = 0; w < 2; w++)
                    if (outs[w])
                        fprintf(outs[w], "\nfailed and error runs, the worst first (errors, then "
                                         "failures by how soon they failed):\n");
            char pt[900];
            params_text(json_object_get(r, "params"), pt, sizeof pt);
            const char *rec = json_string_value(json_object_get(r, "recording"));
            for (int w = 0; w < 2; w++)
                if (outs[w] && listed <= 50) {
                    fprintf(outs[w], "  %s %s [%s]\n    %s\n", str(r, "id"), v, pt, why);
                    if (rec)
                        fprintf(outs[w], "    replay: hilsim replay %s/%s\n", runs[i].dir, rec);
                    else
                        fprintf(outs[w], "    rerun: see %s/runs/%s/command.txt\n", runs[i].dir,
                                str(r, "id"));
                }
        }
    }
    free(rank);
    if (listed > 50)
        for (int w = 0; w < 2; w++)
            if (outs[w])
                fprintf(outs[w], "  (%d more in summary.json)\n", listed - 50);
    json_object_set_new(sum, "campaign", json_string(name));
    json_object_set_new(sum, "runs", json_integer(n));
    json_object_set_new(sum, "passed", json_integer(passed));
    json_object_set_new(sum, "failed", json_integer(failed));
    json_object_set_new(sum, "errors", json_integer(errors));
    json_object_set_new(sum, "cells", cells);
    json_object_set_new(sum, "failures", fails);
    snprintf(path, sizeof path, "%s/summary.json", outdir);
    char *text = json_dumps(sum, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    int werr = werr_nomem || !text || hs__camp_write_atomic(path, text) < 0;
    free(text);
    json_decref(sum);
    if (txt)
        werr |= fclose(txt) != 0;
    else
        werr = 1;
    snprintf(path, sizeof path, "%s/junit.xml", outdir);
    FILE *j = fopen(path, "w");
    if (j) {
        write_junit(j, name, runs, n, tests, tfail, terr);
        werr |= fclose(j) != 0;
    } else {
        werr = 1;
    }
    if (werr)
        fprintf(stderr, "hilsim campaign: %s: cannot write the aggregate files\n", outdir);
    for (int i = 0; i < n; i++)
        json_decref(runs[i].j);
    free(runs);
    if (werr)
        return 1;
    return errors ? 1 : failed ? 5 : 0;
}
