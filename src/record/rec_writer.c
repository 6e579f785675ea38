/* The writer thread: drains the rings into the recording's files, one candump log per bus
 * (frames of one drain sorted by time, as the reply thread and the tick push separately),
 * CRC-sealed records for the rest, gathered into blocks that are compressed (zstd) here, and
 * starts a new segment under the rotation policy. Never on the tick's thread; it may block on
 * the disk and spend CPU on compression as long as it likes, the rings absorb it (and count
 * what they cannot). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "hilsim/can.h"
#include "rec_internal.h"
#include "hilsim/rt/rt_clock.h"

#define DRAIN_MAX 4096       /* items per pass before the states get their turn again */
#define IDLE_NS 5000000      /* sleep when both rings are empty */
#define FLUSH_NS 200000000LL /* a crash loses at most this much of what was drained */

void hs__rec_seg_name(char *buf, size_t size, const char *base, uint32_t segment, const char *ext)
{
    if (segment)
        snprintf(buf, size, "%s.%u.%s", base, segment, ext);
    else
        snprintf(buf, size, "%s.%s", base, ext);
}

static void fail(struct hs_recorder *rec, int err)
{
    int expect = 0;
    atomic_compare_exchange_strong(&rec->write_error, &expect, err);
}

static void put(struct hs_recorder *rec, FILE *f, const void *p, size_t n)
{
    if (!f)
        return;
    if (fwrite(p, 1, n, f) != n)
        fail(rec, errno ? -errno : -EIO);
    rec->seg_bytes += n;
    atomic_fetch_add_explicit(&rec->bytes_written, n, memory_order_relaxed);
}

static int open_in(struct hs_recorder *rec, const char *name, FILE **ret, struct hs_diag *d);

static void put_raw(struct hs_recorder *rec, FILE *f, const void *p, size_t n)
{
    put(rec, f, p, n);
    if (f)
        atomic_fetch_add_explicit(&rec->bytes_raw, n, memory_order_relaxed);
}

/* The block of records gathered so far, compressed when that makes it smaller. */
static void emit_block(struct hs_recorder *rec, struct hs__rec_out *o)
{
    if (!o->f || !o->nrec)
        return;
    size_t raw = (size_t)o->nrec * o->rsize;
    struct hs__rec_block b = {
        .magic = HS__REC_BLOCK_RAW, .nrecords = o->nrec, .stored = (uint32_t)raw};
    const void *payload = o->raw;
    if (rec->zctx) {
        hs__rec_shuffle(rec->shuf, o->raw, o->nrec, o->rsize);
        size_t z = ZSTD_compress2(rec->zctx, rec->zbuf, rec->zcap, rec->shuf, raw);
        if (!ZSTD_isError(z) && z < raw) {
            b.magic = HS__REC_BLOCK_ZSTD;
            b.stored = (uint32_t)z;
            payload = rec->zbuf;
        }
    }
    b.crc = hs__rec_crc32_update(hs__rec_crc32(&b, 12), payload, b.stored);
    put(rec, o->f, &b, sizeof b);
    put(rec, o->f, payload, b.stored);
    atomic_fetch_add_explicit(&rec->bytes_raw, raw, memory_order_relaxed);
    o->records += o->nrec;
    o->body_bytes += sizeof b + b.stored;
    o->nrec = 0;
}

static void out_record(struct hs_recorder *rec, struct hs__rec_out *o, const void *p)
{
    if (!o->f)
        return;
    memcpy(o->raw + (size_t)o->nrec * o->rsize, p, o->rsize);
    if (++o->nrec == o->cap)
        emit_block(rec, o);
}

static void header3(const struct hs_recorder *rec, const struct hs__rec_out *o, const char *magic,
                    struct hs__rec_file_header3 *h)
{
    *h = (struct hs__rec_file_header3){
        .h = {.version = HS__REC_VERSION, .header_size = sizeof *h, .record_size = o->rsize},
        .segment = rec->segment,
        .codec = rec->zctx ? HS__REC_CODEC_ZSTD : HS__REC_CODEC_NONE,
        .records = HS__REC_OPEN,
        .body_bytes = HS__REC_OPEN,
    };
    memcpy(h->h.magic, magic, 8);
    memcpy(h->run_id, rec->run_id, sizeof h->run_id);
    if (!strcmp(magic, HS__REC_STATE_MAGIC)) {
        h->h.njoints = rec->njoints;
        h->h.nsensors = rec->nsensor_values;
        h->h.nbodies = rec->nbodies;
    }
}

