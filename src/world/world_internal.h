/* Internal state of an hs_world, shared by the files of src/world/. Not installed. */
#ifndef HS_WORLD_INTERNAL_H
#define HS_WORLD_INTERNAL_H

#include <setjmp.h>
#include <stdatomic.h>

#include <ode/ode.h>

#include "hilsim/world.h"

struct hs__world_body;

/* ODE's geom classes timed per pair (sphere .. heightfield, dHeightfieldClass = 9); others
 * count in the last. */
#define HS__PAIR_CLASSES 10

/* Health histograms: log bins, 20 per decade from 1e-9 up (values below count in bin 0). */
#define HS__HEALTH_BINS 300

/* One link of one body. ODE geoms carry a pointer to it (dGeomSetData) so the near callback
 * can tell which body, link and crawler a geom belongs to without any lookup. */
struct hs__world_link {
    struct hs__world_body *owner;
    uint32_t link_index;
    enum hs_joint_type type;
    dBodyID body;   /* NULL for static bodies */
    dJointID joint; /* to the parent (or the world); NULL for a free root and static bodies */
    double com[3];  /* body frame origin (centre of mass) in the link frame */
    /* The link frame in its body's frame: (I, -com) for a link with a body of its own; a link
     * merged into an ancestor's body (world_merge.c) keeps its fixed offset here. */
    struct hs_pose in_body;
    uint32_t body_link;         /* the link whose body this is (itself unless merged) */
    double axis[3];             /* joint axis, link frame (unit) */
    struct hs_pose static_pose; /* link frame in world, static bodies only */
    double effort;              /* N·m or N, applied every step */
    double track_speed_mps;     /* crawler links only */
    double q, dq;               /* read back after every step; q unwrapped for hinges */
    double q_init;              /* q0, restored after warm-up */
    double q_wrapped_prev;      /* last raw dJointGetHingeAngle, for unwrapping */
    double rate_limit;          /* divergence guard: |dq| bound, INFINITY = finiteness only */
    uint32_t material;          /* index into the world's materials (0 = "default") */
    double cforce[3];           /* contact force on the link this step (health), N */
    double cforce_prev[3];      /* the step before */
};

struct hs__world_body {
    struct hs_world *world;
    uint32_t index;
    const struct hs_model *model;
    bool is_static;
    struct hs__world_link *links; /* model->nlinks */
    /* Extra joints: ball -> one ball joint; piston -> slider(link1, block) + ball(block, link2). */
    dJointID *extra_joints; /* 2 per extra joint (second NULL for ball) */
    dBodyID *extra_blocks;  /* 1 per extra joint (NULL for ball) */
};

/* Memory ODE reads but does not copy (trimesh vertices/indices) and the data handles. */
struct hs__world_mesh {
    dTriMeshDataID data;
    double *vertices;   /* owned, or NULL when borrowed from the model */
    dTriIndex *indices; /* owned, or NULL when borrowed */
};

/* A URDF mimic coupling (world_mimic.c). */
struct hs__world_mimic {
    dJointID motor; /* AMotor (hinge) or LMotor (slider) on the follower's two bodies */
    const struct hs__world_link *leader;
    struct hs__world_link *follower;
    double multiplier, offset;
};

