/* The recorder's tick side: its bench I/O module (state per tick), the CAN and bench taps that
 * push frames, shm slot writes and events into the rings, and the lifecycle around the writer
 * thread (rec_writer.c). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <zstd.h>

#include "hilsim/can.h"
#include "hilsim/io_can.h"
#include "rec_internal.h"
#include "hilsim/rt/rt_clock.h"
#include "hilsim/pose.h"

#define DEFAULT_ITEMS 65536
#define DEFAULT_STATES 4096

/* ---- tick side ---- */

void hs__rec_fill_state(const struct hs_bench *b, const uint32_t *bodies, uint32_t nbodies,
                        double *v)
{
    struct hs_bench *mb = (struct hs_bench *)b; /* hs_bench_world is not const; reads only */
    for (uint32_t i = 0, n = hs_bench_joint_count(b); i < n; i++, v += HS_REC_JOINT_FIELDS) {
        const struct hs_joint_reading *r = hs_bench_joint_reading(b, i);
        v[0] = r->q, v[1] = r->dq, v[2] = r->torque, v[3] = r->current;
        v[4] = r->encoder_position, v[5] = r->encoder_velocity;
        memcpy(&v[6], &r->encoder_count, sizeof r->encoder_count);
    }
    for (uint32_t i = 0, n = hs_bench_sensor_count(b); i < n; i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, i);
        if (bs->layout.nvalues)
            memcpy(v, bs->values, bs->layout.nvalues * sizeof *v);
        v += bs->layout.nvalues;
    }
    for (uint32_t i = 0; i < nbodies; i++, v += 7) {
        struct hs_pose pose;
        hs_world_link_pose(hs_bench_world(mb), bodies[i], 0, &pose);
        v[0] = pose.p[0], v[1] = pose.p[1], v[2] = pose.p[2];
        hs_rot_to_quat(pose.R, &v[3]);
    }
}

static int rec_inputs(void *ctx, struct hs_bench *b, int64_t now_ns)
{
    (void)b, (void)now_ns;
    struct hs_recorder *rec = ctx;
    /* Last of the inputs phase: every frame this tick consumed arrived before this instant,
     * which is how a replay maps the candump logs' frames to ticks. */
    rec->inputs_real_ns = hs_rt_realtime_ns();
    return 0;
}

