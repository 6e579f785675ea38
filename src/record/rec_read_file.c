/* One binary file of a recording (state.bin, shm.bin, events.bin; hs_rec_parse_state and
 * hs_rec_parse_items): its header checked (every version; version 3's against the manifest's
 * run id and the segment being read) and its records taken out (versions 1 and 2 bare,
 * version 3's blocks checked by their CRC, decompressed and unshuffled). What does not check out is
 * an error naming the file and the byte offset, or, in a crashed run's recording, damage that ends
 * it there. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "rec_internal.h"

/* A crashed run's damage: salvaging, it ends the recording there (first damage wins). */
static int damage_x(struct hs_recording *r, struct hs_diag *d, const char *name, size_t off,
                    const char *what, const char *detail)
{
    if (!r->salvage)
        return hs_diag_set(d, -EBADMSG, name, 0, 0, "%s at byte offset %zu%s", what, off, detail);
    if (!r->damaged)
        snprintf(r->damage, sizeof r->damage, "%s: %s at byte offset %zu%s", name, what, off,
                 detail);
    r->damaged = true;
    return 0;
}

int hs__rec_damage(struct hs_recording *r, struct hs_diag *d, const char *name, size_t off,
                   const char *what)
{
    return damage_x(r, d, name, off, what, "");
}

static int bad(struct hs_diag *d, const char *name, size_t off, const char *what)
{
    return hs_diag_set(d, -EBADMSG, name, 0, 0, "%s at byte offset %zu", what, off);
}

