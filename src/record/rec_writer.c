/* The writer thread: drains the rings into the recording's files, one candump log per bus
 * (frames of one drain sorted by time, as the reply thread and the tick push separately),
 * CRC-sealed records for the rest, and starts a new segment under the rotation policy. Never
 * on the tick's thread; it may block on the disk as long as it likes, the rings absorb it (and
 * count what they cannot). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
    hs__rec_seg_name(name, sizeof name, "state", rec->segment, "bin");
    if ((r = open_in(rec, name, &f->state, d)) < 0)
        return r;
    hs__rec_seg_name(name, sizeof name, "shm", rec->segment, "bin");
    if ((r = open_in(rec, name, &f->shm, d)) < 0)
        return r;
    hs__rec_seg_name(name, sizeof name, "events", rec->segment, "bin");
    if ((r = open_in(rec, name, &f->events, d)) < 0)
        return r;
    for (uint32_t i = 0; i < rec->cfg->can.nbuses && i < HS__REC_MAX_BUSES; i++) {
        char base[128];
        can_base(rec, i, base, sizeof base);
        hs__rec_seg_name(name, sizeof name, base, rec->segment, "log");
        if ((r = open_in(rec, name, &f->can[i], d)) < 0)
            return r;
    }
    struct hs__rec_file_header h = {
        .magic = HS__REC_STATE_MAGIC,
        .version = HS__REC_VERSION,
        .header_size = sizeof h,
        .record_size = rec->state_size,
        .njoints = rec->njoints,
        .nsensors = rec->nsensor_values,
        .nbodies = rec->nbodies,
    };
    rec->seg_bytes = 0;
    put(rec, f->state, &h, sizeof h);
    struct hs__rec_file_header hi = {
        .magic = HS__REC_ITEMS_MAGIC,
        .version = HS__REC_VERSION,
        .header_size = sizeof hi,
        .record_size = sizeof(struct hs__rec_item),
    };
    put(rec, f->shm, &hi, sizeof hi);
    put(rec, f->events, &hi, sizeof hi);
    uint64_t *ft = realloc(rec->seg_first_tick, (rec->segment + 1) * sizeof *ft);
    if (ft)
        rec->seg_first_tick = ft;
    uint64_t *fo = ft ? realloc(rec->seg_first_ord, (rec->segment + 1) * sizeof *fo) : NULL;
    if (!fo)
        return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "record: out of memory");
    rec->seg_first_ord = fo;
    ft[rec->segment] = UINT64_MAX; /* set by the first state written */
    fo[rec->segment] = 0;
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
    close_file(rec, &rec->f.state);
    close_file(rec, &rec->f.shm);
    close_file(rec, &rec->f.events);
    for (uint32_t i = 0; i < HS__REC_MAX_BUSES; i++)
        close_file(rec, &rec->f.can[i]);
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

static bool rotation_due(const struct hs_recorder *rec)
{
    if (rec->o.rotate_bytes && rec->seg_bytes >= rec->o.rotate_bytes)
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
        put(rec, rec->f.can[it->bus], line, k);
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
        put(rec, it.type == HS__REC_ITEM_SHM ? rec->f.shm : rec->f.events, &it, sizeof it);
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
        put(rec, rec->f.state, p, rec->state_size);
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

static void flush_all(struct hs_recorder *rec)
{
    FILE *fs[3 + HS__REC_MAX_BUSES] = {rec->f.state, rec->f.shm, rec->f.events};
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
