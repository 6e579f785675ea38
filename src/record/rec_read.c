/* Reading a recording back: the manifest, then every segment's files, each checked byte by
 * byte (magic, version, sizes, each record's CRC, each candump line's syntax). Whatever does
 * not check out is an error naming the file and the byte offset (or line), never a silently
 * shorter recording. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hilsim/can.h"
#include "hilsim/file_open.h"
#include "rec_internal.h"

/* A file the manifest names is a plain name in the recording's folder: no '/', not "." or
 * "..", so "../../etc/passwd" never leaves it. */
static bool plain_name(const char *f)
{
    return f && f[0] && !strchr(f, '/') && strcmp(f, ".") && strcmp(f, "..") && strlen(f) < 256;
}

/* The whole file: a regular file (no FIFO, device or symbolic link: the writer makes none),
 * at most max bytes (the README's bounds), NUL-terminated. */
static int read_all(const char *path, size_t max, uint8_t **ret, size_t *ret_len, struct hs_diag *d)
{
    int rc = hs_read_regular(path, HS_OPEN_NOFOLLOW, max, ret, ret_len);
    if (rc == -EFBIG)
        return hs_diag_set(d, rc, path, 0, 0, "larger than the %zu bytes a reader takes", max);
    if (rc < 0)
        return hs_diag_set(d, rc, path, 0, 0, "cannot open: %s", hs_open_regular_strerror(rc));
    return 0;
}

/* A text file the manifest names (NULL or absent: none, *ret stays NULL), read whole. */
static int read_named(const char *dir, const json_t *name, const char *key, char **ret,
                      size_t *ret_len, const char *mpath, struct hs_diag *d)
{
    if (!name || json_is_null(name))
        return 0;
    const char *file = json_string_value(name);
    if (!plain_name(file))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "%s: not a file name in the recording's folder", key);
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    uint8_t *buf;
    int rc = read_all(p, HS_REC_TEXT_FILE_MAX, &buf, ret_len, d);
    if (rc == 0)
        *ret = (char *)buf;
    return rc;
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
                if (hs__rec_grow((void **)frames, sizeof **frames, *nframes, 1))
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
        if (!s || strlen(s) >= HS_REC_NAME_MAX || !(v[i] = strdup(s))) {
            for (size_t k = 0; k < i; k++)
                free(v[k]);
            free(v);
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                               "%s[%zu]: no name (or longer than %u bytes)", key, i,
                               HS_REC_NAME_MAX - 1);
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

/* A binary file no bigger than the machine's memory: anything larger cannot be replayed, and
 * refusing it at the fstat keeps a sparse or hostile file from exhausting memory. */
static size_t binary_max(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psize <= 0)
        return (size_t)1 << 32;
    uint64_t b = (uint64_t)pages * (uint64_t)psize;
    return b >= SIZE_MAX ? SIZE_MAX - 1 : (size_t)b;
}

/* A candump log; salvaging, a last line the crash cut short (no newline) ends the log. */
static int parse_log(struct hs_recording *r, const char *buf, size_t len, const char *path,
                     uint32_t bus, struct hs_diag *d)
{
    size_t whole = len;
    if (r->salvage && len && buf[len - 1] != '\n') {
        const char *nl = memrchr(buf, '\n', len);
        whole = nl ? (size_t)(nl - buf) + 1 : 0;
        hs__rec_damage(r, d, path, whole, "truncated line (no newline)");
    }
    return hs_rec_parse_candump(buf, whole, path, NULL, &r->frames[bus], &r->nframes[bus], d);
}

/* A version 3 file too large to read whole: is it another run's (its header alone says)? */
static bool foreign(struct hs_recording *r, const char *path, struct hs_diag *d)
{
    int fd;
    struct hs__rec_file_header3 h;
    if (r->format_version < 3 || hs__rec_zero_id(r->run_id) ||
        hs_open_regular_flags(path, HS_OPEN_NOFOLLOW, &fd, NULL) < 0)
        return false;
    bool got = pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
    close(fd);
    if (!got || h.h.version < 3 || !memcmp(h.run_id, r->run_id, 16))
        return false;
    char a[33], b[33];
    hs__rec_hex_id(h.run_id, a);
    hs__rec_hex_id(r->run_id, b);
    hs_diag_set(d, -EBADMSG, path, 0, 0,
                "run_id %s at byte offset 32 is not the manifest's run_id %s: a file of another "
                "run",
                a, b);
    return true;
}

