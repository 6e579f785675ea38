/* Replay: the recorded inputs into a bench rebuilt from the recording's config, offline, tick by
 * tick with the recorded now_ns, and the replayed state compared with the recorded one.
 *
 * What is fed, and when:
 *   shm      each recorded slot write, before the tick it happened in (the shm module's inputs
 *            phase wrote it then; nothing else in that tick reads the slot earlier);
 *   CAN      each frame hilsim received (R in the candump log) through the real CAN module on a
 *            socketpair bus, before the tick that took it: each state record counts the frames
 *            the tick took from each bus (received frames are tapped when the tick takes them,
 *            also from a reply thread's ring). Nodes stamp commands with the tick's time
 *            instead of the kernel's, so a node's command timeout can end a tick apart. An
 *            import (no counts) feeds each frame at the first tick whose time has passed it;
 *   safe hold entered before the first tick recorded in it (the loop enters it after a tick's
 *            outputs, once the state was recorded);
 *   warm-up  the runner's warm-up ticks are in the recording and replayed as they ran;
 *   live     each command live control applied (hilsim ctl: an injected step, clear, a
 *            scenario file started or stopped), to a control stage before the tick that
 *            applied it, from the step texts and file copies the socket thread saved. */
#include <errno.h>
#include <linux/can.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hilsim/io_can.h"
#include "hilsim/ctl.h"
#include "hilsim/file_open.h"
#include "hilsim/can_fault.h"
#include "hilsim/log.h"
#include "hilsim/scenario.h"
#include "hilsim/scenario_live.h"
#include "rec_internal.h"

struct feed {
    int peer[HS__REC_MAX_BUSES]; /* the boards' ends of the socketpairs, -1 none */
    uint32_t nbuses;
    const struct hs_rec_frame *frames[HS__REC_MAX_BUSES];
    uint32_t nframes[HS__REC_MAX_BUSES];
    uint32_t next[HS__REC_MAX_BUSES];
    uint64_t fed;
};

static void feed_close(struct feed *f)
{
    for (uint32_t i = 0; i < HS__REC_MAX_BUSES; i++)
        if (f->peer[i] >= 0)
            close(f->peer[i]);
}

static int load_config(const struct hs_recording *rec, const struct hs_replay_opts *o,
                       const struct hs_config **ret, struct hs_diag *d)
{
    if (o->config_path)
        return hs_config_load_sets(o->config_path, o->sets, o->nsets, ret, d);
    char name[4096];
    const char *base = rec->config_base_dir && *rec->config_base_dir ? rec->config_base_dir : NULL;
    /* The config as the recording hilsim resolved it: its defaults, not this build's, and the
     * run's --set overrides already in; the replay's own overrides on top. */
    if (rec->config_resolved_text) {
        snprintf(name, sizeof name, "%s/config-resolved.yaml", rec->dir);
        return hs_config_load_buffer_sets(rec->config_resolved_text, rec->config_resolved_len, name,
                                          base, o->sets, o->nsets, ret, d);
    }
    if (rec->config_text && rec->hilsim_commit && strcmp(rec->hilsim_commit, HS_GIT_COMMIT) != 0)
        hs_log(HS_LOG_WARNING,
               "replay: %s was recorded by hilsim %s, which kept no resolved config: what its "
               "config leaves out takes this build's (%s) defaults, which may differ",
               rec->dir, rec->hilsim_commit, HS_GIT_COMMIT);
    if (!rec->config_text)
        return hs_diag_set(d, -ENOENT, rec->dir, 0, 0,
                           "the recording has no config copy: give one with --config");
    snprintf(name, sizeof name, "%s/config.yaml", rec->dir);
    /* the run's own --set overrides first, then the replay's (a later set of a key wins) */
    uint32_t n = rec->nconfig_sets + o->nsets;
    const char **sets = calloc(n ? n : 1, sizeof *sets);
    if (!sets)
        return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
    for (uint32_t i = 0; i < rec->nconfig_sets; i++)
        sets[i] = rec->config_sets[i];
    for (uint32_t i = 0; i < o->nsets; i++)
        sets[rec->nconfig_sets + i] = o->sets[i];
    int rc =
        hs_config_load_buffer_sets(rec->config_text, rec->config_len, name, base, sets, n, ret, d);
    free(sets);
    return rc;
}

