/* The scenario file's schema: tables for the config walker (src/config/yaml_walk.c), so a
 * scenario is parsed, range-checked and reported (file:line:column, key path) exactly like a
 * bench config. Every key is documented in scenarios/README.md. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "cfg_internal.h"
#include "scen_internal.h"

#define S struct hs__scen_step_spec
#define FS(k, K, m, ...)                                                                           \
    {                                                                                              \
        .key = k, .kind = K, .off = offsetof(S, m), __VA_ARGS__                                    \
    }
#define DBL(k, m, lo, hi, fl) FS(k, HS__K_DOUBLE, m, .min = lo, .max = hi, .flags = fl)
#define VEC3(k, m) FS(k, HS__K_VEC, m, .n = 3)
#define NAME(k, m, fl) FS(k, HS__K_NAME, m, .n = HS_NAME_MAX, .cs = HS__CS_IDENT, .flags = fl)
#define ENUM(k, m, nm, fl) FS(k, HS__K_ENUM, m, .names = nm, .flags = fl)
#define ACTION(k, tab)                                                                             \
    {                                                                                              \
        .key = k, .kind = HS__K_SECTION, .off = 0, .sub = &tab                                     \
    }
#define TABLE(name, fields, chk)                                                                   \
    static const struct hs__cfg_table name = {fields, sizeof fields / sizeof fields[0], chk}

const char *const hs__scen_kind_names[] = {"push",      "payload",      "set_pose",       "gravity",
                                           "joint",     "sensor_fault", "actuator_fault", "thermal",
                                           "can_fault", "shm_fault",    "path",           "expect",
                                           "friction",  "material",     "node_fault",     NULL};
const char *const hs__scen_sensor_names[] = {"off",         "stuck",      "offset",   "scale",
                                             "noise",       "spikes",     "delay",    "quantize",
                                             "skip_counts", "lose_index", "saturate", NULL};
const char *const hs__scen_actuator_names[] = {"derate",   "no_response", "brake",
                                               "friction", "broken_gear", NULL};
const char *const hs__scen_expect_names[] = {
    "joint_near",     "link_above",        "link_below", "velocity_limits",
    "command_torque", "temperature_below", "node_state", NULL};
static const char *const field_names[] = {"position", "velocity", "torque", "current", NULL};
static const char *const hold_names[] = {"within", "always", NULL};
static const char *const direction_names[] = {"any", "rising", "falling", NULL};
static const char *const frame_names[] = {"world", "link", NULL};
static const char *const joint_action_names[] = {"fix", "release", NULL};
static const char *const can_kind_names[] = {"drop",    "delay",  "duplicate", "reorder",
                                             "corrupt", "silent", NULL};
static const char *const can_dir_names[] = {"rx", "tx", "both", NULL};

/* ---- actions: each a section whose keys land in the step itself ---- */
static const struct hs__cfg_field push_f[] = {
    NAME("link", t.link, HS__F_REQUIRED),
    NAME("model", t.model, 0),
    VEC3("force_n", force_n),
    VEC3("torque_nm", torque_nm),
    ENUM("frame", frame, frame_names, 0),
};
TABLE(push_t, push_f, NULL);

static const struct hs__cfg_field payload_f[] = {
    NAME("link", t.link, HS__F_REQUIRED),
    NAME("model", t.model, 0),
    DBL("mass_kg", mass_kg, 0, 1e4, HS__F_REQUIRED | HS__F_MIN_OPEN),
};
TABLE(payload_t, payload_f, NULL);

static const struct hs__cfg_field set_pose_f[] = {
    NAME("model", t.model, HS__F_REQUIRED),
    VEC3("position_m", position_m),
    VEC3("rpy_rad", rpy_rad),
    VEC3("linear_velocity_mps", linear_velocity_mps),
    VEC3("angular_velocity_rad_s", angular_velocity_rad_s),
};
TABLE(set_pose_t, set_pose_f, NULL);

static const struct hs__cfg_field gravity_f[] = {
    FS("vector_m_s2", HS__K_VEC, gravity_m_s2, .n = 3, .flags = HS__F_REQUIRED),
};
TABLE(gravity_t, gravity_f, NULL);

static const struct hs__cfg_field joint_f[] = {
    NAME("joint", t.joint, HS__F_REQUIRED),
    ENUM("action", joint_action, joint_action_names, HS__F_REQUIRED),
};
TABLE(joint_t, joint_f, NULL);

