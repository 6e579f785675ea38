/* Overrides given on the command line (`--set physics.friction=0.3`): each one is written into
 * the YAML document before the schema walker reads it, so a set value goes through exactly the
 * checks a value in the file does (range, type, unknown key, cross-field rules). The nodes a set
 * adds carry a line number past any real file's, so a message the walker gives about them is
 * turned into one that names the --set instead of a line of the file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_internal.h"

#define SET_LINE_BASE (1u << 28) /* marks of a set's nodes: SET_LINE_BASE + its index */
#define SET_KEY_MAX 256

static yaml_node_t *node(yaml_document_t *doc, int id)
{
    return yaml_document_get_node(doc, id);
}

static void mark(yaml_document_t *doc, int id, uint32_t set)
{
    yaml_node_t *n = node(doc, id);
    n->start_mark.line = n->end_mark.line = SET_LINE_BASE + set;
    n->start_mark.column = n->end_mark.column = 0;
}

/* Copies node id of src (a small document: the value as YAML) into doc; returns its new id. */
static int copy_node(yaml_document_t *doc, yaml_document_t *src, int id, uint32_t set, int depth)
{
    yaml_node_t *s = node(src, id);
    if (!s || depth > 16)
        return 0;
    int n = 0;
    if (s->type == YAML_SCALAR_NODE) {
        n = yaml_document_add_scalar(doc, NULL, s->data.scalar.value, (int)s->data.scalar.length,
                                     s->data.scalar.style);
    } else if (s->type == YAML_SEQUENCE_NODE) {
        n = yaml_document_add_sequence(doc, NULL, YAML_FLOW_SEQUENCE_STYLE);
        /* the source's item array may move as doc grows: it is src's, not doc's, so it stays */
        for (yaml_node_item_t *it = s->data.sequence.items.start;
             n && it < s->data.sequence.items.top; it++) {
            int c = copy_node(doc, src, *it, set, depth + 1);
            if (!c || !yaml_document_append_sequence_item(doc, n, c))
                return 0;
        }
    } else if (s->type == YAML_MAPPING_NODE) {
        n = yaml_document_add_mapping(doc, NULL, YAML_FLOW_MAPPING_STYLE);
        for (yaml_node_pair_t *p = s->data.mapping.pairs.start; n && p < s->data.mapping.pairs.top;
             p++) {
            int k = copy_node(doc, src, p->key, set, depth + 1);
            int v = k ? copy_node(doc, src, p->value, set, depth + 1) : 0;
            if (!v || !yaml_document_append_mapping_pair(doc, n, k, v))
                return 0;
        }
    }
    if (n)
        mark(doc, n, set);
    return n;
}

/* The value text as YAML (so "[0, 0, -9.81]" is a list and "0.3" a plain scalar). */
static int value_node(yaml_document_t *doc, const char *text, uint32_t set, const char *arg,
                      struct hs_diag *d)
{
    yaml_parser_t p;
    yaml_document_t v;
    if (!yaml_parser_initialize(&p))
        return hs_diag_set(d, -ENOMEM, "--set", 0, 0, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
    int r = 0;
    if (!yaml_parser_load(&p, &v)) {
        r = hs_diag_set(d, -EINVAL, "--set", 0, 0, "%s: the value is not YAML: %s", arg,
                        p.problem ? p.problem : "syntax error");
        yaml_parser_delete(&p);
        return r;
    }
    yaml_node_t *root = yaml_document_get_root_node(&v);
    if (!root) /* "key=": an empty value, as "key:" in the file */
        r = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)"", 0, YAML_PLAIN_SCALAR_STYLE);
    else
        r = copy_node(doc, &v, 1, set, 0);
    if (r)
        mark(doc, r, set);
    yaml_document_delete(&v);
    yaml_parser_delete(&p);
    return r ? r : hs_diag_set(d, -ENOMEM, "--set", 0, 0, "%s: out of memory", arg);
}

/* A shallow copy of mapping or sequence id (its pairs or items refer to the same children), with
 * its marks: a YAML alias (*name) makes several parents share one node, and a set must change
 * the path it names only. Returns the copy's id, id itself for a scalar, 0 when out of memory. */
static int unshare(yaml_document_t *doc, int id)
{
    yaml_node_t *n = node(doc, id);
    yaml_mark_t start = n->start_mark, end = n->end_mark;
    int c = 0;
    if (n->type == YAML_MAPPING_NODE) {
        ptrdiff_t len = n->data.mapping.pairs.top - n->data.mapping.pairs.start;
        c = yaml_document_add_mapping(doc, NULL, n->data.mapping.style);
        for (ptrdiff_t i = 0; c && i < len; i++) {
            yaml_node_pair_t p = node(doc, id)->data.mapping.pairs.start[i];
            if (!yaml_document_append_mapping_pair(doc, c, p.key, p.value))
                return 0;
        }
    } else if (n->type == YAML_SEQUENCE_NODE) {
        ptrdiff_t len = n->data.sequence.items.top - n->data.sequence.items.start;
        c = yaml_document_add_sequence(doc, NULL, n->data.sequence.style);
        for (ptrdiff_t i = 0; c && i < len; i++)
            if (!yaml_document_append_sequence_item(doc, c,
                                                    node(doc, id)->data.sequence.items.start[i]))
                return 0;
    } else {
        return id;
    }
    if (c) {
        node(doc, c)->start_mark = start;
        node(doc, c)->end_mark = end;
    }
    return c;
}

