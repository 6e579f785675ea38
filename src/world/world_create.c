/* World lifecycle: create (allocate, build, warm up, restore) and destroy. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

void hs_world_spec_default(struct hs_world_body_spec *ret_spec, const struct hs_model *model)
{
    memset(ret_spec, 0, sizeof *ret_spec);
    ret_spec->model = model;
    if (model && model->nlinks > 0)
        ret_spec->root_pose = model->links[0].origin;
    else
        hs_pose_identity(&ret_spec->root_pose);
}

static void save_state(struct hs_world *w)
{
    for (uint32_t i = 0; i < w->nall_bodies; i++) {
        double *s = &w->saved_state[13 * i];
        dBodyID b = w->all_bodies[i];
        memcpy(s, dBodyGetPosition(b), 3 * sizeof *s);
        memcpy(s + 3, dBodyGetQuaternion(b), 4 * sizeof *s);
        memcpy(s + 7, dBodyGetLinearVel(b), 3 * sizeof *s);
        memcpy(s + 10, dBodyGetAngularVel(b), 3 * sizeof *s);
    }
}

static void restore_state(struct hs_world *w)
{
    for (uint32_t i = 0; i < w->nall_bodies; i++) {
        const double *s = &w->saved_state[13 * i];
        dBodyID b = w->all_bodies[i];
        dBodySetPosition(b, s[0], s[1], s[2]);
        dQuaternion q = {s[3], s[4], s[5], s[6]};
        dBodySetQuaternion(b, q);
        dBodySetLinearVel(b, s[7], s[8], s[9]);
        dBodySetAngularVel(b, s[10], s[11], s[12]);
        dBodySetForce(b, 0, 0, 0);
        dBodySetTorque(b, 0, 0, 0);
    }
}

static int collect_actuated(struct hs_world *w)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < w->nbodies; b++)
        for (uint32_t i = 0; i < w->bodies[b].model->nlinks; i++)
            n += w->bodies[b].links[i].joint && (w->bodies[b].links[i].type == HS_JOINT_ROTATE ||
                                                 w->bodies[b].links[i].type == HS_JOINT_SLIDE);
    w->actuated = calloc(n + 1, sizeof *w->actuated);
    if (!w->actuated)
        return -ENOMEM;
    for (uint32_t b = 0; b < w->nbodies; b++)
        for (uint32_t i = 0; i < w->bodies[b].model->nlinks; i++) {
            struct hs__world_link *l = &w->bodies[b].links[i];
            if (l->joint && (l->type == HS_JOINT_ROTATE || l->type == HS_JOINT_SLIDE))
                w->actuated[w->nactuated++] = l;
        }
    return 0;
}

/* Broadphase filter: without self-collision, no two geoms of one robot may touch, yet
 * dSpaceCollide tests every pair's bounding boxes and hands the overlapping ones (neighbouring
 * links always overlap) to the near callback, which drops them. Each dynamic body's geoms get
 * a category bit of their own (bit 0 is the scenery's, world_geom.c) that their collide bits
 * leave out, so ODE skips the pair on two bit tests before the boxes. With more dynamic bodies
 * than bits two would share one and never meet: those keep colliding with everything. */
static void body_collide_bits(struct hs_world *w)
{
    const unsigned nbits = 8 * sizeof(unsigned long) - 1;
    uint32_t ndyn = 0;
    for (uint32_t b = 0; b < w->nbodies; b++)
        ndyn += !w->bodies[b].is_static;
    if (w->params.self_collision || ndyn > nbits)
        return;
    int n = hs__world_ngeoms(w);
    for (int i = 0; i < n; i++) {
        dGeomID g = hs__world_geom(w, i);
        const struct hs__world_link *l = dGeomGetData(g);
        if (!l || !dGeomGetBody(g))
            continue; /* scenery, or a fixed root's static geom: bit 0 already */
        uint32_t k = 0;
        for (uint32_t b = 0; b < l->owner->index; b++)
            k += !w->bodies[b].is_static;
        unsigned long bit = 2ul << k;
        dGeomSetCategoryBits(g, bit);
        dGeomSetCollideBits(g, ~bit);
    }
}

