/* `ctl state`: the plant as of one tick boundary, for a person checking a live bench (did the
 * robot fall after that push?). The tick copies it only when asked: the reader raises a request
 * number, the control stage's readings phase (after every sensor fault of this tick was applied)
 * fills the preallocated copy once and publishes the number back with release order, and the
 * reader formats it after an acquire load. The copy is not touched again until the reader asks
 * once more, so no lock is taken and no torn read is possible. The tick's cost without a
 * request: one atomic load; with one: a bounded loop over links, joints and sensor values.
 *
 * What each field is: a link's pose and a joint's q and dq come from the world (the true
 * state); torque is the motor's (after saturation) and the encoder fields are what the bench
 * reports, sensor faults included.
 *
 * The scenario started live (`ctl scenario start`) is copied with the plant, at the same
 * boundary: its name, ticks played and every step's and expectation's state, names copied into
 * fixed rows, since the scenario is handed back and destroyed while a reader may still format
 * the copy. The tick also keeps, in rows only it touches, the scenario as it was when handed
 * back (its last tick), so a copy asked for later still shows it; the verdict decided after
 * that (hs_scenario_finish, on the control thread: "always" windows close there) is kept by the
 * reader's thread itself (hs__ctl_state_decided) and shown instead once it is the same
 * scenario's, told by the number of scenarios started. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_state.h"
#include "hilsim/ctl.h"
#include "hilsim/rt/tick_loop.h"
#include "hilsim/scenario.h"
#include "hilsim/scenario_live.h"

struct link_row {
    uint32_t body, link;
    double p[3], R[9];
};

struct joint_row {
    double q, dq, tau, enc_q;
    uint64_t enc_count;
};

/* Contact points a copy keeps (the biped standing: 8); more are counted as dropped. */
#define CONTACT_ROWS 64

/* HS_SCEN_MAX_STEPS (src/scenario): a scenario has no more steps, so every one has its row. */
#define SCEN_ROWS 64
#define SCEN_TEXT 96 /* a row's name: the step's, or the expectation in words, cut here */

enum { SCEN_NONE, SCEN_RUNNING, SCEN_ENDED };

struct scen_row {
    char name[SCEN_TEXT];
    const char *kind; /* static text (hs_scenario_step_kind) */
    int64_t onset;    /* scenario tick the step began (an expectation: its window opened), -1 */
    uint64_t active;  /* ticks it was active */
    bool expect;
    int line;
    enum hs_scenario_status status;
    int64_t tick; /* of the pass or fail, -1 */
    double value;
};

struct scen_copy {
    uint64_t gen; /* scenarios started before and with this one (0: none yet) */
    int state;
    char name[HS_NAME_MAX];
    char verdict[8]; /* "" until decided */
    uint64_t ticks;
    double duration_s;
    uint32_t nrows;
    struct scen_row rows[SCEN_ROWS];
};

struct hs__ctl_state {
    struct hs_bench *bench;
    int64_t period_ns;
    uint32_t nlinks, njoints, nsensors, nvalues;
    struct link_row *links;
    struct joint_row *joints;
    uint32_t *value_off; /* per sensor: its first value in values */
    double *values;
    uint64_t tick;
    struct scen_copy scen;         /* with the plant copy: what a reader formats */
    struct scen_copy scen_last;    /* tick only: the scenario as it was handed back */
    struct scen_copy scen_decided; /* reader only: its verdict after hs_scenario_finish */
    /* with the plant copy: the last physics step's contacts and solver health */
    struct hs_world_contact contacts[CONTACT_ROWS];
    uint32_t ncontacts, contacts_made;
    struct hs_world_health_sample health;
    const struct hs_bench_can *can; /* read by the reader itself (ctl_can.c), NULL: no CAN */
    /* the tick loop's phase durations since the copy before (NULL take: none) */
    void (*take)(void *ctx, struct hs_tick_window *ret);
    void *take_ctx;
    struct hs_tick_window phases;
    _Alignas(64) _Atomic uint64_t want; /* reader writes */
    _Alignas(64) _Atomic uint64_t done; /* tick writes */
};

