/* libFuzzer target: the control socket's command parser on arbitrary bytes. A command it
 * accepts must be one the tick can apply: a known kind, indices from the name table, finite
 * numbers within their bounds. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ctl_names_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_ctl_cmd c;
    char err[200];
    if (hs_ctl_parse((const char *)data, size, &table_names, &c, err, sizeof err) < 0)
        return 0;
    if ((unsigned)c.kind >= HS_CTL_KIND_MAX)
        abort();
    for (int k = 0; k < 3; k++)
        if (!isfinite(c.force_n[k]) || fabs(c.force_n[k]) > HS_CTL_FORCE_MAX_N)
            abort();
    if (!isfinite(c.value))
        abort();
    if (c.kind == HS_CTL_PUSH && !(c.value > 0 && c.value <= HS_CTL_DURATION_MAX_S))
        abort();
    if (c.kind == HS_CTL_ACT_DERATE && !(c.value >= 0 && c.value <= 1))
        abort();
    if ((c.kind == HS_CTL_SENSOR_STUCK || c.kind == HS_CTL_SENSOR_OFFSET ||
         c.kind == HS_CTL_ACT_DERATE || c.kind == HS_CTL_ACT_NO_RESPONSE) &&
        c.joint > 1)
        abort();
    return 0;
}