struct hs_world {
    struct hs_world_params params;
    dWorldID world;
    dSpaceID space; /* simple, or a quadtree with several robots (world_create.c) */
    dGeomID *geoms; /* every geom, when the space cannot list them (a quadtree), else NULL */
    uint32_t ngeoms;
    dJointGroupID contact_group;
    struct hs__world_body *bodies;
    uint32_t nbodies;
    struct hs__world_link **actuated; /* links with a hinge or slider joint, for the step loop */
    uint32_t nactuated;
    struct hs__world_mesh *meshes;
    uint32_t nmeshes, meshes_cap;
    struct hs__world_mimic *mimics;
    uint32_t nmimics;
    /* Joint-space armature (params.armature_joint_space, world_create.c): one AMotor row per
     * hinge with armature, driven each step to the hinge's rate of the step before. */
    struct hs__world_rotor {
        dJointID motor;
        const struct hs__world_link *link;
    } * rotors;
    uint32_t nrotors;
    dContactGeom *contact_geoms; /* params.max_contacts, preallocated */
    /* The broad phase of a world with one robot and self-collision off (world_broad.c): the
     * robot's geoms, each with the squared radius about its body's position that holds it, and
     * the scenery's geoms; near_pruned false: dSpaceCollide over the whole space. */
    struct hs__world_near {
        dGeomID geom;
        dBodyID body;
        double reach2;
    } * near_dyn;
    dGeomID *near_static;
    uint32_t nnear_dyn, nnear_static;
    bool near_pruned;
    dBodyID *all_bodies; /* every dynamic ODE body, for warm-up save/restore */
    uint32_t nall_bodies, all_bodies_cap;
    double *saved_state; /* 13 doubles per body: p, q, v, w */
    uint32_t ncontacts, npairs;
    /* Contacts per step ODE's arenas were sized for at create (world_reserve.c); more are
     * dropped and counted, never allocated for in the tick. */
    uint32_t contacts_cap;
    uint64_t contacts_dropped; /* since create or the last health reset */
    uint32_t sizing_contacts;  /* create only: worst-case contacts added to the sizing step */
    double step_depth;         /* deepest contact point of this step, m */
    /* Contact materials (world_material.c): per material pair, ERP and the CFM of a one-point
     * contact (scaled by the pair's point count), mu, bounce. Index 0 is "default". */
    struct hs__world_surface {
        double erp, cfm1, mu, bounce;
        bool per_point; /* expert: contact_erp / contact_cfm per point, not split */
    } surfaces[HS_WORLD_MATERIALS_MAX + 1][HS_WORLD_MATERIALS_MAX + 1];
    uint32_t nmaterials;
    /* Solver health (world_health.c). Contact feedback buffers for the first feedback_cap
     * contacts of a step; their links, to sum per link after the step. */
    dJointFeedback *feedback;
    struct hs__world_link **feedback_link; /* 2 per contact: link of body1, of body2 (or NULL) */
    uint32_t feedback_cap, nfeedback;
    /* Where each of those contacts is (hs_world_contacts): the link feedback[k].f1 acts on, the
     * other, the point and the normal into the first. nfeedback_last: the last step's count. */
    struct hs__world_contact_pt {
        const struct hs__world_link *on, *other;
        double pos[3], normal[3];
    } * contact_pts;
    uint32_t nfeedback_last;
    struct hs__world_link **dyn_links; /* every link with a body, for the per-link sums */
    uint32_t ndyn_links;
    dJointID *anchored; /* hinge and ball joints whose anchor separation is the joint error */
    uint32_t nanchored;
    double weight_n;
    struct hs_world_health_sample health_last;
    struct hs__world_health_hist {
        uint32_t bins[HS__HEALTH_BINS];
        double max;
        uint64_t over;
    } health_hist[3];
    uint64_t health_steps;
    /* Narrow-phase cost per pair of ODE geom classes (world_contact.c, RT-safe: two
     * clock_gettime per tested pair, fixed storage), reset with the health. */
    struct hs__world_pair_acc {
        uint64_t calls, ns;
    } pair_acc[HS__PAIR_CLASSES][HS__PAIR_CLASSES];
    uint32_t iterations;       /* this step's quick-step iterations (world_iterations.c) */
    uint32_t calm_steps;       /* calm steps in a row, up to the hysteresis (world_iterations.c) */
    uint32_t same_count_steps; /* steps since the count changed, up to the hysteresis */
    uint32_t rest_steps;       /* calm steps since the scene last moved, up to REST_STEPS */
    uint64_t iterations_sum;   /* over the health's steps */
    bool health_have_prev;     /* cforce_prev holds a real step's sums */
    uint32_t mass_fixups;
    uint32_t merged_links; /* links merged into an ancestor's body or a fixed root */
    double time_s;
    /* Divergence guard and ODE's reports (world_guard.c, ode_init.c). */
    double guard_pos2, guard_vel2, guard_avel2; /* squared bounds */
    uint64_t tick;                              /* hs_world_set_tick */
    uint64_t nsteps;
    /* The guard's floor check (world_floor.c): the floor's height (NAN: none) and the links of
     * free-floating robots that have geoms, each with the lowest its centre of mass may go. */
    double floor_z;
    uint32_t floor_steps; /* steps in a row below before a trip */
    struct hs__world_floor_link {
        const struct hs__world_link *link;
        dBodyID body;
        double reach;   /* m: its geoms' farthest point from the body's centre of mass */
        double allowed; /* m: reach + floor_depth_m */
        double min_z;   /* floor_z - allowed */
        uint32_t below; /* steps in a row under min_z */
    } * floor_links;
    uint32_t nfloor_links;
    int fault_rc; /* 0, or what every step returns once latched */
    struct hs_world_fault fault;
    jmp_buf step_jmp; /* armed while ODE steps: the fatal handlers return here */
    struct hs__world_ode_msg {
        int num;
        const char *fmt; /* ODE's static format string: the message's identity */
        uint64_t first_tick;
        _Atomic uint64_t count, last_tick;
        uint64_t due_at; /* consumer side: the count at which it is next due */
        char text[HS_WORLD_FAULT_TEXT_MAX];
    } msgs[HS_WORLD_ODE_MESSAGES_MAX];
    _Atomic uint32_t nmsgs; /* published with release after the entry is filled */
    _Atomic uint64_t msgs_other;
};

