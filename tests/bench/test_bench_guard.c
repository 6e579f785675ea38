/* The tick contract and the plant fault through the whole bench, offline in simulated time:
 * - the phases run in order (a probe module sees its own command move the joint within the
 *   same tick, and the sensors' sample of that tick in its outputs);
 * - a runaway (a shm client commanding 1e9 N·m to an actuator configured without a torque
 *   limit, torque_limit_nm: .inf) or an ODE internal error trips the bench: the
 *   fault names the link and tick, the physics phase stays latched, the safe stop sends the
 *   CAN nodes' stop frames over the socketpair bus and the shm state carries
 *   HS_SHM_BENCH_FAULT;
 * - the same 1e9 N·m command under the default finite torque limit is clamped: no trip;
 * - a finite command whose PD product overflows (q = 1e200, kp = 1e200) is counted as invalid
 *   and the joint takes its safe behaviour (a brake here) instead of going limp. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <ode/ode.h>

#include "hilsim/io_shm.h"
#include "canio/canio_rig.h"
#include "hilsim/bench.h"
#include "hilsim/client.h"
#include "hilsim/shm_abi.h"

static const char *models_dir(void)
{
    static char dir[4096];
    const char *s = getenv("HS_SOURCE_DIR");
    snprintf(dir, sizeof dir, "%s/models", s ? s : HS_TEST_SOURCE_DIR);
    return dir;
}

/* ---- the tick contract ---- */

/* A module that commands +-T on SHOULDER, alternating every tick, and checks in its outputs
 * that the joint accelerated this tick in the direction it commanded this tick (actuation ran
 * after inputs and before physics) and that the reading is this tick's sample (sensors ran
 * after physics, before outputs). */
struct probe {
    uint32_t joint;
    double dq_in, sign;
    uint64_t ticks, in_order;
    int64_t now;
};

static int probe_inputs(void *ctx, struct hs_bench *b, int64_t now_ns)
{
    struct probe *p = ctx;
    const struct hs_bench_joint *j = hs_bench_joint(b, p->joint);
    p->sign = (p->ticks % 2) ? -1 : 1;
    p->now = now_ns;
    p->dq_in = hs_world_joint_velocity(hs_bench_world(b), j->body, j->link);
    j->cmd->mode = HS_JOINT_MODE_TORQUE;
    j->cmd->tau_ff = p->sign * 50;
    j->cmd->rx_time_ns = now_ns;
    j->cmd->seq++;
    return 0;
}

static int probe_outputs(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    struct probe *p = ctx;
    (void)tick;
    const struct hs_bench_joint *j = hs_bench_joint(b, p->joint);
    double dq = hs_world_joint_velocity(hs_bench_world(b), j->body, j->link);
    const struct hs_joint_reading *r = hs_bench_joint_reading(b, p->joint);
    /* 50 N·m on the arm's shoulder changes its rate by far more than gravity does in 1 ms. */
    bool moved = (dq - p->dq_in) * p->sign > 0;
    bool sampled = r->time_ns == now_ns && r->dq == dq && now_ns == p->now;
    p->in_order += moved && sampled;
    p->ticks++;
    return 0;
}

static const struct hs_bench_io_ops probe_ops = {
    .name = "order probe",
    .inputs = probe_inputs,
    .outputs = probe_outputs,
};

static void test_phases_run_in_order(void **state)
{
    (void)state;
    static const char yaml[] = "bench: {name: order}\n"
                               "models:\n  - {name: arm, file: arm2.wrl}\n"
                               "controller: {type: none}\n";
    const struct hs_config *cfg = NULL;
    struct hs_bench *b = NULL;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, sizeof yaml - 1, "order.yaml", models_dir(), &cfg, &d) < 0 ||
        hs_bench_create(cfg, &b, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    struct probe *p = calloc(1, sizeof *p);
    p->joint = (uint32_t)hs_bench_find_joint(b, "SHOULDER");
    hs_bench_claim_joint(b, p->joint);
    assert_int_equal(hs_bench_add_io(b, &probe_ops, p), 0);
    for (uint64_t k = 1; k <= 50; k++)
        assert_int_equal(hs_bench_tick(b, (int64_t)k * 1000000, k), 0);
    print_message("%llu of %llu ticks saw inputs -> actuation -> physics -> sensors -> outputs\n",
                  (unsigned long long)p->in_order, (unsigned long long)p->ticks);
    assert_int_equal(p->ticks, 50);
    assert_int_equal(p->in_order, 50);
    free(p);
    hs_bench_destroy(b);
    hs_config_free(cfg);
}

/* ---- faults with CAN nodes and an shm client ---- */

struct fx {
    char name[64];
    struct canio_rig rig;
    struct hs_bench_shm *shm;
    struct hs_client *c;
    uint32_t elbow;
};

/* The arm with SHOULDER as an MIT node on a socketpair bus and ELBOW commanded over shm by a
 * client in this process; the elbow brakes when its command is stale or invalid. elbow_extra:
 * more keys for ELBOW's actuator entry ("" or ", key: value"). */
