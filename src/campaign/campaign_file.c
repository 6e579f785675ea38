/* The campaign file (src/campaign/README.md): YAML read with libyaml's document API so every
 * error names the file, the line and the field. Paths are taken relative to the file's folder,
 * as a bench config's model paths are. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "hilsim/campaign.h"
#include "hilsim/file_open.h"

struct ctx {
    yaml_document_t *doc;
    const char *name;
    char *err;
    size_t errlen;
};

static int fail(struct ctx *x, const yaml_node_t *n, const char *field, const char *fmt, ...)
{
    int len = snprintf(x->err, x->errlen, "%s:%zu: %s: ", x->name,
                       n ? n->start_mark.line + 1 : (size_t)1, field);
    if (len >= 0 && (size_t)len < x->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(x->err + len, x->errlen - (size_t)len, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *node(struct ctx *x, int id)
{
    return yaml_document_get_node(x->doc, id);
}

static int get_str(struct ctx *x, yaml_node_t *n, const char *field, char *out, size_t outlen)
{
    const char *s = scalar(n);
    if (!s)
        return fail(x, n, field, "a string is expected");
    if (strlen(s) >= outlen)
        return fail(x, n, field, "longer than %zu bytes", outlen - 1);
    strcpy(out, s);
    return 0;
}

static int get_num(struct ctx *x, yaml_node_t *n, const char *field, double *out)
{
    const char *s = scalar(n);
    char *end;
    if (!s || !*s)
        return fail(x, n, field, "a number is expected");
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !isfinite(v))
        return fail(x, n, field, "'%s' is not a finite number", s);
    *out = v;
    return 0;
}

static int get_int(struct ctx *x, yaml_node_t *n, const char *field, long lo, long hi, long *out)
{
    double v;
    int r = get_num(x, n, field, &v);
    if (r < 0)
        return r;
    if (v != floor(v) || v < (double)lo || v > (double)hi)
        return fail(x, n, field, "an integer from %ld to %ld is expected", lo, hi);
    *out = (long)v;
    return 0;
}

/* Joins base's folder and a relative path (absolute paths kept). */
static int resolve(struct ctx *x, yaml_node_t *n, const char *field, const char *base,
                   const char *rel, char *out)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", base);
    const char *dir = dirname(tmp);
    int len = rel[0] == '/' ? snprintf(out, PATH_MAX, "%s", rel)
                            : snprintf(out, PATH_MAX, "%s/%s", dir, rel);
    if (len < 0 || len >= PATH_MAX)
        return fail(x, n, field, "path too long");
    return 0;
}

static int parse_values(struct ctx *x, yaml_node_t *seq, const char *field, struct hs_camp_param *p)
{
    if (seq->type != YAML_SEQUENCE_NODE)
        return fail(x, seq, field, "a list of values is expected");
    p->nvalues = 0;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        if (p->nvalues == HS_CAMP_VALUES_MAX)
            return fail(x, seq, field, "more than %d values", HS_CAMP_VALUES_MAX);
        int r = get_str(x, node(x, *it), field, p->values[p->nvalues], HS_CAMP_VALUE_LEN);
        if (r < 0)
            return r;
        p->nvalues++;
    }
    if (p->nvalues == 0)
        return fail(x, seq, field, "an empty list");
    return 0;
}

static int parse_pair(struct ctx *x, yaml_node_t *seq, const char *field, int want, double *v)
{
    if (seq->type != YAML_SEQUENCE_NODE ||
        seq->data.sequence.items.top - seq->data.sequence.items.start != want)
        return fail(x, seq, field, "a list of %d numbers is expected", want);
    for (int i = 0; i < want; i++) {
        int r = get_num(x, node(x, seq->data.sequence.items.start[i]), field, &v[i]);
        if (r < 0)
            return r;
    }
    return 0;
}

static int plain_word(const char *s)
{
    if (!*s)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_'))
            return 0;
    return 1;
}

