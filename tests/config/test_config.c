/* hs_config: full bench round trip, defaults, relative paths, every error class with its exact
 * file:line:column, the model name check and the lookups. */
#include "dbc_config.h"
#include "mit_config.h"
#include "odrive_config.h"
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/config.h"

#ifndef HS_CONFIG_TEST_DATA
#error "HS_CONFIG_TEST_DATA must name tests/config/data"
#endif

static char tmpdir[64];

static void touch(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmpdir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hs-config-test-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    char p[256];
    snprintf(p, sizeof p, "%s/models", tmpdir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/config", tmpdir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/can", tmpdir);
    mkdir(p, 0755);
    touch("models/arm.wrl");
    touch("models/floor.wrl");
    touch("can/board.dbc");
    touch("arm.wrl");
    touch("robot.dbc");
    touch("models/arm2.wrl");
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    (void)state;
    return nftw(tmpdir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static const char BASE[] = "bench:\n"
                           "  name: b\n"
                           "models:\n"
                           "  - name: arm\n"
                           "    file: arm.wrl\n";

/* Loads BASE + extra from a buffer named t.yaml in tmpdir; returns the error and message. */
static int load_extra(const char *extra, const struct hs_config **ret, char *msg, size_t size)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", BASE, extra);
    struct hs_diag d = {0};
    int r = hs_config_load_buffer(text, strlen(text), "t.yaml", tmpdir, ret, &d);
    if (r < 0)
        hs_diag_format(&d, msg, size);
    return r;
}

static void expect_error(const char *extra, const char *expected)
{
    const struct hs_config *cfg = (const struct hs_config *)0x1;
    char msg[1024] = "";
    int r = load_extra(extra, &cfg, msg, sizeof msg);
    if (r == 0)
        fail_msg("loaded, expected: %s", expected);
    assert_int_equal(r, -EINVAL);
    assert_ptr_equal(cfg, (const struct hs_config *)0x1); /* untouched on failure */
    assert_string_equal(msg, expected);
}

static const struct hs_config *load_full(void)
{
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    int r = hs_config_load(HS_CONFIG_TEST_DATA "/full.yaml", &cfg, &d);
    if (r < 0) {
        char msg[1024];
        hs_diag_format(&d, msg, sizeof msg);
        fail_msg("%s", msg);
    }
    return cfg;
}

static void test_full_config_values(void **state)
{
    (void)state;
    const struct hs_config *c = load_full();
    assert_string_equal(c->bench.name, "test-bench_1");
    assert_int_equal(c->nmodels, 2);
    assert_true(c->models[1].is_static);
    assert_string_equal(c->models[0].file, HS_CONFIG_TEST_DATA "/arm.wrl");
    /* a quarter turn about z maps x to y */
    assert_true(fabs(c->models[0].pose.R[3] - 1) < 1e-12 && fabs(c->models[0].pose.R[0]) < 1e-12);
    assert_true(c->models[0].pose.p[2] == 0.5);
    assert_int_equal(c->models[0].initial_count, 2);
    const struct hs_cfg_initial_joint *ij = &c->initial_joints[c->models[0].initial_first + 1];
    assert_string_equal(ij->joint, "ELBOW");
    assert_true(ij->q == -0.6 && ij->dq == 0);
    assert_int_equal(ij->src.line, 14);
    assert_int_equal(ij->src.column, 9);
    /* step_s derived from the tick: 1 ms / 2 substeps */
    assert_true(c->physics.step_s == 0.0005);
    assert_int_equal(c->physics.substeps, 2);
    assert_true(isinf(c->physics.friction));
    assert_int_equal(c->physics.max_contacts, 8);
    assert_true(c->physics.erp == 0.2); /* default */
    assert_int_equal(c->rt.overrun_policy, HS_CFG_OVERRUN_CATCH_UP);
    assert_int_equal(c->rt.overrun_leaky.action, HS_CFG_LEAKY_STOP);
    assert_int_equal(c->rt.clock.mode, HS_CLOCK_LOCKSTEP);
    assert_true(c->rt.clock.lockstep_timeout_s == 2.5);
    assert_int_equal(c->rt.clock.on_timeout, HS_LOCKSTEP_STOP);
    assert_int_equal(c->controller.type, HS_CFG_CONTROLLER_TRAJECTORY);
    /* per-joint entries start from the section defaults */
    const struct hs_cfg_gains *g = hs_config_gains(c, "ELBOW");
    assert_true(g->kp == 20 && g->kd == 1);
    assert_true(hs_config_gains(c, "NOPE") == &c->controller.defaults);
    const struct hs_cfg_actuator *sh = hs_config_actuator(c, "SHOULDER");
    assert_true(sh->gear_ratio == 9 && sh->torque_limit_nm == 40);
    assert_int_equal(sh->modes,
                     HS_CFG_MODE_BIT(HS_CFG_MODE_POSITION) | HS_CFG_MODE_BIT(HS_CFG_MODE_TORQUE));
    assert_int_equal(sh->safe_behaviour, HS_CFG_SAFE_HOLD);
    const struct hs_cfg_actuator *el = hs_config_actuator(c, "ELBOW");
    assert_true(isnan(el->gear_ratio) && el->velocity_limit == 10);
    const struct hs_cfg_encoder *enc = hs_config_encoder(c, "ELBOW");
    assert_int_equal(enc->counter_bits, 16);
    assert_int_equal(enc->zero_offset_counts, -100);
    assert_int_equal(enc->mode, HS_CFG_ENCODER_INCREMENTAL);
    assert_int_equal(c->sensors.nimus, 1);
    assert_true(c->sensors.imus[0].accel_bias[0] == 0.01);
    assert_true(c->sensors.noise_seed == 42);
    assert_int_equal(c->can.nbuses, 2);
    assert_int_equal(c->can.nodes[1].bus_index, 1);
    assert_int_equal(c->can.nodes[0].id, 2);
    assert_true(hs_cfg_mit(&c->can.nodes[0])->t_max == 12 &&
                hs_cfg_mit(&c->can.nodes[0])->p_max == 12.5);
    assert_int_equal(hs_cfg_dbc(&c->can.nodes[1])->binding_count, 3);
    const struct hs_cfg_binding *b =
        &c->can.bindings[hs_cfg_dbc(&c->can.nodes[1])->binding_first + 2];
    assert_int_equal(b->dir, HS_CFG_BIND_FROM);
    assert_int_equal(b->ref.kind, HS_CFG_REF_SENSOR);
    assert_string_equal(b->ref.name, "torso");
    assert_int_equal(b->ref.quantity, HS_CFG_Q_ACCEL_X);
    assert_int_equal(hs_cfg_dbc(&c->can.nodes[1])->tx_count, 2);
    assert_int_equal(hs_config_joint_source(c, "ELBOW"), HS_CFG_SOURCE_CAN);
    assert_int_equal(hs_config_joint_source(c, "SHOULDER"), HS_CFG_SOURCE_CAN); /* dbc to: */
    assert_int_equal(hs_config_joint_source(c, "WRIST"), HS_CFG_SOURCE_CONTROLLER);
    assert_int_equal(c->shm.mode, 0640);
    assert_true(c->trace.enabled);
    hs_config_free(c);
}

static char *write_to_string(const struct hs_config *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(hs_config_write(c, f), 0);
    fclose(f);
    return buf;
}

/* write(load(write(config))) == write(config), and the reloaded values equal the originals */
static void test_round_trip(void **state)
{
    (void)state;
    const struct hs_config *a = load_full();
    char *text_a = write_to_string(a);
    const struct hs_config *b = NULL;
    struct hs_diag d = {0};
    int r = hs_config_load_buffer(text_a, strlen(text_a), "resolved.yaml", NULL, &b, &d);
    if (r < 0) {
        char msg[1024];
        hs_diag_format(&d, msg, sizeof msg);
        fail_msg("%s\n%s", msg, text_a);
    }
    char *text_b = write_to_string(b);
    /* the first line names the source file */
    assert_string_equal(strchr(text_a, '\n'), strchr(text_b, '\n'));
    assert_memory_equal(&a->physics, &b->physics, sizeof a->physics);
    assert_memory_equal(&a->rt, &b->rt, sizeof a->rt);
    assert_memory_equal(&a->budgets, &b->budgets, sizeof a->budgets);
    assert_true(a->can.nbindings == b->can.nbindings && a->can.ntx == b->can.ntx);
    assert_true(a->sensors.imus[0].gyro_lsb == b->sensors.imus[0].gyro_lsb);
    assert_true(a->models[0].rotation[3] == b->models[0].rotation[3]);
    assert_string_equal(hs_cfg_dbc(&a->can.nodes[1])->file, hs_cfg_dbc(&b->can.nodes[1])->file);
    free(text_a);
    free(text_b);
    hs_config_free(a);
    hs_config_free(b);
}

static void test_defaults(void **state)
{
    (void)state;
    const struct hs_config *c = NULL;
    char msg[512];
    assert_int_equal(load_extra("", &c, msg, sizeof msg), 0);
    struct hs_config d;
    hs_config_defaults(&d);
    assert_true(c->physics.step_s == 1e-3 && d.physics.step_s == 1e-3);
    assert_true(c->physics.gravity[2] == -9.80665);
    assert_int_equal(c->physics.quick_iterations, 12);
    assert_true(c->physics.contact_damping_n_s_m == 5e3);
    assert_true(c->physics.quick_w == 1.2);
    assert_int_equal(c->physics.max_contacts, 4);
    assert_true(c->physics.contact_cfm == 1e-5 && c->physics.surface_layer == 1e-4);
    assert_int_equal(c->rt.period_ns, 1000000);
    assert_int_equal(c->rt.priority, d.rt.priority);
    assert_int_equal(c->rt.cpu, -1);
    assert_int_equal(c->rt.clock.mode, HS_CLOCK_WALL);
    assert_true(c->rt.clock.lockstep_timeout_s == 1.0);
    assert_int_equal(c->rt.clock.on_timeout, HS_LOCKSTEP_HOLD);
    assert_int_equal(c->controller.type, HS_CFG_CONTROLLER_PD_HOLD);
    assert_true(isnan(c->actuators.defaults.torque_limit_nm)); /* derived per joint */
    assert_true(isnan(c->actuators.defaults.gear_ratio));
    assert_int_equal(c->sensors.encoder_defaults.counter_bits, 32);
    assert_int_equal(c->shm.mode, 0660);
    assert_false(c->shm.enabled);
    assert_int_equal(c->can.nbuses, 0);
    assert_int_equal(c->models[0].initial_count, 0);
    /* a changed tick re-derives the physics step */
    hs_config_free(c);
    assert_int_equal(
        load_extra("rt:\n  period_ns: 2000000\nphysics:\n  substeps: 4\n", &c, msg, sizeof msg), 0);
    assert_true(c->physics.step_s == 0.0005);
    hs_config_free(c);
}

static void test_relative_paths(void **state)
{
    (void)state;
    char path[256], expect[256];
    snprintf(path, sizeof path, "%s/bench.yaml", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("bench: {name: rel}\nmodels:\n  - {name: arm, file: models/arm2.wrl}\n", f);
    fclose(f);
    /* load by a relative name from another working directory */
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir("/tmp"), 0);
    const struct hs_config *c = NULL;
    struct hs_diag d = {0};
    int r = hs_config_load(path + strlen("/tmp/"), &c, &d);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(r, 0);
    char *real_tmp = realpath(tmpdir, NULL);
    snprintf(expect, sizeof expect, "%s/models/arm2.wrl", real_tmp);
    assert_string_equal(c->models[0].file, expect);
    hs_config_free(c);
    /* a buffer without a base directory cannot resolve relative paths */
    const char *text = "bench: {name: rel}\nmodels:\n  - {name: arm, file: arm.wrl}\n";
    c = (const struct hs_config *)0x1;
    r = hs_config_load_buffer(text, strlen(text), "buf.yaml", NULL, &c, &d);
    assert_int_equal(r, -EINVAL);
    assert_ptr_equal(c, (const struct hs_config *)0x1);
    char msg[1024];
    hs_diag_format(&d, msg, sizeof msg);
    assert_string_equal(msg, "buf.yaml:3:23: models[0].file: relative path 'arm.wrl' needs a "
                             "config file's directory");
    /* a missing file names the resolved path */
    snprintf(expect, sizeof expect,
             "t.yaml:7:11: models[1].file: cannot use 'nope.wrl' (%s/nope.wrl): No such file or "
             "directory",
             real_tmp);
    expect_error("  - name: other\n    file: nope.wrl\n", expect);
    free(real_tmp);
}

static void test_unknown_key(void **state)
{
    (void)state;
    expect_error("physics:\n  stepsize: 0.001\n", "t.yaml:7:3: physics: unknown key 'stepsize'");
    expect_error("colour: red\n", "t.yaml:6:1: top level: unknown key 'colour'");
    expect_error("can:\n  nodes:\n    - {name: n, bus: b, protocol: mit, id: 1, joint: J, "
                 "kp: 3}\n",
                 "t.yaml:8:57: can.nodes[0]: unknown key 'kp'");
    /* A typo names the key it was meant to be (issue 31); 'colour' above is too far from any. */
    expect_error("physics:\n  iteratons: 12\n",
                 "t.yaml:7:3: physics: unknown key 'iteratons' (did you mean 'iterations'?)");
    expect_error("physics:\n  solver: quik\n",
                 "t.yaml:7:11: physics.solver: 'quik' is not one of: quick, standard (did you mean "
                 "'quick'?)");
}

static void test_wrong_type(void **state)
{
    (void)state;
    expect_error("physics:\n  substeps: two\n",
                 "t.yaml:7:13: physics.substeps: expected an unsigned integer, got 'two'");
    expect_error("rt: 5\n", "t.yaml:6:5: rt: expected a mapping, got '5'");
    expect_error("physics:\n  gravity: [0, 0]\n",
                 "t.yaml:7:12: physics.gravity: expected a list of 3 numbers, got 2");
    expect_error("trace:\n  enabled: yes\n",
                 "t.yaml:7:12: trace.enabled: expected true or false, got 'yes'");
    expect_error("physics:\n  erp: \"0.2\"\n",
                 "t.yaml:7:8: physics.erp: expected a number, got '0.2'");
    expect_error("physics:\n  erp:\n", "t.yaml:7:7: physics.erp: expected a number, got null");
}

static void test_out_of_range(void **state)
{
    (void)state;
    expect_error("physics:\n  step_s: 0.5\n",
                 "t.yaml:7:11: physics.step_s: 0.5 out of range [1e-05, 0.1]");
    expect_error("rt:\n  priority: 100\n", "t.yaml:7:13: rt.priority: 100 out of range [1, 99]");
    expect_error("rt:\n  clock: {lockstep_timeout_s: 0}\n",
                 "t.yaml:7:31: rt.clock.lockstep_timeout_s: 0 out of range [0.001, 3600]");
    expect_error("actuators:\n  joints:\n    J1: {gear_efficiency: 0}\n",
                 "t.yaml:8:27: actuators.joints.J1.gear_efficiency: 0 out of range (0, 1]");
    expect_error("physics:\n  gravity: [0, 0, -2000]\n",
                 "t.yaml:7:19: physics.gravity[2]: -2000 out of range [-1000, 1000]");
    expect_error("physics:\n  erp: .inf\n",
                 "t.yaml:7:8: physics.erp: .inf is not allowed here (finite number expected)");
}

static void test_missing_required(void **state)
{
    (void)state;
    const char *text = "bench:\n  name: b\nmodels:\n  - name: arm\n";
    const struct hs_config *c = (const struct hs_config *)0x1;
    struct hs_diag d = {0};
    assert_int_equal(hs_config_load_buffer(text, strlen(text), "t.yaml", tmpdir, &c, &d), -EINVAL);
    char msg[1024];
    hs_diag_format(&d, msg, sizeof msg);
    assert_string_equal(msg, "t.yaml:4:5: models[0]: missing required key 'file'");
    text = "models: []\nbench: {}\n";
    assert_int_equal(hs_config_load_buffer(text, strlen(text), "t.yaml", tmpdir, &c, &d), -EINVAL);
    hs_diag_format(&d, msg, sizeof msg);
    assert_string_equal(msg, "t.yaml:2:8: bench: missing required key 'name'");
    expect_error("can:\n  nodes:\n    - {name: n, bus: b, protocol: mit, joint: J}\n",
                 "t.yaml:8:7: can.nodes[0]: missing required key 'id'");
}

static void test_duplicate_key(void **state)
{
    (void)state;
    expect_error("rt:\n  priority: 10\n  priority: 20\n",
                 "t.yaml:8:3: rt: duplicate key 'priority'");
    expect_error("actuators:\n  joints:\n    J1: {}\n    J1: {}\n",
                 "t.yaml:9:5: actuators.joints: duplicate key 'J1'");
    expect_error("  - name: arm\n    file: arm.wrl\n",
                 "t.yaml:6:11: models[1].name: 'arm' is already the name of models[0]");
}

static void test_bad_enum(void **state)
{
    (void)state;
    expect_error("physics:\n  solver: fast\n",
                 "t.yaml:7:11: physics.solver: 'fast' is not one of: quick, standard");
    expect_error("actuators:\n  defaults:\n    modes: [torque, pwm]\n",
                 "t.yaml:8:21: actuators.defaults.modes[1]: 'pwm' is not one of: torque, "
                 "current, velocity, position");
    expect_error("rt:\n  clock: {mode: free}\n",
                 "t.yaml:7:17: rt.clock.mode: 'free' is not one of: wall, lockstep, sync");
    expect_error("rt:\n  clock:\n    on_timeout: wait\n",
                 "t.yaml:8:17: rt.clock.on_timeout: 'wait' is not one of: hold, step, stop");
}

static const char CAN_BUS[] = "can:\n"
                              "  buses:\n"
                              "    - {name: main, interface: vcan0}\n"
                              "  nodes:\n";

static void expect_can_error(const char *nodes, const char *expected)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", CAN_BUS, nodes);
    expect_error(text, expected);
}

