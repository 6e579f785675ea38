/* Warnings a bench owes its user at start: things that are allowed but are probably not what
 * was meant, and that otherwise show only as a strange run. The library collects them; the CLI
 * prints each once (hs_bench_warning). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_internal.h"

#define HS_OVERLAP_REPORT_M 1e-3 /* deeper than a resting contact's surface layer */
#define HS_OVERLAP_MAX 32        /* pairs named; the rest are counted */
#define HS_LIMIT_SLACK 1e-6      /* rad or m outside a limit still taken as "at the limit" */

int hs__bench_warn(struct hs_bench *b, const char *fmt, ...)
{
    char **grown = realloc(b->warnings, (b->nwarnings + 1) * sizeof *grown);
    if (!grown)
        return -ENOMEM;
    b->warnings = grown;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&b->warnings[b->nwarnings], fmt, ap);
    va_end(ap);
    if (n < 0)
        return -ENOMEM;
    b->nwarnings++;
    return 0;
}

uint32_t hs_bench_warning_count(const struct hs_bench *b)
{
    return b->nwarnings;
}

const char *hs_bench_warning(const struct hs_bench *b, uint32_t i)
{
    return i < b->nwarnings ? b->warnings[i] : NULL;
}

void hs__bench_free_warnings(struct hs_bench *b)
{
    for (uint32_t i = 0; i < b->nwarnings; i++)
        free(b->warnings[i]);
    free(b->warnings);
    b->warnings = NULL;
    b->nwarnings = 0;
}

static const char *link_name(const struct hs_model *m, uint32_t link)
{
    const struct hs_link *l = &m->links[link];
    return l->name[0] ? l->name : l->segment_name[0] ? l->segment_name : "(unnamed)";
}

static int torque_limits(struct hs_bench *b)
{
    const struct hs_config *c = b->cfg;
    for (uint32_t i = 0; i < b->njoints; i++) {
        const struct hs_cfg_actuator *a = hs_config_actuator(c, b->joints[i].name);
        if (isinf(a->torque_limit_nm) &&
            hs__bench_warn(b,
                           "%s:%d:%d: actuators: torque_limit_nm of %s is .inf: nothing bounds "
                           "the torque the joint applies (leave it out for the model's or the "
                           "derived finite default)",
                           c->path, a->src.line, a->src.column, b->joints[i].name) < 0)
            return -ENOMEM;
    }
    return 0;
}

static int initial_limits(struct hs_bench *b)
{
    const struct hs_config *c = b->cfg;
    for (uint32_t i = 0; i < b->nmodels; i++) {
        const struct hs_cfg_model *cm = &c->models[i];
        for (uint32_t k = 0; k < cm->initial_count; k++) {
            const struct hs_cfg_initial_joint *ij = &c->initial_joints[cm->initial_first + k];
            int link = hs_model_find_link(b->models[i], ij->joint);
            if (link < 0)
                continue;
            const struct hs_link *l = &b->models[i]->links[link];
            double out = ij->q > l->ulimit   ? ij->q - l->ulimit
                         : ij->q < l->llimit ? l->llimit - ij->q
                                             : 0.0;
            if (out > HS_LIMIT_SLACK &&
                hs__bench_warn(b,
                               "%s:%d:%d: models[%u].initial.joints: %s starts at %g, %g outside "
                               "the model's limits [%g, %g] (%s line %d)",
                               c->path, ij->src.line, ij->src.column, i, ij->joint, ij->q, out,
                               l->llimit, l->ulimit, b->models[i]->path ? b->models[i]->path : "",
                               l->source_line) < 0)
                return -ENOMEM;
        }
    }
    return 0;
}

static int overlaps(struct hs_bench *b)
{
    struct hs_world_overlap o[HS_OVERLAP_MAX];
    uint32_t n = 0;
    int r = hs_world_overlaps(b->world, HS_OVERLAP_REPORT_M, o, HS_OVERLAP_MAX, &n);
    if (r < 0)
        return r;
    for (uint32_t k = 0; k < n && k < HS_OVERLAP_MAX; k++) {
        const struct hs_model *m1 = b->models[o[k].body1], *m2 = b->models[o[k].body2];
        if (hs__bench_warn(b,
                           "models[%u] %s link %s starts %.1f mm inside models[%u] %s link %s: "
                           "the contacts will push them apart on the first steps",
                           o[k].body1, m1->name, link_name(m1, o[k].link1), o[k].depth_m * 1e3,
                           o[k].body2, m2->name, link_name(m2, o[k].link2)) < 0)
            return -ENOMEM;
    }
    if (n > HS_OVERLAP_MAX &&
        hs__bench_warn(b, "%u more overlapping pairs at the start", n - HS_OVERLAP_MAX) < 0)
        return -ENOMEM;
    return 0;
}

int hs__bench_collect_warnings(struct hs_bench *b)
{
    int r = torque_limits(b);
    if (r == 0)
        r = initial_limits(b);
    if (r == 0)
        r = overlaps(b);
    return r;
}
