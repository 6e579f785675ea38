/* EDS / DCF loader (CiA 306 electronic data sheet, INI format) for object dictionary defaults.
 *
 * Sections named by a hexadecimal index ("[6060]") or index and sub-index ("[1A00sub1]") carry
 * an object's keys: ObjectType, DataType, AccessType, DefaultValue, PDOMapping, LowLimit,
 * HighLimit (a DCF's ParameterValue wins over DefaultValue). Other sections (FileInfo,
 * DeviceInfo, the object lists, Comments, DummyUsage) are read for syntax only. Integer values
 * are decimal, 0x-hexadecimal or 0-octal, optionally "$NODEID+value" (CiA 306 4.6.3).
 * For an object the drive has, DefaultValue replaces its default (the data type must match);
 * a manufacturer object (0x2000-0x5FFF) of an integer type is added as plain storage; other
 * objects the drive does not simulate are skipped. After the file, every valid PDO's mapping
 * must be mappable (as an SDO write would demand). Init only; errors name file:line:column. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cia402/cia402_internal.h"

#define EDS_VALUE_MAX 256

struct eds_obj {
    bool active; /* a [index] or [indexsubN] section is open */
    uint16_t index;
    uint8_t sub;
    int line; /* section header line */
    int data_type, access, pdo_mapping;
    bool has_value, has_low, has_high;
    char value[EDS_VALUE_MAX];
    int value_line, value_col;
    bool from_param; /* the value is a DCF ParameterValue */
    char low[EDS_VALUE_MAX], high[EDS_VALUE_MAX];
};

struct eds_ctx {
    struct hs_cia402_node *n;
    const char *name;
    struct hs_diag *d;
    unsigned applied;
    int map_line[2][HS_CIA402_PDO_N];
};

static bool parse_hex(const char *s, size_t len, uint32_t max, uint32_t *ret)
{
    if (!len || len > 8)
        return false;
    uint32_t v = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        unsigned x;
        if (c >= '0' && c <= '9')
            x = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            x = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            x = (unsigned)(c - 'A' + 10);
        else
            return false;
        v = v << 4 | x;
    }
    if (v > max)
        return false;
    *ret = v;
    return true;
}

/* "123", "-5", "0x1F", "017", "$NODEID+0x180", "0x180+$NODEID". */
static bool parse_int(const char *s, uint8_t node_id, int64_t *ret)
{
    int64_t total = 0;
    bool any = false;
    while (*s) {
        int64_t sign = 1;
        if (*s == '+' || *s == '-') {
            if (*s == '-')
                sign = -1;
            if (!any && *s == '+')
                return false;
            s++;
        } else if (any) {
            return false;
        }
        if (!strncasecmp(s, "$NODEID", 7)) {
            total += sign * node_id;
            s += 7;
        } else {
            char *end;
            int base = 10;
            if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
                base = 16;
            else if (s[0] == '0' && s[1] >= '0' && s[1] <= '7')
                base = 8;
            if (!(s[0] >= '0' && s[0] <= '9'))
                return false;
            errno = 0;
            unsigned long long v = strtoull(s, &end, base);
            if (errno || end == s || v > 0xFFFFFFFFull)
                return false;
            total += sign * (int64_t)v;
            s = end;
        }
        any = true;
        if (total > 0xFFFFFFFFll || total < INT32_MIN)
            return false;
    }
    if (!any)
        return false;
    *ret = total;
    return true;
}

static int access_of(const char *v)
{
    static const struct {
        const char *name;
        int access;
    } t[] = {{"ro", HS_CIA402_RO},  {"wo", HS_CIA402_WO},  {"rw", HS_CIA402_RW},
             {"rwr", HS_CIA402_RW}, {"rww", HS_CIA402_RW}, {"const", HS_CIA402_CONST}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcasecmp(v, t[i].name))
            return t[i].access;
    return -1;
}

static int type_bytes(int t)
{
    static const int b[8] = {0, 0, 1, 2, 4, 1, 2, 4};
    return t >= 2 && t <= 7 ? b[t] : 0;
}

