/* The live root poses: the bench's `state --json` answer (from its control socket) reduced to
 * what the page needs to place each robot, the pose of every model's root link. The shm segment
 * publishes joints and sensors only; the control socket's plant copy has every link's pose, and
 * the view asks for it at the display rate from its control thread (never the RT loop's
 * business beyond the bounded copy the tick makes for any `hilsim ctl state`). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hilsim/view.h"
#include "view_internal.h"

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
 * vector of each, and how many the bench left out) as "contacts":[[px,py,pz,fx,fy,fz],...],
 * "contacts_dropped":N in msg; nothing when the answer has none (a bench before them). */
static int put_contacts(json_t *root, json_t *msg, bool *bad, char *err, size_t errsize)
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
    json_t *out = json_array();
    for (size_t i = 0; i < json_array_size(pts); i++) {
        json_t *pt = json_array_get(pts, i);
        double pf[6];
        if (!json_is_object(pt) || vec(pt, "position_m", 3, pf) < 0 ||
            vec(pt, "force_n", 3, pf + 3) < 0) {
            snprintf(err, errsize,
                     "state: contact %zu: expected \"position_m\" [3] and \"force_n\" [3]", i);
            json_decref(out);
            return -EINVAL;
        }
        /* positions to 0.1 µm over metres, forces to six digits: what the arrows need */
        json_t *row = json_array();
        for (int k = 0; k < 6; k++)
            hs__view_add(row, hs__view_num(pf[k], k < 3 ? 7 : HS_VIEW_DIGITS), bad);
        hs__view_add(out, row, bad);
    }
    hs__view_set(msg, "contacts", out, bad); /* filled first: a failed set frees it */
    hs__view_set(msg, "contacts_dropped", json_integer(dropped), bad);
    return 0;
}

/* The answer's "solver" (the last step's health) as "solver":[penetration_m, joint_error_m,
 * force_jump_n] (null where the bench had no finite value); nothing when it has none. */
static int put_solver(json_t *root, json_t *msg, bool *bad, char *err, size_t errsize)
{
    static const char *const keys[] = {"penetration_m", "joint_error_m", "force_jump_n"};
    json_t *h = json_object_get(root, "solver");
    if (!h)
        return 0;
    if (!json_is_object(h)) {
        snprintf(err, errsize, "state: \"solver\": expected an object");
        return -EINVAL;
    }
    json_t *out = json_array();
    for (size_t k = 0; k < 3; k++) {
        json_t *v = json_object_get(h, keys[k]);
        if (json_is_number(v) && isfinite(json_number_value(v)))
            hs__view_add(out, hs__view_num(json_number_value(v), HS_VIEW_DIGITS), bad);
        else if (!v || json_is_null(v))
            hs__view_add(out, json_null(), bad);
        else {
            snprintf(err, errsize, "state: \"solver\": \"%s\" is not a number", keys[k]);
            json_decref(out);
            return -EINVAL;
        }
    }
    hs__view_set(msg, "solver", out, bad);
    return 0;
}

/* A phase figure: a finite number or null. */
static bool num_ok(json_t *v)
{
    return json_is_null(v) || (json_is_number(v) && isfinite(json_number_value(v)));
}

/* ... as the page takes it: six digits, or null. */
static json_t *num_or_null(json_t *v)
{
    return json_is_null(v) ? json_null() : hs__view_num(json_number_value(v), HS_VIEW_DIGITS);
}

/* The answer's "phases_us" (the tick's phases over the ticks since the bench's copy before:
 * p50, p99 and max of each, µs) as "phases":[["wake",p50,p99,max],...]; nothing when the
 * answer has none or null (a bench before them, or one driven without the loop). */
#define PHASES_MAX 16
static int put_phases(json_t *root, json_t *msg, bool *bad, char *err, size_t errsize)
{
    json_t *ph = json_object_get(root, "phases_us");
    if (!ph || json_is_null(ph))
        return 0;
    if (!json_is_object(ph) || json_object_size(ph) > PHASES_MAX + 2) {
        snprintf(err, errsize, "state: \"phases_us\": expected an object of at most %d phases",
                 PHASES_MAX);
        return -EINVAL;
    }
    json_t *out = json_array();
    const char *key;
    json_t *v;
    json_object_foreach(ph, key, v)
    {
        if (!strcmp(key, "ticks") || !strcmp(key, "percentiles"))
            continue;
        if (!plain_name(key, strlen(key)) || !json_is_array(v) || json_array_size(v) != 3 ||
            !num_ok(json_array_get(v, 0)) || !num_ok(json_array_get(v, 1)) ||
            !num_ok(json_array_get(v, 2))) {
            snprintf(err, errsize, "state: \"phases_us\": a phase is [p50, p99, max] (us)");
            json_decref(out);
            return -EINVAL;
        }
        json_t *row = json_array();
        hs__view_add(row, json_string(key), bad);
        for (size_t k = 0; k < 3; k++)
            hs__view_add(row, num_or_null(json_array_get(v, k)), bad);
        hs__view_add(out, row, bad);
    }
    hs__view_set(msg, "phases", out, bad);
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
    json_t *tick = json_object_get(root, "tick");
    json_t *t = json_object_get(root, "time_s");
    json_t *links = json_object_get(root, "links");
    if (!json_is_integer(tick) || json_integer_value(tick) < 0 || !json_is_number(t) ||
        !isfinite(json_number_value(t)) || !json_is_array(links)) {
        snprintf(err, errsize, "state: expected \"tick\", \"time_s\" and \"links\"");
        return -EINVAL;
    }
    bool bad = false;
    json_t *msg = json_object();
    json_t *roots = json_array();
    hs__view_set(msg, "type", json_string("pose"), &bad);
    hs__view_set(msg, "tick", json_integer(json_integer_value(tick)), &bad);
    hs__view_set(msg, "t", hs__view_num(json_number_value(t), 9), &bad);
    /* A model's root is its first link in the answer (the bench lists each model's links from
     * its root); a new model starts where the MODEL/ prefix changes. */
    const char *prev = NULL;
    size_t prev_len = 0;
    int nroots = 0, r = 0;
    for (size_t i = 0; i < json_array_size(links); i++) {
        json_t *l = json_array_get(links, i);
        json_t *jn = json_object_get(l, "name");
        const char *name = json_string_value(jn);
        double pq[7];
        if (!json_is_object(l) || !name || !plain_name(name, json_string_length(jn)) ||
            vec(l, "position_m", 3, pq) < 0 || vec(l, "quaternion_wxyz", 4, pq + 3) < 0) {
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
        json_t *row = json_array();
        hs__view_add(row, json_string(name), &bad);
        for (int k = 0; k < 7; k++)
            hs__view_add(row, hs__view_num(pq[k], 9), &bad);
        hs__view_add(roots, row, &bad);
        nroots++;
    }
    hs__view_set(msg, "roots", roots, &bad); /* filled first: a failed set frees it */
    if (r == 0)
        r = put_contacts(root, msg, &bad, err, errsize);
    if (r == 0)
        r = put_solver(root, msg, &bad, err, errsize);
    if (r == 0)
        r = put_phases(root, msg, &bad, err, errsize);
    if (r < 0) {
        json_decref(msg);
        return r;
    }
    r = hs__view_dumpb(msg, bad, out, outsize);
    if (r == -ENOSPC)
        snprintf(err, errsize, "state: more roots than fit in %zu bytes", outsize);
    else if (r < 0)
        snprintf(err, errsize, "state: out of memory");
    return r < 0 ? r : nroots;
}
