/* libFuzzer entry: any bytes through the whole loader (no base path, so Inline is refused
 * cleanly rather than reading files). A failed load must leave no model and no leak. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_model *m = NULL;
    struct hs_diag d;
    int r = hs_model_load_buffer((const char *)data, size, "fuzz.wrl", NULL, &m, &d);
    if (r < 0 && m)
        abort();
    if (r == 0) {
        (void)hs_model_total_mass(m);
        for (uint32_t i = 0; i < m->nlinks; i++) {
            const struct hs_link *l = &m->links[i];
            if (l->parent >= (int32_t)i)
                abort(); /* parents come first */
            /* A loaded model always makes valid plant defaults (zeros read as "not given"). */
            if (!isfinite(l->gear_ratio) || l->gear_ratio == 0 || !(l->torque_const > 0) ||
                !isfinite(l->torque_const) || !(l->encoder_pulse > 0) || !(l->climit > 0) ||
                !(l->gear_efficiency > 0 && l->gear_efficiency <= 1) || !(l->rotor_inertia >= 0) ||
                !isfinite(l->mass) || !l->source_file)
                abort();
        }
        for (uint32_t i = 0; i < m->ngeoms; i++)
            if (m->geoms[i].material > m->nmaterials)
                abort(); /* every colour index names one of the model's colours */
        for (uint32_t i = 0; i < m->nmaterials; i++)
            for (int k = 0; k < 4; k++)
                if (!(m->materials[i].rgba[k] >= 0 && m->materials[i].rgba[k] <= 1))
                    abort();
        for (uint32_t i = 0; i < m->nwarnings; i++)
            if (!m->warnings[i] || strncmp(m->warnings[i], "fuzz.wrl", 8) != 0)
                abort(); /* every warning names the file */
    }
    hs_model_free(m);
    return 0;
}