__attribute__((format(printf, 4, 5))) static int err(struct eds_ctx *c, int line, int col,
                                                     const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hs_diag_set(c->d, -EINVAL, c->name, line, col, "EDS: %s", msg);
}

static int add_extra(struct eds_ctx *c, struct eds_obj *o, int64_t v)
{
    struct hs_cia402_node *n = c->n;
    if (n->n_extra == HS_CIA402_EXTRA_MAX || n->n_entries == HS_CIA402_ENTRIES_MAX)
        return err(c, o->line, 1, "more than %u manufacturer objects", HS_CIA402_EXTRA_MAX);
    int t = o->data_type;
    struct hs_cia402_entry *e = &n->entries[n->n_entries++];
    memset(e, 0, sizeof *e);
    e->index = o->index, e->sub = o->sub, e->type = (uint8_t)t;
    e->size = (uint8_t)type_bytes(t);
    e->access = (uint8_t)(o->access > 0 ? o->access : HS_CIA402_RW);
    if (o->pdo_mapping > 0)
        e->pdo = (uint8_t)(((e->access & HS_CIA402_WO) ? PDO_R : 0) |
                           ((e->access & HS_CIA402_RO) ? PDO_T : 0));
    e->offset = (uint32_t)(offsetof(struct hs_cia402_od, extra) + 4 * n->n_extra++);
    bool sgn = t <= 4;
    e->min = sgn ? -(1ll << (8 * e->size - 1)) : 0;
    e->max = sgn ? (1ll << (8 * e->size - 1)) - 1 : (1ll << (8 * e->size)) - 1;
    int64_t lim;
    if (o->has_low && parse_int(o->low, n->cfg.node_id, &lim) && lim > e->min)
        e->min = lim;
    if (o->has_high && parse_int(o->high, n->cfg.node_id, &lim) && lim < e->max)
        e->max = lim;
    if (o->has_value && (v < e->min || v > e->max))
        return err(c, o->value_line, o->value_col, "value %s out of the object's range", o->value);
    hs__cia402_od_set(&n->od_def, e, (uint32_t)v);
    /* keep the entries sorted for the binary search */
    for (unsigned i = n->n_entries - 1; i > 0; i--) {
        struct hs_cia402_entry *a = &n->entries[i - 1], *b = &n->entries[i];
        if (((uint32_t)a->index << 8 | a->sub) < ((uint32_t)b->index << 8 | b->sub))
            break;
        struct hs_cia402_entry tmp = *a;
        *a = *b, *b = tmp;
    }
    return 0;
}

static int close_obj(struct eds_ctx *c, struct eds_obj *o)
{
    if (!o->active)
        return 0;
    o->active = false;
    struct hs_cia402_node *n = c->n;
    uint16_t base = o->index & 0xFE00;
    unsigned p = o->index & 0x1FF;
    if ((base == 0x1600 || base == 0x1A00) && p < HS_CIA402_PDO_N)
        c->map_line[base == 0x1A00][p] = o->line;
    int i = hs__cia402_od_find_i(n, o->index, o->sub);
    int64_t v = 0;
    if (o->has_value && o->value[0] && o->data_type != 9 &&
        !parse_int(o->value, n->cfg.node_id, &v))
        return err(c, o->value_line, o->value_col, "DefaultValue \"%s\" is not an integer",
                   o->value);
    if (i < 0) {
        bool manufacturer = o->index >= 0x2000 && o->index < 0x6000;
        if (manufacturer && type_bytes(o->data_type) && (o->has_value || o->access > 0)) {
            if (hs__cia402_od_find_i(n, o->index, o->sub) >= 0)
                return 0;
            int r = add_extra(c, o, v);
            if (!r)
                c->applied++;
            return r;
        }
        return 0; /* not simulated */
    }
    const struct hs_cia402_entry *e = &n->entries[i];
    if (o->data_type > 0 && o->data_type != e->type)
        return err(c, o->line, 1, "0x%04X sub %u: DataType 0x%04X differs from the drive's 0x%04X",
                   o->index, o->sub, (unsigned)o->data_type, e->type);
    if (!o->has_value || !o->value[0])
        return 0;
    if (e->type == 9) {
        size_t len = strlen(o->value);
        if (len > e->size)
            return err(c, o->value_line, o->value_col, "string \"%s\" longer than %u bytes",
                       o->value, e->size);
        memcpy((char *)&n->od_def + e->offset, o->value, len + 1);
    } else {
        if (v < e->min || v > e->max) {
            /* unsigned values may be written as their two's complement pattern and back */
            int64_t sv = hs__cia402_od_value(e, (uint32_t)v);
            if (v < 0 || v > 0xFFFFFFFFll || sv < e->min || sv > e->max || (e->type >= 5 && v < 0))
                return err(c, o->value_line, o->value_col,
                           "DefaultValue %s out of the object's range", o->value);
        }
        hs__cia402_od_set(&n->od_def, e, (uint32_t)v);
    }
    c->applied++;
    return 0;
}

