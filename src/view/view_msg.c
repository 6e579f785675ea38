/* Messages from a browser: one JSON object per WebSocket message. Anything else is refused with
 * its reason; the session and the view go on. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hilsim/view.h"

static int fail(char *err, size_t errsize, const char *fmt, const char *what)
{
    snprintf(err, errsize, fmt, what);
    return -EINVAL;
}

int hs_view_msg_parse(const char *data, size_t size, struct hs_view_msg *ret, char *err,
                      size_t errsize)
{
    if (size > HS_VIEW_MSG_MAX)
        return fail(err, errsize, "message longer than %s bytes", "2048");
    json_error_t je;
    json_t *root = json_loadb(data, size, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return fail(err, errsize, "not JSON: %s", je.text);
    int r = -EINVAL;
    const char *type = json_string_value(json_object_get(root, "type"));
    memset(ret, 0, sizeof *ret);
    if (!json_is_object(root) || !type) {
        r = fail(err, errsize, "%s", "expected an object with a string \"type\"");
    } else if (!strcmp(type, "ctl")) {
        json_t *l = json_object_get(root, "line");
        const char *line = json_string_value(l);
        size_t len = line ? json_string_length(l) : 0;
        if (!line || !len)
            r = fail(err, errsize, "%s", "ctl: \"line\" must be a non-empty string");
        else if (len >= sizeof ret->line)
            r = fail(err, errsize, "%s", "ctl: \"line\" longer than 1023 bytes");
        else if (strlen(line) != len || strpbrk(line, "\r\n"))
            r = fail(err, errsize, "%s", "ctl: \"line\" must be one line (no NUL, CR or LF)");
        else {
            ret->kind = HS_VIEW_MSG_CTL;
            memcpy(ret->line, line, len + 1);
            r = 0;
        }
    } else if (!strcmp(type, "seek") || !strcmp(type, "speed")) {
        bool seek = !strcmp(type, "seek");
        json_t *v = json_object_get(root, seek ? "tick" : "value");
        double d = json_is_number(v) ? json_number_value(v) : NAN;
        if (!isfinite(d) || d < 0 || (seek && d > 9.0e15) || (!seek && (d <= 0 || d > 1000)))
            r = fail(err, errsize, "%s",
                     seek ? "seek: \"tick\" must be a number >= 0"
                          : "speed: \"value\" must be a number in (0, 1000]");
        else {
            ret->kind = seek ? HS_VIEW_MSG_SEEK : HS_VIEW_MSG_SPEED;
            ret->value = d;
            r = 0;
        }
    } else if (!strcmp(type, "play") || !strcmp(type, "pause")) {
        ret->kind = !strcmp(type, "play") ? HS_VIEW_MSG_PLAY : HS_VIEW_MSG_PAUSE;
        r = 0;
    } else {
        char t[64];
        snprintf(t, sizeof t, "%s", type);
        r = fail(err, errsize, "unknown message type \"%s\" (ctl, seek, play, pause, speed)", t);
    }
    json_decref(root);
    return r;
}

bool hs_view_ctl_allowed(const char *line)
{
    static const char *const verbs[] = {"push ",     "fault ", "clear", "inject ",
                                        "scenario ", "state",  "state "};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        size_t n = strlen(verbs[i]);
        if (!strncmp(line, verbs[i], n) && (verbs[i][n - 1] == ' ' || line[n] == 0))
            return true;
    }
    return false;
}
