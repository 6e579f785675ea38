/* The live root poses: the bench's `state --json` answer (from its control socket) reduced to
 * what the page needs to place each robot, the pose of every model's root link. The shm segment
 * publishes joints and sensors only; the control socket's plant copy has every link's pose, and
 * the view asks for it at the display rate from its control thread (never the RT loop's
 * business beyond the bounded copy the tick makes for any `hilsim ctl state`). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hilsim/view.h"
#include "view_internal.h"

static int put(char *out, size_t size, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int put(char *out, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size - *len)
        return -ENOSPC;
    *len += (size_t)n;
    return 0;
}

/* A link name as a JSON string: the bench's names are identifiers (letters, digits, _ - . /);
 * anything else is refused rather than escaped, as it cannot be a link of this bench. */
static bool plain_name(const char *s, size_t n)
{
    if (!n || n > 256 || strlen(s) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x21 || ch > 0x7e || ch == '"' || ch == '\\')
            return false;
    }
    return true;
}

static int vec(json_t *link, const char *key, size_t n, double *ret)
{
    json_t *a = json_object_get(link, key);
    if (!json_is_array(a) || json_array_size(a) != n)
        return -EINVAL;
    for (size_t k = 0; k < n; k++) {
        json_t *x = json_array_get(a, k);
        if (!json_is_number(x))
            return -EINVAL;
        ret[k] = json_number_value(x);
        if (!isfinite(ret[k]))
            return -EINVAL;
    }
    return 0;
}

/* The model part of a link name: "" for a bare LINK (a bench of one model). */
static size_t model_len(const char *name)
{
    const char *slash = strchr(name, '/');
    return slash ? (size_t)(slash - name) : 0;
}

json_t *hs__view_state_load(const char *data, size_t size, char *err, size_t errsize)
{
    json_error_t je;
    json_t *root = json_loadb(data, size, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        snprintf(err, errsize, "state: not JSON: %s", je.text);
    return root;
}

int hs_view_pose_parse(const char *data, size_t size, char *out, size_t outsize, char *err,
                       size_t errsize)
{
    if (!outsize)
        return -ENOSPC;
    out[0] = 0;
    json_t *root = hs__view_state_load(data, size, err, errsize);
    if (!root)
        return -EINVAL;
    int r = hs__view_pose_from(root, out, outsize, err, errsize);
    json_decref(root);
    return r;
}

int hs__view_pose_from(json_t *root, char *out, size_t outsize, char *err, size_t errsize)
{
    if (!outsize)
        return -ENOSPC;
    out[0] = 0;
    int r = -EINVAL;
    json_t *tick = json_object_get(root, "tick");
    json_t *t = json_object_get(root, "time_s");
    json_t *links = json_object_get(root, "links");
    size_t len = 0;
    int nroots = 0;
    if (!json_is_integer(tick) || json_integer_value(tick) < 0 || !json_is_number(t) ||
        !isfinite(json_number_value(t)) || !json_is_array(links)) {
        snprintf(err, errsize, "state: expected \"tick\", \"time_s\" and \"links\"");
        goto out;
    }
    r = put(out, outsize, &len, "{\"type\":\"pose\",\"tick\":%lld,\"t\":%.9g,\"roots\":[",
            (long long)json_integer_value(tick), json_number_value(t));
    /* A model's root is its first link in the answer (the bench lists each model's links from
     * its root); a new model starts where the MODEL/ prefix changes. */
    const char *prev = NULL;
    size_t prev_len = 0;
    for (size_t i = 0; r == 0 && i < json_array_size(links); i++) {
        json_t *l = json_array_get(links, i);
        json_t *jn = json_object_get(l, "name");
        const char *name = json_string_value(jn);
        double p[3], q[4];
        if (!json_is_object(l) || !name || !plain_name(name, json_string_length(jn)) ||
            vec(l, "position_m", 3, p) < 0 || vec(l, "quaternion_wxyz", 4, q) < 0) {
            snprintf(err, errsize,
                     "state: link %zu: expected \"name\", \"position_m\" [3] and "
                     "\"quaternion_wxyz\" [4]",
                     i);
            r = -EINVAL;
            break;
        }
        size_t ml = model_len(name);
        if (prev && ml == prev_len && !strncmp(name, prev, ml))
            continue;
        prev = name;
        prev_len = ml;
        r = put(out, outsize, &len, "%s[\"%s\",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g]",
                nroots ? "," : "", name, p[0], p[1], p[2], q[0], q[1], q[2], q[3]);
        nroots++;
    }
    if (r == 0)
        r = put(out, outsize, &len, "]}");
    if (r == -ENOSPC)
        snprintf(err, errsize, "state: more roots than fit in %zu bytes", outsize);
    if (r == 0)
        r = nroots;
out:
    if (r < 0)
        out[0] = 0;
    return r;
}
