/* The table-driven walker: turns libyaml document nodes into struct fields, with a diag naming
 * file:line:column and the field path for every bad key or value. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfg_internal.h"
#include "hilsim/closest_name.h"

#define PATH_MAX_LEN 256

int hs__cfg_err(struct hs__ctx *c, const yaml_node_t *node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int line = node ? (int)node->start_mark.line + 1 : 0;
    int col = node ? (int)node->start_mark.column + 1 : 0;
    int r = hs_diag_vset(c->diag, -EINVAL, c->file, line, col, fmt, ap);
    va_end(ap);
    return r;
}

int hs__cfg_err_at(struct hs__ctx *c, struct hs_cfg_src src, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = hs_diag_vset(c->diag, -EINVAL, c->file, src.line, src.column, fmt, ap);
    va_end(ap);
    return r;
}

void hs__cfg_pathf(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

static struct hs_cfg_src src_of(const yaml_node_t *n)
{
    return (struct hs_cfg_src){(int32_t)n->start_mark.line + 1, (int32_t)n->start_mark.column + 1};
}

static const char *scalar(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static bool is_plain(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static bool is_null(const yaml_node_t *n)
{
    if (!is_plain(n))
        return false;
    const char *s = scalar(n);
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static const char *type_word(const yaml_node_t *n)
{
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a list";
    if (is_null(n))
        return "null";
    return NULL;
}

/* A short, printable rendering of a node for messages. */
static const char *show(const yaml_node_t *n, char *buf, size_t size)
{
    const char *word = type_word(n);
    if (word)
        return word;
    size_t j = 0;
    const char *s = scalar(n);
    for (size_t i = 0; i < n->data.scalar.length && j + 4 < size; i++) {
        unsigned char ch = (unsigned char)s[i];
        buf[j++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    if (j + 4 >= size && j >= 3)
        memcpy(buf + j - 3, "...", 3);
    buf[j] = 0;
    return buf;
}

static int err_type(struct hs__ctx *c, const yaml_node_t *n, const char *path, const char *want)
{
    char buf[64];
    const char *w = type_word(n);
    if (w)
        return hs__cfg_err(c, n, "%s: expected %s, got %s", path, want, w);
    return hs__cfg_err(c, n, "%s: expected %s, got '%s'", path, want, show(n, buf, sizeof buf));
}

static int parse_double(struct hs__ctx *c, const yaml_node_t *n, const char *path, unsigned flags,
                        double *ret)
{
    if (!is_plain(n) || is_null(n))
        return err_type(c, n, path, "a number");
    const char *s = scalar(n);
    double v;
    if (!strcmp(s, ".inf") || !strcmp(s, ".Inf") || !strcmp(s, ".INF") || !strcmp(s, "+.inf"))
        v = INFINITY;
    else if (!strcmp(s, "-.inf") || !strcmp(s, "-.Inf") || !strcmp(s, "-.INF"))
        v = -INFINITY;
    else {
        char *end;
        errno = 0;
        /* strtod also takes "inf", "nan" and hex floats; only decimal YAML numbers are meant */
        if (strpbrk(s, "nNiIxX") || strlen(s) != n->data.scalar.length)
            return err_type(c, n, path, "a number");
        v = strtod(s, &end);
        if (end == s || *end || errno == ERANGE)
            return err_type(c, n, path, "a number");
    }
    if (isinf(v) && !(flags & HS__F_INF))
        return hs__cfg_err(c, n, "%s: %s is not allowed here (finite number expected)", path, s);
    *ret = v;
    return 0;
}

static int parse_int(struct hs__ctx *c, const yaml_node_t *n, const char *path, bool is_signed,
                     long long *ret_s, unsigned long long *ret_u)
{
    if (!is_plain(n) || is_null(n))
        return err_type(c, n, path, "an integer");
    const char *s = scalar(n);
    const char *digits = s[0] == '-' || s[0] == '+' ? s + 1 : s;
    int base = (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) ? 16 : 10;
    if (!*digits || strlen(s) != n->data.scalar.length || (s[0] == '-' && !is_signed))
        return err_type(c, n, path, is_signed ? "an integer" : "an unsigned integer");
    for (const char *p = digits + (base == 16 ? 2 : 0); *p; p++)
        if (base == 16 ? !strchr("0123456789abcdefABCDEF", *p) : (*p < '0' || *p > '9'))
            return err_type(c, n, path, is_signed ? "an integer" : "an unsigned integer");
    char *end;
    errno = 0;
    if (is_signed)
        *ret_s = strtoll(s, &end, base);
    else
        *ret_u = strtoull(s, &end, base);
    if (errno == ERANGE || *end || end == s)
        return hs__cfg_err(c, n, "%s: %s does not fit in 64 bits", path, s);
    return 0;
}

static int range_error(struct hs__ctx *c, const yaml_node_t *n, const char *path,
                       const struct hs__cfg_field *f)
{
    char buf[64];
    return hs__cfg_err(c, n, "%s: %s out of range %c%g, %g]%s", path, show(n, buf, sizeof buf),
                       (f->flags & HS__F_MIN_OPEN) ? '(' : '[', f->min, f->max,
                       (f->flags & HS__F_ZERO_OK) ? " (or 0)" : "");
}

static bool in_range(const struct hs__cfg_field *f, double v)
{
    if ((f->flags & HS__F_ZERO_OK) && v == 0)
        return true;
    if (f->flags & HS__F_MIN_OPEN ? !(v > f->min) : !(v >= f->min))
        return false;
    return v <= f->max;
}

bool hs__cfg_name_ok(const char *s, enum hs__cfg_charset cs)
{
    if (!*s)
        return cs == HS__CS_GROUP;
    if (cs == HS__CS_CIDENT && *s >= '0' && *s <= '9')
        return false;
    for (; *s; s++) {
        char ch = *s;
        bool lower = ch >= 'a' && ch <= 'z', upper = ch >= 'A' && ch <= 'Z';
        bool digit = ch >= '0' && ch <= '9';
        bool ok;
        switch (cs) {
        case HS__CS_BENCH:
            ok = lower || digit || ch == '_' || ch == '-';
            break;
        case HS__CS_CIDENT:
            ok = lower || upper || digit || ch == '_';
            break;
        case HS__CS_IFNAME:
        case HS__CS_GROUP:
            ok = lower || upper || digit || ch == '_' || ch == '-' || ch == '.';
            break;
        default:
            ok = lower || upper || digit || ch == '_' || ch == '-';
        }
        if (!ok)
            return false;
    }
    return true;
}

static const char *charset_text(enum hs__cfg_charset cs)
{
    switch (cs) {
    case HS__CS_BENCH:
        return "[a-z0-9_-]";
    case HS__CS_CIDENT:
        return "a C identifier";
    case HS__CS_IFNAME:
    case HS__CS_GROUP:
        return "[A-Za-z0-9_.-]";
    default:
        return "[A-Za-z0-9_-]";
    }
}

static int parse_string(struct hs__ctx *c, const yaml_node_t *n, const char *path, bool any_text,
                        enum hs__cfg_charset cs, uint32_t size, char *out)
{
    if (n->type != YAML_SCALAR_NODE || (is_null(n) && !(cs == HS__CS_GROUP || any_text)))
        return err_type(c, n, path, "a string");
    const char *s = is_null(n) ? "" : scalar(n);
    size_t len = is_null(n) ? 0 : n->data.scalar.length;
    if (strlen(s) != len)
        return hs__cfg_err(c, n, "%s: string contains a NUL character", path);
    if (len >= size)
        return hs__cfg_err(c, n, "%s: '%.40s...' is too long (max %u characters)", path, s,
                           size - 1);
    if (!any_text && !hs__cfg_name_ok(s, cs)) {
        char buf[64];
        return hs__cfg_err(c, n, "%s: '%s' is not a valid name (%s%s)", path,
                           show(n, buf, sizeof buf), charset_text(cs),
                           cs == HS__CS_GROUP ? "" : ", not empty");
    }
    memcpy(out, s, len + 1);
    return 0;
}

static int parse_enum(struct hs__ctx *c, const yaml_node_t *n, const char *path,
                      const char *const *names, int *ret)
{
    if (n->type == YAML_SCALAR_NODE && !is_null(n))
        for (int i = 0; names[i]; i++)
            if (!strcmp(scalar(n), names[i])) {
                *ret = i;
                return 0;
            }
    char list[256] = "", buf[64];
    size_t used = 0;
    for (int i = 0; names[i] && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return hs__cfg_err(c, n, "%s: expected one of: %s; got %s", path, list, type_word(n));
    size_t count = 0;
    while (names[count])
        count++;
    const char *near = hs_closest_name(scalar(n), names, count, sizeof *names);
    return hs__cfg_err(c, n, "%s: '%s' is not one of: %s%s%s%s", path, show(n, buf, sizeof buf),
                       list, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
}

static int parse_path(struct hs__ctx *c, const yaml_node_t *n, const char *path, char **out)
{
    if (n->type != YAML_SCALAR_NODE || is_null(n) || !n->data.scalar.length)
        return err_type(c, n, path, "a file path");
    const char *s = scalar(n);
    if (strlen(s) != n->data.scalar.length)
        return hs__cfg_err(c, n, "%s: path contains a NUL character", path);
    char *joined;
    if (s[0] == '/')
        joined = strdup(s);
    else if (!c->base_dir)
        return hs__cfg_err(c, n, "%s: relative path '%s' needs a config file's directory", path, s);
    else if (asprintf(&joined, "%s/%s", c->base_dir, s) < 0)
        joined = NULL;
    if (!joined)
        return hs_diag_set(c->diag, -ENOMEM, c->file, 0, 0, "out of memory");
    char *real = realpath(joined, NULL);
    struct stat st;
    if (!real || stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = real ? (errno ? errno : EISDIR) : errno;
        int r = hs__cfg_err(c, n, "%s: cannot use '%s' (%s): %s", path, s, joined,
                            real ? "not a regular file" : strerror(e));
        free(joined);
        free(real);
        return r;
    }
    free(joined);
    free(*out);
    *out = real;
    return 0;
}

static int parse_vec(struct hs__ctx *c, yaml_node_t *n, const char *path,
                     const struct hs__cfg_field *f, double *out)
{
    char want[48];
    snprintf(want, sizeof want, "a list of %u numbers", f->n);
    if (n->type != YAML_SEQUENCE_NODE)
        return err_type(c, n, path, want);
    long count = n->data.sequence.items.top - n->data.sequence.items.start;
    if (count != (long)f->n)
        return hs__cfg_err(c, n, "%s: expected %s, got %ld", path, want, count);
    for (uint32_t i = 0; i < f->n; i++) {
        yaml_node_t *item = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
        char sub[PATH_MAX_LEN];
        hs__cfg_pathf(sub, sizeof sub, "%s[%u]", path, i);
        double v;
        int r = parse_double(c, item, sub, f->flags, &v);
        if (r < 0)
            return r;
        if (f->max > f->min && !in_range(f, v))
            return range_error(c, item, sub, f);
        out[i] = v;
    }
    return 0;
}

static int parse_modes(struct hs__ctx *c, yaml_node_t *n, const char *path,
                       const struct hs__cfg_field *f, uint32_t *out)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return err_type(c, n, path, "a list of modes");
    uint32_t bits = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        yaml_node_t *item = yaml_document_get_node(c->doc, *it);
        int m;
        char sub[PATH_MAX_LEN];
        hs__cfg_pathf(sub, sizeof sub, "%s[%ld]", path, (long)(it - n->data.sequence.items.start));
        int r = parse_enum(c, item, sub, f->names, &m);
        if (r < 0)
            return r;
        if (bits & (1u << m))
            return hs__cfg_err(c, item, "%s: mode '%s' listed twice", sub, f->names[m]);
        bits |= 1u << m;
    }
    if (!bits)
        return hs__cfg_err(c, n, "%s: at least one mode must be allowed", path);
    *out = bits;
    return 0;
}

int hs__cfg_parse_ref(const char *s, struct hs_cfg_ref *ret_ref)
{
    const char *dot1 = strchr(s, '.'), *dot2 = strrchr(s, '.');
    if (!dot1 || dot2 == dot1)
        return -EINVAL;
    struct hs_cfg_ref ref = {0};
    size_t klen = (size_t)(dot1 - s), nlen = (size_t)(dot2 - dot1 - 1);
    if (klen == 5 && !strncmp(s, "joint", 5))
        ref.kind = HS_CFG_REF_JOINT;
    else if (klen == 6 && !strncmp(s, "sensor", 6))
        ref.kind = HS_CFG_REF_SENSOR;
    else
        return -EINVAL;
    if (!nlen || nlen >= sizeof ref.name)
        return -EINVAL;
    memcpy(ref.name, dot1 + 1, nlen);
    if (!hs__cfg_name_ok(ref.name, HS__CS_IDENT))
        return -EINVAL;
    for (int q = 0; q < HS_CFG_Q_SENSOR_VALUE; q++)
        if (!strcmp(dot2 + 1, hs__names_quantity[q])) {
            ref.quantity = (enum hs_cfg_quantity)q;
            *ret_ref = ref;
            return 0;
        }
    /* A sensor's other values are named by its kind (the plant's registry), which the config
     * does not know: the bench checks the name when it binds (src/bench/can/dbc_bind.c). */
    size_t vlen = strlen(dot2 + 1);
    if (ref.kind != HS_CFG_REF_SENSOR || !vlen || vlen >= sizeof ref.value)
        return -EINVAL;
    memcpy(ref.value, dot2 + 1, vlen + 1);
    if (!hs__cfg_name_ok(ref.value, HS__CS_IDENT))
        return -EINVAL;
    ref.quantity = HS_CFG_Q_SENSOR_VALUE;
    *ret_ref = ref;
    return 0;
}

static int parse_ref(struct hs__ctx *c, const yaml_node_t *n, const char *path,
                     struct hs_cfg_ref *out)
{
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return err_type(c, n, path, "joint.<name>.<quantity> or sensor.<name>.<quantity>");
    char buf[64];
    if (strlen(scalar(n)) != n->data.scalar.length || hs__cfg_parse_ref(scalar(n), out) < 0)
        return hs__cfg_err(c, n,
                           "%s: '%s' is not joint.<name>.<quantity> or sensor.<name>.<quantity> "
                           "with a known quantity (see config/README.md)",
                           path, show(n, buf, sizeof buf));
    return 0;
}

static int parse_list(struct hs__ctx *c, yaml_node_t *n, const struct hs__cfg_list *l, void *parent,
                      const char *path);

static int parse_value(struct hs__ctx *c, yaml_node_t *n, const struct hs__cfg_field *f, void *obj,
                       const char *path)
{
    void *p = (char *)obj + f->off;
    int r = 0;
    double d;
    long long s = 0;
    unsigned long long u = 0;
    switch (f->kind) {
    case HS__K_DOUBLE:
        r = parse_double(c, n, path, f->flags, &d);
        if (!r && !in_range(f, d))
            return range_error(c, n, path, f);
        if (!r)
            *(double *)p = d;
        return r;
    case HS__K_U32:
    case HS__K_U64:
        r = parse_int(c, n, path, false, &s, &u);
        if (!r && (f->max > f->min) && !in_range(f, (double)u))
            return range_error(c, n, path, f);
        if (!r && f->kind == HS__K_U32 && u > UINT32_MAX)
            return range_error(c, n, path, f);
        if (!r && f->kind == HS__K_U32)
            *(uint32_t *)p = (uint32_t)u;
        else if (!r)
            *(uint64_t *)p = u;
        return r;
    case HS__K_I32:
    case HS__K_I64:
        r = parse_int(c, n, path, true, &s, &u);
        if (!r && (f->max > f->min) && !in_range(f, (double)s))
            return range_error(c, n, path, f);
        if (!r && f->kind == HS__K_I32 && (s < INT32_MIN || s > INT32_MAX))
            return range_error(c, n, path, f);
        if (!r && f->kind == HS__K_I32)
            *(int32_t *)p = (int32_t)s;
        else if (!r)
            *(int64_t *)p = s;
        return r;
    case HS__K_BOOL:
        if (is_plain(n) && !strcmp(scalar(n), "true"))
            *(bool *)p = true;
        else if (is_plain(n) && !strcmp(scalar(n), "false"))
            *(bool *)p = false;
        else
            return err_type(c, n, path, "true or false");
        return 0;
    case HS__K_ENUM: {
        int v;
        r = parse_enum(c, n, path, f->names, &v);
        if (!r)
            *(int *)p = v;
        return r;
    }
    case HS__K_NAME:
    case HS__K_TEXT:
        return parse_string(c, n, path, f->kind == HS__K_TEXT, f->cs, f->n, p);
    case HS__K_PATH:
        return parse_path(c, n, path, p);
    case HS__K_VEC:
        return parse_vec(c, n, path, f, p);
    case HS__K_MODE: {
        const char *t = is_plain(n) ? scalar(n) : "";
        const char *digits = !strncmp(t, "0o", 2) ? t + 2 : t[0] == '0' ? t + 1 : NULL;
        if (!digits || !*digits || strspn(digits, "01234567") != strlen(digits) ||
            strlen(digits) > 4)
            return err_type(c, n, path, "an octal mode such as 0660");
        unsigned long m = strtoul(digits, NULL, 8);
        if (m > 0777)
            return hs__cfg_err(c, n, "%s: %s out of range [0, 0777]", path, t);
        if (m & 0002)
            return hs__cfg_err(c, n, "%s: %s is world-writable; use at most 0664 or 0660", path, t);
        *(uint32_t *)p = (uint32_t)m;
        return 0;
    }
    case HS__K_MODES:
        return parse_modes(c, n, path, f, p);
    case HS__K_REF:
        return parse_ref(c, n, path, p);
    case HS__K_SECTION:
        return hs__cfg_parse_map(c, n, f->sub, p, path, NULL);
    case HS__K_LIST:
        return parse_list(c, n, f->list, obj, path);
    case HS__K_RENAMED: /* refused with the keys, before any value */
        break;
    }
    return -EINVAL;
}

static void join_path(char *out, size_t size, const char *path, const char *key)
{
    hs__cfg_pathf(out, size, "%s%s%s", path, *path ? "." : "", key);
}

yaml_node_t *hs__cfg_child(struct hs__ctx *c, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
        if (k && k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), key))
            return yaml_document_get_node(c->doc, pr->value);
    }
    return NULL;
}

