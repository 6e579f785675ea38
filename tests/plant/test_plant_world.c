/* The plant on a real ODE world, checked against analytic results. Tolerances are stated per
 * test; the standard solver and a 1 ms step are used throughout (plant_test_model.c). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
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
    uint64_t tick;
};

static void rig_start(struct rig *r, double gz, const double *dq0)
{
    double *arm = calloc(r->m->nlinks, sizeof *arm);
    assert_int_equal(hs_plant_armature(r->m, &r->params, arm), 0);
    r->w = tm_world(r->m, gz, arm, dq0);
    free(arm);
    assert_non_null(r->w);
    struct hs_diag d;
    assert_int_equal(hs_plant_create(r->w, 0, r->m, &r->params, &r->p, &d), 0);
}

static void rig_tick(struct rig *r)
{
    r->now_ns += MS;
    r->tick++;
    hs_plant_apply_commands(r->p, r->now_ns);
    hs_world_step(r->w);
    hs_plant_update_sensors(r->p, r->now_ns, r->tick);
}

static void rig_stop(struct rig *r)
{
    hs_plant_destroy(r->p);
    hs_world_destroy(r->w);
    hs_plant_params_free(&r->params);
    tm_free(r->m);
}

static void test_resting_imu_reads_gravity_reaction(void **state)
{
    (void)state;
    struct rig r = {.m = tm_new(1, 3)};
    r.m->sensors[0].type = HS_SENSOR_ACCEL;
    r.m->sensors[1].type = HS_SENSOR_ACCEL;
    r.m->sensors[2].type = HS_SENSOR_GYRO;
    r.m->sensors[1].pose.p[0] = 0.3;
    hs_rot_from_axis_angle((double[3]){1, 2, -0.5}, 2.3, r.m->sensors[1].pose.R);
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r, -G, NULL);
    for (int i = 0; i < 50; i++)
        rig_tick(&r);
    const struct hs_sensor_reading *up = hs_plant_sensor_reading(r.p, 0);
    const struct hs_sensor_reading *tilted = hs_plant_sensor_reading(r.p, 1);
    const struct hs_sensor_reading *gyro = hs_plant_sensor_reading(r.p, 2);
    double e[3];
    hs_rot_apply_transpose(r.m->sensors[1].pose.R, (double[3]){0, 0, G}, e);
    for (int k = 0; k < 3; k++) {
        assert_true(fabs(up->value[k] - (k == 2 ? G : 0)) < 1e-6);
        assert_true(fabs(tilted->value[k] - e[k]) < 1e-6);
        assert_true(fabs(gyro->value[k]) < 1e-6);
    }
    assert_int_equal(up->samples, 50);
    rig_stop(&r);
}

static void test_spinning_imu_reads_rate_and_centripetal(void **state)
{
    (void)state;
    /* Link 1 spins freely about the vertical at w = 2 rad/s, centre of mass on the axis (no
     * gravity torque). Sensor 0.2 m off the axis, tilted: |centripetal| = w² r = 0.8 m/s². */
    const double w = 2.0;
    struct rig r = {.m = tm_new(2, 2)};
    for (int s = 0; s < 2; s++) {
        r.m->sensors[s].type = s == 0 ? HS_SENSOR_ACCEL : HS_SENSOR_GYRO;
        r.m->sensors[s].link = 1;
        r.m->sensors[s].pose.p[0] = 0.2;
        hs_rot_from_axis_angle((double[3]){0.3, -1, 0.2}, 0.9, r.m->sensors[s].pose.R);
    }
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r, -G, (double[2]){0, w});
    for (int i = 0; i < 2000; i++) { /* 4 rad: past pi, the link frame has turned */
        rig_tick(&r);
        if (i % 100 != 99)
            continue;
        struct hs_pose lp;
        hs_world_link_pose(r.w, 0, 1, &lp);
        double Rws[9], rw[3], a[3], ea[3], ew[3];
        hs_rot_mul(lp.R, r.m->sensors[0].pose.R, Rws);
        hs_rot_apply(lp.R, r.m->sensors[0].pose.p, rw);
        for (int k = 0; k < 3; k++)
            a[k] = -w * w * rw[k] + (k == 2 ? G : 0);
        hs_rot_apply_transpose(Rws, a, ea);
        hs_rot_apply_transpose(Rws, (double[3]){0, 0, w}, ew);
        const struct hs_sensor_reading *acc = hs_plant_sensor_reading(r.p, 0);
        const struct hs_sensor_reading *gy = hs_plant_sensor_reading(r.p, 1);
        /* 1e-6 of the signal: the spin rate is constant to ODE's precision. */
        for (int k = 0; k < 3; k++) {
            assert_true(fabs(acc->value[k] - ea[k]) < 1e-6 * G);
            assert_true(fabs(gy->value[k] - ew[k]) < 1e-6 * w);
        }
    }
    assert_true(hs_world_joint_position(r.w, 0, 1) > M_PI);
    rig_stop(&r);
}