/* Keys renamed to carry their unit (config/README.md, "Units in names") are refused where they
 * stand, naming the new key, in the core schema and in protocol sections alike. */
static void test_renamed_keys_refused(void **state)
{
    (void)state;
    expect_error("can:\n  buses:\n    - {name: main, interface: vcan0, bitrate: 500000}\n",
                 "t.yaml:8:38: can.buses[0].bitrate: renamed to 'bitrate_bps' (units in names: "
                 "config/README.md)");
    expect_can_error("    - {name: o1, bus: main, protocol: odrive, id: 1, joint: J1,\n"
                     "       odrive: {vel_limit: 20}}\n",
                     "t.yaml:11:17: can.nodes[0].odrive.vel_limit: renamed to 'vel_limit_turn_s' "
                     "(units in names: config/README.md)");
    expect_can_error("    - {name: o1, bus: main, protocol: odrive, id: 1, joint: J1,\n"
                     "       odrive: {pos_gain: 20, vel_gain: 0.2}}\n",
                     "t.yaml:11:31: can.nodes[0].odrive.vel_gain: renamed to 'vel_gain_nm_s_turn' "
                     "(units in names: config/README.md)");
    expect_can_error("    - {name: o1, bus: main, protocol: odrive, id: 1, joint: J1,\n"
                     "       odrive: {vel_integrator_gain: 0}}\n",
                     "t.yaml:11:17: can.nodes[0].odrive.vel_integrator_gain: renamed to "
                     "'vel_integrator_gain_nm_turn' (units in names: config/README.md)");
    expect_error("can:\n  buses:\n    - {name: main, interface: vcan0, fd: true}\n  nodes:\n"
                 "    - {name: m1, bus: main, protocol: moteus, id: 1, joint: J1,\n"
                 "       moteus: {kp_nm_rev: 4, kd: 0.1}}\n",
                 "t.yaml:11:31: can.nodes[0].moteus.kd: renamed to 'kd_nm_s_rev' (units in names: "
                 "config/README.md)");
    /* the new names load, and a renamed key is never written back */
    const struct hs_config *cfg = NULL;
    char msg[1024] = "";
    if (load_extra("can:\n  buses:\n    - {name: main, interface: vcan0, bitrate_bps: 500000}\n",
                   &cfg, msg, sizeof msg) < 0)
        fail_msg("%s", msg);
    assert_int_equal(cfg->can.buses[0].bitrate_bps, 500000);
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    assert_non_null(f);
    assert_int_equal(hs_config_write(cfg, f), 0);
    fclose(f);
    assert_non_null(strstr(out, "bitrate_bps: 500000"));
    assert_null(strstr(out, "bitrate:"));
    free(out);
    hs_config_free(cfg);
}