/* The bench with its CAN module on socketpairs (the feed holds the boards' ends). */
static int build(const struct hs_config *cfg, struct hs_bench **ret_b, struct feed *f,
                 struct hs_diag *d)
{
    for (uint32_t i = 0; i < HS__REC_MAX_BUSES; i++)
        f->peer[i] = -1;
    int rc = hs_bench_create(cfg, ret_b, d);
    if (rc < 0)
        return rc;
    /* Whatever clock the run had (wall, lockstep, sync), each replayed tick runs at its
     * recorded now_ns: none of the clock machinery (a lockstep gate, a CAN SYNC holding
     * buffer) has a part in a replay. */
    hs_bench_set_clock_mode(*ret_b, HS_CLOCK_WALL);
    /* The shm module is not attached (the recorded slot writes are), but its joints are
     * claimed as it claims them: a scenario's first_command condition asks for that. */
    for (uint32_t i = 0; i < hs_bench_joint_count(*ret_b); i++)
        if (hs_bench_joint(*ret_b, i)->source == HS_CFG_SOURCE_SHM)
            hs_bench_claim_joint(*ret_b, i);
    if (cfg->can.nbuses == 0)
        return rc;
    if (cfg->can.nbuses > HS__REC_MAX_BUSES)
        return hs_diag_set(d, -EINVAL, cfg->path, 0, 0, "replay: at most %d CAN buses",
                           HS__REC_MAX_BUSES);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .tick_time_stamps = true};
    for (uint32_t i = 0; i < cfg->can.nbuses; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv) < 0)
            return hs_diag_set(d, -errno, NULL, 0, 0, "replay: socketpair: %s", strerror(errno));
        o.socketpair_fd[i] = sv[0];
        f->peer[i] = sv[1];
    }
    f->nbuses = cfg->can.nbuses;
    struct hs_bench_can *can;
    return hs_bench_can_attach(*ret_b, &o, &can, d);
}

static void send_frame(struct feed *f, uint32_t bus, const struct hs_rec_frame *fr)
{
    struct canfd_frame w = {0};
    w.can_id = fr->id | (fr->flags & HS_CAN_FLAG_EXT ? CAN_EFF_FLAG : 0) |
               (fr->flags & HS_CAN_FLAG_RTR ? CAN_RTR_FLAG : 0) |
               (fr->flags & HS_CAN_FLAG_ERR ? CAN_ERR_FLAG : 0);
    w.len = fr->len;
    size_t n = CAN_MTU;
    if (fr->flags & HS_CAN_FLAG_FD) {
        n = CANFD_MTU;
        w.flags = (fr->flags & HS_CAN_FLAG_BRS ? CANFD_BRS : 0) |
                  (fr->flags & HS_CAN_FLAG_ESI ? CANFD_ESI : 0);
    }
    if (!(fr->flags & HS_CAN_FLAG_RTR))
        memcpy(w.data, fr->data, fr->len <= 64 ? fr->len : 64);
    if (send(f->peer[bus], &w, n, MSG_DONTWAIT) == (ssize_t)n)
        f->fed++;
}

static void drain_peers(struct feed *f)
{
    char sink[CANFD_MTU];
    for (uint32_t b = 0; b < f->nbuses; b++)
        while (recv(f->peer[b], sink, sizeof sink, MSG_DONTWAIT) > 0)
            ;
}

/* Frames up to time_us go in (imports, and recordings without frame counts); whatever the
 * bench sent back is read and dropped, so the socketpair never fills. */
static void feed_frames(struct feed *f, int64_t time_us)
{
    drain_peers(f);
    for (uint32_t b = 0; b < f->nbuses; b++)
        while (f->next[b] < f->nframes[b] && f->frames[b][f->next[b]].time_us <= time_us) {
            const struct hs_rec_frame *fr = &f->frames[b][f->next[b]++];
            if (fr->rx)
                send_frame(f, b, fr);
        }
}

/* Exactly the frames the recorded tick took from each bus: the next counts[b] received ones
 * (skip: passed over unsent, the checkpoint tick's). */
static void feed_counted(struct feed *f, const uint32_t *counts, bool skip)
{
    drain_peers(f);
    for (uint32_t b = 0; b < f->nbuses; b++)
        for (uint32_t n = counts[b]; n && f->next[b] < f->nframes[b];) {
            const struct hs_rec_frame *fr = &f->frames[b][f->next[b]++];
            if (fr->rx) {
                if (!skip)
                    send_frame(f, b, fr);
                n--;
            }
        }
}

static void apply_shm(struct hs_bench *b, const struct hs_rec_shm *s)
{
    if (s->joint >= hs_bench_joint_count(b))
        return;
    struct hs_joint_command *c = hs_bench_joint(b, s->joint)->cmd;
    if (s->shm_mode == HS_REC_SHM_STALE) {
        c->rx_time_ns = s->rx_time_ns;
        return;
    }
    *c = (struct hs_joint_command){
        .mode = s->mode,
        .q = s->q,
        .dq = s->dq,
        .kp = s->kp,
        .kd = s->kd,
        .tau_ff = s->tau_ff,
        .current = s->current,
        .velocity = s->velocity,
        .rx_time_ns = s->rx_time_ns,
        .seq = s->seq,
    };
}

/* ---- the scenario, played again ---- */

/* The replayed scenario's events, matched one by one against the recorded ones (in order: the
 * tick thread pushed them as they happened). */
struct scen_watch {
    struct hs_bench_tap tap;
    const struct hs_recording *rec;
    uint32_t next; /* index into rec->events of the next recorded one to look at */
    uint32_t ord;  /* the state index being replayed */
    uint32_t replayed;
    int64_t mismatch_ord;
};