static void test_force_sensor_under_hanging_mass(void **state)
{
    (void)state;
    /* Link 1 (2 kg) hangs on a hinge about x, centre of mass 0.3 m below the joint: at rest the
     * sensor at the joint reads the load pulling down, (0, 0, -m g), within 0.1 %. */
    const double m = 2.0;
    struct rig r = {.m = tm_new(2, 1)};
    r.m->links[1].axis[2] = 0, r.m->links[1].axis[0] = 1;
    r.m->links[1].mass = m;
    r.m->links[1].com[2] = -0.3;
    r.m->sensors[0].type = HS_SENSOR_FORCE;
    r.m->sensors[0].link = 1;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r, -G, NULL);
    for (int i = 0; i < 100; i++)
        rig_tick(&r);
    const struct hs_sensor_reading *ft = hs_plant_sensor_reading(r.p, 0);
    assert_true(fabs(ft->value[2] + m * G) < 1e-3 * m * G);
    assert_true(fabs(ft->value[0]) < 1e-3 * m * G && fabs(ft->value[1]) < 1e-3 * m * G);
    for (int k = 0; k < 3; k++)
        assert_true(fabs(ft->torque[k]) < 1e-3 * m * G * 0.3);
    rig_stop(&r);

    /* Fixed joint, centre of mass 0.05 m off in x, sensor 0.1 m below the joint and turned
     * 90° about z: the moment about the sensor is (0, 0.05 m g, 0) in the world, which the
     * turned frame (its x is the world's y) reads on its +x axis. */
    r = (struct rig){.m = tm_new(2, 1)};
    r.m->links[1].joint_type = HS_JOINT_FIXED;
    r.m->links[1].mass = m;
    r.m->links[1].com[0] = 0.05, r.m->links[1].com[2] = -0.3;
    r.m->sensors[0].type = HS_SENSOR_FORCE;
    r.m->sensors[0].link = 1;
    r.m->sensors[0].pose.p[2] = -0.1;
    hs_rot_from_axis_angle((double[3]){0, 0, 1}, M_PI / 2, r.m->sensors[0].pose.R);
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r, -G, NULL);
    for (int i = 0; i < 100; i++)
        rig_tick(&r);
    ft = hs_plant_sensor_reading(r.p, 0);
    double mz = 0.05 * m * G;
    assert_true(fabs(ft->value[2] + m * G) < 1e-3 * m * G);
    assert_true(fabs(ft->torque[0] - mz) < 1e-3 * mz);
    assert_true(fabs(ft->torque[1]) < 1e-3 * mz && fabs(ft->torque[2]) < 1e-3 * mz);
    rig_stop(&r);
}