static int sensor_fault_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                              const char *path)
{
    S *st = obj;
    if (!st->t.joint[0] == !st->t.sensor[0])
        return hs__cfg_err(c, node, "%s: name either a joint or a sensor", path);
    bool needs_value = st->sensor_kind != HS__SF_OFF && st->sensor_kind != HS__SF_STUCK &&
                       st->sensor_kind != HS__SF_LOSE_INDEX;
    if (needs_value && isnan(st->value))
        return hs__cfg_err(c, node, "%s: %s needs a value", path,
                           hs__scen_sensor_names[st->sensor_kind]);
    if ((st->sensor_kind == HS__SF_SKIP_COUNTS || st->sensor_kind == HS__SF_LOSE_INDEX) &&
        !st->t.joint[0])
        return hs__cfg_err(c, node, "%s: %s is an encoder fault: name a joint", path,
                           hs__scen_sensor_names[st->sensor_kind]);
    if ((st->sensor_kind == HS__SF_QUANTIZE || st->sensor_kind == HS__SF_SATURATE ||
         st->sensor_kind == HS__SF_DELAY) &&
        !(st->value > 0))
        return hs__cfg_err(c, node, "%s: %s needs a value > 0", path,
                           hs__scen_sensor_names[st->sensor_kind]);
    if (st->sensor_kind == HS__SF_DELAY && st->value > 100)
        return hs__cfg_err(c, node, "%s: a delay of at most 100 s", path);
    (void)seen;
    return 0;
}

static const struct hs__cfg_field sensor_fault_f[] = {
    ENUM("kind", sensor_kind, hs__scen_sensor_names, HS__F_REQUIRED),
    NAME("joint", t.joint, 0),
    NAME("sensor", t.sensor, 0),
    ENUM("field", field, field_names, 0),
    DBL("value", value, -1e9, 1e9, 0),
    DBL("probability", probability, 0, 1, 0),
};
TABLE(sensor_fault_t, sensor_fault_f, sensor_fault_check);

static int actuator_fault_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                                const char *path)
{
    S *st = obj;
    (void)seen;
    if (st->actuator_kind == HS__AF_DERATE && !(st->value >= 0 && st->value <= 1))
        return hs__cfg_err(c, node, "%s: derate needs a value in [0, 1] (the torque kept)", path);
    if ((st->actuator_kind == HS__AF_BRAKE || st->actuator_kind == HS__AF_FRICTION) &&
        !(st->value >= 0))
        return hs__cfg_err(c, node, "%s: %s needs a value >= 0 (N·m or N)", path,
                           hs__scen_actuator_names[st->actuator_kind]);
    return 0;
}

static const struct hs__cfg_field actuator_fault_f[] = {
    ENUM("kind", actuator_kind, hs__scen_actuator_names, HS__F_REQUIRED),
    NAME("joint", t.joint, HS__F_REQUIRED),
    DBL("value", value, 0, 1e6, 0),
    DBL("viscous", viscous, 0, 1e6, 0),
};
TABLE(actuator_fault_t, actuator_fault_f, actuator_fault_check);

static int thermal_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path)
{
    S *st = obj;
    (void)seen;
    if (!(st->derate_c > st->ambient_c) || !(st->limit_c > st->derate_c))
        return hs__cfg_err(c, node, "%s: needs ambient_c < derate_c < limit_c", path);
    return 0;
}

static const struct hs__cfg_field thermal_f[] = {
    NAME("joint", t.joint, HS__F_REQUIRED),
    DBL("ambient_c", ambient_c, -60, 200, 0),
    DBL("r_winding_ohm", r_winding_ohm, 0, 1e3, HS__F_MIN_OPEN),
    DBL("alpha_per_k", alpha_per_k, 0, 0.1, 0),
    DBL("r_wc_k_per_w", r_wc_k_per_w, 0, 1e3, HS__F_MIN_OPEN),
    DBL("r_ca_k_per_w", r_ca_k_per_w, 0, 1e3, HS__F_MIN_OPEN),
    DBL("c_winding_j_per_k", c_winding_j_per_k, 0, 1e6, HS__F_MIN_OPEN),
    DBL("c_case_j_per_k", c_case_j_per_k, 0, 1e6, HS__F_MIN_OPEN),
    DBL("derate_c", derate_c, -60, 400, 0),
    DBL("limit_c", limit_c, -60, 400, 0),
};
TABLE(thermal_t, thermal_f, thermal_check);