/* world_iterations.c: sets this step's quick-step iterations from the step before (RT-safe). */
void hs__world_adapt_iterations(struct hs_world *w);

/* ode_init.c: reference-counted dInitODE2 / dCloseODE; installs hilsim's ODE message, error and
 * debug handlers on first use. */
int hs__ode_acquire(void);
void hs__ode_release(void);
/* ode_init.c: w is stepping ODE from now until hs__ode_leave_step (the handlers attribute ODE's
 * reports to it; fatal ones longjmp to w->step_jmp). RT-safe. */
void hs__ode_enter_step(struct hs_world *w);
void hs__ode_leave_step(void);
/* ode_init.c: init only: forget what ODE reported for w so far (the warm-up's steps are undone). */
void hs__ode_forget_messages(struct hs_world *w);

/* world_guard.c: init only, after the bodies are built: bounds from params and the model's
 * velocity limits. RT-safe check after a step: 0 or -ERANGE with w->fault filled. */
void hs__world_guard_init(struct hs_world *w);
int hs__world_guard_check(struct hs_world *w);
/* world_guard.c: the fault without its tick prefix (link, quantity, value, bound). Non-RT. */
int hs__world_fault_describe(const struct hs_world *w, const struct hs_world_fault *f,
                             const char *body_name, char *buf, size_t size);

/* world_floor.c: init only (after the bodies and the placement; allocates the checked links,
 * -ENOMEM); RT-safe check after a step: -ERANGE with the link, its depth under the floor and
 * the depth allowed to it once a link has been too deep for floor_time_s; reset after the
 * warm-up. */
int hs__world_floor_init(struct hs_world *w);
void hs__world_floor_free(struct hs_world *w);
void hs__world_floor_reset(struct hs_world *w);
int hs__world_floor_check(struct hs_world *w, const struct hs__world_link **ret_link,
                          double *ret_depth, double *ret_allowed);

/* world_params.c */
int hs__world_params_check(const struct hs_world_params *p, struct hs_diag *diag);

/* world_mass.c: fills m for a link, body frame at the centre of mass, with link-frame axes.
 * Returns true when the model's mass or inertia was unusable and a fallback was used. */
bool hs__world_link_mass(const struct hs_link *link, double armature_kgm2, dMass *ret_m);
/* Takes a body of mass mb at p (link frame) with isotropic inertia ib out of the link's mass
 * properties, so that link plus body weigh and turn like the original link. False (link
 * untouched) when what remains would not be a valid mass. */
bool hs__world_mass_remove_point(struct hs_link *l, double mb, const double p[3], double ib);

/* world_merge.c, init only. Fills ret_owner[i] with the link whose body link i becomes part
 * of: i itself, or (merge on) the owner of its parent when it hangs on a fixed joint that no
 * force sensor measures. The root is never merged. */
void hs__world_merge_plan(const struct hs_model *m, bool merge, uint32_t *ret_owner);
/* world_merge.c, init only: the mass of owner o's body, in o's link frame about o's link origin
 * before the shift to its centre of mass: every link k with owner[k] == o at its fixed offset
 * pose0[o]^-1 pose0[k]. eff holds the links' mass properties, armature the owner's (a merged
 * link has no joint of its own). Massless links in a group that has mass add nothing. Returns
 * the links that needed world_mass.c's fallback; ret_com is the centre of mass in o's frame and
 * ret_m is about it. */
uint32_t hs__world_group_mass(const struct hs_link *eff, const struct hs_pose *pose0,
                              const uint32_t *owner, uint32_t n, uint32_t o, double armature,
                              dMass *ret_m, double ret_com[3]);
/* world_mass.c: symmetric positive definite (Sylvester). */
bool hs__world_inertia_pd(const double I[9]);

/* world_geom.c: creates the link's geoms in w->space, attached to wl->body (or placed at
 * wl->static_pose when the body is static). */