/* sensor.<name>.<value>: a value name the config does not know (the sensor kind declares it,
 * checked by the bench at attach) is kept as written and written back; a joint takes only its
 * listed quantities; the IMU and F/T names still parse as their quantities. */
static void test_sensor_value_refs(void **state)
{
    (void)state;
    const char *node = "    - name: d\n      bus: main\n      protocol: dbc\n      dbc:\n"
                       "        file: robot.dbc\n        bindings:\n"
                       "          - {message: M, signal: S, from: sensor.LIDAR.r3}\n"
                       "          - {message: M, signal: T, from: sensor.WRIST.force_x}\n"
                       "        tx:\n          - {message: M, period_s: 0.01}\n";
    char text[2048], msg[1024] = "";
    snprintf(text, sizeof text, "%s%s", CAN_BUS, node);
    const struct hs_config *cfg = NULL;
    if (load_extra(text, &cfg, msg, sizeof msg) < 0)
        fail_msg("%s", msg);
    const struct hs_cfg_binding *b =
        &cfg->can.bindings[hs_cfg_dbc(&cfg->can.nodes[0])->binding_first];
    assert_int_equal(b[0].ref.kind, HS_CFG_REF_SENSOR);
    assert_string_equal(b[0].ref.name, "LIDAR");
    assert_int_equal(b[0].ref.quantity, HS_CFG_Q_SENSOR_VALUE);
    assert_string_equal(b[0].ref.value, "r3");
    assert_int_equal(b[1].ref.quantity, HS_CFG_Q_FORCE_X);
    assert_string_equal(b[1].ref.value, "");
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    assert_non_null(f);
    assert_int_equal(hs_config_write(cfg, f), 0);
    fclose(f);
    assert_non_null(strstr(out, "sensor.LIDAR.r3"));
    assert_non_null(strstr(out, "sensor.WRIST.force_x"));
    free(out);
    hs_config_free(cfg);
    const char *bad[] = {"joint.J1.r3", "sensor.LIDAR.<value>", "sensor.LIDAR.r 3"};
    for (int i = 0; i < 3; i++) {
        snprintf(text, sizeof text,
                 "%s    - name: d\n      bus: main\n      protocol: dbc\n      dbc:\n"
                 "        file: robot.dbc\n        bindings:\n"
                 "          - {message: M, signal: S, from: '%s'}\n"
                 "        tx:\n          - {message: M, period_s: 0.01}\n",
                 CAN_BUS, bad[i]);
        cfg = NULL;
        assert_true(load_extra(text, &cfg, msg, sizeof msg) < 0);
        assert_non_null(strstr(msg, "is not joint.<name>.<quantity> or sensor.<name>.<quantity>"));
    }
}