/* Creates the file and writes its header (counts open); the block buffer is kept across
 * segments. */
static int out_open(struct hs_recorder *rec, struct hs__rec_out *o, const char *name,
                    const char *magic, uint32_t rsize, struct hs_diag *d)
{
    int r = open_in(rec, name, &o->f, d);
    if (r < 0)
        return r;
    if (!o->raw) {
        o->rsize = rsize;
        o->cap = (HS__REC_BLOCK_TARGET / rsize) ? (HS__REC_BLOCK_TARGET / rsize) : 1;
        if (!(o->raw = malloc((size_t)o->cap * rsize)))
            return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "record: out of memory");
    }
    o->nrec = 0;
    o->records = o->body_bytes = 0;
    struct hs__rec_file_header3 h;
    header3(rec, o, magic, &h);
    h.header_crc = hs__rec_crc32(&h, sizeof h);
    put_raw(rec, o->f, &h, sizeof h);
    return 0;
}

/* The last block, then the header again with the counts that bound the file. */
static void out_close(struct hs_recorder *rec, struct hs__rec_out *o, const char *magic,
                      uint64_t *ret_counts)
{
    if (!o->f)
        return;
    emit_block(rec, o);
    struct hs__rec_file_header3 h;
    header3(rec, o, magic, &h);
    h.records = o->records;
    h.body_bytes = o->body_bytes;
    h.header_crc = hs__rec_crc32(&h, sizeof h);
    if (fseek(o->f, 0, SEEK_SET) != 0 || fwrite(&h, 1, sizeof h, o->f) != sizeof h)
        fail(rec, errno ? -errno : -EIO);
    if (fclose(o->f) != 0)
        fail(rec, errno ? -errno : -EIO);
    o->f = NULL;
    if (ret_counts) {
        ret_counts[0] = o->records;
        ret_counts[3] = sizeof h + o->body_bytes;
    }
}

void hs__rec_out_free(struct hs__rec_out *o)
{
    free(o->raw);
    o->raw = NULL;
}

static int open_in(struct hs_recorder *rec, const char *name, FILE **ret, struct hs_diag *d)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", rec->dir, name);
    *ret = fopen(path, "wbx");
    if (!*ret)
        return hs_diag_set(d, -errno, path, 0, 0, "record: cannot create: %s", strerror(errno));
    return 0;
}

static void can_base(const struct hs_recorder *rec, uint32_t i, char *buf, size_t size)
{
    snprintf(buf, size, "can-%s", rec->cfg->can.buses[i].name);
}

int hs__rec_open_segment(struct hs_recorder *rec, struct hs_diag *d)
{
    char name[256];
    int r;
    struct hs__rec_seg_files *f = &rec->f;
    const uint32_t isz = sizeof(struct hs__rec_item);
    rec->seg_bytes = 0;
    hs__rec_seg_name(name, sizeof name, "state", rec->segment, "bin");
    if ((r = out_open(rec, &f->state, name, HS__REC_STATE_MAGIC, rec->state_size, d)) < 0)
        return r;
    hs__rec_seg_name(name, sizeof name, "shm", rec->segment, "bin");
    if ((r = out_open(rec, &f->shm, name, HS__REC_ITEMS_MAGIC, isz, d)) < 0)
        return r;
    hs__rec_seg_name(name, sizeof name, "events", rec->segment, "bin");
    if ((r = out_open(rec, &f->events, name, HS__REC_ITEMS_MAGIC, isz, d)) < 0)
        return r;
    for (uint32_t i = 0; i < rec->cfg->can.nbuses && i < HS__REC_MAX_BUSES; i++) {
        char base[128];
        can_base(rec, i, base, sizeof base);
        hs__rec_seg_name(name, sizeof name, base, rec->segment, "log");
        if ((r = open_in(rec, name, &f->can[i], d)) < 0)
            return r;
    }
    uint64_t *ft = realloc(rec->seg_first_tick, (rec->segment + 1) * sizeof *ft);
    if (ft)
        rec->seg_first_tick = ft;
    uint64_t *fo = ft ? realloc(rec->seg_first_ord, (rec->segment + 1) * sizeof *fo) : NULL;
    if (fo)
        rec->seg_first_ord = fo;
    uint64_t *sc = fo ? realloc(rec->seg_counts, (rec->segment + 1) * 6 * sizeof *sc) : NULL;
    if (!sc)
        return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "record: out of memory");
    rec->seg_counts = sc;
    const size_t nb = HS__REC_MAX_BUSES, at = (size_t)rec->segment * nb;
    uint64_t *cb = realloc(rec->seg_can_bytes, (at + nb) * sizeof *cb);
    if (cb)
        rec->seg_can_bytes = cb;
    char *cs = cb ? realloc(rec->seg_can_sha, (at + nb) * 65) : NULL;
    if (!cs)
        return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "record: out of memory");
    rec->seg_can_sha = cs;
    for (size_t i = 0; i < nb; i++) {
        hs__rec_sha256_init(&rec->can_hash[i]);
        rec->can_len[i] = 0;
        cb[at + i] = 0;
        cs[(at + i) * 65] = 0; /* set when the segment closes */
    }
    ft[rec->segment] = UINT64_MAX; /* set by the first state written */
    fo[rec->segment] = 0;
    for (int k = 0; k < 6; k++)
        sc[rec->segment * 6 + k] = UINT64_MAX; /* set when the segment closes */
    rec->seg_start_ns = hs_rt_now_ns();
    return 0;
}