int hs__world_link_geoms(struct hs_world *w, struct hs__world_link *wl, struct hs_diag *diag);

/* world_build.c: bodies, joints and initial state for one spec. */
int hs__world_build_body(struct hs_world *w, struct hs__world_body *wb,
                         const struct hs_world_body_spec *spec, struct hs_diag *diag);
int hs__world_register_body(struct hs_world *w, dBodyID b);

/* world_material.c: init only, after the bodies are built: resolves link_materials to a
 * material per link and fills w->surfaces from the contact materials. -EINVAL with diag for a
 * name that matches no link or body, or too many materials. */
int hs__world_materials_init(struct hs_world *w, const struct hs_world_body_spec *specs,
                             struct hs_diag *diag);

/* world_health.c: init only (allocates the feedback buffers and link lists); RT-safe update
 * after each step. */
int hs__world_health_init(struct hs_world *w);
void hs__world_health_free(struct hs_world *w);
void hs__world_health_update(struct hs_world *w);

/* Radius about the body's centre of mass of the sphere that holds the geom (world_floor.c). */
double hs__world_geom_reach(dGeomID g, dBodyID b);

/* world_broad.c: init only, after the geoms are placed and the space is final (-ENOMEM); RT-safe
 * per step: hands the pairs that may touch to hs__world_near_callback. */
int hs__world_broad_init(struct hs_world *w);
void hs__world_broad_free(struct hs_world *w);
void hs__world_collide(struct hs_world *w);

/* world_contact.c: the dSpaceCollide callback; data is the hs_world. */
void hs__world_near_callback(void *data, dGeomID g1, dGeomID g2);
/* world_contact.c: false for a pair the callback never makes contacts for (one link, two
 * static geoms, jointed links, self-collision off). RT-safe. */
bool hs__world_may_touch(const struct hs_world *w, dGeomID g1, dGeomID g2);

/* world_contact.c: two links of one body joined by a joint of the model (tree or ball
 * ExtraJoint). RT-safe: O(extra joints). */
bool hs__world_links_jointed(const struct hs__world_link *l1, const struct hs__world_link *l2);

/* world_reserve.c, init only: the most contacts one step can make (every pair that may touch,
 * at max_contacts each, up to HS__WORLD_CONTACTS_MAX, or _EXACT for the exact solver; none in
 * contactless mode) into w->contacts_cap. */
#define HS__WORLD_CONTACTS_MAX 1024
#define HS__WORLD_CONTACTS_MAX_EXACT 256 /* solver standard */
void hs__world_reserve_count(struct hs_world *w);
/* world_reserve.c, RT-safe: inside the create-time sizing step, after the collision: adds
 * contacts up to w->sizing_contacts, spread over the dynamic bodies. */
void hs__world_reserve_fill(struct hs_world *w);

/* world_mimic.c: init only, after collect_actuated: one motor per mimic joint (-ENOMEM,
 * -EINVAL for a leader that is no joint of the follower's kind). RT-safe per step: targets. */
int hs__world_mimics_build(struct hs_world *w);
void hs__world_mimics_drive(struct hs_world *w);
/* world_surface.c: the links' own contact surfaces over s (which holds the entry values). */
void hs__world_surface(const struct hs_world *w, const struct hs__world_link *l1,
                       const struct hs__world_link *l2, dSurfaceParameters *s);

/* world_step.c */
void hs__world_read_joints(struct hs_world *w, bool reset_unwrap);
/* world_place.c, init only: raises the free-root bodies whose spec asks to rest on the static
 * bodies (before the warm-up, which would otherwise throw them out of the floor). */
void hs__world_place_on_static(struct hs_world *w, const struct hs_world_body_spec *specs,
                               uint32_t nspecs);

/* Pose helpers between ODE bodies and link frames. */
void hs__body_set_link_pose(dBodyID b, const double com[3], const struct hs_pose *link_pose);
void hs__rot_to_ode(const double R[9], dMatrix3 ret);

/* Every geom of the world, in creation order, whatever the space (a quadtree cannot list its
 * own). */
static inline int hs__world_ngeoms(const struct hs_world *w)
{
    return w->geoms ? (int)w->ngeoms : dSpaceGetNumGeoms(w->space);
}
static inline dGeomID hs__world_geom(const struct hs_world *w, int i)
{
    return w->geoms ? w->geoms[i] : dSpaceGetGeom(w->space, i);
}

#endif
