/* Reading a recording back: the manifest, then every segment's files, each checked byte by
 * byte (magic, version, sizes, each record's CRC, each candump line's syntax). Whatever does
 * not check out is an error naming the file and the byte offset (or line), never a silently
 * shorter recording. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/can.h"
#include "rec_internal.h"

static int read_all(const char *path, uint8_t **ret, size_t *ret_len, struct hs_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return hs_diag_set(d, -errno, path, 0, 0, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (!buf)
        return hs_diag_set(d, -ENOMEM, path, 0, 0, "out of memory");
    if (err) {
        free(buf);
        return hs_diag_set(d, -EIO, path, 0, 0, "read error");
    }
    *ret = buf;
    *ret_len = len;
    return 0;
}

/* A text file the manifest names (NULL or absent: none, *ret stays NULL), read whole. */
static int read_named(const char *dir, const json_t *name, char **ret, size_t *ret_len,
                      struct hs_diag *d)
{
    const char *file = json_string_value(name);
    if (!file)
        return 0;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    uint8_t *buf;
    int rc = read_all(p, &buf, ret_len, d);
    if (rc == 0)
        *ret = (char *)buf;
    return rc;
}

static int bad(struct hs_diag *d, const char *name, size_t off, const char *what)
{
    return hs_diag_set(d, -EBADMSG, name, 0, 0, "%s at byte offset %zu", what, off);
}

static int check_header(const uint8_t *buf, size_t len, const char *name, const char *magic,
                        struct hs__rec_file_header *h, struct hs_diag *d)
{
    if (len < sizeof *h)
        return bad(d, name, len, "truncated file header (32 bytes expected)");
    memcpy(h, buf, sizeof *h);
    if (memcmp(h->magic, magic, 8) != 0)
        return bad(d, name, 0, "not a hilsim recording file of this kind (bad magic)");
    if (h->version < 1 || h->version > HS__REC_VERSION)
        return hs_diag_set(d, -EBADMSG, name, 0, 0,
                           "format version %u at byte offset 8; this hilsim reads versions 1 to %u",
                           h->version, HS__REC_VERSION);
    if (h->header_size != sizeof *h)
        return bad(d, name, 12, "unexpected header size");
    return 0;
}

static int grow(void **p, size_t elem, uint32_t n, uint32_t add)
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
    struct hs__rec_file_header h;
    int rc = check_header(buf, len, name, HS__REC_STATE_MAGIC, &h, d);
    if (rc < 0)
        return rc;
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
    size_t body = len - sizeof h;
    size_t n = body / h.record_size;
    if (body % h.record_size)
        return hs_diag_set(d, -EBADMSG, name, 0, 0,
                           "truncated record at byte offset %zu (%zu of %u bytes)",
                           sizeof h + n * h.record_size, body % h.record_size, h.record_size);
    if (n > UINT32_MAX / 4)
        return bad(d, name, len, "too many records");
    uint32_t add = (uint32_t)n;
    if (grow((void **)&r->ticks, 8, r->nstates, add) ||
        grow((void **)&r->now_ns, 8, r->nstates, add) ||
        grow((void **)&r->real_ns, 8, r->nstates, add) ||
        grow((void **)&r->flags, 4, r->nstates, add) ||
        grow((void **)&r->values, 8 * (size_t)(stride ? stride : 1), r->nstates, add) ||
        grow((void **)&r->rx_counts, 4 * (size_t)(words ? words : 1), r->nstates, add))
        return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
    uint8_t *rec = malloc(h.record_size);
    if (!rec)
        return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t off = sizeof h + i * h.record_size;
        memcpy(rec, buf + off, h.record_size);
        struct hs__rec_state_prefix p;
        memcpy(&p, rec, sizeof p);
        uint32_t crc = p.crc;
        p.crc = 0;
        memcpy(rec, &p, sizeof p);
        if (hs__rec_crc32(rec, h.record_size) != crc) {
            free(rec);
            return bad(d, name, off, "corrupted state record (CRC mismatch)");
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
    return 0;
}

