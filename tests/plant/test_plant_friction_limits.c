/* Friction, brake, stops, velocity limits and slide joints of the plant on a real ODE world.
 * Standard solver, 1 ms step (plant_test_model.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "hilsim/plant.h"
#include "plant_test_model.h"

#define G 9.80665
#define MS 1000000LL

struct rig {
    struct hs_model *m;
    struct hs_world *w;
    struct hs_plant *p;
    struct hs_plant_params params;
    int64_t now_ns;
};

static void rig_start(struct rig *r)
{
    r->w = tm_world(r->m, -G, NULL, NULL);
    assert_non_null(r->w);
    struct hs_diag d;
    assert_int_equal(hs_plant_create(r->w, 0, r->m, &r->params, &r->p, &d), 0);
}

static void rig_run(struct rig *r, int ticks)
{
    for (int i = 0; i < ticks; i++) {
        r->now_ns += MS;
        hs_plant_apply_commands(r->p, r->now_ns);
        hs_world_step(r->w);
        hs_plant_update_sensors(r->p, r->now_ns, (uint64_t)(r->now_ns / MS));
    }
}

static void rig_stop(struct rig *r)
{
    hs_plant_destroy(r->p);
    hs_world_destroy(r->w);
    hs_plant_params_free(&r->params);
    tm_free(r->m);
}

static void torque(struct rig *r, double tau)
{
    *hs_plant_command(r->p, 0) =
        (struct hs_joint_command){.mode = HS_JOINT_MODE_TORQUE, .tau_ff = tau, .seq = 1};
}

static void test_coulomb_friction_sticks_then_slides(void **state)
{
    (void)state;
    /* Turntable, I = 0.01, Coulomb 0.05 N·m. */
    struct rig r = {.m = tm_new(2, 0)};
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.joints[0].actuator.coulomb = 0.05;
    rig_start(&r);
    torque(&r, 0.04);
    rig_run(&r, 200);
    assert_true(fabs(hs_world_joint_position(r.w, 0, 1)) < 1e-9); /* stiction holds */
    torque(&r, 0.1);
    rig_run(&r, 200);
    double alpha = hs_world_joint_velocity(r.w, 0, 1) / 0.2;
    double expect = (0.1 - 0.05) / 0.01;
    assert_true(fabs(alpha - expect) < 0.005 * expect);
    rig_stop(&r);
}

static void test_viscous_friction_terminal_velocity(void **state)
{
    (void)state;
    /* tau = b w at terminal speed: 0.1 / 0.05 = 2 rad/s; time constant I / b = 0.2 s. */
    struct rig r = {.m = tm_new(2, 0)};
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.joints[0].actuator.viscous = 0.05;
    rig_start(&r);
    torque(&r, 0.1);
    rig_run(&r, 3000);
    assert_true(fabs(hs_world_joint_velocity(r.w, 0, 1) - 2.0) < 0.005 * 2.0);
    rig_stop(&r);
}

static struct rig pendulum(double brake)
{
    /* Hinge about x, 1 kg, centre of mass 0.3 m out along y: gravity torque m g 0.3 = 2.94 N·m
     * about -x at q = 0. */
    struct rig r = {.m = tm_new(2, 0)};
    r.m->links[1].axis[2] = 0, r.m->links[1].axis[0] = 1;
    r.m->links[1].com[1] = 0.3;
    tm_set_inertia(&r.m->links[1], 0.01, 0.01, 0.01);
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.joints[0].actuator.brake_torque = brake;
    rig_start(&r);
    *hs_plant_command(r.p, 0) = (struct hs_joint_command){.mode = HS_JOINT_MODE_BRAKE, .seq = 1};
    return r;
}