static int rec_outputs(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    struct hs_recorder *rec = ctx;
    uint8_t *p = hs__rec_states_reserve(&rec->states);
    if (p) {
        struct hs__rec_state_prefix pre = {
            .tick = tick,
            .now_ns = now_ns,
            .real_ns = rec->inputs_real_ns,
            .flags = (hs_bench_warming_up(b) ? HS_REC_STATE_WARMUP : 0) |
                     (hs_bench_in_safe_hold(b) ? HS_REC_STATE_SAFE_HOLD : 0) |
                     (hs_bench_fault(b) ? HS_REC_STATE_FAULT : 0),
        };
        memcpy(p, &pre, sizeof pre);
        hs__rec_fill_state(b, rec->bodies, rec->nbodies, (double *)(p + sizeof pre));
        uint32_t stride =
            rec->njoints * HS_REC_JOINT_FIELDS + rec->nsensor_values + rec->nbodies * 7;
        memcpy(p + sizeof pre + 8 * (size_t)stride, rec->rx_count, 4 * (size_t)rec->nbuses);
        hs__rec_states_commit(&rec->states);
    }
    memset(rec->rx_count, 0, sizeof rec->rx_count);
    atomic_store_explicit(&rec->ord, atomic_load_explicit(&rec->ord, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return 0;
}

static void rec_module_destroy(void *ctx)
{
    struct hs_recorder *rec = ctx;
    rec->attached = false; /* the recorder itself is its creator's */
}

static const struct hs_bench_io_ops rec_ops = {
    .name = "record",
    .inputs = rec_inputs,
    .outputs = rec_outputs,
    .destroy = rec_module_destroy,
};

static void copy_text(char *dst, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i < HS_REC_TEXT_MAX - 1; i++)
        dst[i] = src[i];
    for (; i < HS_REC_TEXT_MAX; i++)
        dst[i] = 0;
}

void hs_rec_event(struct hs_recorder *rec, enum hs_rec_event_kind kind, uint64_t tick, int64_t a,
                  int64_t b, const char *text)
{
    struct hs__rec_item it = {
        .type = HS__REC_ITEM_EVENT,
        .ord = atomic_load_explicit(&rec->ord, memory_order_relaxed),
        .real_ns = hs_rt_realtime_ns(),
    };
    it.u.ev.kind = (uint32_t)kind;
    it.u.ev.tick = tick;
    it.u.ev.a = a;
    it.u.ev.b = b;
    copy_text(it.u.ev.text, text);
    hs__rec_items_push(&rec->items, &it);
}

static void tap_slot_write(void *ctx, uint32_t joint, uint32_t src_mode,
                           const struct hs_joint_command *c)
{
    struct hs_recorder *rec = ctx;
    struct hs__rec_item it = {
        .type = HS__REC_ITEM_SHM,
        .ord = atomic_load_explicit(&rec->ord, memory_order_relaxed),
        .real_ns = hs_rt_realtime_ns(),
    };
    it.u.shm.joint = joint;
    it.u.shm.shm_mode = src_mode;
    it.u.shm.mode = c->mode;
    it.u.shm.v[0] = c->q, it.u.shm.v[1] = c->dq, it.u.shm.v[2] = c->kp, it.u.shm.v[3] = c->kd;
    it.u.shm.v[4] = c->tau_ff, it.u.shm.v[5] = c->current, it.u.shm.v[6] = c->velocity;
    it.u.shm.rx_time_ns = c->rx_time_ns;
    it.u.shm.seq = c->seq;
    hs__rec_items_push(&rec->items, &it);
}

static void tap_event(void *ctx, uint32_t kind, int64_t a, int64_t b, const char *text)
{
    struct hs_recorder *rec = ctx;
    hs_rec_event(rec, (enum hs_rec_event_kind)kind, atomic_load(&rec->ord), a, b, text);
}

/* ---- CAN tap ---- */

static void *can_tap_attach(void *ctx, const struct hs_can_config *cfg)
{
    struct hs_recorder *rec = ctx;
    for (uint32_t i = 0; i < rec->cfg->can.nbuses && i < HS__REC_MAX_BUSES; i++)
        if (!rec->bus_tapped[i] && !strcmp(rec->cfg->can.buses[i].interface, cfg->iface)) {
            rec->bus_tapped[i] = true;
            rec->bus_taps[i] = (struct hs__rec_bus_tap){.rec = rec, .bus = (uint16_t)i};
            return &rec->bus_taps[i];
        }
    return NULL;
}

static void can_tap_frames(void *bus_ctx, bool tx, const struct hs_can_frame *frames, unsigned n)
{
    struct hs__rec_bus_tap *t = bus_ctx;
    struct hs_recorder *rec = t->rec;
    if (!tx) /* received frames are tapped on the tick that takes them (hilsim/can.h) */
        rec->rx_count[t->bus] += n;
    uint64_t ord = atomic_load_explicit(&rec->ord, memory_order_relaxed);
    int64_t now = hs_rt_realtime_ns();
    for (unsigned i = 0; i < n; i++) {
        const struct hs_can_frame *f = &frames[i];
        struct hs__rec_item it = {
            .type = HS__REC_ITEM_FRAME,
            .tx = tx,
            .bus = t->bus,
            .ord = ord,
            .real_ns = !tx && f->rx_time_ns > 0 ? f->rx_time_ns : now,
        };
        it.u.fr.id = f->id;
        it.u.fr.flags = f->flags;
        it.u.fr.len = f->len;
        memcpy(it.u.fr.data, f->data, f->len <= 64 ? f->len : 64);
        hs__rec_items_push(&rec->items, &it);
    }
}

static const struct hs_can_tap_ops can_tap = {.attach = can_tap_attach, .frames = can_tap_frames};

void hs_rec_can_tap_install(struct hs_recorder *rec)
{
    hs_bench_can_set_tap(rec->bench, &can_tap, rec);
}

void hs_rec_can_tap_remove(struct hs_recorder *rec)
{
    hs_bench_can_set_tap(rec->bench, NULL, NULL);
}

int hs_rec_attach(struct hs_recorder *rec, struct hs_bench *bench)
{
    if (bench != rec->bench)
        return -EINVAL;
    int r = hs_bench_add_io(bench, &rec_ops, rec);
    if (r < 0)
        return r;
    rec->attached = true;
    hs_bench_set_tap(bench, &rec->bench_tap);
    return 0;
}

/* ---- lifecycle ---- */

static int make_dir(const char *dir, struct hs_diag *d)
{
    if (mkdir(dir, 0755) == 0)
        return 0;
    int e = errno;
    if (e != EEXIST)
        return hs_diag_set(d, -e, dir, 0, 0, "record: cannot create the folder: %s", strerror(e));
    DIR *dp = opendir(dir);
    if (!dp)
        return hs_diag_set(d, -errno, dir, 0, 0, "record: not a folder hilsim can open: %s",
                           strerror(errno));
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(dp)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            rc = hs_diag_set(d, -EEXIST, dir, 0, 0,
                             "record: the folder is not empty (a recording is never overwritten)");
            break;
        }
    closedir(dp);
    return rc;
}

