/* The per-tick sensing path: joints and encoders, then every active sensor through its kind's
 * update op (src/plant/sensors/, one file per kind of hilsim/sensor_kinds.h), with the steps
 * the kinds share: the sensor frame, the IMU kinematics, the error model and the delay line.
 * RT-safe: no allocation; O(joints + sensors) plus what each kind bounds per tick. */
#include <string.h>

#include "plant_internal.h"
#include "hilsim/pose.h"

/* The joint's constraint torque (force for sliders) along its axis on the link, from ODE's
 * feedback: t1 is about the link body's centre of mass, so move it to the anchor first. With
 * the motor row driving, that is the motor's torque (plus a stop's, when one is hit). */
static double axial_constraint_effort(const struct hs__plant_joint *j, dBodyID body)
{
    const dJointFeedback *fb = j->feedback;
    dVector3 axis;
    if (j->type == HS_JOINT_SLIDE) {
        dJointGetSliderAxis(j->joint, axis);
        return axis[0] * fb->f1[0] + axis[1] * fb->f1[1] + axis[2] * fb->f1[2];
    }
    dVector3 anchor;
    dJointGetHingeAxis(j->joint, axis);
    dJointGetHingeAnchor(j->joint, anchor);
    const dReal *c = dBodyGetPosition(body);
    double d[3] = {c[0] - anchor[0], c[1] - anchor[1], c[2] - anchor[2]}, m[3];
    double f[3] = {fb->f1[0], fb->f1[1], fb->f1[2]};
    hs_vec_cross(d, f, m);
    double t = 0;
    for (int k = 0; k < 3; k++)
        t += axis[k] * (fb->t1[k] + m[k]);
    return t;
}

static void update_joint(struct hs_plant *pl, struct hs__plant_joint *j, int64_t now_ns)
{
    struct hs_joint_reading r;
    struct hs_encoder_reading e;
    r.q = hs_world_joint_position(pl->world, pl->body, j->link);
    r.dq = hs_world_joint_velocity(pl->world, pl->body, j->link);
    r.torque = j->out.motor_torque;
    if (j->out.ode_motor_drives)
        r.torque = axial_constraint_effort(j, dJointGetBody(j->joint, 0));
    r.current = hs_actuator_torque_to_current(&j->p.actuator, r.torque);
    hs_encoder_update(&j->encoder, r.q, &e);
    r.encoder_count = e.count;
    r.encoder_velocity = e.velocity;
    r.encoder_position = e.position;
    r.time_ns = now_ns;
    j->reading = *(const struct hs_joint_reading *)hs_delay_line_push(&j->reading_delay, &r);
}

void hs__plant_sensor_frame(struct hs_plant *pl, const struct hs__plant_sensor *s, double R_ws[9],
                            double p_ws[3])
{
    struct hs_pose link;
    hs_world_link_pose(pl->world, pl->body, s->link, &link);
    hs_rot_mul(link.R, s->pose.R, R_ws);
    hs_pose_apply(&link, s->pose.p, p_ws);
}

int hs__plant_imu_init(struct hs_plant *pl, struct hs__plant_sensor *s)
{
    (void)pl;
    /* On a static link (a fixed root) the IMU is at rest: it feels gravity only. */
    s->active = true;
    if (s->body)
        hs_imu_kin_reset(&s->kin, dBodyGetLinearVel(s->body), dBodyGetAngularVel(s->body));
    return 0;
}

void hs__plant_imu_sample(struct hs_plant *pl, struct hs__plant_sensor *s, double dt_s, bool gyro,
                          double ret[3])
{
    double R[9], p[3], a_com[3] = {0}, alpha[3] = {0}, r[3], wv[3] = {0}, c[3];
    hs__plant_sensor_frame(pl, s, R, p);
    memcpy(c, p, sizeof c); /* a static link (fixed root): at rest, r = 0 */
    if (s->body) {
        const dReal *w = dBodyGetAngularVel(s->body), *cb = dBodyGetPosition(s->body);
        hs_imu_kin_update(&s->kin, dBodyGetLinearVel(s->body), w, dt_s, a_com, alpha);
        for (int k = 0; k < 3; k++)
            wv[k] = w[k], c[k] = cb[k];
    }
    if (gyro) {
        hs_imu_angular_rate(wv, R, ret);
        return;
    }
    for (int k = 0; k < 3; k++)
        r[k] = p[k] - c[k];
    hs_imu_specific_force(a_com, alpha, wv, r, hs_world_params(pl->world)->gravity, R, ret);
}

const char *const hs__plant_imu_fields[3] = {"x", "y", "z"};

uint32_t hs__plant_imu_nvalues(const struct hs_sensor *ms)
{
    (void)ms;
    return 3;
}

void hs__plant_imu_defaults(const struct hs_sensor *ms, struct hs_plant_sensor_params *sp)
{
    hs__plant_range_from_model(ms->max, sp->channel[0].range);
}

void hs__plant_imu_update(struct hs_plant *pl, struct hs__plant_sensor *s,
                          const struct hs__sense_tick *t, bool gyro)
{
    double v[3] = {0, 0, 0};
    hs__plant_imu_sample(pl, s, t->dt_s, gyro, v);
    if (t->tick % s->p.rate_divider == 0)
        hs__plant_sensor_hold(s, v, NULL, t);
    hs__plant_sensor_publish(s);
}

void hs__plant_sensor_hold(struct hs__plant_sensor *s, const double v[3], const double t[3],
                           const struct hs__sense_tick *tk)
{
    double sample_dt = tk->now_s - s->last_sample_time_s;
    s->last_sample_time_s = tk->now_s;
    hs_channel_apply(&s->channel[0], v, sample_dt, s->held.value);
    if (t)
        hs_channel_apply(&s->channel[1], t, sample_dt, s->held.torque);
    s->held.samples++;
    s->held.time_ns = tk->now_ns;
}

void hs__plant_sensor_publish(struct hs__plant_sensor *s)
{
    s->reading = *(const struct hs_sensor_reading *)hs_delay_line_push(&s->delay, &s->held);
}

void hs_plant_update_sensors(struct hs_plant *pl, int64_t now_ns, uint64_t tick)
{
    double now_s = hs_world_time(pl->world);
    struct hs__sense_tick t = {
        .now_ns = now_ns, .now_s = now_s, .dt_s = now_s - pl->last_update_time_s, .tick = tick};
    pl->last_update_time_s = now_s;
    for (uint32_t i = 0; i < pl->njoints; i++) {
        struct hs__plant_joint *j = &pl->joints[i];
        hs__plant_speed_row_check(j); /* the tick's last step */
        j->state.velocity_limits += j->tick_limited;
        j->tick_limited = false;
        update_joint(pl, j, now_ns);
    }
    for (uint32_t i = 0; i < pl->nsensors; i++)
        if (pl->sensors[i].active)
            pl->sensors[i].ops->update(pl, &pl->sensors[i], &t);
}
