/* Names a control command may use, resolved against the bench: links by name when one model
 * has it, or as MODEL/LINK; joints by the bench's joint names. */
#include <errno.h>
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

void hs_ctl_bench_names(struct hs_bench *bench, struct hs_ctl_names *ret)
{
    *ret = (struct hs_ctl_names){.ctx = bench, .link = bench_link, .joint = bench_joint};
}
