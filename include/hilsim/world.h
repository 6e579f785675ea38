/* An ODE world built from body models: one dynamic body per link (frames at the centre of mass,
 * as the Choreonoid ODE plugin does), hinge/slider/fixed joints, a free or fixed root, static
 * environments as body-less geoms, ExtraJoints as ball/piston joints, crawler tracks as contact
 * surface velocity.
 *
 * Lifecycle: hs_world_create() (init only: allocates, builds, warms up) -> hs_world_step() per
 * physics step (RT-safe: no allocation) -> hs_world_destroy().
 * ODE is used from one thread only: the thread that creates the world must be the one that
 * steps it (ODE here is built without TLS; see shared notes/ode.md). */
#ifndef HILSIM_WORLD_H
#define HILSIM_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/diag.h"
#include "hilsim/model.h"
#include "hilsim/pose.h"

enum hs_solver { HS_SOLVER_QUICK, HS_SOLVER_STANDARD, HS_SOLVER_MAX };

struct hs_world_params {
    double step_s;     /* ODE step, s (1e-5 .. 0.1) */
    uint32_t substeps; /* ODE steps per tick (1 .. 100); used by callers, not by step() */
    enum hs_solver solver;
    uint32_t quick_iterations;              /* dWorldQuickStep iterations (1 .. 1000) */
    double gravity[3];                      /* m/s² */
    double erp, cfm;                        /* global */
    double friction;                        /* Coulomb mu, >= 0 (INFINITY allowed: dInfinity) */
    double bounce;                          /* restitution 0..1 */
    double bounce_min_vel;                  /* m/s */
    double contact_erp, contact_cfm;        /* soft contact */
    double surface_layer;                   /* m, dWorldSetContactSurfaceLayer */
    uint32_t max_contacts;                  /* per geom pair (1 .. 64) */
    double linear_damping, angular_damping; /* dWorldSetDamping */
    bool self_collision;   /* collide links of one body that are not jointed to each other */
    bool contactless;      /* Odin's mode: detect and report colliding pairs, make no contacts */
    uint32_t warmup_steps; /* steps run (and undone) at create time so ODE allocates its arena */
};

/* Fills documented defaults: 1 ms, 1 substep, quick 20, g = (0,0,-9.80665), ERP 0.2, CFM 1e-10,
 * mu 1, no bounce, contact ERP 0.2 / CFM 1e-5, surface layer 1e-4, 4 contacts, no damping.
 * Also: bounce_min_vel 0.01 m/s, self-collision off, contacts on, 10 warm-up steps. */
void hs_world_params_default(struct hs_world_params *ret_params);

struct hs_world_body_spec {
    const struct hs_model *model; /* borrowed: must outlive the world */
    struct hs_pose root_pose;     /* root link frame in the world (at zero joint position for a
                                     rotate/slide root); see hs_world_spec_default */
    bool is_static;               /* environment: geoms only, no bodies */
    const double *q0;             /* per link index (nlinks) initial joint position, or NULL */
    const double *dq0;            /* per link index initial joint velocity, or NULL */
    const double *armature;       /* per link index extra inertia about the joint axis, kg·m²
                                     (N² J_rotor), or NULL; see world_mass.c for the method */
};

/* init only. Zeroes *ret_spec and places the model as its file authors it: root_pose = the root
 * link's origin (e.g. SR1's WAIST translation, floor.wrl's BASE), no q0/dq0/armature, dynamic. */
void hs_world_spec_default(struct hs_world_body_spec *ret_spec, const struct hs_model *model);

struct hs_world;

/* init only: allocates. Builds every body, runs warm-up steps and restores the initial state. */
int hs_world_create(const struct hs_world_params *params, const struct hs_world_body_spec *specs,
                    uint32_t nspecs, struct hs_world **ret_world, struct hs_diag *diag);
void hs_world_destroy(struct hs_world *world); /* accepts NULL */

/* RT-safe: one physics step of params.step_s: apply the efforts set since the last step, collide,
 * step, empty the contact group, update read-backs (unwrapped angles, velocities). */