static void trim(const char **b, const char **e)
{
    while (*b < *e && (**b == ' ' || **b == '\t'))
        (*b)++;
    while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
        (*e)--;
}

static int open_section(struct eds_ctx *c, struct eds_obj *o, const char *b, const char *e,
                        int line)
{
    int r = close_obj(c, o);
    if (r)
        return r;
    memset(o, 0, sizeof *o);
    o->data_type = o->access = o->pdo_mapping = -1;
    uint32_t index, sub = 0;
    size_t len = (size_t)(e - b);
    const char *s = NULL;
    for (size_t k = 0; k + 3 <= len; k++)
        if (!strncasecmp(b + k, "sub", 3)) {
            s = b + k;
            break;
        }
    size_t ilen = s ? (size_t)(s - b) : len;
    if (!parse_hex(b, ilen, 0xFFFF, &index))
        return 0; /* a named section */
    if (s && !parse_hex(s + 3, (size_t)(e - s - 3), 0xFF, &sub))
        return 0; /* e.g. [1000Name] style extensions */
    o->active = true;
    o->index = (uint16_t)index, o->sub = (uint8_t)sub;
    o->line = line;
    return 0;
}

static int key_value(struct eds_ctx *c, struct eds_obj *o, const char *kb, const char *ke,
                     const char *vb, const char *ve, int line, int col)
{
    if (!o->active)
        return 0;
    size_t kl = (size_t)(ke - kb), vl = (size_t)(ve - vb);
    char v[EDS_VALUE_MAX];
    if (vl >= sizeof v)
        return err(c, line, col, "value longer than %u bytes", EDS_VALUE_MAX - 1);
    memcpy(v, vb, vl);
    v[vl] = 0;
#define KEY(name) (kl == sizeof name - 1 && !strncasecmp(kb, name, kl))
    if (KEY("DefaultValue") || KEY("ParameterValue")) {
        bool param = KEY("ParameterValue");
        if (!param && o->from_param)
            return 0; /* ParameterValue came first and wins */
        memcpy(o->value, v, vl + 1);
        o->has_value = true;
        o->from_param = param;
        o->value_line = line;
        o->value_col = col;
    } else if (KEY("DataType")) {
        int64_t t;
        if (!parse_int(v, 0, &t) || t < 0 || t > 0xFFFF)
            return err(c, line, col, "DataType \"%s\" is not a number", v);
        o->data_type = (int)t;
    } else if (KEY("AccessType")) {
        o->access = access_of(v);
        if (o->access < 0)
            return err(c, line, col, "AccessType \"%s\" is not ro, wo, rw, rwr, rww or const", v);
    } else if (KEY("PDOMapping")) {
        o->pdo_mapping = (v[0] == '1');
    } else if (KEY("LowLimit")) {
        memcpy(o->low, v, vl + 1);
        o->has_low = true;
    } else if (KEY("HighLimit")) {
        memcpy(o->high, v, vl + 1);
        o->has_high = true;
    }
#undef KEY
    return 0;
}

