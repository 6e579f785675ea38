/* URDF mimic joints (hs_link.mimics): q_f = multiplier * q_l + offset.
 *
 * Each follower gets a one-axis ODE joint motor (AMotor for a hinge, LMotor for a slider)
 * between the same two bodies and along the same axis as its joint, with no force bound: a
 * mechanical coupling (gripper linkage, gear) has none. Every step, before ODE solves, the
 * motor's target velocity is the leader's velocity times the multiplier plus the whole position
 * error over one step, so the error left after a step is what the leader's acceleration adds
 * within it (multiplier * ddq_l * dt², 1e-5 rad at 10 rad/s² and 1 ms). ODE solves the motor
 * with the contacts and joints, so a load on the follower is carried by the coupling. As in
 * Gazebo's mimic handling, the leader does not feel the follower's inertia through the
 * coupling; the follower's own actuator torque is overridden by it. */
#include <errno.h>
#include <stdlib.h>

#include "world_internal.h"

int hs__world_mimics_build(struct hs_world *w)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < w->nbodies; b++)
        for (uint32_t i = 0; i < w->bodies[b].model->nlinks; i++)
            n += w->bodies[b].model->links[i].mimics && w->bodies[b].links[i].joint;
    w->mimics = calloc(n + 1, sizeof *w->mimics);
    if (!w->mimics)
        return -ENOMEM;
    for (uint32_t b = 0; b < w->nbodies; b++) {
        const struct hs_model *m = w->bodies[b].model;
        for (uint32_t i = 0; i < m->nlinks; i++) {
            const struct hs_link *l = &m->links[i];
            struct hs__world_link *f = &w->bodies[b].links[i];
            if (!l->mimics || !f->joint)
                continue;
            struct hs__world_link *lead = &w->bodies[b].links[l->mimic_of];
            if (!lead->joint || lead->type != f->type ||
                (f->type != HS_JOINT_ROTATE && f->type != HS_JOINT_SLIDE))
                return -EINVAL;
            dBodyID b1 = dJointGetBody(f->joint, 0), b2 = dJointGetBody(f->joint, 1);
            dVector3 a;
            dJointID j;
            if (f->type == HS_JOINT_ROTATE) {
                dJointGetHingeAxis(f->joint, a);
                j = dJointCreateAMotor(w->world, 0);
                dJointAttach(j, b1, b2);
                dJointSetAMotorMode(j, dAMotorUser);
                dJointSetAMotorNumAxes(j, 1);
                dJointSetAMotorAxis(j, 0, 1, a[0], a[1], a[2]);
                dJointSetAMotorParam(j, dParamFMax, dInfinity);
            } else {
                dJointGetSliderAxis(f->joint, a);
                j = dJointCreateLMotor(w->world, 0);
                dJointAttach(j, b1, b2);
                dJointSetLMotorNumAxes(j, 1);
                dJointSetLMotorAxis(j, 0, 1, a[0], a[1], a[2]);
                dJointSetLMotorParam(j, dParamFMax, dInfinity);
            }
            w->mimics[w->nmimics++] = (struct hs__world_mimic){
                .motor = j,
                .leader = lead,
                .follower = f,
                .multiplier = l->mimic_multiplier,
                .offset = l->mimic_offset,
            };
        }
    }
    return 0;
}

void hs__world_mimics_drive(struct hs_world *w)
{
    for (uint32_t k = 0; k < w->nmimics; k++) {
        const struct hs__world_mimic *c = &w->mimics[k];
        double err = c->multiplier * c->leader->q + c->offset - c->follower->q;
        double v = c->multiplier * c->leader->dq + err / w->params.step_s;
        if (c->follower->type == HS_JOINT_ROTATE)
            dJointSetAMotorParam(c->motor, dParamVel, v);
        else
            dJointSetLMotorParam(c->motor, dParamVel, v);
    }
}