/* zstd on the writer thread: one context, its parameters set once, and a buffer for the
 * largest block any file gathers. */
static int init_compression(struct hs_recorder *rec, struct hs_diag *d)
{
    if (rec->o.no_compression)
        return 0;
    size_t raw = rec->state_size > HS__REC_BLOCK_TARGET ? rec->state_size : HS__REC_BLOCK_TARGET;
    rec->zcap = ZSTD_compressBound(raw);
    rec->zbuf = malloc(rec->zcap);
    rec->shuf = malloc(raw);
    rec->zctx = ZSTD_createCCtx();
    if (!rec->zbuf || !rec->shuf || !rec->zctx)
        return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "record: out of memory");
    int level = rec->o.compression_level ? rec->o.compression_level : ZSTD_CLEVEL_DEFAULT;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(rec->zctx, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(rec->zctx, ZSTD_c_checksumFlag, 1)))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "record: zstd refuses compression level %d",
                           level);
    return 0;
}

/* Everything create allocates, for its error path and for destroy. */
static void free_parts(struct hs_recorder *rec)
{
    hs__rec_manifest_free(rec);
    hs__rec_items_free(&rec->items);
    hs__rec_out_free(&rec->f.state);
    hs__rec_out_free(&rec->f.shm);
    hs__rec_out_free(&rec->f.events);
    ZSTD_freeCCtx(rec->zctx);
    free(rec->zbuf);
    free(rec->shuf);
    free(rec->seg_counts);
    free(rec->seg_can_bytes);
    free(rec->seg_can_sha);
    hs__rec_states_free(&rec->states);
    free(rec->sortbuf);
    free(rec->seg_first_tick);
    free(rec->seg_first_ord);
    free(rec->dir);
    free(rec);
}

int hs_rec_create(const struct hs_rec_opts *opts, struct hs_bench *bench,
                  struct hs_recorder **ret_rec, struct hs_diag *d)
{
    if (!opts->dir || !*opts->dir)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "record: no folder given");
    struct hs_recorder *rec = calloc(1, sizeof *rec);
    if (!rec)
        return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "record: out of memory");
    rec->o = *opts;
    rec->bench = bench;
    rec->cfg = hs_bench_config(bench);
    rec->njoints = hs_bench_joint_count(bench);
    rec->nsensors = hs_bench_sensor_count(bench);
    for (uint32_t i = 0; i < rec->nsensors; i++)
        rec->nsensor_values += hs_bench_sensor(bench, i)->layout.nvalues;
    for (uint32_t m = 0; m < rec->cfg->nmodels; m++)
        if (!rec->cfg->models[m].is_static)
            rec->bodies[rec->nbodies++] = m;
    rec->nbuses =
        rec->cfg->can.nbuses < HS__REC_MAX_BUSES ? rec->cfg->can.nbuses : HS__REC_MAX_BUSES;
    rec->state_size = (uint32_t)(sizeof(struct hs__rec_state_prefix) +
                                 8 * (rec->njoints * HS_REC_JOINT_FIELDS + rec->nsensor_values +
                                      rec->nbodies * 7) +
                                 8 * ((rec->nbuses + 1) / 2));
    rec->bench_tap =
        (struct hs_bench_tap){.ctx = rec, .slot_write = tap_slot_write, .event = tap_event};
    rec->dir = strdup(opts->dir);
    int r = rec->dir ? 0 : -ENOMEM;
    if (r == 0)
        r = hs__rec_items_init(&rec->items, opts->ring_items ? opts->ring_items : DEFAULT_ITEMS);
    if (r == 0)
        r = hs__rec_states_init(
            &rec->states, opts->ring_states ? opts->ring_states : DEFAULT_STATES, rec->state_size);
    if (r < 0) {
        hs_diag_set(d, r, NULL, 0, 0, "record: cannot allocate the rings: %s", strerror(-r));
        goto fail;
    }
    rec->sortcap = 4096;
    rec->sortbuf = calloc(rec->sortcap, sizeof *rec->sortbuf);
    if (!rec->sortbuf) {
        r = hs_diag_set(d, -ENOMEM, NULL, 0, 0, "record: out of memory");
        goto fail;
    }
    if ((r = init_compression(rec, d)) < 0)
        goto fail;
    /* The run id ties every file to this run: another run's manifest or file, even one
     * recorded at the same wall-clock moment or under a clock stepped back, is told apart. */
    if (getrandom(rec->run_id, sizeof rec->run_id, 0) != (ssize_t)sizeof rec->run_id) {
        r = hs_diag_set(d, errno ? -errno : -EIO, NULL, 0, 0,
                        "record: no random run id (getrandom): %s", strerror(errno));
        goto fail;
    }
    if ((r = make_dir(rec->dir, d)) < 0)
        goto fail;
    rec->start_real_ns = hs_rt_realtime_ns();
    time_t secs = (time_t)(rec->start_real_ns / 1000000000LL);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(rec->start_utc, sizeof rec->start_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if ((r = hs__rec_open_segment(rec, d)) < 0)
        goto fail;
    if ((r = hs__rec_write_manifest(rec, false)) < 0) {
        hs_diag_set(d, r, rec->dir, 0, 0, "record: cannot write manifest.json: %s", strerror(-r));
        goto fail;
    }
    if ((r = -pthread_create(&rec->writer, NULL, hs__rec_writer_main, rec)) < 0) {
        hs_diag_set(d, r, NULL, 0, 0, "record: cannot start the writer thread");
        goto fail;
    }
    rec->writer_running = true;
    *ret_rec = rec;
    return 0;
fail:
    hs__rec_close_segment(rec);
    free_parts(rec);
    return r;
}

