/* Writes a config back as YAML, walking the same schema tables the parser uses, so every key
 * the parser knows is printed and what is printed parses back to the same config. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_internal.h"

struct writer {
    FILE *out;
    const struct hs_config *cfg;
    bool dash; /* the next line starts a sequence item */
};

static void line_start(struct writer *w, int indent)
{
    if (w->dash) {
        fprintf(w->out, "%*s- ", indent - 2, "");
        w->dash = false;
    } else {
        fprintf(w->out, "%*s", indent, "");
    }
}

/* Shortest decimal that reads back to the same double. */
static void put_double(FILE *out, double v)
{
    if (isinf(v)) {
        fputs(v > 0 ? ".inf" : "-.inf", out);
        return;
    }
    /* plain decimals read better than "5e+01"; exponents only for very small or large */
    bool exp_ok = v != 0 && (fabs(v) < 1e-4 || fabs(v) >= 1e15);
    char buf[40], first[40] = "";
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) != v)
            continue;
        if (!first[0])
            memcpy(first, buf, sizeof buf);
        if (exp_ok || !strchr(buf, 'e'))
            break;
    }
    if (strtod(buf, NULL) != v || (!exp_ok && strchr(buf, 'e') && first[0]))
        memcpy(buf, first, sizeof buf);
    fputs(buf, out);
}

static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(out, "\\x%02x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

/* Keys that only make sense in some states of their struct. */
static bool wanted(const struct hs__cfg_field *f, const void *obj)
{
    if (f->kind == HS__K_RENAMED)
        return false;
    if (f->kind == HS__K_NAME && !((const char *)obj + f->off)[0] && f->cs != HS__CS_GROUP)
        return false;
    if (f->kind == HS__K_PATH && !*(char *const *)((const char *)obj + f->off))
        return false;
    if (f->kind == HS__K_DOUBLE && (f->flags & HS__F_NAN_UNSET) &&
        isnan(*(const double *)((const char *)obj + f->off)))
        return false;
    if (f->kind == HS__K_REF) {
        const struct hs_cfg_binding *b = obj;
        return !strcmp(f->key, b->dir == HS_CFG_BIND_TO ? "to" : "from");
    }
    return !f->emit || f->emit(obj);
}

static void write_map(struct writer *w, const struct hs__cfg_table *t, const void *obj, int indent);

static void write_list(struct writer *w, const struct hs__cfg_field *f, const void *parent,
                       int indent)
{
    const struct hs__cfg_list *l = f->list;
    const char *base = l->pooled ? (const char *)w->cfg : (const char *)parent;
    uint32_t first = 0, count = *(const uint32_t *)(base + l->count_off);
    if (l->pooled) {
        first = *(const uint32_t *)((const char *)parent + l->first_off);
        count = *(const uint32_t *)((const char *)parent + l->slice_off);
    }
    if (!count) {
        fprintf(w->out, " %s\n", l->keyed ? "{}" : "[]");
        return;
    }
    fputc('\n', w->out);
    for (uint32_t i = first; i < first + count; i++) {
        const char *elem = base + l->array_off + (size_t)i * l->elem_size;
        if (l->keyed) {
            line_start(w, indent + 2);
            fprintf(w->out, "%s:\n", elem + l->name_off);
            write_map(w, l->elem, elem, indent + 4);
        } else {
            w->dash = true;
            write_map(w, l->elem, elem, indent + 4);
        }
    }
}

static void write_field(struct writer *w, const struct hs__cfg_field *f, const void *obj,
                        int indent)
{
    const char *p = (const char *)obj + f->off;
    FILE *out = w->out;
    line_start(w, indent);
    fprintf(out, "%s:", f->key);
    switch (f->kind) {
    case HS__K_DOUBLE:
        fputc(' ', out);
        put_double(out, *(const double *)p);
        break;
    case HS__K_U32:
        fprintf(out, (f->flags & HS__F_HEX) ? " 0x%" PRIx32 : " %" PRIu32, *(const uint32_t *)p);
        break;
    case HS__K_I32:
        fprintf(out, " %" PRId32, *(const int32_t *)p);
        break;
    case HS__K_U64:
        fprintf(out, " %" PRIu64, *(const uint64_t *)p);
        break;
    case HS__K_I64:
        fprintf(out, " %" PRId64, *(const int64_t *)p);
        break;
    case HS__K_BOOL:
        fputs(*(const bool *)p ? " true" : " false", out);
        break;
    case HS__K_ENUM:
        fprintf(out, " %s", f->names[*(const int *)p]);
        break;
    case HS__K_NAME:
    case HS__K_TEXT:
        fputc(' ', out);
        put_string(out, p);
        break;
    case HS__K_PATH:
        fputc(' ', out);
        put_string(out, *(char *const *)p);
        break;
    case HS__K_VEC:
        fputs(" [", out);
        for (uint32_t i = 0; i < f->n; i++) {
            if (i)
                fputs(", ", out);
            put_double(out, ((const double *)p)[i]);
        }
        fputc(']', out);
        break;
    case HS__K_MODE:
        fprintf(out, " 0%03" PRIo32, *(const uint32_t *)p);
        break;
    case HS__K_MODES: {
        fputs(" [", out);
        bool any = false;
        for (int m = 0; f->names[m]; m++)
            if (*(const uint32_t *)p & (1u << m)) {
                fprintf(out, "%s%s", any ? ", " : "", f->names[m]);
                any = true;
            }
        fputc(']', out);
        break;
    }
    case HS__K_REF: {
        const struct hs_cfg_ref *r = (const struct hs_cfg_ref *)p;
        fprintf(out, " %s.%s.%s", hs__names_ref_kind[r->kind], r->name,
                r->quantity == HS_CFG_Q_SENSOR_VALUE ? r->value : hs__names_quantity[r->quantity]);
        break;
    }
    case HS__K_SECTION:
        fputc('\n', out);
        write_map(w, f->sub, p, indent + 2);
        return;
    case HS__K_LIST:
        write_list(w, f, obj, indent);
        return;
    case HS__K_RENAMED: /* never wanted */
        return;
    }
    fputc('\n', out);
}

static void write_map(struct writer *w, const struct hs__cfg_table *t, const void *obj, int indent)
{
    for (uint32_t i = 0; i < t->nfields; i++)
        if (wanted(&t->fields[i], obj))
            write_field(w, &t->fields[i], obj, indent);
}

int hs_config_write(const struct hs_config *config, FILE *out)
{
    struct writer w = {.out = out, .cfg = config};
    fprintf(out, "# resolved from %s\n", config->path ? config->path : "(defaults)");
    write_map(&w, &hs__cfg_root, config, 0);
    if (fflush(out) != 0 || ferror(out))
        return -EIO;
    return 0;
}
