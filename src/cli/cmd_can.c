/* hilsim can: inspect DBC files and decode frames with them; write a CiA 402 node's EDS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_args.h"
#include "json_doc.h"
#include "commands.h"
#include "hilsim/can.h"
#include "hilsim/can_dbc.h"
#include "hilsim/config.h"
#include "hilsim/can_cia402.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim can dbc FILE [--json]\n"
            "       hilsim can decode FILE FRAME\n"
            "       hilsim can eds CONFIG NODE [-o|--output FILE]\n\n"
            "  dbc     parse a DBC file and print every message and signal as parsed: ID (hex),\n"
            "          name, length, sender; per signal the start bit, length, byte order\n"
            "          (intel/motorola), sign, value type, factor, offset, [min|max], unit,\n"
            "          multiplexing and receivers. --json prints the same as one JSON object.\n"
            "  decode  decode one frame in candump notation into physical values:\n"
            "            123#11223344       standard ID, classic data\n"
            "            1ABCDE12#0011      8 hex digits: extended ID\n"
            "            123#R  123#R8      remote request (optional DLC)\n"
            "            123##1DEADBEEF     CAN FD: flags digit (1 = BRS, 2 = ESI) then data\n"
            "  eds     write the EDS (CiA 306) of CONFIG's CiA 402 node NODE (its name or its\n"
            "          node-ID): the object dictionary hilsim simulates for it, with its\n"
            "          defaults after the node's config and EDS keys, for a CANopen master\n"
            "          (e.g. canopen's network.add_node(id, FILE)). To stdout, or -o FILE.\n\n"
            "Errors in the DBC are reported as FILE:LINE:COLUMN: message; slips the file gets\n"
            "away with (see the README) as FILE:LINE:COLUMN: warning: message, on stderr.\n"
            "FILE must be a regular file.\n"
            "exit codes: 0 success, 1 runtime failure, 2 bad usage or bad input\n");
}

static int load(const char *path, struct hs_dbc **ret)
{
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_dbc_load_file(path, ret, &d);
    if (r < 0) {
        hs__cli_print_diag("can", &d);
        return (r == -EINVAL || r == -ENOENT || r == -EISDIR || r == -EFBIG || r == -ENOTDIR)
                   ? HS_EXIT_USAGE
                   : HS_EXIT_FAILURE;
    }
    /* slips the file got away with: once, on stderr, in the diag format editors jump to */
    const struct hs_dbc *dbc = *ret;
    for (unsigned i = 0; i < dbc->n_warnings; i++) {
        const struct hs_dbc_warning *w = &dbc->warnings[i];
        if (w->column)
            fprintf(stderr, "hilsim can: %s:%d:%d: warning: %s\n", dbc->path, w->line, w->column,
                    w->msg);
        else
            fprintf(stderr, "hilsim can: %s:%d: warning: %s\n", dbc->path, w->line, w->msg);
    }
    if (dbc->n_warnings_dropped)
        fprintf(stderr, "hilsim can: %s: %u more warnings not shown\n", dbc->path,
                dbc->n_warnings_dropped);
    return HS_EXIT_OK;
}

