/* libFuzzer target: a control socket's `state --json` answer (any bytes) through the view's root
 * pose reduction. Accepted (then a JSON object of the page's pose message) or refused with a
 * reason; never more than the buffer it is given. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[512]; /* small: the -ENOSPC path is reached too */
    char err[160] = "";
    memset(out, 'x', sizeof out);
    int r = hs_view_pose_parse((const char *)data, size, out, sizeof out, err, sizeof err);
    if (!memchr(out, 0, sizeof out))
        abort();
    if (r < 0) {
        if (!err[0] || out[0])
            abort();
        return 0;
    }
    json_t *m = json_loads(out, 0, NULL);
    if (!m || !json_is_array(json_object_get(m, "roots")) ||
        json_array_size(json_object_get(m, "roots")) != (size_t)r)
        abort();
    /* contacts, when passed on: six finite numbers each, and the count left out with them */
    json_t *c = json_object_get(m, "contacts");
    if (c && (!json_is_array(c) || !json_is_integer(json_object_get(m, "contacts_dropped"))))
        abort();
    for (size_t i = 0; c && i < json_array_size(c); i++)
        if (json_array_size(json_array_get(c, i)) != 6)
            abort();
    json_t *h = json_object_get(m, "solver");
    if (h && json_array_size(h) != 3)
        abort();
    json_t *ph = json_object_get(m, "phases");
    for (size_t i = 0; ph && i < json_array_size(ph); i++)
        if (json_array_size(json_array_get(ph, i)) != 4 ||
            !json_is_string(json_array_get(json_array_get(ph, i), 0)))
            abort();
    json_decref(m);
    return 0;
}