static void test_brake_holds_below_its_torque_and_slips_above(void **state)
{
    (void)state;
    struct rig r = pendulum(5.0);
    rig_run(&r, 300);
    assert_true(fabs(hs_world_joint_position(r.w, 0, 1)) < 1e-6);
    /* The brake's torque is read back from ODE's joint feedback: it carries the load. */
    const struct hs_joint_reading *jr = hs_plant_joint_reading(r.p, 0);
    assert_true(fabs(fabs(jr->torque) - G * 0.3) < 1e-3 * G * 0.3);
    rig_stop(&r);

    /* 1 N·m brake: slips at first with alpha = (m g 0.3 - 1) / (I + m 0.3²). */
    r = pendulum(1.0);
    rig_run(&r, 10);
    double t = 0.010, I = 0.01 + 0.09, expect = (G * 0.3 - 1.0) / I;
    double alpha = -hs_world_joint_velocity(r.w, 0, 1) / t;
    assert_true(fabs(alpha - expect) < 0.01 * expect); /* 1 %: the torque arm turns slightly */
    rig_stop(&r);
}

static void test_position_limits_are_ode_stops(void **state)
{
    (void)state;
    struct rig r = {.m = tm_new(2, 0)};
    r.m->links[1].ulimit = 0.5, r.m->links[1].llimit = -0.25;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r);
    torque(&r, 0.2);
    rig_run(&r, 1000);
    /* ODE stops are soft (ERP 0.2, CFM 1e-10): within 1 mrad under this load. */
    assert_true(fabs(hs_world_joint_position(r.w, 0, 1) - 0.5) < 1e-3);
    torque(&r, -0.2);
    rig_run(&r, 1000);
    assert_true(fabs(hs_world_joint_position(r.w, 0, 1) + 0.25) < 1e-3);
    rig_stop(&r);
}

static void test_friction_and_brake_leave_a_joint_at_its_stop_alone(void **state)
{
    (void)state;
    /* ODE's motor row, powered while its joint sits on a stop, is replaced by its full FMax as
     * a torque (the "fudge factor" path); with the rigid brake that is 1e6 N·m. It must press
     * the joint into the stop, not throw it off, at either stop. */
    for (int side = -1; side <= 1; side += 2) {
        struct rig r = {.m = tm_new(2, 0)};
        r.m->links[1].ulimit = 0.5, r.m->links[1].llimit = -0.5;
        assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
        r.params.joints[0].actuator.coulomb = 0.05;
        rig_start(&r); /* rigid brake: the default */
        torque(&r, 0.1 * side);
        rig_run(&r, 500);
        assert_true(fabs(hs_world_joint_position(r.w, 0, 1) - 0.5 * side) < 1e-3);
        torque(&r, 0.0); /* resting on the stop: friction must not move it */
        rig_run(&r, 500);
        assert_true(fabs(hs_world_joint_position(r.w, 0, 1) - 0.5 * side) < 1e-3);
        *hs_plant_command(r.p, 0) =
            (struct hs_joint_command){.mode = HS_JOINT_MODE_BRAKE, .seq = 1};
        rig_run(&r, 500);
        assert_true(fabs(hs_world_joint_position(r.w, 0, 1) - 0.5 * side) < 1e-3);
        rig_stop(&r);
    }
}

static void test_multi_turn_limits_are_soft_stops(void **state)
{
    (void)state;
    /* Limits at ±5 rad lie beyond ODE's ±pi hinge range: the plant enforces them itself. */
    struct rig r = {.m = tm_new(2, 0)};
    r.m->links[1].ulimit = 5.0, r.m->links[1].llimit = -5.0;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r);
    torque(&r, 0.2);
    rig_run(&r, 2000);
    assert_true(fabs(hs_world_joint_position(r.w, 0, 1) - 5.0) < 1e-3);
    torque(&r, -0.2); /* back through +pi, 0 and -pi to the other side */
    rig_run(&r, 3000);
    assert_true(fabs(hs_world_joint_position(r.w, 0, 1) + 5.0) < 1e-3);
    rig_stop(&r);
}