/* The ODrive controller's keys: firmware 0.5.x defaults when absent, the given values when set,
 * and a range error naming the key. */
static void test_odrive_controller_keys(void **state)
{
    (void)state;
    char text[2048];
    snprintf(
        text, sizeof text, "%s%s", CAN_BUS,
        "    - {name: o1, bus: main, protocol: odrive, id: 1, joint: J1}\n"
        "    - {name: o2, bus: main, protocol: odrive, id: 2, joint: J2,\n"
        "       odrive: {pos_gain: 35, vel_gain_nm_s_turn: 0.5, vel_integrator_gain_nm_turn: 0,\n"
        "                vel_limit_turn_s: 20, vel_limit_tolerance: 0, enable_vel_limit: false,\n"
        "                enable_torque_mode_vel_limit: false}}\n");
    const struct hs_config *cfg = NULL;
    char msg[1024] = "";
    if (load_extra(text, &cfg, msg, sizeof msg) < 0)
        fail_msg("%s", msg);
    const struct hs_cfg_odrive *a = hs_cfg_odrive(&cfg->can.nodes[0]),
                               *b = hs_cfg_odrive(&cfg->can.nodes[1]);
    assert_true(a->pos_gain == 20.0 && a->vel_gain_nm_s_turn == 1.0 / 6.0);
    assert_true(a->vel_integrator_gain_nm_turn == 2.0 / 6.0 && a->vel_limit_turn_s == 2.0);
    assert_true(a->vel_limit_tolerance == 1.2);
    assert_true(a->enable_vel_limit && a->enable_torque_mode_vel_limit);
    assert_true(b->pos_gain == 35 && b->vel_gain_nm_s_turn == 0.5 &&
                b->vel_integrator_gain_nm_turn == 0);
    assert_true(b->vel_limit_turn_s == 20 && b->vel_limit_tolerance == 0);
    assert_false(b->enable_vel_limit || b->enable_torque_mode_vel_limit);
    hs_config_free(cfg);
    expect_can_error("    - {name: o1, bus: main, protocol: odrive, id: 1, joint: J1,\n"
                     "       odrive: {vel_limit_turn_s: -1}}\n",
                     "t.yaml:11:35: can.nodes[0].odrive.vel_limit_turn_s: -1 out of range [0, "
                     "1e+06]");
}

