/* The server's own messages to the page: the description a session gets once ("info": the
 * source's bench or recording and the models to draw), the status twice a second (the bench's
 * status line and the view's counters) and a session's answer or error. */
#include "view_internal.h"

int hs__view_info_msg(json_t *source, json_t *models, bool control, unsigned rate_hz,
                      struct hs_view_buf *out)
{
    bool bad = false;
    json_t *m = json_object();
    hs__view_set(m, "type", json_string("info"), &bad);
    hs__view_set(m, "source", source, &bad);
    hs__view_set(m, "models", models, &bad);
    hs__view_set(m, "control", json_boolean(control), &bad);
    hs__view_set(m, "rate_hz", json_integer(rate_hz), &bad);
    return hs__view_dump(m, bad, out);
}

int hs__view_status_msg(const char *line, const struct hs_view_counts *c, struct hs_view_buf *out)
{
    bool bad = false;
    json_t *m = json_object();
    json_t *v = json_object();
    hs__view_set(m, "type", json_string("status"), &bad);
    hs__view_set(m, "line", hs__view_text(line), &bad);
    hs__view_set(v, "clients", json_integer(c->clients), &bad);
    hs__view_set(v, "bytes", json_integer((json_int_t)c->bytes), &bad);
    hs__view_set(v, "frames", json_integer((json_int_t)c->frames), &bad);
    hs__view_set(v, "refused", json_integer((json_int_t)c->refused), &bad);
    hs__view_set(v, "sessions_refused", json_integer((json_int_t)c->sessions_refused), &bad);
    hs__view_set(v, "control", json_boolean(c->control), &bad);
    hs__view_set(v, "source_gone", json_boolean(c->source_gone), &bad);
    hs__view_set(m, "view", v, &bad);
    return hs__view_dump(m, bad, out);
}

int hs__view_reply_msg(const char *type, const char *text, struct hs_view_buf *out)
{
    bool bad = false;
    json_t *m = json_object();
    hs__view_set(m, "type", json_string(type), &bad);
    hs__view_set(m, "text", hs__view_text(text), &bad);
    return hs__view_dump(m, bad, out);
}
