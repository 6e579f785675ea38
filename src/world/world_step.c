/* The per-step path and read-backs. Everything here is RT-safe: no allocation, bounded loops
 * over preallocated arrays. Body indices and link indices are trusted (callers validated them
 * at configuration time); see hs_world_body_count / hs_model nlinks. */
#include <math.h>
#include <setjmp.h>
#include <string.h>

#include "world_internal.h"

static double wrap_pi(double a)
{
    /* Into (-pi, pi]; one correction suffices since both raw angles lie in [-pi, pi]. */
    if (a > M_PI)
        a -= 2 * M_PI;
    else if (a <= -M_PI)
        a += 2 * M_PI;
    return a;
}

void hs__world_read_joints(struct hs_world *w, bool reset_unwrap)
{
    for (uint32_t i = 0; i < w->nactuated; i++) {
        struct hs__world_link *l = w->actuated[i];
        if (l->type == HS_JOINT_ROTATE) {
            double a = dJointGetHingeAngle(l->joint);
            if (reset_unwrap)
                l->q = l->q_init;
            else
                l->q += wrap_pi(a - l->q_wrapped_prev);
            l->q_wrapped_prev = a;
            l->dq = dJointGetHingeAngleRate(l->joint);
        } else {
            l->q = dJointGetSliderPosition(l->joint);
            l->dq = dJointGetSliderPositionRate(l->joint);
        }
    }
}

int hs_world_step(struct hs_world *w)
{
    if (w->fault_rc)
        return w->fault_rc;
    /* ODE clears force accumulators after each step, so efforts are re-applied every step. */
    for (uint32_t i = 0; i < w->nactuated; i++) {
        struct hs__world_link *l = w->actuated[i];
        if (l->type == HS_JOINT_ROTATE)
            dJointAddHingeTorque(l->joint, l->effort);
        else
            dJointAddSliderForce(l->joint, l->effort);
    }
    hs__world_mimics_drive(w);
    for (uint32_t i = 0; i < w->nrotors; i++)
        dJointSetAMotorParam(w->rotors[i].motor, dParamVel, w->rotors[i].link->dq);
    hs_world_ode_step_begin(w);
    w->nsteps++;
    /* ODE's error and debug handlers come back here instead of aborting (ode_init.c). Nothing
     * below is kept in locals across the jump: the world's fields carry the state. */
    if (setjmp(w->step_jmp)) {
        hs__ode_leave_step();
        return w->fault_rc;
    }
    hs__ode_enter_step(w);
    hs__world_collide(w);
    if (w->sizing_contacts) /* create's sizing step only (world_reserve.c) */
        hs__world_reserve_fill(w);
    hs__world_adapt_iterations(w); /* from this step's contacts and the bodies' motion */
    if (w->params.solver == HS_SOLVER_STANDARD) {
        dWorldStep(w->world, w->params.step_s);
    } else {
        /* Quick-step shuffles its rows at its 8th iteration from ODE's global generator: from
         * the same seed, every step shuffles alike (hilsim/world.h, quick_same_shuffle). */
        if (w->params.quick_same_shuffle)
            dRandSetSeed(0);
        dWorldQuickStep(w->world, w->params.step_s);
    }
    hs__ode_leave_step();
    dJointGroupEmpty(w->contact_group); /* the feedback buffers are ours: still readable */
    w->time_s += w->params.step_s;
    hs__world_read_joints(w, false);
    hs__world_health_update(w);
    return hs__world_guard_check(w);
}

void hs_world_set_joint_effort(struct hs_world *w, uint32_t body, uint32_t link, double effort)
{
    w->bodies[body].links[link].effort = effort;
}

double hs_world_joint_effort(const struct hs_world *w, uint32_t body, uint32_t link)
{
    return w->bodies[body].links[link].effort;
}

void hs_world_set_track_speed(struct hs_world *w, uint32_t body, uint32_t link, double speed_mps)
{
    w->bodies[body].links[link].track_speed_mps = speed_mps;
}

double hs_world_time(const struct hs_world *w)
{
    return w->time_s;
}

double hs_world_joint_position(const struct hs_world *w, uint32_t body, uint32_t link)
{
    return w->bodies[body].links[link].q;
}

double hs_world_joint_velocity(const struct hs_world *w, uint32_t body, uint32_t link)
{
    return w->bodies[body].links[link].dq;
}

