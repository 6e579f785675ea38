/* Reading a config: file or buffer -> libyaml document -> struct hs_config -> cross-field rules.
 * All or nothing: on any error the half-built config is freed and *ret_config is untouched. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_can_proto.h"
#include "hilsim/file_open.h"

#define HS_CFG_FILE_MAX (4u << 20) /* a bench config is a few kB; refuse anything absurd */
#define HS_CFG_MAX_DEPTH 64        /* nested mappings and lists, the root counting as 1 */
/* Values, mappings and lists in one file. libyaml's document loader spends about 170 bytes
 * per node (the node, its tag and value strings, the collection's item stack), so 4 MiB of
 * "1," was 2 million nodes and 442 MB; the largest config in the tree has 316 nodes. */
#define HS_CFG_MAX_YAML_NODES 100000

static void free_paths(struct hs_config *cfg)
{
    free(cfg->path);
    free(cfg->base_dir);
    for (uint32_t i = 0; i < HS_CFG_MAX_MODELS; i++)
        free(cfg->models[i].file);
    for (uint32_t i = 0; i < HS_CFG_MAX_NODES; i++)
        for (int p = 0; p < HS_CFG_CAN_PROTOCOL_MAX; p++)
            if (hs__can_proto_cfgs[p]->release)
                hs__can_proto_cfgs[p]->release(cfg->can.nodes[i].proto[p].bytes);
}

void hs_config_free(const struct hs_config *config)
{
    if (!config)
        return;
    struct hs_config *cfg = (struct hs_config *)config;
    free_paths(cfg);
    free(cfg);
}

int hs__cfg_syntax_error(const yaml_parser_t *p, const char *name, struct hs_diag *diag)
{
    if (p->error == YAML_MEMORY_ERROR)
        return hs_diag_set(diag, -ENOMEM, name, 0, 0, "out of memory");
    /* libyaml reports the problem at problem_mark; the context (e.g. "while parsing a block
     * mapping") starts earlier, so point at the problem itself */
    const yaml_mark_t *m = &p->problem_mark;
    return hs_diag_set(diag, -EINVAL, name, (int)m->line + 1, (int)m->column + 1,
                       "YAML syntax error: %s%s%s", p->problem ? p->problem : "unknown",
                       p->context ? " " : "", p->context ? p->context : "");
}

/* libyaml's scanner keeps one simple-key slot per open flow collection and walks them all for
 * every token, so "[[[[..." costs depth squared (50,000 deep: 9 s). No bench config nests
 * more than about 6 levels; this pass over the events refuses the first collection deeper
 * than HS_CFG_MAX_DEPTH, at its position, before the loader builds anything. Its cost is
 * linear: the scanner's look-ahead is bounded (1024 characters per simple key). The same pass
 * counts the nodes and refuses more than HS_CFG_MAX_YAML_NODES, so what the loader then builds is
 * bounded (about 17 MB), whatever the file's shape. */
int hs__cfg_check_depth(struct hs__ctx *c, const char *data, unsigned long size)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    if (!yaml_parser_initialize(&parser))
        return hs_diag_set(c->diag, -ENOMEM, c->file, 0, 0, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, size);
    int depth = 0, r = 0;
    unsigned long nodes = 0;
    for (;;) {
        if (!yaml_parser_parse(&parser, &ev)) {
            r = hs__cfg_syntax_error(&parser, c->file, c->diag);
            break;
        }
        yaml_event_type_t t = ev.type;
        if ((t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT ||
             t == YAML_MAPPING_START_EVENT) &&
            ++nodes > HS_CFG_MAX_YAML_NODES)
            r = hs_diag_set(c->diag, -EFBIG, c->file, (int)ev.start_mark.line + 1,
                            (int)ev.start_mark.column + 1,
                            "more than %d values, mappings and lists (a bench config has a few "
                            "hundred)",
                            HS_CFG_MAX_YAML_NODES);
        else if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) {
            if (++depth > HS_CFG_MAX_DEPTH)
                r = hs_diag_set(c->diag, -EINVAL, c->file, (int)ev.start_mark.line + 1,
                                (int)ev.start_mark.column + 1,
                                "nested deeper than %d mappings and lists", HS_CFG_MAX_DEPTH);
        } else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        yaml_event_delete(&ev);
        if (r < 0 || t == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&parser);
    return r;
}

