/* The config schema: one table per YAML mapping, naming each key, its type, range and place in
 * struct hs_config. The walker (yaml_walk.c) parses with it and the writer (write.c) prints with
 * it, so the two cannot drift apart. Units are documented in config.h and config/README.md. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfg_can_proto.h"
#include "cfg_schema.h"

bool hs__cfg_seen_key(const struct hs__cfg_table *t, uint64_t seen, const char *key)
{
    for (uint32_t i = 0; i < t->nfields; i++)
        if (!strcmp(t->fields[i].key, key))
            return seen & (1ull << i);
    return false;
}

yaml_node_t *hs__cfg_node_or(struct hs__ctx *c, yaml_node_t *map, const char *key)
{
    yaml_node_t *n = hs__cfg_child(c, map, key);
    return n ? n : map;
}

/* ---- bench ---- */
static const struct hs__cfg_field bench_f[] = {
    NAME("name", struct hs_cfg_bench, name, HS__CS_BENCH, HS__F_REQUIRED),
    TEXT("description", struct hs_cfg_bench, description),
};
STATIC_TABLE(bench_t, bench_f, NULL);

/* ---- models ---- */
static const struct hs__cfg_field initial_joint_f[] = {
    DBL("q", struct hs_cfg_initial_joint, q, -1e6, 1e6, 0),
    DBL("dq", struct hs_cfg_initial_joint, dq, -1e6, 1e6, 0),
};
STATIC_TABLE(initial_joint_t, initial_joint_f, NULL);

static const struct hs__cfg_list initial_joints_l = {
    .elem = &initial_joint_t,
    .elem_size = sizeof(struct hs_cfg_initial_joint),
    .max = HS_CFG_MAX_INITIAL_JOINTS,
    .keyed = true,
    .name_off = offsetof(struct hs_cfg_initial_joint, joint),
    .src_off = offsetof(struct hs_cfg_initial_joint, src),
    .pooled = true,
    .array_off = offsetof(struct hs_config, initial_joints),
    .count_off = offsetof(struct hs_config, ninitial_joints),
    .first_off = offsetof(struct hs_cfg_model, initial_first),
    .slice_off = offsetof(struct hs_cfg_model, initial_count),
    .template_off = -1,
};

static const struct hs__cfg_field initial_f[] = {LIST("joints", initial_joints_l)};
STATIC_TABLE(initial_t, initial_f, NULL);

/* models[].package_paths.NAME.dir: a directory, resolved against the config's. */
static int package_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path)
{
    (void)seen;
    struct hs_cfg_package *p = obj;
    char joined[PATH_MAX];
    const char *base = c->base_dir;
    if (p->dir[0] != '/' && !base)
        return hs__cfg_err(c, node, "%s.dir: relative path '%s' needs a config file's directory",
                           path, p->dir);
    if ((size_t)snprintf(joined, sizeof joined, "%s%s%s", p->dir[0] == '/' ? "" : base,
                         p->dir[0] == '/' ? "" : "/", p->dir) >= sizeof joined)
        return hs__cfg_err(c, node, "%s.dir: path too long", path);
    char *real = realpath(joined, NULL);
    struct stat st;
    int e = errno;
    if (!real || stat(real, &st) != 0 || !S_ISDIR(st.st_mode) || strlen(real) >= sizeof p->dir) {
        int r = hs__cfg_err(c, hs__cfg_child(c, node, "dir") ? hs__cfg_child(c, node, "dir") : node,
                            "%s.dir: cannot use '%s' (%s): %s", path, p->dir, joined,
                            !real ? strerror(e) : "not a directory or too long");
        free(real);
        return r;
    }
    memcpy(p->dir, real, strlen(real) + 1);
    free(real);
    return 0;
}

static const struct hs__cfg_field package_f[] = {
    F_("dir", HS__K_TEXT, struct hs_cfg_package, dir,
       .n = sizeof(((struct hs_cfg_package *)0)->dir), .flags = HS__F_REQUIRED),
};
STATIC_TABLE(package_t, package_f, package_check);

static const struct hs__cfg_list packages_l = {
    .elem = &package_t,
    .elem_size = sizeof(struct hs_cfg_package),
    .max = HS_CFG_MAX_PACKAGES,
    .keyed = true,
    .name_off = offsetof(struct hs_cfg_package, name),
    .src_off = offsetof(struct hs_cfg_package, src),
    .pooled = true,
    .array_off = offsetof(struct hs_config, packages),
    .count_off = offsetof(struct hs_config, npackages),
    .first_off = offsetof(struct hs_cfg_model, package_first),
    .slice_off = offsetof(struct hs_cfg_model, package_count),
    .template_off = -1,
};

static const struct hs__cfg_field model_sensor_f[] = {
    F_("type", HS__K_ENUM, struct hs_cfg_model_sensor, type, .names = hs__names_model_sensor,
       .flags = HS__F_REQUIRED),
    NAME("link", struct hs_cfg_model_sensor, link, HS__CS_IDENT, HS__F_REQUIRED),
    VEC("position", struct hs_cfg_model_sensor, position, -1e6, 1e6),
    VEC("rotation", struct hs_cfg_model_sensor, rotation, -1e6, 1e6),
};
STATIC_TABLE(model_sensor_t, model_sensor_f, NULL);

