/* libFuzzer target: the control socket's command parser on arbitrary bytes. A command it
 * accepts must be one the tick can apply: a known kind, indices from the name table, finite
 * numbers within their bounds; an inject's step and a scenario's paths lie inside the line,
 * hold no control byte, and the paths are absolute. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    const struct hs_ctl_arg args[4] = {c.text, c.file, c.junit, c.json};
    size_t len = strnlen((const char *)data, size);
    for (int k = 0; k < 4; k++) {
        if ((size_t)args[k].off + args[k].len > len)
            abort();
        for (size_t i = 0; i < args[k].len; i++) {
            unsigned char ch = data[args[k].off + i];
            if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                abort();
        }
        if (k > 0 && args[k].len && data[args[k].off] != '/')
            abort();
    }
    if ((c.kind == HS_CTL_INJECT) != (c.text.len > 0) ||
        (c.kind == HS_CTL_SCENARIO_START) != (c.file.len > 0))
        abort();
    return 0;
}