/* A closed version 3 file's size by its own header (0: unknown, read up to memory): without a
 * bound from the manifest (a crashed run's), the header still bounds the read. */
static size_t header_bound(const struct hs_recording *r, const char *path)
{
    int fd;
    struct hs__rec_file_header3 h;
    if (r->format_version < 3 || hs_open_regular_flags(path, HS_OPEN_NOFOLLOW, &fd, NULL) < 0)
        return 0;
    bool got = pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
    close(fd);
    if (!got || h.h.version < 3 || h.records == HS__REC_OPEN)
        return 0;
    uint32_t crc = h.header_crc;
    h.header_crc = 0;
    if (hs__rec_crc32(&h, sizeof h) != crc || h.body_bytes > binary_max() - sizeof h)
        return 0; /* the parser says what is wrong with it */
    return sizeof h + (size_t)h.body_bytes;
}

/* One file of a segment, read whole up to max bytes (the manifest's segments[i].bytes.KEY;
 * 0: the machine's memory) so a file grown since its segment closed is refused unread. */
static int load_file(struct hs_recording *r, const char *file, int kind, uint32_t bus, size_t max,
                     size_t i, const char *key, struct hs_diag *d)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", r->dir, file);
    uint8_t *buf;
    size_t len;
    size_t hmax = !max && kind < 2 ? header_bound(r, path) : 0;
    int rc = read_all(path, max ? max : hmax ? hmax : binary_max(), &buf, &len, d);
    if (rc == -ENOENT && r->salvage) /* a crash between creating a segment's files */
        return hs__rec_damage(r, d, path, 0, "missing file");
    if (rc == -EFBIG && hmax && !foreign(r, path, d))
        return hs_diag_set(d, -EBADMSG, path, 0, 0,
                           "larger than the %zu bytes its header says (body_bytes at byte offset "
                           "64)",
                           hmax);
    if (rc == -EFBIG && hmax)
        return -EBADMSG;
    if (rc == -EFBIG && max && key && foreign(r, path, d))
        return -EBADMSG; /* a file of another run: say that rather than its size */
    if (rc == -EFBIG && max && key)
        return hs_diag_set(d, rc, path, 0, 0,
                           "larger than the %zu bytes the manifest's segments[%zu].bytes.%s says",
                           max, i, key);
    if (rc < 0)
        return rc;
    size_t hmin = r->format_version >= 3 ? sizeof(struct hs__rec_file_header3)
                                         : sizeof(struct hs__rec_file_header);
    if (kind < 2 && len < hmin && r->salvage)
        rc = hs__rec_damage(r, d, path, len, "truncated file header");
    else if (kind == 0)
        rc = hs_rec_parse_state(r, buf, len, path, d);
    else if (kind == 1)
        rc = hs_rec_parse_items(r, buf, len, path, d);
    else
        rc = parse_log(r, (const char *)buf, len, path, bus, d);
    free(buf);
    return rc;
}

/* A candump log of a closed segment: no larger than the manifest's can_bytes says, and the
 * bytes whose SHA-256 it holds (can_sha256): another run's log, or one changed since, is
 * refused rather than fed as this run's. Without them (an open segment, an older recording),
 * as any log. */
