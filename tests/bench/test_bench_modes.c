/* A ros2_control URDF tells the bench which command modes a joint accepts
 * (hs__bench_command_modes): tests/model/urdf/ros2.urdf's j1 is commanded in position and
 * velocity, j2 in effort (torque), j3 is in no ros2_control block; a config that names modes
 * wins over the file. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench_internal.h"
#include "hilsim/config.h"
#include "hilsim/model.h"

#define BIT(m) HS_CFG_MODE_BIT(HS_CFG_MODE_##m)

static void test_modes_from_ros2_control(void **state)
{
    (void)state;
    char path[PATH_MAX];
    const char *src = getenv("HS_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/model/urdf/ros2.urdf", src ? src : ".");
    struct hs_model *m = NULL;
    struct hs_diag d = {0};
    assert_int_equal(hs_model_load(path, &m, &d), 0);
    static struct hs_config cfg; /* large: not on the stack */
    hs_config_defaults(&cfg);
    const struct hs_cfg_actuator *a = &cfg.actuators.defaults;
    const uint32_t all = BIT(TORQUE) | BIT(CURRENT) | BIT(VELOCITY) | BIT(POSITION);
    assert_int_equal(a->modes, all);
    const struct hs_link *j1 = &m->links[hs_model_find_link(m, "j1")],
                         *j2 = &m->links[hs_model_find_link(m, "j2")],
                         *j3 = &m->links[hs_model_find_link(m, "j3")];
    assert_int_equal(hs__bench_command_modes(a, j1), BIT(POSITION) | BIT(VELOCITY));
    assert_int_equal(hs__bench_command_modes(a, j2), BIT(TORQUE));
    assert_int_equal(hs__bench_command_modes(a, j3), all);
    struct hs_cfg_actuator narrowed = *a;
    narrowed.modes = BIT(CURRENT);
    assert_int_equal(hs__bench_command_modes(&narrowed, j1), BIT(CURRENT));
    hs_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_modes_from_ros2_control)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