static const struct hs__cfg_list model_sensors_l = {
    .elem = &model_sensor_t,
    .elem_size = sizeof(struct hs_cfg_model_sensor),
    .max = HS_CFG_MAX_MODEL_SENSORS,
    .keyed = true,
    .name_off = offsetof(struct hs_cfg_model_sensor, name),
    .src_off = offsetof(struct hs_cfg_model_sensor, src),
    .pooled = true,
    .array_off = offsetof(struct hs_config, model_sensors),
    .count_off = offsetof(struct hs_config, nmodel_sensors),
    .first_off = offsetof(struct hs_cfg_model, sensor_first),
    .slice_off = offsetof(struct hs_cfg_model, sensor_count),
    .template_off = -1,
    .init = hs__cfg_init_model_sensor,
};

static const struct hs__cfg_field pose_f[] = {
    VEC("position", struct hs_cfg_model, position, -1e6, 1e6),
    VEC("rotation", struct hs_cfg_model, rotation, -1e6, 1e6),
};
STATIC_TABLE(pose_t, pose_f, NULL);

static int model_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                       const char *path)
{
    struct hs_cfg_model *m = obj;
    memcpy(m->pose.p, m->position, sizeof m->pose.p);
    hs_rot_from_axis_angle(m->rotation, m->rotation[3], m->pose.R);
    yaml_node_t *pose = hs__cfg_child(c, node, "pose");
    if (pose && hs__cfg_child(c, pose, "rotation") && m->rotation[3] != 0 && m->rotation[0] == 0 &&
        m->rotation[1] == 0 && m->rotation[2] == 0)
        return hs__cfg_err(c, hs__cfg_child(c, pose, "rotation"),
                           "%s.pose.rotation: the axis is zero but the angle is not", path);
    if (m->is_static && m->initial_count)
        return hs__cfg_err(c, hs__cfg_node_or(c, node, "initial"),
                           "%s.initial: a static model has no joints to set", path);
    return 0;
}

static const struct hs__cfg_field model_f[] = {
    NAME("name", struct hs_cfg_model, name, HS__CS_IDENT, HS__F_REQUIRED),
    PATH("file", struct hs_cfg_model, file, HS__F_REQUIRED),
    BOOL("static", struct hs_cfg_model, is_static),
    BOOL("rest_on_static", struct hs_cfg_model, rest_on_static),
    {.key = "pose", .kind = HS__K_SECTION, .off = 0, .sub = &pose_t},
    {.key = "initial", .kind = HS__K_SECTION, .off = 0, .sub = &initial_t},
    LIST("package_paths", packages_l),
    ENUM("mesh_collision", struct hs_cfg_model, mesh_collision, hs__names_mesh_collision),
    LIST("sensors", model_sensors_l),
};
STATIC_TABLE(model_t, model_f, model_check);

static const struct hs__cfg_list models_l = {
    .elem = &model_t,
    .elem_size = sizeof(struct hs_cfg_model),
    .max = HS_CFG_MAX_MODELS,
    .src_off = offsetof(struct hs_cfg_model, src),
    .array_off = offsetof(struct hs_config, models),
    .count_off = offsetof(struct hs_config, nmodels),
    .template_off = -1,
    .init = hs__cfg_init_model,
};

/* ---- physics: struct hs_world_params ---- */
static int physics_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path);
#define WG struct hs_world_guard
static const struct hs__cfg_field guard_f[] = {
    DBL("max_position_m", WG, max_position_m, 0, DMAX, HS__F_MIN_OPEN | HS__F_INF),
    DBL("max_linear_velocity_mps", WG, max_linear_velocity_mps, 0, DMAX,
        HS__F_MIN_OPEN | HS__F_INF),
    DBL("max_angular_velocity_rad_s", WG, max_angular_velocity_rad_s, 0, DMAX,
        HS__F_MIN_OPEN | HS__F_INF),
    DBL("joint_rate_factor", WG, joint_rate_factor, 1, DMAX, HS__F_INF),
    DBL("floor_z_m", WG, floor_z_m, -1e6, 1e6, HS__F_NAN_UNSET),
    DBL("floor_depth_m", WG, floor_depth_m, 0, DMAX, HS__F_INF),
    DBL("floor_time_s", WG, floor_time_s, 0, 1e3, 0),
};
#undef WG
STATIC_TABLE(guard_t, guard_f, NULL);

/* Contact materials (world.h): the list walker stores an hs_cfg_src; the world's twin must
 * match it. */
_Static_assert(sizeof(struct hs_world_src) == sizeof(struct hs_cfg_src) &&
                   offsetof(struct hs_world_src, column) == offsetof(struct hs_cfg_src, column),
               "hs_world_src mirrors hs_cfg_src");
#define LM struct hs_world_link_material
static const struct hs__cfg_field link_material_f[] = {
    NAME("material", LM, material, HS__CS_IDENT, HS__F_REQUIRED),
};
STATIC_TABLE(link_material_t, link_material_f, NULL);
static const struct hs__cfg_list link_materials_l = {
    .elem = &link_material_t,
    .elem_size = sizeof(LM),
    .max = HS_WORLD_LINK_MATERIALS_MAX,
    .keyed = true,
    .name_off = offsetof(LM, name),
    .src_off = offsetof(LM, src),
    .array_off = offsetof(struct hs_world_params, link_materials),
    .count_off = offsetof(struct hs_world_params, nlink_materials),
    .template_off = -1,
};
#undef LM