static int load_log(struct hs_recording *r, const char *file, uint32_t b, json_t *bytes,
                    json_t *sha, size_t i, const char *mpath, struct hs_diag *d)
{
    const char *bus = r->bus_names[b], *want = json_string_value(sha);
    if (bytes && (!json_is_integer(bytes) || json_integer_value(bytes) < 0))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "segments[%zu].can_bytes.%s: not a non-negative integer", i, bus);
    if (sha && (!want || strlen(want) != 64))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "segments[%zu].can_sha256.%s: not a SHA-256 (64 hex digits)", i, bus);
    if (!bytes || !want)
        return load_file(r, file, 2, b, 0, i, NULL, d);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", r->dir, file);
    size_t max = (size_t)json_integer_value(bytes);
    uint8_t *buf;
    size_t len;
    int rc = hs_read_regular(path, HS_OPEN_NOFOLLOW, max, &buf, &len);
    if (rc == -EFBIG)
        return hs_diag_set(d, -EBADMSG, path, 0, 0,
                           "larger than the %zu bytes the manifest's segments[%zu].can_bytes.%s "
                           "says",
                           max, i, bus);
    if (rc < 0)
        return hs_diag_set(d, rc, path, 0, 0, "cannot open: %s", hs_open_regular_strerror(rc));
    char got[65];
    hs__rec_sha256_buf(buf, len, got);
    if (strcasecmp(got, want) != 0) {
        free(buf);
        return hs_diag_set(d, -EBADMSG, path, 0, 0,
                           "its SHA-256 %s is not the manifest's segments[%zu].can_sha256.%s %s: "
                           "not the log this run wrote (another run's, or changed since)",
                           got, i, bus, want);
    }
    rc = parse_log(r, (const char *)buf, len, path, b, d);
    free(buf);
    return rc;
}

/* A segment's file name as the writer makes it: the only name a reader follows. */
static int seg_file(json_t *s, const char *key, const char *base, uint32_t index, const char *ext,
                    size_t i, const char *mpath, const char **ret, struct hs_diag *d)
{
    char want[HS_REC_NAME_MAX + 32];
    hs__rec_seg_name(want, sizeof want, base, index, ext);
    const char *f = json_string_value(json_object_get(s, key));
    if (!f)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments[%zu].%s: file name missing", i, key);
    if (!plain_name(f) || strcmp(f, want) != 0)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "segments[%zu].%s: '%.64s' is not this segment's file (%s)", i, key, f,
                           want);
    *ret = f;
    return 0;
}

/* A non-negative integer field (first_tick, first_ord): absent is -1, anything else refused. */
static int seg_count(json_t *s, const char *key, size_t i, const char *mpath, int64_t *ret,
                     struct hs_diag *d)
{
    json_t *v = json_object_get(s, key);
    *ret = -1;
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments[%zu].%s: not a non-negative integer",
                           i, key);
    *ret = json_integer_value(v);
    return 0;
}

/* The manifest's bound on one of a segment's files (segments[i].bytes.KEY; 0: none given). */
static int seg_bound(json_t *s, const char *key, size_t i, const char *mpath, size_t *ret,
                     struct hs_diag *d)
{
    json_t *v = json_object_get(json_object_get(s, "bytes"), key);
    *ret = 0;
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 32)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "segments[%zu].bytes.%s: not a file size of at least 32", i, key);
    *ret = (size_t)json_integer_value(v);
    return 0;
}

/* The records a closed segment's file holds (segments[i].records.KEY), checked against what
 * was read; -1: not given (an older writer, or the segment the run crashed in). */
static int seg_records(json_t *s, const char *key, size_t i, uint64_t got, const char *file,
                       const char *mpath, struct hs_diag *d)
{
    json_t *v = json_object_get(json_object_get(s, "records"), key);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "segments[%zu].records.%s: not a non-negative integer", i, key);
    if ((uint64_t)json_integer_value(v) != got)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments[%zu].records.%s %lld: %s holds %llu",
                           i, key, (long long)json_integer_value(v), file, (unsigned long long)got);
    return 0;
}