static void open_fx(struct fx *f, const char *tag, const char *elbow_extra)
{
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "guard-%d-%s", (int)getpid(), tag);
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "bench: {name: %s}\n"
             "models:\n"
             "  - name: arm\n"
             "    file: arm2.wrl\n"
             "    initial: {joints: {SHOULDER: {q: 0.3}, ELBOW: {q: 0.6}}}\n"
             "  - {name: floor, file: floor.wrl, static: true}\n"
             "can:\n"
             "  buses: [{name: main, interface: vcan0}]\n"
             "  nodes: [{name: shoulder, bus: main, protocol: mit, id: 1, joint: SHOULDER}]\n"
             "actuators:\n"
             "  joints: {ELBOW: {source: shm, safe_behaviour: brake, command_timeout_s: 1%s}}\n"
             "shm: {enabled: true}\n",
             f->name, elbow_extra);
    assert_int_equal(canio_rig_open(&f->rig, NULL, yaml, models_dir(), true), 0);
    struct hs_diag d = {0};
    if (hs_bench_shm_attach(f->rig.bench, &f->shm, &d) < 0)
        fail_msg("shm: %s", d.msg);
    char err[HS_CLIENT_ERRBUF_MIN];
    if (hs_client_attach(f->name, &f->c, err, sizeof err) < 0)
        fail_msg("attach: %s", err);
    assert_int_equal(hs_client_claim(f->c, NULL, 0), 0);
    assert_int_equal(hs_client_find_joint(f->c, "ELBOW", &f->elbow), 0);
    f->elbow = (uint32_t)hs_bench_find_joint(f->rig.bench, "ELBOW");
    /* The boards enable the MIT node, and a few ticks run normally. */
    static const uint8_t enter[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFC};
    assert_int_equal(canio_send(&f->rig, 0, 1, enter, 8), 1);
    for (int k = 0; k < 5; k++) {
        hs_client_heartbeat(f->c);
        assert_int_equal(canio_rig_tick(&f->rig), 0);
    }
}

static void close_fx(struct fx *f)
{
    hs_client_detach(f->c);
    canio_rig_close(&f->rig);
}

static int drain(struct fx *f)
{
    struct hs_can_frame fr[64];
    int n, total = 0;
    while ((n = canio_recv(&f->rig, 0, fr, 64)) > 0)
        total += n;
    return total;
}

/* After a trip: latched physics, the safe stop's frames on the bus, the fault in the shm state. */
static void check_safe_stop(struct fx *f, int rc)
{
    struct hs_bench *b = f->rig.bench;
    double t = hs_world_time(hs_bench_world(b));
    assert_int_equal(hs_bench_physics(b, f->rig.now_ns, f->rig.tick), rc);
    assert_true(hs_world_time(hs_bench_world(b)) == t);
    drain(f);
    hs_bench_safe_stop(b);
    struct hs_can_frame fr[16];
    int n = canio_recv(&f->rig, 0, fr, 16);
    int stop = 0;
    for (int k = 0; k < n; k++)
        stop += fr[k].id == 0 && fr[k].len == 6; /* the MIT node's last reply, to the master */
    print_message("safe stop: %d frame(s) on the bus, %d from the MIT node\n", n, stop);
    assert_int_equal(stop, 1);
    struct hs_client_state st = {0};
    assert_int_equal(hs_client_read_state(f->c, &st), 0);
    assert_true(st.bench_flags & HS_SHM_BENCH_FAULT);
    assert_true(hs_bench_state_flags(b) & HS_SHM_BENCH_FAULT);
}

static void test_runaway_torque_trips_and_stops_safely(void **state)
{
    (void)state;
    struct fx f;
    open_fx(&f, "torque", ", torque_limit_nm: .inf, velocity_limit: .inf");
    struct hs_client_state st = {0};
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_int_equal(st.bench_flags, 0);
    assert_null(hs_bench_fault(f.rig.bench));
    struct hs_client_command cmd = {.mode = HS_SHM_MODE_TORQUE, .tau_ff = 1e9};
    uint32_t ci;
    assert_int_equal(hs_client_find_joint(f.c, "ELBOW", &ci), 0);
    assert_int_equal(hs_client_write_command(f.c, ci, &cmd), 0);
    uint64_t trip_tick = f.rig.tick;
    assert_int_equal(canio_rig_tick(&f.rig), -ERANGE);
    const struct hs_world_fault *fault = hs_bench_fault(f.rig.bench);
    assert_non_null(fault);
    assert_int_equal(fault->tick, trip_tick);
    char line[512];
    hs_bench_fault_format(f.rig.bench, line, sizeof line);
    print_message("%s\n", line);
    assert_non_null(strstr(line, "of arm"));
    char tick_txt[32];
    snprintf(tick_txt, sizeof tick_txt, "tick %llu ", (unsigned long long)trip_tick);
    assert_non_null(strstr(line, tick_txt));
    /* The state published by the faulting tick already says so. */
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_true(st.bench_flags & HS_SHM_BENCH_FAULT);
    check_safe_stop(&f, -ERANGE);
    close_fx(&f);
}