#define CM struct hs_world_contact_material
static void init_contact_material(void *elem)
{
    CM *cm = elem;
    memset(cm, 0, sizeof *cm);
    struct hs_world_params d;
    hs_world_params_default(&d);
    cm->stiffness_n_m = d.contact_stiffness_n_m;
    cm->damping_n_s_m = d.contact_damping_n_s_m;
    cm->friction = d.friction;
    cm->restitution = d.bounce;
}
static const struct hs__cfg_field contact_material_f[] = {
    NAME("material1", CM, material1, HS__CS_IDENT, HS__F_REQUIRED),
    NAME("material2", CM, material2, HS__CS_IDENT, HS__F_REQUIRED),
    DBL("stiffness_n_m", CM, stiffness_n_m, 0, 1e12, HS__F_MIN_OPEN),
    DBL("damping_n_s_m", CM, damping_n_s_m, 0, 1e9, 0),
    DBL("friction", CM, friction, 0, DMAX, HS__F_INF),
    DBL("restitution", CM, restitution, 0, 1, 0),
};
STATIC_TABLE(contact_material_t, contact_material_f, NULL);
static const struct hs__cfg_list contact_materials_l = {
    .elem = &contact_material_t,
    .elem_size = sizeof(CM),
    .max = HS_WORLD_CONTACT_MATERIALS_MAX,
    .src_off = offsetof(CM, src),
    .array_off = offsetof(struct hs_world_params, contact_materials),
    .count_off = offsetof(struct hs_world_params, ncontact_materials),
    .template_off = -1,
    .init = init_contact_material,
};
#undef CM

#define WH struct hs_world_health_budget
static const struct hs__cfg_field health_f[] = {
    DBL("max_penetration_m", WH, max_penetration_m, 0, DMAX, HS__F_MIN_OPEN | HS__F_INF),
    DBL("max_joint_error_m", WH, max_joint_error_m, 0, DMAX, HS__F_MIN_OPEN | HS__F_INF),
    DBL("max_force_jump_ratio", WH, max_force_jump_ratio, 0, DMAX, HS__F_MIN_OPEN | HS__F_INF),
};
#undef WH
STATIC_TABLE(health_t, health_f, NULL);

/* The writer prints one of the two contact descriptions, so that what it writes reads back. */
static bool contact_physical(const void *obj)
{
    return ((const struct hs_world_params *)obj)->contact_stiffness_n_m > 0;
}
static bool contact_expert(const void *obj)
{
    return !contact_physical(obj);
}

#define WP struct hs_world_params
static const struct hs__cfg_field physics_f[] = {
    DBL("step_s", WP, step_s, 1e-5, 0.1, 0),
    U32("substeps", WP, substeps, 1, 100, 0),
    ENUM("solver", WP, solver, hs__names_solver),
    U32("iterations", WP, quick_iterations, 1, 1000, 0),
    U32("iterations_min", WP, quick_iterations_min, 0, 1000, 0),
    DBL("sor_w", WP, quick_w, 0, 1.99, HS__F_MIN_OPEN | HS__F_ZERO_OK),
    VEC("gravity", WP, gravity, -1000, 1000),
    DBL("erp", WP, erp, 0, 1, 0),
    DBL("cfm", WP, cfm, 0, 1, 0),
    DBL("friction", WP, friction, 0, DMAX, HS__F_INF),
    DBL("bounce", WP, bounce, 0, 1, 0),
    DBL("bounce_min_vel", WP, bounce_min_vel, 0, 100, 0),
    F_("contact_stiffness_n_m", HS__K_DOUBLE, WP, contact_stiffness_n_m, .min = 0, .max = 1e12,
       .flags = HS__F_MIN_OPEN, .emit = contact_physical),
    F_("contact_damping_n_s_m", HS__K_DOUBLE, WP, contact_damping_n_s_m, .min = 0, .max = 1e9,
       .emit = contact_physical),
    F_("contact_erp", HS__K_DOUBLE, WP, contact_erp, .min = 0, .max = 1, .emit = contact_expert),
    F_("contact_cfm", HS__K_DOUBLE, WP, contact_cfm, .min = 0, .max = 1, .emit = contact_expert),
    LIST("materials", link_materials_l),
    LIST("contact_materials", contact_materials_l),
    DBL("surface_layer", WP, surface_layer, 0, 0.1, 0),
    U32("max_contacts", WP, max_contacts, 1, 64, 0),
    DBL("linear_damping", WP, linear_damping, 0, 1, 0),
    DBL("angular_damping", WP, angular_damping, 0, 1, 0),
    BOOL("self_collision", WP, self_collision),
    BOOL("contactless", WP, contactless),
    BOOL("merge_fixed_links", WP, merge_fixed_links),
    U32("warmup_steps", WP, warmup_steps, 0, 100000, 0),
    SECTION("health", WP, health, health_t, 0),
    SECTION("guard", WP, guard, guard_t, 0),
};
#undef WP
STATIC_TABLE(physics_t, physics_f, physics_check);

static bool material_used(const struct hs_world_params *p, const char *name)
{
    if (!strcmp(name, "default"))
        return true;
    for (uint32_t i = 0; i < p->nlink_materials; i++)
        if (!strcmp(p->link_materials[i].material, name))
            return true;
    return false;
}