int hs_rec_parse_items(struct hs_recording *r, const uint8_t *buf, size_t len, const char *name,
                       struct hs_diag *d)
{
    struct hs__rec_file_header h;
    int rc = check_header(buf, len, name, HS__REC_ITEMS_MAGIC, &h, d);
    if (rc < 0)
        return rc;
    if (h.record_size != sizeof(struct hs__rec_item))
        return bad(d, name, 16, "unexpected record size");
    size_t body = len - sizeof h, n = body / h.record_size;
    if (body % h.record_size)
        return hs_diag_set(d, -EBADMSG, name, 0, 0,
                           "truncated record at byte offset %zu (%zu of %u bytes)",
                           sizeof h + n * h.record_size, body % h.record_size, h.record_size);
    for (size_t i = 0; i < n; i++) {
        size_t off = sizeof h + i * h.record_size;
        struct hs__rec_item it;
        memcpy(&it, buf + off, sizeof it);
        uint32_t crc = it.crc;
        it.crc = 0;
        if (hs__rec_crc32(&it, sizeof it) != crc)
            return bad(d, name, off, "corrupted record (CRC mismatch)");
        if (it.type == HS__REC_ITEM_SHM) {
            if (it.u.shm.mode >= HS_JOINT_MODE_MAX) /* it goes into a plant's command slot */
                return bad(d, name, off + 32, "shm command with an unknown joint mode");
            if (grow((void **)&r->shm, sizeof *r->shm, r->nshm, 1))
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
            if (grow((void **)&r->events, sizeof *r->events, r->nevents, 1))
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

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool fd_len_ok(unsigned n)
{
    return n <= 8 || n == 12 || n == 16 || n == 20 || n == 24 || n == 32 || n == 48 || n == 64;
}

int hs_rec_parse_candump_line(const char *s, size_t len, struct hs_rec_frame *f)
{
    const char *e = s + len;
    memset(f, 0, sizeof *f);
    if (s >= e || *s++ != '(')
        return -EINVAL;
    int64_t sec = 0, usec = 0;
    int nd = 0;
    for (; s < e && *s >= '0' && *s <= '9' && nd < 12; s++, nd++)
        sec = sec * 10 + (*s - '0');
    if (!nd || s >= e || *s++ != '.')
        return -EINVAL;
    nd = 0;
    for (; s < e && *s >= '0' && *s <= '9' && nd < 6; s++, nd++)
        usec = usec * 10 + (*s - '0');
    if (nd != 6 || s >= e || *s++ != ')')
        return -EINVAL;
    f->time_us = sec * 1000000 + usec;
    if (s >= e || *s++ != ' ')
        return -EINVAL;
    const char *iface = s;
    while (s < e && *s != ' ')
        s++;
    if (s == iface || s - iface >= HS_CAN_IFNAME_MAX || s >= e)
        return -EINVAL;
    s++;
    const char *id0 = s;
    uint32_t id = 0;
    while (s < e && hexval(*s) >= 0 && s - id0 < 8)
        id = id << 4 | (uint32_t)hexval(*s++);
    size_t idlen = (size_t)(s - id0);
    if ((idlen != 3 && idlen != 8) || s >= e || *s++ != '#')
        return -EINVAL;
    if (idlen == 8) {
        if (id & 0x20000000u)
            f->flags |= HS_CAN_FLAG_ERR;
        else
            f->flags |= HS_CAN_FLAG_EXT;
        id &= HS_CAN_EFF_MASK;
    } else if (id > HS_CAN_SFF_MASK) {
        return -EINVAL;
    }
    f->id = id;
    unsigned max = 8;
    if (s < e && *s == '#') { /* CAN FD: one flags digit, then data */
        s++;
        int fl = s < e ? hexval(*s++) : -1;
        if (fl < 0 || fl > 3)
            return -EINVAL;
        f->flags |=
            HS_CAN_FLAG_FD | (fl & 1 ? HS_CAN_FLAG_BRS : 0) | (fl & 2 ? HS_CAN_FLAG_ESI : 0);
        max = 64;
    } else if (s < e && (*s == 'R' || *s == 'r')) {
        s++;
        f->flags |= HS_CAN_FLAG_RTR;
        if (s < e && *s != ' ') {
            int n = hexval(*s++);
            if (n < 0 || n > 8)
                return -EINVAL;
            f->len = (uint8_t)n;
        }
        max = 0;
    }
    unsigned n = 0;
    while (s < e && *s != ' ') {
        if (n >= max || s + 1 >= e)
            return -EINVAL;
        int hi = hexval(s[0]), lo = hexval(s[1]);
        if (hi < 0 || lo < 0)
            return -EINVAL;
        f->data[n++] = (uint8_t)(hi << 4 | lo);
        s += 2;
    }
    if (max)
        f->len = (uint8_t)n;
    if ((f->flags & HS_CAN_FLAG_FD) && !fd_len_ok(n))
        return -EINVAL;
    f->rx = true;
    if (s < e) { /* " R" / " T" */
        s++;
        if (s + 1 != e || (*s != 'R' && *s != 'T' && *s != 'r' && *s != 't'))
            return -EINVAL;
        f->rx = *s == 'R' || *s == 'r';
    }
    return 0;
}

int hs_rec_parse_candump(const char *buf, size_t len, const char *name, const char *iface,
                         struct hs_rec_frame **frames, uint32_t *nframes, struct hs_diag *d)
{
    size_t off = 0;
    int line = 0;
    while (off < len) {
        line++;
        const char *nl = memchr(buf + off, '\n', len - off);
        size_t l = nl ? (size_t)(nl - (buf + off)) : len - off;
        if (!nl) /* off < len, so the piece is never empty */
            return hs_diag_set(d, -EBADMSG, name, line, 0,
                               "truncated line at byte offset %zu (no newline)", off);
        size_t k = l;
        while (k && (buf[off + k - 1] == '\r' || buf[off + k - 1] == ' '))
            k--;
        if (k) {
            struct hs_rec_frame f;
            if (hs_rec_parse_candump_line(buf + off, k, &f) < 0)
                return hs_diag_set(d, -EBADMSG, name, line, 0,
                                   "not a candump log line at byte offset %zu", off);
            const char *sp = memchr(buf + off, ' ', k);
            size_t il = 0;
            while (sp && sp + 1 + il < buf + off + k && sp[1 + il] != ' ')
                il++;
            bool match = !iface || (sp && strlen(iface) == il && !memcmp(sp + 1, iface, il));
            if (match) {
                if (grow((void **)frames, sizeof **frames, *nframes, 1))
                    return hs_diag_set(d, -ENOMEM, name, line, 0, "out of memory");
                (*frames)[(*nframes)++] = f;
            }
        }
        off += l + 1;
    }
    return 0;
}

/* ---- manifest ---- */

static char *strdup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int names(json_t *arr, const char *key, char ***ret, uint32_t *ret_n, const char *mpath,
                 struct hs_diag *d)
{
    if (!json_is_array(arr))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "%s: not an array", key);
    size_t n = json_array_size(arr);
    char **v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        const char *s = json_is_string(e) ? json_string_value(e)
                                          : json_string_value(json_object_get(e, "name"));
        if (!s || !(v[i] = strdup(s))) {
            for (size_t k = 0; k < i; k++)
                free(v[k]);
            free(v);
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "%s[%zu]: no name", key, i);
        }
    }
    *ret = v;
    *ret_n = (uint32_t)n;
    return 0;
}

