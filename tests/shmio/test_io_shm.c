/* The shm I/O module in process: a bench built from a config buffer (models/arm2.wrl), ticked
 * offline with simulated time, and a libhilsim-client in the same process. Checks the layout
 * (IMU rule, units, timeouts), the command path into the plant's slots (mode mapping, first-seen
 * time, seq only for new commands, refusals), staleness (command timeout, lost client before
 * the command timeout), published readings and encoder unwrapping, and the attach errors. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/bench.h"
#include "hilsim/client.h"
#include "hilsim/io_shm.h"
#include "hilsim/shm_server.h"

#define PERIOD_NS 1000000LL

struct fx {
    char name[64];
    const struct hs_config *cfg;
    struct hs_bench *b;
    struct hs_bench_shm *shm;
    struct hs_client *c;
    int64_t now;
    uint64_t tick;
};

static const char *source_dir(void)
{
    const char *s = getenv("HS_SOURCE_DIR");
    return s ? s : HS_TEST_SOURCE_DIR;
}

/* Builds the bench, attaches the module; returns attach's result (the bench exists either way).
 * extra: YAML appended at the end (sensors, per-joint actuator entries). */
static int make(struct fx *f, const char *tag, double command_timeout_s, double client_timeout_s,
                const char *actuator_joints, const char *sensors, struct hs_diag *d)
{
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "shmio-c%d-%s", (int)getpid(), tag);
    char yaml[4096];
    snprintf(yaml, sizeof yaml,
             "bench:\n  name: %s\n"
             "models:\n  - name: arm\n    file: ../models/arm2.wrl\n"
             "    initial:\n      joints:\n        SHOULDER: {q: 0.3}\n        ELBOW: {q: 0.6}\n"
             "rt:\n  period_ns: %lld\n"
             "controller:\n  type: pd_hold\n  defaults: {kp: 300, kd: 6}\n"
             "actuators:\n  defaults:\n    source: shm\n    command_timeout_s: %g\n"
             "    safe_behaviour: brake\n%s"
             "%s"
             "shm:\n  enabled: true\n  client_timeout_s: %g\n",
             f->name, PERIOD_NS, command_timeout_s, actuator_joints ? actuator_joints : "",
             sensors ? sensors : "", client_timeout_s);
    char base[1024];
    snprintf(base, sizeof base, "%s/config", source_dir());
    struct hs_diag ld = {0};
    int r = hs_config_load_buffer(yaml, strlen(yaml), "test.yaml", base, &f->cfg, &ld);
    if (r < 0)
        fail_msg("config: %s:%d:%d: %s", ld.file, ld.line, ld.column, ld.msg);
    r = hs_bench_create(f->cfg, &f->b, &ld);
    if (r < 0)
        fail_msg("bench: %s", ld.msg);
    return hs_bench_shm_attach(f->b, &f->shm, d);
}

static void attach_client(struct fx *f)
{
    char err[HS_CLIENT_ERRBUF_MIN];
    int r = hs_client_attach(f->name, &f->c, err, sizeof err);
    if (r < 0)
        fail_msg("attach: %s", err);
}

/* A bench of the two-joint arm (command timeout, client timeout in s) with a client attached
 * that owns the commands. */
static void open_claimed(struct fx *f, const char *name, double command_timeout_s,
                         double client_timeout_s)
{
    struct hs_diag d = {0};
    assert_int_equal(make(f, name, command_timeout_s, client_timeout_s, NULL, NULL, &d), 0);
    attach_client(f);
    assert_int_equal(hs_client_claim(f->c, NULL, 0), 0);
}

/* The owner's commands that hold both joints where they start (PD on 0.3 and 0.6 rad). */
static void write_hold(struct fx *f)
{
    struct hs_client_command cmds[2] = {{.mode = HS_SHM_MODE_POSITION_PD, .q = 0.3, .kp = 300},
                                        {.mode = HS_SHM_MODE_POSITION_PD, .q = 0.6, .kp = 100}};
    assert_int_equal(hs_client_write_commands(f->c, cmds, 2), 0);
}

static void tick(struct fx *f)
{
    assert_int_equal(hs_bench_tick(f->b, f->now, f->tick), 0);
    f->now += PERIOD_NS;
    f->tick++;
}

static void done(struct fx *f)
{
    hs_client_detach(f->c);
    hs_bench_destroy(f->b);
    hs_config_free(f->cfg);
}

