/* The recording source: a run kept by hilsim run --record (src/record/README.md), played on a
 * timeline. Time runs on the recorded now_ns of each state (so a lockstep or a slowed run plays
 * as it ran), scaled by the speed; seek goes to the first state at or after a tick. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/diag.h"
#include "hilsim/record.h"
#include "view_internal.h"
#include "view_rec_contacts.h"

#define EVENTS_SHOWN 1000 /* timeline marks sent to the page at most */

struct rec {
    struct hs_recording *r;
    uint32_t cur;       /* the state shown */
    uint32_t run_first; /* the first state after the warm-up (whose ticks count from 0 too) */
    int64_t pos_ns;     /* the play position, from the first state's now_ns */
    int64_t last_wall;  /* wall clock at the last frame while playing (0: paused) */
    bool playing, dirty;
    double speed;
    struct hs__view_rc *rc; /* the recording replayed for its contacts (NULL: could not) */
    bool had_contacts;      /* the last frame sent carried them */
    bool whatif;            /* a replay ran: res holds its values */
    char whatif_label[512];
    struct hs_replay_result res;
};

/* The what-if's label for the page: its config and overrides. */
static void label(struct rec *x, const struct hs_view_opts *o)
{
    size_t n = 0;
    int k = snprintf(x->whatif_label, sizeof x->whatif_label, "%s",
                     o->whatif_config ? o->whatif_config : "the recording's config");
    n = k > 0 ? (size_t)k : 0;
    for (uint32_t i = 0; i < o->whatif_nsets && n < sizeof x->whatif_label; i++) {
        k = snprintf(x->whatif_label + n, sizeof x->whatif_label - n, " --set %s",
                     o->whatif_sets[i]);
        n += k > 0 ? (size_t)k : 0;
    }
}

/* The what-if's outcome: its label, the ticks replayed and where it first diverged (the three
 * figures as one-element arrays: null when not finite). */
static json_t *whatif_json(const struct rec *x, bool *bad)
{
    char sig[128] = "";
    if (x->res.diverged)
        hs_recording_signal_name(x->r, (uint32_t)x->res.first_signal, sig, sizeof sig);
    json_t *w = json_object();
    hs__view_set(w, "label", hs__view_text(x->whatif_label), bad);
    hs__view_set(w, "ticks", json_integer(x->res.ticks), bad);
    hs__view_set(w, "diverged", json_boolean(x->res.diverged), bad);
    hs__view_set(w, "first_tick", json_integer((json_int_t)x->res.first_tick), bad);
    hs__view_set(w, "first_ord", json_integer(x->res.first_ord), bad);
    hs__view_set(w, "signal", hs__view_text(sig), bad);
    hs__view_set(w, "recorded", hs__view_nums(&x->res.recorded, 1, 1, HS_VIEW_DIGITS), bad);
    hs__view_set(w, "replayed", hs__view_nums(&x->res.replayed, 1, 1, HS_VIEW_DIGITS), bad);
    hs__view_set(w, "max_abs_q_err", hs__view_nums(&x->res.max_abs_q_err, 1, 1, HS_VIEW_DIGITS),
                 bad);
    return w;
}

static json_t *rec_info(void *ctx)
{
    struct rec *x = ctx;
    const struct hs_recording *r = x->r;
    bool bad = false;
    json_t *o = json_object();
    hs__view_set(o, "mode", json_string("record"), &bad);
    hs__view_set(o, "dir", hs__view_text(r->dir ? r->dir : ""), &bad);
    hs__view_set(o, "clock", hs__view_text(r->clock_mode ? r->clock_mode : ""), &bad);
    hs__view_set(o, "states", json_integer(r->nstates), &bad);
    hs__view_set(o, "first_tick", json_integer((json_int_t)(r->nstates ? r->ticks[0] : 0)), &bad);
    hs__view_set(o, "last_tick",
                 json_integer((json_int_t)(r->nstates ? r->ticks[r->nstates - 1] : 0)), &bad);
    double dur_s = r->nstates ? (double)(r->now_ns[r->nstates - 1] - r->now_ns[0]) / 1e9 : 0;
    hs__view_set(o, "duration_s", hs__view_fixed(dur_s, 6), &bad);
    hs__view_set(o, "complete", json_boolean(r->complete), &bad);
    json_t *joints = json_array();
    for (uint32_t i = 0; i < r->njoints; i++) {
        json_t *j = json_object();
        hs__view_set(j, "name", hs__view_text(r->joint_names[i]), &bad);
        hs__view_set(j, "unit", json_string(""), &bad);
        hs__view_add(joints, j, &bad);
    }
    hs__view_set(o, "joints", joints, &bad);
    json_t *readings = json_array();
    for (uint32_t i = 0, at = 0; i < r->nsensors; at += r->sensor_nvalues[i++]) {
        json_t *s = json_object();
        hs__view_set(s, "name", hs__view_text(r->sensor_names[i]), &bad);
        hs__view_set(s, "kind", json_string(""), &bad);
        hs__view_set(s, "unit", json_string(""), &bad);
        hs__view_set(s, "n", json_integer(r->sensor_nvalues[i]), &bad);
        hs__view_set(s, "index", json_integer(at), &bad);
        hs__view_set(s, "group", json_integer(3), &bad);
        hs__view_add(readings, s, &bad);
    }
    hs__view_set(o, "readings", readings, &bad);
    json_t *bodies = json_array();
    for (uint32_t i = 0; i < r->nbodies; i++)
        hs__view_add(bodies, hs__view_text(r->body_names[i]), &bad);
    hs__view_set(o, "bodies", bodies, &bad);
    hs__view_set(o, "whatif", x->whatif ? whatif_json(x, &bad) : json_null(), &bad);
    json_t *events = json_array();
    for (uint32_t i = 0; i < r->nevents && i < EVENTS_SHOWN; i++) {
        const struct hs_rec_event *e = &r->events[i];
        char text[HS_REC_TEXT_MAX + 1];
        memcpy(text, e->text, HS_REC_TEXT_MAX);
        text[HS_REC_TEXT_MAX] = 0;
        json_t *ev = json_object();
        hs__view_set(ev, "tick", json_integer((json_int_t)e->tick), &bad);
        hs__view_set(ev, "kind", json_integer(e->kind), &bad);
        hs__view_set(ev, "text", hs__view_text(text), &bad);
        hs__view_add(events, ev, &bad);
    }
    hs__view_set(o, "events", events, &bad);
    if (!bad)
        return o;
    json_decref(o);
    return NULL;
}