/* A segment the manifest does not list, named as the writer names it. */
static json_t *unlisted_entry(const struct hs_recording *r, uint32_t index)
{
    char n[HS_REC_NAME_MAX + 32];
    json_t *o = json_object(), *can = json_object();
    json_object_set_new(o, "index", json_integer(index));
    hs__rec_seg_name(n, sizeof n, "state", index, "bin");
    json_object_set_new(o, "state", json_string(n));
    hs__rec_seg_name(n, sizeof n, "shm", index, "bin");
    json_object_set_new(o, "shm", json_string(n));
    hs__rec_seg_name(n, sizeof n, "events", index, "bin");
    json_object_set_new(o, "events", json_string(n));
    for (uint32_t b = 0; b < r->nbuses; b++) {
        char base[HS_REC_NAME_MAX];
        snprintf(base, sizeof base, "can-%s", r->bus_names[b]);
        hs__rec_seg_name(n, sizeof n, base, index, "log");
        json_object_set_new(can, r->bus_names[b], json_string(n));
    }
    json_object_set_new(o, "can", can);
    return o;
}

static int load_segment(struct hs_recording *r, json_t *s, size_t i, uint32_t index,
                        const char *mpath, struct hs_diag *d)
{
    const char *st, *sh, *ev;
    int64_t ft, fo;
    size_t bst, bsh, bev;
    int rc;
    if ((rc = seg_file(s, "state", "state", index, "bin", i, mpath, &st, d)) < 0 ||
        (rc = seg_file(s, "shm", "shm", index, "bin", i, mpath, &sh, d)) < 0 ||
        (rc = seg_file(s, "events", "events", index, "bin", i, mpath, &ev, d)) < 0 ||
        (rc = seg_count(s, "first_tick", i, mpath, &ft, d)) < 0 ||
        (rc = seg_count(s, "first_ord", i, mpath, &fo, d)) < 0 ||
        (rc = seg_bound(s, "state", i, mpath, &bst, d)) < 0 ||
        (rc = seg_bound(s, "shm", i, mpath, &bsh, d)) < 0 ||
        (rc = seg_bound(s, "events", i, mpath, &bev, d)) < 0)
        return rc;
    r->cur_segment = index;
    uint32_t before = r->nstates;
    rc = load_file(r, st, 0, 0, bst, i, "state", d);
    if (rc == 0 && r->nstates > before && ft >= 0 && r->ticks[before] != (uint64_t)ft)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "segments[%zu].first_tick %lld: %s begins at tick %llu", i,
                           (long long)ft, st, (unsigned long long)r->ticks[before]);
    if (rc == 0 && r->nstates > before && fo >= 0 && !r->dropped_states &&
        r->first_ord + before != (uint64_t)fo)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "segments[%zu].first_ord %lld: %s holds state %llu", i, (long long)fo,
                           st, (unsigned long long)r->first_ord + (unsigned long long)before);
    if (rc == 0 && !r->damaged)
        rc = seg_records(s, "state", i, r->nstates - before, st, mpath, d);
    uint32_t items = r->nshm + r->nevents;
    if (rc == 0)
        rc = load_file(r, sh, 1, 0, bsh, i, "shm", d);
    if (rc == 0 && !r->damaged)
        rc = seg_records(s, "shm", i, r->nshm + r->nevents - items, sh, mpath, d);
    items = r->nshm + r->nevents;
    if (rc == 0)
        rc = load_file(r, ev, 1, 0, bev, i, "events", d);
    if (rc == 0 && !r->damaged)
        rc = seg_records(s, "events", i, r->nshm + r->nevents - items, ev, mpath, d);
    json_t *can = json_object_get(s, "can"), *cb = json_object_get(s, "can_bytes"),
           *cs = json_object_get(s, "can_sha256");
    for (uint32_t b = 0; rc == 0 && b < r->nbuses; b++) {
        char base[HS_REC_NAME_MAX];
        snprintf(base, sizeof base, "can-%s", r->bus_names[b]);
        const char *f;
        if ((rc = seg_file(can, r->bus_names[b], base, index, "log", i, mpath, &f, d)) < 0)
            return rc;
        rc = load_log(r, f, b, json_object_get(cb, r->bus_names[b]),
                      json_object_get(cs, r->bus_names[b]), i, mpath, d);
    }
    return rc;
}