static void test_cross_field(void **state)
{
    (void)state;
    expect_can_error("    - {name: m1, bus: mian, protocol: mit, id: 1, joint: J1}\n",
                     "t.yaml:10:23: can.nodes[0].bus: 'mian' names no bus in can.buses");
    /* ODrive node 1 owns IDs 32..63, so an MIT motor at 33 clashes */
    expect_can_error("    - {name: o1, bus: main, protocol: odrive, id: 1, joint: J1}\n"
                     "    - {name: m1, bus: main, protocol: mit, id: 33, joint: J2}\n",
                     "t.yaml:11:48: can.nodes[1].id: id 33 clashes with can.nodes[0] ('o1') on "
                     "bus 'main'");
    expect_can_error("    - {name: m1, bus: main, protocol: mit, id: 1, joint: J1}\n"
                     "    - {name: m2, bus: main, protocol: mit, id: 2, joint: J1}\n",
                     "t.yaml:11:58: can.nodes[1].joint: joint 'J1' is already driven by "
                     "can.nodes[0] ('m1')");
    expect_can_error("    - {name: m1, bus: main, protocol: mit, id: 1, joint: J1, odrive: {}}\n",
                     "t.yaml:10:70: can.nodes[0].odrive: settings for protocol odrive on a mit "
                     "node");
    expect_can_error("    - name: d\n      bus: main\n      protocol: dbc\n      dbc:\n"
                     "        file: robot.dbc\n        bindings:\n"
                     "          - {message: M, signal: S, to: joint.J.position, from: "
                     "joint.J.position}\n",
                     "t.yaml:16:13: can.nodes[0].dbc.bindings[0]: needs exactly one of 'to' "
                     "(received signal drives a command) or 'from' (state fills a sent signal)");
    expect_can_error("    - name: d\n      bus: main\n      protocol: dbc\n      dbc:\n"
                     "        file: robot.dbc\n        bindings:\n"
                     "          - {message: M, signal: S, from: joint.J.position}\n",
                     "t.yaml:16:23: can.nodes[0].dbc.bindings[0].message: 'M' has a from: "
                     "binding but is not in dbc.tx");
    expect_error("rt:\n  period_ns: 2000000\nphysics:\n  step_s: 0.001\n",
                 "t.yaml:9:11: physics.step_s: 0.001 s x 1 substeps = 1000000 ns differs from "
                 "rt.period_ns 2000000 (leave step_s out to derive it)");
    expect_error("actuators:\n  joints:\n    J1: {source: shm}\n",
                 "t.yaml:8:18: actuators.joints.J1.source: shm, but shm.enabled is false");
    expect_error("actuators:\n  joints:\n    J1: {source: can}\n",
                 "t.yaml:8:18: actuators.joints.J1.source: can, but no CAN node drives joint "
                 "'J1'");
    expect_error("sensors:\n  imu:\n    body: {accel: a, rate_hz: 300}\n",
                 "t.yaml:8:31: sensors.imu.body.rate_hz: 300 Hz does not divide the tick rate "
                 "1000 Hz");
    expect_error("controller:\n  type: trajectory\n",
                 "t.yaml:7:9: controller.type: type trajectory needs controller.trajectory with "
                 "a joint");
    expect_error("  - {name: floor, file: arm.wrl, static: true, initial: {joints: {J: {q: 1}}}}\n",
                 "t.yaml:6:57: models[1].initial: a static model has no joints to set");
    const char *text = "bench: {name: b}\nmodels:\n  - {name: floor, file: arm.wrl, static: "
                       "true}\n";
    const struct hs_config *c = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_config_load_buffer(text, strlen(text), "t.yaml", tmpdir, &c, &d), -EINVAL);
    char msg[512];
    hs_diag_format(&d, msg, sizeof msg);
    assert_string_equal(msg, "t.yaml:3:3: models: at least one model must be non-static (a "
                             "robot)");
}