static void test_force_sensor_sees_the_actuator_torque(void **state)
{
    (void)state;
    /* A horizontal 1 kg arm on a hinge about x, centre of mass 0.3 m out along y, held level by
     * a torque-mode command equal to its gravity moment. The sensor at the joint reads the load:
     * force (0, 0, -m g) and its moment about the sensor, (0, 0.3, 0) x (0, 0, -m g) =
     * (-0.3 m g, 0, 0) -- which, about the hinge axis, only the actuator carries. */
    const double m = 1.0, d = 0.3;
    struct rig r = {.m = tm_new(2, 1)};
    r.m->links[1].axis[2] = 0, r.m->links[1].axis[0] = 1;
    r.m->links[1].mass = m;
    r.m->links[1].com[1] = d;
    r.m->sensors[0].type = HS_SENSOR_FORCE;
    r.m->sensors[0].link = 1;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r, -G, NULL);
    *hs_plant_command(r.p, 0) =
        (struct hs_joint_command){.mode = HS_JOINT_MODE_TORQUE, .tau_ff = m * G * d, .seq = 1};
    for (int i = 0; i < 100; i++)
        rig_tick(&r);
    assert_true(fabs(hs_world_joint_position(r.w, 0, 1)) < 1e-9);
    const struct hs_sensor_reading *ft = hs_plant_sensor_reading(r.p, 0);
    assert_true(fabs(ft->value[2] + m * G) < 1e-3 * m * G);
    assert_true(fabs(ft->torque[0] + d * m * G) < 1e-3 * d * m * G);
    assert_true(fabs(ft->torque[1]) < 1e-6 && fabs(ft->torque[2]) < 1e-6);
    rig_stop(&r);
}

static void test_torque_mode_acceleration_includes_reflected_rotor_inertia(void **state)
{
    (void)state;
    /* Horizontal turntable: I_link = 0.02, N = 50, J_rotor = 1e-6 -> N² J = 0.0025. */
    const double I = 0.02, N = 50, J = 1e-6, tau = 0.1, T = 0.2;
    struct rig r = {.m = tm_new(2, 0)};
    tm_set_inertia(&r.m->links[1], 0.01, 0.01, I);
    r.m->links[1].gear_ratio = N;
    r.m->links[1].rotor_inertia = J;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r, -G, NULL);
    struct hs_joint_command *c = hs_plant_command(r.p, 0);
    *c = (struct hs_joint_command){.mode = HS_JOINT_MODE_TORQUE, .tau_ff = tau, .seq = 1};
    for (int i = 0; i < (int)(T * 1000); i++)
        rig_tick(&r);
    double alpha = hs_world_joint_velocity(r.w, 0, 1) / T;
    double expect = tau / (I + N * N * J);
    assert_true(fabs(alpha - expect) < 0.005 * expect);
    const struct hs_joint_reading *jr = hs_plant_joint_reading(r.p, 0);
    assert_true(fabs(jr->torque - tau) < 1e-12);
    assert_true(fabs(jr->current - tau / N) < 1e-12); /* Kt = 1, eta = 1 */

    /* Current mode: i Kt N eta gives the same torque. */
    r.m->links[1].gear_efficiency = 0.8;
    rig_stop(&r);
    r = (struct rig){.m = tm_new(2, 0)};
    tm_set_inertia(&r.m->links[1], 0.01, 0.01, I);
    r.m->links[1].gear_ratio = N, r.m->links[1].rotor_inertia = J;
    r.m->links[1].gear_efficiency = 0.8, r.m->links[1].torque_const = 0.02;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r, -G, NULL);
    c = hs_plant_command(r.p, 0);
    *c = (struct hs_joint_command){.mode = HS_JOINT_MODE_CURRENT, .current = 0.125, .seq = 1};
    for (int i = 0; i < (int)(T * 1000); i++)
        rig_tick(&r);
    alpha = hs_world_joint_velocity(r.w, 0, 1) / T;
    expect = 0.125 * 0.02 * N * 0.8 / (I + N * N * J);
    assert_true(fabs(alpha - expect) < 0.005 * expect);
    rig_stop(&r);
}

