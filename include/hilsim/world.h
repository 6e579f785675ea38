/* An ODE world built from body models: one dynamic body per link (frames at the centre of mass,
 * as the Choreonoid ODE plugin does; links on fixed joints merged into their parent's body,
 * src/world/world_merge.c), hinge/slider/fixed joints, a free or fixed root, static
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
#include <stddef.h>
#include <stdint.h>

#include "hilsim/diag.h"
#include "hilsim/model.h"
#include "hilsim/pose.h"

enum hs_solver { HS_SOLVER_QUICK, HS_SOLVER_STANDARD, HS_SOLVER_MAX };

/* The divergence guard, checked after every step (src/world/world_guard.c): an exploding world
 * is stopped while its numbers are still finite, before ODE's own assertions abort. A value
 * that is not finite always trips; each bound may be INFINITY (config `.inf`) to check only
 * finiteness of that quantity. */
struct hs_world_guard {
    double max_position_m;             /* |centre of mass| of every body from the origin, m */
    double max_linear_velocity_mps;    /* |v| of every body's centre of mass, m/s */
    double max_angular_velocity_rad_s; /* |w| of every body, rad/s */
    /* Joint rate bound as a multiple of the joint's velocity limit, >= 1: the model's
     * uvlimit/lvlimit, or the limit the joint's drive enforces once a plant is attached
     * (hs_world_set_joint_rate_limit); joints without a finite limit are checked for
     * finiteness only. */
    double joint_rate_factor;
    /* The floor check (src/world/world_floor.c): a link of a free-floating robot whose centre
     * of mass stays deeper under the floor than its own geometry reaches plus floor_depth_m for
     * floor_time_s has gone through it. */
    double floor_z_m;     /* the floor's height, m; NAN: the lowest surface of the scenery
                             (none without scenery: no check) */
    double floor_depth_m; /* m, >= 0, beyond the link's reach; INFINITY: no check */
    double floor_time_s;  /* s, >= 0: how long in a row (at least one step) */
};

/* Contact materials (src/world/world_material.c), after the Choreonoid idea: each link is made of
 * a named material, and each pair of materials has its contact settings. Stiffness and damping are
 * physical: the spring and damper of the whole geom-pair contact along its normal, shared by
 * the pair's contact points in each step (so the pair's sinkage under a load F is F / stiffness
 * whatever the number of points), turned into ODE's per-point ERP and CFM for the step size h:
 * ERP = h k / (h k + c), CFM = n / (h k + c) for n points. */
#define HS_WORLD_LINK_MATERIALS_MAX 32 /* link (or model) to material assignments */
#define HS_WORLD_CONTACT_MATERIALS_MAX 16
#define HS_WORLD_MATERIALS_MAX 16 /* distinct material names, besides "default" */

/* Where a config entry was written (same layout as struct hs_cfg_src). */
struct hs_world_src {
    int32_t line, column;
};

struct hs_world_link_material {
    char name[HS_NAME_MAX];     /* a link name, or a body spec name (every link of that body) */
    char material[HS_NAME_MAX]; /* the material's name; "default" is the unassigned material */
    struct hs_world_src src;
};

struct hs_world_contact_material {
    char material1[HS_NAME_MAX], material2[HS_NAME_MAX]; /* either order */
    double stiffness_n_m;                                /* (0, 1e12] N/m */
    double damping_n_s_m;                                /* [0, 1e9] N·s/m */
    double friction;                                     /* Coulomb mu, >= 0 or INFINITY */
    double restitution;                                  /* 0..1 */
    struct hs_world_src src;
};

/* Solver health budgets (src/world/world_health.c): a step above one is counted and reported. */
struct hs_world_health_budget {
    double max_penetration_m;    /* deepest contact point, m */
    double max_joint_error_m;    /* largest separation of a hinge or ball joint's anchors, m */
    double max_force_jump_ratio; /* largest change of one link's contact force from the step
                                    before, as a fraction of the robots' weight */
};