static void close_file(struct hs_recorder *rec, FILE **f)
{
    if (*f && fclose(*f) != 0)
        fail(rec, errno ? -errno : -EIO);
    *f = NULL;
}

void hs__rec_close_segment(struct hs_recorder *rec)
{
    uint64_t *sc = rec->seg_counts ? rec->seg_counts + rec->segment * 6 : NULL;
    out_close(rec, &rec->f.state, HS__REC_STATE_MAGIC, sc);
    out_close(rec, &rec->f.shm, HS__REC_ITEMS_MAGIC, sc ? sc + 1 : NULL);
    out_close(rec, &rec->f.events, HS__REC_ITEMS_MAGIC, sc ? sc + 2 : NULL);
    for (uint32_t i = 0; i < HS__REC_MAX_BUSES; i++) {
        size_t at = (size_t)rec->segment * HS__REC_MAX_BUSES + i;
        if (rec->f.can[i] && rec->seg_can_sha) {
            hs__rec_sha256_hex(&rec->can_hash[i], rec->seg_can_sha + at * 65);
            rec->seg_can_bytes[at] = rec->can_len[i];
        }
        close_file(rec, &rec->f.can[i]);
    }
}

static void remove_segment(struct hs_recorder *rec, uint32_t seg)
{
    char name[256], path[4096];
    const char *bases[3] = {"state", "shm", "events"};
    for (int k = 0; k < 3; k++) {
        hs__rec_seg_name(name, sizeof name, bases[k], seg, "bin");
        snprintf(path, sizeof path, "%s/%s", rec->dir, name);
        unlink(path);
    }
    for (uint32_t i = 0; i < rec->cfg->can.nbuses && i < HS__REC_MAX_BUSES; i++) {
        char base[128];
        can_base(rec, i, base, sizeof base);
        hs__rec_seg_name(name, sizeof name, base, seg, "log");
        snprintf(path, sizeof path, "%s/%s", rec->dir, name);
        unlink(path);
    }
}

static void rotate(struct hs_recorder *rec)
{
    hs__rec_close_segment(rec);
    rec->segment++;
    struct hs_diag d = {0};
    int r = hs__rec_open_segment(rec, &d);
    if (r < 0) {
        fail(rec, r);
        return;
    }
    uint32_t keep = rec->o.keep_segments;
    while (keep && rec->segment + 1 - rec->seg_first_deleted > keep)
        remove_segment(rec, rec->seg_first_deleted++);
    hs__rec_write_manifest(rec, false);
}

/* The segment's size on disk, the records of the blocks not yet written counted at their raw
 * size (they are written compressed or not at the next flush). */
static bool rotation_due(const struct hs_recorder *rec)
{
    const struct hs__rec_seg_files *f = &rec->f;
    uint64_t pending = (uint64_t)f->state.nrec * f->state.rsize +
                       (uint64_t)f->shm.nrec * f->shm.rsize +
                       (uint64_t)f->events.nrec * f->events.rsize;
    if (rec->o.rotate_bytes && rec->seg_bytes + pending >= rec->o.rotate_bytes)
        return true;
    return rec->o.rotate_s > 0 &&
           (double)(hs_rt_now_ns() - rec->seg_start_ns) >= rec->o.rotate_s * 1e9;
}