void hs_world_step(struct hs_world *world);

/* RT-safe setters; values hold until changed. Efforts are N·m (rotate) or N (slide). */
void hs_world_set_joint_effort(struct hs_world *world, uint32_t body, uint32_t link, double effort);
void hs_world_set_track_speed(struct hs_world *world, uint32_t body, uint32_t link,
                              double speed_mps);

/* RT-safe read-backs, valid after create and after every step. */
double hs_world_time(const struct hs_world *world); /* s since create */
double hs_world_joint_position(const struct hs_world *world, uint32_t body, uint32_t link);
double hs_world_joint_velocity(const struct hs_world *world, uint32_t body, uint32_t link);
void hs_world_link_pose(const struct hs_world *world, uint32_t body, uint32_t link,
                        struct hs_pose *ret_pose); /* link frame in world */
/* Linear velocity of the link frame origin and angular velocity, world frame. */
void hs_world_link_velocity(const struct hs_world *world, uint32_t body, uint32_t link,
                            double ret_v[3], double ret_w[3]);
uint32_t hs_world_contact_count(const struct hs_world *world);   /* contacts made in last step */
uint32_t hs_world_colliding_pairs(const struct hs_world *world); /* pairs found in last step */

uint32_t hs_world_body_count(const struct hs_world *world);
const struct hs_model *hs_world_body_model(const struct hs_world *world, uint32_t body);
const struct hs_world_params *hs_world_params(const struct hs_world *world);

/* For the plant layer (actuators, sensors) that needs ODE directly: stops, motors, feedback.
 * Returned handles are owned by the world. NULL where the link has no such object (static body,
 * root link's joint when the root is free or fixed: a fixed root is a kinematic body). Declared
 * as void* to keep ODE out of this header. */
void *hs_world_ode_body(const struct hs_world *world, uint32_t body, uint32_t link);
void *hs_world_ode_joint(const struct hs_world *world, uint32_t body, uint32_t link);
void *hs_world_ode_world(const struct hs_world *world);

/* For benchmarks and tools that step ODE themselves on the same world: the collision space
 * (dSpaceID), the contact joint group (dJointGroupID) and the near callback hs_world_step passes
 * to dSpaceCollide (data = the world; geoms are dGeomID). RT-safe. */
void *hs_world_ode_space(const struct hs_world *world);
void *hs_world_ode_contact_group(const struct hs_world *world);
void hs_world_ode_near_callback(void *world, void *geom1, void *geom2);

/* Where the link's ODE body frame (its centre of mass) sits in the link frame: the model's
 * centre of mass, except on link1 of a piston ExtraJoint, which gives up the slider block's mass
 * (src/world/world_build.c). ODE body pose = link pose translated by this. RT-safe. */
void hs_world_link_com(const struct hs_world *world, uint32_t body, uint32_t link,
                       double ret_com[3]);

/* Links whose mass or inertia was unusable (zero, not positive definite) and got the fallback
 * described in src/world/world_mass.c. RT-safe. */
uint32_t hs_world_mass_fixups(const struct hs_world *world);

/* Two links that overlap where they are now and that the contact callback would push apart
 * (not one link, not jointed to each other, not both immovable, one body only with
 * self_collision). */
struct hs_world_overlap {
    uint32_t body1, link1; /* the first link (ordered by body, then link) */
    uint32_t body2, link2; /* the other: a link of a later or the same body, or of a static body */
    double depth_m;        /* deepest contact point's penetration */
};

/* init only (collides the whole space; no contacts made). Fills up to max pairs, deepest per
 * link pair, those deeper than min_depth_m; *ret_count is how many were found (beyond max, geom
 * pairs of one link pair are not merged, so it may overcount). The ODE bodies are where
 * hs_world_create left them: the initial state. */
int hs_world_overlaps(struct hs_world *world, double min_depth_m, struct hs_world_overlap *ret,
                      uint32_t max, uint32_t *ret_count);

#endif