/* The collision space. One robot (and its scenery) keeps ODE's simple space, which tests
 * every pair of geoms: cheapest for the few dozen one robot has. With several, the simple
 * space's pair tests grow with the square of the robots (8 SR1s: ~400 geoms, ~80 000 pair tests
 * a step, each two bit tests at least), so the geoms move into a quadtree over the ground plane
 * (x, y; z up), which tests only geoms in overlapping cells: cost linear in the robots. Neither
 * allocates per collide (notes/ode.md), and both hand the pairs over in an order fixed by the
 * geoms' insertion order and poses, so a run replays bit-exactly. The quadtree's square covers
 * the robots' roots with HS_QUADTREE_MARGIN_M to spare; a geom beyond stays in the root cell
 * (tested against all: still correct). ODE's quadtree cannot list its geoms (getGeom is not
 * implemented), so the world keeps them in w->geoms (hs__world_geom). */
#define HS_QUADTREE_MARGIN_M 4.0
#define HS_QUADTREE_DEPTH 5
static int spread_space(struct hs_world *w, const struct hs_world_body_spec *specs, uint32_t nspecs)
{
    uint32_t ndyn = 0;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (uint32_t b = 0; b < nspecs; b++) {
        if (specs[b].is_static)
            continue;
        ndyn++;
        for (int k = 0; k < 2; k++) {
            lo[k] = fmin(lo[k], specs[b].root_pose.p[k]);
            hi[k] = fmax(hi[k], specs[b].root_pose.p[k]);
        }
    }
    if (ndyn < 2 || !isfinite(lo[0] + lo[1] + hi[0] + hi[1]))
        return 0;
    int n = dSpaceGetNumGeoms(w->space);
    w->geoms = malloc(((size_t)n + 1) * sizeof *w->geoms);
    double half = 0.5 * fmax(hi[0] - lo[0], hi[1] - lo[1]) + HS_QUADTREE_MARGIN_M;
    dVector3 centre = {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0, 0};
    dVector3 extents = {2 * half, 2 * half, 2 * half, 0};
    dSpaceID quad = dQuadTreeSpaceCreate(0, centre, extents, HS_QUADTREE_DEPTH);
    if (!w->geoms || !quad) {
        if (quad)
            dSpaceDestroy(quad);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++)
        w->geoms[i] = dSpaceGetGeom(w->space, i);
    for (int i = 0; i < n; i++) {
        dSpaceRemove(w->space, w->geoms[i]);
        dSpaceAdd(quad, w->geoms[i]);
    }
    dSpaceDestroy(w->space);
    w->space = quad;
    w->ngeoms = (uint32_t)n;
    return 0;
}

/* Joint-space armature: a rotor of reflected inertia J on a hinge resists the joint's
 * acceleration with the torque -J q̈ between the two links, whatever the links' own rotation
 * (MuJoCo adds J to the joint-space mass matrix's diagonal). In ODE that is a one-row angular
 * motor on the hinge's axis whose target is the joint rate of the step before and whose CFM is
 * h / J: ODE's row then satisfies q̇' = q̇ - CFM λ, so λ = J (q̇ - q̇') / h, the rotor's torque
 * integrated implicitly, with no force bound. The links keep their own inertia (no tensor
 * added, world_mass.c), so no needle-shaped tensor and no heavy light link meet the contacts. */
static int build_rotors(struct hs_world *w, const struct hs_world_body_spec *specs, uint32_t nspecs)
{
    if (!w->params.armature_joint_space)
        return 0;
    uint32_t n = 0;
    for (uint32_t b = 0; b < nspecs; b++)
        for (uint32_t i = 0; specs[b].armature && i < specs[b].model->nlinks; i++)
            n += specs[b].armature[i] > 0;
    w->rotors = calloc(n + 1, sizeof *w->rotors);
    if (!w->rotors)
        return -ENOMEM;
    for (uint32_t b = 0; b < nspecs; b++)
        for (uint32_t i = 0; specs[b].armature && i < specs[b].model->nlinks; i++) {
            const struct hs__world_link *l = &w->bodies[b].links[i];
            double arm = specs[b].armature[i];
            if (!(arm > 0) || !isfinite(arm) || l->type != HS_JOINT_ROTATE || !l->joint ||
                dJointGetType(l->joint) != dJointTypeHinge)
                continue;
            dJointID m = dJointCreateAMotor(w->world, 0);
            if (!m)
                return -ENOMEM;
            dJointAttach(m, dJointGetBody(l->joint, 0), dJointGetBody(l->joint, 1));
            dJointSetAMotorMode(m, dAMotorUser);
            dJointSetAMotorNumAxes(m, 1);
            dVector3 a;
            dJointGetHingeAxis(l->joint, a);
            dJointSetAMotorAxis(m, 0, 1, a[0], a[1], a[2]);
            dJointSetAMotorParam(m, dParamFMax, dInfinity);
            dJointSetAMotorParam(m, dParamCFM, w->params.step_s / arm);
            w->rotors[w->nrotors++] = (struct hs__world_rotor){m, l};
        }
    return 0;
}