size_t hs__rec_candump_line(char *buf, size_t size, int64_t real_ns, const char *iface,
                            const struct hs__rec_item *it)
{
    static const char hex[] = "0123456789ABCDEF";
    int64_t us = real_ns / 1000;
    int n = snprintf(buf, size, "(%010lld.%06lld) %s ", (long long)(us / 1000000),
                     (long long)(us % 1000000), iface);
    if (n < 0 || (size_t)n >= size)
        return 0;
    size_t o = (size_t)n;
    uint8_t fl = it->u.fr.flags;
    uint32_t id = it->u.fr.id;
    char idbuf[16];
    if (fl & HS_CAN_FLAG_ERR)
        snprintf(idbuf, sizeof idbuf, "%08X", (id & HS_CAN_EFF_MASK) | 0x20000000u);
    else if (fl & HS_CAN_FLAG_EXT)
        snprintf(idbuf, sizeof idbuf, "%08X", id & HS_CAN_EFF_MASK);
    else
        snprintf(idbuf, sizeof idbuf, "%03X", id & HS_CAN_SFF_MASK);
    unsigned len = it->u.fr.len <= 64 ? it->u.fr.len : 64;
    if (o + strlen(idbuf) + 4 + 2 * len + 4 >= size)
        return 0;
    for (const char *s = idbuf; *s; s++)
        buf[o++] = *s;
    buf[o++] = '#';
    if (fl & HS_CAN_FLAG_FD) {
        buf[o++] = '#';
        buf[o++] = hex[((fl & HS_CAN_FLAG_BRS) ? 1 : 0) | ((fl & HS_CAN_FLAG_ESI) ? 2 : 0)];
    } else if (fl & HS_CAN_FLAG_RTR) {
        buf[o++] = 'R';
        // cppcheck-suppress knownConditionTrueFalse ; len is the frame's, 0..64 (RTR: its DLC)
        if (len && len <= 8)
            buf[o++] = hex[len];
        len = 0;
    }
    for (unsigned i = 0; i < len; i++) {
        buf[o++] = hex[it->u.fr.data[i] >> 4];
        buf[o++] = hex[it->u.fr.data[i] & 15];
    }
    buf[o++] = ' ';
    buf[o++] = it->tx ? 'T' : 'R';
    buf[o++] = '\n';
    buf[o] = 0;
    return o;
}

static int cmp_frames(const void *a, const void *b)
{
    const struct hs__rec_item *x = a, *y = b;
    if (x->bus != y->bus)
        return x->bus < y->bus ? -1 : 1;
    if (x->real_ns != y->real_ns)
        return x->real_ns < y->real_ns ? -1 : 1;
    /* equal times: keep push order (ord, then received before sent) */
    if (x->ord != y->ord)
        return x->ord < y->ord ? -1 : 1;
    return (int)x->tx - (int)y->tx;
}

static void write_frames(struct hs_recorder *rec, uint32_t n)
{
    qsort(rec->sortbuf, n, sizeof *rec->sortbuf, cmp_frames);
    char line[256];
    for (uint32_t i = 0; i < n; i++) {
        const struct hs__rec_item *it = &rec->sortbuf[i];
        if (it->bus >= rec->cfg->can.nbuses || it->bus >= HS__REC_MAX_BUSES)
            continue;
        size_t k = hs__rec_candump_line(line, sizeof line, it->real_ns,
                                        rec->cfg->can.buses[it->bus].interface, it);
        put_raw(rec, rec->f.can[it->bus], line, k);
        hs__rec_sha256_update(&rec->can_hash[it->bus], line, k);
        rec->can_len[it->bus] += k;
    }
}

/* Items up to the tick whose state comes next (ord <= limit): an item goes into the segment of
 * its tick's state, so a segment's files hold its ticks' frames and commands, whichever pass
 * the writer drained them in. The first item of a later tick waits in rec->stash. */