static void watch_slot(void *ctx, uint32_t joint, uint32_t src_mode,
                       const struct hs_joint_command *slot)
{
    (void)ctx, (void)joint, (void)src_mode, (void)slot; /* replay writes the slots itself */
}

static const struct hs_rec_event *next_scenario_event(struct scen_watch *w)
{
    const struct hs_recording *r = w->rec;
    while (w->next < r->nevents && r->events[w->next].kind != HS_REC_EV_SCENARIO)
        w->next++;
    return w->next < r->nevents ? &r->events[w->next++] : NULL;
}

static void watch_event(void *ctx, uint32_t kind, int64_t a, int64_t b, const char *text)
{
    struct scen_watch *w = ctx;
    (void)text;
    if (kind != HS_REC_EV_SCENARIO)
        return;
    w->replayed++;
    const struct hs_rec_event *e = next_scenario_event(w);
    if (w->mismatch_ord < 0 && (!e || e->ord != w->ord || e->a != a || e->b != b))
        w->mismatch_ord = w->ord;
}

static uint32_t count_scenario_events(const struct hs_recording *r)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->nevents; i++)
        n += r->events[i].kind == HS_REC_EV_SCENARIO;
    return n;
}

/* The recorded frames are the ones the nodes saw after the run's CAN faults, so the faults
 * must not act twice: the fault filters come off the replay's buses. */
static void unfilter(struct hs_bench *b)
{
    const struct hs_config *cfg = hs_bench_config(b);
    for (uint32_t i = 0; i < cfg->can.nbuses; i++) {
        struct hs_can_bus *bus = hs_bench_can_bus_find(b, cfg->can.buses[i].interface);
        if (bus)
            hs_can_bus_set_fault_filter(bus, NULL);
    }
}

/* The recording's scenario (or o->scenario_path) bound to the replay's bench after its CAN
 * module, as the run bound it. The recorded frames are the ones the nodes saw after the
 * scenario's CAN faults, so the faults must not act twice: the fault filters come off the
 * replay's buses (the scenario still switches its rules; nothing runs them). */
static int replay_scenario(const struct hs_recording *rec, const struct hs_replay_opts *o,
                           struct hs_bench *b, struct hs_scenario **ret, struct hs_diag *d)
{
    struct hs_scenario_spec *spec = NULL;
    char name[4096];
    snprintf(name, sizeof name, "%s/scenario.yaml", rec->dir);
    const char *base =
        rec->scenario_base_dir && *rec->scenario_base_dir ? rec->scenario_base_dir : NULL;
    int r = o->scenario_path
                ? hs_scenario_parse_file(o->scenario_path, &spec, d)
                : hs_scenario_parse(rec->scenario_text, rec->scenario_len, name, base, &spec, d);
    struct hs_scenario *s = NULL;
    if (r == 0)
        r = hs_scenario_compile(spec, b, &s, d);
    hs_scenario_spec_free(spec);
    if (r < 0)
        return r;
    if ((r = hs_scenario_attach(s, b)) < 0) {
        hs_scenario_destroy(s);
        return hs_diag_set(d, r, name, 0, 0, "replay: cannot attach the scenario");
    }
    unfilter(b);
    *ret = s;
    return 0;
}

/* ---- live control, injected again ---- */

/* The run's live control (src/record/README.md, "Live control"): a control stage on the
 * replay's bench, as the run had, fed each recorded HS_REC_EV_LIVE event before the tick that
 * applied it, so the stage applies it in that tick's commands phase, in the recorded order.
 * The step texts and scenario files come from the recording folder. */
struct live_feed {
    struct hs_ctl_stage *stage; /* the bench's */
    const struct hs_recording *rec;
    uint32_t next; /* index into rec->events */
    uint32_t fed;
};

static uint32_t count_live(const struct hs_recording *r)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->nevents; i++)
        n += r->events[i].kind == HS_REC_EV_LIVE;
    return n;
}

static int live_attach(struct live_feed *lf, struct hs_bench *b, struct hs_diag *d)
{
    int r = hs_ctl_stage_create(b, &lf->stage);
    if (r == 0 && (r = hs_ctl_stage_attach(lf->stage, b)) < 0) {
        hs_ctl_stage_destroy(lf->stage);
        lf->stage = NULL;
    }
    if (r < 0)
        return hs_diag_set(d, r, lf->rec->dir, 0, 0, "replay: no live control stage: %s",
                           strerror(-r));
    unfilter(b); /* the live set put its CAN fault filters on: the frames are recorded after */
    return 0;
}