static int can_fault_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                           const char *path)
{
    S *st = obj;
    (void)seen;
    if (!st->node[0] && st->can_id < 0)
        return hs__cfg_err(c, node, "%s: name a node or an id", path);
    for (const char *p = st->pattern; *p; p++)
        if (*p != '0' && *p != '1')
            return hs__cfg_err(c, node, "%s: pattern is made of 0 and 1", path);
    if ((st->can_kind == HS__CF_DELAY) != !isnan(st->delay_s))
        return hs__cfg_err(c, node, "%s: delay_s goes with kind delay, and delay needs it", path);
    return 0;
}

static const struct hs__cfg_field can_fault_f[] = {
    ENUM("kind", can_kind, can_kind_names, HS__F_REQUIRED),
    NAME("bus", bus, 0),
    NAME("node", node, 0),
    FS("id", HS__K_I64, can_id, .min = 0, .max = 0x1fffffff),
    ENUM("direction", can_dir, can_dir_names, 0),
    DBL("probability", probability, 0, 1, 0),
    NAME("pattern", pattern, 0),
    DBL("delay_s", delay_s, 0, 1000, HS__F_MIN_OPEN),
};
TABLE(can_fault_t, can_fault_f, can_fault_check);

static const char *const shm_kind_names[] = {"freeze", "stale", NULL};
static const struct hs__cfg_field shm_fault_f[] = {
    ENUM("kind", shm_kind, shm_kind_names, HS__F_REQUIRED),
};
TABLE(shm_fault_t, shm_fault_f, NULL);

static const struct hs__cfg_field path_f[] = {
    FS("file", HS__K_PATH, path_file, .flags = HS__F_REQUIRED),
    DBL("kp", kp, 0, 1e9, 0),
    DBL("kd", kd, 0, 1e9, 0),
};
TABLE(path_t, path_f, NULL);

static int expect_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                        const char *path)
{
    S *st = obj;
    (void)seen;
    switch (st->expect_kind) {
    case HS__EX_JOINT_NEAR:
        if (!st->t.joint[0] || isnan(st->value) || isnan(st->tolerance))
            return hs__cfg_err(c, node, "%s: joint_near needs joint, value and tolerance", path);
        break;
    case HS__EX_LINK_ABOVE:
    case HS__EX_LINK_BELOW:
        if (!st->t.link[0] || isnan(st->value))
            return hs__cfg_err(c, node, "%s: %s needs link and value (m)", path,
                               hs__scen_expect_names[st->expect_kind]);
        break;
    case HS__EX_NODE_STATE:
        if (!st->node[0] || !st->state[0])
            return hs__cfg_err(c, node, "%s: node_state needs node and state", path);
        break;
    case HS__EX_COMMAND_TORQUE:
    case HS__EX_TEMPERATURE_BELOW:
        if (!st->t.joint[0] || isnan(st->value))
            return hs__cfg_err(c, node, "%s: %s needs joint and value", path,
                               hs__scen_expect_names[st->expect_kind]);
        break;
    default:
        break;
    }
    return 0;
}

static const struct hs__cfg_field expect_f[] = {
    ENUM("kind", expect_kind, hs__scen_expect_names, HS__F_REQUIRED),
    NAME("joint", t.joint, 0),
    NAME("link", t.link, 0),
    NAME("model", t.model, 0),
    DBL("value", value, -1e9, 1e9, 0),
    DBL("tolerance", tolerance, 0, 1e9, 0),
    ENUM("hold", hold, hold_names, 0),
    NAME("node", node, 0),
    NAME("state", state, 0),
};
TABLE(expect_t, expect_f, expect_check);

/* ---- contact: friction and material ---- */
static int friction_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                          const char *path)
{
    S *st = obj;
    (void)seen;
    if (!st->t.link[0] == !(st->material[0] && st->material2[0]) ||
        (st->t.link[0] && (st->material[0] || st->material2[0])))
        return hs__cfg_err(c, node, "%s: name either a link, or material1 and material2", path);
    if (isnan(st->value))
        return hs__cfg_err(c, node, "%s: needs mu", path);
    return 0;
}