static const struct hs_joint_command *slot(struct fx *f, uint32_t j)
{
    return hs_bench_joint(f->b, j)->cmd;
}

static struct hs_plant_joint_counters counters(struct fx *f, uint32_t j)
{
    struct hs_plant_joint_counters c;
    hs_plant_joint_counters(hs_bench_joint(f->b, j)->plant, hs_bench_joint(f->b, j)->plant_joint,
                            &c);
    return c;
}

static int sensor_index(const struct hs_bench *b, const char *name)
{
    for (uint32_t i = 0; i < hs_bench_sensor_count(b); i++)
        if (!strcmp(hs_bench_sensor(b, i)->name, name))
            return (int)i;
    fail_msg("no sensor %s", name);
    return -1;
}

static void test_layout_and_imu_pairing(void **state)
{
    (void)state;
    struct fx f;
    struct hs_diag d = {0};
    /* No IMU in the config: the accelerometer pairs with the gyro on its link. */
    assert_int_equal(make(&f, "pair", 0.02, 0.1, NULL, NULL, &d), 0);
    attach_client(&f);
    struct hs_client_info info;
    hs_client_get_info(f.c, &info);
    assert_int_equal(info.joint_count, 2);
    assert_int_equal(info.imu_count, 1);
    assert_int_equal(info.ft_count, 1);
    assert_int_equal(info.tick_period_ns, PERIOD_NS);
    assert_int_equal(info.command_timeout_ns, 20000000);
    assert_int_equal(info.client_timeout_ns, 100000000);
    assert_string_equal(hs_client_joint_name(f.c, 0), "SHOULDER");
    assert_string_equal(hs_client_joint_unit(f.c, 1), "rad");
    uint32_t kind, idx;
    assert_int_equal(hs_client_find_sensor(f.c, "TIP_ACCEL", &kind, &idx), 0);
    assert_int_equal(kind, HS_SHM_KIND_IMU);
    assert_int_equal(hs_client_find_sensor(f.c, "TIP_GYRO", &kind, &idx), -ENOENT);
    assert_int_equal(hs_client_find_sensor(f.c, "WRIST_FT", &kind, &idx), 0);
    assert_int_equal(kind, HS_SHM_KIND_FORCE);

    /* The IMU carries both parts, the F/T force and torque, the joints their readings. */
    for (int k = 0; k < 5; k++)
        tick(&f);
    struct hs_shm_joint_state js[2];
    struct hs_shm_imu_state imu;
    struct hs_shm_ft_state ft;
    struct hs_client_state st = {.joints = js, .imus = &imu, .fts = &ft};
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_int_equal(st.tick, 5);
    assert_true(st.sim_time_s == hs_world_time(hs_bench_world(f.b)));
    for (uint32_t j = 0; j < 2; j++) {
        assert_true(js[j].q == hs_bench_joint_reading(f.b, j)->q);
        assert_true(js[j].tau == hs_bench_joint_reading(f.b, j)->torque);
    }
    for (uint32_t s = 0; s < hs_bench_sensor_count(f.b); s++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(f.b, s);
        const struct hs_sensor_reading *r = hs_bench_sensor_reading(f.b, s);
        const double *got = bs->type == HS_SENSOR_ACCEL  ? imu.accel_mps2
                            : bs->type == HS_SENSOR_GYRO ? imu.gyro_rad_s
                                                         : ft.force_n;
        for (int k = 0; k < 3; k++)
            assert_true(got[k] == r->value[k]);
        if (bs->type == HS_SENSOR_FORCE)
            for (int k = 0; k < 3; k++)
                assert_true(ft.torque_nm[k] == r->torque[k]);
    }
    assert_int_equal(st.stale_joints, 2); /* nobody commands yet */
    done(&f);

    /* A config IMU is published under its own name. */
    assert_int_equal(make(&f, "cfgimu", 0.02, 0.1, NULL,
                          "sensors:\n  imu:\n    tip: {accel: TIP_ACCEL, gyro: TIP_GYRO}\n", &d),
                     0);
    attach_client(&f);
    assert_int_equal(hs_client_find_sensor(f.c, "tip", &kind, &idx), 0);
    assert_int_equal(kind, HS_SHM_KIND_IMU);
    assert_int_equal(hs_client_find_sensor(f.c, "TIP_ACCEL", &kind, &idx), -ENOENT);
    done(&f);

    /* An IMU without a gyro part publishes zero rates next to the accelerometer's reading. */
    assert_int_equal(make(&f, "accelonly", 0.02, 0.1, NULL,
                          "sensors:\n  imu:\n    tip: {accel: TIP_ACCEL}\n", &d),
                     0);
    attach_client(&f);
    for (int k = 0; k < 3; k++)
        tick(&f);
    st = (struct hs_client_state){.imus = &imu};
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    const struct hs_sensor_reading *acc =
        hs_bench_sensor_reading(f.b, (uint32_t)sensor_index(f.b, "TIP_ACCEL"));
    for (int k = 0; k < 3; k++) {
        assert_true(imu.accel_mps2[k] == acc->value[k]);
        assert_true(imu.gyro_rad_s[k] == 0.0);
    }
    assert_true(fabs(imu.accel_mps2[0]) + fabs(imu.accel_mps2[1]) + fabs(imu.accel_mps2[2]) > 1);
    done(&f);
}

