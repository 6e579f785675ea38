#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/pose.h"
#include "world/slope_scene.h"

void slope_place(struct hs_world_body_spec spec[2], double th, double lift_m, double ret_down[3])
{
    const double c = cos(th), s = sin(th);
    const double R[9] = {c, 0, s, 0, 1, 0, -s, 0, c};
    spec[0].is_static = true;
    memcpy(spec[0].root_pose.R, R, sizeof R);
    memcpy(spec[1].root_pose.R, R, sizeof R);
    const double up[3] = {0, 0, lift_m};
    hs_rot_apply(R, up, spec[1].root_pose.p);
    ret_down[0] = c, ret_down[1] = 0, ret_down[2] = -s; /* the slope's x in the world */
}

void slope_slide(struct hs_world *w, const double down[3], double *ret_travel, double *ret_a)
{
    double x[3];
    for (int i = 0, k = 0; i <= 1200; i++) {
        if (i == 200 || i == 700 || i == 1200) {
            struct hs_pose ps;
            hs_world_link_pose(w, 1, 0, &ps);
            x[k++] = ps.p[0] * down[0] + ps.p[1] * down[1] + ps.p[2] * down[2];
        }
        assert_int_equal(hs_world_step(w), 0);
    }
    *ret_travel = x[2] - x[0];
    *ret_a = (x[2] - 2 * x[1] + x[0]) / 0.25;
}