static void test_encoder_through_ode_past_pi_and_counter_wrap(void **state)
{
    (void)state;
    /* ODE velocity loop at 5 rad/s for 3 s: 2.4 joint turns, the hinge angle wraps at ±pi
     * twice, the 16-bit counter (100 000 counts per joint turn) wraps 3 times. */
    const double w = 5.0;
    struct rig r = {.m = tm_new(2, 0)};
    r.m->links[1].gear_ratio = 10, r.m->links[1].encoder_pulse = 10000;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.joints[0].actuator.velocity_loop = HS_VELOCITY_LOOP_ODE_MOTOR;
    r.params.joints[0].actuator.torque_max = 100;
    r.params.joints[0].encoder.bits = 16;
    r.params.joints[0].encoder.velocity_window = 10;
    rig_start(&r, -G, NULL);
    *hs_plant_command(r.p, 0) =
        (struct hs_joint_command){.mode = HS_JOINT_MODE_VELOCITY, .velocity = w, .seq = 1};
    const double cpu = 100000 / (2 * M_PI);
    double integrated = 0;
    int wraps = 0;
    uint64_t prev = 0;
    for (int i = 0; i < 3000; i++) {
        rig_tick(&r);
        const struct hs_joint_reading *jr = hs_plant_joint_reading(r.p, 0);
        integrated += jr->dq * 0.001;
        assert_int_equal(jr->encoder_count, (uint64_t)(int64_t)floor(jr->q * cpu + 0.5) & 0xffff);
        assert_true(fabs(jr->encoder_position - jr->q) * cpu <= 1.0);
        wraps += jr->encoder_count < prev;
        prev = jr->encoder_count;
        if (i > 20)
            assert_true(fabs(jr->encoder_velocity - w) < 1.0 / cpu / 0.010 + 1e-6);
    }
    const struct hs_joint_reading *jr = hs_plant_joint_reading(r.p, 0);
    assert_true(fabs(jr->q - integrated) < 1e-3);
    assert_true(fabs(jr->q - w * 3.0) < 0.01);
    assert_int_equal(wraps, 3);
    /* The motor row's torque is read back from joint feedback: nothing resists, so ~0. */
    assert_true(fabs(jr->torque) < 1e-6);
    rig_stop(&r);
}

/* Exact step response of I x'' + kd x' + kp x = kp (underdamped), sampled finely. */
static void analytic_step(double I, double kp, double kd, double *ret_os, double *ret_ts)
{
    double wn = sqrt(kp / I), z = kd / (2 * sqrt(kp * I)), wd = wn * sqrt(1 - z * z);
    double os = 0, ts = 0;
    for (int n = 1; n <= 500000; n++) {
        double t = n * 1e-5;
        double x = 1 - exp(-z * wn * t) * (cos(wd * t) + z / sqrt(1 - z * z) * sin(wd * t));
        os = fmax(os, x - 1);
        if (fabs(x - 1) > 0.02)
            ts = t;
    }
    *ret_os = os;
    *ret_ts = ts;
}

static void test_position_pd_step_response(void **state)
{
    (void)state;
    /* I = 0.01 + N² J = 0.01 + 100 · 5e-5 = 0.015; kp 1.5 -> wn 10 rad/s; zeta 0.3. */
    const double I = 0.015, kp = 1.5, kd = 2 * 0.3 * sqrt(kp * I);
    struct rig r = {.m = tm_new(2, 0)};
    tm_set_inertia(&r.m->links[1], 0.01, 0.01, 0.01);
    r.m->links[1].gear_ratio = 10, r.m->links[1].rotor_inertia = 5e-5;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    rig_start(&r, -G, NULL);
    *hs_plant_command(r.p, 0) = (struct hs_joint_command){
        .mode = HS_JOINT_MODE_POSITION, .q = 1, .kp = kp, .kd = kd, .seq = 1};
    double os = 0, ts = 0;
    for (int i = 1; i <= 5000; i++) {
        rig_tick(&r);
        double q = hs_world_joint_position(r.w, 0, 1);
        os = fmax(os, q - 1);
        if (fabs(q - 1) > 0.02)
            ts = i * 1e-3;
    }
    double aos, ats;
    analytic_step(I, kp, kd, &aos, &ats);
    assert_true(fabs(os - aos) < 0.02 * aos);
    assert_true(fabs(ts - ats) < 0.02 * ats);
    rig_stop(&r);
}

/* The implicit position loop (HS_POSITION_LOOP_ODE_MOTOR) on gains far past the explicit bound
 * (b = kd h / I = 5.2 > 2): a 10 mrad step follows the backward-Euler recursion of the same law,
 *   I (v' - v) / h = kp (q* - x - h v') - kd v',   x' = x + h v',
 * within 1e-4 of the step (ODE's quaternion update is exact only to third order in the turn
 * per step: a 1 rad step turned 0.52 rad in one step and lost 2 %), never overshoots, and the
 * row's force stays within the torque limit. The explicit law on the same gains diverges (what
 * makes the test able to fail). */