static void test_velocity_gain_loop(void **state)
{
    (void)state;
    /* tau = kv (v* - dq): first order, time constant I / kv = 0.01 / 0.1 = 0.1 s. After 0.3 s
     * dq = v* (1 - e^-3) within 1 % (explicit loop, h / tau = 1 %). */
    struct rig r = {.m = tm_new(2, 0)};
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.joints[0].actuator.velocity_gain = 0.1;
    rig_start(&r);
    *hs_plant_command(r.p, 0) =
        (struct hs_joint_command){.mode = HS_JOINT_MODE_VELOCITY, .velocity = 3.0, .seq = 1};
    rig_run(&r, 300);
    double expect = 3.0 * (1 - exp(-3.0));
    assert_true(fabs(hs_world_joint_velocity(r.w, 0, 1) - expect) < 0.01 * expect);
    rig_stop(&r);
}

static void test_velocity_limit_and_saturation_counters(void **state)
{
    (void)state;
    struct rig r = {.m = tm_new(2, 0)};
    r.m->links[1].uvlimit = 2.0, r.m->links[1].lvlimit = -2.0;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.joints[0].actuator.torque_max = 0.1;
    rig_start(&r);
    torque(&r, 0.5);
    rig_run(&r, 1000);
    /* 0.1 N·m on 0.01 kg·m² adds 0.01 rad/s per tick: the drive stops pushing at 2 rad/s. */
    double dq = hs_world_joint_velocity(r.w, 0, 1);
    assert_true(dq > 2.0 - 1e-9 && dq < 2.0 + 0.0101);
    struct hs_plant_joint_counters c;
    hs_plant_joint_counters(r.p, 0, &c);
    assert_true(c.velocity_limits > 700 && c.torque_saturations > 100);
    assert_int_equal(c.velocity_limits + c.torque_saturations, 1000);
    rig_stop(&r);
}

/* The speed-limit row counts as a velocity limit only on the ticks it held the joint back.
 * 0.13 N·m on 0.01 kg·m² adds 0.013 rad/s per tick; the row engages when the tick could reach
 * the 2 rad/s limit with five times that reach (dq + 0.13 · 0.5 >= 2: from dq_149 = 1.937, the
 * 150th tick). Ticks 150..153 run the row but it passes the full torque (dq_153 = 1.989):
 * no limit. Tick 154 would reach 2.002: the row holds the joint at 2, and so on every later
 * tick: 200 - 153 = 47 limited ticks of 200. On both solvers (the row's torque is read from
 * ODE's joint feedback, which each solver fills). */
static void test_engaged_speed_row_counts_only_when_it_holds(void **state)
{
    (void)state;
    for (int solver = 0; solver < HS_SOLVER_MAX; solver++) {
        struct rig r = {.m = tm_new(2, 0)};
        r.m->links[1].uvlimit = 2.0, r.m->links[1].lvlimit = -2.0;
        assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
        r.params.joints[0].actuator.velocity_limit_reach = 5 * 1e-3 / 0.01;
        r.params.joints[0].actuator.velocity_limit_gain = 2.0;
        struct hs_world_params wp;
        hs_world_params_default(&wp);
        wp.solver = (enum hs_solver)solver;
        wp.cfm = 1e-10;
        wp.gravity[2] = -G;
        struct hs_world_body_spec spec = {.model = r.m};
        hs_pose_identity(&spec.root_pose);
        struct hs_diag d;
        assert_int_equal(hs_world_create(&wp, &spec, 1, &r.w, &d), 0);
        assert_int_equal(hs_plant_create(r.w, 0, r.m, &r.params, &r.p, &d), 0);
        torque(&r, 0.13);
        rig_run(&r, 153);
        struct hs_plant_joint_counters c;
        hs_plant_joint_counters(r.p, 0, &c);
        /* The row carried the torque (no explicit effort) and passed all of it. */
        assert_true(hs_world_joint_effort(r.w, 0, 1) == 0.0);
        assert_true(fabs(hs_world_joint_velocity(r.w, 0, 1) - 153 * 0.013) < 1e-9);
        assert_int_equal(c.velocity_limits, 0);
        rig_run(&r, 47);
        hs_plant_joint_counters(r.p, 0, &c);
        print_message("solver %d: dq %.12f rad/s, %llu limited ticks\n", solver,
                      hs_world_joint_velocity(r.w, 0, 1), (unsigned long long)c.velocity_limits);
        assert_true(fabs(hs_world_joint_velocity(r.w, 0, 1) - 2.0) < 1e-6);
        assert_int_equal(c.velocity_limits, 47);
        assert_int_equal(c.torque_saturations, 0);
        rig_stop(&r);
    }
}