int hs__ctl_state_create(struct hs_bench *b, struct hs__ctl_state **ret)
{
    struct hs__ctl_state *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->bench = b;
    s->period_ns = hs_bench_tick_period_ns(b);
    const struct hs_config *cfg = hs_bench_config(b);
    for (uint32_t m = 0; m < cfg->nmodels; m++) {
        const struct hs_model *model = hs_bench_model(b, m);
        s->nlinks += model ? model->nlinks : 0;
    }
    s->njoints = hs_bench_joint_count(b);
    s->nsensors = hs_bench_sensor_count(b);
    for (uint32_t i = 0; i < s->nsensors; i++)
        s->nvalues += hs_bench_sensor(b, i)->layout.nvalues;
    s->links = calloc(s->nlinks + 1, sizeof *s->links);
    s->joints = calloc(s->njoints + 1, sizeof *s->joints);
    s->value_off = calloc(s->nsensors + 1, sizeof *s->value_off);
    s->values = calloc(s->nvalues + 1, sizeof *s->values);
    if (!s->links || !s->joints || !s->value_off || !s->values) {
        hs__ctl_state_destroy(s);
        return -ENOMEM;
    }
    uint32_t k = 0;
    for (uint32_t m = 0; m < cfg->nmodels; m++) {
        const struct hs_model *model = hs_bench_model(b, m);
        for (uint32_t l = 0; model && l < model->nlinks; l++)
            s->links[k++] = (struct link_row){.body = m, .link = l};
    }
    for (uint32_t i = 0, off = 0; i < s->nsensors; i++) {
        s->value_off[i] = off;
        off += hs_bench_sensor(b, i)->layout.nvalues;
    }
    *ret = s;
    return 0;
}

void hs__ctl_state_destroy(struct hs__ctl_state *s)
{
    if (!s)
        return;
    free(s->links);
    free(s->joints);
    free(s->value_off);
    free(s->values);
    free(s);
}

/* Bounded: at most size - 1 bytes, always terminated (no stdio on the tick). */
static void copy_text(char *dst, const char *src, size_t size)
{
    size_t k = 0;
    for (; src && k + 1 < size && src[k]; k++)
        dst[k] = src[k];
    dst[k] = 0;
}

/* RT-safe: a bounded loop over the scenario's steps (at most SCEN_ROWS), no allocation. */
static void scen_fill(struct scen_copy *c, const struct hs_scenario *sc, uint64_t gen, int state)
{
    c->gen = gen;
    c->state = state;
    c->verdict[0] = 0;
    copy_text(c->name, hs_scenario_name(sc), sizeof c->name);
    c->ticks = hs_scenario_ticks(sc);
    c->duration_s = hs_scenario_duration_s(sc);
    uint32_t n = hs_scenario_step_count(sc), k = 0;
    for (; k < n && k < SCEN_ROWS; k++) {
        struct scen_row *r = &c->rows[k];
        struct hs_scenario_result res;
        r->expect = hs_scenario_step_result(sc, k, &res);
        r->kind = hs_scenario_step_kind(sc, k);
        r->active = hs_scenario_step_active_ticks(sc, k);
        if (r->expect) {
            copy_text(r->name, res.name, sizeof r->name);
            r->onset = res.opened_tick;
            r->line = res.line;
            r->status = res.status;
            r->tick = res.tick;
            r->value = res.value;
        } else {
            const char *name = hs_scenario_step_name(sc, k);
            copy_text(r->name, name, sizeof r->name);
            r->onset = hs_scenario_step_onset(sc, k);
        }
    }
    c->nrows = k;
}

