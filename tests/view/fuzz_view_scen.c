/* libFuzzer target: a control socket's `state --json` answer (any bytes) through the view's
 * scenario reduction (view_scen.c). Accepted (then one JSON object, the page's scenario
 * message, with only the checked fields), nothing to say (no "scenario"), or refused with a
 * reason; never more than the buffer it is given. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[1024]; /* small: the -ENOSPC path is reached too */
    char err[200] = "";
    memset(out, 'x', sizeof out);
    int r = hs_view_scen_parse((const char *)data, size, out, sizeof out, err, sizeof err);
    if (!memchr(out, 0, sizeof out))
        abort();
    if (r < 0) {
        if (!err[0] || out[0])
            abort();
        return 0;
    }
    if (r == 0) {
        if (out[0])
            abort();
        return 0;
    }
    if ((size_t)r != strlen(out))
        abort();
    json_t *m = json_loads(out, 0, NULL);
    json_t *sc = m ? json_object_get(m, "scenario") : NULL;
    if (!sc || strcmp(json_string_value(json_object_get(m, "type")), "scenario") ||
        json_object_size(m) != 2)
        abort();
    if (!json_is_null(sc) &&
        (json_object_size(sc) != 7 || !json_is_array(json_object_get(sc, "steps")) ||
         !json_is_array(json_object_get(sc, "expectations"))))
        abort();
    json_decref(m);
    return 0;
}