static double implicit_step_run(enum hs_position_loop loop, double tmax, double *ret_err,
                                double *ret_peak_tau)
{
    const double I = 0.015, kp = 1e5, kd = 2 * sqrt(kp * I), h = 1e-3, step = 0.01;
    struct rig r = {.m = tm_new(2, 0)};
    tm_set_inertia(&r.m->links[1], 0.01, 0.01, 0.01);
    r.m->links[1].gear_ratio = 10, r.m->links[1].rotor_inertia = 5e-5;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.joints[0].actuator.torque_max = tmax;
    rig_start(&r, -G, NULL);
    assert_int_equal(hs_plant_set_position_loop(r.p, 0, loop), 0);
    assert_int_equal(hs_plant_set_position_loop(r.p, 1, loop), -EINVAL);
    *hs_plant_command(r.p, 0) = (struct hs_joint_command){
        .mode = HS_JOINT_MODE_POSITION, .q = step, .kp = kp, .kd = kd, .seq = 1};
    double x = 0, v = 0, err = 0, peak = 0, qmax = 0;
    for (int i = 1; i <= 500; i++) {
        rig_tick(&r);
        v = (I * v / h + kp * (step - x)) / (I / h + h * kp + kd);
        x += h * v;
        double q = hs_world_joint_position(r.w, 0, 1);
        err = fmax(err, fabs(q - x));
        qmax = fmax(qmax, fabs(q));
        peak = fmax(peak, fabs(hs_plant_joint_reading(r.p, 0)->torque));
        if (!(qmax < 100 * step))
            break;
    }
    rig_stop(&r);
    *ret_err = err / step;
    *ret_peak_tau = peak;
    return qmax / step;
}

static void test_implicit_position_loop_past_the_explicit_bound(void **state)
{
    (void)state;
    double err, peak;
    double qmax = implicit_step_run(HS_POSITION_LOOP_ODE_MOTOR, INFINITY, &err, &peak);
    assert_true(err < 1e-4);
    assert_true(qmax < 1 + 1e-6); /* no overshoot */
    /* Saturated at 20 N·m (the law's first step asks 78): the row's force (joint feedback)
     * never exceeds it, and the joint still arrives, overshooting by what a saturated drive
     * cannot brake within a step (0.4 % measured). */
    qmax = implicit_step_run(HS_POSITION_LOOP_ODE_MOTOR, 20.0, &err, &peak);
    assert_true(peak <= 20.0 * (1 + 1e-9));
    assert_true(peak > 19.0);
    assert_true(qmax > 0.98 && qmax < 1.01); /* 0.4 %: the drive cannot brake harder either */
    qmax = implicit_step_run(HS_POSITION_LOOP_EXPLICIT, INFINITY, &err, &peak);
    assert_true(!(qmax < 100));
}

static void test_stale_command_falls_back_on_first_tick_past_timeout(void **state)
{
    (void)state;
    for (int safe = 0; safe < HS_SAFE_MAX; safe++) {
        struct rig r = {.m = tm_new(2, 0)};
        assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
        r.params.joints[0].actuator.timeout_ns = 5 * MS;
        r.params.joints[0].actuator.safe = (enum hs_safe_behaviour)safe;
        r.params.joints[0].actuator.hold_kp = 20;
        r.params.joints[0].actuator.hold_kd = 1;
        rig_start(&r, -G, NULL);
        /* Received at t = 1 ms; ticks at 1, 2, ... ms. Age 5 ms (t = 6 ms) is still fresh;
         * t = 7 ms is the first tick past the timeout. */
        *hs_plant_command(r.p, 0) = (struct hs_joint_command){
            .mode = HS_JOINT_MODE_TORQUE, .tau_ff = 0.5, .rx_time_ns = 1 * MS, .seq = 1};
        double dq_prev = 0;
        for (int k = 1; k <= 12; k++) {
            rig_tick(&r);
            struct hs_plant_joint_counters c;
            hs_plant_joint_counters(r.p, 0, &c);
            double dq = hs_world_joint_velocity(r.w, 0, 1);
            const struct hs_joint_reading *jr = hs_plant_joint_reading(r.p, 0);
            if (k <= 6) {
                assert_false(c.stale);
                assert_true(dq > dq_prev); /* still driven */
                assert_true(fabs(jr->torque - 0.5) < 1e-12);
            } else {
                assert_true(c.stale);
                assert_int_equal(c.stale_events, 1);
                assert_int_equal(c.stale_ticks, (uint64_t)(k - 6));
                if (safe == HS_SAFE_BRAKE)
                    assert_true(fabs(dq) < 1e-9);
                else if (safe == HS_SAFE_ZERO_TORQUE) /* driven, dq would grow 0.05 a tick */
                    assert_true(fabs(dq - dq_prev) < 1e-9 && fabs(jr->torque) < 1e-12);
                else if (k == 7) /* hold: PD pulls back towards where the fallback began */
                    assert_true(dq < dq_prev && jr->torque < 0);
            }
            dq_prev = dq;
        }
        /* A fresh command ends the fallback on its tick. */
        hs_plant_command(r.p, 0)->rx_time_ns = r.now_ns + MS;
        hs_plant_command(r.p, 0)->seq = 2;
        rig_tick(&r);
        struct hs_plant_joint_counters c;
        hs_plant_joint_counters(r.p, 0, &c);
        assert_false(c.stale);
        rig_stop(&r);
    }
}