/* Header and the rows in use: bounded by SCEN_ROWS. */
static void scen_copy_from(struct scen_copy *dst, const struct scen_copy *src)
{
    memcpy(dst, src, offsetof(struct scen_copy, rows));
    memcpy(dst->rows, src->rows, src->nrows * sizeof src->rows[0]);
}

void hs__ctl_state_tick(struct hs__ctl_state *s, uint64_t tick, const struct hs_scenario *scen,
                        uint64_t scen_gen, bool scen_ended)
{
    if (scen && scen_ended) /* once per scenario: its last tick, kept for later copies */
        scen_fill(&s->scen_last, scen, scen_gen, SCEN_ENDED);
    uint64_t want = atomic_load_explicit(&s->want, memory_order_acquire);
    if (want == atomic_load_explicit(&s->done, memory_order_relaxed))
        return;
    if (scen && !scen_ended)
        scen_fill(&s->scen, scen, scen_gen, SCEN_RUNNING);
    else
        scen_copy_from(&s->scen, &s->scen_last);
    struct hs_bench *b = s->bench;
    struct hs_world *w = hs_bench_world(b);
    for (uint32_t k = 0; k < s->nlinks; k++) {
        struct link_row *r = &s->links[k];
        struct hs_pose p;
        hs_world_link_pose(w, r->body, r->link, &p);
        memcpy(r->p, p.p, sizeof r->p);
        memcpy(r->R, p.R, sizeof r->R);
    }
    for (uint32_t i = 0; i < s->njoints; i++) {
        const struct hs_bench_joint *j = hs_bench_joint(b, i);
        const struct hs_joint_reading *rd = hs_bench_joint_reading(b, i);
        s->joints[i] = (struct joint_row){.q = hs_world_joint_position(w, j->body, j->link),
                                          .dq = hs_world_joint_velocity(w, j->body, j->link),
                                          .tau = rd->torque,
                                          .enc_q = rd->encoder_position,
                                          .enc_count = rd->encoder_count};
    }
    for (uint32_t i = 0; i < s->nsensors; i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, i);
        memcpy(s->values + s->value_off[i], bs->values, bs->layout.nvalues * sizeof(double));
    }
    s->ncontacts = hs_world_contacts(w, s->contacts, CONTACT_ROWS);
    s->contacts_made = hs_world_contact_count(w);
    hs_world_health_last(w, &s->health);
    if (s->take)
        s->take(s->take_ctx, &s->phases);
    s->tick = tick;
    atomic_store_explicit(&s->done, want, memory_order_release);
}

void hs__ctl_state_decided(struct hs__ctl_state *s, const struct hs_scenario *scen, uint64_t gen,
                           const char *verdict)
{
    scen_fill(&s->scen_decided, scen, gen, SCEN_ENDED);
    copy_text(s->scen_decided.verdict, verdict, sizeof s->scen_decided.verdict);
}

void hs__ctl_state_set_phase_source(struct hs__ctl_state *s,
                                    void (*take)(void *ctx, struct hs_tick_window *ret), void *ctx)
{
    s->take = take;
    s->take_ctx = ctx;
}

void hs__ctl_state_set_can(struct hs__ctl_state *s, const struct hs_bench_can *can)
{
    s->can = can;
}

uint64_t hs__ctl_state_copies(const struct hs__ctl_state *s)
{
    return atomic_load_explicit(&((struct hs__ctl_state *)s)->done, memory_order_relaxed);
}

/* Appends to a bounded buffer; a cut answer is reported by the caller (-ENOSPC). need counts
 * what the whole answer takes, cut or not, so the caller can offer a buffer that holds it. */
struct out {
    char *buf;
    size_t size, len, need;
    bool cut;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = o->cut ? vsnprintf(NULL, 0, fmt, ap)
                   : vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        o->cut = true;
        return;
    }
    o->need += (size_t)n;
    if (o->cut)
        return;
    if ((size_t)n >= o->size - o->len) {
        o->cut = true;
        return;
    }
    o->len += (size_t)n;
}

