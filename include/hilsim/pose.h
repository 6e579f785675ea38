/* Rigid transforms. Rotation matrices are row-major 3x3: R[r*3+c].
 * A pose maps child coordinates to parent coordinates: x_parent = R x_child + p. */
#ifndef HILSIM_POSE_H
#define HILSIM_POSE_H

struct hs_pose {
    double p[3]; /* m */
    double R[9]; /* row-major, orthonormal */
};

/* All RT-safe, pure functions. */
void hs_pose_identity(struct hs_pose *ret_pose);
/* ret = a * b (apply b first, then a). ret may alias neither a nor b. */
void hs_pose_mul(const struct hs_pose *a, const struct hs_pose *b, struct hs_pose *ret);
void hs_pose_inverse(const struct hs_pose *a, struct hs_pose *ret);
void hs_pose_apply(const struct hs_pose *a, const double v[3], double ret[3]);
/* R from a VRML axis-angle rotation (axis need not be unit; a zero axis gives identity). */
void hs_rot_from_axis_angle(const double axis[3], double angle_rad, double ret_R[9]);
void hs_rot_mul(const double a[9], const double b[9], double ret[9]);
void hs_rot_transpose(const double a[9], double ret[9]);
void hs_rot_apply(const double R[9], const double v[3], double ret[3]);
void hs_rot_apply_transpose(const double R[9], const double v[3], double ret[3]);
/* The unit quaternion (w, x, y, z) of R, by Shepperd's method (well conditioned for every R):
 * what the sim CSV and the recording log for root orientations. */
void hs_rot_to_quat(const double R[9], double ret_q[4]);
/* ret = a x b; ret must not alias a or b. */
void hs_vec_cross(const double a[3], const double b[3], double ret[3]);

#endif