/* rt.clock.sync: defaults, a bus by name, and each rule with the place it names. */
static void test_clock_sync(void **state)
{
    (void)state;
    const struct hs_config *c = NULL;
    char msg[1024] = "";
    assert_int_equal(load_extra("", &c, msg, sizeof msg), 0);
    const struct hs_cfg_clock_sync *s = &c->rt.clock.sync;
    assert_int_equal(s->source, HS_CFG_SYNC_NONE);
    assert_int_equal(s->can_id, 0x080);
    assert_int_equal(s->max_slew_ppm, 10000);
    assert_int_equal(s->lock_ticks, 16);
    assert_int_equal(s->timeout_periods, 10);
    assert_true(s->lead_s == 0 && s->lock_window_s == 0);
    hs_config_free(c);
    const char *can = "can:\n  buses:\n    - {name: a, interface: vcan0}\n"
                      "    - {name: b, interface: vcan1}\n";
    char text[1024];
    snprintf(text, sizeof text,
             "rt:\n  clock: {mode: sync, sync: {source: can, bus: b, can_id: 0x1A0, "
             "lead_s: 0.0002}}\n%s",
             can);
    assert_int_equal(load_extra(text, &c, msg, sizeof msg), 0);
    assert_int_equal(c->rt.clock.sync.bus_index, 1);
    assert_int_equal(c->rt.clock.sync.can_id, 0x1A0);
    hs_config_free(c);
    snprintf(text, sizeof text, "rt:\n  clock: {sync: {source: can, bus: c}}\n%s", can);
    expect_error(text, "t.yaml:7:36: rt.clock.sync.bus: 'c' names no bus in can.buses");
    expect_error("rt:\n  clock: {sync: {source: can}}\n",
                 "t.yaml:7:26: rt.clock.sync.source: can needs a bus in can.buses");
    expect_error("rt:\n  clock: {sync: {lead_s: 0.001}}\n",
                 "t.yaml:7:26: rt.clock.sync.lead_s: 0.001 s must be below the period (0.001 s)");
    expect_error("rt:\n  clock: {sync: {lock_window_s: 0.0006}}\n",
                 "t.yaml:7:33: rt.clock.sync.lock_window_s: 0.0006 s must be at most half the "
                 "period (0.0005 s)");
    expect_error("rt:\n  clock: {sync: {can_id: 0x800}}\n",
                 "t.yaml:7:26: rt.clock.sync.can_id: 0x800 out of range [0, 2047]");
    expect_error("rt:\n  clock: {sync: {source: sync}}\n",
                 "t.yaml:7:26: rt.clock.sync.source: 'sync' is not one of: none, can, shm");
}

