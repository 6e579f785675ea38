/* DBC statements into the build state (dbc_internal.h). Bad input gives file:line:column and
 * the construct expected; slips the established tools accept become warnings. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbc_internal.h"

#define VECTOR_INDEPENDENT_ID 0xC0000000u /* Vector's pseudo message for orphan signals */
#define VECTOR_INDEPENDENT_NAME "VECTOR__INDEPENDENT_SIG_MSG"

typedef struct hs__dbc_build build_t;
typedef struct hs__dbc_msg_build msg_build_t;

int hs__dbc_nomem(build_t *b)
{
    return hs_diag_set(b->s.d, -ENOMEM, b->s.name, b->s.line, 0, "out of memory");
}

int hs__dbc_grow(void **arr, unsigned *cap, unsigned need, size_t elem)
{
    if (need <= *cap)
        return 0;
    unsigned nc = *cap ? *cap * 2 : 8;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*arr, (size_t)nc * elem);
    if (!p)
        return -ENOMEM;
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
    *arr = p;
    *cap = nc;
    return 0;
}

void hs__dbc_warn(build_t *b, int line, int col, const char *fmt, ...)
{
    if (b->n_warn >= HS_DBC_WARNINGS_MAX) {
        b->dbc->n_warnings_dropped++;
        return;
    }
    char buf[HS_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *msg = hs__dbc_strndup(buf, strlen(buf));
    if (!msg || hs__dbc_grow((void **)&b->warn, &b->cap_warn, b->n_warn + 1, sizeof *b->warn) < 0) {
        free(msg); /* a warning lost to memory pressure is counted, not fatal */
        b->dbc->n_warnings_dropped++;
        return;
    }
    b->warn[b->n_warn].line = line;
    b->warn[b->n_warn].column = col;
    b->warn[b->n_warn++].msg = msg;
}

static bool span_is(const char *p, size_t n, const char *kw)
{
    return strlen(kw) == n && memcmp(p, kw, n) == 0;
}

uint32_t hs__dbc_compound_id(uint64_t dbc_id)
{
    uint32_t raw = (uint32_t)dbc_id & 0x7FFFFFFFu;
    return ((dbc_id & 0x80000000u) || raw > HS_CAN_SFF_MASK) ? raw | 0x80000000u : raw;
}

static uint32_t id_hash(uint32_t key)
{
    return hs__dbc_hash(&key, sizeof key);
}

msg_build_t *hs__dbc_find_msg(build_t *b, uint64_t dbc_id)
{
    uint32_t key = hs__dbc_compound_id(dbc_id), h = id_hash(key);
    unsigned cur = 0;
    for (int i; (i = hs__dbc_index_next(&b->by_id, h, &cur)) >= 0;)
        if (b->msgs[i].key == key)
            return &b->msgs[i];
    return NULL;
}

int hs__dbc_find_sig(const msg_build_t *mb, const char *name, size_t len)
{
    uint32_t h = hs__dbc_hash(name, len);
    unsigned cur = 0;
    for (int i; (i = hs__dbc_index_next(&mb->by_name, h, &cur)) >= 0;)
        if (span_is(name, len, mb->sig[i].name))
            return i;
    return -1;
}

/* Names are C identifiers in the DBC grammar; the established tools also take a leading digit
 * (opendbc writes signals such as 64_BIT_LE), so do we, with a warning. */
static int name(build_t *b, char **ret, const char *what)
{
    const char *n;
    size_t len;
    int r = hs__dbc_name_span(&b->s, &n, &len, what);
    if (r < 0)
        return r;
    if (n[0] >= '0' && n[0] <= '9')
        hs__dbc_warn(b, b->s.line, hs__dbc_col(&b->s, n),
                     "%s '%.*s' starts with a digit (not a DBC identifier): accepted", what,
                     (int)(len > 64 ? 64 : len), n);
    *ret = hs__dbc_strndup(n, len);
    return *ret ? 0 : hs__dbc_nomem(b);
}

static int parse_version(build_t *b)
{
    char *v;
    int r = hs__dbc_string(&b->s, &v, "VERSION");
    if (r < 0)
        return r;
    free((char *)b->dbc->version);
    b->dbc->version = v;
    return 0;
}

/* NS_ : followed by indented symbol lines. */
static int parse_ns(build_t *b)
{
    int r = hs__dbc_expect(&b->s, ':', "after NS_");
    if (r < 0)
        return r;
    hs__dbc_skip_line(&b->s);
    for (;;) {
        int c = hs__dbc_peek(&b->s);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            hs__dbc_skip_line(&b->s);
        else
            return 0;
    }
}

static int parse_bs(build_t *b)
{
    int r = hs__dbc_expect(&b->s, ':', "after BS_");
    if (r == 0)
        hs__dbc_skip_line(&b->s); /* baud rate and BTR values are obsolete */
    return r;
}

/* The node list runs up to the next statement keyword: writers wrap long lists over indented
 * lines (valid DBC; the grammar does not care about line ends here). */
static int parse_bu(build_t *b)
{
    int r = hs__dbc_expect(&b->s, ':', "after BU_");
    if (r < 0)
        return r;
    for (;;) {
        const char *at = hs__dbc_mark(&b->s);
        int c = hs__dbc_peek(&b->s);
        if (c < 0 || !(c == '_' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
                       (c >= 'a' && c <= 'z')))
            return 0;
        const char *n;
        size_t len;
        if ((r = hs__dbc_name_span(&b->s, &n, &len, "a node name")) < 0)
            return r;
        if (hs__dbc_is_keyword(n, len)) {
            b->s.p = at;
            return 0;
        }
        char *copy = hs__dbc_strndup(n, len);
        if (!copy ||
            hs__dbc_grow((void **)&b->nodes, &b->cap_nodes, b->n_nodes + 1, sizeof *b->nodes) < 0) {
            free(copy);
            return hs__dbc_nomem(b);
        }
        b->nodes[b->n_nodes++] = copy;
    }
}

static bool fd_length(uint64_t n)
{
    return n == 12 || n == 16 || n == 20 || n == 24 || n == 32 || n == 48 || n == 64;
}

static int parse_bo(build_t *b)
{
    struct hs__dbc_scan *s = &b->s;
    uint64_t id, dlc;
    struct hs__dbc_pos at_id = hs__dbc_pos(s), at_len = {0, 0};
    int line = at_id.line;
    int r = hs__dbc_uint(s, UINT32_MAX, &id, "message ID");
    if (r < 0)
        return r;
    char *mname = NULL, *sender = NULL;
    if ((r = name(b, &mname, "message name")) < 0)
        return r;
    if ((r = hs__dbc_expect(s, ':', "after the message name")) < 0 ||
        (at_len = hs__dbc_pos(s), r = hs__dbc_uint(s, UINT32_MAX, &dlc, "message length")) < 0 ||
        (r = name(b, &sender, "transmitter node")) < 0) {
        free(mname);
        return r;
    }
    bool pseudo = id == VECTOR_INDEPENDENT_ID || !strcmp(mname, VECTOR_INDEPENDENT_NAME);
    if (!pseudo && (dlc > 64 || (dlc > 8 && !fd_length(dlc)))) {
        free(mname);
        free(sender);
        return hs__dbc_err_pos(s, at_len,
                               "message length %llu is not a CAN frame length (0..8; CAN FD 12, "
                               "16, 20, 24, 32, 48, 64)",
                               (unsigned long long)dlc);
    }
    uint32_t key = hs__dbc_compound_id(id);
    msg_build_t *dup = hs__dbc_find_msg(b, id);
    if (dup && !pseudo && !dup->dropped) {
        int first = dup->m.line;
        free(mname);
        free(sender);
        return hs__dbc_err_pos(s, at_id, "message ID 0x%X defined twice (first at line %d)",
                               key & 0x7FFFFFFFu, first);
    }
    if (b->n_msgs >= HS_DBC_MESSAGES_MAX) {
        free(mname);
        free(sender);
        return hs__dbc_err_pos(s, at_id, "more than %u messages", HS_DBC_MESSAGES_MAX);
    }
    if (hs__dbc_grow((void **)&b->msgs, &b->cap_msgs, b->n_msgs + 1, sizeof *b->msgs) < 0 ||
        hs__dbc_index_add(&b->by_id, id_hash(key), b->n_msgs) < 0) {
        free(mname);
        free(sender);
        return hs__dbc_nomem(b);
    }
    msg_build_t *mb = &b->msgs[b->n_msgs++];
    memset(mb, 0, sizeof *mb);
    uint32_t raw = key & 0x7FFFFFFFu;
    mb->key = key;
    mb->m.id = raw;
    mb->m.extended = key & 0x80000000u;
    mb->m.multiplexor = -1;
    mb->m.line = line;
    mb->m.name = mname;
    mb->m.sender = sender;
    mb->m.length = (uint8_t)(dlc > 64 ? 64 : dlc);
    mb->len_line = at_len.line;
    mb->len_col = at_len.col;
    mb->fd = -1;
    int col = at_id.col;
    if (pseudo) {
        mb->dropped = true; /* signals not in any message: nothing to send or receive */
    } else if (raw > HS_CAN_EFF_MASK) {
        mb->dropped = true;
        hs__dbc_warn(b, line, col,
                     "message ID %llu (0x%llX) of %s does not fit a 29-bit CAN ID: the message "
                     "and its signals are left out",
                     (unsigned long long)id, (unsigned long long)id, mname);
    } else if (!(id & 0x80000000u) && raw > HS_CAN_SFF_MASK) {
        /* cantools refuses these, canmatrix drops the message; the writer plainly meant an
         * extended ID (no 11-bit reading exists), so take it as one and say so */
        hs__dbc_warn(b, line, col,
                     "message ID %llu (0x%X) of %s is above 0x7FF without the extended flag "
                     "(bit 31): taken as extended ID 0x%08X",
                     (unsigned long long)id, raw, mname, raw);
    }
    b->skip_signals = mb->dropped;
    return 0;
}

/* "M", "mNN" before the ':' of SG_. */
static int parse_mux(build_t *b, struct hs_dbc_signal *sig)
{
    const char *t;
    size_t n;
    int r = hs__dbc_ident_span(&b->s, &t, &n, "multiplexer indicator or ':'");
    if (r < 0)
        return r;
    if (n == 1 && t[0] == 'M') {
        sig->mux = HS_DBC_MULTIPLEXOR;
        return 0;
    }
    if (n == 1 && t[0] == 'm') {
        hs__dbc_warn(b, b->s.line, hs__dbc_col(&b->s, t),
                     "signal %s: bare multiplexer indicator 'm' (no value): taken as the "
                     "multiplexor 'M' unless the message has another",
                     sig->name);
        sig->mux = (enum hs_dbc_mux)HS__DBC_BARE_M;
        return 0;
    }
    if (t[0] != 'm' || n < 2)
        return hs__dbc_err_at(&b->s, t, "bad multiplexer indicator '%.*s' (want M or mNN)",
                              (int)(n > 40 ? 40 : n), t);
    uint64_t v = 0;
    size_t i = 1;
    for (; i < n && t[i] >= '0' && t[i] <= '9'; i++) {
        v = v * 10 + (uint64_t)(t[i] - '0');
        if (v > UINT32_MAX)
            return hs__dbc_err_at(&b->s, t, "multiplexer value too large");
    }
    if (i == 1 || (i < n && !(i + 1 == n && t[i] == 'M')))
        return hs__dbc_err_at(&b->s, t, "bad multiplexer indicator '%.*s' (want M or mNN)",
                              (int)(n > 40 ? 40 : n), t);
    if (i < n)
        return hs__dbc_err_at(&b->s, t, "extended multiplexing ('%.*s') is not supported", (int)n,
                              t);
    sig->mux = HS_DBC_MULTIPLEXED;
    sig->mux_value = (uint32_t)v;
    return 0;
}

void hs__dbc_free_signal(struct hs_dbc_signal *s)
{
    free((char *)s->name);
    free((char *)s->unit);
    free((char *)s->comment);
    for (unsigned i = 0; i < s->n_receivers; i++)
        free((char *)s->receivers[i]);
    free((void *)s->receivers);
    for (unsigned i = 0; i < s->n_values; i++)
        free((char *)s->values[i].text);
    free((void *)s->values);
}

static int parse_sg_body(build_t *b, struct hs_dbc_signal *sig, bool *ret_fits)
{
    struct hs__dbc_scan *s = &b->s;
    int r;
    char *sname;
    if ((r = name(b, &sname, "signal name")) < 0)
        return r;
    sig->name = sname;
    hs__dbc_skip_ws(s);
    if (hs__dbc_peek(s) != ':' && (r = parse_mux(b, sig)) < 0)
        return r;
    uint64_t start, len;
    double factor, offset, mn, mx;
    struct hs__dbc_pos at_len = {0, 0}, at_factor = {0, 0};
    if ((r = hs__dbc_expect(s, ':', "after the signal name")) < 0 ||
        (r = hs__dbc_uint(s, UINT32_MAX, &start, "start bit")) < 0 ||
        (r = hs__dbc_expect(s, '|', "between start bit and length")) < 0 ||
        (at_len = hs__dbc_pos(s), r = hs__dbc_uint(s, 64, &len, "signal length (1..64 bits)")) <
            0 ||
        (r = hs__dbc_expect(s, '@', "before byte order")) < 0)
        return r;
    if (len == 0)
        return hs__dbc_err_pos(s, at_len, "signal %s has length 0", sname);
    int bo = hs__dbc_peek(s), sign = (s->p + 1 < s->end) ? (unsigned char)s->p[1] : -1;
    if (bo != '0' && bo != '1')
        return hs__dbc_err(s, "expected byte order 0 (Motorola) or 1 (Intel)");
    s->p++;
    if (sign != '+' && sign != '-')
        return hs__dbc_err(s, "expected value type '+' (unsigned) or '-' (signed)");
    s->p++;
    if ((r = hs__dbc_expect(s, '(', "before factor")) < 0 ||
        (at_factor = hs__dbc_pos(s), r = hs__dbc_number(s, &factor, "factor")) < 0 ||
        (r = hs__dbc_expect(s, ',', "between factor and offset")) < 0 ||
        (r = hs__dbc_number(s, &offset, "offset")) < 0 ||
        (r = hs__dbc_expect(s, ')', "after offset")) < 0 ||
        (r = hs__dbc_expect(s, '[', "before minimum")) < 0 ||
        (r = hs__dbc_number(s, &mn, "minimum")) < 0 ||
        (r = hs__dbc_expect(s, '|', "between minimum and maximum")) < 0 ||
        (r = hs__dbc_number(s, &mx, "maximum")) < 0 ||
        (r = hs__dbc_expect(s, ']', "after maximum")) < 0)
        return r;
    if (factor == 0)
        return hs__dbc_err_pos(s, at_factor, "signal %s has factor 0", sname);
    char *unit;
    if ((r = hs__dbc_string(s, &unit, "unit")) < 0)
        return r;
    sig->unit = unit;
    sig->start_bit = (uint16_t)(start > UINT16_MAX ? UINT16_MAX : start);
    sig->length = (uint8_t)len;
    sig->byte_order = bo == '1' ? HS_DBC_INTEL : HS_DBC_MOTOROLA;
    sig->is_signed = sign == '-';
    sig->factor = factor, sig->offset = offset, sig->min = mn, sig->max = mx;
    unsigned cap = 0;
    char **rx = NULL;
    while (!hs__dbc_at_eol(s)) {
        if (sig->n_receivers && (r = hs__dbc_expect(s, ',', "between receivers")) < 0)
            return r;
        const char *n;
        size_t nl;
        if ((r = hs__dbc_name_span(s, &n, &nl, "receiver node")) < 0)
            return r;
        char *copy = hs__dbc_strndup(n, nl);
        if (!copy || hs__dbc_grow((void **)&rx, &cap, sig->n_receivers + 1, sizeof *rx) < 0) {
            free(copy);
            return hs__dbc_nomem(b);
        }
        rx[sig->n_receivers++] = copy;
        sig->receivers = (const char *const *)rx;
    }
    *ret_fits = start <= 511 && hs__dbc_signal_span(sig) == 0;
    return 0;
}

static unsigned bytes_needed(const struct hs_dbc_signal *sig)
{
    return (unsigned)(sig->lsb_pos > sig->msb_pos ? sig->lsb_pos : sig->msb_pos) / 8 + 1;
}

static int parse_sg(build_t *b)
{
    if (b->skip_signals) {
        hs__dbc_skip_line(&b->s);
        return 0;
    }
    if (!b->n_msgs)
        return hs__dbc_err(&b->s, "SG_ before any BO_");
    msg_build_t *mb = &b->msgs[b->n_msgs - 1];
    struct hs__dbc_pos at = hs__dbc_pos(&b->s); /* the signal's name */
    if (mb->m.n_signals >= HS_DBC_SIGNALS_PER_MESSAGE_MAX)
        return hs__dbc_err_pos(&b->s, at, "message %s has more than %u signals", mb->m.name,
                               HS_DBC_SIGNALS_PER_MESSAGE_MAX);
    if (b->n_signals >= HS_DBC_SIGNALS_MAX)
        return hs__dbc_err_pos(&b->s, at, "more than %u signals in the file", HS_DBC_SIGNALS_MAX);
    unsigned cap = mb->cap;
    if (hs__dbc_grow((void **)&mb->sig, &mb->cap, mb->m.n_signals + 1, sizeof *mb->sig) < 0 ||
        hs__dbc_grow((void **)&mb->dropped_sig, &cap, mb->m.n_signals + 1,
                     sizeof *mb->dropped_sig) < 0)
        return hs__dbc_nomem(b);
    struct hs_dbc_signal *sig = &mb->sig[mb->m.n_signals];
    memset(sig, 0, sizeof *sig);
    sig->line = at.line;
    bool fits = false;
    int r = parse_sg_body(b, sig, &fits);
    if (r < 0) {
        hs__dbc_free_signal(sig);
        return r;
    }
    int first = hs__dbc_find_sig(mb, sig->name, strlen(sig->name));
    if (first >= 0) {
        r = hs_diag_set(b->s.d, -EINVAL, b->s.name, sig->line, at.col,
                        "signal %s defined twice in message %s (first at line %d)", sig->name,
                        mb->m.name, mb->sig[first].line);
        hs__dbc_free_signal(sig);
        return r;
    }
    bool dropped = !fits || bytes_needed(sig) > mb->m.length;
    if (dropped) {
        /* canmatrix loads such a file and decodes garbage; cantools refuses it. Leaving the
         * one signal out keeps the rest of the database usable and the slip visible. */
        if (fits)
            hs__dbc_warn(b, sig->line, at.col,
                         "signal %s (start bit %u, %u bits) needs %u bytes but message %s has "
                         "%u: signal left out",
                         sig->name, sig->start_bit, sig->length, bytes_needed(sig), mb->m.name,
                         mb->m.length);
        else
            hs__dbc_warn(b, sig->line, at.col,
                         "signal %s (start bit %u, %u bits) runs outside a 64-byte payload: "
                         "signal left out",
                         sig->name, sig->start_bit, sig->length);
    }
    if (hs__dbc_index_add(&mb->by_name, hs__dbc_hash(sig->name, strlen(sig->name)),
                          mb->m.n_signals) < 0) {
        hs__dbc_free_signal(sig);
        return hs__dbc_nomem(b);
    }
    mb->dropped_sig[mb->m.n_signals] = dropped;
    mb->n_dropped += dropped;
    mb->m.n_signals++;
    mb->m.signals = mb->sig;
    b->n_signals++;
    return 0;
}

/* "<msg id> <signal name>" as used by SIG_VALTYPE_, VAL_ and CM_ SG_. *ret is NULL when the
 * reference is to be ignored: an unknown message or signal (warned), or one left out. */
static int parse_sig_ref(build_t *b, struct hs_dbc_signal **ret, const char *kw)
{
    uint64_t id;
    const char *n;
    size_t len;
    *ret = NULL;
    const char *at_id = hs__dbc_mark(&b->s);
    int col_id = hs__dbc_col(&b->s, at_id);
    int r = hs__dbc_uint(&b->s, UINT32_MAX, &id, "message ID");
    if (r < 0)
        return r;
    if ((r = hs__dbc_name_span(&b->s, &n, &len, "signal name")) < 0)
        return r;
    if (id == VECTOR_INDEPENDENT_ID)
        return 0;
    msg_build_t *mb = hs__dbc_find_msg(b, id);
    if (!mb) {
        hs__dbc_warn(b, b->s.line, col_id, "%s refers to unknown message ID %llu: ignored", kw,
                     (unsigned long long)id);
        return 0;
    }
    if (mb->dropped)
        return 0;
    int i = hs__dbc_find_sig(mb, n, len);
    if (i < 0) {
        hs__dbc_warn(b, b->s.line, hs__dbc_col(&b->s, n),
                     "%s refers to unknown signal %.*s in message %s: ignored", kw,
                     (int)(len > 64 ? 64 : len), n, mb->m.name);
        return 0;
    }
    if (!mb->dropped_sig[i])
        *ret = &mb->sig[i];
    return 0;
}

static int parse_sig_valtype(build_t *b)
{
    struct hs_dbc_signal *sig;
    uint64_t t;
    int r = parse_sig_ref(b, &sig, "SIG_VALTYPE_");
    const char *at_t = NULL;
    if (r < 0 || (r = hs__dbc_expect(&b->s, ':', "in SIG_VALTYPE_")) < 0 ||
        (at_t = hs__dbc_mark(&b->s),
         r = hs__dbc_uint(&b->s, 3, &t, "SIG_VALTYPE_ type (0, 1 float, 2 double)")) < 0)
        return r;
    if (t == 3)
        return hs__dbc_err_at(&b->s, at_t, "SIG_VALTYPE_ type 3 is not defined");
    static const unsigned need[] = {0, 32, 64};
    if (sig && t && sig->length != need[t])
        return hs__dbc_err_at(&b->s, at_t, "signal %s is %u bits; a %s needs %u", sig->name,
                              sig->length, t == 1 ? "float" : "double", need[t]);
    if ((r = hs__dbc_expect(&b->s, ';', "ending SIG_VALTYPE_")) < 0)
        return r;
    if (sig)
        sig->value_type = t == 1 ? HS_DBC_FLOAT32 : t == 2 ? HS_DBC_FLOAT64 : HS_DBC_INTEGER;
    return 0;
}

/* A missing ';' is a slip when the next statement begins right after: warn and go on. */
static bool missing_semicolon(build_t *b, const char *kw, int line, int col)
{
    const char *save = b->s.p, *save_ls = b->s.line_start;
    int save_line = b->s.line;
    const char *n;
    size_t len;
    hs__dbc_skip_ws(&b->s);
    int c = hs__dbc_peek(&b->s);
    bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    bool next = c < 0 || (word && hs__dbc_ident_span(&b->s, &n, &len, "") == 0 &&
                          hs__dbc_is_keyword(n, len));
    b->s.p = save, b->s.line_start = save_ls, b->s.line = save_line;
    if (next)
        hs__dbc_warn(b, line, col, "%s has no closing ';': taken as ended here", kw);
    return next;
}

static int parse_val(build_t *b)
{
    hs__dbc_skip_ws(&b->s);
    int c = hs__dbc_peek(&b->s);
    if (c < '0' || c > '9')
        return hs__dbc_skip_statement(&b->s, "VAL_"); /* environment variable values */
    struct hs_dbc_signal *sig;
    int r = parse_sig_ref(b, &sig, "VAL_");
    if (r < 0)
        return r;
    struct hs_dbc_value_desc *vals = NULL;
    unsigned n = 0, cap = 0;
    int end_line = b->s.line, end_col = hs__dbc_col(&b->s, b->s.p);
    for (;;) {
        hs__dbc_skip_ws(&b->s);
        if (hs__dbc_peek(&b->s) == ';') {
            b->s.p++;
            break;
        }
        if (missing_semicolon(b, "VAL_", end_line, end_col))
            break;
        int64_t v;
        char *text;
        if ((r = hs__dbc_int(&b->s, &v, "VAL_ value")) < 0 ||
            (r = hs__dbc_string(&b->s, &text, "VAL_ description")) < 0)
            goto fail;
        end_line = b->s.line, end_col = hs__dbc_col(&b->s, b->s.p);
        if (hs__dbc_grow((void **)&vals, &cap, n + 1, sizeof *vals) < 0) {
            free(text);
            r = hs__dbc_nomem(b);
            goto fail;
        }
        vals[n].value = v;
        vals[n++].text = text;
    }
    if (!sig) {
        r = 0;
        goto fail;
    }
    for (unsigned i = 0; i < sig->n_values; i++)
        free((char *)sig->values[i].text);
    free((void *)sig->values);
    sig->values = vals;
    sig->n_values = n;
    return 0;
fail:
    for (unsigned i = 0; i < n; i++)
        free((char *)vals[i].text);
    free(vals);
    return r;
}

static void set_comment(const char **slot, char *text)
{
    free((char *)*slot);
    *slot = text;
}

/* The comment's target. *ret_slot NULL: comment to be dropped. */
static int parse_cm_target(build_t *b, const char ***ret_slot)
{
    struct hs__dbc_scan *s = &b->s;
    const char *kw;
    size_t n;
    int r;
    *ret_slot = NULL;
    if ((r = hs__dbc_ident_span(s, &kw, &n, "BU_, BO_, SG_, EV_ or a string after CM_")) < 0)
        return r;
    if (span_is(kw, n, "SG_")) {
        struct hs_dbc_signal *sig;
        if ((r = parse_sig_ref(b, &sig, "CM_ SG_")) < 0)
            return r;
        *ret_slot = sig ? &sig->comment : NULL;
    } else if (span_is(kw, n, "BO_")) {
        uint64_t id;
        const char *at = hs__dbc_mark(s);
        if ((r = hs__dbc_uint(s, UINT32_MAX, &id, "message ID")) < 0)
            return r;
        msg_build_t *mb = hs__dbc_find_msg(b, id);
        if (!mb && id != VECTOR_INDEPENDENT_ID)
            hs__dbc_warn(b, s->line, hs__dbc_col(s, at),
                         "CM_ BO_ refers to unknown message ID %llu: ignored",
                         (unsigned long long)id);
        *ret_slot = mb && !mb->dropped ? &mb->m.comment : NULL;
    } else if (span_is(kw, n, "BU_") || span_is(kw, n, "EV_")) {
        const char *x;
        size_t xn;
        if ((r = hs__dbc_name_span(s, &x, &xn, "node or variable name")) < 0)
            return r;
    } else {
        return hs__dbc_err_at(s, kw, "CM_ %.*s: unknown comment target", (int)(n > 40 ? 40 : n),
                              kw);
    }
    return 0;
}

static int parse_cm(build_t *b)
{
    struct hs__dbc_scan *s = &b->s;
    char *text = NULL;
    int r;
    const char **slot = NULL;
    bool network = hs__dbc_peek(s) == '"' || (hs__dbc_skip_ws(s), hs__dbc_peek(s) == '"');
    if (!network) {
        int line = s->line, col = hs__dbc_col(s, s->p);
        r = parse_cm_target(b, &slot);
        if (r == -ENOMEM)
            return r;
        if (r < 0) {
            /* e.g. CM_ SG_ 304 "..." (no signal name) or CM_ 145 "...": a comment we cannot
             * place is no reason to refuse the file */
            hs__dbc_warn(b, s->d->line ? s->d->line : line, s->d->line ? s->d->column : col,
                         "CM_ not understood (%s): comment ignored", s->d->msg);
            return hs__dbc_skip_statement(s, "CM_");
        }
    }
    if ((r = hs__dbc_string(s, &text, "comment")) < 0)
        return r;
    if (network)
        set_comment(&b->dbc->comment, text);
    else if (slot)
        set_comment(slot, text);
    else
        free(text);
    int line = s->line, col = hs__dbc_col(s, s->p);
    hs__dbc_skip_ws(s);
    if (hs__dbc_peek(s) == ';') {
        s->p++;
        return 0;
    }
    if (missing_semicolon(b, "CM_", line, col))
        return 0;
    return hs__dbc_expect(s, ';', "ending CM_");
}

static const char *const skipped_keywords[] = {
    "NS_DESC_",    "VAL_TABLE_",       "CAT_DEF_",     "CAT_",
    "FILTER",      "EV_DATA_",         "ENVVAR_DATA_", "SGTYPE_",
    "SGTYPE_VAL_", "BA_DEF_SGTYPE_",   "BA_SGTYPE_",   "SIG_TYPE_REF_",
    "SIG_GROUP_",  "SIGTYPE_VALTYPE_", "BO_TX_BU_",    "BA_DEF_REL_",
    "BA_REL_",     "BA_DEF_DEF_REL_",  "BU_SG_REL_",   "BU_EV_REL_",
    "BU_BO_REL_",  "SG_MUL_VAL_",      "EV_",
};

int hs__dbc_statement(struct hs__dbc_build *b)
{
    const char *kw;
    size_t n;
    int r = hs__dbc_ident_span(&b->s, &kw, &n, "a DBC keyword");
    if (r < 0)
        return r;
    static const struct {
        const char *kw;
        int (*fn)(build_t *);
    } handlers[] = {
        {"VERSION", parse_version},
        {"NS_", parse_ns},
        {"BS_", parse_bs},
        {"BU_", parse_bu},
        {"BO_", parse_bo},
        {"SG_", parse_sg},
        {"SIG_VALTYPE_", parse_sig_valtype},
        {"VAL_", parse_val},
        {"CM_", parse_cm},
        {"BA_DEF_", hs__dbc_parse_ba_def},
        {"BA_DEF_DEF_", hs__dbc_parse_ba_def_def},
        {"BA_", hs__dbc_parse_ba},
    };
    for (unsigned i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
        if (span_is(kw, n, handlers[i].kw))
            return handlers[i].fn(b);
    for (unsigned i = 0; i < sizeof skipped_keywords / sizeof skipped_keywords[0]; i++)
        if (span_is(kw, n, skipped_keywords[i]))
            return hs__dbc_skip_statement(&b->s, skipped_keywords[i]);
    return hs__dbc_err_at(&b->s, kw, "unknown keyword '%.*s'", (int)(n > 40 ? 40 : n), kw);
}