struct hs_world_params {
    double step_s;     /* ODE step, s (1e-5 .. 0.1) */
    uint32_t substeps; /* ODE steps per tick (1 .. 100); used by callers, not by step() */
    enum hs_solver solver;
    uint32_t quick_iterations; /* dWorldQuickStep iterations (1 .. 1000) */
    /* Adaptive iterations (world_iterations.c): 0 keeps quick_iterations every step; otherwise
     * (1 .. quick_iterations) a scene at rest (solver health within budget, every constrained
     * body at rest for 500 steps, no body resting on another) comes down to this many, and
     * every other step runs quick_iterations, the bounded worst case. Default 8: ODE 0.16
     * shuffles no row at 8 or fewer iterations. */
    uint32_t quick_iterations_min;
    /* Quick-step's successive over-relaxation factor (dWorldSetQuickStepW), in (0, 2); 0 keeps
     * ODE's own 1.3. Measured in perf/contact_bench.c: 1.2 converges further per iteration. */
    double quick_w;
    /* Quick-step shuffles its rows at random at its 8th iteration (ODE's global generator). On,
     * the generator is reseeded before every quick step, so every step shuffles alike
     * (world_step.c): the tick-to-tick noise of an unconverged solve goes, but the fixed order
     * leaves a bias that a symmetric drive integrates (a crawler veered 2 to 3 cm in 0.6 m
     * where ODE's shuffle kept it within 1.3 mm: perf/measurements.md). Off by default; a
     * measurement lever, not a config key. */
    bool quick_same_shuffle;
    double gravity[3];               /* m/s² */
    double erp, cfm;                 /* global */
    double friction;                 /* Coulomb mu, >= 0 (INFINITY allowed: dInfinity) */
    double bounce;                   /* restitution 0..1 */
    double bounce_min_vel;           /* m/s */
    double contact_erp, contact_cfm; /* soft contact per point, when stiffness is 0 */
    /* The default material pair's contact spring and damper (see above); stiffness 0 selects
     * the expert per-point contact_erp / contact_cfm instead. friction and bounce are its mu and
     * restitution. */
    double contact_stiffness_n_m, contact_damping_n_s_m;
    struct hs_world_link_material link_materials[HS_WORLD_LINK_MATERIALS_MAX];
    uint32_t nlink_materials;
    struct hs_world_contact_material contact_materials[HS_WORLD_CONTACT_MATERIALS_MAX];
    uint32_t ncontact_materials;
    struct hs_world_health_budget health;
    double surface_layer;                   /* m, dWorldSetContactSurfaceLayer */
    uint32_t max_contacts;                  /* per geom pair (1 .. 64) */
    double linear_damping, angular_damping; /* dWorldSetDamping */
    bool self_collision; /* collide links of one body that are not jointed to each other */
    bool contactless;    /* Odin's mode: detect and report colliding pairs, make no contacts */
    /* A link joined to its parent by a fixed joint becomes part of the parent's ODE body
     * (src/world/world_merge.c), except where a force sensor measures that joint. */
    bool merge_fixed_links;
    uint32_t warmup_steps; /* steps run (and undone) at create time so ODE allocates its arena,
                              then one sizing step for the most contacts (0: none at all) */
    struct hs_world_guard guard;
    /* Armature (hs_world_body_spec.armature) in joint space, as MuJoCo models it: an implicit
     * rotor-inertia row per hinge (world_create.c) instead of inertia added to the child link's
     * Cartesian tensor (world_mass.c). Off: the tensor. */
    bool armature_joint_space;
};