/* The same command with the elbow's default torque limit (the config leaves it out): the
 * actuator clamps it, so the elbow accelerates at what its motor can give and nothing trips;
 * 0.5 s of it leaves every joint rate finite and below 1000 rad/s. */
static void test_runaway_command_clamped_by_default_limit(void **state)
{
    (void)state;
    struct fx f;
    open_fx(&f, "limited", "");
    struct hs_client_command cmd = {.mode = HS_SHM_MODE_TORQUE, .tau_ff = 1e9};
    uint32_t ci;
    assert_int_equal(hs_client_find_joint(f.c, "ELBOW", &ci), 0);
    double peak = 0.0;
    for (int k = 0; k < 500; k++) {
        assert_int_equal(hs_client_write_command(f.c, ci, &cmd), 0);
        hs_client_heartbeat(f.c);
        assert_int_equal(canio_rig_tick(&f.rig), 0);
        double dq = hs_bench_joint_reading(f.rig.bench, f.elbow)->dq;
        assert_true(isfinite(dq));
        peak = fmax(peak, fabs(dq));
    }
    print_message("elbow under a 1e9 N·m command with the default limit: peak %.2f rad/s\n", peak);
    assert_true(peak > 0.1); /* the command did act */
    assert_true(peak < 1000.0);
    assert_null(hs_bench_fault(f.rig.bench));
    struct hs_client_state st = {0};
    assert_int_equal(hs_client_read_state(f.c, &st), 0);
    assert_false(st.bench_flags & HS_SHM_BENCH_FAULT);
    close_fx(&f);
}

/* A link spun to 1e200 rad/s between ticks: ODE's quaternion update asserts inside the step.
 * Without the handler this aborts the process (exit 134, no stop frames). */
static void test_ode_internal_error_trips_and_stops_safely(void **state)
{
    (void)state;
    struct fx f;
    open_fx(&f, "ode", "");
    const struct hs_bench_joint *j = hs_bench_joint(f.rig.bench, f.elbow);
    dBodySetAngularVel(hs_world_ode_body(hs_bench_world(f.rig.bench), j->body, j->link), 1e200, 0,
                       0);
    assert_int_equal(canio_rig_tick(&f.rig), -EFAULT);
    const struct hs_world_fault *fault = hs_bench_fault(f.rig.bench);
    assert_non_null(fault);
    assert_int_equal(fault->kind, HS_WORLD_FAULT_ODE_INTERNAL);
    char line[512];
    hs_bench_fault_format(f.rig.bench, line, sizeof line);
    print_message("%s\n", line);
    assert_non_null(strstr(line, "ODE internal error"));
    check_safe_stop(&f, -EFAULT);
    close_fx(&f);
}

/* q = 1e200, kp = 1e200 are finite, so the shm layer passes them on; their product is not. */
static void test_overflowing_pd_is_an_invalid_command_and_the_joint_brakes(void **state)
{
    (void)state;
    struct fx f;
    open_fx(&f, "pd", "");
    struct hs_bench *b = f.rig.bench;
    uint32_t ci;
    assert_int_equal(hs_client_find_joint(f.c, "ELBOW", &ci), 0);
    struct hs_client_command cmd = {.mode = HS_SHM_MODE_POSITION_PD, .q = 1e200, .kp = 1e200};
    assert_int_equal(hs_client_write_command(f.c, ci, &cmd), 0);
    assert_int_equal(canio_rig_tick(&f.rig), 0);
    double q0 = hs_bench_joint_reading(b, f.elbow)->q;
    for (int k = 0; k < 200; k++) {
        hs_client_heartbeat(f.c);
        assert_int_equal(canio_rig_tick(&f.rig), 0);
    }
    const struct hs_bench_joint *j = hs_bench_joint(b, f.elbow);
    struct hs_plant_joint_counters c;
    hs_plant_joint_counters(j->plant, j->plant_joint, &c);
    double q1 = hs_bench_joint_reading(b, f.elbow)->q;
    print_message("invalid commands %llu, elbow moved %.2e rad in 0.2 s under its brake\n",
                  (unsigned long long)c.invalid_commands, fabs(q1 - q0));
    assert_int_equal(c.invalid_commands, 201);
    /* Limp at 0.6 rad the forearm falls by tenths of a radian in 0.2 s; the brake holds it
     * within ODE's constraint compliance. */
    assert_true(fabs(q1 - q0) < 1e-3);
    assert_null(hs_bench_fault(b));
    close_fx(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phases_run_in_order),
        cmocka_unit_test(test_runaway_torque_trips_and_stops_safely),
        cmocka_unit_test(test_runaway_command_clamped_by_default_limit),
        cmocka_unit_test(test_ode_internal_error_trips_and_stops_safely),
        cmocka_unit_test(test_overflowing_pd_is_an_invalid_command_and_the_joint_brakes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