/* The saved file PREFIX-N.yaml, whole (*ret: malloc'd). */
static int live_file(const struct live_feed *lf, const char *prefix, int64_t n, char *path,
                     size_t psize, char **ret, size_t *ret_len, struct hs_diag *d)
{
    snprintf(path, psize, "%s/%s-%lld.yaml", lf->rec->dir, prefix, (long long)n);
    if (n <= 0)
        return hs_diag_set(d, -ENOENT, lf->rec->dir, 0, 0,
                           "replay: the run injected a %s it could not keep in the recording "
                           "(see its log): it cannot be replayed (--no-live skips live control)",
                           prefix);
    uint8_t *buf;
    size_t len;
    int rc = hs_read_regular(path, HS_OPEN_NOFOLLOW, HS_REC_TEXT_FILE_MAX, &buf, &len);
    if (rc < 0)
        return hs_diag_set(d, rc, path, 0, 0, "replay: cannot open: %s",
                           hs_open_regular_strerror(rc));
    /* a copy of another run's live step would replay what this run never did */
    if ((rc = hs__rec_check_copy_mark(lf->rec, (const char *)buf, len, path, d)) < 0) {
        free(buf);
        return rc;
    }
    *ret = (char *)buf;
    *ret_len = len;
    return 0;
}

static int live_apply(struct live_feed *lf, struct hs_bench *b, const struct hs_rec_event *e,
                      struct hs_diag *d)
{
    char path[4096], *text = NULL;
    size_t len = 0;
    struct hs_ctl_cmd c = {.kind = HS_CTL_CLEAR};
    int r = 0;
    switch (e->b) {
    case HS_REC_LIVE_INJECT:
        if ((r = live_file(lf, "live-step", e->a, path, sizeof path, &text, &len, d)) < 0)
            return r;
        /* the same parser and binding as the socket thread's, in the same order: the same
         * random streams */
        r = hs_scenario_live_prepare(hs_ctl_stage_live(lf->stage), text, len, NULL, &c.slot, d);
        free(text);
        if (r < 0)
            return r;
        c.kind = HS_CTL_INJECT;
        break;
    case HS_REC_LIVE_CLEAR:
        break;
    case HS_REC_LIVE_SCEN_START: {
        if ((r = live_file(lf, "live-scenario", e->a, path, sizeof path, &text, &len, d)) < 0)
            return r;
        struct hs_scenario_spec *spec = NULL;
        struct hs_scenario *scen = NULL;
        r = hs_scenario_parse(text, len, path, NULL, &spec, d);
        free(text);
        if (r == 0)
            r = hs_scenario_compile(spec, b, &scen, d);
        hs_scenario_spec_free(spec);
        if (r == 0 && (r = hs_ctl_stage_start_scenario(lf->stage, scen)) < 0) {
            hs_scenario_destroy(scen);
            return hs_diag_set(d, r, path, 0, 0, "replay: the live scenario cannot start");
        }
        lf->fed += r == 0;
        return r;
    }
    case HS_REC_LIVE_SCEN_STOP:
        c.kind = HS_CTL_SCENARIO_STOP;
        break;
    default:
        return hs_diag_set(d, -EBADMSG, lf->rec->dir, 0, 0,
                           "replay: live event of unknown kind %lld at tick %llu", (long long)e->b,
                           (unsigned long long)e->tick);
    }
    if ((r = hs_ctl_stage_push(lf->stage, &c)) < 0)
        return hs_diag_set(d, r, lf->rec->dir, 0, 0, "replay: live control queue full");
    lf->fed++;
    return 0;
}

/* Before the tick of state ord: what the socket thread would have done by then (free the ended
 * steps, take back an ended scenario), then the live control that tick applied. */