/* Fills documented defaults: 1 ms, 1 substep, quick 12 at SOR factor 1.2 (ODE's own row
 * shuffle), 8 while the scene is calm (quick_iterations_min), g = (0,0,-9.80665), ERP
 * 0.2, CFM 1e-4 (joints of 2e6 N/m at 1 ms: what lets quick-step converge on a humanoid; measured
 * in perf/contact_bench.c, see world_params_default.c), mu 1, no bounce, contact stiffness 2e6 N/m
 * and damping 5e3 N·s/m per geom pair (expert contact ERP 0.2 / CFM 1e-5 per point when stiffness
 * is 0), surface layer 1e-4, 4 contacts, no damping; health budgets 5 mm penetration, 1 mm joint
 * error, force jump 1 % of the weight. Also: bounce_min_vel 0.01 m/s, self-collision off, contacts
 * on, fixed links merged, 10 warm-up steps; guard 10 km, 1000 m/s, 10000 rad/s, 10 x the joint
 * velocity limit, the floor from the scenery, 0.05 m beyond a link's reach for 0.01 s. */
void hs_world_params_default(struct hs_world_params *ret_params);

struct hs_world_body_spec {
    const struct hs_model *model; /* borrowed: must outlive the world */
    const char *name;             /* for link_materials (e.g. the config's model name); NULL:
                                     the model's name. Borrowed during create only. */
    struct hs_pose root_pose;     /* root link frame in the world (at zero joint position for a
                                     rotate/slide root); see hs_world_spec_default */
    bool is_static;               /* environment: geoms only, no bodies */
    const double *q0;             /* per link index (nlinks) initial joint position, or NULL */
    const double *dq0;            /* per link index initial joint velocity, or NULL */
    const double *armature;       /* per link index extra inertia about the joint axis, kg·m²
                                     (N² J_rotor), or NULL; see world_mass.c for the method */
    bool rest_on_static; /* a free root whose geoms start more than 1 mm below the top of the
                            static bodies' geoms is raised to 1 mm above it (world_place.c) */
};

/* init only. Zeroes *ret_spec and places the model as its file authors it: root_pose = the root
 * link's origin (e.g. SR1's WAIST translation, floor.wrl's BASE), no q0/dq0/armature, dynamic. */
void hs_world_spec_default(struct hs_world_body_spec *ret_spec, const struct hs_model *model);

struct hs_world;

/* init only: allocates. Builds every body, runs warm-up steps and restores the initial state.
 * An error in a model names the model's file; one in params names the entry's line and column
 * (struct hs_world_src) and leaves diag->file empty for the caller that read the params to fill
 * (hs_bench_create names the config). */
int hs_world_create(const struct hs_world_params *params, const struct hs_world_body_spec *specs,
                    uint32_t nspecs, struct hs_world **ret_world, struct hs_diag *diag);
void hs_world_destroy(struct hs_world *world); /* accepts NULL */

/* What stopped a world. */
enum hs_world_fault_kind {
    HS_WORLD_FAULT_NONE,
    HS_WORLD_FAULT_POSITION,         /* a body's centre of mass too far from the origin */
    HS_WORLD_FAULT_LINEAR_VELOCITY,  /* a body's linear speed */
    HS_WORLD_FAULT_ANGULAR_VELOCITY, /* a body's angular speed */
    HS_WORLD_FAULT_JOINT_RATE,       /* a hinge or slider joint's rate */
    HS_WORLD_FAULT_ODE_INTERNAL,     /* ODE's error or debug handler fired inside the step */
    HS_WORLD_FAULT_BELOW_FLOOR,      /* a link of a free-floating robot went through the floor */
    HS_WORLD_FAULT_MAX
};

#define HS_WORLD_FAULT_TEXT_MAX 160

struct hs_world_fault {
    enum hs_world_fault_kind kind;
    uint32_t body; /* world body index; UINT32_MAX when unknown (ODE internal error) */
    uint32_t link; /* model link index; UINT32_MAX for a body that is not a link (the slider
                      block of a piston ExtraJoint) or when unknown */
    double value;  /* the offending magnitude (may be inf or nan); BELOW_FLOOR: the depth of
                      the link's centre of mass under the floor, m */
    double limit;  /* the bound it broke (INFINITY when only finiteness was asked);
                      BELOW_FLOOR: the depth allowed to it (its reach + floor_depth_m) */
    uint64_t tick; /* the tick given by hs_world_set_tick when it tripped */
    uint64_t step; /* physics steps since create (1 = the first step after create) */
    double time_s; /* world time after the faulting step */
    char ode_text[HS_WORLD_FAULT_TEXT_MAX]; /* ODE's own message (ODE_INTERNAL), else empty */
};