int hs__cfg_parse_map(struct hs__ctx *c, yaml_node_t *node, const struct hs__cfg_table *t,
                      void *obj, const char *path, uint64_t *ret_seen)
{
    const char *where = *path ? path : "top level";
    if (node->type != YAML_MAPPING_NODE)
        return err_type(c, node, where, "a mapping");
    yaml_node_pair_t *start = node->data.mapping.pairs.start, *top = node->data.mapping.pairs.top;
    uint64_t seen = 0;
    /* check every key before using any value, so the first error is the first bad key */
    for (yaml_node_pair_t *pr = start; pr < top; pr++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
        if (k->type != YAML_SCALAR_NODE || is_null(k))
            return hs__cfg_err(c, k, "%s: keys must be plain names", where);
        uint32_t i;
        for (i = 0; i < t->nfields; i++)
            if (!strcmp(scalar(k), t->fields[i].key))
                break;
        char buf[64];
        if (i == t->nfields) {
            const char *near = hs_closest_name(scalar(k), t->fields, t->nfields, sizeof *t->fields);
            return hs__cfg_err(c, k, "%s: unknown key '%s'%s%s%s", where, show(k, buf, sizeof buf),
                               near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        }
        if (t->fields[i].kind == HS__K_RENAMED)
            return hs__cfg_err(c, k, "%s%s%s: renamed to '%s' (units in names: config/README.md)",
                               path, *path ? "." : "", t->fields[i].key, t->fields[i].renamed_to);
        if (seen & (1ull << i))
            return hs__cfg_err(c, k, "%s: duplicate key '%s'", where, t->fields[i].key);
        seen |= 1ull << i;
    }
    for (int pass = 0; pass < 2; pass++)
        for (yaml_node_pair_t *pr = start; pr < top; pr++) {
            yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
            yaml_node_t *v = yaml_document_get_node(c->doc, pr->value);
            uint32_t i = 0;
            while (strcmp(scalar(k), t->fields[i].key))
                i++;
            const struct hs__cfg_field *f = &t->fields[i];
            if (!!(f->flags & HS__F_FIRST) != (pass == 0))
                continue;
            char sub[PATH_MAX_LEN];
            join_path(sub, sizeof sub, path, f->key);
            int r = parse_value(c, v, f, obj, sub);
            if (r < 0)
                return r;
        }
    for (uint32_t i = 0; i < t->nfields; i++)
        if ((t->fields[i].flags & HS__F_REQUIRED) && !(seen & (1ull << i)))
            return hs__cfg_err(c, node, "%s: missing required key '%s'", where, t->fields[i].key);
    if (t->check) {
        int r = t->check(c, obj, seen, node, path);
        if (r < 0)
            return r;
    }
    if (ret_seen)
        *ret_seen = seen;
    return 0;
}

static int parse_list(struct hs__ctx *c, yaml_node_t *n, const struct hs__cfg_list *l, void *parent,
                      const char *path)
{
    char *base = l->pooled ? (char *)c->cfg : (char *)parent;
    uint32_t *count = (uint32_t *)(base + l->count_off);
    char *array = base + l->array_off;
    long items;
    if (l->keyed) {
        if (n->type != YAML_MAPPING_NODE)
            return err_type(c, n, path, "a mapping of name: settings");
        items = n->data.mapping.pairs.top - n->data.mapping.pairs.start;
    } else {
        if (n->type != YAML_SEQUENCE_NODE)
            return err_type(c, n, path, "a list");
        items = n->data.sequence.items.top - n->data.sequence.items.start;
    }
    uint32_t first = *count;
    if (l->pooled) {
        *(uint32_t *)((char *)parent + l->first_off) = first;
        *(uint32_t *)((char *)parent + l->slice_off) = 0;
    }
    for (long i = 0; i < items; i++) {
        yaml_node_t *key = NULL, *val;
        char sub[PATH_MAX_LEN];
        if (l->keyed) {
            yaml_node_pair_t *pr = &n->data.mapping.pairs.start[i];
            key = yaml_document_get_node(c->doc, pr->key);
            val = yaml_document_get_node(c->doc, pr->value);
        } else {
            val = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
        }
        if (*count >= l->max)
            return hs__cfg_err(c, key ? key : val, "%s: too many entries (at most %u%s)", path,
                               l->max, l->pooled ? " in the whole file" : "");
        char *elem = array + (size_t)*count * l->elem_size;
        if (l->template_off >= 0)
            memcpy(elem, (char *)parent + l->template_off, l->elem_size);
        else if (l->init)
            l->init(elem);
        else
            memset(elem, 0, l->elem_size);
        *(struct hs_cfg_src *)(elem + l->src_off) = src_of(key ? key : val);
        if (key) {
            char *name = elem + l->name_off;
            char kpath[PATH_MAX_LEN];
            hs__cfg_pathf(kpath, sizeof kpath, "%s key", path);
            int r = parse_string(c, key, kpath, false, HS__CS_IDENT, HS_NAME_MAX, name);
            if (r < 0)
                return r;
            for (long j = 0; j < i; j++) {
                yaml_node_t *prev =
                    yaml_document_get_node(c->doc, n->data.mapping.pairs.start[j].key);
                if (prev->type == YAML_SCALAR_NODE && !strcmp(scalar(prev), name))
                    return hs__cfg_err(c, key, "%s: duplicate key '%s'", path, name);
            }
            join_path(sub, sizeof sub, path, name);
            if (is_null(val)) /* "joint_name:" alone takes the defaults */
                val = NULL;
        } else {
            hs__cfg_pathf(sub, sizeof sub, "%s[%ld]", path, i);
        }
        /* count before parsing: nested pooled lists must see this element as taken */
        (*count)++;
        if (val) {
            int r = hs__cfg_parse_map(c, val, l->elem, elem, sub, NULL);
            if (r < 0)
                return r;
        } else if (l->elem->check) {
            int r = l->elem->check(c, elem, 0, key, sub);
            if (r < 0)
                return r;
        }
        if (l->pooled)
            (*(uint32_t *)((char *)parent + l->slice_off))++;
    }
    return 0;
}