static int physics_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path)
{
    struct hs_world_params *p = obj;
    c->physics_step_given = hs__cfg_seen_key(&physics_t, seen, "step_s");
    /* contact_erp / contact_cfm are the expert's per-point terms: giving one of them selects
     * them over the physical stiffness and damping, which must then not be given too. */
    bool expert = hs__cfg_seen_key(&physics_t, seen, "contact_erp") ||
                  hs__cfg_seen_key(&physics_t, seen, "contact_cfm");
    bool physical = hs__cfg_seen_key(&physics_t, seen, "contact_stiffness_n_m") ||
                    hs__cfg_seen_key(&physics_t, seen, "contact_damping_n_s_m");
    if (expert && physical)
        return hs__cfg_err(c, hs__cfg_node_or(c, node, "contact_erp"),
                           "%s: give contact_stiffness_n_m/contact_damping_n_s_m or the expert "
                           "contact_erp/contact_cfm, not both",
                           path);
    if (expert)
        p->contact_stiffness_n_m = 0;
    /* `iterations` alone fixes the count, as it always did; `iterations_min` (default 8) is the
     * count a calm scene runs (world_iterations.c), 0 or `iterations` itself: fixed. */
    if (hs__cfg_seen_key(&physics_t, seen, "iterations") &&
        !hs__cfg_seen_key(&physics_t, seen, "iterations_min"))
        p->quick_iterations_min = 0;
    if (p->quick_iterations_min > p->quick_iterations)
        return hs__cfg_err(c, hs__cfg_node_or(c, node, "iterations_min"),
                           "%s.iterations_min %u is above iterations %u", path,
                           p->quick_iterations_min, p->quick_iterations);
    for (uint32_t i = 0; i < p->ncontact_materials; i++) {
        const struct hs_world_contact_material *cm = &p->contact_materials[i];
        const char *m = !material_used(p, cm->material1)   ? cm->material1
                        : !material_used(p, cm->material2) ? cm->material2
                                                           : NULL;
        if (m)
            return hs__cfg_err_at(c, (struct hs_cfg_src){cm->src.line, cm->src.column},
                                  "%s.contact_materials[%u]: material '%s' is given to no link "
                                  "in %s.materials (nor is it 'default')",
                                  path, i, m, path);
    }
    return 0;
}

/* ---- rt ---- */
static const struct hs__cfg_field leaky_f[] = {
    U32("increment", struct hs_cfg_leaky, increment, 1, 1000000, 0),
    U32("decrement", struct hs_cfg_leaky, decrement, 0, 1000000, 0),
    U32("threshold", struct hs_cfg_leaky, threshold, 1, 1000000000, 0),
    ENUM("action", struct hs_cfg_leaky, action, hs__names_leaky),
};
STATIC_TABLE(leaky_t, leaky_f, NULL);

/* rt.clock.sync: the sync mode's event (and CAN lockstep's release frame). */
static const struct hs__cfg_field clock_sync_f[] = {
    ENUM("source", struct hs_cfg_clock_sync, source, hs__names_sync_source),
    NAME("bus", struct hs_cfg_clock_sync, bus, HS__CS_IDENT, 0),
    U32("can_id", struct hs_cfg_clock_sync, can_id, 0, 0x7FF, 0),
    DBL("lead_s", struct hs_cfg_clock_sync, lead_s, 0, 0.1, 0),
    U32("max_slew_ppm", struct hs_cfg_clock_sync, max_slew_ppm, 1, 100000, 0),
    DBL("lock_window_s", struct hs_cfg_clock_sync, lock_window_s, 0, 0.05, 0),
    U32("lock_ticks", struct hs_cfg_clock_sync, lock_ticks, 1, 100000, 0),
    U32("timeout_periods", struct hs_cfg_clock_sync, timeout_periods, 1, 1000000, 0),
};
STATIC_TABLE(clock_sync_t, clock_sync_f, NULL);

static const struct hs__cfg_field clock_f[] = {
    ENUM("mode", struct hs_cfg_clock, mode, hs_clock_mode_names),
    DBL("lockstep_timeout_s", struct hs_cfg_clock, lockstep_timeout_s, 0.001, 3600, 0),
    ENUM("on_timeout", struct hs_cfg_clock, on_timeout, hs_lockstep_expiry_names),
    ENUM("lockstep_source", struct hs_cfg_clock, lockstep_source, hs__names_lockstep_source),
    SECTION("sync", struct hs_cfg_clock, sync, clock_sync_t, 0),
};
STATIC_TABLE(clock_cfg_t, clock_f, NULL);

static const struct hs__cfg_field rt_f[] = {
    F_("period_ns", HS__K_U64, struct hs_cfg_rt, period_ns, .min = 100000, .max = 100000000),
    I32("priority", struct hs_cfg_rt, priority, 1, 99),
    I32("cpu", struct hs_cfg_rt, cpu, -1, 4095),
    BOOL("lock_memory", struct hs_cfg_rt, lock_memory),
    BOOL("cpu_dma_latency", struct hs_cfg_rt, cpu_dma_latency),
    BOOL("require_rt", struct hs_cfg_rt, require_rt),
    ENUM("overrun_policy", struct hs_cfg_rt, overrun_policy, hs__names_overrun),
    SECTION("overrun_leaky", struct hs_cfg_rt, overrun_leaky, leaky_t, 0),
    U32("warmup_ticks", struct hs_cfg_rt, warmup_ticks, 0, 1000000, 0),
    U32("histogram_max_us", struct hs_cfg_rt, histogram_max_us, 100, 1000000, 0),
    SECTION("clock", struct hs_cfg_rt, clock, clock_cfg_t, 0),
};
STATIC_TABLE(rt_t, rt_f, NULL);