/* RT-safe: one physics step of params.step_s: apply the efforts set since the last step, collide,
 * step, empty the contact group, update read-backs (unwrapped angles, velocities), then check
 * the divergence guard. Returns 0; -ERANGE when the guard tripped (a body or joint out of its
 * bounds, or not finite); -EFAULT when ODE reported an internal error during the step (its
 * error or debug handler; the step was abandoned, see src/world/ode_init.c). After a fault the
 * world is latched: it steps no more and every call returns the same error. */
int hs_world_step(struct hs_world *world);
/* RT-safe: the fault that latched the world (kind NONE when none). */
const struct hs_world_fault *hs_world_fault(const struct hs_world *world);
/* Non-RT (snprintf): one line for a fault, e.g. "tick 35 (t = 0.035 s): link RARM_WRIST_R of
 * robot: angular velocity 12000 rad/s above 10000 (physics.guard.max_angular_velocity_rad_s)".
 * body_name names the fault's body (NULL: "body N"). Returns like snprintf. */
int hs_world_fault_format(const struct hs_world *world, const struct hs_world_fault *fault,
                          const char *body_name, char *buf, size_t size);
/* init only: the velocity limit (rad/s or m/s, > 0) that the joint's drive enforces, for the
 * guard's joint-rate bound (limit x joint_rate_factor) in place of the model's; INFINITY: no
 * bound, finiteness only; 0 or NAN: keep the model's. -EINVAL for a link without a hinge or
 * slider joint. hs_plant_create calls it for every joint it drives. */
int hs_world_set_joint_rate_limit(struct hs_world *world, uint32_t body, uint32_t link,
                                  double limit);
/* RT-safe: the tick number the next steps belong to (faults and ODE messages quote it). */
void hs_world_set_tick(struct hs_world *world, uint64_t tick);

/* ODE's non-fatal messages (e.g. the standard solver's "LCP internal error"), counted per
 * distinct message while stepping and never printed from the step: the caller logs them,
 * rate-limited, from a non-RT thread (the fields it reads are atomics). */
struct hs_world_ode_message {
    int num;        /* ODE's message number (d_ERR_LCP = 3, ...) */
    uint64_t count; /* times reported so far */
    uint64_t first_tick, last_tick;
    char text[HS_WORLD_FAULT_TEXT_MAX]; /* the first occurrence, formatted */
};
#define HS_WORLD_ODE_MESSAGES_MAX 8
/* Any thread. Distinct messages seen so far (at most HS_WORLD_ODE_MESSAGES_MAX); reports of
 * further distinct messages are only counted in *ret_other when it is not NULL. */
uint32_t hs_world_ode_message_count(const struct hs_world *world, uint64_t *ret_other);
/* Any thread: a copy of message i (< count). 0 or -ENOENT. */
int hs_world_ode_message_get(const struct hs_world *world, uint32_t i,
                             struct hs_world_ode_message *ret);
/* One consumer thread at a time (the log's rate limit): 0 and a copy of a message whose count
 * reached its next report (the 1st, 10th, 100th, ... time since it first appeared), or -ENOENT
 * when none is due. */
int hs_world_ode_message_due(struct hs_world *world, struct hs_world_ode_message *ret);

/* RT-safe setters; values hold until changed. Efforts are N·m (rotate) or N (slide). */
void hs_world_set_joint_effort(struct hs_world *world, uint32_t body, uint32_t link, double effort);
/* RT-safe: the effort the next step applies (what the last hs_world_set_joint_effort set). */
double hs_world_joint_effort(const struct hs_world *world, uint32_t body, uint32_t link);
void hs_world_set_track_speed(struct hs_world *world, uint32_t body, uint32_t link,
                              double speed_mps);

