#include "hilsim/imu.h"

#include "hilsim/pose.h"

void hs_imu_kin_reset(struct hs_imu_kin *kin, const double v_com[3], const double w[3])
{
    for (int i = 0; i < 3; i++) {
        kin->v_com[i] = v_com[i];
        kin->w[i] = w[i];
    }
    kin->primed = true;
}

void hs_imu_kin_update(struct hs_imu_kin *kin, const double v_com[3], const double w[3],
                       double dt_s, double ret_a_com[3], double ret_alpha[3])
{
    for (int i = 0; i < 3; i++) {
        bool ok = kin->primed && dt_s > 0.0;
        ret_a_com[i] = ok ? (v_com[i] - kin->v_com[i]) / dt_s : 0.0;
        ret_alpha[i] = ok ? (w[i] - kin->w[i]) / dt_s : 0.0;
        kin->v_com[i] = v_com[i];
        kin->w[i] = w[i];
    }
    kin->primed = true;
}

void hs_imu_specific_force(const double a_com[3], const double alpha[3], const double w[3],
                           const double r[3], const double gravity[3], const double R_ws[9],
                           double ret_f[3])
{
    double ar[3], wr[3], wwr[3], a[3];
    hs_vec_cross(alpha, r, ar);
    hs_vec_cross(w, r, wr);
    hs_vec_cross(w, wr, wwr);
    for (int i = 0; i < 3; i++)
        a[i] = a_com[i] + ar[i] + wwr[i] - gravity[i];
    hs_rot_apply_transpose(R_ws, a, ret_f);
}

void hs_imu_angular_rate(const double w[3], const double R_ws[9], double ret_w[3])
{
    hs_rot_apply_transpose(R_ws, w, ret_w);
}
