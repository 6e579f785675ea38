/* Playing a position path from a CSV: a header "time_s,JOINT,JOINT,..." then rows of time (s
 * from the step's start, increasing) and positions (rad or m). While the step is active the
 * path joints' command slots get a PD command (mode position) to the linearly interpolated
 * position with its slope as velocity set point, overriding their source; after the last row
 * the last position is held until the step ends. Read when bound (stdio, allocation); the
 * tick only interpolates. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hilsim/file_open.h"
#include "scen_internal.h"

#define PATH_MAX_COLS 64
#define PATH_MAX_ROWS 1000000

/* The PD gains (NAN: the bench's hold gains); the file is the step's (struct
 * hs__scen_step_spec.file: the client passes it like any step's file). */
struct path_spec {
    double kp, kd;
};
/* rows of time and one position per path joint, read when bound */
struct path_state {
    uint32_t rows, njoints, row;
    double *t;      /* rows times, s from the step's start */
    double *q;      /* rows x njoints positions */
    int32_t *joint; /* bench joint per column */
};
HS__SCEN_OWN_FITS(struct path_spec);
HS__SCEN_OWN_FITS(struct path_state);

static int fail(struct hs_diag *d, const char *file, int line, const char *msg, const char *arg)
{
    return hs_diag_set(d, -EINVAL, file, line, 0, "%s%s", msg, arg);
}

static int read_rows(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const char *file = st->sp->file;
    struct path_state *o = HS__SCEN_OWN(struct path_state, st);
    FILE *f = NULL;
    if (st->sp->file_fd1 > 0) {
        /* the client's descriptor (src/service/io_module_ctl.c): a copy, read from its start */
        int d = dup(st->sp->file_fd1 - 1);
        if (d >= 0 && lseek(d, 0, SEEK_SET) < 0 && errno != ESPIPE) {
            close(d);
            d = -1;
        }
        f = d >= 0 ? fdopen(d, "r") : NULL;
        if (!f && d >= 0)
            close(d);
    } else if (st->sp->no_open) {
        return hs_diag_set(diag, -EINVAL, file, 0, 0,
                           "path file not passed by the client: the bench opens no file a control "
                           "client names (hilsim ctl passes it)");
    } else {
        /* at start-up the stop signals are blocked: a FIFO must be refused, not waited on */
        int e = hs_fopen_regular(file, &f);
        if (e < 0)
            errno = -e, f = NULL;
    }
    if (!f)
        return hs_diag_set(diag, -errno, file, 0, 0, "cannot open: %s", strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int r = 0, lineno = 1;
    uint32_t rows_cap = 0;
    if (getline(&line, &cap, f) < 0) {
        r = fail(diag, file, 1, "empty path file (needs a header time_s,JOINT,...)", "");
        goto out;
    }
    line[strcspn(line, "\r\n")] = 0;
    char *save = NULL, *tok = strtok_r(line, ",", &save);
    if (!tok || strcmp(tok, "time_s")) {
        r = fail(diag, file, 1, "the first column must be time_s", "");
        goto out;
    }
    o->joint = calloc(PATH_MAX_COLS, sizeof *o->joint);
    if (!o->joint) {
        r = -ENOMEM;
        goto out;
    }
    while ((tok = strtok_r(NULL, ",", &save))) {
        int j = hs_bench_find_joint(s->bench, tok);
        if (j < 0) {
            r = fail(diag, file, 1, "the bench has no actuated joint ", tok);
            goto out;
        }
        if (o->njoints == PATH_MAX_COLS) {
            r = fail(diag, file, 1, "more than 64 joints", "");
            goto out;
        }
        o->joint[o->njoints++] = j;
    }
    if (!o->njoints) {
        r = fail(diag, file, 1, "no joint columns", "");
        goto out;
    }
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (line[strspn(line, " \t\r\n")] == 0)
            continue;
        if (o->rows == PATH_MAX_ROWS) { /* the limit itself, not the next doubling */
            r = fail(diag, file, lineno, "more than 1000000 rows", "");
            goto out;
        }
        if (o->rows == rows_cap) {
            rows_cap = rows_cap ? 2 * rows_cap : 256;
            if (rows_cap > PATH_MAX_ROWS)
                rows_cap = PATH_MAX_ROWS;
            double *t = realloc(o->t, rows_cap * sizeof *t);
            double *q = t ? realloc(o->q, (size_t)rows_cap * o->njoints * sizeof *q) : NULL;
            if (t)
                o->t = t;
            if (!t || !q) {
                r = -ENOMEM;
                goto out;
            }
            o->q = q;
        }
        char *p = line, *end;
        double *q = &o->q[(size_t)o->rows * o->njoints];
        for (uint32_t c = 0; c <= o->njoints; c++) {
            double v = strtod(p, &end);
            if (end == p || !isfinite(v) || (c < o->njoints ? *end != ',' : *end > ' ')) {
                r = hs_diag_set(diag, -EINVAL, file, lineno, (int)(p - line) + 1,
                                "expected %u finite numbers separated by commas", o->njoints + 1);
                goto out;
            }
            if (c == 0)
                o->t[o->rows] = v;
            else
                q[c - 1] = v;
            p = end + 1;
        }
        if (o->rows && !(o->t[o->rows] > o->t[o->rows - 1])) {
            r = fail(diag, file, lineno, "time_s must increase", "");
            goto out;
        }
        o->rows++;
    }
    if (!o->rows)
        r = fail(diag, file, lineno, "no rows", "");
    else if (isnan(st->sp->duration_s)) /* by default the path lasts its rows */
        st->dur = (int64_t)llround(o->t[o->rows - 1] * 1e9 / (double)s->period_ns) + 1;
out:
    free(line);
    fclose(f);
    if (r == -ENOMEM)
        return hs_diag_set(diag, -ENOMEM, file, 0, 0, "out of memory");
    return r;
}