/* Contact materials at run time (src/world/world_material_set.c): a scenario's friction and
 * material steps. Materials are numbered as the world numbered them at create: 0 is "default",
 * then the names of params.link_materials in order of first appearance. */
int hs_world_material_find(const struct hs_world *world, const char *name); /* i or -ENOENT */
uint32_t hs_world_material_count(const struct hs_world *world);
int hs_world_link_material(const struct hs_world *world, uint32_t body, uint32_t link);
/* RT-safe: act from the next physics step on; -EINVAL for an index out of range or mu < 0
 * (mu may be INFINITY). Friction is per pair, both orders at once. */
int hs_world_set_link_material(struct hs_world *world, uint32_t body, uint32_t link,
                               uint32_t material);
double hs_world_pair_friction(const struct hs_world *world, uint32_t a, uint32_t b);
int hs_world_set_pair_friction(struct hs_world *world, uint32_t a, uint32_t b, double mu);

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

/* One contact point of the last step with the force ODE's solver put on it (its contact
 * feedback): for drawing forces and checking them against the load they carry. */
struct hs_world_contact {
    uint32_t body, link;             /* the link the force acts on (one with an ODE body) */
    uint32_t other_body, other_link; /* the link it touches (the floor, scenery, another link) */
    double position_m[3];            /* world frame */
    double normal[3];  /* unit, world frame, pointing into `link` (away from the other) */
    double force_n[3]; /* on `link`, world frame; the other gets its opposite */
};
/* RT-safe, bounded by max: the last step's contact points whose force was measured (the first
 * HS_WORLD_CONTACT_FORCES_MAX of a step) into ret, in the order the collider made them; returns
 * how many. hs_world_contact_count minus that is what was left out (no room in ret, or beyond
 * the feedback buffers). Valid until the next step. */
#define HS_WORLD_CONTACT_FORCES_MAX 256
uint32_t hs_world_contacts(const struct hs_world *world, struct hs_world_contact *ret,
                           uint32_t max);

/* Solver health, measured every step at little cost (no allocation): the deepest contact
 * point, the largest hinge/ball joint anchor separation, and the largest change of one link's
 * total contact force (ODE's contact feedback) from the step before. */
struct hs_world_health_sample {
    double penetration_m;
    double joint_error_m;
    double force_jump_n;
};
/* Percentiles over the steps since create or the last reset (log bins: a percentile is the
 * upper edge of its bin, within 12 %; max is exact). */
struct hs_world_health_stat {
    double p50, p99, max;
    uint64_t over_budget; /* steps above the budget */
    double budget;        /* the budget, same unit */
};
#define HS_WORLD_PAIR_COSTS_MAX 6 /* the costliest pair classes a summary lists */
struct hs_world_health_summary {
    uint64_t steps;
    double weight_n; /* weight of every dynamic body, |g| x mass; the jump ratio's base */
    struct hs_world_health_stat penetration_m, joint_error_m, force_jump_n;
    /* ODE's contact memory is sized at create for the most contacts a step can make (every geom
     * pair that may touch, at max_contacts each, up to 1024; 256 on the exact solver):
     * contacts_reserved. A step that
     * finds more drops the rest (counted here) rather than allocate in the tick. */
    uint32_t contacts_reserved;
    uint64_t contacts_dropped;
    double quick_iterations_mean; /* quick-step iterations per step (adaptive: the mean) */
    /* Where the collision time goes (world_health.c): the narrow-phase test of each geom pair
     * class ("box-trimesh", "box-sphere", ...), the costliest first, over the same steps. */
    struct hs_world_pair_cost {
        char name[24];  /* ODE's two geom classes, alphabetical: "box-trimesh" */
        uint64_t calls; /* narrow-phase tests (pairs whose bounding boxes overlapped) */
        double total_s; /* wall time in those tests */
    } pair_costs[HS_WORLD_PAIR_COSTS_MAX];
    uint32_t npair_costs;
};
/* RT-safe: the last step's values. */
void hs_world_health_last(const struct hs_world *world, struct hs_world_health_sample *ret);
/* RT-safe but O(bins): from a non-RT thread, or after the loop. */
void hs_world_health_summary(const struct hs_world *world, struct hs_world_health_summary *ret);
/* RT-safe, O(bins): forget the steps so far (after a warm-up). */
void hs_world_health_reset(struct hs_world *world);