static void test_delay_lines_and_output_rate(void **state)
{
    (void)state;
    struct rig r = {.m = tm_new(2, 1)};
    r.m->sensors[0].type = HS_SENSOR_GYRO;
    r.m->sensors[0].link = 1;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.joints[0].reading_delay_ticks = 3;
    r.params.joints[0].command_delay_ticks = 2;
    r.params.sensors[0].rate_divider = 4;
    r.params.sensors[0].delay_ticks = 1;
    rig_start(&r, -G, NULL);
    *hs_plant_command(r.p, 0) =
        (struct hs_joint_command){.mode = HS_JOINT_MODE_TORQUE, .tau_ff = 0.1, .seq = 1};
    double q_hist[40], w_hist[40];
    for (int k = 1; k < 40; k++) {
        rig_tick(&r);
        q_hist[k] = hs_world_joint_position(r.w, 0, 1);
        double v[3], w[3];
        hs_world_link_velocity(r.w, 0, 1, v, w);
        w_hist[k] = w[2];
        const struct hs_joint_reading *jr = hs_plant_joint_reading(r.p, 0);
        if (k > 3)
            assert_true(jr->q == q_hist[k - 3] && jr->time_ns == (k - 3) * MS);
        /* The command takes 2 ticks to reach the drive: no motion before tick 3. */
        if (k <= 2)
            assert_true(q_hist[k] == 0.0);
        else
            assert_true(q_hist[k] > 0.0);
        /* Gyro: sampled on ticks 4, 8, ..., held, then 1 tick late. */
        const struct hs_sensor_reading *g = hs_plant_sensor_reading(r.p, 0);
        int last_sample = ((k - 1) / 4) * 4;
        if (last_sample >= 4)
            assert_true(fabs(g->value[2] - w_hist[last_sample]) < 1e-12);
        assert_int_equal(g->samples, (uint64_t)((k - 1) / 4));
        if (last_sample >= 4)
            assert_true(g->time_ns == last_sample * MS);
    }
    rig_stop(&r);
}

/* One run of a noisy two-joint arm: every reading of every tick goes into a log. */
static size_t noisy_run(uint64_t seed, double *log, size_t cap)
{
    struct rig r = {.m = tm_new(3, 3)};
    r.m->links[2].axis[2] = 0, r.m->links[2].axis[1] = 1;
    r.m->links[2].com[0] = 0.2;
    r.m->sensors[0].type = HS_SENSOR_ACCEL, r.m->sensors[0].link = 2;
    r.m->sensors[1].type = HS_SENSOR_GYRO, r.m->sensors[1].link = 2;
    r.m->sensors[2].type = HS_SENSOR_FORCE, r.m->sensors[2].link = 2;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.seed = seed;
    for (int s = 0; s < 3; s++)
        for (int c = 0; c < 2; c++)
            r.params.sensors[s].channel[c] = (struct hs_channel_params){.bias = {0.01, -0.02, 0.03},
                                                                        .white_std = 0.05,
                                                                        .bias_rw_std = 0.01,
                                                                        .range = {50, 50, 50},
                                                                        .quantum = 1e-4};
    rig_start(&r, -G, NULL);
    size_t n = 0;
    for (int k = 0; k < 300; k++) {
        for (uint32_t j = 0; j < 2; j++)
            *hs_plant_command(r.p, j) = (struct hs_joint_command){.mode = HS_JOINT_MODE_POSITION,
                                                                  .q = 0.5 * sin(k * 0.01),
                                                                  .kp = 5,
                                                                  .kd = 0.2,
                                                                  .seq = (uint64_t)k + 1,
                                                                  .rx_time_ns = r.now_ns};
        rig_tick(&r);
        for (uint32_t s = 0; s < 3 && n + 6 <= cap; s++) {
            const struct hs_sensor_reading *sr = hs_plant_sensor_reading(r.p, s);
            memcpy(log + n, sr->value, 3 * sizeof(double));
            memcpy(log + n + 3, sr->torque, 3 * sizeof(double));
            n += 6;
        }
    }
    rig_stop(&r);
    return n;
}