/* A parameter's name: a plain word that is not one of the names every run has. */
static int valid_ident(const char *s)
{
    return plain_word(s) && strcmp(s, "seed") && strcmp(s, "run") && strcmp(s, "bench") &&
           strcmp(s, "examples") && strcmp(s, "dir");
}

static int parse_param(struct ctx *x, const char *name, yaml_node_t *n, struct hs_camp_param *p)
{
    char field[128];
    snprintf(field, sizeof field, "parameters.%s", name);
    if (!valid_ident(name) || strlen(name) >= sizeof p->name)
        return fail(
            x, n, field,
            "a parameter name is letters, digits and _ (not seed, run, bench, examples, dir)");
    snprintf(p->name, sizeof p->name, "%s", name);
    p->line = (int)n->start_mark.line + 1;
    if (n->type != YAML_MAPPING_NODE ||
        n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1)
        return fail(x, n, field,
                    "one of {list: [...]}, {range: [from, to, step]}, "
                    "{uniform: [low, high]}, {normal: [mean, sd]}, {choice: [...]}");
    yaml_node_pair_t *pr = n->data.mapping.pairs.start;
    const char *kind = scalar(node(x, pr->key));
    yaml_node_t *v = node(x, pr->value);
    double d[3];
    int r;
    if (kind && !strcmp(kind, "list")) {
        p->kind = HS_CAMP_LIST;
        return parse_values(x, v, field, p);
    }
    if (kind && !strcmp(kind, "choice")) {
        p->kind = HS_CAMP_CHOICE;
        return parse_values(x, v, field, p);
    }
    if (kind && !strcmp(kind, "range")) {
        p->kind = HS_CAMP_RANGE;
        if ((r = parse_pair(x, v, field, 3, d)) < 0)
            return r;
        if (!(d[2] > 0) || d[1] < d[0])
            return fail(x, v, field, "range [from, to, step] needs to >= from and step > 0");
        double count = floor((d[1] - d[0]) / d[2] + 1e-9) + 1;
        if (count > HS_CAMP_VALUES_MAX)
            return fail(x, v, field, "%.0f values, more than %d", count, HS_CAMP_VALUES_MAX);
        p->a = d[0], p->b = d[1], p->step = d[2];
        p->nvalues = (int)count;
        for (int i = 0; i < p->nvalues; i++)
            snprintf(p->values[i], HS_CAMP_VALUE_LEN, "%.10g", d[0] + i * d[2]);
        return 0;
    }
    if (kind && (!strcmp(kind, "uniform") || !strcmp(kind, "normal"))) {
        p->kind = kind[0] == 'u' ? HS_CAMP_UNIFORM : HS_CAMP_NORMAL;
        if ((r = parse_pair(x, v, field, 2, d)) < 0)
            return r;
        if (p->kind == HS_CAMP_UNIFORM && !(d[1] > d[0]))
            return fail(x, v, field, "uniform [low, high] needs high > low");
        if (p->kind == HS_CAMP_NORMAL && !(d[1] >= 0))
            return fail(x, v, field, "normal [mean, sd] needs sd >= 0");
        p->a = d[0], p->b = d[1];
        return 0;
    }
    return fail(x, node(x, pr->key), field,
                "unknown kind '%s' (list, range, uniform, normal, choice)", kind ? kind : "?");
}