static int add_key(yaml_document_t *doc, const char *key, uint32_t set)
{
    int k = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)key, (int)strlen(key),
                                     YAML_PLAIN_SCALAR_STYLE);
    if (k)
        mark(doc, k, set);
    return k;
}

/* One key=value into the document: walk (creating missing mappings) to the key's parent. */
static int apply_one(yaml_document_t *doc, const char *arg, uint32_t set, struct hs_diag *d)
{
    const char *eq = strchr(arg, '=');
    char key[SET_KEY_MAX];
    size_t kl = eq ? (size_t)(eq - arg) : 0;
    if (!eq || kl == 0 || kl >= sizeof key)
        return hs_diag_set(d, -EINVAL, "--set", 0, 0,
                           "'%s': expected KEY=VALUE with a dotted key (physics.friction=0.3)",
                           arg);
    /* "models[0].pose" is "models.0.pose" */
    size_t o = 0;
    for (size_t i = 0; i < kl; i++)
        if (arg[i] == '[')
            key[o++] = '.';
        else if (arg[i] != ']')
            key[o++] = arg[i];
    key[o] = 0;
    int cur = 1; /* the root mapping */
    char path[SET_KEY_MAX] = "";
    char *save = NULL;
    for (char *seg = strtok_r(key, ".", &save); seg; seg = strtok_r(NULL, ".", &save)) {
        char *next = save && *save ? save : NULL;
        yaml_node_t *n = node(doc, cur);
        size_t pl = strlen(path);
        snprintf(path + pl, sizeof path - pl, "%s%s", pl ? "." : "", seg);
        if (n->type == YAML_SEQUENCE_NODE) {
            char *end;
            long i = strtol(seg, &end, 10);
            long len = n->data.sequence.items.top - n->data.sequence.items.start;
            if (*end || i < 0 || i >= len)
                return hs_diag_set(d, -EINVAL, "--set", 0, 0,
                                   "%s: %s: not an index of the list (0..%ld)", arg, path, len - 1);
            if (!next) {
                int v = value_node(doc, eq + 1, set, arg, d);
                if (v < 0)
                    return v;
                node(doc, cur)->data.sequence.items.start[i] = v;
                return 0;
            }
            int c = unshare(doc, n->data.sequence.items.start[i]);
            if (!c)
                return hs_diag_set(d, -ENOMEM, "--set", 0, 0, "out of memory");
            node(doc, cur)->data.sequence.items.start[i] = c;
            cur = c;
            continue;
        }
        if (n->type != YAML_MAPPING_NODE) {
            path[pl] = 0; /* the parent's path */
            return hs_diag_set(d, -EINVAL, "--set", 0, 0, "%s: %s is not a mapping in the config",
                               arg, pl ? path : "the top level");
        }
        yaml_node_pair_t *hit = NULL;
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = node(doc, p->key);
            if (k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, seg))
                hit = p;
        }
        if (!next) {
            /* adding nodes may move the node array: keep the pair's index, not n */
            ptrdiff_t at = hit ? hit - n->data.mapping.pairs.start : -1;
            int v = value_node(doc, eq + 1, set, arg, d);
            if (v < 0)
                return v;
            if (at >= 0) {
                node(doc, cur)->data.mapping.pairs.start[at].value = v;
                return 0;
            }
            int k = add_key(doc, seg, set);
            return k && yaml_document_append_mapping_pair(doc, cur, k, v)
                       ? 0
                       : hs_diag_set(d, -ENOMEM, "--set", 0, 0, "out of memory");
        }
        if (hit) {
            ptrdiff_t at = hit - n->data.mapping.pairs.start;
            int c = unshare(doc, hit->value);
            if (!c)
                return hs_diag_set(d, -ENOMEM, "--set", 0, 0, "out of memory");
            node(doc, cur)->data.mapping.pairs.start[at].value = c;
            cur = c;
            continue;
        }
        int k = add_key(doc, seg, set);
        int m = k ? yaml_document_add_mapping(doc, NULL, YAML_BLOCK_MAPPING_STYLE) : 0;
        if (!m || !yaml_document_append_mapping_pair(doc, cur, k, m))
            return hs_diag_set(d, -ENOMEM, "--set", 0, 0, "out of memory");
        mark(doc, m, set);
        cur = m;
    }
    return 0;
}

int hs__cfg_apply_sets(yaml_document_t *doc, const char *const *sets, uint32_t nsets,
                       struct hs_diag *d)
{
    if (nsets && (!yaml_document_get_root_node(doc) ||
                  yaml_document_get_root_node(doc)->type != YAML_MAPPING_NODE))
        return hs_diag_set(d, -EINVAL, "--set", 0, 0, "the config is not a mapping");
    for (uint32_t i = 0; i < nsets; i++) {
        int r = apply_one(doc, sets[i], i, d);
        if (r < 0)
            return r;
    }
    return 0;
}

void hs__cfg_blame_set(struct hs_diag *d, const char *const *sets, uint32_t nsets)
{
    if (!d || d->line <= (int)SET_LINE_BASE || (uint32_t)(d->line - 1 - SET_LINE_BASE) >= nsets)
        return;
    uint32_t i = (uint32_t)(d->line - 1 - SET_LINE_BASE);
    char msg[HS_DIAG_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", d->msg);
    /* the walker's message names the field path and what it expected */
    hs_diag_set(d, -EINVAL, "--set", 0, 0, "%s: %s", sets[i], msg);
}