static void test_names_and_mode(void **state)
{
    (void)state;
    expect_error("shm:\n  enabled: true\n  mode: 0666\n",
                 "t.yaml:8:9: shm.mode: 0666 is world-writable; use at most 0664 or 0660");
    expect_error("shm:\n  mode: 660\n",
                 "t.yaml:7:9: shm.mode: expected an octal mode such as 0660, got '660'");
    expect_error("actuators:\n  joints:\n    J.1: {}\n",
                 "t.yaml:8:5: actuators.joints key: 'J.1' is not a valid name ([A-Za-z0-9_-], "
                 "not empty)");
    const char *text = "bench: {name: Bench}\nmodels: []\n";
    const struct hs_config *c = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_config_load_buffer(text, strlen(text), "t.yaml", tmpdir, &c, &d), -EINVAL);
    char msg[512];
    hs_diag_format(&d, msg, sizeof msg);
    assert_string_equal(msg, "t.yaml:1:15: bench.name: 'Bench' is not a valid name ([a-z0-9_-], "
                             "not empty)");
}

static void test_yaml_level_errors(void **state)
{
    (void)state;
    expect_error("rt: [1, 2\n", "t.yaml:7:1: YAML syntax error: did not find expected ',' or ']' "
                                "while parsing a flow sequence");
    expect_error("---\nbench: {name: c}\n",
                 "t.yaml:7:1: a second YAML document; one file describes one bench");
    const struct hs_config *c = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_config_load_buffer("", 0, "e.yaml", tmpdir, &c, &d), -EINVAL);
    assert_string_equal(d.msg, "empty config (needs bench and models)");
    assert_int_equal(hs_config_load("/nonexistent/x.yaml", &c, &d), -ENOENT);
}

