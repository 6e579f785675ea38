/* DBC statements into struct hs_dbc. Bad input gives file:line:column and the construct
 * expected, and frees everything: the caller never sees a half-loaded database. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbc_internal.h"

#define VECTOR_INDEPENDENT_ID 0xC0000000u /* Vector's pseudo message for orphan signals */

struct msg_build {
    struct hs_dbc_message m;
    struct hs_dbc_signal *sig;
    unsigned cap;
};

struct build {
    struct hs__dbc_scan s;
    struct hs_dbc *dbc;
    struct msg_build *msgs;
    unsigned n_msgs, cap_msgs;
    char **nodes;
    unsigned n_nodes, cap_nodes;
    bool skip_signals; /* inside the VECTOR__INDEPENDENT_SIG_MSG pseudo message */
};

static int nomem(struct build *b)
{
    return hs_diag_set(b->s.d, -ENOMEM, b->s.name, b->s.line, 0, "out of memory");
}

static int grow(void **arr, unsigned *cap, unsigned need, size_t elem)
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

static bool span_is(const char *p, size_t n, const char *kw)
{
    return strlen(kw) == n && memcmp(p, kw, n) == 0;
}

static int parse_version(struct build *b)
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
static int parse_ns(struct build *b)
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

static int parse_bs(struct build *b)
{
    int r = hs__dbc_expect(&b->s, ':', "after BS_");
    if (r == 0)
        hs__dbc_skip_line(&b->s); /* baud rate and BTR values are obsolete */
    return r;
}

static int parse_bu(struct build *b)
{
    int r = hs__dbc_expect(&b->s, ':', "after BU_");
    if (r < 0)
        return r;
    while (!hs__dbc_at_eol(&b->s)) {
        char *n;
        r = hs__dbc_ident(&b->s, &n, "a node name");
        if (r < 0)
            return r;
        if (grow((void **)&b->nodes, &b->cap_nodes, b->n_nodes + 1, sizeof *b->nodes) < 0) {
            free(n);
            return nomem(b);
        }
        b->nodes[b->n_nodes++] = n;
    }
    return 0;
}

static int parse_bo(struct build *b)
{
    int line = b->s.line;
    uint64_t id, dlc;
    int r = hs__dbc_uint(&b->s, UINT32_MAX, &id, "message ID");
    if (r < 0)
        return r;
    if (id == VECTOR_INDEPENDENT_ID) {
        b->skip_signals = true;
        hs__dbc_skip_line(&b->s);
        return 0;
    }
    b->skip_signals = false;
    bool ext = id & 0x80000000u;
    uint32_t raw = (uint32_t)id & 0x7FFFFFFFu;
    if (raw > (ext ? HS_CAN_EFF_MASK : HS_CAN_SFF_MASK))
        return hs__dbc_err(&b->s, "message ID %llu: %s identifier out of range",
                           (unsigned long long)id, ext ? "extended" : "standard (bit 31 clear)");
    if (grow((void **)&b->msgs, &b->cap_msgs, b->n_msgs + 1, sizeof *b->msgs) < 0)
        return nomem(b);
    struct msg_build *mb = &b->msgs[b->n_msgs++];
    memset(mb, 0, sizeof *mb);
    mb->m.id = raw;
    mb->m.extended = ext;
    mb->m.multiplexor = -1;
    mb->m.line = line;
    char *name = NULL, *sender = NULL;
    if ((r = hs__dbc_ident(&b->s, &name, "message name")) < 0)
        return r;
    mb->m.name = name;
    if ((r = hs__dbc_expect(&b->s, ':', "after the message name")) < 0)
        return r;
    if ((r = hs__dbc_uint(&b->s, HS_CAN_DATA_MAX, &dlc, "message length (bytes, <= 64)")) < 0)
        return r;
    mb->m.length = (uint8_t)dlc;
    if ((r = hs__dbc_ident(&b->s, &sender, "transmitter node")) < 0)
        return r;
    mb->m.sender = sender;
    return 0;
}

