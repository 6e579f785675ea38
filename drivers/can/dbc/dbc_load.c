/* Loading a DBC: the file read (bounded, regular files only), the statement loop, and the
 * cross-statement rules applied once everything is read (left-out signals compacted away, bare
 * "m" resolved, CAN FD or classic, multiplexing), then the result sorted for lookup. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbc_internal.h"

typedef struct hs__dbc_build build_t;
typedef struct hs__dbc_msg_build msg_build_t;

static int cmp_msg(const void *x, const void *y)
{
    const struct hs_dbc_message *a = x, *c = y;
    if (a->extended != c->extended)
        return a->extended ? 1 : -1;
    return a->id < c->id ? -1 : a->id > c->id;
}

static int cmp_warn(const void *x, const void *y)
{
    const struct hs_dbc_warning *a = x, *c = y;
    if (a->line != c->line)
        return a->line < c->line ? -1 : 1;
    if (a->column != c->column)
        return a->column < c->column ? -1 : 1;
    return a->msg < c->msg ? -1 : a->msg > c->msg; /* strdup order = report order */
}

/* Leaves out the signals marked dropped, keeping the order of the rest. */
static void compact_signals(msg_build_t *mb)
{
    unsigned k = 0;
    for (unsigned i = 0; i < mb->m.n_signals; i++) {
        if (mb->dropped_sig[i])
            hs__dbc_free_signal(&mb->sig[i]);
        else
            mb->sig[k++] = mb->sig[i];
    }
    mb->m.n_signals = k;
    if (!k) { /* every signal left out: the array goes, hs_dbc_free only sees m.signals */
        free(mb->sig);
        mb->sig = NULL;
        mb->cap = 0;
    }
    mb->m.signals = mb->sig;
    mb->n_dropped = 0;
}

/* One bare "m" in a message without an M is its multiplexor; otherwise bare ones are plain. */
static void resolve_bare_m(build_t *b, msg_build_t *mb)
{
    unsigned explicit_m = 0, bare = 0;
    for (unsigned k = 0; k < mb->m.n_signals; k++) {
        explicit_m += mb->sig[k].mux == HS_DBC_MULTIPLEXOR;
        bare += mb->sig[k].mux == (enum hs_dbc_mux)HS__DBC_BARE_M;
    }
    for (unsigned k = 0; k < mb->m.n_signals; k++) {
        struct hs_dbc_signal *sg = &mb->sig[k];
        if (sg->mux != (enum hs_dbc_mux)HS__DBC_BARE_M)
            continue;
        sg->mux = (!explicit_m && bare == 1) ? HS_DBC_MULTIPLEXOR : HS_DBC_PLAIN;
        if (sg->mux == HS_DBC_PLAIN)
            hs__dbc_warn(b, sg->line, 0,
                         "signal %s: bare 'm' taken as a plain signal (message %s has another "
                         "multiplexor)",
                         sg->name, mb->m.name);
    }
}