/* ODE allocates its step arena on the first step and grows the contact arena with the contact
 * count: run the configured steps now, then one step with the most contacts a step may make
 * (world_reserve.c), then put every body back. */
static int warm_up(struct hs_world *w)
{
    save_state(w);
    for (uint32_t i = 0; i < w->params.warmup_steps; i++) {
        int r = hs_world_step(w);
        if (r < 0)
            return r; /* the initial state itself diverges: refuse the world */
    }
    /* warmup_steps 0 asks for no warm-up at all: ODE then allocates in the first steps. */
    if (w->params.warmup_steps) {
        w->sizing_contacts = w->contacts_cap;
        int r = hs_world_step(w);
        w->sizing_contacts = 0;
        if (r < 0)
            return r;
    }
    restore_state(w);
    hs__world_floor_reset(w);
    /* QuickStep shuffles constraints with ODE's global generator: reseed so a new world steps
     * the same way every time, whatever ran before (reproducible logs and tests). */
    dRandSetSeed(0);
    /* What ODE said about the undone steps is not the run's: the sizing step's made-up contacts
     * (every pair at max_contacts points in one island) are degenerate by design, and the
     * standard solver reported "LCP internal error" for them at "tick 0" of every bundled
     * biped, which read as a fault. A real problem of the initial pose shows again in the
     * run's first step. */
    hs__ode_forget_messages(w);
    w->iterations = 0; /* adaptive iterations start from the full count again */
    w->calm_steps = 0;
    w->same_count_steps = 0;
    w->rest_steps = UINT32_MAX; /* nothing has moved yet */
    dWorldSetQuickStepNumIterations(w->world, (int)w->params.quick_iterations);
    w->time_s = 0;
    w->nsteps = 0;
    hs__world_read_joints(w, true);
    /* The warm-up's forces are not the restored state's: no jump against them. */
    hs_world_health_reset(w);
    w->health_have_prev = false;
    return 0;
}

int hs_world_create(const struct hs_world_params *params, const struct hs_world_body_spec *specs,
                    uint32_t nspecs, struct hs_world **ret_world, struct hs_diag *diag)
{
    int r = hs__world_params_check(params, diag);
    if (r)
        return r;
    if (nspecs == 0 || !specs)
        return hs_diag_set(diag, -EINVAL, "", 0, 0, "a world needs at least one body");
    r = hs__ode_acquire();
    if (r)
        return hs_diag_set(diag, r, "", 0, 0, "ODE initialisation failed");
    struct hs_world *w = calloc(1, sizeof *w);
    if (!w) {
        hs__ode_release();
        return hs_diag_set(diag, -ENOMEM, "", 0, 0, "out of memory");
    }
    w->params = *params;
    w->world = dWorldCreate();
    w->space = dSimpleSpaceCreate(0); /* simple space: no allocation per collide (notes/ode.md) */
    w->contact_group = dJointGroupCreate(0);
    w->bodies = calloc(nspecs, sizeof *w->bodies);
    w->contact_geoms = calloc(params->max_contacts, sizeof *w->contact_geoms);
    if (!w->world || !w->space || !w->contact_group || !w->bodies || !w->contact_geoms) {
        r = hs_diag_set(diag, -ENOMEM, "", 0, 0, "out of memory");
        goto fail;
    }
    w->nbodies = nspecs;
    dWorldSetGravity(w->world, params->gravity[0], params->gravity[1], params->gravity[2]);
    dWorldSetERP(w->world, params->erp);
    dWorldSetCFM(w->world, params->cfm);
    dWorldSetQuickStepNumIterations(w->world, (int)params->quick_iterations);
    if (params->quick_w > 0)
        dWorldSetQuickStepW(w->world, params->quick_w);
    dWorldSetContactSurfaceLayer(w->world, params->surface_layer);
    dWorldSetLinearDamping(w->world, params->linear_damping);
    dWorldSetAngularDamping(w->world, params->angular_damping);
    dWorldSetAutoDisableFlag(w->world, 0);
    for (uint32_t b = 0; b < nspecs; b++) {
        w->bodies[b].world = w;
        w->bodies[b].index = b;
        struct hs_world_body_spec sb = specs[b];
        if (params->armature_joint_space)
            sb.armature = NULL; /* the rotor rows carry it (build_rotors) */
        r = hs__world_build_body(w, &w->bodies[b], &sb, diag);
        if (r)
            goto fail;
    }
    r = hs__world_materials_init(w, specs, diag);
    if (r)
        goto fail;
    r = collect_actuated(w);
    if (r == 0)
        r = build_rotors(w, specs, nspecs);
    if (r == 0)
        r = hs__world_mimics_build(w);
    if (r == 0)
        r = hs__world_health_init(w);
    w->saved_state = calloc(13 * (size_t)w->nall_bodies + 1, sizeof *w->saved_state);
    if (r || !w->saved_state) {
        r = hs_diag_set(diag, -ENOMEM, "", 0, 0, "out of memory");
        goto fail;
    }
    hs__world_place_on_static(w, specs, nspecs);
    body_collide_bits(w);
    if (spread_space(w, specs, nspecs) < 0 || hs__world_broad_init(w) < 0) {
        r = hs_diag_set(diag, -ENOMEM, "", 0, 0, "out of memory");
        goto fail;
    }
    hs__world_reserve_count(w);
    hs__world_read_joints(w, true);
    hs__world_guard_init(w);
    if (hs__world_floor_init(w) < 0) {
        r = hs_diag_set(diag, -ENOMEM, "", 0, 0, "out of memory");
        goto fail;
    }
    if ((r = warm_up(w)) < 0) {
        char why[256];
        hs__world_fault_describe(w, &w->fault, NULL, why, sizeof why);
        r = hs_diag_set(diag, r, "", 0, 0,
                        "the initial state diverges at warm-up step %llu of %u: %s",
                        (unsigned long long)w->fault.step, w->params.warmup_steps, why);
        goto fail;
    }
    *ret_world = w;
    return 0;
fail:
    hs_world_destroy(w);
    return r;
}

