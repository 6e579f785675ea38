/* libFuzzer entry: any bytes through the whole loader (no base path, so Inline is refused
 * cleanly rather than reading files). A failed load must leave no model and no leak. */
#include <stdint.h>
#include <stdlib.h>

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
        for (uint32_t i = 0; i < m->nlinks; i++)
            if (m->links[i].parent >= (int32_t)i)
                abort(); /* parents come first */
    }
    hs_model_free(m);
    return 0;
}