/* ---- budgets ---- */
#define BU struct hs_cfg_budgets
static const struct hs__cfg_field budgets_f[] = {
    U64("max_misses", BU, max_misses),
    DBL("tick_p9999_fraction_of_period", BU, tick_p9999_fraction_of_period, 0, 1, HS__F_MIN_OPEN),
    DBL("tick_max_fraction_of_period", BU, tick_max_fraction_of_period, 0, 10, HS__F_MIN_OPEN),
    DBL("wake_latency_p99_us", BU, wake_latency_p99_us, 0, 1e6, HS__F_MIN_OPEN),
    DBL("wake_latency_max_us", BU, wake_latency_max_us, 0, 1e6, HS__F_MIN_OPEN),
    U64("max_can_rx_drops", BU, max_can_rx_drops),
};
#undef BU
STATIC_TABLE(budgets_t, budgets_f, NULL);

/* ---- controller ---- */
static bool has_trajectory(const void *obj)
{
    return ((const struct hs_cfg_controller *)obj)->trajectory.joint[0] != 0;
}

static const struct hs__cfg_field gains_f[] = {
    DBL("kp", struct hs_cfg_gains, kp, 0, 1e6, 0),
    DBL("kd", struct hs_cfg_gains, kd, 0, 1e5, 0),
};
STATIC_TABLE(gains_t, gains_f, NULL);

static const struct hs__cfg_list gains_l = {
    .elem = &gains_t,
    .elem_size = sizeof(struct hs_cfg_gains),
    .max = HS_CFG_MAX_JOINTS,
    .keyed = true,
    .name_off = offsetof(struct hs_cfg_gains, joint),
    .src_off = offsetof(struct hs_cfg_gains, src),
    .array_off = offsetof(struct hs_cfg_controller, joints),
    .count_off = offsetof(struct hs_cfg_controller, njoints),
    .template_off = offsetof(struct hs_cfg_controller, defaults),
};

static const struct hs__cfg_field trajectory_f[] = {
    NAME("joint", struct hs_cfg_trajectory, joint, HS__CS_IDENT, HS__F_REQUIRED),
    DBL("amplitude", struct hs_cfg_trajectory, amplitude, 0, 1e3, 0),
    DBL("frequency_hz", struct hs_cfg_trajectory, frequency_hz, 0, 1e3, HS__F_MIN_OPEN),
};
STATIC_TABLE(trajectory_t, trajectory_f, NULL);

static const struct hs__cfg_field controller_f[] = {
    ENUM("type", struct hs_cfg_controller, type, hs__names_controller),
    DBL("bandwidth_rad_s", struct hs_cfg_controller, bandwidth_rad_s, 0, 1000, 0),
    SECTION("defaults", struct hs_cfg_controller, defaults, gains_t, HS__F_FIRST),
    LIST("joints", gains_l),
    F_("trajectory", HS__K_SECTION, struct hs_cfg_controller, trajectory, .sub = &trajectory_t,
       .emit = has_trajectory),
};
STATIC_TABLE(controller_t, controller_f, NULL);

/* ---- actuators ---- */
#define AC struct hs_cfg_actuator
static const struct hs__cfg_field actuator_f[] = {
    F_("modes", HS__K_MODES, AC, modes, .names = hs__names_mode),
    DBL("torque_limit_nm", AC, torque_limit_nm, 0, DMAX,
        HS__F_MIN_OPEN | HS__F_INF | HS__F_NAN_UNSET),
    DBL("current_limit_a", AC, current_limit_a, 0, DMAX, HS__F_MIN_OPEN | HS__F_INF),
    DBL("gear_ratio", AC, gear_ratio, -100000, 100000, HS__F_NAN_UNSET),
    DBL("gear_efficiency", AC, gear_efficiency, 0, 1, HS__F_MIN_OPEN | HS__F_NAN_UNSET),
    DBL("rotor_inertia", AC, rotor_inertia, 0, 10, HS__F_NAN_UNSET),
    DBL("torque_const", AC, torque_const, 0, 100, HS__F_MIN_OPEN | HS__F_NAN_UNSET),
    DBL("viscous_friction", AC, viscous_friction, 0, 10000, 0),
    DBL("coulomb_friction", AC, coulomb_friction, 0, 10000, 0),
    DBL("velocity_limit", AC, velocity_limit, 0, DMAX,
        HS__F_MIN_OPEN | HS__F_INF | HS__F_NAN_UNSET),
    DBL("velocity_gain", AC, velocity_gain, 0, 1e6, 0),
    DBL("command_timeout_s", AC, command_timeout_s, 0, 10, 0),
    ENUM("safe_behaviour", AC, safe_behaviour, hs__names_safe),
    U32("command_delay_ticks", AC, command_delay_ticks, 0, HS_CFG_MAX_DELAY_TICKS, 0),
    ENUM("source", AC, source, hs__names_source),
};
#undef AC
STATIC_TABLE(actuator_t, actuator_f, NULL);

