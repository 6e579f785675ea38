#include "hilsim/ft_sensor.h"

#include "hilsim/pose.h"

void hs_ft_from_joint_wrench(const double f_link[3], const double t_link[3], const double c_link[3],
                             const double p[3], const double R_ws[9], double ret_f[3],
                             double ret_t[3])
{
    double d[3] = {c_link[0] - p[0], c_link[1] - p[1], c_link[2] - p[2]};
    double m[3] = {d[1] * f_link[2] - d[2] * f_link[1], d[2] * f_link[0] - d[0] * f_link[2],
                   d[0] * f_link[1] - d[1] * f_link[0]};
    double f[3], t[3];
    for (int i = 0; i < 3; i++) {
        f[i] = -f_link[i];
        t[i] = -(t_link[i] + m[i]);
    }
    hs_rot_apply_transpose(R_ws, f, ret_f);
    hs_rot_apply_transpose(R_ws, t, ret_t);
}