/* The last state whose time is at or before pos (binary search: now_ns never goes back). */
static uint32_t state_at(const struct hs_recording *r, int64_t pos_ns)
{
    int64_t t = r->now_ns[0] + pos_ns;
    uint32_t lo = 0, hi = r->nstates - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (r->now_ns[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* One state record's values as the page's arrays (the same keys as a live frame, and bodies)
 * into obj. */
static void state_arrays(const struct hs_recording *r, const double *v, json_t *obj, bool *bad)
{
    uint32_t nj = r->njoints;
    static const char *const keys[] = {"q", "dq", "tau", "cur"};
    for (int k = 0; k < 4; k++)
        hs__view_set(obj, keys[k], hs__view_nums(v + k, nj, HS_REC_JOINT_FIELDS, HS_VIEW_DIGITS),
                     bad);
    const double *rv = v + (size_t)nj * HS_REC_JOINT_FIELDS;
    hs__view_set(obj, "r", hs__view_nums(rv, r->nsensor_values, 1, HS_VIEW_DIGITS), bad);
    hs__view_set(obj, "bodies",
                 hs__view_nums(rv + r->nsensor_values, (size_t)r->nbodies * 7, 1, HS_VIEW_DIGITS),
                 bad);
}

/* The replayed contacts and solver health of a state into the frame m, as a live pose carries
 * them (positions to seven digits, forces and health to six). */
static void contacts_json(const struct hs_recording *r, const struct hs__view_rc_sample *cs,
                          json_t *m, bool *bad)
{
    /* the tick they are of: the sample taken at or before the state shown (1/60 s at most) */
    hs__view_set(m, "contacts_tick", json_integer((json_int_t)r->ticks[cs->ord]), bad);
    json_t *pts = json_array();
    for (uint32_t k = 0; pts && k < cs->n; k++) {
        const struct hs__view_rc_point *p = &cs->points[k];
        json_t *row = json_array();
        for (int a = 0; a < 6; a++)
            hs__view_add(
                row, hs__view_num(a < 3 ? p->p[a] : p->f[a - 3], a < 3 ? 7 : HS_VIEW_DIGITS), bad);
        hs__view_add(pts, row, bad);
    }
    hs__view_set(m, "contacts", pts, bad);
    hs__view_set(m, "contacts_dropped", json_integer(cs->dropped), bad);
    hs__view_set(m, "solver", hs__view_nums(cs->health, 3, 1, HS_VIEW_DIGITS), bad);
}

static int rec_frame(void *ctx, int64_t now_ns, struct hs_view_buf *out)
{
    struct rec *x = ctx;
    const struct hs_recording *r = x->r;
    if (!r->nstates)
        return 0;
    if (x->playing) {
        if (x->last_wall)
            x->pos_ns += (int64_t)((double)(now_ns - x->last_wall) * x->speed);
        x->last_wall = now_ns;
        int64_t end = r->now_ns[r->nstates - 1] - r->now_ns[0];
        if (x->pos_ns >= end) {
            x->pos_ns = end;
            x->playing = false;
            x->last_wall = 0;
            x->dirty = true;
        }
        uint32_t i = state_at(r, x->pos_ns);
        if (i != x->cur) {
            x->cur = i;
            x->dirty = true;
        }
    }
    struct hs__view_rc_sample cs;
    bool have = hs__view_rc_at(x->rc, x->cur, &cs);
    if (have != x->had_contacts) /* the replay got there (or differed) while the page waited */
        x->dirty = true;
    if (!x->dirty)
        return 0;
    x->dirty = false;
    x->had_contacts = have;
    uint32_t i = x->cur;
    const double *v = r->values + (size_t)i * r->state_stride;
    bool bad = false;
    json_t *m = json_object();
    hs__view_set(m, "type", json_string("frame"), &bad);
    hs__view_set(m, "tick", json_integer((json_int_t)r->ticks[i]), &bad);
    hs__view_set(m, "t", hs__view_fixed((double)(r->now_ns[i] - r->now_ns[0]) / 1e9, 6), &bad);
    hs__view_set(m, "ord", json_integer(i), &bad);
    hs__view_set(m, "flags", json_integer(r->flags[i]), &bad);
    hs__view_set(m, "playing", json_boolean(x->playing), &bad);
    hs__view_set(m, "speed", hs__view_num(x->speed, HS_VIEW_DIGITS), &bad);
    state_arrays(r, v, m, &bad);
    if (x->whatif && i < x->res.ticks) {
        json_t *w = json_object();
        state_arrays(r, x->res.values + (size_t)i * r->state_stride, w, &bad);
        hs__view_set(m, "w", w, &bad);
    }
    if (have)
        contacts_json(r, &cs, m, &bad);
    int rc = hs__view_dump(m, bad, out);
    return rc < 0 ? rc : 1;
}

static void rec_control(void *ctx, const struct hs_view_msg *m)
{
    struct rec *x = ctx;
    const struct hs_recording *r = x->r;
    if (!r->nstates)
        return;
    switch (m->kind) {
    case HS_VIEW_MSG_SEEK: {
        /* The first state of the run (not the warm-up) at or after the tick (the last one past
         * the end). */
        uint64_t tick = (uint64_t)m->value;
        uint32_t lo = x->run_first, hi = r->nstates - 1;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (r->ticks[mid] < tick)
                lo = mid + 1;
            else
                hi = mid;
        }
        x->cur = lo;
        x->pos_ns = r->now_ns[lo] - r->now_ns[0];
        x->last_wall = 0;
        break;
    }
    case HS_VIEW_MSG_PLAY:
        if (x->cur == r->nstates - 1) {
            x->cur = 0;
            x->pos_ns = 0;
        }
        x->playing = true;
        x->last_wall = 0;
        break;
    case HS_VIEW_MSG_PAUSE:
        x->playing = false;
        x->last_wall = 0;
        break;
    case HS_VIEW_MSG_SPEED:
        x->speed = m->value;
        break;
    default:
        return;
    }
    x->dirty = true;
}

static void rec_destroy(void *ctx)
{
    struct rec *x = ctx;
    hs__view_rc_stop(x->rc); /* before the recording it reads */
    free(x->res.values);
    hs_recording_free(x->r);
    free(x);
}

int hs_view_record_open(const struct hs_view_opts *o, struct hs_view_source *ret, char *err,
                        size_t errsize)
{
    const char *dir = o->record_dir;
    struct rec *x = calloc(1, sizeof *x);
    if (!x)
        return -ENOMEM;
    struct hs_diag d = {0};
    int r = hs_recording_open(dir, &x->r, &d);
    if (r < 0) {
        hs_diag_format(&d, err, errsize);
        free(x);
        return r;
    }
    if (o->whatif) {
        struct hs_replay_opts ro = {
            .config_path = o->whatif_config, .sets = o->whatif_sets, .nsets = o->whatif_nsets};
        fprintf(stderr, "hilsim view: replaying the what-if (%u ticks)...\n", x->r->nstates);
        if ((r = hs_replay_run(x->r, &ro, &x->res, &d)) < 0) {
            char msg[400];
            hs_diag_format(&d, msg, sizeof msg);
            snprintf(err, errsize, "what-if replay: %s", msg);
            rec_destroy(x);
            return r;
        }
        x->whatif = true;
        label(x, o);
    }
    /* after the what-if's replay: one replay at a time in this process (ODE's message hook) */
    if ((r = hs__view_rc_start(x->r, &x->rc)) < 0)
        fprintf(stderr, "hilsim view: no contacts for the recording: %s\n", strerror(-r));
    while (x->run_first + 1 < x->r->nstates && (x->r->flags[x->run_first] & HS_REC_STATE_WARMUP))
        x->run_first++;
    x->speed = 1.0;
    x->dirty = true;
    *ret = (struct hs_view_source){.ctx = x,
                                   .info = rec_info,
                                   .frame = rec_frame,
                                   .control = rec_control,
                                   .destroy = rec_destroy};
    return 0;
}