/* The JSON answer is built with jansson off the tick (the control worker's thread, after the
 * acquire load), so allocating is allowed here. Numbers keep the nine significant digits the
 * answer always had: the dump precision below, as the report's HS_REPORT_JSON_PRECISION does for
 * its figures (jansson prints an integral real as 1.0 where printf's %g printed 1). */
#define STATE_JSON_DIGITS 9

/* Any failed insertion (out of memory) fails the whole answer instead of losing members. */
static void set(json_t *obj, const char *key, json_t *val, bool *bad)
{
    if (json_object_set_new(obj, key, val) != 0)
        *bad = true;
}

static void add(json_t *arr, json_t *val, bool *bad)
{
    if (json_array_append_new(arr, val) != 0)
        *bad = true;
}

/* A name as a JSON string. jansson takes UTF-8 only; a name cut inside a character (the
 * scenario rows' SCEN_TEXT) or not UTF-8 at all gets '?' for every byte past ASCII. */
static json_t *jname(const char *name)
{
    json_t *j = json_string(name);
    if (j)
        return j;
    char buf[256]; /* past every name's bound (HS_NAME_MAX, SCEN_TEXT, MODEL/LINK) */
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof buf; n++)
        buf[n] = (unsigned char)name[n] < 0x80 ? name[n] : '?';
    buf[n] = 0;
    return json_string(buf);
}

/* A number, or null where it is not finite (a range beam that saw nothing, a plant that
 * faulted): JSON has no NaN. */
static json_t *jnum(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *jnums(const double *x, int n, bool *bad)
{
    json_t *a = json_array();
    if (!a)
        *bad = true;
    for (int k = 0; a && k < n; k++)
        add(a, jnum(x[k]), bad);
    return a;
}

/* Rotation (row-major) to a unit quaternion w, x, y, z (Shepperd's method: the largest
 * diagonal term picks the branch, so no division by a small number) with w >= 0. */
void hs__ctl_rot_quat(const double R[9], double q[4])
{
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = sqrt(tr + 1.0) * 2;
        q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s,
        q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = sqrt(1.0 + R[0] - R[4] - R[8]) * 2;
        q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s,
        q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = sqrt(1.0 + R[4] - R[0] - R[8]) * 2;
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s,
        q[3] = (R[5] + R[7]) / s;
    } else {
        double s = sqrt(1.0 + R[8] - R[0] - R[4]) * 2;
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s,
        q[3] = 0.25 * s;
    }
    if (q[0] < 0)
        for (int k = 0; k < 4; k++)
            q[k] = -q[k];
}

/* Roll, pitch, yaw (rad) of R = Rz(yaw) Ry(pitch) Rx(roll), the URDF rpy convention. */
void hs__ctl_rot_rpy(const double R[9], double rpy[3])
{
    double sp = -R[6];
    rpy[1] = asin(sp > 1 ? 1 : sp < -1 ? -1 : sp);
    rpy[0] = atan2(R[7], R[8]);
    rpy[2] = atan2(R[3], R[0]);
}

/* The link's name as ctl commands take it: LINK, or MODEL/LINK on a bench of several models. */
static void body_link_name(const struct hs__ctl_state *s, uint32_t body, uint32_t link, char *buf,
                           size_t size)
{
    const struct hs_config *cfg = hs_bench_config(s->bench);
    const char *name = hs_bench_model(s->bench, body)->links[link].name;
    if (cfg->nmodels > 1)
        snprintf(buf, size, "%s/%s", cfg->models[body].name, name);
    else
        snprintf(buf, size, "%s", name);
}

static void link_name(const struct hs__ctl_state *s, const struct link_row *r, char *buf,
                      size_t size)
{
    body_link_name(s, r->body, r->link, buf, size);
}

