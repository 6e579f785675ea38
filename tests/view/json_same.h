/* The view's tests compare a message with what the page got before it was built with jansson:
 * the same members in the same order, the same array lengths, strings, null and booleans, and
 * every number the same value (the sign of zero too), however it is spelled (1 or 1.0, 1e-05 or
 * 1e-5). Include after cmocka.h. */
#ifndef HS_TEST_VIEW_JSON_SAME_H
#define HS_TEST_VIEW_JSON_SAME_H

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* NULL when a and b agree, else the path where they first differ (into buf). */
static const char *json_same_at(json_t *a, json_t *b, char *buf, size_t size, const char *path)
{
    if (json_is_number(a) && json_is_number(b)) {
        /* an integer has no sign of zero (the old writer's -0 reads back as 0) */
        double x = json_number_value(a), y = json_number_value(b);
        if (x == y && (json_is_integer(a) || json_is_integer(b) || signbit(x) == signbit(y)))
            return NULL;
        snprintf(buf, size, "%s: %.17g vs %.17g", path, x, y);
        return buf;
    }
    if (json_typeof(a) != json_typeof(b)) {
        snprintf(buf, size, "%s: types differ", path);
        return buf;
    }
    char sub[512];
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b)) {
            snprintf(buf, size, "%s: %zu members vs %zu", path, json_object_size(a),
                     json_object_size(b));
            return buf;
        }
        void *ia = json_object_iter(a), *ib = json_object_iter(b);
        for (; ia && ib; ia = json_object_iter_next(a, ia), ib = json_object_iter_next(b, ib)) {
            snprintf(sub, sizeof sub, "%s.%s", path, json_object_iter_key(ia));
            if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib))) {
                snprintf(buf, size, "%s: key %s in its place", sub, json_object_iter_key(ib));
                return buf;
            }
            if (json_same_at(json_object_iter_value(ia), json_object_iter_value(ib), buf, size,
                             sub))
                return buf;
        }
        return NULL;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b)) {
            snprintf(buf, size, "%s: %zu elements vs %zu", path, json_array_size(a),
                     json_array_size(b));
            return buf;
        }
        for (size_t i = 0; i < json_array_size(a); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            if (json_same_at(json_array_get(a, i), json_array_get(b, i), buf, size, sub))
                return buf;
        }
        return NULL;
    }
    if (json_is_string(a) && strcmp(json_string_value(a), json_string_value(b))) {
        snprintf(buf, size, "%s: \"%s\" vs \"%s\"", path, json_string_value(a),
                 json_string_value(b));
        return buf;
    }
    return NULL; /* null, true, false: the type said it */
}

/* Fails the test unless got (the view's bytes) and want (the old writer's bytes) agree. */
static void assert_json_same(const char *got, const char *want)
{
    json_error_t e;
    json_t *a = json_loads(got, 0, &e);
    if (!a)
        fail_msg("not JSON (%s): %s", e.text, got);
    json_t *b = json_loads(want, 0, &e);
    if (!b)
        fail_msg("expected text is not JSON (%s): %s", e.text, want);
    char buf[700];
    const char *diff = json_same_at(a, b, buf, sizeof buf, "$");
    json_decref(a);
    json_decref(b);
    if (diff)
        fail_msg("%s\n  got:  %s\n  want: %s", diff, got, want);
}

#endif