static int msg_err(build_t *b, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int msg_err(build_t *b, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = hs_diag_vset(b->s.d, -EINVAL, b->s.name, line, col, fmt, ap);
    va_end(ap);
    return r;
}

/* CAN FD or not: the message's VFrameFormat, else the file's default, else its length. */
static int frame_format(build_t *b, msg_build_t *mb)
{
    struct hs_dbc_message *m = &mb->m;
    int fd = mb->fd >= 0 ? mb->fd : b->vff_default;
    if (m->length > 8 && fd == 0)
        return msg_err(b, mb->len_line, mb->len_col,
                       "message %s: length %u needs CAN FD but VFrameFormat says classic CAN",
                       m->name, m->length);
    if (m->length > 8 && fd < 0)
        hs__dbc_warn(b, mb->len_line, mb->len_col,
                     "message %s: length %u taken as CAN FD (no VFrameFormat in the file says "
                     "so)",
                     m->name, m->length);
    m->fd = m->length > 8 || fd == 1;
    return 0;
}

/* Cross-statement rules: one multiplexor per message, multiplexed signals need it. */
static int check_mux(build_t *b, struct hs_dbc_message *m)
{
    bool muxed = false;
    for (unsigned k = 0; k < m->n_signals; k++) {
        const struct hs_dbc_signal *sg = &m->signals[k];
        if (sg->mux == HS_DBC_MULTIPLEXOR) {
            if (m->multiplexor >= 0)
                return msg_err(b, sg->line, 0, "message %s has a second multiplexor %s", m->name,
                               sg->name);
            if (sg->value_type != HS_DBC_INTEGER)
                return msg_err(b, sg->line, 0, "multiplexor %s must be an integer signal",
                               sg->name);
            m->multiplexor = (int)k;
        }
        muxed |= sg->mux == HS_DBC_MULTIPLEXED;
    }
    if (muxed && m->multiplexor < 0)
        return msg_err(b, m->line, 0, "message %s has multiplexed signals but no multiplexor (M)",
                       m->name);
    return 0;
}

static void free_msg_build(msg_build_t *mb)
{
    for (unsigned k = 0; k < mb->m.n_signals; k++)
        hs__dbc_free_signal(&mb->sig[k]);
    free(mb->sig);
    free(mb->dropped_sig);
    hs__dbc_index_free(&mb->by_name);
    free((char *)mb->m.name);
    free((char *)mb->m.sender);
    free((char *)mb->m.comment);
}

static int finish(build_t *b)
{
    struct hs_dbc *dbc = b->dbc;
    unsigned kept = 0;
    for (unsigned i = 0; i < b->n_msgs; i++)
        kept += !b->msgs[i].dropped;
    struct hs_dbc_message *msgs = NULL;
    if (kept) {
        msgs = calloc(kept, sizeof *msgs);
        if (!msgs)
            return hs__dbc_nomem(b);
    }
    int r = 0;
    for (unsigned i = 0; i < b->n_msgs && r == 0; i++) {
        msg_build_t *mb = &b->msgs[i];
        if (mb->dropped)
            continue;
        compact_signals(mb);
        resolve_bare_m(b, mb);
        if ((r = frame_format(b, mb)) == 0)
            r = check_mux(b, &mb->m);
    }
    if (r < 0) {
        free(msgs);
        return r;
    }
    unsigned k = 0;
    for (unsigned i = 0; i < b->n_msgs; i++) {
        msg_build_t *mb = &b->msgs[i];
        if (mb->dropped) {
            free_msg_build(mb);
            continue;
        }
        msgs[k++] = mb->m; /* ownership of names and the signal array moves into msgs */
        free(mb->dropped_sig);
        hs__dbc_index_free(&mb->by_name);
    }
    if (kept)
        qsort(msgs, kept, sizeof *msgs, cmp_msg);
    if (b->n_warn)
        qsort(b->warn, b->n_warn, sizeof *b->warn, cmp_warn);
    dbc->messages = msgs;
    dbc->n_messages = kept;
    dbc->nodes = (const char *const *)b->nodes;
    dbc->n_nodes = b->n_nodes;
    dbc->warnings = b->warn;
    dbc->n_warnings = b->n_warn;
    free(b->msgs);
    b->msgs = NULL;
    b->n_msgs = 0;
    b->nodes = NULL;
    b->n_nodes = 0;
    b->warn = NULL;
    b->n_warn = 0;
    return 0;
}

static void free_build(build_t *b)
{
    for (unsigned i = 0; i < b->n_msgs; i++)
        free_msg_build(&b->msgs[i]);
    free(b->msgs);
    hs__dbc_index_free(&b->by_id);
    for (unsigned i = 0; i < b->n_nodes; i++)
        free(b->nodes[i]);
    free(b->nodes);
    for (unsigned i = 0; i < b->n_warn; i++)
        free((char *)b->warn[i].msg);
    free(b->warn);
    hs__dbc_attr_free(b);
}

void hs_dbc_free(struct hs_dbc *dbc)
{
    if (!dbc)
        return;
    for (unsigned i = 0; i < dbc->n_messages; i++) {
        const struct hs_dbc_message *m = &dbc->messages[i];
        for (unsigned k = 0; k < m->n_signals; k++)
            hs__dbc_free_signal((struct hs_dbc_signal *)&m->signals[k]);
        free((void *)m->signals);
        free((char *)m->name);
        free((char *)m->sender);
        free((char *)m->comment);
    }
    free((void *)dbc->messages);
    for (unsigned i = 0; i < dbc->n_nodes; i++)
        free((char *)dbc->nodes[i]);
    free((void *)dbc->nodes);
    for (unsigned i = 0; i < dbc->n_warnings; i++)
        free((char *)dbc->warnings[i].msg);
    free((void *)dbc->warnings);
    free((char *)dbc->version);
    free((char *)dbc->comment);
    free((char *)dbc->path);
    free(dbc);
}

int hs_dbc_load_buffer(const char *text, unsigned long len, const char *name,
                       struct hs_dbc **ret_dbc, struct hs_diag *d)
{
    struct hs_diag local;
    if (!d)
        d = &local; /* lenient paths read the diag back to word their warnings */
    memset(d, 0, sizeof *d);
    if (len > HS_DBC_FILE_MAX)
        return hs_diag_set(d, -EFBIG, name, 0, 0, "DBC text larger than %lu bytes",
                           (unsigned long)HS_DBC_FILE_MAX);
    build_t b;
    memset(&b, 0, sizeof b);
    b.vff_default = -1;
    hs__dbc_scan_init(&b.s, text, len, name ? name : "<dbc>", d);
    b.dbc = calloc(1, sizeof *b.dbc);
    char *path = hs__dbc_strndup(b.s.name, strlen(b.s.name));
    if (!b.dbc || !path) {
        free(b.dbc);
        free(path);
        return hs_diag_set(d, -ENOMEM, name, 0, 0, "out of memory");
    }
    b.dbc->path = path;
    int r = 0;
    for (;;) {
        hs__dbc_skip_ws(&b.s);
        if (hs__dbc_eof(&b.s))
            break;
        if ((r = hs__dbc_statement(&b)) < 0)
            break;
    }
    if (r == 0)
        r = finish(&b);
    free_build(&b);
    if (r < 0) {
        hs_dbc_free(b.dbc);
        return r;
    }
    *ret_dbc = b.dbc;
    return 0;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

int hs_dbc_load_file(const char *path, struct hs_dbc **ret_dbc, struct hs_diag *d)
{
    /* refuse before open: opening a FIFO blocks, reading /dev/zero never ends */
    struct stat st;
    if (stat(path, &st) < 0)
        return hs_diag_set(d, -errno, path, 0, 0, "cannot open DBC file");
    if (!S_ISREG(st.st_mode))
        return hs_diag_set(d, -EINVAL, path, 0, 0, "not a DBC file: %s", kind_of(st.st_mode));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return hs_diag_set(d, -errno, path, 0, 0, "cannot open DBC file");
    int r = 0;
    char *buf = NULL;
    size_t len = 0;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) { /* replaced since stat() */
        r = hs_diag_set(d, -EINVAL, path, 0, 0, "not a DBC file: not a regular file");
    } else if ((unsigned long)st.st_size > HS_DBC_FILE_MAX) {
        r = hs_diag_set(d, -EFBIG, path, 0, 0, "DBC file larger than %lu MiB",
                        (unsigned long)(HS_DBC_FILE_MAX >> 20));
    } else {
        size_t cap = (size_t)st.st_size + 1; /* +1: notice growth while we read */
        buf = malloc(cap);
        if (!buf)
            r = hs_diag_set(d, -ENOMEM, path, 0, 0, "out of memory");
        while (buf && len < cap) {
            ssize_t got = read(fd, buf + len, cap - len);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                r = hs_diag_set(d, -errno, path, 0, 0, "read error");
                break;
            }
            if (got == 0)
                break;
            len += (size_t)got;
        }
        if (r == 0 && len == cap)
            r = hs_diag_set(d, -EAGAIN, path, 0, 0, "DBC file grew while it was read");
    }
    close(fd);
    if (r == 0)
        r = hs_dbc_load_buffer(buf, len, path, ret_dbc, d);
    free(buf);
    return r;
}
