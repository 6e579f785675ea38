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
        cmocka_unit_test(test_diag_format_names_file_line_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
