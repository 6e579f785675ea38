/* The live scenario's timeline: the bench's `state --json` answer (view_pose.c reads the same
 * answer for the root poses) reduced to its "scenario" member, checked field by field and
 * written again for the page as {"type":"scenario","scenario":...}. Only the fields the page
 * draws pass, each of the type and range the bench gives; anything else refuses the answer, so
 * the page never sees what the bench did not say. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hilsim/view.h"
#include "view_internal.h"

#define ROWS_MAX 64 /* a scenario's steps (HS_SCEN_MAX_STEPS) */
#define TEXT_MAX 256

static bool text_ok(json_t *v)
{
    return json_is_string(v) && json_string_length(v) <= TEXT_MAX &&
           strlen(json_string_value(v)) == json_string_length(v);
}

static bool one_of(json_t *v, const char *const *words)
{
    if (!json_is_string(v))
        return false;
    for (; *words; words++)
        if (!strcmp(json_string_value(v), *words))
            return true;
    return false;
}

/* A tick: -1 (not yet) or more. */
static bool tick_ok(json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= -1;
}

/* Copies key from src into dst when check passes; false otherwise. */
static bool take(json_t *dst, json_t *src, const char *key, bool (*check)(json_t *))
{
    json_t *v = json_object_get(src, key);
    return v && check(v) && json_object_set(dst, key, v) == 0;
}

static bool count_ok(json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0;
}

static bool finite_ok(json_t *v)
{
    return json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= 0;
}

static bool value_ok(json_t *v)
{
    return json_is_null(v) || (json_is_number(v) && isfinite(json_number_value(v)));
}

static bool line_ok(json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 1 << 30;
}

static bool state_ok(json_t *v)
{
    static const char *const w[] = {"running", "ended", NULL};
    return one_of(v, w);
}

static bool verdict_ok(json_t *v)
{
    static const char *const w[] = {"PASS", "FAIL", "ERROR", NULL};
    return json_is_null(v) || one_of(v, w);
}

static bool status_ok(json_t *v)
{
    static const char *const w[] = {"pending", "pass", "fail", "error", NULL};
    return one_of(v, w);
}

/* Rows of an array member: each an object with the fields, all checked. */
static bool rows(json_t *dst, json_t *src, const char *key, const char *const *fields,
                 bool (*const *checks)(json_t *))
{
    json_t *a = json_object_get(src, key);
    if (!json_is_array(a) || json_array_size(a) > ROWS_MAX)
        return false;
    json_t *out = json_array();
    bool ok = out && json_object_set_new(dst, key, out) == 0;
    for (size_t i = 0; ok && i < json_array_size(a); i++) {
        json_t *row = json_array_get(a, i);
        json_t *o = json_is_object(row) ? json_object() : NULL; /* out owns it from here */
        ok = o && json_array_append_new(out, o) == 0;
        for (size_t f = 0; ok && fields[f]; f++)
            ok = take(o, row, fields[f], checks[f]);
    }
    return ok;
}

int hs_view_scen_parse(const char *data, size_t size, char *out, size_t outsize, char *err,
                       size_t errsize)
{
    if (!outsize)
        return -ENOSPC;
    out[0] = 0;
    json_t *root = hs__view_state_load(data, size, err, errsize);
    if (!root)
        return -EINVAL;
    int r = hs__view_scen_from(root, out, outsize, err, errsize);
    json_decref(root);
    return r;
}

int hs__view_scen_from(json_t *root, char *out, size_t outsize, char *err, size_t errsize)
{
    if (!outsize)
        return -ENOSPC;
    out[0] = 0;
    int r = -EINVAL;
    json_t *sc = json_is_object(root) ? json_object_get(root, "scenario") : NULL;
    json_t *msg = json_pack("{s:s}", "type", "scenario");
    json_t *o = NULL;
    bool bad = false; /* a failed insertion: the message is not sent without its member */
    if (!msg) {
        r = -ENOMEM;
        goto out;
    }
    if (!sc) { /* a bench before the scenario member: nothing to say */
        r = 0;
        goto out;
    }
    if (json_is_null(sc)) {
        bad = json_object_set(msg, "scenario", sc) != 0;
    } else {
        static const char *const step_fields[] = {"name", "kind", "onset_tick", "active_ticks",
                                                  NULL};
        static bool (*const step_checks[])(json_t *) = {text_ok, text_ok, tick_ok, count_ok};
        static const char *const exp_fields[] = {"name",  "line",        "status", "tick",
                                                 "value", "opened_tick", NULL};
        static bool (*const exp_checks[])(json_t *) = {text_ok, line_ok,  status_ok,
                                                       tick_ok, value_ok, tick_ok};
        o = json_object();
        if (!o || !json_is_object(sc) || !take(o, sc, "name", text_ok) ||
            !take(o, sc, "state", state_ok) || !take(o, sc, "ticks", count_ok) ||
            !take(o, sc, "duration_s", finite_ok) || !take(o, sc, "verdict", verdict_ok) ||
            !rows(o, sc, "steps", step_fields, step_checks) ||
            !rows(o, sc, "expectations", exp_fields, exp_checks)) {
            snprintf(err, errsize,
                     "state: \"scenario\": expected null or {name, state, ticks, duration_s, "
                     "verdict, steps [<= %d], expectations [<= %d]} as the bench writes them",
                     ROWS_MAX, ROWS_MAX);
            goto out;
        }
        bad = json_object_set(msg, "scenario", o) != 0;
    }
    r = hs__view_dumpb(msg, bad, out, outsize);
    msg = NULL; /* taken */
    if (r == -ENOSPC)
        snprintf(err, errsize, "state: the scenario does not fit in %zu bytes", outsize);
    else if (r < 0)
        snprintf(err, errsize, "state: out of memory");
out:
    if (r < 0)
        out[0] = 0;
    json_decref(o);
    json_decref(msg);
    return r;
}
