/* The scenario file's schema: tables for the config walker (src/config/yaml_walk.c), so a
 * scenario is parsed, range-checked and reported (file:line:column, key path) exactly like a
 * bench config. Every key is documented in scenarios/README.md. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cfg_internal.h"
#include "scen_internal.h"

#define S struct hs__scen_step_spec
#define FS HS__SCEN_FS
#define DBL HS__SCEN_DBL
#define NAME HS__SCEN_NAME
#define TABLE(name, fields, chk)                                                                   \
    static const struct hs__cfg_table name = {fields, sizeof fields / sizeof fields[0], chk}

static const char *const direction_names[] = {"any", "rising", "falling", NULL};

/* ---- when ---- */
#define W struct hs__scen_when
static int when_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                      const char *path)
{
    W *w = obj;
    bool crossing = (seen & 3u) == 3u;     /* joint and passes */
    bool node_state = (seen & 48u) == 48u; /* node and state */
    if ((seen & 48u) && (!node_state || (seen & 15u)))
        return hs__cfg_err(c, node, "%s: node with state, alone (not with joint or passes)", path);
    if (node_state) {
        w->seen = seen;
        return 0;
    }
    /* joint alone goes with first_command (the slot it watches); passes never does */
    if (crossing == w->first_command || (!crossing && !w->first_command && (seen & 3u)))
        return hs__cfg_err(c, node,
                           "%s: either joint with passes, first_command: true (with an "
                           "optional joint), or node with state",
                           path);
    if (w->first_command && (seen & 2u))
        return hs__cfg_err(c, node, "%s: passes does not go with first_command", path);
    w->seen = seen;
    return 0;
}

static const struct hs__cfg_field when_f[] = {
    {.key = "joint",
     .kind = HS__K_NAME,
     .off = offsetof(W, joint),
     .n = HS_NAME_MAX,
     .cs = HS__CS_IDENT},
    {.key = "passes", .kind = HS__K_DOUBLE, .off = offsetof(W, passes), .min = -1e9, .max = 1e9},
    {.key = "direction",
     .kind = HS__K_ENUM,
     .off = offsetof(W, direction),
     .names = direction_names},
    {.key = "first_command", .kind = HS__K_BOOL, .off = offsetof(W, first_command)},
    {.key = "node",
     .kind = HS__K_NAME,
     .off = offsetof(W, node),
     .n = HS_NAME_MAX,
     .cs = HS__CS_IDENT},
    {.key = "state",
     .kind = HS__K_NAME,
     .off = offsetof(W, state),
     .n = HS_NAME_MAX,
     .cs = HS__CS_IDENT},
};
TABLE(when_t, when_f, when_check);

/* ---- one step: the action sections come first, so their seen bits are the kind ---- */
static int step_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                      const char *path)
{
    S *st = obj;
    uint64_t actions = seen & ((1ull << HS__SCEN_KIND_MAX) - 1);
    if (!actions || (actions & (actions - 1))) {
        char list[320];
        size_t n = 0;
        list[0] = 0;
        for (int k = 0; k < HS__SCEN_KIND_MAX && n < sizeof list; k++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "",
                                  hs__scen_kind_names[k]);
        return hs__cfg_err(c, node, "%s: exactly one action (%s)", path, list);
    }
    st->kind = (enum hs__scen_kind)__builtin_ctzll(actions);
    int timings = !isnan(st->at_s) + (st->when.seen != 0);
    if (timings > 1 || (!isnan(st->at_s) && (!isnan(st->after_s) || st->after[0])))
        return hs__cfg_err(c, node, "%s: give one of at_s, after_s (with after), when", path);
    if (!timings && isnan(st->after_s))
        return hs__cfg_err(c, node, "%s: when does it happen? give at_s, after_s or when", path);
    if (st->repeat > 1 && !(st->every_s > 0))
        return hs__cfg_err(c, node, "%s: repeat needs every_s > 0", path);
    const char *no_repeat = hs__scen_kind(st->kind)->no_repeat;
    if (no_repeat && st->repeat > 1)
        return hs__cfg_err(c, node, "%s: %s", path, no_repeat);
    if ((st->on_s > 0) != (st->off_s > 0))
        return hs__cfg_err(c, node, "%s: intermittency needs both on_s and off_s", path);
    return 0;
}