static int load_segments(struct hs_recording *r, json_t *segs, json_t *buses, const char *mpath,
                         struct hs_diag *d)
{
    if (!json_is_array(segs) || json_array_size(segs) == 0)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments: missing or empty");
    if (json_array_size(segs) > HS_REC_SEGMENTS_MAX)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments: %zu listed, at most %u read",
                           json_array_size(segs), HS_REC_SEGMENTS_MAX);
    /* The rotation policy may have deleted the first segments (keep_segments): the recording
     * then starts at the first kept one, whose first state's ord the manifest gives. */
    json_t *first = json_array_get(segs, 0);
    json_t *fi = json_object_get(first, "index");
    if (!json_is_integer(fi) || json_integer_value(fi) < 0 ||
        json_integer_value(fi) >= HS_REC_SEGMENTS_MAX * 1000ll)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments[0].index: not a segment number");
    r->first_segment = (uint32_t)json_integer_value(fi);
    if (r->first_segment) {
        int64_t fo;
        int rc = seg_count(first, "first_ord", 0, mpath, &fo, d);
        if (rc < 0)
            return rc;
        if (fo < 0)
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                               "segments[0]: segment %u is the first kept (keep_segments) but "
                               "has no first_ord: recorded by an older hilsim, it cannot be "
                               "placed",
                               r->first_segment);
        r->first_ord = (uint64_t)fo;
    }
    if (json_array_size(buses) > HS__REC_MAX_BUSES)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "can_buses: %zu, at most %u recorded",
                           json_array_size(buses), HS__REC_MAX_BUSES);
    r->nbuses = (uint32_t)json_array_size(buses);
    r->bus_names = calloc(r->nbuses + 1, sizeof *r->bus_names);
    r->nframes = calloc(r->nbuses + 1, sizeof *r->nframes);
    r->frames = calloc(r->nbuses + 1, sizeof *r->frames);
    if (!r->bus_names || !r->nframes || !r->frames)
        return -ENOMEM;
    for (uint32_t b = 0; b < r->nbuses; b++) {
        const char *n = json_string_value(json_object_get(json_array_get(buses, b), "name"));
        if (!n || !plain_name(n) || strlen(n) >= HS_REC_NAME_MAX - 8)
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                               "can_buses[%u].name: missing or not a "
                               "bus name",
                               b);
        if (!(r->bus_names[b] = strdup(n)))
            return -ENOMEM;
    }
    size_t i;
    json_t *s;
    json_array_foreach(segs, i, s)
    {
        /* consecutive, each its own files: a list cannot name one file twice */
        json_t *ix = json_object_get(s, "index");
        if (!json_is_integer(ix) ||
            json_integer_value(ix) != (json_int_t)r->first_segment + (json_int_t)i)
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "segments[%zu].index: %u expected", i,
                               (unsigned)(r->first_segment + i));
        int rc = load_segment(r, s, i, (uint32_t)(r->first_segment + i), mpath, d);
        if (rc < 0)
            return rc;
        if (r->damaged) /* a crash: what follows the damage was never written whole */
            return 0;
    }
    /* A crash between the writer creating the next segment's files and rewriting the manifest
     * leaves a segment the manifest does not list: found by the writer's naming rule, and
     * taken only when its headers carry this run's id and its segment number. */
    for (uint32_t index = r->first_segment + (uint32_t)json_array_size(segs);
         r->salvage && r->format_version >= 3 && !r->damaged && index < HS_REC_SEGMENTS_MAX;
         index++) {
        char st[64], path[4096];
        struct stat sb;
        hs__rec_seg_name(st, sizeof st, "state", index, "bin");
        snprintf(path, sizeof path, "%s/%s", r->dir, st);
        if (lstat(path, &sb) != 0)
            break;
        json_t *seg = unlisted_entry(r, index);
        if (!seg)
            return -ENOMEM;
        int rc = load_segment(r, seg, i, index, mpath, d);
        json_decref(seg);
        if (rc < 0)
            return rc;
        if (!r->unlisted[0])
            snprintf(r->unlisted, sizeof r->unlisted,
                     "segment %u (%s) is not in the manifest (the run crashed before rewriting "
                     "it): read by the writer's naming rule and the run id",
                     index, st);
        i++;
    }
    return 0;
}

/* After damage: keep only the ticks whose inputs survived too. Items of later ticks go; a
 * tick whose received frames the log lost (the log was cut before them) ends the recording. */