/* Each sensor's values in a state record: version 1 six each (x y z tx ty tz, whatever the
 * kind), version 2 the names its manifest entry lists (its kind's layout). */
static int sensor_fields(struct hs_recording *r, json_t *sensors, const char *mpath,
                         struct hs_diag *d)
{
    static const char *const v1[] = {"x", "y", "z", "tx", "ty", "tz"};
    r->sensor_nvalues = calloc(r->nsensors ? r->nsensors : 1, sizeof *r->sensor_nvalues);
    if (!r->sensor_nvalues)
        return -ENOMEM;
    uint64_t total = 0;
    for (uint32_t i = 0; i < r->nsensors; i++) {
        json_t *f = json_object_get(json_array_get(sensors, i), "fields");
        if (r->format_version == 1)
            r->sensor_nvalues[i] = 6;
        else if (json_is_array(f))
            r->sensor_nvalues[i] = (uint32_t)json_array_size(f);
        else
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "signals.sensors[%u]: no fields", i);
        total += r->sensor_nvalues[i];
    }
    if (total > (1u << 20))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "signals.sensors: too many values");
    r->sensor_fields = calloc(total ? total : 1, sizeof *r->sensor_fields);
    if (!r->sensor_fields)
        return -ENOMEM;
    r->nsensor_values = (uint32_t)total;
    for (uint32_t i = 0, k = 0; i < r->nsensors; i++) {
        json_t *f = json_object_get(json_array_get(sensors, i), "fields");
        for (uint32_t j = 0; j < r->sensor_nvalues[i]; j++, k++) {
            const char *s =
                r->format_version == 1 ? v1[j] : json_string_value(json_array_get(f, j));
            if (!s)
                return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                                   "signals.sensors[%u].fields[%u]: not a string", i, j);
            if (!(r->sensor_fields[k] = strdup(s)))
                return -ENOMEM;
        }
    }
    return 0;
}