/* A step abandoned by ODE's fatal handlers (ode_init.c) leaves ODE's own bookkeeping of that
 * world mid-step (its threading job list is not empty, and destroying it trips another ODE
 * assertion, measured). Such a world's ODE objects are never touched again: they are kept
 * here, reachable, until the process ends, which follows a plant fault anyway. */
#define GRAVEYARD_MAX 16
static struct buried {
    dWorldID world;
    dSpaceID space;
    dJointGroupID group;
    struct hs__world_mesh *meshes; /* ODE's trimesh data points into their arrays */
} graveyard[GRAVEYARD_MAX];
static unsigned graveyard_n;

static bool bury_if_abandoned(struct hs_world *w)
{
    if (w->fault.kind != HS_WORLD_FAULT_ODE_INTERNAL)
        return false;
    if (graveyard_n < GRAVEYARD_MAX)
        graveyard[graveyard_n++] = (struct buried){
            .world = w->world, .space = w->space, .group = w->contact_group, .meshes = w->meshes};
    return true;
}

static void destroy_ode_objects(struct hs_world *w)
{
    if (w->contact_group)
        dJointGroupDestroy(w->contact_group);
    if (w->space)
        dSpaceDestroy(w->space); /* cleanup mode: destroys its geoms */
    for (uint32_t i = 0; i < w->nmeshes; i++) {
        dGeomTriMeshDataDestroy(w->meshes[i].data);
        free(w->meshes[i].vertices);
        free(w->meshes[i].indices);
    }
    free(w->meshes);
    if (w->world)
        dWorldDestroy(w->world); /* destroys bodies and joints */
}

void hs_world_destroy(struct hs_world *w)
{
    if (!w)
        return;
    /* An abandoned world keeps its ODE user count too: ODE must not close under it. */
    bool abandoned = bury_if_abandoned(w);
    if (!abandoned)
        destroy_ode_objects(w);
    for (uint32_t b = 0; w->bodies && b < w->nbodies; b++) {
        free(w->bodies[b].links);
        free(w->bodies[b].extra_joints);
        free(w->bodies[b].extra_blocks);
    }
    free(w->bodies);
    free(w->actuated);
    free(w->mimics);
    free(w->rotors);
    free(w->geoms);
    free(w->contact_geoms);
    free(w->all_bodies);
    free(w->saved_state);
    hs__world_health_free(w);
    hs__world_floor_free(w);
    hs__world_broad_free(w);
    free(w);
    if (!abandoned)
        hs__ode_release();
}