static const char *const status_names[] = {"pending", "pass", "fail", "error"};
_Static_assert(sizeof status_names / sizeof status_names[0] == HS_SCENARIO_STATUS_MAX,
               "a name for every hs_scenario_status");

/* The scenario a reader shows: the tick's copy, or the verdict decided since for that one. */
static const struct scen_copy *scen_shown(const struct hs__ctl_state *s)
{
    const struct scen_copy *c = &s->scen, *d = &s->scen_decided;
    if (c->state == SCEN_ENDED && d->state == SCEN_ENDED && d->gen == c->gen)
        return d;
    return c;
}

static void format_scen_text(const struct scen_copy *c, struct out *o)
{
    if (c->state == SCEN_NONE)
        return;
    put(o, "scenario %s: %s, tick %llu of %.4f s, verdict %s\n", c->name,
        c->state == SCEN_RUNNING ? "running" : "ended", (unsigned long long)c->ticks, c->duration_s,
        c->verdict[0] ? c->verdict : "not yet");
    for (uint32_t k = 0; k < c->nrows; k++) {
        const struct scen_row *r = &c->rows[k];
        if (r->expect)
            put(o, "  expect %-24s line %-4d %-7s tick %lld  value %.6g  opened %lld\n", r->name,
                r->line, status_names[r->status], (long long)r->tick, r->value,
                (long long)r->onset);
        else
            put(o, "  step   %-24s %-14s onset %lld  active %llu ticks\n",
                r->name[0] ? r->name : "-", r->kind, (long long)r->onset,
                (unsigned long long)r->active);
    }
}

static json_t *scen_json(const struct scen_copy *c, bool *bad)
{
    if (c->state == SCEN_NONE)
        return json_null();
    json_t *o = json_object(), *steps = json_array(), *expects = json_array();
    if (!o || !steps || !expects) {
        json_decref(o);
        json_decref(steps);
        json_decref(expects);
        *bad = true;
        return NULL;
    }
    set(o, "name", jname(c->name), bad);
    set(o, "state", json_string(c->state == SCEN_RUNNING ? "running" : "ended"), bad);
    set(o, "ticks", json_integer((json_int_t)c->ticks), bad);
    set(o, "duration_s", jnum(c->duration_s), bad);
    set(o, "verdict", c->verdict[0] ? jname(c->verdict) : json_null(), bad);
    for (uint32_t k = 0; k < c->nrows; k++) {
        const struct scen_row *r = &c->rows[k];
        json_t *e = json_object();
        set(e, "name", jname(r->name), bad);
        if (r->expect) {
            set(e, "line", json_integer(r->line), bad);
            set(e, "status", json_string(status_names[r->status]), bad);
            set(e, "tick", json_integer(r->tick), bad);
            set(e, "value", jnum(r->status == HS_SCENARIO_PENDING ? NAN : r->value), bad);
            set(e, "opened_tick", json_integer(r->onset), bad);
        } else {
            set(e, "kind", jname(r->kind), bad);
            set(e, "onset_tick", json_integer(r->onset), bad);
            set(e, "active_ticks", json_integer((json_int_t)r->active), bad);
        }
        add(r->expect ? expects : steps, e, bad);
    }
    set(o, "steps", steps, bad);
    set(o, "expectations", expects, bad);
    return o;
}

/* The tick's phases over the ticks since the copy before: p50, p99 and max of each, µs (null
 * where the window is empty); null without a phase source (a bench driven by hand). */
static const double phase_pcts[] = {50, 99, 100};