static void test_commands_reach_the_slot_and_go_stale(void **state)
{
    (void)state;
    struct fx f;
    open_claimed(&f, "slot", 0.02, 1.0);
    tick(&f);
    assert_int_equal(slot(&f, 0)->seq, 0);
    struct hs_client_command cmds[2] = {
        {.mode = HS_SHM_MODE_POSITION_PD, .q = 0.5, .kp = 100, .kd = 5, .tau_ff = 0.25},
        {.mode = HS_SHM_MODE_POSITION_PD, .q = 0.4, .kp = 80, .kd = 4}};
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), 0);
    int64_t seen_at = f.now;
    tick(&f);
    const struct hs_joint_command *s0 = slot(&f, 0);
    assert_int_equal(s0->mode, HS_JOINT_MODE_POSITION);
    assert_true(s0->q == 0.5 && s0->kp == 100 && s0->kd == 5 && s0->tau_ff == 0.25);
    assert_true(slot(&f, 1)->q == 0.4);
    assert_int_equal(s0->seq, 1);
    assert_int_equal(s0->rx_time_ns, seen_at);
    /* Held: the same command stays, with the time it was first seen and the same seq. */
    for (int k = 0; k < 10; k++) {
        hs_client_heartbeat(f.c);
        tick(&f);
    }
    assert_int_equal(s0->seq, 1);
    assert_int_equal(s0->rx_time_ns, seen_at);
    assert_false(counters(&f, 0).stale);
    /* Past the 20 ms command timeout the plant falls back (counted once per joint) and the
     * published state says so. */
    for (int k = 0; k < 15; k++) {
        hs_client_heartbeat(f.c);
        tick(&f);
    }
    for (uint32_t j = 0; j < 2; j++) {
        assert_true(counters(&f, j).stale);
        assert_int_equal(counters(&f, j).stale_events, 1);
    }
    struct hs_client_state st = {0};
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_int_equal(st.stale_joints, 2);
    /* A new command revives the joint. */
    cmds[0].q = 0.45;
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), 0);
    tick(&f);
    assert_int_equal(s0->seq, 2);
    assert_true(s0->q == 0.45);
    assert_false(counters(&f, 0).stale);
    struct hs_bench_shm_stats stats;
    hs_bench_shm_stats(f.shm, &stats);
    assert_int_equal(stats.commands_applied, 4);
    assert_int_equal(stats.lost_clients, 0);
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_int_equal(st.stale_joints, 0);
    assert_int_equal(st.bench_flags, 0);
    /* The bench's overrun safe hold overrides the client: the state says its commands are not
     * in effect, fresh as they are, and why (the bench flag, not the client's lateness). */
    hs_bench_enter_safe_hold(f.b);
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), 0);
    tick(&f);
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_int_equal(st.stale_joints, 2);
    assert_int_equal(st.client_status, HS_SHM_CLIENT_ACTIVE);
    assert_int_equal(st.bench_flags, HS_SHM_BENCH_SAFE_HOLD);
    done(&f);
}

