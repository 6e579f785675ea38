/* libFuzzer target: a structured generator of deep and wide configs. Byte-level mutation of
 * YAML text rarely builds 65 nested collections or a list of 100,000 items, which is where the
 * parser's costs and limits live; here the fuzz bytes are a program that builds them:
 *
 *   byte 0        which section of a valid bench the generated value goes under (or a new key)
 *   then per op   op = byte % 8, some ops take the next byte as their argument:
 *     0 '['       open a list           4 burst n: open n (1..256) lists or mappings at once
 *     1 '{'       open a mapping        5 widen n: repeat the last item n x 256 times
 *     2 scalar    one of a few values   6 anchor/alias: "&a" before the next item or "*a"
 *     3 close     the innermost         7 block: a section as nested block mappings
 *
 * Every collection left open is closed at the end, so most inputs are well-formed YAML and
 * reach the depth check, the walker and validation. The text is capped at HS_FUZZ_DEEP_MAX (the
 * config loader's own limit is 4 MiB). Property: loading either fails with a message or
 * succeeds; nothing crashes, leaks or takes long (libFuzzer's -timeout catches a slow parse). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/config.h"

#define HS_FUZZ_DEEP_MAX (1u << 20)
#define MAX_LEVELS 4096

struct gen {
    char *buf;
    size_t len;
    bool full;
    char kind[MAX_LEVELS]; /* '[' or '{' per open level */
    unsigned items[MAX_LEVELS];
    unsigned depth;
    unsigned keys, key_salt;
    size_t last_item, last_len; /* the last complete item, for widen */
    bool anchor;
};

static void put(struct gen *g, const char *s, size_t n)
{
    if (g->full || g->len + n + MAX_LEVELS + 2 > HS_FUZZ_DEEP_MAX) {
        g->full = true; /* room is kept for the closing brackets */
        return;
    }
    memcpy(g->buf + g->len, s, n);
    g->len += n;
}

static void puts_(struct gen *g, const char *s)
{
    put(g, s, strlen(s));
}

static const char *const keys[] = {"joints",   "buses",
                                   "nodes",    "name",
                                   "defaults", "encoders",
                                   "imu",      "force",
                                   "type",     "period_ns",
                                   "file",     "mit",
                                   "odrive",   "dbc",
                                   "modes",    "kp",
                                   "kd",       "gains",
                                   "position", "rotation",
                                   "bus",      "joint",
                                   "id",       "protocol",
                                   "enabled",  "torque_limit_nm",
                                   "q",        "dq",
                                   "gravity",  "step_s",
                                   "substeps", "group",
                                   "mode",     "max_misses",
                                   "interface"};
#define NKEYS (sizeof keys / sizeof keys[0])

/* Separator and key before a new item at the current level. */
static void item_start(struct gen *g)
{
    if (!g->depth)
        return;
    if (g->items[g->depth - 1]++)
        puts_(g, ", ");
    if (g->kind[g->depth - 1] == '{') {
        /* the schema's own words first (reaching the walker's sections), then fresh ones */
        unsigned i = g->keys++;
        char k[32];
        if (i < NKEYS)
            snprintf(k, sizeof k, "%s: ", keys[(i + g->key_salt) % NKEYS]);
        else
            snprintf(k, sizeof k, "k%u: ", i % 100000);
        puts_(g, k);
    }
    if (g->anchor) {
        puts_(g, "&a ");
        g->anchor = false;
    }
}

static void open_level(struct gen *g, char kind)
{
    if (g->depth == MAX_LEVELS || g->full)
        return;
    item_start(g);
    put(g, kind == '[' ? "[" : "{", 1);
    g->kind[g->depth] = kind;
    g->items[g->depth++] = 0;
}

static void close_level(struct gen *g)
{
    if (!g->depth)
        return;
    g->depth--;
    /* closing brackets were reserved by put(), so they always fit */
    g->buf[g->len++] = g->kind[g->depth] == '[' ? ']' : '}';
}

static const char *const scalars[] = {"1",    "-2.5",  "0x7ff", "true", "null", "\"s\"",
                                      "name", "1e309", "''",    "mit",  "~",    "[]"};

