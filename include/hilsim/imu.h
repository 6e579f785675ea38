/* IMU math (no ODE): specific force and angular rate at a sensor point of a rigid link, in the
 * sensor frame.
 *
 * Acceleration method. ODE integrates velocities semi-implicitly: v(t+h) = v(t) + h · a, with a
 * the acceleration the solver computed for the step. Differencing the centre-of-mass velocity
 * and the angular velocity over the update interval therefore recovers exactly the (mean)
 * acceleration the solver applied, with no lag beyond the interval itself. The sensor point's
 * acceleration is then assembled as a rigid-body field,
 *     a_s = a_com + alpha x r + w x (w x r),   r = sensor point - centre of mass (world),
 * with the centripetal term taken at the current w. Differencing the sensor point's own velocity
 * instead would take the chord of a rotating vector (an error of order w·h, and a lag of h/2).
 * The specific force is a_s - g: a resting sensor reads the reaction to gravity, +g upwards.
 *
 * Ownership: plain caller-owned storage, no allocation. */
#ifndef HILSIM_IMU_H
#define HILSIM_IMU_H

#include <stdbool.h>

/* The kinematic memory of one link: its previous centre-of-mass velocity and angular velocity. */
struct hs_imu_kin {
    double v_com[3], w[3];
    bool primed;
};

/* RT-safe: a = (v_com - prev) / dt and alpha = (w - prev) / dt (world frame). The first call
 * after hs_imu_kin_reset with primed = false returns zero accelerations. */
void hs_imu_kin_reset(struct hs_imu_kin *kin, const double v_com[3], const double w[3]);
void hs_imu_kin_update(struct hs_imu_kin *kin, const double v_com[3], const double w[3],
                       double dt_s, double ret_a_com[3], double ret_alpha[3]);

/* RT-safe. All vectors in the world frame except the results. R_ws maps sensor-frame vectors to
 * the world (row-major), r the vector from the centre of mass to the sensor point. */
void hs_imu_specific_force(const double a_com[3], const double alpha[3], const double w[3],
                           const double r[3], const double gravity[3], const double R_ws[9],
                           double ret_f[3]);
void hs_imu_angular_rate(const double w[3], const double R_ws[9], double ret_w[3]);

#endif
