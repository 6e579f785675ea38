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

/* A count in the answer: a non-negative integer. */
static bool count_of(json_t *obj, const char *key, long long *ret)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *ret = (long long)json_integer_value(v);
    return true;
}

/* The answer's "contacts" (the last physics step's points with their forces: position and force
 * vector of each, and how many the bench left out) as ,"contacts":[[px,py,pz,fx,fy,fz],...],
 * "contacts_dropped":N; nothing when the answer has none (a bench before them). */
static int put_contacts(json_t *root, char *out, size_t outsize, size_t *len, char *err,
                        size_t errsize)
{
    json_t *c = json_object_get(root, "contacts");
    if (!c)
        return 0;
    json_t *pts = json_object_get(c, "points");
    long long made, dropped;
    if (!json_is_object(c) || !json_is_array(pts) || !count_of(c, "made", &made) ||
        !count_of(c, "dropped", &dropped) || json_array_size(pts) > HS_VIEW_CONTACTS_MAX) {
        snprintf(err, errsize,
                 "state: \"contacts\": expected {\"made\", \"dropped\", \"points\": at most %d}",
                 HS_VIEW_CONTACTS_MAX);
        return -EINVAL;
    }
    int r = put(out, outsize, len, ",\"contacts\":[");
    for (size_t i = 0; r == 0 && i < json_array_size(pts); i++) {
        json_t *pt = json_array_get(pts, i);
        double p[3], f[3];
        if (!json_is_object(pt) || vec(pt, "position_m", 3, p) < 0 ||
            vec(pt, "force_n", 3, f) < 0) {
            snprintf(err, errsize,
                     "state: contact %zu: expected \"position_m\" [3] and \"force_n\" [3]", i);
            return -EINVAL;
        }
        r = put(out, outsize, len, "%s[%.7g,%.7g,%.7g,%.6g,%.6g,%.6g]", i ? "," : "", p[0], p[1],
                p[2], f[0], f[1], f[2]);
    }
    return r ? r : put(out, outsize, len, "],\"contacts_dropped\":%lld", dropped);
}

/* The answer's "solver" (the last step's health) as ,"solver":[penetration_m, joint_error_m,
 * force_jump_n] (null where the bench had no finite value); nothing when it has none. */
static int put_solver(json_t *root, char *out, size_t outsize, size_t *len, char *err,
                      size_t errsize)
{
    static const char *const keys[] = {"penetration_m", "joint_error_m", "force_jump_n"};
    json_t *h = json_object_get(root, "solver");
    if (!h)
        return 0;
    if (!json_is_object(h)) {
        snprintf(err, errsize, "state: \"solver\": expected an object");
        return -EINVAL;
    }
    int r = put(out, outsize, len, ",\"solver\":[");
    for (size_t k = 0; r == 0 && k < 3; k++) {
        json_t *v = json_object_get(h, keys[k]);
        if (json_is_number(v) && isfinite(json_number_value(v)))
            r = put(out, outsize, len, "%s%.6g", k ? "," : "", json_number_value(v));
        else if (!v || json_is_null(v))
            r = put(out, outsize, len, "%snull", k ? "," : "");
        else {
            snprintf(err, errsize, "state: \"solver\": \"%s\" is not a number", keys[k]);
            return -EINVAL;
        }
    }
    return r ? r : put(out, outsize, len, "]");
}

/* A number or null as the page takes it: %.6g, or null. false: neither. */
static bool num_or_null(json_t *v, char *buf, size_t size)
{
    if (json_is_null(v)) {
        snprintf(buf, size, "null");
        return true;
    }
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return false;
    snprintf(buf, size, "%.6g", json_number_value(v));
    return true;
}

/* The answer's "phases_us" (the tick's phases over the ticks since the bench's copy before:
 * p50, p99 and max of each, µs) as ,"phases":[["wake",p50,p99,max],...]; nothing when the
 * answer has none or null (a bench before them, or one driven without the loop). */
#define PHASES_MAX 16
static int put_phases(json_t *root, char *out, size_t outsize, size_t *len, char *err,
                      size_t errsize)
{
    json_t *ph = json_object_get(root, "phases_us");
    if (!ph || json_is_null(ph))
        return 0;
    if (!json_is_object(ph) || json_object_size(ph) > PHASES_MAX + 2) {
        snprintf(err, errsize, "state: \"phases_us\": expected an object of at most %d phases",
                 PHASES_MAX);
        return -EINVAL;
    }
    int r = put(out, outsize, len, ",\"phases\":[");
    const char *key;
    json_t *v;
    int n = 0;
    json_object_foreach(ph, key, v)
    {
        if (!strcmp(key, "ticks") || !strcmp(key, "percentiles"))
            continue;
        char a[32], b[32], c[32];
        if (!plain_name(key, strlen(key)) || !json_is_array(v) || json_array_size(v) != 3 ||
            !num_or_null(json_array_get(v, 0), a, sizeof a) ||
            !num_or_null(json_array_get(v, 1), b, sizeof b) ||
            !num_or_null(json_array_get(v, 2), c, sizeof c)) {
            snprintf(err, errsize, "state: \"phases_us\": a phase is [p50, p99, max] (us)");
            return -EINVAL;
        }
        if (r == 0)
            r = put(out, outsize, len, "%s[\"%s\",%s,%s,%s]", n++ ? "," : "", key, a, b, c);
    }
    return r ? r : put(out, outsize, len, "]");
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
        r = put(out, outsize, &len, "]");
    if (r == 0)
        r = put_contacts(root, out, outsize, &len, err, errsize);
    if (r == 0)
        r = put_solver(root, out, outsize, &len, err, errsize);
    if (r == 0)
        r = put_phases(root, out, outsize, &len, err, errsize);
    if (r == 0)
        r = put(out, outsize, &len, "}");
    if (r == -ENOSPC)
        snprintf(err, errsize, "state: more roots than fit in %zu bytes", outsize);
    if (r == 0)
        r = nroots;
out:
    if (r < 0)
        out[0] = 0;
    return r;
}
