/* libFuzzer entry point for the URDF loader (libxml2 tree to hs_model). No base path: mesh
 * files are refused, so the fuzzer reads nothing from disk. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_model *m = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_model_load_buffer((const char *)data, size, "fuzz.urdf", NULL, &m, &d);
    if (r < 0 && m)
        abort(); /* a failed load leaves no model */
    if (r == 0) {
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
