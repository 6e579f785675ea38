/* Reading a scenario file (the config's libyaml walker and its diagnostics) and binding it to a
 * bench: names to indices, seconds to ticks, and every buffer the tick will use. */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_internal.h"
#include "scen_internal.h"

int hs_scenario_parse(const char *data, size_t size, const char *name, const char *base_dir,
                      struct hs_scenario_spec **ret_spec, struct hs_diag *diag)
{
    if (!name)
        name = "<buffer>";
    struct hs_scenario_spec *spec = calloc(1, sizeof *spec);
    if (!spec || !(spec->path = strdup(name))) {
        free(spec);
        return hs_diag_set(diag, -ENOMEM, name, 0, 0, "out of memory");
    }
    struct hs__ctx c = {.file = name, .base_dir = base_dir, .diag = diag};
    yaml_parser_t parser;
    yaml_document_t doc;
    int r = hs__cfg_check_depth(&c, data, size);
    if (r < 0)
        goto fail;
    if (!yaml_parser_initialize(&parser)) {
        r = hs_diag_set(diag, -ENOMEM, name, 0, 0, "out of memory");
        goto fail;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, size);
    if (!yaml_parser_load(&parser, &doc)) {
        r = hs__cfg_syntax_error(&parser, name, diag);
        yaml_parser_delete(&parser);
        goto fail;
    }
    c.doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root)
        r = hs_diag_set(diag, -EINVAL, name, 0, 0, "empty scenario (needs scenario and steps)");
    else
        r = hs__scen_parse_root(&c, root, spec);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (r < 0)
        goto fail;
    *ret_spec = spec;
    return 0;
fail:
    hs_scenario_spec_free(spec);
    return r;
}

int hs_scenario_parse_file(const char *path, struct hs_scenario_spec **ret_spec,
                           struct hs_diag *diag)
{
    char *data = NULL, *dir = strdup(path);
    unsigned long size = 0;
    if (!dir)
        return hs_diag_set(diag, -ENOMEM, path, 0, 0, "out of memory");
    int r = hs__cfg_read_file(path, &data, &size, diag);
    if (r == 0)
        r = hs_scenario_parse(data, size, path, dirname(dir), ret_spec, diag);
    free(data);
    free(dir);
    return r;
}

uint32_t hs_scenario_spec_file_count(const struct hs_scenario_spec *spec)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < spec->nsteps; i++)
        n += spec->steps[i].file != NULL;
    return n;
}

static struct hs__scen_step_spec *file_step(const struct hs_scenario_spec *spec, uint32_t i)
{
    for (uint32_t k = 0; k < spec->nsteps; k++)
        if (spec->steps[k].file && i-- == 0)
            return (struct hs__scen_step_spec *)&spec->steps[k];
    return NULL;
}

const char *hs_scenario_spec_file(const struct hs_scenario_spec *spec, uint32_t i)
{
    struct hs__scen_step_spec *sp = file_step(spec, i);
    return sp ? sp->file : NULL;
}

void hs_scenario_spec_client_files(struct hs_scenario_spec *spec, const int *fds, uint32_t n)
{
    for (uint32_t k = 0; k < spec->nsteps; k++)
        spec->steps[k].no_open = true;
    for (uint32_t i = 0; i < n; i++) {
        struct hs__scen_step_spec *sp = file_step(spec, i);
        if (sp && fds[i] >= 0)
            sp->file_fd1 = fds[i] + 1;
    }
}

void hs_scenario_spec_free(struct hs_scenario_spec *spec)
{
    if (!spec)
        return;
    for (uint32_t i = 0; i < spec->nsteps; i++)
        free(spec->steps[i].file);
    free(spec->path);
    free(spec);
}

/* ---- binding ---- */
struct bind {
    struct hs_scenario *s;
    struct hs_bench *b;
    const struct hs_config *cfg;
    struct hs_diag *diag;
};