static json_t *phases_json(const struct hs__ctl_state *s, bool *bad)
{
    if (!s->take)
        return json_null();
    json_t *o = json_object(), *pcts = json_array();
    if (!o || !pcts) {
        json_decref(o);
        json_decref(pcts);
        *bad = true;
        return NULL;
    }
    set(o, "ticks", json_integer((json_int_t)s->phases.ticks), bad);
    for (size_t k = 0; k < sizeof phase_pcts / sizeof phase_pcts[0]; k++)
        add(pcts, json_integer((json_int_t)phase_pcts[k]), bad);
    set(o, "percentiles", pcts, bad);
    for (int p = 0; p < HS_PHASE_MAX; p++) {
        double us[sizeof phase_pcts / sizeof phase_pcts[0]];
        for (size_t k = 0; k < sizeof phase_pcts / sizeof phase_pcts[0]; k++) {
            int64_t ns = hs_tick_window_percentile(&s->phases, (enum hs_phase)p, phase_pcts[k]);
            us[k] = ns < 0 ? NAN : (double)ns / 1000.0;
        }
        set(o, hs_phase_name((enum hs_phase)p), jnums(us, (int)(sizeof us / sizeof us[0]), bad),
            bad);
    }
    return o;
}

static void format_text_phases(const struct hs__ctl_state *s, struct out *o)
{
    if (!s->take)
        return;
    put(o, "phases over the %llu ticks since the last state (us): p50 / p99 / max\n",
        (unsigned long long)s->phases.ticks);
    for (int p = 0; p < HS_PHASE_MAX; p++) {
        put(o, "  %-10s", hs_phase_name((enum hs_phase)p));
        for (size_t k = 0; k < sizeof phase_pcts / sizeof phase_pcts[0]; k++) {
            int64_t ns = hs_tick_window_percentile(&s->phases, (enum hs_phase)p, phase_pcts[k]);
            if (ns < 0)
                put(o, " %10s", "-");
            else
                put(o, " %10.3f", (double)ns / 1000.0);
        }
        put(o, "\n");
    }
}

static void format_text(const struct hs__ctl_state *s, struct out *o)
{
    struct hs_bench *b = s->bench;
    put(o, "tick %llu  t %.4f s  bench %s\n", (unsigned long long)s->tick,
        (double)s->tick * (double)s->period_ns * 1e-9, hs_bench_config(b)->bench.name);
    put(o, "links: position (m), orientation as quaternion (w x y z) and roll pitch yaw (rad)\n");
    for (uint32_t k = 0; k < s->nlinks; k++) {
        const struct link_row *r = &s->links[k];
        char name[2 * HS_NAME_MAX + 2];
        double q[4], rpy[3];
        link_name(s, r, name, sizeof name);
        hs__ctl_rot_quat(r->R, q);
        hs__ctl_rot_rpy(r->R, rpy);
        put(o, "  %-24s p %9.4f %9.4f %9.4f  quat %7.4f %7.4f %7.4f %7.4f  rpy %8.4f %8.4f %8.4f\n",
            name, r->p[0], r->p[1], r->p[2], q[0], q[1], q[2], q[3], rpy[0], rpy[1], rpy[2]);
    }
    put(o, "joints: q (rad or m, true), dq (rad/s or m/s, true), torque (N·m or N, motor), "
           "encoder as reported (position, count)\n");
    for (uint32_t i = 0; i < s->njoints; i++) {
        const struct joint_row *j = &s->joints[i];
        put(o, "  %-24s q %9.4f  dq %9.4f  torque %10.4f  encoder %9.4f  count %llu\n",
            hs_bench_joint(b, i)->name, j->q, j->dq, j->tau, j->enc_q,
            (unsigned long long)j->enc_count);
    }
    put(o, "sensors: as reported\n");
    for (uint32_t i = 0; i < s->nsensors; i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, i);
        put(o, "  %-24s %-6s (%s)", bs->name, bs->layout.kind, bs->layout.unit);
        for (uint32_t v = 0; v < bs->layout.nvalues; v++)
            put(o, " %.4f", s->values[s->value_off[i] + v]);
        put(o, "\n");
    }
    format_scen_text(scen_shown(s), o);
    put(o,
        "contacts: %u made in the last physics step, %u not listed; position (m), normal "
        "into the first link, force on it (N)\n",
        s->contacts_made, s->contacts_made - s->ncontacts);
    for (uint32_t k = 0; k < s->ncontacts; k++) {
        const struct hs_world_contact *c = &s->contacts[k];
        char on[2 * HS_NAME_MAX + 2], other[2 * HS_NAME_MAX + 2];
        body_link_name(s, c->body, c->link, on, sizeof on);
        body_link_name(s, c->other_body, c->other_link, other, sizeof other);
        put(o,
            "  %-20s on %-20s p %9.4f %9.4f %9.4f  n %7.4f %7.4f %7.4f  f %10.4f %10.4f %10.4f\n",
            on, other, c->position_m[0], c->position_m[1], c->position_m[2], c->normal[0],
            c->normal[1], c->normal[2], c->force_n[0], c->force_n[1], c->force_n[2]);
    }
    put(o, "solver: penetration %.6g m, joint error %.6g m, contact force jump %.6g N\n",
        s->health.penetration_m, s->health.joint_error_m, s->health.force_jump_n);
    char can[1024];
    hs_ctl_can_text(s->can, can, sizeof can);
    put(o, "%s\n", can);
    format_text_phases(s, o);
}