static void trim_salvaged(struct hs_recording *r)
{
    uint64_t rx_have[HS__REC_MAX_BUSES] = {0}, rx_need[HS__REC_MAX_BUSES] = {0};
    for (uint32_t b = 0; b < r->nbuses && b < HS__REC_MAX_BUSES; b++)
        for (uint32_t k = 0; k < r->nframes[b]; k++)
            rx_have[b] += r->frames[b][k].rx;
    uint32_t n = 0;
    for (; n < r->nstates; n++) {
        bool ok = true;
        for (uint32_t b = 0; r->rx_counts && b < r->nbuses && b < r->count_buses; b++) {
            rx_need[b] += r->rx_counts[(size_t)n * r->count_buses + b];
            ok = ok && rx_need[b] <= rx_have[b];
        }
        if (!ok)
            break;
    }
    if (n < r->nstates && !r->damage[0])
        snprintf(r->damage, sizeof r->damage, "the CAN log ends before tick %llu's frames",
                 (unsigned long long)r->ticks[n]);
    r->nstates = n;
    if (r->dropped_states) /* ords count dropped states too: the items cannot be placed */
        return;
    uint64_t end = r->first_ord + n;
    uint32_t k = 0;
    for (uint32_t i = 0; i < r->nshm; i++)
        if (r->shm[i].ord < end)
            r->shm[k++] = r->shm[i];
    r->nshm = k;
    k = 0;
    for (uint32_t i = 0; i < r->nevents; i++)
        if (r->events[i].ord < end)
            r->events[k++] = r->events[i];
    r->nevents = k;
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
    uint8_t *text;
    size_t len;
    int rc = read_all(mpath, HS_REC_MANIFEST_MAX, &text, &len, d);
    if (rc < 0)
        return rc;
    rc = hs_recording_open_manifest(dir, (const char *)text, len, ret, d);
    free(text);
    return rc;
}

int hs_recording_open_manifest(const char *dir, const char *text, size_t len,
                               struct hs_recording **ret, struct hs_diag *d)
{
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    json_error_t je;
    if (len > HS_REC_MANIFEST_MAX)
        return hs_diag_set(d, -EFBIG, mpath, 0, 0, "larger than the %u bytes a reader takes",
                           HS_REC_MANIFEST_MAX);
    json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    return m ? open_parsed(dir, m, mpath, ret, d) : json_error(&je, mpath, d);
}

/* The fields a replay trusts, each checked for what it can be (the writer's ranges). */
static int check_fields(struct hs_recording *r, json_t *m, const char *mpath, struct hs_diag *d)
{
    json_t *b = json_object_get(m, "bench");
    if (b && (!json_is_string(b) || json_string_length(b) >= HS_REC_NAME_MAX))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "bench: not a name of at most %u bytes",
                           HS_REC_NAME_MAX - 1);
    json_t *p = json_object_get(m, "period_ns");
    if (p &&
        (!json_is_integer(p) || json_integer_value(p) < 1000 || json_integer_value(p) > 1000000000))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "period_ns: not an integer from 1000 (1 us) to 1e9 (1 s)");
    r->period_ns = p ? json_integer_value(p) : 0;
    json_t *c = json_object_get(m, "complete");
    if (c && !json_is_boolean(c))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "complete: not true or false");
    static const char *const counts[] = {"ticks", "warmup_ticks"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(m, counts[i]);
        if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "%s: not a non-negative integer",
                               counts[i]);
    }
    json_t *dr = json_object_get(m, "dropped");
    static const char *const dk[] = {"states", "items"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(dr, dk[i]);
        if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "dropped.%s: not a non-negative integer",
                               dk[i]);
    }
    json_t *ticks = json_object_get(m, "ticks");
    r->manifest_ticks = ticks ? json_integer_value(ticks) : -1;
    return 0;
}

/* The manifest was written by the run whose states these are: the recorder takes
 * start_realtime_ns before the first tick and end_realtime_ns after the last, and each state
 * carries its tick's CLOCK_REALTIME. Another run's manifest fails one side (a later run's
 * start, a finished earlier run's end); only a run recorded at the same time on another bench
 * passes, and a wall clock stepped back during the run is refused too (the message says why). */