static int load_file(struct hs_recording *r, const char *file, int kind, const char *iface,
                     uint32_t bus, struct hs_diag *d)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", r->dir, file);
    uint8_t *buf;
    size_t len;
    int rc = read_all(path, &buf, &len, d);
    if (rc < 0)
        return rc;
    if (kind == 0)
        rc = hs_rec_parse_state(r, buf, len, path, d);
    else if (kind == 1)
        rc = hs_rec_parse_items(r, buf, len, path, d);
    else
        rc = hs_rec_parse_candump((const char *)buf, len, path, iface, &r->frames[bus],
                                  &r->nframes[bus], d);
    free(buf);
    return rc;
}

static int load_segments(struct hs_recording *r, json_t *segs, json_t *buses, const char *mpath,
                         struct hs_diag *d)
{
    if (!json_is_array(segs) || json_array_size(segs) == 0)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments: missing or empty");
    /* The rotation policy may have deleted the first segments (keep_segments): the recording
     * then starts at the first kept one, whose first state's ord the manifest gives. */
    json_t *first = json_array_get(segs, 0);
    r->first_segment = (uint32_t)json_integer_value(json_object_get(first, "index"));
    if (r->first_segment) {
        json_t *fo = json_object_get(first, "first_ord");
        if (!json_is_integer(fo) || json_integer_value(fo) < 0)
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                               "segments[0]: segment %u is the first kept (keep_segments) but "
                               "has no first_ord: recorded by an older hilsim, it cannot be "
                               "placed",
                               r->first_segment);
        r->first_ord = (uint64_t)json_integer_value(fo);
    }
    r->nbuses = (uint32_t)json_array_size(buses);
    r->bus_names = calloc(r->nbuses + 1, sizeof *r->bus_names);
    r->nframes = calloc(r->nbuses + 1, sizeof *r->nframes);
    r->frames = calloc(r->nbuses + 1, sizeof *r->frames);
    if (!r->bus_names || !r->nframes || !r->frames)
        return -ENOMEM;
    for (uint32_t b = 0; b < r->nbuses; b++) {
        const char *n = json_string_value(json_object_get(json_array_get(buses, b), "name"));
        if (!n || !(r->bus_names[b] = strdup(n)))
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "can_buses[%u]: no name", b);
    }
    size_t i;
    json_t *s;
    json_array_foreach(segs, i, s)
    {
        const char *st = json_string_value(json_object_get(s, "state"));
        const char *sh = json_string_value(json_object_get(s, "shm"));
        const char *ev = json_string_value(json_object_get(s, "events"));
        if (!st || !sh || !ev)
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments[%zu]: file names missing", i);
        int rc = load_file(r, st, 0, NULL, 0, d);
        if (rc == 0)
            rc = load_file(r, sh, 1, NULL, 0, d);
        if (rc == 0)
            rc = load_file(r, ev, 1, NULL, 0, d);
        json_t *can = json_object_get(s, "can");
        for (uint32_t b = 0; rc == 0 && b < r->nbuses; b++) {
            const char *f = json_string_value(json_object_get(can, r->bus_names[b]));
            if (!f)
                return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments[%zu].can.%s: missing", i,
                                   r->bus_names[b]);
            rc = load_file(r, f, 2, NULL, b, d);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int open_parsed(const char *dir, json_t *m, const char *mpath, struct hs_recording **ret,
                       struct hs_diag *d);

static int json_error(const json_error_t *je, const char *mpath, struct hs_diag *d)
{
    return hs_diag_set(d, -EBADMSG, mpath, je->line > 0 ? je->line : 0,
                       je->column > 0 ? je->column : 0, "%s (byte offset %d)", je->text,
                       je->position);
}

int hs_recording_open(const char *dir, struct hs_recording **ret, struct hs_diag *d)
{
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    json_error_t je;
    json_t *m = json_load_file(mpath, 0, &je);
    return m ? open_parsed(dir, m, mpath, ret, d) : json_error(&je, mpath, d);
}

int hs_recording_open_manifest(const char *dir, const char *text, size_t len,
                               struct hs_recording **ret, struct hs_diag *d)
{
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    json_error_t je;
    json_t *m = json_loadb(text, len, 0, &je);
    return m ? open_parsed(dir, m, mpath, ret, d) : json_error(&je, mpath, d);
}

/* Takes m. */
static int open_parsed(const char *dir, json_t *m, const char *mpath, struct hs_recording **ret,
                       struct hs_diag *d)
{
    struct hs_recording *r = calloc(1, sizeof *r);
    int rc = r ? 0 : -ENOMEM;
    if (rc == 0 &&
        strcmp(json_string_value(json_object_get(m, "format")) ?: "", "hilsim-recording") != 0)
        rc = hs_diag_set(d, -EBADMSG, mpath, 0, 0, "not a hilsim recording manifest");
    json_int_t version = json_integer_value(json_object_get(m, "format_version"));
    if (rc == 0 && (version < 1 || version > HS__REC_VERSION))
        rc = hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                         "format_version %lld; this hilsim reads versions 1 to %u",
                         (long long)version, HS__REC_VERSION);
    if (rc < 0)
        goto out;
    r->dir = strdup(dir);
    json_t *cfg = json_object_get(m, "config");
    r->config_base_dir = strdup_or_null(json_string_value(json_object_get(cfg, "base_dir")));
    r->clock_mode = strdup_or_null(json_string_value(json_object_get(m, "clock_mode")));
    r->complete = json_is_true(json_object_get(m, "complete"));
    json_t *dr = json_object_get(m, "dropped");
    r->dropped_states = (uint64_t)json_integer_value(json_object_get(dr, "states"));
    r->dropped_items = (uint64_t)json_integer_value(json_object_get(dr, "items"));
    if ((rc = read_named(dir, json_object_get(cfg, "copy"), &r->config_text, &r->config_len, d)) <
            0 ||
        (rc = read_named(dir, json_object_get(cfg, "resolved"), &r->config_resolved_text,
                         &r->config_resolved_len, d)) < 0)
        goto out;
    r->hilsim_commit = strdup_or_null(json_string_value(json_object_get(m, "hilsim_commit")));
    json_t *sets = json_object_get(cfg, "sets");
    if (sets && (rc = names(sets, "config.sets", &r->config_sets, &r->nconfig_sets, mpath, d)) < 0)
        goto out;
    json_t *scen = json_object_get(m, "scenario");
    if ((rc = read_named(dir, json_object_get(scen, "copy"), &r->scenario_text, &r->scenario_len,
                         d)) < 0)
        goto out;
    if (r->scenario_text)
        r->scenario_base_dir = strdup_or_null(json_string_value(json_object_get(scen, "base_dir")));
    json_t *sig = json_object_get(m, "signals");
    if ((rc = names(json_object_get(sig, "joints"), "signals.joints", &r->joint_names, &r->njoints,
                    mpath, d)) < 0 ||
        (rc = names(json_object_get(sig, "sensors"), "signals.sensors", &r->sensor_names,
                    &r->nsensors, mpath, d)) < 0 ||
        (rc = names(json_object_get(sig, "bodies"), "signals.bodies", &r->body_names, &r->nbodies,
                    mpath, d)) < 0)
        goto out;
    r->format_version = (uint32_t)version;
    if ((rc = sensor_fields(r, json_object_get(sig, "sensors"), mpath, d)) < 0)
        goto out;
    r->state_stride = r->njoints * HS_REC_JOINT_FIELDS + r->nsensor_values + r->nbodies * 7;
    rc =
        load_segments(r, json_object_get(m, "segments"), json_object_get(m, "can_buses"), mpath, d);
    if (rc == 0 && r->nstates && r->count_buses != r->nbuses + (r->nbuses & 1))
        rc = hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                         "the state records count frames of %u buses; the manifest names %u",
                         r->count_buses, r->nbuses);