void hs_world_link_pose(const struct hs_world *w, uint32_t body, uint32_t link,
                        struct hs_pose *ret_pose)
{
    const struct hs__world_link *l = &w->bodies[body].links[link];
    if (!l->body) {
        *ret_pose = l->static_pose;
        return;
    }
    const dReal *p = dBodyGetPosition(l->body), *R = dBodyGetRotation(l->body);
    struct hs_pose b;
    for (int r = 0; r < 3; r++) {
        b.p[r] = p[r];
        for (int k = 0; k < 3; k++)
            b.R[r * 3 + k] = R[r * 4 + k];
    }
    hs_pose_mul(&b, &l->in_body, ret_pose);
}

void hs_world_link_velocity(const struct hs_world *w, uint32_t body, uint32_t link, double ret_v[3],
                            double ret_w[3])
{
    const struct hs__world_link *l = &w->bodies[body].links[link];
    if (!l->body) {
        memset(ret_v, 0, 3 * sizeof *ret_v);
        memset(ret_w, 0, 3 * sizeof *ret_w);
        return;
    }
    const dReal *v = dBodyGetLinearVel(l->body), *om = dBodyGetAngularVel(l->body);
    const dReal *R = dBodyGetRotation(l->body);
    const double *d = l->in_body.p;
    double c[3];
    for (int r = 0; r < 3; r++)
        c[r] = R[r * 4] * d[0] + R[r * 4 + 1] * d[1] + R[r * 4 + 2] * d[2];
    /* Origin = centre of mass + c, so v_origin = v_com + w × c. */
    ret_v[0] = v[0] + (om[1] * c[2] - om[2] * c[1]);
    ret_v[1] = v[1] + (om[2] * c[0] - om[0] * c[2]);
    ret_v[2] = v[2] + (om[0] * c[1] - om[1] * c[0]);
    for (int k = 0; k < 3; k++)
        ret_w[k] = om[k];
}

uint32_t hs_world_contact_count(const struct hs_world *w)
{
    return w->ncontacts;
}

uint32_t hs_world_colliding_pairs(const struct hs_world *w)
{
    return w->npairs;
}

uint32_t hs_world_body_count(const struct hs_world *w)
{
    return w->nbodies;
}

const struct hs_model *hs_world_body_model(const struct hs_world *w, uint32_t body)
{
    return w->bodies[body].model;
}

const struct hs_world_params *hs_world_params(const struct hs_world *w)
{
    return &w->params;
}

void *hs_world_ode_body(const struct hs_world *w, uint32_t body, uint32_t link)
{
    return w->bodies[body].links[link].body;
}

bool hs_world_body_is_static(const struct hs_world *w, uint32_t body)
{
    return w->bodies[body].is_static;
}

void *hs_world_ode_joint(const struct hs_world *w, uint32_t body, uint32_t link)
{
    return w->bodies[body].links[link].joint;
}

void *hs_world_ode_world(const struct hs_world *w)
{
    return w->world;
}

void *hs_world_ode_space(const struct hs_world *w)
{
    return w->space;
}

void *hs_world_ode_contact_group(const struct hs_world *w)
{
    return w->contact_group;
}

void hs_world_ode_step_begin(struct hs_world *w)
{
    w->ncontacts = 0;
    w->npairs = 0;
    w->step_depth = 0;
    w->nfeedback = 0;
}

void hs_world_ode_near_callback(void *world, void *geom1, void *geom2)
{
    hs__world_near_callback(world, geom1, geom2);
}

uint32_t hs_world_mass_fixups(const struct hs_world *w)
{
    return w->mass_fixups;
}

void hs_world_link_com(const struct hs_world *w, uint32_t body, uint32_t link, double ret_com[3])
{
    memcpy(ret_com, w->bodies[body].links[link].com, 3 * sizeof *ret_com);
}

uint32_t hs_world_link_body_link(const struct hs_world *w, uint32_t body, uint32_t link)
{
    return w->bodies[body].links[link].body_link;
}

uint32_t hs_world_merged_links(const struct hs_world *w)
{
    return w->merged_links;
}

bool hs_world_geom_of_link(const void *geom, uint32_t body, uint32_t link)
{
    const struct hs__world_link *l = dGeomGetData((dGeomID)geom);
    return l && l->owner->index == body && l->link_index == link;
}