static json_t *links_json(const struct hs__ctl_state *s, bool *bad)
{
    json_t *a = json_array();
    for (uint32_t k = 0; a && k < s->nlinks; k++) {
        const struct link_row *r = &s->links[k];
        char name[2 * HS_NAME_MAX + 2];
        double q[4], rpy[3];
        link_name(s, r, name, sizeof name);
        hs__ctl_rot_quat(r->R, q);
        hs__ctl_rot_rpy(r->R, rpy);
        json_t *l = json_object();
        set(l, "name", jname(name), bad);
        set(l, "position_m", jnums(r->p, 3, bad), bad);
        set(l, "quaternion_wxyz", jnums(q, 4, bad), bad);
        set(l, "rpy_rad", jnums(rpy, 3, bad), bad);
        add(a, l, bad);
    }
    return a;
}

static json_t *joints_json(const struct hs__ctl_state *s, bool *bad)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < s->njoints; i++) {
        const struct joint_row *j = &s->joints[i];
        json_t *o = json_object();
        set(o, "name", jname(hs_bench_joint(s->bench, i)->name), bad);
        set(o, "q", jnum(j->q), bad);
        set(o, "dq", jnum(j->dq), bad);
        set(o, "torque", jnum(j->tau), bad);
        set(o, "encoder_position", jnum(j->enc_q), bad);
        set(o, "encoder_count", json_integer((json_int_t)j->enc_count), bad);
        add(a, o, bad);
    }
    return a;
}

static json_t *sensors_json(const struct hs__ctl_state *s, bool *bad)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < s->nsensors; i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(s->bench, i);
        json_t *o = json_object();
        set(o, "name", jname(bs->name), bad);
        set(o, "kind", jname(bs->layout.kind), bad);
        set(o, "unit", jname(bs->layout.unit ? bs->layout.unit : ""), bad);
        set(o, "values", jnums(s->values + s->value_off[i], (int)bs->layout.nvalues, bad), bad);
        add(a, o, bad);
    }
    return a;
}

static json_t *contacts_json(const struct hs__ctl_state *s, bool *bad)
{
    json_t *o = json_object(), *points = json_array();
    set(o, "made", json_integer(s->contacts_made), bad);
    set(o, "dropped", json_integer(s->contacts_made - s->ncontacts), bad);
    for (uint32_t k = 0; points && k < s->ncontacts; k++) {
        const struct hs_world_contact *c = &s->contacts[k];
        char name[2 * HS_NAME_MAX + 2];
        json_t *p = json_object();
        body_link_name(s, c->body, c->link, name, sizeof name);
        set(p, "link", jname(name), bad);
        body_link_name(s, c->other_body, c->other_link, name, sizeof name);
        set(p, "other", jname(name), bad);
        set(p, "position_m", jnums(c->position_m, 3, bad), bad);
        set(p, "normal", jnums(c->normal, 3, bad), bad);
        set(p, "force_n", jnums(c->force_n, 3, bad), bad);
        add(points, p, bad);
    }
    set(o, "points", points, bad);
    return o;
}