static const struct hs__cfg_list actuators_l = {
    .elem = &actuator_t,
    .elem_size = sizeof(struct hs_cfg_actuator),
    .max = HS_CFG_MAX_JOINTS,
    .keyed = true,
    .name_off = offsetof(struct hs_cfg_actuator, joint),
    .src_off = offsetof(struct hs_cfg_actuator, src),
    .array_off = offsetof(struct hs_cfg_actuators, joints),
    .count_off = offsetof(struct hs_cfg_actuators, njoints),
    .template_off = offsetof(struct hs_cfg_actuators, defaults),
};

static const struct hs__cfg_field actuators_f[] = {
    SECTION("defaults", struct hs_cfg_actuators, defaults, actuator_t, HS__F_FIRST),
    LIST("joints", actuators_l),
};
STATIC_TABLE(actuators_t, actuators_f, NULL);

/* ---- sensors ---- */
#define EN struct hs_cfg_encoder
static const struct hs__cfg_field encoder_f[] = {
    U32("counter_bits", EN, counter_bits, 8, 63, 0),
    I64("zero_offset_counts", EN, zero_offset_counts),
    DBL("counts_per_rev", EN, counts_per_rev, 0, 1e9, HS__F_MIN_OPEN | HS__F_ZERO_OK),
    ENUM("mode", EN, mode, hs__names_encoder_mode),
    U32("velocity_window_ticks", EN, velocity_window_ticks, 1, HS_CFG_MAX_VELOCITY_WINDOW, 0),
    U32("delay_ticks", EN, delay_ticks, 0, HS_CFG_MAX_DELAY_TICKS, 0),
};
#undef EN
STATIC_TABLE(encoder_t, encoder_f, NULL);

static const struct hs__cfg_list encoders_l = {
    .elem = &encoder_t,
    .elem_size = sizeof(struct hs_cfg_encoder),
    .max = HS_CFG_MAX_JOINTS,
    .keyed = true,
    .name_off = offsetof(struct hs_cfg_encoder, joint),
    .src_off = offsetof(struct hs_cfg_encoder, src),
    .array_off = offsetof(struct hs_cfg_sensors, encoders),
    .count_off = offsetof(struct hs_cfg_sensors, nencoders),
    .template_off = offsetof(struct hs_cfg_sensors, encoder_defaults),
};

static const struct hs__cfg_field encoders_f[] = {
    SECTION("defaults", struct hs_cfg_sensors, encoder_defaults, encoder_t, HS__F_FIRST),
    LIST("joints", encoders_l),
};
STATIC_TABLE(encoders_t, encoders_f, NULL);

static const struct hs__cfg_field accel_gyro_f[] = {
    DBL("accel", struct hs_cfg_accel_gyro, accel, 0, 1e3, 0),
    DBL("gyro", struct hs_cfg_accel_gyro, gyro, 0, 1e3, 0),
};
STATIC_TABLE(accel_gyro_t, accel_gyro_f, NULL);

static const struct hs__cfg_field bias_f[] = {
    VEC("accel", struct hs_cfg_imu, accel_bias, -1e3, 1e3),
    VEC("gyro", struct hs_cfg_imu, gyro_bias, -1e3, 1e3),
};
STATIC_TABLE(bias_t, bias_f, NULL);

static const struct hs__cfg_field quant_f[] = {
    DBL("accel_lsb", struct hs_cfg_imu, accel_lsb, 0, 100, 0),
    DBL("gyro_lsb", struct hs_cfg_imu, gyro_lsb, 0, 100, 0),
};
STATIC_TABLE(quant_t, quant_f, NULL);

static int imu_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                     const char *path)
{
    const struct hs_cfg_imu *imu = obj;
    if (!imu->accel[0] && !imu->gyro[0])
        return hs__cfg_err(c, node, "%s: an IMU needs an accel or a gyro sensor (or both)", path);
    return 0;
}

#define IM struct hs_cfg_imu
static const struct hs__cfg_field imu_f[] = {
    NAME("accel", IM, accel, HS__CS_IDENT, 0),
    NAME("gyro", IM, gyro, HS__CS_IDENT, 0),
    DBL("rate_hz", IM, rate_hz, 0, 1e6, HS__F_MIN_OPEN | HS__F_ZERO_OK),
    SECTION("noise_density", IM, noise_density, accel_gyro_t, 0),
    {.key = "bias", .kind = HS__K_SECTION, .off = 0, .sub = &bias_t},
    SECTION("bias_random_walk", IM, bias_random_walk, accel_gyro_t, 0),
    {.key = "quantisation", .kind = HS__K_SECTION, .off = 0, .sub = &quant_t},
    U32("delay_ticks", IM, delay_ticks, 0, HS_CFG_MAX_DELAY_TICKS, 0),
};
#undef IM
STATIC_TABLE(imu_t, imu_f, imu_check);

static const struct hs__cfg_list imus_l = {
    .elem = &imu_t,
    .elem_size = sizeof(struct hs_cfg_imu),
    .max = HS_CFG_MAX_IMUS,
    .keyed = true,
    .name_off = offsetof(struct hs_cfg_imu, name),
    .src_off = offsetof(struct hs_cfg_imu, src),
    .array_off = offsetof(struct hs_cfg_sensors, imus),
    .count_off = offsetof(struct hs_cfg_sensors, nimus),
    .template_off = -1,
    .init = hs__cfg_init_imu,
};

