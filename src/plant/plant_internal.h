/* Internal state of an hs_plant, shared by the files of src/plant/. Not installed. */
#ifndef HS_PLANT_INTERNAL_H
#define HS_PLANT_INTERNAL_H

#include <ode/ode.h>

#include "hilsim/delay_line.h"
#include "hilsim/imu.h"
#include "hilsim/plant.h"
#include "sensor_ops.h"

struct hs__plant_joint {
    uint32_t link;
    enum hs_joint_type type;
    dJointID joint;
    dJointFeedback *feedback; /* plant->feedback[link] */
    bool soft_stops;          /* limits beyond ±pi: enforced through the motor row */
    struct hs_plant_joint_params p;
    struct hs_joint_command slot; /* written by the command source */
    struct hs_joint_command cmd;  /* the slot after the command delay line */
    struct hs_delay_line cmd_delay;
    struct hs_actuator_state state;
    struct hs_actuator_output out; /* last motor model output */
    /* The speed-limit row ran in the last step (inside the stops): its axis and the lever from
     * the link body's centre of mass to the anchor, world frame, as ODE built its rows before
     * the step, to read the row's torque from the feedback after it. */
    bool row_check;
    double row_axis[3], row_lever[3];
    bool tick_limited; /* a velocity limit cut the torque this tick (counted once per tick) */
    struct hs_encoder encoder;
    struct hs_delay_line reading_delay;
    struct hs_joint_reading reading; /* published */
};

struct hs__plant_sensor {
    enum hs_sensor_type type;
    const struct hs__sensor_ops *ops; /* the kind's (sensor_ops.h) */
    bool active; /* set by the kind's init: it samples (e.g. a force sensor with a joint) */
    uint32_t link;
    dBodyID body;
    dJointID joint;                         /* force sensors: the joint of the link */
    const struct hs__plant_joint *actuated; /* force sensors: the plant joint there, or NULL */
    dJointFeedback *feedback;
    struct hs_pose pose; /* sensor frame in the link frame */
    struct hs_plant_sensor_params p;
    struct hs_channel channel[2];
    struct hs_imu_kin kin;
    struct hs_sensor_reading held; /* last sample, held between samples */
    double last_sample_time_s;
    struct hs_delay_line delay;
    struct hs_sensor_reading reading; /* published */
    double *values;                   /* published values (hs_plant_sensor_values) */
    uint32_t nvalues;
    void *state; /* the kind's own, allocated by its init, freed by its destroy */
};

struct hs_plant {
    struct hs_world *world;
    uint32_t body;
    const struct hs_model *model;
    int64_t tick_ns;
    double stop_gain; /* 1/s: world ERP / step, the rate a soft stop pulls a joint back */
    bool started;
    int64_t last_now_ns;
    double last_update_time_s;
    dJointFeedback *feedback; /* model->nlinks, zeroed */
    struct hs__plant_joint *joints;
    uint32_t njoints;
    struct hs__plant_sensor *sensors;
    uint32_t nsensors;
};

/* plant_actuate.c, RT-safe: after a step, notes whether the joint's speed-limit row held it
 * back (tick_limited); called after every step of a tick. */
void hs__plant_speed_row_check(struct hs__plant_joint *j);

/* plant_params.c: checks every field; names the bad one in diag. */
int hs__plant_params_check(const struct hs_model *model, const struct hs_plant_params *p,
                           struct hs_diag *diag);
bool hs__plant_is_joint(const struct hs_link *link);

#endif