static const struct hs__cfg_field step_f[] = {
/* the action rows first, in the registry's order: a step's seen bit of its action is its kind */
#define ACTION_ROW(NAME_, name_)                                                                   \
    {.key = #name_, .kind = HS__K_SECTION, .off = 0, .sub = &hs__scen_kind_##name_.schema},
    HS__SCEN_KINDS(ACTION_ROW)
#undef ACTION_ROW
        NAME("name", name, 0),
    DBL("at_s", at_s, 0, 1e6, 0),
    DBL("after_s", after_s, 0, 1e6, 0),
    NAME("after", after, 0),
    FS("when", HS__K_SECTION, when, .sub = &when_t),
    DBL("duration_s", duration_s, 0, INFINITY, HS__F_INF),
    FS("repeat", HS__K_U32, repeat, .min = 1, .max = 1e6),
    DBL("every_s", every_s, 0, 1e6, 0),
    DBL("on_s", on_s, 0, 1e6, 0),
    DBL("off_s", off_s, 0, 1e6, 0),
};
TABLE(step_t, step_f, step_check);
_Static_assert(sizeof step_f / sizeof step_f[0] <= 64, "a step's keys fit the walker's seen mask");

static void step_init(void *elem)
{
    S *st = elem;
    memset(st, 0, sizeof *st);
    st->at_s = st->after_s = st->duration_s = NAN;
    st->repeat = 1;
}

#undef S
#define R struct hs_scenario_spec
static const struct hs__cfg_list steps_l = {
    .elem = &step_t,
    .elem_size = sizeof(struct hs__scen_step_spec),
    .max = HS_SCEN_MAX_STEPS,
    .src_off = offsetof(struct hs__scen_step_spec, src),
    .array_off = offsetof(R, steps),
    .count_off = offsetof(R, nsteps),
    .template_off = -1,
    .init = step_init,
};

static const struct hs__cfg_field scenario_f[] = {
    {.key = "name",
     .kind = HS__K_NAME,
     .off = offsetof(R, name),
     .n = HS_NAME_MAX,
     .cs = HS__CS_IDENT,
     .flags = HS__F_REQUIRED},
    {.key = "description", .kind = HS__K_TEXT, .off = offsetof(R, description), .n = 256},
    {.key = "duration_s",
     .kind = HS__K_DOUBLE,
     .off = offsetof(R, duration_s),
     .min = 0,
     .max = 1e6,
     .flags = HS__F_REQUIRED | HS__F_MIN_OPEN},
    {.key = "seed", .kind = HS__K_U64, .off = offsetof(R, seed)},
};
TABLE(scenario_t, scenario_f, NULL);

static int root_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                      const char *path)
{
    R *spec = obj;
    (void)seen, (void)path;
    for (uint32_t i = 0; i < spec->nsteps; i++) {
        struct hs__scen_step_spec *st = &spec->steps[i];
        if (!st->name[0])
            continue;
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(spec->steps[j].name, st->name))
                return hs__cfg_err_at(c, st->src,
                                      "steps[%u]: name '%s' already used by "
                                      "steps[%u]",
                                      i, st->name, j);
    }
    for (uint32_t i = 0; i < spec->nsteps; i++) {
        struct hs__scen_step_spec *st = &spec->steps[i];
        if (!st->after[0])
            continue;
        uint32_t j = 0;
        while (j < i && strcmp(spec->steps[j].name, st->after))
            j++;
        if (j == i)
            return hs__cfg_err_at(c, st->src,
                                  "steps[%u].after: no earlier step named '%s' (a step can "
                                  "only follow one above it)",
                                  i, st->after);
    }
    (void)node;
    return 0;
}

static const struct hs__cfg_field root_f[] = {
    {.key = "scenario",
     .kind = HS__K_SECTION,
     .off = 0,
     .sub = &scenario_t,
     .flags = HS__F_REQUIRED},
    {.key = "steps", .kind = HS__K_LIST, .list = &steps_l, .flags = HS__F_REQUIRED},
};
TABLE(root_t, root_f, root_check);

int hs__scen_parse_root(struct hs__ctx *c, yaml_node_t *root, struct hs_scenario_spec *spec)
{
    return hs__cfg_parse_map(c, root, &root_t, spec, "", NULL);
}

/* One step on its own (live control): the same table and checks as a file's step. A live step
 * starts when it reaches the tick, so its start defaults to after_s 0 (at_s is refused by the
 * caller). */
int hs__scen_parse_step(struct hs__ctx *c, yaml_node_t *node, struct hs__scen_step_spec *ret)
{
    step_init(ret);
    ret->after_s = 0;
    ret->src = (struct hs_cfg_src){(int32_t)node->start_mark.line + 1,
                                   (int32_t)node->start_mark.column + 1};
    return hs__cfg_parse_map(c, node, &step_t, ret, "step", NULL);
}
