/* A recording keeps the plant's joints, sensors and root poses, not its contact points nor the
 * solver's health: the page gets them by replaying the recording (hs_replay_run rebuilds the
 * bench and feeds the recorded inputs; a replay is bit-exact), here on a thread of its own so the
 * page opens at once and the contacts appear as the replay gets there (a biped replays at
 * several times real time). Only states the replay reproduced exactly are shown: from the first
 * that differs (a recording that began at a checkpoint, a model changed since) there is nothing,
 * rather than contacts of another run.
 *
 * One sample per 1/60 s of recorded time (what a display shows), its points in chunks that never
 * move: the replay's thread appends and publishes the count with release order, the server's
 * thread reads up to the count it acquires, so no lock is taken. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/view.h"
#include "hilsim/world.h"
#include "view_rec_contacts.h"

#define SAMPLE_NS (1000000000 / 60)
#define CHUNK_POINTS 16384

struct sample {
    uint32_t ord, chunk, off, n, dropped;
    double health[3];
};

struct hs__view_rc {
    const struct hs_recording *rec;
    pthread_t thread;
    uint32_t max_samples, max_chunks;
    struct sample *samples;            /* max_samples */
    struct hs__view_rc_point **chunks; /* max_chunks, each CHUNK_POINTS */
    uint32_t chunk, off;               /* replay thread: where the next point goes */
    int64_t next_ns;                   /* replay thread: the next sample's recorded time */
    _Atomic uint32_t nsamples;         /* published */
    _Atomic uint32_t replayed;
    _Atomic int64_t diverged_ord;
    _Atomic int rc;
    _Atomic bool done, stop;
};

static bool on_tick(void *ctx, uint32_t ord, struct hs_bench *b, bool diverged)
{
    struct hs__view_rc *rc = ctx;
    atomic_store_explicit(&rc->replayed, ord + 1, memory_order_relaxed);
    if (diverged) {
        int64_t none = -1;
        atomic_compare_exchange_strong(&rc->diverged_ord, &none, (int64_t)ord);
        return false; /* nothing after it is shown: no use going on */
    }
    if (atomic_load_explicit(&rc->stop, memory_order_relaxed))
        return false;
    const struct hs_recording *r = rc->rec;
    uint32_t k = atomic_load_explicit(&rc->nsamples, memory_order_relaxed);
    if (r->now_ns[ord] < rc->next_ns || k >= rc->max_samples)
        return true;
    rc->next_ns = r->now_ns[ord] + SAMPLE_NS;
    const struct hs_world *w = hs_bench_world(b);
    struct hs_world_contact c[HS_VIEW_CONTACTS_MAX];
    uint32_t n = hs_world_contacts(w, c, HS_VIEW_CONTACTS_MAX);
    if (rc->off + n > CHUNK_POINTS) { /* the next chunk: a sample's points stay together */
        rc->chunk++;
        rc->off = 0;
    }
    if (rc->chunk >= rc->max_chunks)
        return false;
    if (!rc->chunks[rc->chunk] &&
        !(rc->chunks[rc->chunk] = malloc(CHUNK_POINTS * sizeof(struct hs__view_rc_point)))) {
        atomic_store(&rc->rc, -ENOMEM);
        return false;
    }
    struct hs__view_rc_point *pt = rc->chunks[rc->chunk] + rc->off;
    for (uint32_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            pt[i].p[a] = (float)c[i].position_m[a];
            pt[i].f[a] = (float)c[i].force_n[a];
        }
    struct hs_world_health_sample h;
    hs_world_health_last(w, &h);
    rc->samples[k] = (struct sample){.ord = ord,
                                     .chunk = rc->chunk,
                                     .off = rc->off,
                                     .n = n,
                                     .dropped = hs_world_contact_count(w) - n,
                                     .health = {h.penetration_m, h.joint_error_m, h.force_jump_n}};
    rc->off += n;
    atomic_store_explicit(&rc->nsamples, k + 1, memory_order_release);
    return true;
}

