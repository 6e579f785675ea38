#include "hilsim/pose.h"

#include <math.h>
#include <string.h>

void hs_pose_identity(struct hs_pose *ret_pose)
{
    memset(ret_pose, 0, sizeof *ret_pose);
    ret_pose->R[0] = ret_pose->R[4] = ret_pose->R[8] = 1.0;
}

void hs_rot_mul(const double a[9], const double b[9], double ret[9])
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            ret[r * 3 + c] = a[r * 3] * b[c] + a[r * 3 + 1] * b[3 + c] + a[r * 3 + 2] * b[6 + c];
}

void hs_rot_transpose(const double a[9], double ret[9])
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            ret[c * 3 + r] = a[r * 3 + c];
}

void hs_rot_apply(const double R[9], const double v[3], double ret[3])
{
    for (int r = 0; r < 3; r++)
        ret[r] = R[r * 3] * v[0] + R[r * 3 + 1] * v[1] + R[r * 3 + 2] * v[2];
}

void hs_rot_apply_transpose(const double R[9], const double v[3], double ret[3])
{
    for (int c = 0; c < 3; c++)
        ret[c] = R[c] * v[0] + R[3 + c] * v[1] + R[6 + c] * v[2];
}

void hs_vec_cross(const double a[3], const double b[3], double ret[3])
{
    ret[0] = a[1] * b[2] - a[2] * b[1];
    ret[1] = a[2] * b[0] - a[0] * b[2];
    ret[2] = a[0] * b[1] - a[1] * b[0];
}

void hs_pose_mul(const struct hs_pose *a, const struct hs_pose *b, struct hs_pose *ret)
{
    hs_rot_mul(a->R, b->R, ret->R);
    hs_rot_apply(a->R, b->p, ret->p);
    for (int i = 0; i < 3; i++)
        ret->p[i] += a->p[i];
}

void hs_pose_inverse(const struct hs_pose *a, struct hs_pose *ret)
{
    hs_rot_transpose(a->R, ret->R);
    hs_rot_apply(ret->R, a->p, ret->p);
    for (int i = 0; i < 3; i++)
        ret->p[i] = -ret->p[i];
}

void hs_pose_apply(const struct hs_pose *a, const double v[3], double ret[3])
{
    hs_rot_apply(a->R, v, ret);
    for (int i = 0; i < 3; i++)
        ret[i] += a->p[i];
}

void hs_rot_from_axis_angle(const double axis[3], double angle_rad, double ret_R[9])
{
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (n == 0.0) {
        memset(ret_R, 0, 9 * sizeof *ret_R);
        ret_R[0] = ret_R[4] = ret_R[8] = 1.0;
        return;
    }
    double x = axis[0] / n, y = axis[1] / n, z = axis[2] / n;
    double c = cos(angle_rad), s = sin(angle_rad), t = 1.0 - c;
    ret_R[0] = t * x * x + c;
    ret_R[1] = t * x * y - s * z;
    ret_R[2] = t * x * z + s * y;
    ret_R[3] = t * x * y + s * z;
    ret_R[4] = t * y * y + c;
    ret_R[5] = t * y * z - s * x;
    ret_R[6] = t * x * z - s * y;
    ret_R[7] = t * y * z + s * x;
    ret_R[8] = t * z * z + c;
}

void hs_rot_to_quat(const double R[9], double ret_q[4])
{
    /* Shepperd's method: pick the largest diagonal term to stay well conditioned. */
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = sqrt(tr + 1.0) * 2;
        ret_q[0] = 0.25 * s, ret_q[1] = (R[7] - R[5]) / s, ret_q[2] = (R[2] - R[6]) / s,
        ret_q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = sqrt(1.0 + R[0] - R[4] - R[8]) * 2;
        ret_q[0] = (R[7] - R[5]) / s, ret_q[1] = 0.25 * s, ret_q[2] = (R[1] + R[3]) / s,
        ret_q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = sqrt(1.0 + R[4] - R[0] - R[8]) * 2;
        ret_q[0] = (R[2] - R[6]) / s, ret_q[1] = (R[1] + R[3]) / s, ret_q[2] = 0.25 * s,
        ret_q[3] = (R[5] + R[7]) / s;
    } else {
        double s = sqrt(1.0 + R[8] - R[0] - R[4]) * 2;
        ret_q[0] = (R[3] - R[1]) / s, ret_q[1] = (R[2] + R[6]) / s, ret_q[2] = (R[5] + R[7]) / s,
        ret_q[3] = 0.25 * s;
    }
}