static void test_same_seed_same_sensor_log(void **state)
{
    (void)state;
    enum { CAP = 300 * 18 };
    double *a = calloc(CAP, sizeof *a), *b = calloc(CAP, sizeof *b), *c = calloc(CAP, sizeof *c);
    size_t na = noisy_run(77, a, CAP), nb = noisy_run(77, b, CAP), nc = noisy_run(78, c, CAP);
    assert_int_equal(na, CAP);
    assert_int_equal(na, nb);
    assert_int_equal(na, nc);
    assert_memory_equal(a, b, na * sizeof(double));
    assert_memory_not_equal(a, c, na * sizeof(double));
    free(a);
    free(b);
    free(c);
}

static void test_imu_range_saturates_and_counts(void **state)
{
    (void)state;
    /* maxAcceleration 5 m/s² on z: a resting sensor is pinned at 5 and every sample counts. */
    struct rig r = {.m = tm_new(1, 1)};
    r.m->sensors[0].type = HS_SENSOR_ACCEL;
    r.m->sensors[0].max[0] = r.m->sensors[0].max[1] = r.m->sensors[0].max[2] = 5;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.sensors[0].channel[0].quantum = 0.01;
    rig_start(&r, -G, NULL);
    for (int i = 0; i < 20; i++)
        rig_tick(&r);
    assert_true(hs_plant_sensor_reading(r.p, 0)->value[2] == 5.0);
    assert_int_equal(hs_plant_sensor_saturations(r.p, 0), 20);
    rig_stop(&r);
}

static void test_substeps_advance_delays_and_counters_once_per_tick(void **state)
{
    (void)state;
    /* Two physics steps per 2 ms tick, apply before each with the tick's now_ns: the command
     * delay (1 tick) and the watchdog count ticks, not substeps; the IMU differences over the
     * whole tick. */
    struct rig r = {.m = tm_new(2, 1)};
    r.m->sensors[0].type = HS_SENSOR_ACCEL;
    r.m->sensors[0].link = 1;
    r.m->sensors[0].pose.p[0] = 0.1;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.params.joints[0].command_delay_ticks = 1;
    r.params.joints[0].actuator.timeout_ns = 4 * MS;
    struct hs_world_params wp;
    hs_world_params_default(&wp);
    wp.solver = HS_SOLVER_STANDARD;
    wp.cfm = 1e-10; /* rigid joints: the check below is exact to 1e-9 */
    wp.substeps = 2;
    struct hs_world_body_spec spec = {.model = r.m};
    hs_pose_identity(&spec.root_pose);
    struct hs_diag d;
    assert_int_equal(hs_world_create(&wp, &spec, 1, &r.w, &d), 0);
    assert_int_equal(hs_plant_create(r.w, 0, r.m, &r.params, &r.p, &d), 0);
    *hs_plant_command(r.p, 0) = (struct hs_joint_command){
        .mode = HS_JOINT_MODE_TORQUE, .tau_ff = 0.1, .rx_time_ns = 2 * MS, .seq = 1};
    double dq_prev = 0;
    for (int k = 1; k <= 6; k++) {
        int64_t now = 2 * k * MS;
        for (int s = 0; s < 2; s++) {
            hs_plant_apply_commands(r.p, now);
            hs_world_step(r.w);
        }
        hs_plant_update_sensors(r.p, now, (uint64_t)k);
        double dq = hs_world_joint_velocity(r.w, 0, 1);
        struct hs_plant_joint_counters c;
        hs_plant_joint_counters(r.p, 0, &c);
        /* Received at 2 ms, reaches the drive one tick (2 ms) later at 4 ms. Tick 1 (2 ms): not
         * there yet. Ticks 2-4 (4-8 ms): driven, age <= 4 ms. Tick 5 (10 ms): stale. */
        if (k == 1)
            assert_true(fabs(dq) < 1e-12);
        else if (k <= 4)
            assert_true(fabs(dq - dq_prev - 0.1 / 0.01 * 0.002) < 1e-9);
        else
            assert_true(c.stale && c.stale_ticks == (uint64_t)(k - 4));
        if (k >= 2 && k <= 4) {
            /* Tangential specific force alpha x r: 10 rad/s² · 0.1 m = 1 m/s² (sensor y). */
            const struct hs_sensor_reading *a = hs_plant_sensor_reading(r.p, 0);
            if (k >= 3)
                assert_true(fabs(a->value[1] - 1.0) < 1e-6);
        }
        dq_prev = dq;
    }
    rig_stop(&r);
}