static const struct hs__cfg_field friction_f[] = {
    NAME("link", t.link, 0),
    NAME("model", t.model, 0),
    NAME("material1", material, 0),
    NAME("material2", material2, 0),
    DBL("mu", value, 0, INFINITY, HS__F_INF),
};
TABLE(friction_t, friction_f, friction_check);

static const struct hs__cfg_field material_f[] = {
    NAME("link", t.link, HS__F_REQUIRED),
    NAME("model", t.model, 0),
    NAME("material", material, HS__F_REQUIRED),
};
TABLE(material_t, material_f, NULL);
/* node_fault: the node raises its protocol's own error (scen_can_node.c checks the code
 * against the node's protocol) */
static const struct hs__cfg_field node_fault_f[] = {
    NAME("node", node, HS__F_REQUIRED),
    FS("code", HS__K_U32, fault_code, .min = 0, .max = 0xffffffffu,
       .flags = HS__F_REQUIRED | HS__F_HEX),
};
TABLE(node_fault_t, node_fault_f, NULL);

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
    if (crossing == w->first_command || (!crossing && (seen & 3u)))
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
    uint64_t actions = seen & ((1u << HS__SCEN_KIND_MAX) - 1);
    if (!actions || (actions & (actions - 1)))
        return hs__cfg_err(
            c, node,
            "%s: exactly one action (push, payload, set_pose, gravity, joint, "
            "sensor_fault, actuator_fault, thermal, can_fault, shm_fault, path, expect, "
            "friction, material, node_fault)",
            path);
    st->kind = (enum hs__scen_kind)__builtin_ctzll(actions);
    int timings = !isnan(st->at_s) + (st->when.seen != 0);
    if (timings > 1 || (!isnan(st->at_s) && (!isnan(st->after_s) || st->after[0])))
        return hs__cfg_err(c, node, "%s: give one of at_s, after_s (with after), when", path);
    if (!timings && isnan(st->after_s))
        return hs__cfg_err(c, node, "%s: when does it happen? give at_s, after_s or when", path);
    if (st->repeat > 1 && !(st->every_s > 0))
        return hs__cfg_err(c, node, "%s: repeat needs every_s > 0", path);
    if (st->kind == HS__SCEN_EXPECT && st->repeat > 1)
        return hs__cfg_err(c, node, "%s: an expectation is evaluated once; repeat it as steps",
                           path);
    if ((st->on_s > 0) != (st->off_s > 0))
        return hs__cfg_err(c, node, "%s: intermittency needs both on_s and off_s", path);
    return 0;
}

static const struct hs__cfg_field step_f[] = {
    ACTION("push", push_t),
    ACTION("payload", payload_t),
    ACTION("set_pose", set_pose_t),
    ACTION("gravity", gravity_t),
    ACTION("joint", joint_t),
    ACTION("sensor_fault", sensor_fault_t),
    ACTION("actuator_fault", actuator_fault_t),
    ACTION("thermal", thermal_t),
    ACTION("can_fault", can_fault_t),
    ACTION("shm_fault", shm_fault_t),
    ACTION("path", path_t),
    ACTION("expect", expect_t),
    ACTION("friction", friction_t),
    ACTION("material", material_t),
    ACTION("node_fault", node_fault_t),
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

static void step_init(void *elem)
{
    S *st = elem;
    memset(st, 0, sizeof *st);
    st->at_s = st->after_s = st->duration_s = NAN;
    st->repeat = 1;
    st->value = st->tolerance = st->delay_s = NAN;
    st->kp = st->kd = NAN;
    st->probability = 1;
    st->can_id = -1;
    st->can_dir = HS__CD_BOTH;
    /* a small servo motor: 0.5 ohm copper at 25 °C, 5 K/W to the case, 2 K/W case to ambient,
     * winding 10 J/K (time constant 50 s), case 200 J/K; derate from 100 °C, off at 130 °C */
    st->ambient_c = 25;
    st->r_winding_ohm = 0.5;
    st->alpha_per_k = 0.00393; /* copper */
    st->r_wc_k_per_w = 5;
    st->r_ca_k_per_w = 2;
    st->c_winding_j_per_k = 10;
    st->c_case_j_per_k = 200;
    st->derate_c = 100;
    st->limit_c = 130;
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