out:
    json_decref(m);
    if (rc < 0) {
        hs_recording_free(r);
        return rc;
    }
    *ret = r;
    return 0;
}

static void free_names(char **v, uint32_t n)
{
    for (uint32_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void hs_recording_free(struct hs_recording *r)
{
    if (!r)
        return;
    free(r->dir);
    free(r->config_text);
    free(r->config_resolved_text);
    free(r->hilsim_commit);
    free(r->config_base_dir);
    free_names(r->config_sets, r->nconfig_sets);
    free(r->scenario_text);
    free(r->scenario_base_dir);
    free(r->clock_mode);
    free_names(r->joint_names, r->njoints);
    free_names(r->sensor_names, r->nsensors);
    free(r->sensor_nvalues);
    free_names(r->sensor_fields, r->nsensor_values);
    free_names(r->body_names, r->nbodies);
    free(r->ticks);
    free(r->now_ns);
    free(r->real_ns);
    free(r->flags);
    free(r->values);
    free(r->rx_counts);
    free(r->shm);
    free(r->events);
    for (uint32_t b = 0; r->frames && b < r->nbuses; b++)
        free(r->frames[b]);
    free(r->frames);
    free(r->nframes);
    free_names(r->bus_names, r->nbuses);
    free(r);
}

int hs_recording_signal_name(const struct hs_recording *r, uint32_t k, char *buf, size_t size)
{
    static const char *const jf[] = {"q",       "dq",      "tau",      "current",
                                     "enc_pos", "enc_vel", "enc_count"};
    static const char *const bf[] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
    uint32_t nj = r->njoints * HS_REC_JOINT_FIELDS, ns = r->nsensor_values;
    if (k < nj)
        return snprintf(buf, size, "%s.%s", r->joint_names[k / HS_REC_JOINT_FIELDS],
                        jf[k % HS_REC_JOINT_FIELDS]);
    k -= nj;
    if (k < ns) {
        uint32_t i = 0, f = k;
        while (i < r->nsensors && f >= r->sensor_nvalues[i])
            f -= r->sensor_nvalues[i++];
        if (i == r->nsensors || !r->sensor_fields)
            return -ENOENT;
        return snprintf(buf, size, "%s.%s", r->sensor_names[i], r->sensor_fields[k]);
    }
    k -= ns;
    if (k < r->nbodies * 7)
        return snprintf(buf, size, "%s.%s", r->body_names[k / 7], bf[k % 7]);
    return -ENOENT;
}

int hs_recording_find_signal(const struct hs_recording *r, const char *name)
{
    char buf[256];
    for (uint32_t k = 0; k < r->state_stride; k++)
        if (hs_recording_signal_name(r, k, buf, sizeof buf) >= 0 && !strcmp(buf, name))
            return (int)k;
    return -ENOENT;
}