static void test_bad_params_name_the_field(void **state)
{
    (void)state;
    struct rig r = {.m = tm_new(2, 1)};
    r.m->sensors[0].type = HS_SENSOR_GYRO;
    assert_int_equal(hs_plant_params_init(r.m, &r.params), 0);
    r.w = tm_world(r.m, -G, NULL, NULL);
    struct hs_diag d;
    struct hs_plant *p = (struct hs_plant *)0x1;
    r.params.joints[0].actuator.gear_efficiency = 0;
    assert_int_equal(hs_plant_create(r.w, 0, r.m, &r.params, &p, &d), -22);
    assert_non_null(strstr(d.msg, "joints[0].actuator.gear_efficiency"));
    assert_true(p == (struct hs_plant *)0x1);
    r.params.joints[0].actuator.gear_efficiency = 1;
    r.params.sensors[0].rate_divider = 0;
    assert_int_equal(hs_plant_create(r.w, 0, r.m, &r.params, &p, &d), -22);
    assert_non_null(strstr(d.msg, "sensors[0].rate_divider"));
    assert_int_equal(hs_plant_create(r.w, 1, r.m, &r.params, &p, &d), -22);
    /* NULL params: the model's defaults. */
    assert_int_equal(hs_plant_create(r.w, 0, r.m, NULL, &p, &d), 0);
    assert_int_equal(hs_plant_joint_count(p), 1);
    assert_int_equal(hs_plant_joint_link(p, 0), 1);
    assert_int_equal(hs_plant_find_joint(p, 1), 0);
    assert_int_equal(hs_plant_find_joint(p, 0), -2);
    assert_int_equal(hs_plant_find_joint_id(p, 0), 0);
    assert_int_equal(hs_plant_find_joint_id(p, 5), -2);
    r.p = p;
    rig_stop(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resting_imu_reads_gravity_reaction),
        cmocka_unit_test(test_spinning_imu_reads_rate_and_centripetal),
        cmocka_unit_test(test_force_sensor_under_hanging_mass),
        cmocka_unit_test(test_force_sensor_sees_the_actuator_torque),
        cmocka_unit_test(test_torque_mode_acceleration_includes_reflected_rotor_inertia),
        cmocka_unit_test(test_encoder_through_ode_past_pi_and_counter_wrap),
        cmocka_unit_test(test_position_pd_step_response),
        cmocka_unit_test(test_implicit_position_loop_past_the_explicit_bound),
        cmocka_unit_test(test_stale_command_falls_back_on_first_tick_past_timeout),
        cmocka_unit_test(test_delay_lines_and_output_rate),
        cmocka_unit_test(test_same_seed_same_sensor_log),
        cmocka_unit_test(test_imu_range_saturates_and_counts),
        cmocka_unit_test(test_substeps_advance_delays_and_counters_once_per_tick),
        cmocka_unit_test(test_bad_params_name_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