void hs__scen_step_at(const struct hs_scenario *s, const struct hs__scen_step_spec *sp, char *buf,
                      size_t size)
{
    if (s->end_tick == HS_SCEN_NEVER) /* a live step: one step, not a file's list */
        snprintf(buf, size, "step");
    else
        snprintf(buf, size, "steps[%ld]", (long)(sp - s->specs));
}

int hs__scen_err_step(const struct hs_scenario *s, const struct hs__scen_step_spec *sp,
                      struct hs_diag *diag, const char *what, const char *arg)
{
    char at[32];
    hs__scen_step_at(s, sp, at, sizeof at);
    return hs_diag_set(diag, -EINVAL, s->path, sp->src.line, sp->src.column, "%s: %s '%s'", at,
                       what, arg);
}

static int err_step(struct bind *x, const struct hs__scen_step_spec *sp, const char *fmt,
                    const char *arg)
{
    return hs__scen_err_step(x->s, sp, x->diag, fmt, arg);
}

static int64_t ticks_of(const struct hs_scenario *s, double sec)
{
    if (isinf(sec))
        return HS_SCEN_NEVER;
    return (int64_t)llround(sec * 1e9 / (double)s->period_ns);
}

static int find_link(struct bind *x, const struct hs__scen_step_spec *sp, struct hs__scen_step *st)
{
    int found = 0;
    for (uint32_t m = 0; m < x->cfg->nmodels; m++) {
        if (x->cfg->models[m].is_static ||
            (sp->t.model[0] && strcmp(x->cfg->models[m].name, sp->t.model)))
            continue;
        int l = hs_model_find_link(hs_bench_model(x->b, m), sp->t.link);
        if (l < 0)
            continue;
        if (found++)
            return err_step(x, sp, "two robots have a link named (give model)", sp->t.link);
        st->body = m;
        st->link = (uint32_t)l;
    }
    return found ? 0 : err_step(x, sp, "no robot has a link named", sp->t.link);
}

static int bind_targets(struct bind *x, const struct hs__scen_step_spec *sp,
                        struct hs__scen_step *st)
{
    st->joint = st->sensor = -1;
    if (sp->t.joint[0]) {
        int j = hs_bench_find_joint(x->b, sp->t.joint);
        if (j < 0)
            return err_step(x, sp, "the bench has no actuated joint", sp->t.joint);
        st->joint = j;
        st->body = hs_bench_joint(x->b, (uint32_t)j)->body;
        st->link = hs_bench_joint(x->b, (uint32_t)j)->link;
    }
    if (sp->t.sensor[0]) {
        for (uint32_t i = 0; i < hs_bench_sensor_count(x->b) && st->sensor < 0; i++)
            if (!strcmp(hs_bench_sensor(x->b, i)->name, sp->t.sensor))
                st->sensor = (int32_t)i;
        if (st->sensor < 0)
            return err_step(x, sp, "the bench has no simulated sensor", sp->t.sensor);
    }
    if (sp->t.link[0])
        return find_link(x, sp, st);
    return 0;
}

static int64_t default_duration(const struct hs_scenario *s, const struct hs__scen_step_spec *sp)
{
    enum hs__scen_lasts lasts = hs__scen_kind(sp->kind)->lasts;
    if (!isnan(sp->duration_s)) {
        int64_t d = ticks_of(s, sp->duration_s);
        if (lasts == HS__SCEN_LASTS_WINDOW)
            return d == HS_SCEN_NEVER ? d : d + 1; /* the window's both ends count */
        return d == 0 ? 1 : d;
    }
    return lasts == HS__SCEN_LASTS_TO_END ? HS_SCEN_NEVER : 1;
}