static int parse_document(struct hs__ctx *c, const char *data, unsigned long size)
{
    yaml_parser_t parser;
    yaml_document_t doc, extra;
    int r = hs__cfg_check_depth(c, data, size);
    if (r < 0)
        return r;
    if (!yaml_parser_initialize(&parser))
        return hs_diag_set(c->diag, -ENOMEM, c->file, 0, 0, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, size);
    if (!yaml_parser_load(&parser, &doc)) {
        r = hs__cfg_syntax_error(&parser, c->file, c->diag);
        yaml_parser_delete(&parser);
        return r;
    }
    c->doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        r = hs_diag_set(c->diag, -EINVAL, c->file, 0, 0, "empty config (needs bench and models)");
        goto out;
    }
    if ((r = hs__cfg_apply_sets(&doc, c->sets, c->nsets, c->diag)) < 0)
        goto out;
    root = yaml_document_get_root_node(&doc); /* the sets may have moved the nodes */
    r = hs__cfg_parse_map(c, root, &hs__cfg_root, c->cfg, "", NULL);
    if (r == 0)
        r = hs__cfg_validate(c);
    if (r < 0) {
        hs__cfg_blame_set(c->diag, c->sets, c->nsets);
        goto out;
    }
    /* a second document would be silently ignored by a reader that stops at the first */
    if (!yaml_parser_load(&parser, &extra)) {
        r = hs__cfg_syntax_error(&parser, c->file, c->diag);
        goto out;
    }
    yaml_node_t *more = yaml_document_get_root_node(&extra);
    if (more)
        r = hs_diag_set(c->diag, -EINVAL, c->file, (int)more->start_mark.line + 1,
                        (int)more->start_mark.column + 1,
                        "a second YAML document; one file describes one bench");
    yaml_document_delete(&extra);
out:
    c->doc = NULL;
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return r;
}

int hs_config_load_buffer(const char *data, unsigned long size, const char *name,
                          const char *base_dir, const struct hs_config **ret_config,
                          struct hs_diag *diag)
{
    return hs_config_load_buffer_sets(data, size, name, base_dir, NULL, 0, ret_config, diag);
}

int hs_config_load_buffer_sets(const char *data, unsigned long size, const char *name,
                               const char *base_dir, const char *const *sets, uint32_t nsets,
                               const struct hs_config **ret_config, struct hs_diag *diag)
{
    if (!name)
        name = "<buffer>";
    struct hs_config *cfg = malloc(sizeof *cfg);
    if (!cfg)
        return hs_diag_set(diag, -ENOMEM, name, 0, 0, "out of memory");
    hs_config_defaults(cfg);
    cfg->path = strdup(name);
    if (base_dir)
        cfg->base_dir = realpath(base_dir, NULL);
    if (!cfg->path || (base_dir && !cfg->base_dir)) {
        int e = errno;
        hs_config_free(cfg);
        return hs_diag_set(diag, -e, name, 0, 0, "base directory '%s': %s",
                           base_dir ? base_dir : "", strerror(e));
    }
    struct hs__ctx c = {
        .cfg = cfg,
        .file = name,
        .base_dir = cfg->base_dir,
        .diag = diag,
        .sets = sets,
        .nsets = nsets,
    };
    int r = parse_document(&c, data, size);
    if (r < 0) {
        hs_config_free(cfg);
        return r;
    }
    *ret_config = cfg;
    return 0;
}

int hs__cfg_read_file(const char *path, char **ret_data, unsigned long *ret_size,
                      struct hs_diag *diag)
{
    /* A FIFO or a device would block fopen() (and a reload with it) until killed. */
    FILE *f = NULL;
    int e = hs_fopen_regular(path, &f);
    if (e < 0)
        return hs_diag_set(diag, e, path, 0, 0, "cannot open: %s", hs_open_regular_strerror(e));
    char *data = NULL;
    size_t used = 0, cap = 0;
    int r = 0;
    for (;;) {
        if (used == cap) {
            if (cap >= HS_CFG_FILE_MAX) {
                r = hs_diag_set(diag, -EFBIG, path, 0, 0, "larger than %u bytes", HS_CFG_FILE_MAX);
                break;
            }
            cap = cap ? cap * 2 : 8192;
            char *bigger = realloc(data, cap);
            if (!bigger) {
                r = hs_diag_set(diag, -ENOMEM, path, 0, 0, "out of memory");
                break;
            }
            data = bigger;
        }
        size_t n = fread(data + used, 1, cap - used, f);
        used += n;
        if (n == 0) {
            if (ferror(f))
                r = hs_diag_set(diag, -EIO, path, 0, 0, "read error");
            break;
        }
    }
    fclose(f);
    if (r < 0) {
        free(data);
        return r;
    }
    *ret_data = data;
    *ret_size = used;
    return 0;
}

int hs_config_load(const char *path, const struct hs_config **ret_config, struct hs_diag *diag)
{
    return hs_config_load_sets(path, NULL, 0, ret_config, diag);
}

int hs_config_load_sets(const char *path, const char *const *sets, uint32_t nsets,
                        const struct hs_config **ret_config, struct hs_diag *diag)
{
    char *data = NULL, *dir_copy = strdup(path);
    unsigned long size = 0;
    if (!dir_copy)
        return hs_diag_set(diag, -ENOMEM, path, 0, 0, "out of memory");
    int r = hs__cfg_read_file(path, &data, &size, diag);
    if (r == 0)
        r = hs_config_load_buffer_sets(data, size, path, dirname(dir_copy), sets, nsets, ret_config,
                                       diag);
    free(data);
    free(dir_copy);
    return r;
}