void hs__rec_hex_id(const uint8_t id[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
}

bool hs__rec_zero_id(const uint8_t id[16])
{
    for (int i = 0; i < 16; i++)
        if (id[i])
            return false;
    return true;
}

/* The header; version 3's also ties the file to the manifest's run and segment. */
static int check_header(struct hs_recording *r, const uint8_t *buf, size_t len, const char *name,
                        const char *magic, struct hs__rec_file_header3 *h3, struct hs_diag *d)
{
    struct hs__rec_file_header *h = &h3->h;
    memset(h3, 0, sizeof *h3);
    if (len < sizeof *h)
        return bad(d, name, len, "truncated file header (32 bytes expected)");
    memcpy(h, buf, sizeof *h);
    if (memcmp(h->magic, magic, 8) != 0)
        return bad(d, name, 0, "not a hilsim recording file of this kind (bad magic)");
    if (h->version < 1 || h->version > HS__REC_VERSION)
        return hs_diag_set(d, -EBADMSG, name, 0, 0,
                           "format version %u at byte offset 8; this hilsim reads versions 1 to %u",
                           h->version, HS__REC_VERSION);
    if (h->header_size != (h->version >= 3 ? sizeof *h3 : sizeof *h))
        return bad(d, name, 12, "unexpected header size");
    if (h->version < 3)
        return 0;
    if (len < sizeof *h3)
        return bad(d, name, len, "truncated file header (80 bytes expected)");
    memcpy(h3, buf, sizeof *h3);
    uint32_t crc = h3->header_crc;
    h3->header_crc = 0;
    if (hs__rec_crc32(h3, sizeof *h3) != crc)
        return bad(d, name, 72, "corrupted file header (header_crc mismatch)");
    if (!hs__rec_zero_id(r->run_id) && memcmp(h3->run_id, r->run_id, 16) != 0) {
        char a[33], b[33];
        hs__rec_hex_id(h3->run_id, a);
        hs__rec_hex_id(r->run_id, b);
        return hs_diag_set(d, -EBADMSG, name, 0, 0,
                           "run_id %s at byte offset 32 is not the manifest's run_id %s: a file "
                           "of another run",
                           a, b);
    }
    if (!hs__rec_zero_id(r->run_id) && h3->segment != r->cur_segment)
        return hs_diag_set(d, -EBADMSG, name, 0, 0,
                           "segment %u at byte offset 48: the file of segment %u expected",
                           h3->segment, r->cur_segment);
    if (h3->codec > HS__REC_CODEC_ZSTD)
        return bad(d, name, 52, "unknown codec");
    if ((h3->records == HS__REC_OPEN) != (h3->body_bytes == HS__REC_OPEN))
        return bad(d, name, 56, "records and body_bytes disagree on whether the file was closed");
    if (h3->records == HS__REC_OPEN && !r->salvage)
        return hs_diag_set(d, -EBADMSG, name, 0, 0,
                           "never closed (records at byte offset 56 still open), yet the "
                           "manifest says the run completed");
    if (h3->records != HS__REC_OPEN && h3->body_bytes < len - sizeof *h3)
        return hs_diag_set(d, -EBADMSG, name, 0, 0,
                           "%zu bytes after the header, more than the %llu its body_bytes (byte "
                           "offset 64) says",
                           len - sizeof *h3, (unsigned long long)h3->body_bytes);
    return 0;
}

/* A file's whole records: versions 1 and 2 the bytes after the header as they are, version 3
 * its blocks checked and decompressed (into owned). Salvaging, the first damage ends them. */
struct rec_body {
    const uint8_t *recs;
    uint8_t *owned;
    size_t n;
    uint64_t *blk_off, *blk_first; /* version 3: each block's file offset and first record */
    uint32_t nblk;
};

static void body_free(struct rec_body *b)
{
    free(b->owned);
    free(b->blk_off);
    free(b->blk_first);
}

/* The file offset where record i is (version 3: the offset of its block). */
static size_t body_off(const struct rec_body *b, size_t hsize, uint32_t rsize, size_t i)
{
    if (!b->nblk && !b->blk_off)
        return hsize + i * rsize;
    uint32_t k = 0;
    while (k + 1 < b->nblk && b->blk_first[k + 1] <= i)
        k++;
    return b->nblk ? (size_t)b->blk_off[k] : hsize;
}

static int decode_blocks(struct hs_recording *r, const uint8_t *buf, size_t len, const char *name,
                         const struct hs__rec_file_header3 *h3, struct rec_body *b,
                         struct hs_diag *d)
{
    uint32_t rsize = h3->h.record_size;
    size_t block_max = rsize > HS__REC_BLOCK_MAX ? rsize : HS__REC_BLOCK_MAX;
    size_t off = sizeof *h3, end = len, cap = 0;
    char what[96];
    b->blk_off = malloc(sizeof *b->blk_off); /* marks version 3 for body_off */
    if (!b->blk_off)
        return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
    while (off < end) {
        struct hs__rec_block bh;
        if (end - off < sizeof bh)
            return hs__rec_damage(r, d, name, off, "truncated block header");
        memcpy(&bh, buf + off, sizeof bh);
        if (bh.magic != HS__REC_BLOCK_RAW && bh.magic != HS__REC_BLOCK_ZSTD)
            return hs__rec_damage(r, d, name, off, "not a block (bad magic)");
        uint64_t raw = (uint64_t)bh.nrecords * rsize;
        if (!bh.nrecords || raw > block_max || (bh.magic == HS__REC_BLOCK_RAW && bh.stored != raw))
            return hs__rec_damage(r, d, name, off, "implausible block size");
        if (bh.stored > end - off - sizeof bh) {
            snprintf(what, sizeof what, " (%zu of %u bytes)", end - off - sizeof bh, bh.stored);
            return damage_x(r, d, name, off, "truncated block", what);
        }
        const uint8_t *payload = buf + off + sizeof bh;
        if (hs__rec_crc32_update(hs__rec_crc32(&bh, 12), payload, bh.stored) != bh.crc)
            return hs__rec_damage(r, d, name, off, "corrupted block (CRC mismatch)");
        if (b->n * rsize + raw > cap) {
            size_t ncap = cap ? cap * 2 : raw * 4;
            while (ncap < b->n * rsize + raw)
                ncap *= 2;
            uint8_t *np = realloc(b->owned, ncap);
            uint64_t *no = realloc(b->blk_off, (b->nblk + 1) * sizeof *no);
            if (no)
                b->blk_off = no;
            uint64_t *nf = realloc(b->blk_first, (b->nblk + 1) * sizeof *nf);
            if (nf)
                b->blk_first = nf;
            if (np)
                b->owned = np;
            if (!np || !no || !nf)
                return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
            cap = ncap;
        } else {
            uint64_t *no = realloc(b->blk_off, (b->nblk + 1) * sizeof *no);
            if (no)
                b->blk_off = no;
            uint64_t *nf = realloc(b->blk_first, (b->nblk + 1) * sizeof *nf);
            if (nf)
                b->blk_first = nf;
            if (!no || !nf)
                return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
        }
        uint8_t *dst = b->owned + b->n * rsize;
        if (bh.magic == HS__REC_BLOCK_RAW) {
            memcpy(dst, payload, raw);
        } else {
            uint8_t *tmp = malloc(raw);
            if (!tmp)
                return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
            bool ok = ZSTD_getFrameContentSize(payload, bh.stored) == raw &&
                      ZSTD_decompress(tmp, raw, payload, bh.stored) == raw;
            if (ok)
                hs__rec_unshuffle(dst, tmp, bh.nrecords, rsize);
            free(tmp);
            if (!ok) {
                snprintf(what, sizeof what, " (not one zstd frame of its %u records)", bh.nrecords);
                return damage_x(r, d, name, off, "corrupted block", what);
            }
        }
        b->blk_off[b->nblk] = off;
        b->blk_first[b->nblk++] = b->n;
        b->n += bh.nrecords;
        off += sizeof bh + bh.stored;
    }
    if (h3->records != HS__REC_OPEN && b->n != h3->records) {
        snprintf(what, sizeof what, " (%zu records, the header at byte offset 56 says %llu)", b->n,
                 (unsigned long long)h3->records);
        return damage_x(r, d, name, off, "record count differs", what);
    }
    return 0;
}

/* The records of a file whose header checked: version 3 blocks, or the bare records of
 * versions 1 and 2 (a partial last one is damage). */
static int read_body(struct hs_recording *r, const uint8_t *buf, size_t len, const char *name,
                     const struct hs__rec_file_header3 *h3, struct rec_body *b, struct hs_diag *d)
{
    memset(b, 0, sizeof *b);
    uint32_t rsize = h3->h.record_size;
    if (h3->h.version >= 3) {
        int rc = decode_blocks(r, buf, len, name, h3, b, d);
        b->recs = b->owned; /* salvaged: the whole blocks before the damage */
        return rc;
    }
    size_t body = len - sizeof h3->h;
    b->n = body / rsize;
    b->recs = buf + sizeof h3->h;
    if (body % rsize) {
        char what[64];
        snprintf(what, sizeof what, " (%zu of %u bytes)", body % rsize, rsize);
        return damage_x(r, d, name, sizeof h3->h + b->n * rsize, "truncated record", what);
    }
    return 0;
}

int hs__rec_grow(void **p, size_t elem, uint32_t n, uint32_t add)
{
    if ((uint64_t)n + add > UINT32_MAX / 2)
        return -ENOMEM;
    void *np = realloc(*p, (size_t)(n + add) * elem);
    if (!np && n + add)
        return -ENOMEM;
    *p = np;
    return 0;
}

int hs_rec_parse_state(struct hs_recording *r, const uint8_t *buf, size_t len, const char *name,
                       struct hs_diag *d)
{
    struct hs__rec_file_header3 h3;
    int rc = check_header(r, buf, len, name, HS__REC_STATE_MAGIC, &h3, d);
    if (rc < 0)
        return rc;
    struct hs__rec_file_header h = h3.h;
    size_t hsize = h.header_size;
    if (h.njoints > 4096 || h.nsensors > (1u << 20) || h.nbodies > 4096 ||
        (h.version == 1 && h.nsensors > 4096))
        return bad(d, name, 20, "implausible signal counts");
    if (r->format_version && h.version != r->format_version)
        return bad(d, name, 8, "format version differs from the manifest's");
    /* version 1: six values per sensor; 2: the header counts the sensors' values */
    uint32_t sv = h.version == 1 ? h.nsensors * 6 : h.nsensors;
    uint32_t stride = h.njoints * HS_REC_JOINT_FIELDS + sv + h.nbodies * 7;
    size_t fixed = sizeof(struct hs__rec_state_prefix) + 8 * (size_t)stride;
    /* then the CAN buses' frame counts, u32 each, padded to 8 bytes: at most 8 buses */
    if (h.record_size < fixed || (h.record_size - fixed) % 8 || h.record_size - fixed > 32)
        return bad(d, name, 16, "record size does not match the signal counts");
    uint32_t words = (uint32_t)((h.record_size - fixed) / 4);
    if (r->nstates && words != r->count_buses)
        return bad(d, name, 16, "record size differs from the previous segment's");
    r->count_buses = words;
    if (r->state_stride == 0 && r->nstates == 0) {
        r->state_stride = stride;
        if (!r->njoints && !r->nsensor_values && !r->nbodies) {
            r->njoints = h.njoints, r->nsensor_values = sv, r->nbodies = h.nbodies;
            r->format_version = h.version;
        }
    }
    if (stride != r->state_stride || h.njoints != r->njoints || sv != r->nsensor_values ||
        h.nbodies != r->nbodies)
        return bad(d, name, 20, "signal counts differ from the manifest's");
    struct rec_body rb;
    if ((rc = read_body(r, buf, len, name, &h3, &rb, d)) < 0) {
        body_free(&rb);
        return rc;
    }
    size_t n = rb.n;
    if (n > UINT32_MAX / 4) {
        body_free(&rb);
        return bad(d, name, len, "too many records");
    }
    uint32_t add = (uint32_t)n;
    if (hs__rec_grow((void **)&r->ticks, 8, r->nstates, add) ||
        hs__rec_grow((void **)&r->now_ns, 8, r->nstates, add) ||
        hs__rec_grow((void **)&r->real_ns, 8, r->nstates, add) ||
        hs__rec_grow((void **)&r->flags, 4, r->nstates, add) ||
        hs__rec_grow((void **)&r->values, 8 * (size_t)(stride ? stride : 1), r->nstates, add) ||
        hs__rec_grow((void **)&r->rx_counts, 4 * (size_t)(words ? words : 1), r->nstates, add)) {
        body_free(&rb);
        return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
    }
    uint8_t *rec = malloc(h.record_size);
    if (!rec) {
        body_free(&rb);
        return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t off = body_off(&rb, hsize, h.record_size, i);
        memcpy(rec, rb.recs + i * h.record_size, h.record_size);
        struct hs__rec_state_prefix p;
        memcpy(&p, rec, sizeof p);
        uint32_t crc = p.crc;
        p.crc = 0;
        memcpy(rec, &p, sizeof p);
        if (hs__rec_crc32(rec, h.record_size) != crc) {
            rc = hs__rec_damage(r, d, name, off, "corrupted state record (CRC mismatch)");
            break;
        }
        uint32_t k = r->nstates++;
        r->ticks[k] = p.tick;
        r->now_ns[k] = p.now_ns;
        r->real_ns[k] = p.real_ns;
        r->flags[k] = p.flags;
        double *v = r->values + (size_t)k * stride;
        memcpy(v, rec + sizeof p, 8 * (size_t)stride);
        if (words)
            memcpy(r->rx_counts + (size_t)k * words, rec + fixed, 4 * (size_t)words);
        for (uint32_t j = 0; j < h.njoints; j++) { /* the counter's bits, as a number */
            uint64_t c;
            memcpy(&c, &v[j * HS_REC_JOINT_FIELDS + 6], 8);
            v[j * HS_REC_JOINT_FIELDS + 6] = (double)c;
        }
    }
    free(rec);
    body_free(&rb);
    return rc;
}

static int parse_items_body(struct hs_recording *r, const struct rec_body *rb, const char *name,
                            size_t hsize, struct hs_diag *d);

int hs_rec_parse_items(struct hs_recording *r, const uint8_t *buf, size_t len, const char *name,
                       struct hs_diag *d)
{
    struct hs__rec_file_header3 h3;
    int rc = check_header(r, buf, len, name, HS__REC_ITEMS_MAGIC, &h3, d);
    if (rc < 0)
        return rc;
    if (h3.h.record_size != sizeof(struct hs__rec_item))
        return bad(d, name, 16, "unexpected record size");
    if (r->format_version && h3.h.version != r->format_version)
        return bad(d, name, 8, "format version differs from the manifest's");
    struct rec_body rb;
    if ((rc = read_body(r, buf, len, name, &h3, &rb, d)) < 0) {
        body_free(&rb);
        return rc;
    }
    rc = parse_items_body(r, &rb, name, h3.h.header_size, d);
    body_free(&rb);
    return rc;
}

static int parse_items_body(struct hs_recording *r, const struct rec_body *rb, const char *name,
                            size_t hsize, struct hs_diag *d)
{
    const uint32_t rsize = sizeof(struct hs__rec_item);
    for (size_t i = 0; i < rb->n; i++) {
        size_t off = body_off(rb, hsize, rsize, i);
        struct hs__rec_item it;
        memcpy(&it, rb->recs + i * rsize, sizeof it);
        uint32_t crc = it.crc;
        it.crc = 0;
        if (hs__rec_crc32(&it, sizeof it) != crc)
            return hs__rec_damage(r, d, name, off, "corrupted record (CRC mismatch)");
        if (it.type == HS__REC_ITEM_SHM) {
            if (it.u.shm.mode >= HS_JOINT_MODE_MAX) /* it goes into a plant's command slot */
                return bad(d, name, off + 32, "shm command with an unknown joint mode");
            if (hs__rec_grow((void **)&r->shm, sizeof *r->shm, r->nshm, 1))
                return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
            struct hs_rec_shm *s = &r->shm[r->nshm++];
            *s = (struct hs_rec_shm){
                .ord = it.ord,
                .real_ns = it.real_ns,
                .joint = it.u.shm.joint,
                .shm_mode = it.u.shm.shm_mode,
                .mode = it.u.shm.mode,
                .q = it.u.shm.v[0],
                .dq = it.u.shm.v[1],
                .kp = it.u.shm.v[2],
                .kd = it.u.shm.v[3],
                .tau_ff = it.u.shm.v[4],
                .current = it.u.shm.v[5],
                .velocity = it.u.shm.v[6],
                .rx_time_ns = it.u.shm.rx_time_ns,
                .seq = it.u.shm.seq,
            };
        } else if (it.type == HS__REC_ITEM_EVENT) {
            if (hs__rec_grow((void **)&r->events, sizeof *r->events, r->nevents, 1))
                return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
            struct hs_rec_event *e = &r->events[r->nevents++];
            *e = (struct hs_rec_event){.ord = it.ord,
                                       .real_ns = it.real_ns,
                                       .kind = it.u.ev.kind,
                                       .tick = it.u.ev.tick,
                                       .a = it.u.ev.a,
                                       .b = it.u.ev.b};
            memcpy(e->text, it.u.ev.text, HS_REC_TEXT_MAX);
            e->text[HS_REC_TEXT_MAX - 1] = 0;
        } else {
            return bad(d, name, off, "unknown record type");
        }
    }
    return 0;
}