/* Every valid PDO's mapping must be usable. */
static int check_pdos(struct eds_ctx *c)
{
    struct hs_cia402_node *n = c->n;
    for (unsigned t = 0; t < 2; t++)
        for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
            const struct hs_cia402_pdo_comm *pc = t ? &n->od_def.tpdo[p] : &n->od_def.rpdo[p];
            const struct hs_cia402_pdo_map *m = t ? &n->od_def.tpdo_map[p] : &n->od_def.rpdo_map[p];
            if (m->n > HS_CIA402_PDO_MAP_MAX)
                return err(c, c->map_line[t][p], 1, "%s mapping: more than %u entries",
                           t ? "TPDO" : "RPDO", HS_CIA402_PDO_MAP_MAX);
            if (pc->cob_id & 0x80000000u)
                continue;
            unsigned bits = 0;
            for (unsigned k = 0; k < m->n; k++) {
                if (hs__cia402_map_check(n, m->entry[k], t ? PDO_T : PDO_R))
                    return err(c, c->map_line[t][p], 1,
                               "%s: entry 0x%08X names an object that cannot be mapped",
                               t ? "TPDO" : "RPDO", m->entry[k]);
                bits += (uint8_t)m->entry[k];
            }
            if (bits > 64)
                return err(c, c->map_line[t][p], 1, "%s: mapping longer than 64 bits (%u)",
                           t ? "TPDO" : "RPDO", bits);
        }
    return 0;
}

int hs_cia402_node_load_eds(struct hs_cia402_node *node, const char *text, size_t len,
                            const char *name, unsigned *ret_applied, struct hs_diag *d)
{
    struct eds_ctx c = {.n = node, .name = name ? name : "", .d = d};
    struct eds_obj o;
    memset(&o, 0, sizeof o);
    const char *p = text, *end = text + len;
    int line = 0, r = 0;
    while (p < end && !r) {
        line++;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end, *lb = p, *ls = p;
        p = eol ? eol + 1 : end;
        if (memchr(lb, 0, (size_t)(le - lb))) {
            r = err(&c, line, 1, "NUL byte in line");
            break;
        }
        trim(&lb, &le);
        if (lb == le || *lb == ';' || *lb == '#')
            continue;
        if (*lb == '[') {
            const char *close = memchr(lb, ']', (size_t)(le - lb));
            if (!close || close + 1 != le) {
                r = err(&c, line, (int)(le - ls) + 1, "expected ']' at the end of the section");
                break;
            }
            const char *sb = lb + 1, *se = close;
            trim(&sb, &se);
            r = open_section(&c, &o, sb, se, line);
            continue;
        }
        const char *eq = memchr(lb, '=', (size_t)(le - lb));
        if (!eq) {
            r = err(&c, line, (int)(lb - ls) + 1, "expected key=value or [section]");
            break;
        }
        const char *kb = lb, *ke = eq, *vb = eq + 1, *ve = le;
        trim(&kb, &ke);
        trim(&vb, &ve);
        if (kb == ke) {
            r = err(&c, line, (int)(lb - ls) + 1, "empty key");
            break;
        }
        r = key_value(&c, &o, kb, ke, vb, ve, line, (int)(vb - ls) + 1);
    }
    if (!r)
        r = close_obj(&c, &o);
    if (!r)
        r = check_pdos(&c);
    if (r)
        return r;
    /* the live dictionary starts from the new defaults */
    node->od = node->od_def;
    hs__cia402_pdo_reset(node);
    hs__cia402_drive_reset(node);
    if (ret_applied)
        *ret_applied = c.applied;
    return 0;
}

int hs_cia402_node_load_eds_file(struct hs_cia402_node *node, const char *path,
                                 unsigned *ret_applied, struct hs_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return hs_diag_set(d, -errno, path, 0, 0, "EDS: cannot open: %s", strerror(errno));
    char *buf = NULL;
    size_t cap = 0, len = 0;
    int r = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= (16u << 20)) {
                r = hs_diag_set(d, -EFBIG, path, 0, 0, "EDS: larger than 16 MiB");
                break;
            }
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                r = hs_diag_set(d, -ENOMEM, path, 0, 0, "EDS: out of memory");
                break;
            }
            buf = nb, cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (!r && ferror(f))
        r = hs_diag_set(d, -EIO, path, 0, 0, "EDS: read error");
    fclose(f);
    if (!r)
        r = hs_cia402_node_load_eds(node, buf, len, path, ret_applied, d);
    free(buf);
    return r;
}