void hs_rec_stats(const struct hs_recorder *rec, struct hs_rec_stats *ret)
{
    struct hs_recorder *m = (struct hs_recorder *)rec; /* atomics only */
    *ret = (struct hs_rec_stats){
        .ticks = atomic_load(&m->states.head) + atomic_load(&m->states.dropped),
        .items = atomic_load(&m->items.pushed) + atomic_load(&m->items.dropped),
        .dropped_states = atomic_load(&m->states.dropped),
        .dropped_items = atomic_load(&m->items.dropped),
        .bytes_written = atomic_load(&m->bytes_written),
        .bytes_raw = atomic_load(&m->bytes_raw),
        .writer_cpu_ns = atomic_load(&m->writer_cpu_ns),
        .segments = m->segment + 1 - m->seg_first_deleted,
        .write_error = atomic_load(&m->write_error),
    };
}

int hs_rec_wait_room(struct hs_recorder *rec)
{
    /* The writer sleeps up to 5 ms when it finds both rings empty; 1 ms naps here keep an
     * offline run close to the writer's pace without spinning. */
    const struct timespec nap = {0, 1000000};
    for (;;) {
        int e = atomic_load(&rec->write_error);
        if (e || !rec->writer_running || rec->o.writer_paused)
            return e;
        uint64_t states = atomic_load(&rec->states.head) - atomic_load(&rec->states.tail);
        uint64_t items = atomic_load(&rec->items.head) - atomic_load(&rec->items.tail);
        if (states <= (uint64_t)rec->states.mask / 2 && items <= rec->items.mask / 2)
            return 0;
        nanosleep(&nap, NULL);
    }
}

const char *hs_rec_dir(const struct hs_recorder *rec)
{
    return rec->dir;
}

void hs_rec_run_id_hex(const struct hs_recorder *rec, char out[33])
{
    hs__rec_hex_id(rec->run_id, out);
}

void hs_rec_status(const struct hs_recorder *rec, char *buf, size_t size)
{
    if (!rec) {
        if (size)
            buf[0] = 0;
        return;
    }
    struct hs_rec_stats s;
    hs_rec_stats(rec, &s);
    uint64_t dropped = s.dropped_states + s.dropped_items;
    if (s.write_error)
        snprintf(buf, size, "; recording FAILED (%s)", strerror(-s.write_error));
    else if (dropped)
        snprintf(buf, size, "; recording: %llu records DROPPED", (unsigned long long)dropped);
    else
        snprintf(buf, size, "; recording");
}

int hs_rec_finish(struct hs_recorder *rec, const char *stop_reason)
{
    if (!rec || rec->finished)
        return rec ? atomic_load(&rec->write_error) : 0;
    rec->finished = true;
    snprintf(rec->stop_reason, sizeof rec->stop_reason, "%s", stop_reason ? stop_reason : "");
    if (rec->writer_running) {
        atomic_store(&rec->stop, true);
        pthread_join(rec->writer, NULL); /* drains both rings before it returns */
        rec->writer_running = false;
    }
    rec->end_real_ns = hs_rt_realtime_ns();
    hs__rec_close_segment(rec);
    int r = hs__rec_write_manifest(rec, true);
    int e = atomic_load(&rec->write_error);
    return e ? e : r;
}

void hs_rec_destroy(struct hs_recorder *rec)
{
    if (!rec)
        return;
    /* the tap is the bench's (hs_bench_can_set_tap), and the bench may be gone by now: the
     * runner frees the recorder after it */
    hs_rec_finish(rec, NULL);
    free_parts(rec);
}