static int parse_campaign(struct ctx *x, yaml_node_t *m, struct hs_campaign *c)
{
    if (m->type != YAML_MAPPING_NODE)
        return fail(x, m, "campaign", "a mapping is expected");
    int have_config = 0, have_scenario = 0, r = 0;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; r == 0 && p < m->data.mapping.pairs.top;
         p++) {
        const char *k = scalar(node(x, p->key));
        yaml_node_t *v = node(x, p->value);
        char field[96], rel[PATH_MAX];
        long n;
        snprintf(field, sizeof field, "campaign.%s", k ? k : "?");
        if (!k) {
            r = fail(x, node(x, p->key), "campaign", "keys are strings");
        } else if (!strcmp(k, "name")) {
            r = get_str(x, v, field, c->name, sizeof c->name);
            if (r == 0 && !plain_word(c->name))
                r = fail(x, v, field, "letters, digits and _ only");
        } else if (!strcmp(k, "config")) {
            have_config = 1;
            if ((r = get_str(x, v, field, rel, sizeof rel)) == 0)
                r = resolve(x, v, field, c->file, rel, c->config);
        } else if (!strcmp(k, "scenario")) {
            have_scenario = 1;
            if ((r = get_str(x, v, field, rel, sizeof rel)) == 0)
                r = resolve(x, v, field, c->file, rel, c->scenario);
        } else if (!strcmp(k, "controller")) {
            if (v->type != YAML_SEQUENCE_NODE) {
                r = fail(x, v, field,
                         "a command as a list of words, e.g. "
                         "['${examples}/pd_controller', '${bench}', '100000']");
                break;
            }
            for (yaml_node_item_t *it = v->data.sequence.items.start;
                 r == 0 && it < v->data.sequence.items.top; it++) {
                if (c->ncontroller == HS_CAMP_ARGV_MAX)
                    r = fail(x, v, field, "more than %d words", HS_CAMP_ARGV_MAX);
                else
                    r = get_str(x, node(x, *it), field, c->controller[c->ncontroller++], 256);
            }
            if (r == 0 && c->ncontroller == 0)
                r = fail(x, v, field, "an empty command (leave the key out for no controller)");
        } else if (!strcmp(k, "time_limit_s")) {
            r = get_num(x, v, field, &c->time_limit_s);
            if (r == 0 && !(c->time_limit_s > 0 && c->time_limit_s <= 86400))
                r = fail(x, v, field, "from 0 (exclusive) to 86400 s");
        } else if (!strcmp(k, "runs_per_cell")) {
            if ((r = get_int(x, v, field, 1, HS_CAMP_RUNS_MAX, &n)) == 0)
                c->runs_per_cell = (int)n;
        } else if (!strcmp(k, "seed")) {
            if ((r = get_int(x, v, field, 0, 1L << 52, &n)) == 0)
                c->seed = (uint64_t)n;
        } else if (!strcmp(k, "record")) {
            const char *s = scalar(v);
            if (s && !strcmp(s, "failures"))
                c->record = HS_CAMP_RECORD_FAILURES;
            else if (s && !strcmp(s, "all"))
                c->record = HS_CAMP_RECORD_ALL;
            else if (s && !strcmp(s, "none"))
                c->record = HS_CAMP_RECORD_NONE;
            else
                r = fail(x, v, field, "failures, all or none");
        } else {
            r = fail(x, node(x, p->key), field,
                     "unknown key (name, config, scenario, controller, time_limit_s, "
                     "runs_per_cell, seed, record)");
        }
    }
    if (r == 0 && !have_config)
        r = fail(x, m, "campaign.config", "required: the bench config file");
    if (r == 0 && !have_scenario)
        r = fail(x, m, "campaign.scenario", "required: the scenario file (a template)");
    if (r == 0 && !c->name[0])
        r = fail(x, m, "campaign.name", "required");
    return r;
}