#define FS struct hs_cfg_force_sensor
static const struct hs__cfg_field force_f[] = {
    DBL("force_noise_n", FS, force_noise_n, 0, 1e6, 0),
    DBL("torque_noise_nm", FS, torque_noise_nm, 0, 1e6, 0),
    VEC("force_bias", FS, force_bias, -1e6, 1e6),
    VEC("torque_bias", FS, torque_bias, -1e6, 1e6),
    U32("delay_ticks", FS, delay_ticks, 0, HS_CFG_MAX_DELAY_TICKS, 0),
};
#undef FS
STATIC_TABLE(force_t, force_f, NULL);

static const struct hs__cfg_list force_l = {
    .elem = &force_t,
    .elem_size = sizeof(struct hs_cfg_force_sensor),
    .max = HS_CFG_MAX_FORCE_SENSORS,
    .keyed = true,
    .name_off = offsetof(struct hs_cfg_force_sensor, name),
    .src_off = offsetof(struct hs_cfg_force_sensor, src),
    .array_off = offsetof(struct hs_cfg_sensors, force),
    .count_off = offsetof(struct hs_cfg_sensors, nforce),
    .template_off = -1,
};

static const struct hs__cfg_field sensors_f[] = {
    {.key = "encoders", .kind = HS__K_SECTION, .off = 0, .sub = &encoders_t},
    LIST("imu", imus_l),
    LIST("force", force_l),
    U64("noise_seed", struct hs_cfg_sensors, noise_seed),
};
STATIC_TABLE(sensors_t, sensors_f, NULL);

/* ---- CAN ---- */
#define BS struct hs_cfg_bus
static const struct hs__cfg_field bus_f[] = {
    NAME("name", BS, name, HS__CS_IDENT, HS__F_REQUIRED),
    NAME("interface", BS, interface, HS__CS_IFNAME, HS__F_REQUIRED),
    BOOL("fd", BS, fd),
    U32("bitrate_bps", BS, bitrate_bps, 10000, 1000000, 0),
    RENAMED("bitrate", "bitrate_bps"),
    DBL("sample_point", BS, sample_point, 0.5, 0.95, 0),
    U32("restart_ms", BS, restart_ms, 0, 60000, 0),
    BOOL("manage", BS, manage),
    ENUM("send_queue_policy", BS, send_queue_policy, hs__names_send_queue),
    ENUM("replies", BS, replies, hs__names_can_replies),
    I32("reply_priority", BS, reply_priority, 0, 99),
    I32("reply_cpu", BS, reply_cpu, -1, 4095),
};
#undef BS
STATIC_TABLE(bus_t, bus_f, NULL);

static const struct hs__cfg_list buses_l = {
    .elem = &bus_t,
    .elem_size = sizeof(struct hs_cfg_bus),
    .max = HS_CFG_MAX_BUSES,
    .src_off = offsetof(struct hs_cfg_bus, src),
    .array_off = offsetof(struct hs_cfg_can, buses),
    .count_off = offsetof(struct hs_cfg_can, nbuses),
    .template_off = -1,
    .init = hs__cfg_init_bus,
};

static int node_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                      const char *path);
/* One section row per registered protocol: key = protocol name, struct = the node's slot. */
#define IS_PROTO(name, NAME)                                                                       \
    static bool is_##name(const void *obj)                                                         \
    {                                                                                              \
        return ((const struct hs_cfg_node *)obj)->protocol == HS_CFG_PROTO_##NAME;                 \
    }