/* Fake models built from struct fields only. */
static void test_check_against_models(void **state)
{
    (void)state;
    struct hs_link links[3] = {0};
    snprintf(links[0].name, sizeof links[0].name, "ROOT");
    links[0].joint_type = HS_JOINT_FREE;
    snprintf(links[1].name, sizeof links[1].name, "SHOULDER");
    links[1].joint_type = HS_JOINT_ROTATE;
    snprintf(links[2].name, sizeof links[2].name, "ELBOW");
    links[2].joint_type = HS_JOINT_ROTATE;
    struct hs_sensor sensors[3] = {0};
    snprintf(sensors[0].name, sizeof sensors[0].name, "gsensor");
    sensors[0].type = HS_SENSOR_ACCEL;
    snprintf(sensors[1].name, sizeof sensors[1].name, "gyrometer");
    sensors[1].type = HS_SENSOR_GYRO;
    snprintf(sensors[2].name, sizeof sensors[2].name, "wrist_ft");
    sensors[2].type = HS_SENSOR_FORCE;
    struct hs_model arm = {.links = links, .nlinks = 3, .sensors = sensors, .nsensors = 3};
    struct hs_model floor_model = {0};
    const struct hs_model *models[] = {&arm, &floor_model};

    const struct hs_config *c = load_full();
    struct hs_diag d = {0};
    assert_int_equal(hs_config_check_against_models(c, models, 2, &d), 0);

    /* rename the elbow: every reference to it now fails, the first with its position */
    snprintf(links[2].name, sizeof links[2].name, "ELBOW2");
    assert_int_equal(hs_config_check_against_models(c, models, 2, &d), -EINVAL);
    char msg[1024];
    hs_diag_format(&d, msg, sizeof msg);
    assert_string_equal(msg, HS_CONFIG_TEST_DATA
                        "/full.yaml:14:9: models[0].initial.joints.ELBOW: no joint 'ELBOW' in "
                        "model 'arm'");
    snprintf(links[2].name, sizeof links[2].name, "ELBOW");
    /* a force sensor that is not one */
    sensors[2].type = HS_SENSOR_ACCEL;
    assert_int_equal(hs_config_check_against_models(c, models, 2, &d), -EINVAL);
    hs_diag_format(&d, msg, sizeof msg);
    assert_string_equal(msg, HS_CONFIG_TEST_DATA "/full.yaml:67:5: sensors.force.wrist_ft: no "
                                                 "force sensor 'wrist_ft' in the models");
    sensors[2].type = HS_SENSOR_FORCE;
    /* the root's free joint is not something an actuator can drive */
    links[0].joint_type = HS_JOINT_ROTATE;
    links[1].joint_type = HS_JOINT_FIXED;
    assert_int_equal(hs_config_check_against_models(c, models, 2, &d), -EINVAL);
    hs_diag_format(&d, msg, sizeof msg);
    assert_string_equal(msg, HS_CONFIG_TEST_DATA
                        "/full.yaml:13:9: models[0].initial.joints.SHOULDER: joint 'SHOULDER' is "
                        "fixed, not a rotate or slide joint");
    assert_int_equal(hs_config_check_against_models(c, models, 1, &d), -EINVAL);
    hs_config_free(c);
    hs_config_free(NULL);
}

/* Every ```yaml example in config/README.md is a valid bench (run from config/, with the
 * ../models and ../can files it names). */
static void test_readme_examples(void **state)
{
    (void)state;
    FILE *f = fopen(HS_CONFIG_README, "r");
    assert_non_null(f);
    static char text[1 << 18];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    assert_true(n < sizeof text - 1); /* the whole file, or a late example would go unchecked */
    text[n] = 0;
    int examples = 0;
    for (char *p = text; (p = strstr(p, "```yaml\n"));) {
        p += strlen("```yaml\n");
        char *end = strstr(p, "```");
        assert_non_null(end);
        char path[256];
        snprintf(path, sizeof path, "%s/config/example%d.yaml", tmpdir, examples++);
        FILE *out = fopen(path, "w");
        assert_non_null(out);
        fwrite(p, 1, (size_t)(end - p), out);
        fclose(out);
        const struct hs_config *c = NULL;
        struct hs_diag d = {0};
        if (hs_config_load(path, &c, &d) < 0) {
            char msg[1024];
            hs_diag_format(&d, msg, sizeof msg);
            fail_msg("README example %d: %s", examples, msg);
        }
        hs_config_free(c);
        p = end + 3;
    }
    assert_true(examples >= 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_config_values),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_relative_paths),
        cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_wrong_type),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_missing_required),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_bad_enum),
        cmocka_unit_test(test_cross_field),
        cmocka_unit_test(test_clock_sync),
        cmocka_unit_test(test_names_and_mode),
        cmocka_unit_test(test_odrive_controller_keys),
        cmocka_unit_test(test_renamed_keys_refused),
        cmocka_unit_test(test_sensor_value_refs),
        cmocka_unit_test(test_yaml_level_errors),
        cmocka_unit_test(test_check_against_models),
        cmocka_unit_test(test_readme_examples),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