static void test_slide_joint_force_encoder_and_stops(void **state)
{
    (void)state;
    /* Horizontal slider along x, 2 kg; F = 1 N -> a = 0.5 m/s². Encoder: a screw with
     * gear_ratio 2 pi * 100 rad/m (10 mm lead) and 1000 counts per motor turn: 1e5 counts/m. */
    struct rig r = {.m = tm_new(2, 0)};
    r.m->links[1].joint_type = HS_JOINT_SLIDE;
    r.m->links[1].axis[2] = 0, r.m->links[1].axis[0] = 1;
    r.m->links[1].mass = 2;
    r.m->links[1].ulimit = 0.05;
    r.m->links[1].gear_ratio = 2 * M_PI * 100, r.m->links[1].encoder_pulse = 1000;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r);
    torque(&r, 1.0);
    rig_run(&r, 200);
    double v = hs_world_joint_velocity(r.w, 0, 1);
    assert_true(fabs(v / 0.2 - 0.5) < 0.005 * 0.5);
    const struct hs_joint_reading *jr = hs_plant_joint_reading(r.p, 0);
    assert_int_equal(jr->encoder_count, (uint64_t)(int64_t)floor(jr->q * 1e5 + 0.5));
    rig_run(&r, 1000);
    assert_true(fabs(hs_world_joint_position(r.w, 0, 1) - 0.05) < 1e-3);
    /* The ODE velocity loop drives the slider back at -0.02 m/s: same sign as the reading. */
    r.params.joints[0].actuator.velocity_loop = HS_VELOCITY_LOOP_ODE_MOTOR;
    r.params.joints[0].encoder.velocity_window = 50;
    hs_plant_destroy(r.p);
    struct hs_diag d;
    assert_int_equal(hs_plant_create(r.w, 0, r.m, &r.params, &r.p, &d), 0);
    *hs_plant_command(r.p, 0) =
        (struct hs_joint_command){.mode = HS_JOINT_MODE_VELOCITY, .velocity = -0.02, .seq = 1};
    rig_run(&r, 100);
    assert_true(fabs(hs_world_joint_velocity(r.w, 0, 1) + 0.02) < 1e-9);
    /* One count over the 50 ms window: 1 / (1e5 · 0.05) = 2e-4 m/s. */
    assert_true(fabs(hs_plant_joint_reading(r.p, 0)->encoder_velocity + 0.02) <= 2e-4 + 1e-12);
    rig_stop(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coulomb_friction_sticks_then_slides),
        cmocka_unit_test(test_viscous_friction_terminal_velocity),
        cmocka_unit_test(test_brake_holds_below_its_torque_and_slips_above),
        cmocka_unit_test(test_position_limits_are_ode_stops),
        cmocka_unit_test(test_friction_and_brake_leave_a_joint_at_its_stop_alone),
        cmocka_unit_test(test_multi_turn_limits_are_soft_stops),
        cmocka_unit_test(test_velocity_gain_loop),
        cmocka_unit_test(test_velocity_limit_and_saturation_counters),
        cmocka_unit_test(test_engaged_speed_row_counts_only_when_it_holds),
        cmocka_unit_test(test_slide_joint_force_encoder_and_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