static void *run(void *arg)
{
    struct hs__view_rc *rc = arg;
    struct hs_replay_opts o = {.after_tick = on_tick, .after_tick_ctx = rc, .no_values = true};
    struct hs_replay_result res;
    struct hs_diag d = {0};
    int r = hs_replay_run(rc->rec, &o, &res, &d);
    if (r < 0) {
        char msg[400];
        hs_diag_format(&d, msg, sizeof msg);
        fprintf(stderr, "hilsim view: no contacts for the recording: its replay failed: %s\n", msg);
        atomic_store(&rc->rc, r);
    } else if (res.diverged) {
        fprintf(stderr,
                "hilsim view: contacts shown up to tick %llu only: the replay differs from the "
                "recording from there on\n",
                (unsigned long long)res.first_tick);
    }
    atomic_store_explicit(&rc->done, true, memory_order_release);
    return NULL;
}

int hs__view_rc_start(const struct hs_recording *rec, struct hs__view_rc **ret)
{
    struct hs__view_rc *rc = calloc(1, sizeof *rc);
    if (!rc)
        return -ENOMEM;
    rc->rec = rec;
    int64_t span = rec->nstates ? rec->now_ns[rec->nstates - 1] - rec->now_ns[0] : 0;
    uint64_t by_time = (uint64_t)(span / SAMPLE_NS) + 2;
    rc->max_samples = by_time < rec->nstates + 1u ? (uint32_t)by_time : rec->nstates + 1u;
    /* every sample's points in one chunk: a chunk ends unfilled at most once per sample */
    uint64_t chunks = (uint64_t)rc->max_samples * HS_VIEW_CONTACTS_MAX / CHUNK_POINTS + 2;
    rc->max_chunks = chunks < rc->max_samples + 2u ? (uint32_t)chunks : rc->max_samples + 2u;
    rc->samples = calloc(rc->max_samples, sizeof *rc->samples);
    rc->chunks = calloc(rc->max_chunks, sizeof *rc->chunks);
    atomic_init(&rc->diverged_ord, -1);
    rc->next_ns = INT64_MIN;
    int r = rc->samples && rc->chunks ? -pthread_create(&rc->thread, NULL, run, rc) : -ENOMEM;
    if (r < 0) {
        free(rc->samples);
        free(rc->chunks);
        free(rc);
        return r;
    }
    *ret = rc;
    return 0;
}

bool hs__view_rc_at(struct hs__view_rc *rc, uint32_t ord, struct hs__view_rc_sample *ret)
{
    uint32_t n = rc ? atomic_load_explicit(&rc->nsamples, memory_order_acquire) : 0;
    if (!n || rc->samples[0].ord > ord)
        return false;
    /* the last sample taken at or before ord; past the last one only while it is the newest
     * state the replay reproduced (the replay may not have got further yet) */
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (rc->samples[mid].ord <= ord)
            lo = mid;
        else
            hi = mid - 1;
    }
    const struct sample *s = &rc->samples[lo];
    if (lo == n - 1 && ord >= atomic_load_explicit(&rc->replayed, memory_order_relaxed))
        return false;
    int64_t div = atomic_load_explicit(&rc->diverged_ord, memory_order_relaxed);
    if (div >= 0 && ord >= (uint64_t)div)
        return false;
    *ret = (struct hs__view_rc_sample){.points = rc->chunks[s->chunk] + s->off,
                                       .n = s->n,
                                       .dropped = s->dropped,
                                       .health = {s->health[0], s->health[1], s->health[2]},
                                       .ord = s->ord};
    return true;
}

void hs__view_rc_progress(struct hs__view_rc *rc, struct hs__view_rc_progress *ret)
{
    *ret = (struct hs__view_rc_progress){.states = rc ? rc->rec->nstates : 0, .diverged_ord = -1};
    if (!rc)
        return;
    ret->done = atomic_load_explicit(&rc->done, memory_order_acquire);
    ret->replayed = atomic_load_explicit(&rc->replayed, memory_order_relaxed);
    ret->diverged_ord = atomic_load_explicit(&rc->diverged_ord, memory_order_relaxed);
    ret->rc = atomic_load_explicit(&rc->rc, memory_order_relaxed);
}

void hs__view_rc_stop(struct hs__view_rc *rc)
{
    if (!rc)
        return;
    atomic_store(&rc->stop, true);
    pthread_join(rc->thread, NULL);
    for (uint32_t i = 0; i < rc->max_chunks; i++)
        free(rc->chunks[i]);
    free(rc->chunks);
    free(rc->samples);
    free(rc);
}