static void test_lost_client_is_stale_before_the_command_timeout(void **state)
{
    (void)state;
    struct fx f;
    /* Commands would stay valid for 1 s, but a client silent for 50 ms is lost. */
    open_claimed(&f, "lost", 1.0, 0.05);
    struct hs_client_command cmds[2] = {{.mode = HS_SHM_MODE_POSITION_PD, .q = 0.3, .kp = 300},
                                        {.mode = HS_SHM_MODE_POSITION_PD, .q = 0.6, .kp = 100}};
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), 0);
    tick(&f);
    int k = 0;
    struct hs_bench_shm_stats stats;
    for (; k < 200; k++) {
        tick(&f);
        hs_bench_shm_stats(f.shm, &stats);
        if (stats.lost_clients)
            break;
    }
    assert_int_equal(stats.lost_clients, 1);
    assert_in_range(k, 45, 60); /* ~50 ticks of silence */
    tick(&f);
    for (uint32_t j = 0; j < 2; j++) {
        assert_true(counters(&f, j).stale);
        assert_int_equal(counters(&f, j).stale_events, 1);
    }
    hs_bench_shm_stats(f.shm, &stats);
    assert_int_equal(stats.client_status, HS_SHM_CLIENT_LOST);
    /* The client notices, claims again and is obeyed. */
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), -ENOTCONN);
    assert_int_equal(hs_client_claim(f.c, NULL, 0), 0);
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), 0);
    tick(&f);
    assert_false(counters(&f, 0).stale);
    assert_false(counters(&f, 1).stale);
    done(&f);
}

static void test_mode_mapping_and_refusal(void **state)
{
    (void)state;
    struct fx f;
    struct hs_diag d = {0};
    assert_int_equal(make(&f, "modes", 0.5, 1.0,
                          "  joints:\n    ELBOW: {modes: [position, velocity]}\n", NULL, &d),
                     0);
    attach_client(&f);
    assert_int_equal(hs_client_claim(f.c, NULL, 0), 0);
    struct {
        uint32_t joint;
        struct hs_client_command in;
        int refused;
        uint32_t mode;
    } cases[] = {
        {1, {.mode = HS_SHM_MODE_TORQUE, .tau_ff = 1}, 1, 0},
        {1, {.mode = HS_SHM_MODE_CURRENT, .current_a = 1}, 1, 0},
        {1, {.mode = HS_SHM_MODE_VELOCITY, .dq = 0.3, .kd = 2, .kp = 7}, 0, HS_JOINT_MODE_POSITION},
        {1, {.mode = HS_SHM_MODE_VELOCITY, .dq = 0.3}, 0, HS_JOINT_MODE_VELOCITY},
        {1, {.mode = HS_SHM_MODE_BRAKE}, 0, HS_JOINT_MODE_BRAKE},
        {1, {.mode = HS_SHM_MODE_DISABLED}, 0, HS_JOINT_MODE_DISABLED},
        {0, {.mode = HS_SHM_MODE_TORQUE, .tau_ff = 1.5}, 0, HS_JOINT_MODE_TORQUE},
        {0, {.mode = HS_SHM_MODE_CURRENT, .current_a = 2}, 0, HS_JOINT_MODE_CURRENT},
    };
    uint64_t refused = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t seq_before = slot(&f, cases[i].joint)->seq;
        assert_int_equal(hs_client_write_command(f.c, cases[i].joint, &cases[i].in), 0);
        tick(&f);
        const struct hs_joint_command *s = slot(&f, cases[i].joint);
        struct hs_bench_shm_stats stats;
        hs_bench_shm_stats(f.shm, &stats);
        refused += (uint64_t)cases[i].refused;
        assert_int_equal(stats.commands_refused, refused);
        if (cases[i].refused) {
            assert_int_equal(s->seq, seq_before);
            continue;
        }
        assert_int_equal(s->seq, seq_before + 1);
        assert_int_equal(s->mode, cases[i].mode);
        if (cases[i].in.mode == HS_SHM_MODE_VELOCITY && cases[i].in.kd > 0)
            assert_true(s->kp == 0 && s->kd == 2 && s->dq == 0.3); /* kd (dq* - dq) */
        if (cases[i].in.mode == HS_SHM_MODE_VELOCITY && cases[i].in.kd == 0)
            assert_true(s->velocity == 0.3);
        if (cases[i].in.mode == HS_SHM_MODE_TORQUE)
            assert_true(s->tau_ff == 1.5);
        if (cases[i].in.mode == HS_SHM_MODE_CURRENT)
            assert_true(s->current == 2);
    }
    done(&f);
}