static void scalar(struct gen *g, uint8_t arg)
{
    size_t start = g->len;
    item_start(g);
    puts_(g, g->depth ? scalars[arg % (sizeof scalars / sizeof scalars[0])] : "");
    g->last_item = start, g->last_len = g->len - start;
}

static void widen(struct gen *g, uint8_t arg)
{
    if (!g->depth || !g->last_len || g->last_item + g->last_len != g->len)
        return;
    /* the last item already carries its own separator when it is not the first */
    char item[64];
    size_t n = g->last_len < sizeof item ? g->last_len : 0;
    if (!n)
        return;
    memcpy(item, g->buf + g->last_item, n);
    const char *body = item;
    if (n >= 2 && item[0] == ',' && item[1] == ' ')
        body += 2, n -= 2;
    for (unsigned i = 0; i < (arg + 1u) * 256u && !g->full; i++) {
        if (g->kind[g->depth - 1] == '{') {
            item_start(g); /* a fresh key each time */
            const char *colon = memchr(body, ':', n);
            const char *v = colon ? colon + 2 : body;
            put(g, v, n - (size_t)(v - body));
        } else {
            puts_(g, ", ");
            put(g, body, n);
            g->items[g->depth - 1]++;
        }
    }
}

static const char *const sections[] = {"physics",    "rt",      "shm", "trace",   "actuators",
                                       "controller", "sensors", "can", "budgets", "initial_state",
                                       "extra"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static struct gen g;
    memset(&g, 0, sizeof g);
    g.buf = malloc(HS_FUZZ_DEEP_MAX);
    if (!g.buf)
        abort();
    puts_(&g, "bench: {name: deep}\nmodels:\n  - {name: a, file: /etc/passwd}\n");
    puts_(&g, sections[data[0] % (sizeof sections / sizeof sections[0])]);
    puts_(&g, ": ");
    g.key_salt = data[0];
    open_level(&g, data[0] & 0x80 ? '[' : '{');
    for (size_t i = 1; i < size && !g.full; i++) {
        uint8_t op = data[i] % 8, arg = i + 1 < size ? data[i + 1] : 0;
        switch (op) {
        case 0:
        case 1:
            open_level(&g, op == 0 ? '[' : '{');
            break;
        case 2:
            scalar(&g, arg);
            i++;
            break;
        case 3:
            if (g.depth > 1) /* the section's own collection stays open until the end */
                close_level(&g);
            break;
        case 4:
            for (unsigned k = 0; k <= arg && !g.full; k++)
                open_level(&g, (arg & 1) ? '[' : '{');
            i++;
            break;
        case 5:
            widen(&g, arg);
            i++;
            break;
        case 6:
            if (arg & 1)
                g.anchor = true;
            else if (g.depth) {
                item_start(&g);
                puts_(&g, "*a");
            }
            i++;
            break;
        case 7:
            if (!g.depth || g.full)
                break;
            while (g.depth)
                close_level(&g);
            puts_(&g, "\n");
            puts_(&g, sections[arg % (sizeof sections / sizeof sections[0])]);
            puts_(&g, ":\n");
            for (unsigned k = 0; k < (arg % 80u) && !g.full; k++) {
                for (unsigned s = 0; s <= k; s++)
                    puts_(&g, "  ");
                puts_(&g, "b:\n");
            }
            puts_(&g, "  tail: ");
            open_level(&g, '[');
            i++;
            break;
        }
    }
    while (g.depth)
        close_level(&g);
    g.buf[g.len++] = '\n';

    if (getenv("HS_FUZZ_DEEP_PRINT")) /* to see what an input generates */
        fwrite(g.buf, 1, g.len > 2000 ? 2000 : g.len, stderr);
    const struct hs_config *c = NULL;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(g.buf, g.len, "fuzz-deep.yaml", "/", &c, &d) < 0) {
        if (getenv("HS_FUZZ_DEEP_PRINT"))
            fprintf(stderr, "-> %d:%d: %s\n", d.line, d.column, d.msg);
        if (!d.msg[0])
            abort(); /* every failure must say why */
    } else {
        hs_config_free(c);
    }
    free(g.buf);
    return 0;
}