static int check_times(struct hs_recording *r, json_t *m, const char *mpath, struct hs_diag *d)
{
    const int64_t slack = 0;
    json_t *st = json_object_get(m, "start_realtime_ns"),
           *en = json_object_get(m, "end_realtime_ns");
    if ((st && !json_is_integer(st)) || (en && !json_is_integer(en)))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "%s: not an integer",
                           st && !json_is_integer(st) ? "start_realtime_ns" : "end_realtime_ns");
    if (!r->nstates)
        return 0;
    int64_t first = r->real_ns[0], last = r->real_ns[r->nstates - 1];
    if (st && first < json_integer_value(st) - slack)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "start_realtime_ns %lld is after the first state's time %lld: this "
                           "manifest is not the one of these files (another run's?)",
                           (long long)json_integer_value(st), (long long)first);
    if (en && r->complete && last > json_integer_value(en) + slack)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                           "end_realtime_ns %lld is before the last state's time %lld: this "
                           "manifest is not the one of these files (another run's?)",
                           (long long)json_integer_value(en), (long long)last);
    return 0;
}

/* Version 3: 32 hex digits, the id in every binary file's header. */
static int parse_run_id(struct hs_recording *r, json_t *v, const char *mpath, struct hs_diag *d)
{
    const char *t = json_string_value(v);
    if (!t || strlen(t) != 32)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "run_id: not 32 hex digits");
    for (int k = 0; k < 16; k++) {
        int hi = hexval(t[2 * k]), lo = hexval(t[2 * k + 1]);
        if (hi < 0 || lo < 0)
            return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "run_id: not 32 hex digits");
        r->run_id[k] = (uint8_t)(hi << 4 | lo);
    }
    if (hs__rec_zero_id(r->run_id))
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "run_id: all zero");
    return 0;
}

int hs__rec_check_copy_mark(const struct hs_recording *r, const char *text, size_t len,
                            const char *path, struct hs_diag *d)
{
    if (!text || r->format_version < 3)
        return 0;
    char want[33];
    hs__rec_hex_id(r->run_id, want);
    const char *t = text;
    size_t n = len, ml = strlen(HS_REC_COPY_MARK);
    if (n >= 3 && !memcmp(t, "\xef\xbb\xbf", 3))
        t += 3, n -= 3;
    bool hex = n >= ml + 32 && !memcmp(t, HS_REC_COPY_MARK, ml);
    for (size_t k = 0; hex && k < 32; k++)
        hex = hexval(t[ml + k]) >= 0;
    if (hex && strncasecmp(t + ml, want, 32) != 0)
        return hs_diag_set(d, -EBADMSG, path, 1, 0,
                           "run_id %.32s in its first line is not the manifest's run_id %s: a "
                           "copy of another run",
                           t + ml, want);
    return 0;
}

/* A copy a version 3 run kept (config.yaml, config-resolved.yaml, scenario.yaml): its first line
 * names the run and the manifest holds the SHA-256 of its bytes. A copy of another run, or one
 * changed since, would have the replay build another bench or play another scenario than the
 * run did, and still call it the run's. */