static int bind_step(struct bind *x, uint32_t i)
{
    struct hs_scenario *s = x->s;
    const struct hs__scen_step_spec *sp = &s->specs[i];
    struct hs__scen_step *st = &s->steps[i];
    st->sp = sp;
    st->kind = sp->kind;
    st->onset = -1;
    st->status = HS_SCENARIO_PENDING;
    st->result_tick = -1;
    st->why = "";
    int r = bind_targets(x, sp, st);
    if (r < 0)
        return r;
    if (!isnan(sp->at_s)) {
        st->timing = 0;
        st->offset = ticks_of(s, sp->at_s);
    } else if (sp->when.seen) {
        st->timing = 2;
        st->offset = isnan(sp->after_s) ? 0 : ticks_of(s, sp->after_s);
        if (sp->when.joint[0]) {
            int j = hs_bench_find_joint(x->b, sp->when.joint);
            if (j < 0)
                return err_step(x, sp, "when: the bench has no actuated joint", sp->when.joint);
            st->ref = j;
        } else {
            st->ref = -1;
        }
    } else {
        st->timing = 1;
        st->offset = ticks_of(s, sp->after_s);
        st->ref = (int32_t)i - 1;
        for (uint32_t j = 0; sp->after[0] && j < i; j++)
            if (!strcmp(s->specs[j].name, sp->after))
                st->ref = (int32_t)j;
        if (st->ref < 0) /* the first step, relative to nothing: the start */
            st->timing = 0;
    }
    st->dur = default_duration(s, sp);
    st->repeat = sp->repeat;
    st->every = sp->repeat > 1 ? ticks_of(s, sp->every_s) : 0;
    st->on = ticks_of(s, sp->on_s);
    st->off = ticks_of(s, sp->off_s);
    if (st->every && st->every < 1)
        st->every = 1;
    if ((sp->on_s > 0 && st->on < 1) || (sp->off_s > 0 && st->off < 1))
        return err_step(x, sp, "on_s and off_s must be at least one tick; got", "less");
    if (sp->when.node[0] && (r = hs__scen_bind_when_node(s, st, x->diag)) < 0)
        return r;
    const struct hs__scen_kind_ops *o = hs__scen_kind(sp->kind);
    return o->bind ? o->bind(s, st, x->diag) : 0;
}

int hs__scen_bind_step(struct hs_scenario *s, uint32_t i, struct hs_diag *diag)
{
    struct bind x = {s, s->bench, hs_bench_config(s->bench), diag};
    return bind_step(&x, i);
}

void hs__scen_step_free(struct hs__scen_step *st)
{
    const struct hs__scen_kind_ops *o = hs__scen_kind(st->kind);
    if (o->release)
        o->release(st);
}

int hs_scenario_compile(const struct hs_scenario_spec *spec, struct hs_bench *bench,
                        struct hs_scenario **ret, struct hs_diag *diag)
{
    struct hs_scenario *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(spec->path))) {
        free(s);
        return hs_diag_set(diag, -ENOMEM, spec->path, 0, 0, "out of memory");
    }
    s->bench = bench;
    s->seed = spec->seed;
    memcpy(s->name, spec->name, sizeof s->name);
    memcpy(s->description, spec->description, sizeof s->description);
    s->period_ns = hs_bench_tick_period_ns(bench);
    s->duration_s = spec->duration_s;
    s->end_tick = ticks_of(s, spec->duration_s);
    s->hold_tick = -1;
    s->nsteps = spec->nsteps;
    memcpy(s->specs, spec->steps, sizeof spec->steps[0] * spec->nsteps);
    struct bind x = {s, bench, hs_bench_config(bench), diag};
    for (uint32_t i = 0; i < s->nsteps; i++) {
        int r = bind_step(&x, i);
        if (r < 0) {
            hs_scenario_destroy(s);
            return r;
        }
        /* one stream per step, the same on every run with the same seed */
        s->steps[i].rng = hs__scen_seed(spec->seed, i);
    }
    *ret = s;
    return 0;
}

void hs_scenario_destroy(struct hs_scenario *s)
{
    if (!s)
        return;
    hs__scen_unbind_can(s);
    for (uint32_t i = 0; i < s->nsteps; i++)
        hs__scen_step_free(&s->steps[i]);
    free(s->path);
    free(s);
}