uint32_t hs_world_body_count(const struct hs_world *world);
const struct hs_model *hs_world_body_model(const struct hs_world *world, uint32_t body);
/* An environment body (spec is_static): geoms only. A robot with a fixed root is not static,
 * though its root link has no ODE body (it is scenery: static geoms, joints to the world). */
bool hs_world_body_is_static(const struct hs_world *world, uint32_t body);
const struct hs_world_params *hs_world_params(const struct hs_world *world);

/* For the plant layer (actuators, sensors) that needs ODE directly: stops, motors, feedback.
 * Returned handles are owned by the world. NULL where the link has no such object (static body,
 * a fixed root link's body and joint, root link's joint when the root is free, the joint of a
 * link merged into its parent's body, which shares that body: see hs_world_link_body_link).
 * Declared as void* to keep ODE out of this header. */
void *hs_world_ode_body(const struct hs_world *world, uint32_t body, uint32_t link);
void *hs_world_ode_joint(const struct hs_world *world, uint32_t body, uint32_t link);
void *hs_world_ode_world(const struct hs_world *world);

/* For benchmarks and tools that step ODE themselves on the same world: the collision space
 * (dSpaceID: simple with one robot, a quadtree with several, which cannot list its geoms), the
 * contact joint group (dJointGroupID) and the near callback hs_world_step passes to dSpaceCollide
 * (data = the world; geoms are dGeomID). RT-safe. */
void *hs_world_ode_space(const struct hs_world *world);
void *hs_world_ode_contact_group(const struct hs_world *world);
void hs_world_ode_near_callback(void *world, void *geom1, void *geom2);
/* RT-safe: a step of the caller's own (dSpaceCollide with the callback above, a solver step,
 * dJointGroupEmpty) begins: the per-step contact counts start again, as hs_world_step does
 * (the callback makes at most the contacts ODE's memory was sized for per step). */
void hs_world_ode_step_begin(struct hs_world *world);

/* Where the link's ODE body frame (its centre of mass) sits in the link frame: the model's
 * centre of mass, except on link1 of a piston ExtraJoint, which gives up the slider block's mass
 * (src/world/world_build.c), and on links merged with others (world_merge.c), whose body's
 * centre of mass is the group's. ODE body pose = link pose translated by this, except for a
 * link merged into an ancestor's body, whose axes are that ancestor's
 * (hs_world_link_body_link). RT-safe. */
void hs_world_link_com(const struct hs_world *world, uint32_t body, uint32_t link,
                       double ret_com[3]);

/* The link whose ODE body carries this link: the link itself, or for a link merged into its
 * parent's body (params.merge_fixed_links) the nearest ancestor not merged; for a link merged
 * into a fixed root's scenery, the root (which has no body). Link poses, velocities and geoms
 * of a merged link are its own, composed with its fixed offset. RT-safe. */
uint32_t hs_world_link_body_link(const struct hs_world *world, uint32_t body, uint32_t link);
/* Whether an ODE geom of the world's space (a dGeomID) is one of this link's. RT-safe. */
bool hs_world_geom_of_link(const void *geom, uint32_t body, uint32_t link);
/* Links merged into another link's body (or a fixed root) over the whole world. RT-safe. */
uint32_t hs_world_merged_links(const struct hs_world *world);

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