static void play(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    if (!st->active)
        return;
    struct path_state *o = HS__SCEN_OWN(struct path_state, st);
    const struct path_spec *sp = HS__SCEN_OWN(const struct path_spec, st->sp);
    if (!st->was_active)
        o->row = 0;
    double t = (double)(s->k - st->onset) * (double)s->period_ns * 1e-9;
    /* the row at or before t; moves forward only, at most once over the file per activation */
    while (o->row + 1 < o->rows && o->t[o->row + 1] <= t)
        o->row++;
    uint32_t a = o->row, b = a + 1 < o->rows ? a + 1 : a;
    double span = o->t[b] - o->t[a];
    double w = b != a && t > o->t[a] ? (t - o->t[a]) / span : 0;
    if (t < o->t[0])
        w = 0;
    for (uint32_t c = 0; c < o->njoints; c++) {
        const struct hs_bench_joint *j = hs_bench_joint(s->bench, (uint32_t)o->joint[c]);
        double qa = o->q[(size_t)a * o->njoints + c];
        double qb = o->q[(size_t)b * o->njoints + c];
        struct hs_joint_command *cmd = j->cmd;
        cmd->mode = HS_JOINT_MODE_POSITION;
        cmd->q = qa + w * (qb - qa);
        cmd->dq = b != a && t < o->t[b] ? (qb - qa) / span : 0;
        cmd->tau_ff = 0;
        cmd->kp = isnan(sp->kp) ? j->kp : sp->kp;
        cmd->kd = isnan(sp->kd) ? j->kd : sp->kd;
        cmd->rx_time_ns = now_ns;
        cmd->seq++;
    }
}

/* ---- the kind: schema and ops (scen_kinds.h) ---- */
static const struct hs__cfg_field fields[] = {
    HS__SCEN_FS("file", HS__K_PATH, file, .flags = HS__F_REQUIRED),
    HS__SCEN_OWN_FS(struct path_spec, "kp", HS__K_DOUBLE, kp, .min = 0, .max = 1e9),
    HS__SCEN_OWN_FS(struct path_spec, "kd", HS__K_DOUBLE, kd, .min = 0, .max = 1e9),
};
static const struct path_spec defaults = {.kp = NAN, .kd = NAN};

static int check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node, const char *path)
{
    (void)c, (void)node, (void)path;
    HS__SCEN_OWN_DEFAULTS(obj, fields, seen, &defaults);
    return 0;
}

static int bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    struct hs__scen_step_spec *sp = &s->specs[st->sp - s->specs];
    int r = read_rows(s, st, diag);
    sp->file = NULL;  /* the spec's; it is freed with the spec */
    sp->file_fd1 = 0; /* borrowed for the binding only */
    return r;
}

static void commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    if (st->active || st->was_active)
        play(s, st, now_ns);
}

static void release(struct hs__scen_step *st)
{
    struct path_state *o = HS__SCEN_OWN(struct path_state, st);
    free(o->t);
    free(o->q);
    free(o->joint);
    o->t = o->q = NULL;
    o->joint = NULL;
}

const struct hs__scen_kind_ops hs__scen_kind_path = {
    .schema = HS__SCEN_SCHEMA(fields, check),
    .bind = bind,
    .commands = commands,
    .release = release,
};
