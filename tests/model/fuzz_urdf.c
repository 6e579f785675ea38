/* libFuzzer entry point for the URDF loader (libxml2 tree to hs_model), each input loaded as
 * the bench loads it (no options) and as the web view does (visuals and colours: <visual>s and
 * <material>s). No base path: mesh files are refused, so the fuzzer reads nothing from disk. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/model.h"
#include "model_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every colour index names one of the model's colours, each 0..1. */
static void check_colours(const struct hs_model *m, const struct hs_geom *g, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (g[i].material > m->nmaterials)
            abort();
    for (uint32_t i = 0; i < m->nmaterials; i++)
        for (int k = 0; k < 4; k++)
            if (!(m->materials[i].rgba[k] >= 0 && m->materials[i].rgba[k] <= 1))
                abort();
}

static void load_view(const uint8_t *data, size_t size)
{
    struct hs_model_options o = {.visuals = true};
    struct hs_model *m = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs__model_load_buffer_opts((const char *)data, size, "fuzz.urdf", NULL, &o, &m, &d);
    if (r < 0 && m)
        abort();
    if (r == 0) {
        for (uint32_t i = 0; i < m->nlinks; i++)
            if (m->links[i].visual_first + m->links[i].visual_count > m->nvisuals)
                abort();
        check_colours(m, m->geoms, m->ngeoms);
        check_colours(m, m->visuals, m->nvisuals);
    }
    hs_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_view(data, size);
    struct hs_model *m = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_model_load_buffer((const char *)data, size, "fuzz.urdf", NULL, &m, &d);
    if (r < 0 && m)
        abort(); /* a failed load leaves no model */
    if (r == 0) {
        /* The bench's load reads no visual, and no URDF colour (a VRML input keeps its own). */
        bool urdf = strcmp(hs_model_format_of((const char *)data, size, "fuzz.urdf"), "urdf") == 0;
        if (m->nvisuals || (urdf && m->nmaterials))
            abort();
        for (uint32_t i = 0; i < m->nlinks; i++)
            if (m->links[i].parent >= (int32_t)i ||
                m->links[i].geom_first + m->links[i].geom_count > m->ngeoms)
                abort(); /* parents first, geometry slices in range */
        for (uint32_t i = 0; i < m->nlinks; i++) {
            const struct hs_link *l = &m->links[i];
            /* a mimic names another movable joint of its own kind; followers have no id */
            if (l->mimics && (l->mimic_of < 0 || (uint32_t)l->mimic_of >= m->nlinks ||
                              (uint32_t)l->mimic_of == i || l->joint_id >= 0 ||
                              m->links[l->mimic_of].joint_type != l->joint_type))
                abort();
            if (l->command_interfaces >> HS_IFACE_MAX || l->state_interfaces >> HS_IFACE_MAX ||
                !(l->lvlimit <= l->uvlimit))
                abort();
        }
        hs_model_free(m);
    }
    return 0;
}