/* A new reference, or NULL when out of memory. */
static json_t *state_json(const struct hs__ctl_state *s)
{
    bool bad = false;
    json_t *o = json_object();
    if (!o)
        return NULL;
    set(o, "tick", json_integer((json_int_t)s->tick), &bad);
    set(o, "time_s", json_real((double)s->tick * (double)s->period_ns * 1e-9), &bad);
    set(o, "bench", jname(hs_bench_config(s->bench)->bench.name), &bad);
    set(o, "links", links_json(s, &bad), &bad);
    set(o, "joints", joints_json(s, &bad), &bad);
    set(o, "sensors", sensors_json(s, &bad), &bad);
    set(o, "scenario", scen_json(scen_shown(s), &bad), &bad);
    /* New members go after the scenario: readers that pin the members before it stay right. */
    set(o, "contacts", contacts_json(s, &bad), &bad);
    json_t *solver = json_object();
    set(solver, "penetration_m", jnum(s->health.penetration_m), &bad);
    set(solver, "joint_error_m", jnum(s->health.joint_error_m), &bad);
    set(solver, "force_jump_n", jnum(s->health.force_jump_n), &bad);
    set(o, "solver", solver, &bad);
    set(o, "can", hs_ctl_can_json(s->can), &bad);
    set(o, "phases_us", phases_json(s, &bad), &bad);
    if (!bad)
        return o;
    json_decref(o);
    return NULL;
}

/* The answer and its newline into buf; -ENOSPC when it does not fit (buf then holds "", as a
 * cut answer is never sent; *need the size that holds it), -ENOMEM when the document could not
 * be built. */
static int format_json(const struct hs__ctl_state *s, char *buf, size_t size, size_t *need)
{
    json_t *o = state_json(s);
    if (!o)
        return -ENOMEM;
    size_t n = json_dumpb(
        o, buf, size, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(STATE_JSON_DIGITS));
    json_decref(o);
    if (n == 0)
        return -ENOMEM;
    *need = n + 2; /* the newline and the terminator too */
    if (n + 2 > size) {
        if (size)
            buf[0] = 0;
        return -ENOSPC;
    }
    buf[n] = '\n';
    buf[n + 1] = 0;
    return (int)n + 1;
}

static int format(const struct hs__ctl_state *s, bool json, char *buf, size_t size, size_t *need)
{
    if (size)
        buf[0] = 0;
    if (json)
        return format_json(s, buf, size, need);
    struct out o = {.buf = buf, .size = size};
    format_text(s, &o);
    *need = o.need + 1;
    if (o.cut && size)
        buf[0] = 0;
    return o.cut ? -ENOSPC : (int)o.len;
}

int hs__ctl_state_read(struct hs__ctl_state *s, int timeout_ms, bool json, char *buf, size_t size,
                       size_t *ret_need)
{
    uint64_t want = atomic_load_explicit(&s->want, memory_order_relaxed) + 1;
    atomic_store_explicit(&s->want, want, memory_order_release);
    for (int waited = 0; atomic_load_explicit(&s->done, memory_order_acquire) != want; waited++) {
        if (waited >= timeout_ms)
            return -ETIMEDOUT;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    size_t need = 0;
    int r = format(s, json, buf, size, &need);
    if (ret_need)
        *ret_need = need;
    return r;
}

int hs__ctl_state_again(const struct hs__ctl_state *s, bool json, char *buf, size_t size)
{
    size_t need;
    return format(s, json, buf, size, &need);
}