static int parse_root(struct ctx *x, struct hs_campaign *c)
{
    yaml_node_t *root = yaml_document_get_root_node(x->doc);
    if (!root || root->type != YAML_MAPPING_NODE)
        return fail(x, root, "(top)", "a mapping with campaign:, parameters: and set: is expected");
    int have_campaign = 0, r = 0;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
         r == 0 && p < root->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(x, p->key));
        yaml_node_t *v = node(x, p->value);
        if (k && !strcmp(k, "campaign")) {
            have_campaign = 1;
            r = parse_campaign(x, v, c);
        } else if (k && !strcmp(k, "parameters")) {
            if (v->type != YAML_MAPPING_NODE)
                return fail(x, v, "parameters", "a mapping of name: {kind: ...}");
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
                 r == 0 && q < v->data.mapping.pairs.top; q++) {
                const char *name = scalar(node(x, q->key));
                if (c->nparams == HS_CAMP_PARAMS_MAX)
                    return fail(x, v, "parameters", "more than %d", HS_CAMP_PARAMS_MAX);
                for (int i = 0; name && i < c->nparams; i++)
                    if (!strcmp(c->params[i].name, name))
                        return fail(x, node(x, q->key), "parameters", "'%s' given twice", name);
                r = parse_param(x, name ? name : "", node(x, q->value), &c->params[c->nparams++]);
            }
        } else if (k && !strcmp(k, "set")) {
            if (v->type != YAML_MAPPING_NODE)
                return fail(x, v, "set", "a mapping of config key: value");
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
                 r == 0 && q < v->data.mapping.pairs.top; q++) {
                if (c->nsets == HS_CAMP_SETS_MAX)
                    return fail(x, v, "set", "more than %d keys", HS_CAMP_SETS_MAX);
                struct hs_camp_set *s = &c->sets[c->nsets++];
                s->line = (int)node(x, q->key)->start_mark.line + 1;
                if ((r = get_str(x, node(x, q->key), "set", s->key, sizeof s->key)) == 0)
                    r = get_str(x, node(x, q->value), "set", s->value, sizeof s->value);
            }
        } else {
            r = fail(x, node(x, p->key), k ? k : "?", "unknown key (campaign, parameters, set)");
        }
    }
    if (r == 0 && !have_campaign)
        r = fail(x, root, "campaign", "required");
    return r;
}

static int count_runs(struct ctx *x, struct hs_campaign *c)
{
    long cells = 1;
    for (int i = 0; i < c->nparams; i++)
        if (c->params[i].kind == HS_CAMP_LIST || c->params[i].kind == HS_CAMP_RANGE) {
            cells *= c->params[i].nvalues;
            if (cells > HS_CAMP_RUNS_MAX)
                return fail(x, NULL, "parameters", "more than %d cells", HS_CAMP_RUNS_MAX);
        }
    if (cells * c->runs_per_cell > HS_CAMP_RUNS_MAX)
        return fail(x, NULL, "campaign.runs_per_cell", "more than %d runs in all",
                    HS_CAMP_RUNS_MAX);
    c->cells = (int)cells;
    c->runs = (int)(cells * c->runs_per_cell);
    return 0;
}

int hs_campaign_parse(struct hs_campaign *c, const char *name, const char *text, size_t len,
                      char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    snprintf(c->file, sizeof c->file, "%s", name);
    c->time_limit_s = 600;
    c->runs_per_cell = 1;
    c->record = HS_CAMP_RECORD_FAILURES;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return -ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    struct ctx x = {&doc, name, err, errlen};
    int r;
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, errlen, "%s:%zu: %s", name, parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "not YAML");
        yaml_parser_delete(&parser);
        return -EINVAL;
    }
    r = parse_root(&x, c);
    if (r == 0)
        r = count_runs(&x, c);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return r;
}

int hs_campaign_load(struct hs_campaign *c, const char *file, char *err, size_t errlen)
{
    uint8_t *text = NULL;
    size_t len = 0;
    int r = hs_read_regular(file, 0, HS_CAMP_FILE_MAX, &text, &len);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", file, hs_open_regular_strerror(r));
        return r;
    }
    r = hs_campaign_parse(c, file, (const char *)text, len, err, errlen);
    free(text);
    if (r < 0)
        return r;
    uint8_t *scen = NULL;
    r = hs_read_regular(c->scenario, 0, HS_CAMP_FILE_MAX, &scen, &len);
    if (r < 0) {
        snprintf(err, errlen, "%s: campaign.scenario: %s: %s", file, c->scenario,
                 hs_open_regular_strerror(r));
        return r;
    }
    c->scenario_text = (char *)scen; /* hs_read_regular ends it with a NUL */
    return 0;
}

void hs_campaign_free(struct hs_campaign *c)
{
    free(c->scenario_text);
    c->scenario_text = NULL;
}