static unsigned drain_items(struct hs_recorder *rec, uint64_t limit)
{
    unsigned n = 0;
    uint32_t nframes = 0;
    struct hs__rec_item it;
    while (n < DRAIN_MAX) {
        if (rec->stashed)
            it = rec->stash;
        else if (hs__rec_items_pop(&rec->items, &it) < 0)
            break;
        if (it.ord > limit) {
            rec->stash = it;
            rec->stashed = true;
            break;
        }
        rec->stashed = false;
        n++;
        if (it.type == HS__REC_ITEM_FRAME) {
            if (nframes < rec->sortcap)
                rec->sortbuf[nframes++] = it;
            continue;
        }
        it.crc = 0;
        it.crc = hs__rec_crc32(&it, sizeof it);
        out_record(rec, it.type == HS__REC_ITEM_SHM ? &rec->f.shm : &rec->f.events, &it);
    }
    write_frames(rec, nframes);
    return n;
}

/* The ord of the next state to write: states written plus those a full ring refused (exact
 * while none was refused; with refusals the recording is inexact anyway). */
static uint64_t next_ord(struct hs_recorder *rec)
{
    return atomic_load_explicit(&rec->states_written, memory_order_relaxed) +
           atomic_load_explicit(&rec->states.dropped, memory_order_relaxed);
}

static unsigned drain_states(struct hs_recorder *rec)
{
    unsigned n = 0;
    uint8_t *p;
    while ((p = (uint8_t *)hs__rec_states_peek(&rec->states))) {
        struct hs__rec_state_prefix pre;
        memcpy(&pre, p, sizeof pre);
        pre.crc = 0;
        memcpy(p, &pre, sizeof pre);
        pre.crc = hs__rec_crc32(p, rec->state_size);
        memcpy(p, &pre, sizeof pre);
        uint64_t ord = next_ord(rec);
        if (rec->seg_first_tick[rec->segment] == UINT64_MAX) {
            rec->seg_first_tick[rec->segment] = pre.tick;
            rec->seg_first_ord[rec->segment] = ord;
        }
        out_record(rec, &rec->f.state, p);
        hs__rec_states_release(&rec->states);
        atomic_fetch_add_explicit(&rec->states_written, 1, memory_order_relaxed);
        n++;
        if (rotation_due(rec)) {
            /* this tick's frames and commands (pushed before its state) end its segment */
            while (drain_items(rec, ord) > 0)
                ;
            rotate(rec);
        }
    }
    return n;
}

static void writer_cpu(struct hs_recorder *rec)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        atomic_store_explicit(&rec->writer_cpu_ns,
                              (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                              memory_order_relaxed);
}

/* Every block gathered so far goes out whole: a crash loses at most FLUSH_NS of records. */
static void flush_all(struct hs_recorder *rec)
{
    emit_block(rec, &rec->f.state);
    emit_block(rec, &rec->f.shm);
    emit_block(rec, &rec->f.events);
    writer_cpu(rec);
    FILE *fs[3 + HS__REC_MAX_BUSES] = {rec->f.state.f, rec->f.shm.f, rec->f.events.f};
    for (uint32_t i = 0; i < HS__REC_MAX_BUSES; i++)
        fs[3 + i] = rec->f.can[i];
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if (fs[i] && fflush(fs[i]) != 0)
            fail(rec, errno ? -errno : -EIO);
}

void *hs__rec_writer_main(void *arg)
{
    struct hs_recorder *rec = arg;
    int64_t next_flush = hs_rt_now_ns() + FLUSH_NS;
    pthread_setname_np(pthread_self(), "hs-rec-writer"); /* `ps -L`, `top -H` */
    while (rec->o.writer_paused && !atomic_load(&rec->stop)) {
        struct timespec ts = {0, IDLE_NS};
        nanosleep(&ts, NULL);
    }
    for (;;) {
        bool stopping = atomic_load(&rec->stop);
        unsigned n = drain_states(rec);
        /* stopping: whatever is left, also items posted after the last state */
        n += drain_items(rec, stopping ? UINT64_MAX : next_ord(rec));
        if (stopping && n == 0)
            break; /* stop was set before this pass began: every record pushed is written */
        int64_t now = hs_rt_now_ns();
        if (now >= next_flush) {
            flush_all(rec);
            next_flush = now + FLUSH_NS;
        }
        if (n == 0) {
            struct timespec ts = {0, IDLE_NS};
            nanosleep(&ts, NULL);
        }
    }
    flush_all(rec);
    return NULL;
}
