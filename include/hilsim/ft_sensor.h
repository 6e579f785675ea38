/* Force-torque sensor math (no ODE): the joint constraint wrench moved into the sensor frame.
 *
 * Sign convention, as Choreonoid's ODE plugin (ODEBody::updateForceSensors reads the feedback on
 * the parent side, f2/t2, of the joint of the sensor's link): the sensor reads the wrench that
 * the sensor's link (with everything beyond it) exerts on its parent through the joint. A mass
 * hanging below the sensor reads (0, 0, -m g) in a world-aligned sensor frame (the load pulls
 * down); a foot standing on the floor reads +M g upwards in an ankle sensor.
 *
 * ODE reports, per joint, f1/t1: the force and torque (about body 1's centre of mass, world
 * frame) that the joint applies to body 1. The wrench on the parent is its negative (ODE's joint
 * rows conserve momentum), so about the sensor point p:
 *     f = -f1,   tau = -(t1 + (c1 - p) x f1),
 * and in the sensor frame f_s = Rᵀ f, tau_s = Rᵀ tau. On an actuated joint the wrench on the link
 * includes the actuator's torque along the axis (the plant adds it: ODE's feedback holds only
 * constraint rows, not efforts added with dJointAddHingeTorque). */
#ifndef HILSIM_FT_SENSOR_H
#define HILSIM_FT_SENSOR_H

/* RT-safe. f_link, t_link: force and torque (about c_link) the joint applies to the sensor's
 * link, world frame. c_link: that link's centre of mass, p: sensor point, R_ws: sensor frame in
 * the world (row-major). */
void hs_ft_from_joint_wrench(const double f_link[3], const double t_link[3], const double c_link[3],
                             const double p[3], const double R_ws[9], double ret_f[3],
                             double ret_t[3]);

#endif
