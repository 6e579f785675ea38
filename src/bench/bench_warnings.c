/* Warnings a bench owes its user at start: things that are allowed but are probably not what
 * was meant, and that otherwise show only as a strange run. The library collects them; the CLI
 * prints each once (hs_bench_warning). */
#include <errno.h>
#include <math.h>
#include <string.h>
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
        if (isinf(a->velocity_limit) &&
            hs__bench_warn(b,
                           "%s:%d:%d: actuators: velocity_limit of %s is .inf: no speed limit in "
                           "the drive (leave it out for the model's or the default)",
                           c->path, a->src.line, a->src.column, b->joints[i].name) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* Every joint whose initial position (the config's, else 0) is outside the model's limits:
 * bench_create.c starts it at the nearest limit instead. */
static int initial_limits(struct hs_bench *b)
{
    const struct hs_config *c = b->cfg;
    for (uint32_t i = 0; i < b->nmodels; i++) {
        const struct hs_cfg_model *cm = &c->models[i];
        const struct hs_model *m = b->models[i];
        if (cm->is_static)
            continue;
        for (uint32_t link = 0; link < m->nlinks; link++) {
            const struct hs_link *l = &m->links[link];
            if (l->joint_type != HS_JOINT_ROTATE && l->joint_type != HS_JOINT_SLIDE)
                continue;
            const struct hs_cfg_initial_joint *ij = NULL;
            for (uint32_t k = 0; k < cm->initial_count && !ij; k++)
                if (!strcmp(c->initial_joints[cm->initial_first + k].joint, l->name))
                    ij = &c->initial_joints[cm->initial_first + k];
            double q = ij ? ij->q : 0.0;
            double out = q > l->ulimit ? q - l->ulimit : q < l->llimit ? l->llimit - q : 0.0;
            if (!(out > HS_LIMIT_SLACK))
                continue;
            double at = q > l->ulimit ? l->ulimit : l->llimit;
            int r = ij ? hs__bench_warn(b,
                                        "%s:%d:%d: models[%u].initial.joints: %s starts at %g, %g "
                                        "outside the model's limits [%g, %g] (%s line %d): it "
                                        "starts at the nearest limit, %g",
                                        c->path, ij->src.line, ij->src.column, i, ij->joint, q, out,
                                        l->llimit, l->ulimit, m->path ? m->path : "",
                                        l->source_line, at)
                       : hs__bench_warn(b,
                                        "models[%u] %s: joint %s has no initial position and 0 is "
                                        "outside its limits [%g, %g] (%s line %d): it starts at "
                                        "the nearest limit, %g (set models[%u].initial.joints)",
                                        i, cm->name, l->name, l->llimit, l->ulimit,
                                        m->path ? m->path : "", l->source_line, at, i);
            if (r < 0)
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
