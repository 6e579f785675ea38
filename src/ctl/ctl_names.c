/* Names a control command may use, resolved against the bench: links by name when one model
 * has it, or as MODEL/LINK; joints by the bench's joint names. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hilsim/ctl.h"

static int bench_link(void *ctx, const char *name, uint32_t *ret_body, uint32_t *ret_link)
{
    struct hs_bench *b = ctx;
    const struct hs_config *cfg = hs_bench_config(b);
    const char *slash = strchr(name, '/');
    int found = -ENOENT;
    for (uint32_t m = 0; m < cfg->nmodels; m++) {
        const char *link = name;
        if (slash) {
            size_t n = (size_t)(slash - name);
            if (strlen(cfg->models[m].name) != n || strncmp(cfg->models[m].name, name, n))
                continue;
            link = slash + 1;
        }
        const struct hs_model *model = hs_bench_model(b, m);
        int l = model ? hs_model_find_link(model, link) : -ENOENT;
        if (l < 0)
            continue;
        if (found >= 0)
            return -EEXIST;
        if (!hs_world_ode_body(hs_bench_world(b), m, (uint32_t)l))
            return -EPERM; /* a static model's link: nothing to push */
        *ret_body = m, *ret_link = (uint32_t)l;
        found = 0;
    }
    return found;
}

static int bench_joint(void *ctx, const char *name)
{
    return hs_bench_find_joint(ctx, name);
}

/* The links a push may name, in model order: LINK, or MODEL/LINK when another model has a link
 * of that name; a static model's links are left out (nothing there can move). */
static int bench_name(void *ctx, bool joint, uint32_t i, char *buf, size_t size)
{
    struct hs_bench *b = ctx;
    if (joint) {
        if (i >= hs_bench_joint_count(b))
            return -ENOENT;
        snprintf(buf, size, "%s", hs_bench_joint(b, i)->name);
        return 0;
    }
    const struct hs_config *cfg = hs_bench_config(b);
    for (uint32_t m = 0; m < cfg->nmodels; m++) {
        const struct hs_model *model = hs_bench_model(b, m);
        for (uint32_t l = 0; model && l < model->nlinks; l++) {
            if (!hs_world_ode_body(hs_bench_world(b), m, l) || i--)
                continue;
            bool shared = false;
            for (uint32_t o = 0; o < cfg->nmodels && !shared; o++)
                shared =
                    o != m && hs_model_find_link(hs_bench_model(b, o), model->links[l].name) >= 0;
            if (shared)
                snprintf(buf, size, "%s/%s", cfg->models[m].name, model->links[l].name);
            else
                snprintf(buf, size, "%s", model->links[l].name);
            return 0;
        }
    }
    return -ENOENT;
}

void hs_ctl_bench_names(struct hs_bench *bench, struct hs_ctl_names *ret)
{
    *ret = (struct hs_ctl_names){
        .ctx = bench, .link = bench_link, .joint = bench_joint, .name = bench_name};
}