static int live_tick(struct live_feed *lf, struct hs_bench *b, uint64_t ord, struct hs_diag *d)
{
    hs_scenario_live_reap(hs_ctl_stage_live(lf->stage));
    bool stopped;
    hs_scenario_destroy(hs_ctl_stage_take_scenario(lf->stage, false, &stopped));
    const struct hs_recording *r = lf->rec;
    for (; lf->next < r->nevents && r->events[lf->next].ord <= ord; lf->next++) {
        const struct hs_rec_event *e = &r->events[lf->next];
        if (e->kind != HS_REC_EV_LIVE || e->ord < ord)
            continue; /* another kind, or a tick whose state was dropped */
        int rc = live_apply(lf, b, e, d);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- a recording whose first segment was deleted: the checkpoint ---- */

struct sets {
    char **v;
    uint32_t n, cap;
};

static void sets_free(struct sets *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

static int sets_add(struct sets *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sets_add(struct sets *s, const char *fmt, ...)
{
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? 2 * s->cap : 64;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    int r = vasprintf(&s->v[s->n], fmt, ap);
    va_end(ap);
    if (r < 0)
        return -ENOMEM;
    s->n++;
    return 0;
}

/* The user's sets, then the checkpoint: each joint's q and dq as its model's initial state and
 * each free root's pose (%.17g: the doubles read back exactly). */
static int checkpoint_sets(const struct hs_recording *rec, const struct hs_replay_opts *o,
                           struct hs_bench *b, const uint32_t *bodies, uint32_t nbodies,
                           struct sets *ret)
{
    int r = 0;
    for (uint32_t i = 0; r == 0 && i < o->nsets; i++)
        r = sets_add(ret, "%s", o->sets[i]);
    const double *v = rec->values;
    for (uint32_t j = 0; r == 0 && j < rec->njoints; j++) {
        const struct hs_bench_joint *bj = hs_bench_joint(b, j);
        const double *x = v + (size_t)j * HS_REC_JOINT_FIELDS;
        r = sets_add(ret, "models.%u.initial.joints.%s.q=%.17g", bj->body, bj->name, x[0]);
        if (r == 0)
            r = sets_add(ret, "models.%u.initial.joints.%s.dq=%.17g", bj->body, bj->name, x[1]);
    }
    const double *pose = v + (size_t)rec->njoints * HS_REC_JOINT_FIELDS + rec->nsensor_values;
    struct hs_world *w = hs_bench_world(b);
    for (uint32_t i = 0; r == 0 && i < nbodies; i++, pose += 7) {
        if (!hs_world_ode_body(w, bodies[i], 0))
            continue; /* a fixed root: the config places it, the recording agrees */
        double qw = fmax(-1, fmin(1, pose[3])), s = sqrt(fmax(0, 1 - qw * qw));
        double angle = 2 * acos(qw), ax = 0, ay = 0, az = 1;
        if (s > 1e-12)
            ax = pose[4] / s, ay = pose[5] / s, az = pose[6] / s;
        else
            angle = 0;
        r = sets_add(ret, "models.%u.pose.position=[%.17g, %.17g, %.17g]", bodies[i], pose[0],
                     pose[1], pose[2]);
        if (r == 0)
            r = sets_add(ret, "models.%u.pose.rotation=[%.17g, %.17g, %.17g, %.17g]", bodies[i], ax,
                         ay, az, angle);
        if (r == 0) /* where it was, not dropped onto the scenery again */
            r = sets_add(ret, "models.%u.rest_on_static=false", bodies[i]);
    }
    return r;
}

/* The bench rebuilt at the first kept state: built once to learn which model each joint is
 * in, then again with the checkpoint's sets. */
static int build_at_checkpoint(const struct hs_recording *rec, const struct hs_replay_opts *o,
                               const struct hs_config **cfg, struct hs_bench **b, struct feed *f,
                               uint32_t *bodies, uint32_t nbodies, struct hs_diag *d)
{
    struct sets s = {0};
    int rc = checkpoint_sets(rec, o, *b, bodies, nbodies, &s);
    hs_bench_destroy(*b);
    *b = NULL;
    feed_close(f);
    hs_config_free(*cfg);
    *cfg = NULL;
    if (rc < 0) {
        sets_free(&s);
        return hs_diag_set(d, rc, rec->dir, 0, 0, "replay: out of memory");
    }
    struct hs_replay_opts co = *o;
    co.sets = (const char *const *)s.v;
    co.nsets = s.n;
    rc = load_config(rec, &co, cfg, d);
    if (rc == 0)
        rc = build(*cfg, b, f, d);
    sets_free(&s);
    return rc;
}

static bool differs(double a, double b, double tol)
{
    if (tol <= 0)
        return memcmp(&a, &b, sizeof a) != 0;
    if (isnan(a) || isnan(b))
        return isnan(a) != isnan(b);
    return fabs(a - b) > tol;
}

static void to_numbers(double *v, uint32_t njoints)
{
    for (uint32_t j = 0; j < njoints; j++) {
        uint64_t c;
        memcpy(&c, &v[j * HS_REC_JOINT_FIELDS + 6], 8);
        v[j * HS_REC_JOINT_FIELDS + 6] = (double)c;
    }
}

static int check_layout(const struct hs_recording *rec, struct hs_bench *b, uint32_t nbodies,
                        struct hs_diag *d)
{
    if (hs_bench_joint_count(b) != rec->njoints || hs_bench_sensor_count(b) != rec->nsensors ||
        nbodies != rec->nbodies)
        return hs_diag_set(d, -EINVAL, rec->dir, 0, 0,
                           "replay: the config builds %u joints, %u sensors, %u robots; the "
                           "recording has %u, %u, %u",
                           hs_bench_joint_count(b), hs_bench_sensor_count(b), nbodies, rec->njoints,
                           rec->nsensors, rec->nbodies);
    for (uint32_t i = 0; i < rec->njoints; i++)
        if (strcmp(hs_bench_joint(b, i)->name, rec->joint_names[i]))
            return hs_diag_set(d, -EINVAL, rec->dir, 0, 0,
                               "replay: joint %u is %s in the config, %s in the recording", i,
                               hs_bench_joint(b, i)->name, rec->joint_names[i]);
    /* The replay's states are compared value by value: each sensor must hold what its kind
     * declares now. A version 1 recording held six per sensor whatever the kind. */
    for (uint32_t i = 0; i < rec->nsensors; i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, i);
        if (!rec->sensor_nvalues || bs->layout.nvalues != rec->sensor_nvalues[i])
            return hs_diag_set(d, -EINVAL, rec->dir, 0, 0,
                               "replay: sensor %s has %u values on the bench, %u in the recording "
                               "(format version %u%s)",
                               bs->name, bs->layout.nvalues,
                               rec->sensor_nvalues ? rec->sensor_nvalues[i] : 0,
                               rec->format_version,
                               rec->format_version == 1
                                   ? ": six per sensor whatever the kind; record it again to replay"
                                   : "");
    }
    return 0;
}

static uint32_t robot_bodies(const struct hs_config *cfg, uint32_t *bodies)
{
    uint32_t n = 0;
    for (uint32_t m = 0; m < cfg->nmodels; m++)
        if (!cfg->models[m].is_static)
            bodies[n++] = m;
    return n;
}

int hs_replay_run(const struct hs_recording *rec, const struct hs_replay_opts *o,
                  struct hs_replay_result *ret, struct hs_diag *d)
{
    memset(ret, 0, sizeof *ret);
    const struct hs_config *cfg = NULL;
    struct hs_bench *b = NULL;
    struct feed f = {0};
    uint32_t bodies[HS_CFG_MAX_MODELS];
    int rc = load_config(rec, o, &cfg, d);
    if (rc < 0)
        return rc;
    if ((rc = build(cfg, &b, &f, d)) < 0)
        goto out;
    uint32_t nbodies = robot_bodies(cfg, bodies);
    if ((rc = check_layout(rec, b, nbodies, d)) < 0)
        goto out;
    /* the manifest's period against the config the recording holds (a what-if --set may
     * change it on purpose: then the config's own rt.period_ns differs too, and wins) */
    if (rec->period_ns && !o->nsets && rec->period_ns != hs_bench_tick_period_ns(b)) {
        rc = hs_diag_set(d, -EBADMSG, rec->dir, 0, 0,
                         "manifest.json period_ns %lld differs from the recorded config's "
                         "rt.period_ns %lld: the manifest is not this recording's",
                         (long long)rec->period_ns, (long long)hs_bench_tick_period_ns(b));
        goto out;
    }
    bool checkpoint = rec->first_segment > 0 && rec->nstates > 0;
    if (checkpoint && (rc = build_at_checkpoint(rec, o, &cfg, &b, &f, bodies, nbodies, d)) < 0)
        goto out;
    ret->from_checkpoint = checkpoint;
    struct hs_scenario *scen = NULL;
    struct scen_watch watch = {.rec = rec, .mismatch_ord = -1};
    ret->scenario_mismatch_ord = -1;
    if (!checkpoint && !o->no_scenario && (o->scenario_path || rec->scenario_text)) {
        if ((rc = replay_scenario(rec, o, b, &scen, d)) < 0)
            goto out;
        watch.tap =
            (struct hs_bench_tap){.ctx = &watch, .slot_write = watch_slot, .event = watch_event};
        hs_bench_set_tap(b, &watch.tap);
        ret->scenario = true;
        ret->scenario_events_recorded = count_scenario_events(rec);
    }
    struct live_feed live = {.rec = rec};
    ret->live_recorded = count_live(rec);
    if (!checkpoint && !o->no_live && ret->live_recorded && (rc = live_attach(&live, b, d)) < 0)
        goto out;
    for (uint32_t i = 0; i < f.nbuses && i < rec->nbuses; i++) {
        f.frames[i] = rec->frames[i];
        f.nframes[i] = rec->nframes[i];
    }
    uint32_t stride = rec->state_stride;
    /* no_values: one row, the tick's, compared and overwritten by the next */
    ret->values = calloc(
        (size_t)(rec->nstates && !o->no_values ? rec->nstates : 1) * (stride ? stride : 1), 8);
    if (!ret->values) {
        rc = hs_diag_set(d, -ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    uint32_t si = 0;
    uint64_t base = rec->first_ord; /* items' ord count from the run's start */
    if (checkpoint) { /* the first kept state is where the replay starts, not a tick to run */
        memcpy(ret->values, rec->values, 8 * (size_t)stride);
        ret->ticks = 1;
        while (si < rec->nshm && rec->shm[si].ord <= base)
            si++;
        if (rec->count_buses >= f.nbuses && rec->rx_counts)
            feed_counted(&f, rec->rx_counts, true);
    }
    /* An offline run read its sensors once before its first tick: an accelerometer's
     * difference and a noise stream start from there. */
    if (!checkpoint && rec->clock_mode && !strcmp(rec->clock_mode, HS_REC_CLOCK_OFFLINE))
        hs_bench_sensors(b, 0, 0);
    for (uint32_t k = checkpoint ? 1 : 0; k < rec->nstates; k++) {
        if (o->until_s > 0 && (double)(rec->now_ns[k] - rec->now_ns[0]) > o->until_s * 1e9)
            break;
        if (rec->count_buses >= f.nbuses && rec->rx_counts)
            feed_counted(&f, rec->rx_counts + (size_t)k * rec->count_buses, false);
        else
            feed_frames(&f, rec->real_ns[k] / 1000);
        while (si < rec->nshm && rec->shm[si].ord < base + k)
            si++; /* recorded for a tick whose state was dropped: it cannot be placed */
        for (; si < rec->nshm && rec->shm[si].ord == base + k; si++, ret->commands_fed++)
            apply_shm(b, &rec->shm[si]);
        if (live.stage && (rc = live_tick(&live, b, base + k, d)) < 0)
            goto out;
        watch.ord = k;
        hs_bench_set_warming_up(b, rec->flags[k] & HS_REC_STATE_WARMUP);
        if ((rec->flags[k] & HS_REC_STATE_SAFE_HOLD) && !hs_bench_in_safe_hold(b))
            hs_bench_enter_safe_hold(b);
        int tr = hs_bench_tick(b, rec->now_ns[k], rec->ticks[k]);
        double *v = ret->values + (o->no_values ? 0 : (size_t)k * stride);
        hs__rec_fill_state(b, bodies, nbodies, v);
        to_numbers(v, rec->njoints);
        ret->ticks = k + 1;
        const double *rv = rec->values + (size_t)k * stride;
        for (uint32_t j = 0; j < rec->njoints; j++) {
            double e = fabs(v[j * HS_REC_JOINT_FIELDS] - rv[j * HS_REC_JOINT_FIELDS]);
            if (e > ret->max_abs_q_err || isnan(e))
                ret->max_abs_q_err = isnan(e) ? INFINITY : e;
        }
        if (!ret->diverged)
            for (uint32_t c = 0; c < stride; c++)
                if (differs(rv[c], v[c], o->tolerance)) {
                    ret->diverged = true;
                    ret->first_ord = k;
                    ret->first_tick = rec->ticks[k];
                    ret->first_signal = (int)c;
                    ret->recorded = rv[c];
                    ret->replayed = v[c];
                    break;
                }
        if (tr < 0 && hs_bench_fault(b)) {
            ret->fault_rc = tr;
            break;
        }
        if (o->after_tick && !o->after_tick(o->after_tick_ctx, k, b, ret->diverged))
            break;
    }
    ret->frames_fed = f.fed;
    ret->live_fed = live.fed;
    if (scen) {
        /* a recorded event the replay never posted, within the ticks replayed */
        const struct hs_rec_event *e = next_scenario_event(&watch);
        if (watch.mismatch_ord < 0 && e && e->ord < ret->ticks)
            watch.mismatch_ord = (int64_t)e->ord;
        ret->scenario_events_replayed = watch.replayed;
        ret->scenario_mismatch_ord = watch.mismatch_ord;
        hs_scenario_finish(scen);
        ret->scenario_expects = hs_scenario_expect_count(scen);
        for (uint32_t i = 0; i < ret->scenario_expects; i++) {
            struct hs_scenario_result sr;
            hs_scenario_result(scen, i, &sr);
            ret->scenario_failed += sr.status != HS_SCENARIO_PASS;
        }
    }
    rc = 0;
out:
    hs_bench_destroy(b);
    feed_close(&f);
    hs_config_free(cfg);
    if (rc < 0 || o->no_values) {
        free(ret->values);
        ret->values = NULL;
    }
    return rc;
}

/* ---- import ---- */

static char **copy_names(uint32_t n, const char *(*get)(struct hs_bench *, uint32_t),
                         struct hs_bench *b)
{
    char **v = calloc(n ? n : 1, sizeof *v);
    for (uint32_t i = 0; v && i < n; i++)
        v[i] = strdup(get(b, i));
    return v;
}

static const char *joint_name(struct hs_bench *b, uint32_t i)
{
    return hs_bench_joint(b, i)->name;
}

static const char *sensor_name(struct hs_bench *b, uint32_t i)
{
    return hs_bench_sensor(b, i)->name;
}

int hs_replay_import(const char *config_path, const char *log_path, double extra_s,
                     struct hs_recording **ret_rec, struct hs_diag *d)
{
    const struct hs_config *cfg = NULL;
    struct hs_bench *b = NULL;
    struct feed f = {0};
    struct hs_rec_frame *frames[HS__REC_MAX_BUSES] = {0};
    struct hs_recording *r = calloc(1, sizeof *r);
    uint32_t bodies[HS_CFG_MAX_MODELS];
    uint8_t *text = NULL;
    int rc = r ? hs_config_load(config_path, &cfg, d) : -ENOMEM;
    if (rc < 0)
        goto out;
    if ((rc = build(cfg, &b, &f, d)) < 0)
        goto out;
    if (cfg->can.nbuses == 0) {
        rc = hs_diag_set(d, -EINVAL, config_path, 0, 0, "import: the config has no CAN bus");
        goto out;
    }
    /* a candump log from elsewhere: any regular file (a link too), up to 1 GiB */
    size_t len;
    rc = hs_read_regular(log_path, 0, (size_t)1 << 30, &text, &len);
    if (rc < 0) {
        rc = hs_diag_set(d, rc, log_path, 0, 0, "cannot open: %s%s", hs_open_regular_strerror(rc),
                         rc == -EFBIG ? " (more than 1 GiB)" : "");
        goto out;
    }
    /* One bus: every frame of the log, whatever interface it names; several: by interface. */
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (uint32_t i = 0; i < cfg->can.nbuses; i++) {
        const char *iface = cfg->can.nbuses == 1 ? NULL : cfg->can.buses[i].interface;
        if ((rc = hs_rec_parse_candump((const char *)text, len, log_path, iface, &frames[i],
                                       &f.nframes[i], d)) < 0)
            goto out;
        f.frames[i] = frames[i];
        for (uint32_t k = 0; k < f.nframes[i]; k++) {
            frames[i][k].rx = true; /* open loop: every frame of the log is offered to the nodes */
            t0 = frames[i][k].time_us < t0 ? frames[i][k].time_us : t0;
            t1 = frames[i][k].time_us > t1 ? frames[i][k].time_us : t1;
        }
    }
    if (t0 == INT64_MAX) {
        rc = hs_diag_set(d, -EINVAL, log_path, 0, 0, "import: no frame for the config's buses");
        goto out;
    }
    int64_t period = hs_bench_tick_period_ns(b);
    uint64_t nticks =
        (uint64_t)((t1 - t0) * 1000 / period) + 1 + (uint64_t)(extra_s * 1e9 / period);
    if (nticks > 100000000) {
        rc = hs_diag_set(d, -E2BIG, log_path, 0, 0, "import: the log spans too long");
        goto out;
    }
    uint32_t nbodies = robot_bodies(cfg, bodies);
    r->njoints = hs_bench_joint_count(b);
    r->nsensors = hs_bench_sensor_count(b);
    r->nbodies = nbodies;
    r->format_version = HS__REC_VERSION;
    r->joint_names = copy_names(r->njoints, joint_name, b);
    r->sensor_names = copy_names(r->nsensors, sensor_name, b);
    r->sensor_nvalues = calloc(r->nsensors ? r->nsensors : 1, sizeof *r->sensor_nvalues);
    for (uint32_t i = 0; r->sensor_nvalues && i < r->nsensors; i++)
        r->nsensor_values += r->sensor_nvalues[i] = hs_bench_sensor(b, i)->layout.nvalues;
    r->sensor_fields = calloc(r->nsensor_values ? r->nsensor_values : 1, sizeof *r->sensor_fields);
    for (uint32_t i = 0, k = 0; r->sensor_fields && i < r->nsensors; i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, i);
        for (uint32_t j = 0; j < bs->layout.nvalues; j++, k++) {
            char name[HS_NAME_MAX];
            hs_sensor_value_name(&hs_bench_model(b, bs->body)->sensors[bs->model_sensor], j, name,
                                 sizeof name);
            r->sensor_fields[k] = strdup(name);
        }
    }
    r->state_stride = r->njoints * HS_REC_JOINT_FIELDS + r->nsensor_values + nbodies * 7;
    r->body_names = calloc(nbodies ? nbodies : 1, sizeof *r->body_names);
    for (uint32_t i = 0; r->body_names && i < nbodies; i++)
        r->body_names[i] = strdup(cfg->models[bodies[i]].name);
    r->ticks = calloc(nticks, 8);
    r->now_ns = calloc(nticks, 8);
    r->real_ns = calloc(nticks, 8);
    r->flags = calloc(nticks, 4);
    r->values = calloc(nticks * (r->state_stride ? r->state_stride : 1), 8);
    r->dir = strdup(log_path);
    if (!r->joint_names || !r->sensor_names || !r->sensor_nvalues || !r->sensor_fields ||
        !r->body_names || !r->ticks || !r->now_ns || !r->real_ns || !r->flags || !r->values ||
        !r->dir) {
        rc = hs_diag_set(d, -ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    for (uint64_t k = 0; k < nticks; k++) {
        int64_t now = (int64_t)(k + 1) * period;
        int64_t t_us = t0 + (int64_t)k * period / 1000;
        feed_frames(&f, t_us);
        int tr = hs_bench_tick(b, now, k);
        r->ticks[k] = k;
        r->now_ns[k] = now;
        r->real_ns[k] = t_us * 1000;
        double *v = r->values + k * r->state_stride;
        hs__rec_fill_state(b, bodies, nbodies, v);
        to_numbers(v, r->njoints);
        r->nstates = (uint32_t)(k + 1);
        if (tr < 0 && hs_bench_fault(b)) {
            char why[512];
            hs_bench_fault_format(b, why, sizeof why);
            rc = hs_diag_set(d, tr, log_path, 0, 0, "import: plant fault: %s", why);
            goto out;
        }
    }
    rc = 0;
out:
    hs_bench_destroy(b);
    feed_close(&f);
    hs_config_free(cfg);
    free(text);
    for (uint32_t i = 0; i < HS__REC_MAX_BUSES; i++)
        free(frames[i]);
    if (rc < 0) {
        hs_recording_free(r);
        return rc;
    }
    *ret_rec = r;
    return 0;
}