/* "M", "mNN" before the ':' of SG_. */
static int parse_mux(struct build *b, struct hs_dbc_signal *sig)
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
    if (t[0] != 'm' || n < 2)
        return hs__dbc_err(&b->s, "bad multiplexer indicator '%.*s' (want M or mNN)", (int)n, t);
    uint64_t v = 0;
    size_t i = 1;
    for (; i < n && t[i] >= '0' && t[i] <= '9'; i++) {
        v = v * 10 + (uint64_t)(t[i] - '0');
        if (v > UINT32_MAX)
            return hs__dbc_err(&b->s, "multiplexer value too large");
    }
    if (i == 1 || (i < n && !(i + 1 == n && t[i] == 'M')))
        return hs__dbc_err(&b->s, "bad multiplexer indicator '%.*s' (want M or mNN)", (int)n, t);
    if (i < n)
        return hs__dbc_err(&b->s, "extended multiplexing ('%.*s') is not supported", (int)n, t);
    sig->mux = HS_DBC_MULTIPLEXED;
    sig->mux_value = (uint32_t)v;
    return 0;
}

static void free_signal(struct hs_dbc_signal *s)
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

static int parse_sg_body(struct build *b, struct hs_dbc_signal *sig)
{
    struct hs__dbc_scan *s = &b->s;
    int r;
    char *name;
    if ((r = hs__dbc_ident(s, &name, "signal name")) < 0)
        return r;
    sig->name = name;
    hs__dbc_skip_ws(s);
    if (hs__dbc_peek(s) != ':' && (r = parse_mux(b, sig)) < 0)
        return r;
    uint64_t start, len;
    double factor, offset, mn, mx;
    if ((r = hs__dbc_expect(s, ':', "after the signal name")) < 0 ||
        (r = hs__dbc_uint(s, 511, &start, "start bit (0..511)")) < 0 ||
        (r = hs__dbc_expect(s, '|', "between start bit and length")) < 0 ||
        (r = hs__dbc_uint(s, 64, &len, "signal length (1..64 bits)")) < 0 ||
        (r = hs__dbc_expect(s, '@', "before byte order")) < 0)
        return r;
    if (len == 0)
        return hs__dbc_err(s, "signal %s has length 0", name);
    int bo = hs__dbc_peek(s), sign = (s->p + 1 < s->end) ? (unsigned char)s->p[1] : -1;
    if (bo != '0' && bo != '1')
        return hs__dbc_err(s, "expected byte order 0 (Motorola) or 1 (Intel)");
    if (sign != '+' && sign != '-')
        return hs__dbc_err(s, "expected value type '+' (unsigned) or '-' (signed)");
    s->p += 2;
    if ((r = hs__dbc_expect(s, '(', "before factor")) < 0 ||
        (r = hs__dbc_number(s, &factor, "factor")) < 0 ||
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
        return hs__dbc_err(s, "signal %s has factor 0", name);
    char *unit;
    if ((r = hs__dbc_string(s, &unit, "unit")) < 0)
        return r;
    sig->unit = unit;
    sig->start_bit = (uint16_t)start;
    sig->length = (uint8_t)len;
    sig->byte_order = bo == '1' ? HS_DBC_INTEL : HS_DBC_MOTOROLA;
    sig->is_signed = sign == '-';
    sig->factor = factor, sig->offset = offset, sig->min = mn, sig->max = mx;
    unsigned cap = 0;
    char **rx = NULL;
    while (!hs__dbc_at_eol(s)) {
        if (sig->n_receivers && (r = hs__dbc_expect(s, ',', "between receivers")) < 0)
            return r;
        char *n;
        if ((r = hs__dbc_ident(s, &n, "receiver node")) < 0)
            return r;
        if (grow((void **)&rx, &cap, sig->n_receivers + 1, sizeof *rx) < 0) {
            free(n);
            return nomem(b);
        }
        rx[sig->n_receivers++] = n;
        sig->receivers = (const char *const *)rx;
    }
    if (hs__dbc_signal_span(sig) < 0)
        return hs__dbc_err(s, "signal %s: bits run outside a 64-byte payload", name);
    return 0;
}

static int parse_sg(struct build *b)
{
    if (b->skip_signals) {
        hs__dbc_skip_line(&b->s);
        return 0;
    }
    if (!b->n_msgs)
        return hs__dbc_err(&b->s, "SG_ before any BO_");
    struct msg_build *mb = &b->msgs[b->n_msgs - 1];
    if (grow((void **)&mb->sig, &mb->cap, mb->m.n_signals + 1, sizeof *mb->sig) < 0)
        return nomem(b);
    struct hs_dbc_signal *sig = &mb->sig[mb->m.n_signals];
    memset(sig, 0, sizeof *sig);
    sig->line = b->s.line;
    int r = parse_sg_body(b, sig);
    if (r < 0) {
        free_signal(sig);
        return r;
    }
    unsigned need = (unsigned)(sig->lsb_pos > sig->msb_pos ? sig->lsb_pos : sig->msb_pos) / 8 + 1;
    if (need > mb->m.length) {
        r = hs_diag_set(b->s.d, -EINVAL, b->s.name, sig->line, 0,
                        "signal %s (start bit %u, %u bits) needs %u bytes but message %s has %u",
                        sig->name, sig->start_bit, sig->length, need, mb->m.name, mb->m.length);
        free_signal(sig);
        return r;
    }
    for (unsigned i = 0; i < mb->m.n_signals; i++)
        if (!strcmp(mb->sig[i].name, sig->name)) {
            r = hs_diag_set(b->s.d, -EINVAL, b->s.name, sig->line, 0,
                            "signal %s defined twice in message %s", sig->name, mb->m.name);
            free_signal(sig);
            return r;
        }
    mb->m.n_signals++;
    mb->m.signals = mb->sig;
    return 0;
}

static struct msg_build *find_msg(struct build *b, uint64_t id)
{
    bool ext = id & 0x80000000u;
    uint32_t raw = (uint32_t)id & 0x7FFFFFFFu;
    for (unsigned i = 0; i < b->n_msgs; i++)
        if (b->msgs[i].m.id == raw && b->msgs[i].m.extended == ext)
            return &b->msgs[i];
    return NULL;
}

/* "<msg id> <signal name>" as used by SIG_VALTYPE_, VAL_ and CM_ SG_. */
static int parse_sig_ref(struct build *b, struct hs_dbc_signal **ret, const char *kw)
{
    uint64_t id;
    const char *n;
    size_t len;
    int r = hs__dbc_uint(&b->s, UINT32_MAX, &id, "message ID");
    if (r < 0)
        return r;
    if ((r = hs__dbc_ident_span(&b->s, &n, &len, "signal name")) < 0)
        return r;
    if (id == VECTOR_INDEPENDENT_ID) {
        *ret = NULL;
        return 0;
    }
    struct msg_build *mb = find_msg(b, id);
    if (!mb)
        return hs__dbc_err(&b->s, "%s refers to unknown message ID %llu", kw,
                           (unsigned long long)id);
    for (unsigned i = 0; i < mb->m.n_signals; i++)
        if (span_is(n, len, mb->sig[i].name)) {
            *ret = &mb->sig[i];
            return 0;
        }
    return hs__dbc_err(&b->s, "%s refers to unknown signal %.*s in message %s", kw, (int)len, n,
                       mb->m.name);
}

static int parse_sig_valtype(struct build *b)
{
    struct hs_dbc_signal *sig;
    uint64_t t;
    int r = parse_sig_ref(b, &sig, "SIG_VALTYPE_");
    if (r < 0 || (r = hs__dbc_expect(&b->s, ':', "in SIG_VALTYPE_")) < 0 ||
        (r = hs__dbc_uint(&b->s, 3, &t, "SIG_VALTYPE_ type (0, 1 float, 2 double)")) < 0 ||
        (r = hs__dbc_expect(&b->s, ';', "ending SIG_VALTYPE_")) < 0)
        return r;
    if (!sig)
        return 0;
    if (t == 3)
        return hs__dbc_err(&b->s, "SIG_VALTYPE_ type 3 is not defined");
    static const unsigned need[] = {0, 32, 64};
    if (t && sig->length != need[t])
        return hs__dbc_err(&b->s, "signal %s is %u bits; a %s needs %u", sig->name, sig->length,
                           t == 1 ? "float" : "double", need[t]);
    sig->value_type = t == 1 ? HS_DBC_FLOAT32 : t == 2 ? HS_DBC_FLOAT64 : HS_DBC_INTEGER;
    return 0;
}

static int parse_val(struct build *b)
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
    for (;;) {
        hs__dbc_skip_ws(&b->s);
        if (hs__dbc_peek(&b->s) == ';') {
            b->s.p++;
            break;
        }
        int64_t v;
        char *text;
        if ((r = hs__dbc_int(&b->s, &v, "VAL_ value")) < 0 ||
            (r = hs__dbc_string(&b->s, &text, "VAL_ description")) < 0)
            goto fail;
        if (grow((void **)&vals, &cap, n + 1, sizeof *vals) < 0) {
            free(text);
            r = nomem(b);
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

static int parse_cm(struct build *b)
{
    struct hs__dbc_scan *s = &b->s;
    char *text = NULL;
    int r;
    hs__dbc_skip_ws(s);
    if (hs__dbc_peek(s) == '"') {
        if ((r = hs__dbc_string(s, &text, "comment")) < 0)
            return r;
        set_comment(&b->dbc->comment, text);
        return hs__dbc_expect(s, ';', "ending CM_");
    }
    const char *kw;
    size_t n;
    if ((r = hs__dbc_ident_span(s, &kw, &n, "BU_, BO_, SG_ or EV_ after CM_")) < 0)
        return r;
    const char **slot = NULL;
    if (span_is(kw, n, "SG_")) {
        struct hs_dbc_signal *sig;
        if ((r = parse_sig_ref(b, &sig, "CM_ SG_")) < 0)
            return r;
        slot = sig ? &sig->comment : NULL;
    } else if (span_is(kw, n, "BO_")) {
        uint64_t id;
        if ((r = hs__dbc_uint(s, UINT32_MAX, &id, "message ID")) < 0)
            return r;
        struct msg_build *mb = find_msg(b, id);
        if (!mb && id != VECTOR_INDEPENDENT_ID)
            return hs__dbc_err(s, "CM_ BO_ refers to unknown message ID %llu",
                               (unsigned long long)id);
        slot = mb ? &mb->m.comment : NULL;
    } else if (span_is(kw, n, "BU_") || span_is(kw, n, "EV_")) {
        const char *x;
        size_t xn;
        if ((r = hs__dbc_ident_span(s, &x, &xn, "node or variable name")) < 0)
            return r;
    } else {
        return hs__dbc_err(s, "CM_ %.*s: unknown comment target", (int)n, kw);
    }
    if ((r = hs__dbc_string(s, &text, "comment")) < 0)
        return r;
    if (slot)
        set_comment(slot, text);
    else
        free(text);
    return hs__dbc_expect(s, ';', "ending CM_");
}

static const char *const skipped_keywords[] = {
    "NS_DESC_",         "BA_DEF_",      "BA_",           "VAL_TABLE_",
    "CAT_DEF_",         "CAT_",         "FILTER",        "BA_DEF_DEF_",
    "EV_DATA_",         "ENVVAR_DATA_", "SGTYPE_",       "SGTYPE_VAL_",
    "BA_DEF_SGTYPE_",   "BA_SGTYPE_",   "SIG_TYPE_REF_", "SIG_GROUP_",
    "SIGTYPE_VALTYPE_", "BO_TX_BU_",    "BA_DEF_REL_",   "BA_REL_",
    "BA_DEF_DEF_REL_",  "BU_SG_REL_",   "BU_EV_REL_",    "BU_BO_REL_",
    "SG_MUL_VAL_",      "EV_",
};

static int statement(struct build *b)
{
    const char *kw;
    size_t n;
    int r = hs__dbc_ident_span(&b->s, &kw, &n, "a DBC keyword");
    if (r < 0)
        return r;
    static const struct {
        const char *kw;
        int (*fn)(struct build *);
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
    };
    for (unsigned i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
        if (span_is(kw, n, handlers[i].kw))
            return handlers[i].fn(b);
    for (unsigned i = 0; i < sizeof skipped_keywords / sizeof skipped_keywords[0]; i++)
        if (span_is(kw, n, skipped_keywords[i]))
            return hs__dbc_skip_statement(&b->s, skipped_keywords[i]);
    b->s.p = kw;
    return hs__dbc_err(&b->s, "unknown keyword '%.*s'", (int)(n > 40 ? 40 : n), kw);
}

static int cmp_msg(const void *x, const void *y)
{
    const struct hs_dbc_message *a = x, *c = y;
    if (a->extended != c->extended)
        return a->extended ? 1 : -1;
    return a->id < c->id ? -1 : a->id > c->id;
}

/* Cross-statement rules: one multiplexor per message, multiplexed signals need it, no
 * duplicate message IDs. */
static int finish(struct build *b)
{
    struct hs_dbc *dbc = b->dbc;
    struct hs_dbc_message *msgs = NULL;
    if (b->n_msgs) {
        msgs = calloc(b->n_msgs, sizeof *msgs);
        if (!msgs)
            return nomem(b);
    }
    for (unsigned i = 0; i < b->n_msgs; i++) {
        struct hs_dbc_message *m = &b->msgs[i].m;
        bool muxed = false;
        for (unsigned k = 0; k < m->n_signals; k++) {
            if (m->signals[k].mux == HS_DBC_MULTIPLEXOR) {
                if (m->multiplexor >= 0) {
                    free(msgs);
                    return hs_diag_set(b->s.d, -EINVAL, b->s.name, m->signals[k].line, 0,
                                       "message %s has a second multiplexor %s", m->name,
                                       m->signals[k].name);
                }
                if (m->signals[k].value_type != HS_DBC_INTEGER) {
                    free(msgs);
                    return hs_diag_set(b->s.d, -EINVAL, b->s.name, m->signals[k].line, 0,
                                       "multiplexor %s must be an integer signal",
                                       m->signals[k].name);
                }
                m->multiplexor = (int)k;
            }
            muxed |= m->signals[k].mux == HS_DBC_MULTIPLEXED;
        }
        if (muxed && m->multiplexor < 0) {
            free(msgs);
            return hs_diag_set(b->s.d, -EINVAL, b->s.name, m->line, 0,
                               "message %s has multiplexed signals but no multiplexor (M)",
                               m->name);
        }
        msgs[i] = *m;
    }
    if (b->n_msgs)
        qsort(msgs, b->n_msgs, sizeof *msgs, cmp_msg);
    for (unsigned i = 1; i < b->n_msgs; i++)
        if (!cmp_msg(&msgs[i - 1], &msgs[i])) {
            int line = msgs[i].line > msgs[i - 1].line ? msgs[i].line : msgs[i - 1].line;
            uint32_t id = msgs[i].id;
            free(msgs);
            return hs_diag_set(b->s.d, -EINVAL, b->s.name, line, 0, "message ID 0x%X defined twice",
                               id);
        }
    dbc->messages = msgs;
    dbc->n_messages = b->n_msgs;
    dbc->nodes = (const char *const *)b->nodes;
    dbc->n_nodes = b->n_nodes;
    free(b->msgs); /* ownership of names and signal arrays moved into msgs */
    b->msgs = NULL;
    b->nodes = NULL;
    return 0;
}

static void free_build(struct build *b)
{
    for (unsigned i = 0; i < b->n_msgs; i++) {
        struct msg_build *mb = &b->msgs[i];
        for (unsigned k = 0; k < mb->m.n_signals; k++)
            free_signal(&mb->sig[k]);
        free(mb->sig);
        free((char *)mb->m.name);
        free((char *)mb->m.sender);
        free((char *)mb->m.comment);
    }
    free(b->msgs);
    for (unsigned i = 0; i < b->n_nodes; i++)
        free(b->nodes[i]);
    free(b->nodes);
}

void hs_dbc_free(struct hs_dbc *dbc)
{
    if (!dbc)
        return;
    for (unsigned i = 0; i < dbc->n_messages; i++) {
        const struct hs_dbc_message *m = &dbc->messages[i];
        for (unsigned k = 0; k < m->n_signals; k++)
            free_signal((struct hs_dbc_signal *)&m->signals[k]);
        free((void *)m->signals);
        free((char *)m->name);
        free((char *)m->sender);
        free((char *)m->comment);
    }
    free((void *)dbc->messages);
    for (unsigned i = 0; i < dbc->n_nodes; i++)
        free((char *)dbc->nodes[i]);
    free((void *)dbc->nodes);
    free((char *)dbc->version);
    free((char *)dbc->comment);
    free((char *)dbc->path);
    free(dbc);
}

int hs_dbc_load_buffer(const char *text, unsigned long len, const char *name,
                       struct hs_dbc **ret_dbc, struct hs_diag *d)
{
    struct build b;
    memset(&b, 0, sizeof b);
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
        if ((r = statement(&b)) < 0)
            break;
    }
    if (r == 0)
        r = finish(&b);
    if (r < 0) {
        free_build(&b);
        hs_dbc_free(b.dbc);
        return r;
    }
    *ret_dbc = b.dbc;
    return 0;
}

int hs_dbc_load_file(const char *path, struct hs_dbc **ret_dbc, struct hs_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return hs_diag_set(d, -errno, path, 0, 0, "cannot open DBC file");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int r = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= (64u << 20)) {
                r = hs_diag_set(d, -EFBIG, path, 0, 0, "DBC file larger than 64 MiB");
                break;
            }
            size_t nc = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, nc);
            if (!nb) {
                r = hs_diag_set(d, -ENOMEM, path, 0, 0, "out of memory");
                break;
            }
            buf = nb, cap = nc;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                r = hs_diag_set(d, -EIO, path, 0, 0, "read error");
            break;
        }
    }
    fclose(f);
    if (r == 0)
        r = hs_dbc_load_buffer(buf, len, path, ret_dbc, d);
    free(buf);
    return r;
}