static void test_encoder_counts_unwrapped(void **state)
{
    (void)state;
    /* A 12-bit counter wraps every 0.13 rad of joint motion (about 32600 counts/rad); the
     * published count must follow the position linearly over a 0.5 rad move (a lost wrap is an
     * error of 4096 counts). The peak speed, ~4 rad/s, moves ~130 counts per tick: well inside
     * the half range that unwrapping can tell apart. */
    struct fx f;
    struct hs_diag d = {0};
    assert_int_equal(make(&f, "enc12", 0.5, 1.0, NULL,
                          "sensors:\n  encoders:\n    defaults: {counter_bits: 12}\n", &d),
                     0);
    attach_client(&f);
    assert_int_equal(hs_client_claim(f.c, NULL, 0), 0);
    struct hs_client_command cmds[2] = {
        {.mode = HS_SHM_MODE_POSITION_PD, .q = 0.8, .kp = 300, .kd = 20},
        {.mode = HS_SHM_MODE_POSITION_PD, .q = 0.6, .kp = 120, .kd = 8}};
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), 0);
    enum { N = 600 };
    static double q[N];
    static int64_t count[N];
    int wraps = 0;
    for (int k = 0; k < N; k++) {
        uint64_t raw_before = hs_bench_joint_reading(f.b, 0)->encoder_count;
        hs_client_heartbeat(f.c);
        tick(&f);
        uint64_t raw_after = hs_bench_joint_reading(f.b, 0)->encoder_count;
        wraps += llabs((long long)raw_after - (long long)raw_before) > 2048;
        struct hs_shm_joint_state js[2];
        struct hs_client_state st = {.joints = js};
        assert_int_equal(hs_client_read_state(f.c, &st), 0);
        q[k] = js[0].q;
        count[k] = js[0].encoder_count;
    }
    assert_true(wraps >= 3);
    assert_true(q[N - 1] - q[0] > 0.4);
    double counts_per_rad = (double)(count[N - 1] - count[0]) / (q[N - 1] - q[0]);
    assert_true(counts_per_rad > 1000);
    for (int k = 0; k < N; k++) {
        double res = (double)(count[k] - count[0]) - counts_per_rad * (q[k] - q[0]);
        assert_true(fabs(res) <= 3.0);
    }
    done(&f);
}

static void test_clock_stepping_back_does_not_extend_a_command(void **state)
{
    (void)state;
    /* The runner's warm-up ticks run ahead of the clock; the loop's first tick is then earlier.
     * A command seen before that step still goes stale 20 ms (of ticks) after it was seen. */
    struct fx f;
    open_claimed(&f, "clockback", 0.02, 1.0);
    write_hold(&f);
    tick(&f);
    f.now -= 200 * PERIOD_NS;
    int k = 0;
    for (; k < 100 && !counters(&f, 0).stale; k++) {
        hs_client_heartbeat(f.c);
        tick(&f);
    }
    assert_in_range(k, 19, 22);
    assert_true(counters(&f, 1).stale);
    done(&f);
}

/* During the runner's warm-up the segment keeps its attach-time state: a client must not see
 * ticks run faster than real time. A command written meanwhile is taken at once (inputs run). */
/* The warm-up's made-up times run ahead of the clock, 2 s here against a 1 s client timeout, and
 * the loop's first tick may come seconds after it: a client that claimed before it and waits for
 * its first tick is declared lost for neither. */
static void test_warm_up_does_not_age_the_client(void **state)
{
    (void)state;
    struct fx f;
    open_claimed(&f, "warmupage", 0.5, 1.0);
    struct hs_client_command cmds[2] = {{.mode = HS_SHM_MODE_POSITION_PD, .q = 0.3, .kp = 300},
                                        {.mode = HS_SHM_MODE_POSITION_PD, .q = 0.6, .kp = 100}};
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), 0);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t real = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    f.now = real;
    hs_bench_set_warming_up(f.b, true);
    for (int k = 0; k < 2000; k++)
        tick(&f);
    hs_bench_set_warming_up(f.b, false);
    /* the loop starts on the real clock, 5 s later on a loaded machine: still no silence */
    f.now = real + 5000 * PERIOD_NS;
    tick(&f);
    struct hs_client_state st = {0};
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_int_equal(st.client_status, HS_SHM_CLIENT_ACTIVE);
    assert_int_equal(st.stale_joints, 0);
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), 0); /* still the owner */
    done(&f);
}

