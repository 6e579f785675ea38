#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "hilsim/diag.h"
#include "hilsim/pose.h"

static void test_axis_angle_quarter_turn_about_z(void **state)
{
    (void)state;
    double R[9], v[3], out[3];
    hs_rot_from_axis_angle((double[3]){0, 0, 2}, M_PI / 2, R);
    v[0] = 1, v[1] = 0, v[2] = 0;
    hs_rot_apply(R, v, out);
    assert_true(fabs(out[0]) < 1e-12 && fabs(out[1] - 1) < 1e-12 && fabs(out[2]) < 1e-12);
}

static void test_pose_inverse_round_trip(void **state)
{
    (void)state;
    struct hs_pose a, inv, id;
    hs_rot_from_axis_angle((double[3]){1, 2, 3}, 0.7, a.R);
    a.p[0] = 0.3, a.p[1] = -1, a.p[2] = 2;
    hs_pose_inverse(&a, &inv);
    hs_pose_mul(&a, &inv, &id);
    for (int i = 0; i < 9; i++)
        assert_true(fabs(id.R[i] - ((i % 4) == 0 ? 1.0 : 0.0)) < 1e-12);
    for (int i = 0; i < 3; i++)
        assert_true(fabs(id.p[i]) < 1e-12);
}

/* The quaternion of an axis-angle rotation is (cos a/2, sin a/2 axis), up to sign; the rotations
 * are picked so that each of Shepperd's four branches (trace, then the largest diagonal term of
 * x, y or z) is taken at least once. */
static void test_rot_to_quat_every_branch(void **state)
{
    (void)state;
    static const double cases[][4] = {
        {0, 0, 1, 0.3}, {1, 0, 0, 3.0}, {0, 1, 0, 3.1}, {0, 0, 1, 3.14}, {1, 2, 3, -2.9},
    };
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const double *c = cases[k];
        double n = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]), R[9], q[4];
        hs_rot_from_axis_angle(c, c[3], R);
        hs_rot_to_quat(R, q);
        double want[4] = {cos(c[3] / 2), sin(c[3] / 2) * c[0] / n, sin(c[3] / 2) * c[1] / n,
                          sin(c[3] / 2) * c[2] / n};
        double sign =
            q[0] * want[0] + q[1] * want[1] + q[2] * want[2] + q[3] * want[3] < 0 ? -1 : 1;
        for (int i = 0; i < 4; i++)
            assert_true(fabs(sign * q[i] - want[i]) < 1e-12);
    }
}

static void test_diag_format_names_file_line_column(void **state)
{
    (void)state;
    struct hs_diag d;
    char buf[256];
    int r = hs_diag_set(&d, 22, "m.wrl", 3, 7, "expected %s", "'{'");
    assert_int_equal(r, -22);
    hs_diag_format(&d, buf, sizeof buf);
    assert_string_equal(buf, "m.wrl:3:7: expected '{'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axis_angle_quarter_turn_about_z),
        cmocka_unit_test(test_pose_inverse_round_trip),
        cmocka_unit_test(test_rot_to_quat_every_branch),
        cmocka_unit_test(test_diag_format_names_file_line_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
