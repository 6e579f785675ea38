#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "hilsim/ft_sensor.h"
#include "hilsim/imu.h"
#include "hilsim/pose.h"

static const double G[3] = {0, 0, -9.80665};

static void test_resting_imu_reads_reaction_to_gravity(void **state)
{
    (void)state;
    double z[3] = {0}, R[9], f[3];
    hs_rot_from_axis_angle((double[3]){0, 0, 1}, 0, R);
    hs_imu_specific_force(z, z, z, (double[3]){0.1, 0.2, 0.3}, G, R, f);
    assert_true(fabs(f[0]) < 1e-12 && fabs(f[1]) < 1e-12 && fabs(f[2] - 9.80665) < 1e-12);
    hs_rot_from_axis_angle((double[3]){1, -2, 0.5}, 2.1, R);
    hs_imu_specific_force(z, z, z, (double[3]){0.1, 0.2, 0.3}, G, R, f);
    double up[3] = {0, 0, 9.80665}, e[3];
    hs_rot_apply_transpose(R, up, e);
    for (int i = 0; i < 3; i++)
        assert_true(fabs(f[i] - e[i]) < 1e-12);
}

static void test_spinning_imu_reads_rate_and_centripetal(void **state)
{
    (void)state;
    /* Sensor 0.2 m from the axis, w = 3 rad/s about z, frame turned 90° about z: the
     * centripetal acceleration points to the axis, |a| = w² r = 1.8. */
    double w[3] = {0, 0, 3}, r[3] = {0.2, 0, 0}, z[3] = {0}, R[9], f[3], g[3];
    double zero_g[3] = {0, 0, 0};
    hs_rot_from_axis_angle((double[3]){0, 0, 1}, M_PI / 2, R);
    hs_imu_specific_force(z, z, w, r, zero_g, R, f);
    /* world a = (-1.8, 0, 0); sensor x is world y, sensor y is world -x. */
    assert_true(fabs(f[0]) < 1e-12 && fabs(f[1] - 1.8) < 1e-12 && fabs(f[2]) < 1e-12);
    hs_imu_angular_rate(w, R, g);
    assert_true(fabs(g[0]) < 1e-12 && fabs(g[1]) < 1e-12 && fabs(g[2] - 3) < 1e-12);
    /* Tangential term alpha x r. */
    hs_rot_from_axis_angle((double[3]){0, 0, 1}, 0, R);
    hs_imu_specific_force(z, (double[3]){0, 0, 2}, z, r, zero_g, R, f);
    assert_true(fabs(f[1] - 0.4) < 1e-12);
}

static void test_kin_differences(void **state)
{
    (void)state;
    struct hs_imu_kin k;
    double a[3], al[3];
    hs_imu_kin_reset(&k, (double[3]){1, 0, 0}, (double[3]){0, 0, 1});
    hs_imu_kin_update(&k, (double[3]){1.002, 0, 0}, (double[3]){0, 0, 1.01}, 0.001, a, al);
    assert_true(fabs(a[0] - 2) < 1e-9 && fabs(al[2] - 10) < 1e-9);
}

static void test_ft_hanging_mass(void **state)
{
    (void)state;
    /* A 2 kg link hangs below its joint at the origin, COM 0.3 m below, sensor 0.1 m below the
     * joint. The joint holds the link up: f1 = +m g, and no torque about the COM. */
    const double m = 2, g = 9.80665;
    double f1[3] = {0, 0, m * g}, t1[3] = {0}, c[3] = {0, 0, -0.3}, p[3] = {0, 0, -0.1};
    double R[9], f[3], t[3];
    hs_rot_from_axis_angle((double[3]){1, 0, 0}, 0, R);
    hs_ft_from_joint_wrench(f1, t1, c, p, R, f, t);
    assert_true(fabs(f[2] + m * g) < 1e-12 && fabs(f[0]) < 1e-12 && fabs(t[0]) < 1e-12);
    /* COM offset 0.05 m in x from the sensor: the load's moment about the sensor is
     * r x F = (0.05, 0, -0.2) x (0, 0, -m g) = (0, 0.05 m g, 0). */
    c[0] = 0.05;
    hs_ft_from_joint_wrench(f1, t1, c, p, R, f, t);
    assert_true(fabs(t[1] - 0.05 * m * g) < 1e-12 && fabs(t[0]) < 1e-12 && fabs(t[2]) < 1e-12);
    /* Sensor frame upside down (180° about x): force reads +m g on its z, torque flips y. */
    hs_rot_from_axis_angle((double[3]){1, 0, 0}, M_PI, R);
    hs_ft_from_joint_wrench(f1, t1, c, p, R, f, t);
    assert_true(fabs(f[2] - m * g) < 1e-9 && fabs(t[1] + 0.05 * m * g) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resting_imu_reads_reaction_to_gravity),
        cmocka_unit_test(test_spinning_imu_reads_rate_and_centripetal),
        cmocka_unit_test(test_kin_differences),
        cmocka_unit_test(test_ft_hanging_mass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