static void test_warm_up_publishes_nothing(void **state)
{
    (void)state;
    struct fx f;
    struct hs_diag d = {0};
    assert_int_equal(make(&f, "warmup", 0.5, 1.0, NULL, NULL, &d), 0);
    attach_client(&f);
    struct hs_client_state st = {0};
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    uint64_t tick0 = st.tick;
    assert_int_equal(hs_client_claim(f.c, NULL, 0), 0);
    write_hold(&f);
    hs_bench_set_warming_up(f.b, true);
    for (int k = 0; k < 200; k++) {
        hs_client_heartbeat(f.c);
        tick(&f);
    }
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_int_equal(st.tick, tick0);
    assert_true(slot(&f, 1)->mode == HS_JOINT_MODE_POSITION && slot(&f, 1)->kp == 100);
    hs_bench_set_warming_up(f.b, false);
    tick(&f);
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_true(st.tick > tick0);
    done(&f);
}

static void test_only_shm_joints_take_commands(void **state)
{
    (void)state;
    /* ELBOW stays with the demo controller: published, but shm commands for it are ignored. */
    struct fx f;
    struct hs_diag d = {0};
    assert_int_equal(
        make(&f, "mixed", 0.05, 1.0, "  joints:\n    ELBOW: {source: controller}\n", NULL, &d), 0);
    assert_true(hs_bench_joint(f.b, 0)->external);
    assert_false(hs_bench_joint(f.b, 1)->external);
    attach_client(&f);
    assert_int_equal(hs_client_claim(f.c, NULL, 0), 0);
    struct hs_client_command cmds[2] = {{.mode = HS_SHM_MODE_TORQUE, .tau_ff = 0.5},
                                        {.mode = HS_SHM_MODE_TORQUE, .tau_ff = 0.7}};
    assert_int_equal(hs_client_write_commands(f.c, cmds, 2), 0);
    tick(&f);
    assert_int_equal(slot(&f, 0)->mode, HS_JOINT_MODE_TORQUE);
    assert_int_equal(slot(&f, 1)->mode, HS_JOINT_MODE_POSITION); /* the demo controller's PD */
    assert_true(slot(&f, 1)->q == hs_bench_joint(f.b, 1)->q0);
    struct hs_shm_joint_state js[2];
    struct hs_client_state st = {.joints = js};
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_true(js[0].tau == 0.5);
    assert_true(js[1].q == hs_bench_joint_reading(f.b, 1)->q);
    done(&f);
}

static void test_attach_errors(void **state)
{
    (void)state;
    struct fx f, g;
    struct hs_diag d = {0};
    /* A shm joint needs a command timeout. */
    assert_int_equal(make(&f, "zero", 0.0, 0.1, NULL, NULL, &d), -EINVAL);
    assert_string_equal(d.file, "test.yaml");
    assert_non_null(strstr(d.msg, "actuators.SHOULDER.command_timeout_s"));
    char path[128];
    assert_int_equal(hs_shm_server_path(f.name, path, sizeof path), 0);
    assert_int_equal(access(path, F_OK), -1);
    done(&f);

    /* The same bench name twice: refused while the first one lives; removed on destroy. */
    assert_int_equal(make(&f, "twice", 0.05, 0.1, NULL, NULL, &d), 0);
    assert_int_equal(make(&g, "twice", 0.05, 0.1, NULL, NULL, &d), -EEXIST);
    assert_non_null(strstr(d.msg, "in use by running server"));
    done(&g);
    assert_int_equal(hs_shm_server_path(f.name, path, sizeof path), 0);
    assert_int_equal(access(path, F_OK), 0);
    done(&f);
    assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_and_imu_pairing),
        cmocka_unit_test(test_commands_reach_the_slot_and_go_stale),
        cmocka_unit_test(test_lost_client_is_stale_before_the_command_timeout),
        cmocka_unit_test(test_mode_mapping_and_refusal),
        cmocka_unit_test(test_encoder_counts_unwrapped),
        cmocka_unit_test(test_clock_stepping_back_does_not_extend_a_command),
        cmocka_unit_test(test_warm_up_publishes_nothing),
        cmocka_unit_test(test_warm_up_does_not_age_the_client),
        cmocka_unit_test(test_only_shm_joints_take_commands),
        cmocka_unit_test(test_attach_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