HS_CAN_PROTOCOLS(IS_PROTO)
#undef IS_PROTO
#define DECLARE(name, NAME) extern const struct hs__cfg_table hs__can_##name##_section;
HS_CAN_PROTOCOLS(DECLARE)
#undef DECLARE
static bool single_joint(const void *obj)
{
    return hs__can_proto_cfgs[((const struct hs_cfg_node *)obj)->protocol]->single_joint;
}
#define ND struct hs_cfg_node
#define SECTION_ROW(name, NAME)                                                                    \
    F_(#name, HS__K_SECTION, ND, proto[HS_CFG_PROTO_##NAME], .sub = &hs__can_##name##_section,     \
       .emit = is_##name),
static const struct hs__cfg_field node_f[] = {
    NAME("name", ND, name, HS__CS_IDENT, HS__F_REQUIRED),
    NAME("bus", ND, bus, HS__CS_IDENT, HS__F_REQUIRED),
    F_("protocol", HS__K_ENUM, ND, protocol, .names = hs__names_protocol, .flags = HS__F_REQUIRED),
    F_("id", HS__K_U32, ND, id, .min = 0, .max = 0x7ff, .flags = HS__F_HEX, .emit = single_joint),
    F_("joint", HS__K_NAME, ND, joint, .n = HS_NAME_MAX, .cs = HS__CS_IDENT, .emit = single_joint),
    HS_CAN_PROTOCOLS(SECTION_ROW)};
#undef SECTION_ROW
#undef ND
STATIC_TABLE(node_t, node_f, node_check);

static int node_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                      const char *path)
{
    struct hs_cfg_node *n = obj;
    const char *proto = hs__names_protocol[n->protocol];
    const struct hs__can_proto_cfg *p = hs__can_proto_cfgs[n->protocol];
    for (int q = 0; q < HS_CFG_CAN_PROTOCOL_MAX; q++)
        if (q != (int)n->protocol && hs__cfg_seen_key(&node_t, seen, hs__names_protocol[q]))
            return hs__cfg_err(c, hs__cfg_child(c, node, hs__names_protocol[q]),
                               "%s.%s: settings for protocol %s on a %s node", path,
                               hs__names_protocol[q], hs__names_protocol[q], proto);
    bool has_id = hs__cfg_seen_key(&node_t, seen, "id");
    bool has_joint = hs__cfg_seen_key(&node_t, seen, "joint");
    if (p->section_required && !hs__cfg_seen_key(&node_t, seen, proto))
        return hs__cfg_err(c, node, "%s: protocol %s needs a %s section", path, proto, proto);
    if (!p->single_joint) {
        if (has_id)
            return hs__cfg_err(c, hs__cfg_child(c, node, "id"),
                               "%s.id: a %s node has no id (its %s section says which IDs)", path,
                               proto, proto);
        if (has_joint)
            return hs__cfg_err(c, hs__cfg_child(c, node, "joint"),
                               "%s.joint: a %s node names its joints in its %s section", path,
                               proto, proto);
    } else {
        if (!has_id)
            return hs__cfg_err(c, node, "%s: missing required key 'id'", path);
        if (!has_joint)
            return hs__cfg_err(c, node, "%s: missing required key 'joint'", path);
        if (n->id < p->id_min || n->id > p->id_max)
            return hs__cfg_err(c, hs__cfg_child(c, node, "id"),
                               "%s.id: %u out of range [%u, %u] for protocol %s", path, n->id,
                               p->id_min, p->id_max, proto);
    }
    return p->check ? p->check(c, n, node, path) : 0;
}

static const struct hs__cfg_list nodes_l = {
    .elem = &node_t,
    .elem_size = sizeof(struct hs_cfg_node),
    .max = HS_CFG_MAX_NODES,
    .src_off = offsetof(struct hs_cfg_node, src),
    .array_off = offsetof(struct hs_cfg_can, nodes),
    .count_off = offsetof(struct hs_cfg_can, nnodes),
    .template_off = -1,
    .init = hs__cfg_init_node,
};

static const struct hs__cfg_field can_f[] = {
    LIST("buses", buses_l),
    LIST("nodes", nodes_l),
};
STATIC_TABLE(can_t, can_f, NULL);

/* ---- shm, trace ---- */
static const struct hs__cfg_field shm_f[] = {
    BOOL("enabled", struct hs_cfg_shm, enabled),
    NAME("group", struct hs_cfg_shm, group, HS__CS_GROUP, 0),
    F_("mode", HS__K_MODE, struct hs_cfg_shm, mode),
    DBL("client_timeout_s", struct hs_cfg_shm, client_timeout_s, 0, 10, HS__F_MIN_OPEN),
};
STATIC_TABLE(shm_t, shm_f, NULL);

static const struct hs__cfg_field trace_f[] = {BOOL("enabled", struct hs_cfg_trace, enabled)};
STATIC_TABLE(trace_t, trace_f, NULL);

/* ---- record ---- */
static const struct hs__cfg_field record_f[] = {
    BOOL("enabled", struct hs_cfg_record, enabled),
    TEXT("dir", struct hs_cfg_record, dir),
    DBL("rotate_mib", struct hs_cfg_record, rotate_mib, 0, 1048576, 0),
    DBL("rotate_s", struct hs_cfg_record, rotate_s, 0, 31536000, 0),
    U32("keep_segments", struct hs_cfg_record, keep_segments, 0, 1000000, 0),
    U32("ring_items", struct hs_cfg_record, ring_items, 1024, 16777216, 0),
    U32("ring_states", struct hs_cfg_record, ring_states, 64, 1048576, 0),
    ENUM("compression", struct hs_cfg_record, compression, hs__names_record_compression),
    U32("compression_level", struct hs_cfg_record, compression_level, 1, 19, 0),
};
STATIC_TABLE(record_t, record_f, NULL);

/* ---- root ---- */
static const struct hs__cfg_field root_f[] = {
    SECTION("bench", struct hs_config, bench, bench_t, HS__F_REQUIRED),
    {.key = "models", .kind = HS__K_LIST, .list = &models_l, .flags = HS__F_REQUIRED},
    SECTION("physics", struct hs_config, physics, physics_t, 0),
    SECTION("rt", struct hs_config, rt, rt_t, 0),
    SECTION("budgets", struct hs_config, budgets, budgets_t, 0),
    SECTION("controller", struct hs_config, controller, controller_t, 0),
    SECTION("actuators", struct hs_config, actuators, actuators_t, 0),
    SECTION("sensors", struct hs_config, sensors, sensors_t, 0),
    SECTION("can", struct hs_config, can, can_t, 0),
    SECTION("shm", struct hs_config, shm, shm_t, 0),
    SECTION("trace", struct hs_config, trace, trace_t, 0),
    SECTION("record", struct hs_config, record, record_t, 0),
};
TABLE(hs__cfg_root, root_f, NULL);