/* Shortest decimal that reads back as the same double. */
static void fmt_num(char *buf, size_t size, double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* Shortest %g precision that reads back as the same double (fmt_num's rule). */
static int num_precision(double v)
{
    char buf[32];
    for (int prec = 1; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return prec;
    }
    return 17;
}

/* A JSON real that the dump prints with enough digits to read back exactly: *prec grows to
 * the precision the most demanding number of the document needs. */
static json_t *jnum(double v, int *prec)
{
    int p = num_precision(v);
    if (p > *prec)
        *prec = p;
    return json_real(v);
}

static json_t *jstr(const char *s)
{
    return hs_json_str(s);
}

static const char *order_name(const struct hs_dbc_signal *s)
{
    return s->byte_order == HS_DBC_INTEL ? "intel" : "motorola";
}

static const char *type_name(const struct hs_dbc_signal *s)
{
    static const char *const n[HS_DBC_VALUE_TYPE_MAX] = {"integer", "float32", "float64"};
    return n[s->value_type];
}

static void id_hex(char *buf, size_t size, const struct hs_dbc_message *m)
{
    snprintf(buf, size, m->extended ? "0x%08X" : "0x%03X", m->id);
}

static void print_text(const struct hs_dbc *dbc)
{
    printf("%s: version \"%s\", %u nodes, %u messages\n", dbc->path,
           dbc->version ? dbc->version : "", dbc->n_nodes, dbc->n_messages);
    for (unsigned i = 0; i < dbc->n_messages; i++) {
        const struct hs_dbc_message *m = &dbc->messages[i];
        char id[16];
        id_hex(id, sizeof id, m);
        printf("%s %s%s%s len %u sender %s\n", id, m->name, m->extended ? " (extended)" : "",
               m->fd ? " (FD)" : "", m->length, m->sender);
        for (unsigned k = 0; k < m->n_signals; k++) {
            const struct hs_dbc_signal *s = &m->signals[k];
            char f[32], o[32], lo[32], hi[32], mux[24] = "-";
            fmt_num(f, sizeof f, s->factor);
            fmt_num(o, sizeof o, s->offset);
            fmt_num(lo, sizeof lo, s->min);
            fmt_num(hi, sizeof hi, s->max);
            if (s->mux == HS_DBC_MULTIPLEXOR)
                snprintf(mux, sizeof mux, "multiplexor");
            else if (s->mux == HS_DBC_MULTIPLEXED)
                snprintf(mux, sizeof mux, "m%u", s->mux_value);
            printf("  %-24s start %3u len %2u %-8s %-8s %-7s factor %s offset %s [%s|%s] "
                   "\"%s\" mux %s",
                   s->name, s->start_bit, s->length, order_name(s),
                   s->is_signed ? "signed" : "unsigned", type_name(s), f, o, lo, hi, s->unit, mux);
            if (s->n_receivers) {
                printf(" receivers");
                for (unsigned r = 0; r < s->n_receivers; r++)
                    printf("%s%s", r ? "," : " ", s->receivers[r]);
            }
            printf("\n");
            for (unsigned v = 0; v < s->n_values; v++)
                printf("    %lld \"%s\"\n", (long long)s->values[v].value, s->values[v].text);
        }
    }
}

/* The document being built: one per process run, as `hilsim can dbc --json` prints one. */
static struct hs_json_doc doc;

static void set(json_t *obj, const char *key, json_t *val)
{
    hs_json_set(&doc, obj, key, val);
}

static void add(json_t *arr, json_t *val)
{
    hs_json_add(&doc, arr, val);
}

static json_t *signal_json(const struct hs_dbc_signal *s, int *prec)
{
    json_t *j = json_object();
    set(j, "name", jstr(s->name));
    set(j, "start_bit", json_integer(s->start_bit));
    set(j, "length", json_integer(s->length));
    set(j, "byte_order", json_string(order_name(s)));
    set(j, "signed", json_boolean(s->is_signed));
    set(j, "value_type", json_string(type_name(s)));
    set(j, "factor", jnum(s->factor, prec));
    set(j, "offset", jnum(s->offset, prec));
    set(j, "min", jnum(s->min, prec));
    set(j, "max", jnum(s->max, prec));
    set(j, "unit", jstr(s->unit));
    set(j, "mux",
        json_string(s->mux == HS_DBC_MULTIPLEXOR   ? "multiplexor"
                    : s->mux == HS_DBC_MULTIPLEXED ? "multiplexed"
                                                   : "none"));
    if (s->mux == HS_DBC_MULTIPLEXED)
        set(j, "mux_value", json_integer(s->mux_value));
    json_t *rx = json_array();
    for (unsigned r = 0; r < s->n_receivers; r++)
        add(rx, jstr(s->receivers[r]));
    set(j, "receivers", rx);
    json_t *vals = json_object();
    for (unsigned v = 0; v < s->n_values; v++) {
        char key[24];
        snprintf(key, sizeof key, "%lld", (long long)s->values[v].value);
        set(vals, key, jstr(s->values[v].text));
    }
    set(j, "values", vals);
    set(j, "comment", jstr(s->comment));
    return j;
}

static json_t *message_json(const struct hs_dbc_message *m, int *prec)
{
    char id[16];
    id_hex(id, sizeof id, m);
    json_t *j = json_object();
    set(j, "id", json_integer(m->id));
    set(j, "id_hex", json_string(id));
    set(j, "extended", json_boolean(m->extended));
    set(j, "name", jstr(m->name));
    set(j, "length", json_integer(m->length));
    set(j, "fd", json_boolean(m->fd));
    set(j, "sender", jstr(m->sender));
    set(j, "comment", jstr(m->comment));
    json_t *sigs = json_array();
    for (unsigned k = 0; k < m->n_signals; k++)
        add(sigs, signal_json(&m->signals[k], prec));
    set(j, "signals", sigs);
    return j;
}

/* One compact object on one line, keys in insertion order (jansson keeps it). */
static int print_json(const struct hs_dbc *dbc)
{
    int prec = 1;
    doc.incomplete = false;
    json_t *root = json_object();
    set(root, "file", jstr(dbc->path));
    set(root, "version", jstr(dbc->version ? dbc->version : ""));
    set(root, "comment", jstr(dbc->comment));
    json_t *nodes = json_array();
    for (unsigned i = 0; i < dbc->n_nodes; i++)
        add(nodes, jstr(dbc->nodes[i]));
    set(root, "nodes", nodes);
    json_t *msgs = json_array();
    for (unsigned i = 0; i < dbc->n_messages; i++)
        add(msgs, message_json(&dbc->messages[i], &prec));
    set(root, "messages", msgs);
    return hs_json_doc_print(&doc, root, stdout, JSON_COMPACT | JSON_REAL_PRECISION(prec));
}

static int cmd_dbc(int argc, char **argv)
{
    const char *file = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return HS_EXIT_OK;
        } else if (argv[i][0] == '-' || file) {
            fprintf(stderr, "hilsim can dbc: unexpected argument '%s'\n", argv[i]);
            return HS_EXIT_USAGE;
        } else
            file = argv[i];
    }
    if (!file) {
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    struct hs_dbc *dbc;
    int rc = load(file, &dbc);
    if (rc)
        return rc;
    int r = 0;
    if (json)
        r = print_json(dbc);
    else
        print_text(dbc);
    hs_dbc_free(dbc);
    if (r < 0) {
        fprintf(stderr, "hilsim can: %s: could not write the JSON document\n", file);
        return HS_EXIT_FAILURE;
    }
    return HS_EXIT_OK;
}

static void print_signal(const struct hs_dbc_signal *s, const struct hs_can_frame *f)
{
    double v;
    uint64_t raw;
    if (hs_dbc_signal_decode(s, f->data, f->len, &v) < 0) {
        printf("  %s: beyond the frame's %u bytes\n", s->name, f->len);
        return;
    }
    hs_dbc_signal_get_raw(s, f->data, f->len, &raw);
    char num[32];
    fmt_num(num, sizeof num, v);
    printf("  %s = %s%s%s", s->name, num, s->unit[0] ? " " : "", s->unit);
    if (s->value_type == HS_DBC_INTEGER) {
        int64_t sraw = (int64_t)raw;
        if (s->is_signed && s->length < 64 && (raw >> (s->length - 1)) & 1u)
            sraw = (int64_t)(raw | ~((UINT64_C(1) << s->length) - 1));
        const char *t = hs_dbc_value_text(s, sraw);
        if (t)
            printf(" \"%s\"", t);
    }
    printf(" (raw 0x%llX)\n", (unsigned long long)raw);
}

static int cmd_decode(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return HS_EXIT_OK;
    }
    if (argc != 3) {
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    struct hs_can_frame f;
    if (hs_can_frame_parse(argv[2], &f) < 0) {
        fprintf(stderr,
                "hilsim can decode: bad frame '%s' (want ID#DATA, ID#R[len] or ID##<flags>DATA;"
                " 3 hex digits for a standard ID, 8 for an extended one)\n",
                argv[2]);
        return HS_EXIT_USAGE;
    }
    struct hs_dbc *dbc;
    int rc = load(argv[1], &dbc);
    if (rc)
        return rc;
    const struct hs_dbc_message *m = hs_dbc_find(dbc, f.id, f.flags & HS_CAN_FLAG_EXT);
    if (!m) {
        fprintf(stderr, "hilsim can decode: %s: no message with %s ID 0x%X\n", argv[1],
                (f.flags & HS_CAN_FLAG_EXT) ? "extended" : "standard", f.id);
        hs_dbc_free(dbc);
        return HS_EXIT_USAGE;
    }
    char id[16];
    id_hex(id, sizeof id, m);
    if (f.flags & HS_CAN_FLAG_RTR) {
        printf("%s %s: remote request, DLC %u\n", id, m->name, f.len);
        hs_dbc_free(dbc);
        return HS_EXIT_OK;
    }
    printf("%s %s (%u of %u bytes%s)\n", id, m->name, f.len, m->length,
           (f.flags & HS_CAN_FLAG_FD) ? ", CAN FD" : "");
    for (unsigned k = 0; k < m->n_signals; k++)
        if (hs_dbc_signal_present(m, &m->signals[k], f.data, f.len))
            print_signal(&m->signals[k], &f);
    hs_dbc_free(dbc);
    return HS_EXIT_OK;
}

static int cmd_eds(int argc, char **argv)
{
    const char *file = NULL, *node = NULL, *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return HS_EXIT_OK;
        } else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (++i == argc) {
                fprintf(stderr, "hilsim can eds: %s needs a file\n", argv[i - 1]);
                return HS_EXIT_USAGE;
            }
            out_path = argv[i];
        } else if (argv[i][0] == '-' || (file && node)) {
            fprintf(stderr, "hilsim can eds: unexpected argument '%s'\n", argv[i]);
            return HS_EXIT_USAGE;
        } else if (!file) {
            file = argv[i];
        } else {
            node = argv[i];
        }
    }
    if (!file || !node) {
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    if (hs_config_load(file, &cfg, &d) < 0) {
        hs__cli_print_diag("can", &d);
        return HS_EXIT_USAGE;
    }
    const struct hs_cfg_node *cn = NULL;
    char *end = NULL;
    unsigned long id = strtoul(node, &end, 0);
    bool by_id = *node && !*end;
    for (uint32_t i = 0; i < cfg->can.nnodes && !cn; i++) {
        const struct hs_cfg_node *c = &cfg->can.nodes[i];
        if (c->protocol == HS_CFG_PROTO_CIA402 && (by_id ? c->id == id : !strcmp(c->name, node)))
            cn = c;
    }
    int rc = HS_EXIT_OK;
    if (!cn) {
        fprintf(stderr, "hilsim can eds: %s: no CiA 402 node %s '%s' under can.nodes\n", file,
                by_id ? "with node-ID" : "named", node);
        rc = HS_EXIT_USAGE;
        goto done;
    }
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
        fprintf(stderr, "hilsim can eds: %s: %s\n", out_path, strerror(errno));
        rc = HS_EXIT_FAILURE;
        goto done;
    }
    const char *base = out_path ? strrchr(out_path, '/') : NULL;
    int r = hs_cia402_write_node_eds(cn, out, base ? base + 1 : out_path, &d);
    if (r == -EINVAL) {
        if (!d.file[0])
            snprintf(d.file, sizeof d.file, "%s", file);
        hs__cli_print_diag("can", &d);
        rc = HS_EXIT_USAGE;
    }
    if ((out_path && fclose(out) != 0) || r == -EIO) {
        fprintf(stderr, "hilsim can eds: cannot write %s\n", out_path ? out_path : "stdout");
        rc = HS_EXIT_FAILURE;
    }
    if (r == -EINVAL && out_path)
        remove(out_path); /* no half-written EDS left behind */
done:
    hs_config_free(cfg);
    return rc;
}

int hs_cmd_can(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return HS_EXIT_OK;
    }
    if (!strcmp(argv[1], "dbc"))
        return cmd_dbc(argc - 1, argv + 1);
    if (!strcmp(argv[1], "decode"))
        return cmd_decode(argc - 1, argv + 1);
    if (!strcmp(argv[1], "eds"))
        return cmd_eds(argc - 1, argv + 1);
    fprintf(stderr, "hilsim can: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return HS_EXIT_USAGE;
}