static int check_copy(const struct hs_recording *r, json_t *name, const char *text, size_t len,
                      json_t *sha, const char *key, const char *mpath, struct hs_diag *d)
{
    if (!text || r->format_version < 3)
        return 0;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", r->dir ? r->dir : ".", json_string_value(name));
    int rc = hs__rec_check_copy_mark(r, text, len, p, d);
    if (rc < 0 || !sha)
        return rc;
    const char *w = json_string_value(sha);
    if (!w || strlen(w) != 64)
        return hs_diag_set(d, -EBADMSG, mpath, 0, 0, "%s: not a SHA-256 (64 hex digits)", key);
    char got[65];
    hs__rec_sha256_buf(text, len, got);
    if (strcasecmp(got, w) != 0)
        return hs_diag_set(d, -EBADMSG, p, 0, 0,
                           "its SHA-256 %s is not the manifest's %s %s: the copy changed since "
                           "the run",
                           got, key, w);
    return 0;
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
    r->salvage = !r->complete; /* a crashed run: recover what was written whole */
    json_t *dr = json_object_get(m, "dropped");
    r->dropped_states = (uint64_t)json_integer_value(json_object_get(dr, "states"));
    r->dropped_items = (uint64_t)json_integer_value(json_object_get(dr, "items"));
    if ((rc = check_fields(r, m, mpath, d)) < 0 ||
        (rc = read_named(dir, json_object_get(cfg, "copy"), "config.copy", &r->config_text,
                         &r->config_len, mpath, d)) < 0 ||
        (rc = read_named(dir, json_object_get(cfg, "resolved"), "config.resolved",
                         &r->config_resolved_text, &r->config_resolved_len, mpath, d)) < 0)
        goto out;
    r->hilsim_commit = strdup_or_null(json_string_value(json_object_get(m, "hilsim_commit")));
    json_t *sets = json_object_get(cfg, "sets");
    if (sets && (rc = names(sets, "config.sets", &r->config_sets, &r->nconfig_sets, mpath, d)) < 0)
        goto out;
    json_t *scen = json_object_get(m, "scenario");
    if ((rc = read_named(dir, json_object_get(scen, "copy"), "scenario.copy", &r->scenario_text,
                         &r->scenario_len, mpath, d)) < 0)
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
    if (version >= 3 && (rc = parse_run_id(r, json_object_get(m, "run_id"), mpath, d)) < 0)
        goto out;
    if ((rc = check_copy(r, json_object_get(cfg, "copy"), r->config_text, r->config_len,
                         json_object_get(cfg, "copy_sha256"), "config.copy_sha256", mpath, d)) <
            0 ||
        (rc = check_copy(r, json_object_get(cfg, "resolved"), r->config_resolved_text,
                         r->config_resolved_len, json_object_get(cfg, "resolved_sha256"),
                         "config.resolved_sha256", mpath, d)) < 0 ||
        (rc = check_copy(r, json_object_get(scen, "copy"), r->scenario_text, r->scenario_len,
                         json_object_get(scen, "copy_sha256"), "scenario.copy_sha256", mpath, d)) <
            0)
        goto out;
    if ((rc = sensor_fields(r, json_object_get(sig, "sensors"), mpath, d)) < 0)
        goto out;
    r->state_stride = r->njoints * HS_REC_JOINT_FIELDS + r->nsensor_values + r->nbodies * 7;
    rc =
        load_segments(r, json_object_get(m, "segments"), json_object_get(m, "can_buses"), mpath, d);
    if (rc == 0 && r->nstates && r->count_buses != r->nbuses + (r->nbuses & 1))
        rc = hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                         "the state records count frames of %u buses; the manifest names %u",
                         r->count_buses, r->nbuses);
    /* A finished run's manifest counts what it wrote: the files must hold exactly that (another
     * run's files, or a file cut short, do not). */
    uint64_t written = (uint64_t)(r->manifest_ticks < 0 ? 0 : r->manifest_ticks);
    written = written > r->dropped_states ? written - r->dropped_states : 0;
    if (rc == 0 && r->complete && r->manifest_ticks >= 0 && !r->first_segment &&
        !json_object_get(m, "write_error") && r->nstates != written)
        rc = hs_diag_set(d, -EBADMSG, mpath, 0, 0,
                         "ticks: the manifest says %llu states were written (%lld pushed, %llu "
                         "dropped), the state files hold %u",
                         (unsigned long long)written, (long long)r->manifest_ticks,
                         (unsigned long long)r->dropped_states, r->nstates);
    if (rc == 0 && r->damaged)
        trim_salvaged(r);
    if (rc == 0)
        rc = check_times(r, m, mpath, d);
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
    /* the names every CSV uses (docs/recording.md, "CSV columns"); the manifest keeps the
     * stored format's short ones */
    static const char *const jf[] = {
        "q", "dq", "tau", "current_A", "encoder_position", "encoder_velocity", "encoder_count"};
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
