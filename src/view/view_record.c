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

static int rec_info(void *ctx, struct hs_view_buf *out)
{
    struct rec *x = ctx;
    const struct hs_recording *r = x->r;
    hs_view_buf_printf(out, "{\"mode\":\"record\",\"dir\":");
    hs_view_buf_str(out, r->dir ? r->dir : "");
    hs_view_buf_printf(out, ",\"clock\":");
    hs_view_buf_str(out, r->clock_mode ? r->clock_mode : "");
    hs_view_buf_printf(out,
                       ",\"states\":%u,\"first_tick\":%llu,\"last_tick\":%llu,"
                       "\"duration_s\":%.6f,\"complete\":%s,\"joints\":[",
                       r->nstates, (unsigned long long)(r->nstates ? r->ticks[0] : 0),
                       (unsigned long long)(r->nstates ? r->ticks[r->nstates - 1] : 0),
                       r->nstates ? (double)(r->now_ns[r->nstates - 1] - r->now_ns[0]) / 1e9 : 0,
                       r->complete ? "true" : "false");
    for (uint32_t i = 0; i < r->njoints; i++) {
        hs_view_buf_printf(out, "%s{\"name\":", i ? "," : "");
        hs_view_buf_str(out, r->joint_names[i]);
        hs_view_buf_printf(out, ",\"unit\":\"\"}");
    }
    hs_view_buf_printf(out, "],\"readings\":[");
    for (uint32_t i = 0, at = 0; i < r->nsensors; at += r->sensor_nvalues[i++]) {
        hs_view_buf_printf(out, "%s{\"name\":", i ? "," : "");
        hs_view_buf_str(out, r->sensor_names[i]);
        hs_view_buf_printf(out, ",\"kind\":\"\",\"unit\":\"\",\"n\":%u,\"index\":%u,\"group\":3}",
                           r->sensor_nvalues[i], at);
    }
    hs_view_buf_printf(out, "],\"bodies\":[");
    for (uint32_t i = 0; i < r->nbodies; i++) {
        hs_view_buf_printf(out, "%s", i ? "," : "");
        hs_view_buf_str(out, r->body_names[i]);
    }
    hs_view_buf_printf(out, "],\"whatif\":");
    if (x->whatif) {
        char sig[128] = "";
        if (x->res.diverged)
            hs_recording_signal_name(r, (uint32_t)x->res.first_signal, sig, sizeof sig);
        hs_view_buf_printf(out, "{\"label\":");
        hs_view_buf_str(out, x->whatif_label);
        hs_view_buf_printf(out,
                           ",\"ticks\":%u,\"diverged\":%s,\"first_tick\":%llu,\"first_ord\":%u,"
                           "\"signal\":",
                           x->res.ticks, x->res.diverged ? "true" : "false",
                           (unsigned long long)x->res.first_tick, x->res.first_ord);
        hs_view_buf_str(out, sig);
        hs_view_buf_printf(out, ",\"recorded\":");
        hs_view_buf_doubles(out, &x->res.recorded, 1, 1);
        hs_view_buf_printf(out, ",\"replayed\":");
        hs_view_buf_doubles(out, &x->res.replayed, 1, 1);
        hs_view_buf_printf(out, ",\"max_abs_q_err\":");
        hs_view_buf_doubles(out, &x->res.max_abs_q_err, 1, 1);
        hs_view_buf_printf(out, "}");
    } else {
        hs_view_buf_printf(out, "null");
    }
    hs_view_buf_printf(out, ",\"events\":[");
    for (uint32_t i = 0; i < r->nevents && i < EVENTS_SHOWN; i++) {
        const struct hs_rec_event *e = &r->events[i];
        char text[HS_REC_TEXT_MAX + 1];
        memcpy(text, e->text, HS_REC_TEXT_MAX);
        text[HS_REC_TEXT_MAX] = 0;
        hs_view_buf_printf(out, "%s{\"tick\":%llu,\"kind\":%u,\"text\":", i ? "," : "",
                           (unsigned long long)e->tick, e->kind);
        hs_view_buf_str(out, text);
        hs_view_buf_printf(out, "}");
    }
    hs_view_buf_printf(out, "]}");
    return out->oom ? -ENOMEM : 0;
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

/* One state record's values as the page's arrays (the same keys as a live frame, and bodies). */
static void state_arrays(const struct hs_recording *r, const double *v, struct hs_view_buf *out)
{
    uint32_t nj = r->njoints;
    hs_view_buf_printf(out, "\"q\":");
    hs_view_buf_doubles(out, v + 0, nj, HS_REC_JOINT_FIELDS);
    hs_view_buf_printf(out, ",\"dq\":");
    hs_view_buf_doubles(out, v + 1, nj, HS_REC_JOINT_FIELDS);
    hs_view_buf_printf(out, ",\"tau\":");
    hs_view_buf_doubles(out, v + 2, nj, HS_REC_JOINT_FIELDS);
    hs_view_buf_printf(out, ",\"cur\":");
    hs_view_buf_doubles(out, v + 3, nj, HS_REC_JOINT_FIELDS);
    hs_view_buf_printf(out, ",\"r\":");
    hs_view_buf_doubles(out, v + (size_t)nj * HS_REC_JOINT_FIELDS, r->nsensor_values, 1);
    hs_view_buf_printf(out, ",\"bodies\":");
    hs_view_buf_doubles(out, v + (size_t)nj * HS_REC_JOINT_FIELDS + r->nsensor_values,
                        (size_t)r->nbodies * 7, 1);
}

/* The replayed contacts and solver health of a state, as a live pose carries them. */
static void contacts_json(const struct hs_recording *r, const struct hs__view_rc_sample *cs,
                          struct hs_view_buf *out)
{
    /* the tick they are of: the sample taken at or before the state shown (1/60 s at most) */
    hs_view_buf_printf(out, ",\"contacts_tick\":%llu,\"contacts\":[",
                       (unsigned long long)r->ticks[cs->ord]);
    for (uint32_t k = 0; k < cs->n; k++) {
        const struct hs__view_rc_point *p = &cs->points[k];
        hs_view_buf_printf(out, "%s[%.7g,%.7g,%.7g,%.6g,%.6g,%.6g]", k ? "," : "", p->p[0], p->p[1],
                           p->p[2], p->f[0], p->f[1], p->f[2]);
    }
    hs_view_buf_printf(out, "],\"contacts_dropped\":%u,\"solver\":", cs->dropped);
    hs_view_buf_doubles(out, cs->health, 3, 1);
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
    hs_view_buf_reset(out);
    hs_view_buf_printf(out,
                       "{\"type\":\"frame\",\"tick\":%llu,\"t\":%.6f,\"ord\":%u,\"flags\":%u,"
                       "\"playing\":%s,\"speed\":%g,",
                       (unsigned long long)r->ticks[i], (double)(r->now_ns[i] - r->now_ns[0]) / 1e9,
                       i, r->flags[i], x->playing ? "true" : "false", x->speed);
    state_arrays(r, v, out);
    if (x->whatif && i < x->res.ticks) {
        hs_view_buf_printf(out, ",\"w\":{");
        state_arrays(r, x->res.values + (size_t)i * r->state_stride, out);
        hs_view_buf_printf(out, "}");
    }
    if (have)
        contacts_json(r, &cs, out);
    hs_view_buf_printf(out, "}");
    return out->oom ? -ENOMEM : 1;
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
