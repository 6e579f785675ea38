/* The config schema: one table per YAML mapping, naming each key, its type, range and place in
 * struct hs_config. The walker (yaml_walk.c) parses with it and the writer (write.c) prints with
 * it, so the two cannot drift apart. Units are documented in config.h and config/README.md. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "cfg_internal.h"

#define F_(k, K, T, m, ...)                                                                        \
    {                                                                                              \
        .key = k, .kind = K, .off = offsetof(T, m), __VA_ARGS__                                    \
    }
#define DBL(k, T, m, lo, hi, fl) F_(k, HS__K_DOUBLE, T, m, .min = lo, .max = hi, .flags = fl)
#define U32(k, T, m, lo, hi, fl) F_(k, HS__K_U32, T, m, .min = lo, .max = hi, .flags = fl)
#define I32(k, T, m, lo, hi) F_(k, HS__K_I32, T, m, .min = lo, .max = hi)
#define U64(k, T, m) F_(k, HS__K_U64, T, m)
#define I64(k, T, m) F_(k, HS__K_I64, T, m)
#define BOOL(k, T, m) F_(k, HS__K_BOOL, T, m)
#define ENUM(k, T, m, nm) F_(k, HS__K_ENUM, T, m, .names = nm)
#define NAME(k, T, m, c, fl) F_(k, HS__K_NAME, T, m, .n = sizeof(((T *)0)->m), .cs = c, .flags = fl)
#define TEXT(k, T, m) F_(k, HS__K_TEXT, T, m, .n = sizeof(((T *)0)->m))
#define PATH(k, T, m, fl) F_(k, HS__K_PATH, T, m, .flags = fl)
#define VEC(k, T, m, lo, hi)                                                                       \
    F_(k, HS__K_VEC, T, m, .n = sizeof(((T *)0)->m) / sizeof(double), .min = lo, .max = hi)
#define SECTION(k, T, m, tab, fl) F_(k, HS__K_SECTION, T, m, .sub = &tab, .flags = fl)
#define LIST(k, lst)                                                                               \
    {                                                                                              \
        .key = k, .kind = HS__K_LIST, .list = &lst                                                 \
    }
#define TABLE(name, fields, chk)                                                                   \
    const struct hs__cfg_table name = {fields, sizeof fields / sizeof fields[0], chk}
#define STATIC_TABLE(name, fields, chk)                                                            \
    static const struct hs__cfg_table name = {fields, sizeof fields / sizeof fields[0], chk}

#define DMAX INFINITY

static bool seen_key(const struct hs__cfg_table *t, uint64_t seen, const char *key)
{
    for (uint32_t i = 0; i < t->nfields; i++)
        if (!strcmp(t->fields[i].key, key))
            return seen & (1ull << i);
    return false;
}

static yaml_node_t *node_or(struct hs__ctx *c, yaml_node_t *map, const char *key)
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
        return hs__cfg_err(c, node_or(c, node, "initial"),
                           "%s.initial: a static model has no joints to set", path);
    return 0;
}

static const struct hs__cfg_field model_f[] = {
    NAME("name", struct hs_cfg_model, name, HS__CS_IDENT, HS__F_REQUIRED),
    PATH("file", struct hs_cfg_model, file, HS__F_REQUIRED),
    BOOL("static", struct hs_cfg_model, is_static),
    {.key = "pose", .kind = HS__K_SECTION, .off = 0, .sub = &pose_t},
    {.key = "initial", .kind = HS__K_SECTION, .off = 0, .sub = &initial_t},
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
};
#undef WG
STATIC_TABLE(guard_t, guard_f, NULL);

#define WP struct hs_world_params
static const struct hs__cfg_field physics_f[] = {
    DBL("step_s", WP, step_s, 1e-5, 0.1, 0),
    U32("substeps", WP, substeps, 1, 100, 0),
    ENUM("solver", WP, solver, hs__names_solver),
    U32("iterations", WP, quick_iterations, 1, 1000, 0),
    VEC("gravity", WP, gravity, -1000, 1000),
    DBL("erp", WP, erp, 0, 1, 0),
    DBL("cfm", WP, cfm, 0, 1, 0),
    DBL("friction", WP, friction, 0, DMAX, HS__F_INF),
    DBL("bounce", WP, bounce, 0, 1, 0),
    DBL("bounce_min_vel", WP, bounce_min_vel, 0, 100, 0),
    DBL("contact_erp", WP, contact_erp, 0, 1, 0),
    DBL("contact_cfm", WP, contact_cfm, 0, 1, 0),
    DBL("surface_layer", WP, surface_layer, 0, 0.1, 0),
    U32("max_contacts", WP, max_contacts, 1, 64, 0),
    DBL("linear_damping", WP, linear_damping, 0, 1, 0),
    DBL("angular_damping", WP, angular_damping, 0, 1, 0),
    BOOL("self_collision", WP, self_collision),
    BOOL("contactless", WP, contactless),
    U32("warmup_steps", WP, warmup_steps, 0, 100000, 0),
    SECTION("guard", WP, guard, guard_t, 0),
};
#undef WP
STATIC_TABLE(physics_t, physics_f, physics_check);

static int physics_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path)
{
    c->physics_step_given = seen_key(&physics_t, seen, "step_s");
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
    ENUM("mode", struct hs_cfg_clock, mode, hs__names_clock_mode),
    DBL("lockstep_timeout_s", struct hs_cfg_clock, lockstep_timeout_s, 0.001, 3600, 0),
    ENUM("on_timeout", struct hs_cfg_clock, on_timeout, hs__names_lockstep_expiry),
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
    U32("bitrate", BS, bitrate, 10000, 1000000, 0),
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

#define MI struct hs_cfg_mit
static const struct hs__cfg_field mit_f[] = {
    DBL("p_min", MI, p_min, -1e4, 1e4, 0),
    DBL("p_max", MI, p_max, -1e4, 1e4, 0),
    DBL("v_min", MI, v_min, -1e4, 1e4, 0),
    DBL("v_max", MI, v_max, -1e4, 1e4, 0),
    DBL("kp_max", MI, kp_max, 0, 1e5, HS__F_MIN_OPEN),
    DBL("kd_max", MI, kd_max, 0, 1e4, HS__F_MIN_OPEN),
    DBL("t_min", MI, t_min, -1e5, 1e5, 0),
    DBL("t_max", MI, t_max, -1e5, 1e5, 0),
    DBL("i_min", MI, i_min, -1e4, 1e4, 0),
    DBL("i_max", MI, i_max, -1e4, 1e4, 0),
    ENUM("reply", MI, reply, hs__names_mit_reply),
    F_("reply_id", HS__K_U32, MI, reply_id, .min = 0, .max = 0x7ff, .flags = HS__F_HEX),
    DBL("timeout_s", MI, timeout_s, 0, 10, 0),
};
#undef MI

static int mit_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                     const char *path)
{
    const struct hs_cfg_mit *m = obj;
    const struct {
        const char *key;
        double lo, hi;
    } pairs[] = {{"p", m->p_min, m->p_max},
                 {"v", m->v_min, m->v_max},
                 {"t", m->t_min, m->t_max},
                 {"i", m->i_min, m->i_max}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (!(pairs[i].lo < pairs[i].hi)) {
            char key[8];
            hs__cfg_pathf(key, sizeof key, "%s_max", pairs[i].key);
            return hs__cfg_err(c, node_or(c, node, key), "%s.%s: %g must be above %s_min %g", path,
                               key, pairs[i].hi, pairs[i].key, pairs[i].lo);
        }
    return 0;
}
STATIC_TABLE(mit_t, mit_f, mit_check);

#define OD struct hs_cfg_odrive
static const struct hs__cfg_field odrive_f[] = {
    DBL("heartbeat_period_s", OD, heartbeat_period_s, 0, 10, 0),
    DBL("encoder_period_s", OD, encoder_period_s, 0, 10, 0),
    DBL("watchdog_timeout_s", OD, watchdog_timeout_s, 0, 10, 0),
    DBL("pos_gain", OD, pos_gain, 0, 1e6, 0),
    DBL("vel_gain", OD, vel_gain, 0, 1e6, 0),
    DBL("vel_integrator_gain", OD, vel_integrator_gain, 0, 1e6, 0),
    DBL("vel_limit", OD, vel_limit, 0, 1e6, 0),
    DBL("vel_limit_tolerance", OD, vel_limit_tolerance, 0, 100, 0),
    BOOL("enable_vel_limit", OD, enable_vel_limit),
    BOOL("enable_torque_mode_vel_limit", OD, enable_torque_mode_vel_limit),
};
#undef OD
STATIC_TABLE(odrive_t, odrive_f, NULL);

static int binding_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path);
static const struct hs__cfg_field binding_f[] = {
    NAME("message", struct hs_cfg_binding, message, HS__CS_CIDENT, HS__F_REQUIRED),
    NAME("signal", struct hs_cfg_binding, signal, HS__CS_CIDENT, HS__F_REQUIRED),
    F_("to", HS__K_REF, struct hs_cfg_binding, ref),
    F_("from", HS__K_REF, struct hs_cfg_binding, ref),
};
STATIC_TABLE(binding_t, binding_f, binding_check);

static int binding_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                         const char *path)
{
    struct hs_cfg_binding *b = obj;
    bool to = seen_key(&binding_t, seen, "to"), from = seen_key(&binding_t, seen, "from");
    if (to == from)
        return hs__cfg_err(c, node,
                           "%s: needs exactly one of 'to' (received signal drives a "
                           "command) or 'from' (state fills a sent signal)",
                           path);
    b->dir = to ? HS_CFG_BIND_TO : HS_CFG_BIND_FROM;
    bool command = b->ref.quantity <= HS_CFG_Q_ENABLE;
    bool joint_state =
        b->ref.quantity >= HS_CFG_Q_POSITION && b->ref.quantity <= HS_CFG_Q_ENCODER_COUNTS;
    yaml_node_t *where = node_or(c, node, to ? "to" : "from");
    if (to && !(command && b->ref.kind == HS_CFG_REF_JOINT))
        return hs__cfg_err(c, where,
                           "%s.to: '%s' is not a joint command (joint.<name>.position_setpoint, "
                           "velocity_setpoint, torque_setpoint, current_setpoint, kp, kd, enable)",
                           path, hs__names_quantity[b->ref.quantity]);
    if (from && b->ref.kind == HS_CFG_REF_JOINT && !joint_state)
        return hs__cfg_err(c, where,
                           "%s.from: '%s' is not a joint state (position, velocity, torque, "
                           "current, encoder_counts)",
                           path, hs__names_quantity[b->ref.quantity]);
    if (from && b->ref.kind == HS_CFG_REF_SENSOR && b->ref.quantity < HS_CFG_Q_ACCEL_X)
        return hs__cfg_err(c, where, "%s.from: '%s' is not a sensor reading (accel_x .. torque_z)",
                           path, hs__names_quantity[b->ref.quantity]);
    return 0;
}

static int tx_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                    const char *path);
static bool is_cyclic(const void *obj)
{
    return ((const struct hs_cfg_tx *)obj)->schedule == HS_CFG_TX_CYCLIC;
}
static const struct hs__cfg_field tx_f[] = {
    NAME("message", struct hs_cfg_tx, message, HS__CS_CIDENT, HS__F_REQUIRED),
    ENUM("schedule", struct hs_cfg_tx, schedule, hs__names_tx_schedule),
    F_("period_s", HS__K_DOUBLE, struct hs_cfg_tx, period_s, .min = 0, .max = 10,
       .flags = HS__F_MIN_OPEN, .emit = is_cyclic),
    NAME("trigger", struct hs_cfg_tx, trigger, HS__CS_CIDENT, 0),
};
STATIC_TABLE(tx_t, tx_f, tx_check);

static int tx_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                    const char *path)
{
    const struct hs_cfg_tx *t = obj;
    bool period = seen_key(&tx_t, seen, "period_s"), trigger = seen_key(&tx_t, seen, "trigger");
    if (t->schedule == HS_CFG_TX_CYCLIC && !period)
        return hs__cfg_err(c, node, "%s: schedule cyclic needs period_s", path);
    if (t->schedule != HS_CFG_TX_CYCLIC && period)
        return hs__cfg_err(c, hs__cfg_child(c, node, "period_s"),
                           "%s.period_s: only for schedule cyclic", path);
    if (t->schedule == HS_CFG_TX_ON_RECEIVE && !trigger)
        return hs__cfg_err(c, node, "%s: schedule on_receive needs trigger (a message name)", path);
    if (t->schedule != HS_CFG_TX_ON_RECEIVE && trigger)
        return hs__cfg_err(c, hs__cfg_child(c, node, "trigger"),
                           "%s.trigger: only for schedule on_receive", path);
    return 0;
}

static const struct hs__cfg_list bindings_l = {
    .elem = &binding_t,
    .elem_size = sizeof(struct hs_cfg_binding),
    .max = HS_CFG_MAX_BINDINGS,
    .src_off = offsetof(struct hs_cfg_binding, src),
    .pooled = true,
    .array_off = offsetof(struct hs_config, can.bindings),
    .count_off = offsetof(struct hs_config, can.nbindings),
    .first_off = offsetof(struct hs_cfg_dbc, binding_first),
    .slice_off = offsetof(struct hs_cfg_dbc, binding_count),
    .template_off = -1,
};

static const struct hs__cfg_list tx_l = {
    .elem = &tx_t,
    .elem_size = sizeof(struct hs_cfg_tx),
    .max = HS_CFG_MAX_TX,
    .src_off = offsetof(struct hs_cfg_tx, src),
    .pooled = true,
    .array_off = offsetof(struct hs_config, can.tx),
    .count_off = offsetof(struct hs_config, can.ntx),
    .first_off = offsetof(struct hs_cfg_dbc, tx_first),
    .slice_off = offsetof(struct hs_cfg_dbc, tx_count),
    .template_off = -1,
};

static const struct hs__cfg_field dbc_f[] = {
    PATH("file", struct hs_cfg_dbc, file, HS__F_REQUIRED),
    F_("id_offset", HS__K_U32, struct hs_cfg_dbc, id_offset, .min = 0, .max = 0x1fffffff,
       .flags = HS__F_HEX),
    LIST("bindings", bindings_l),
    LIST("tx", tx_l),
};
STATIC_TABLE(dbc_t, dbc_f, NULL);

static int node_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                      const char *path);
static bool is_mit(const void *obj)
{
    return ((const struct hs_cfg_node *)obj)->protocol == HS_CFG_PROTO_MIT;
}
static bool is_odrive(const void *obj)
{
    return ((const struct hs_cfg_node *)obj)->protocol == HS_CFG_PROTO_ODRIVE;
}
static bool is_dbc(const void *obj)
{
    return ((const struct hs_cfg_node *)obj)->protocol == HS_CFG_PROTO_DBC;
}
static bool not_dbc(const void *obj)
{
    return !is_dbc(obj);
}
#define ND struct hs_cfg_node
static const struct hs__cfg_field node_f[] = {
    NAME("name", ND, name, HS__CS_IDENT, HS__F_REQUIRED),
    NAME("bus", ND, bus, HS__CS_IDENT, HS__F_REQUIRED),
    F_("protocol", HS__K_ENUM, ND, protocol, .names = hs__names_protocol, .flags = HS__F_REQUIRED),
    F_("id", HS__K_U32, ND, id, .min = 0, .max = 0x7ff, .flags = HS__F_HEX, .emit = not_dbc),
    NAME("joint", ND, joint, HS__CS_IDENT, 0),
    F_("mit", HS__K_SECTION, ND, mit, .sub = &mit_t, .emit = is_mit),
    F_("odrive", HS__K_SECTION, ND, odrive, .sub = &odrive_t, .emit = is_odrive),
    F_("dbc", HS__K_SECTION, ND, dbc, .sub = &dbc_t, .emit = is_dbc),
};
#undef ND
STATIC_TABLE(node_t, node_f, node_check);

static int node_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                      const char *path)
{
    const struct hs_cfg_node *n = obj;
    const char *proto = hs__names_protocol[n->protocol];
    static const char *const sections[] = {"mit", "odrive", "dbc"};
    for (int p = 0; p < HS_CFG_CAN_PROTOCOL_MAX; p++)
        if (p != (int)n->protocol && seen_key(&node_t, seen, sections[p]))
            return hs__cfg_err(c, hs__cfg_child(c, node, sections[p]),
                               "%s.%s: settings for protocol %s on a %s node", path, sections[p],
                               sections[p], proto);
    bool has_id = seen_key(&node_t, seen, "id"), has_joint = seen_key(&node_t, seen, "joint");
    if (n->protocol == HS_CFG_PROTO_DBC) {
        if (has_id)
            return hs__cfg_err(c, hs__cfg_child(c, node, "id"),
                               "%s.id: a dbc node has no id (use dbc.id_offset)", path);
        if (has_joint)
            return hs__cfg_err(c, hs__cfg_child(c, node, "joint"),
                               "%s.joint: a dbc node names joints in dbc.bindings", path);
        if (!seen_key(&node_t, seen, "dbc"))
            return hs__cfg_err(c, node, "%s: protocol dbc needs a dbc section with file", path);
        return 0;
    }
    if (!has_id)
        return hs__cfg_err(c, node, "%s: missing required key 'id'", path);
    if (!has_joint)
        return hs__cfg_err(c, node, "%s: missing required key 'joint'", path);
    if (n->protocol == HS_CFG_PROTO_ODRIVE && n->id > 63)
        return hs__cfg_err(c, hs__cfg_child(c, node, "id"),
                           "%s.id: %u out of range [0, 63] for protocol odrive", path, n->id);
    return 0;
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
};
TABLE(hs__cfg_root, root_f, NULL);
