/* Collision meshes as convex hulls (mesh_collision: convex, src/model/model_hull.c and
 * src/world/world_geom.c), on real ODE worlds:
 * - the hull of a bumpy, non-convex closed mesh is convex (every hull point on the inner side
 *   of every face plane, within 3 merge tolerances of 0.1 % of its size: nearly coplanar facets
 *   are merged) and holds every mesh vertex within 5 merge tolerances (0.5 % of its size), has unit
 * outward normals, polygons lying in their planes (same tolerance) and wound counter-clockwise seen
 * from outside (as ODE's convex geom reads them), and V - E + F = 2;
 * - identical meshes share one hull; a hull much larger than its mesh warns naming the link; a
 *   flat mesh gets no hull and stays a triangle mesh;
 * - a 0.1 m cube given as a 12-triangle mesh, collided as its hull, rests on the box floor as
 *   the box primitive does: the same height within 0.05 mm, and the contact normal forces
 *   (ODE's joint feedback of the world's own contacts) sum to its weight within 1 %; as an
 *   exact trimesh too (the reference the hull replaces);
 * - the solver health's collision cost names the pair class (box-box, box-trimesh) with one
 *   narrow-phase test per step once it touches;
 * - the world gives ODE the hull's triangles (convex), the mesh's (exact), and under auto the
 *   mesh's for scenery and the hull's for a robot's big well-fitting mesh;
 * - ODE 0.16's own convex geom returns one contact for a cube resting on a box: why the world
 *   gives ODE the hull as triangles instead. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <ode/ode.h>

#include "hilsim/model.h"
#include "hilsim/world.h"
#include "world/model_builders.h"

#define G 9.80665

/* A closed mesh of a cube of side a centred at c (12 triangles, counter-clockwise outside). */
static void cube_mesh(double a, const double c[3], double *v, uint32_t *t, uint32_t base)
{
    for (int i = 0; i < 8; i++) {
        v[3 * i + 0] = c[0] + ((i & 1) ? a / 2 : -a / 2);
        v[3 * i + 1] = c[1] + ((i & 2) ? a / 2 : -a / 2);
        v[3 * i + 2] = c[2] + ((i & 4) ? a / 2 : -a / 2);
    }
    static const uint32_t f[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6},
                                      {0, 1, 4}, {1, 5, 4}, {2, 6, 3}, {3, 6, 7},
                                      {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (int i = 0; i < 12; i++)
        for (int k = 0; k < 3; k++)
            t[3 * i + k] = base + f[i][k];
}

/* Adds a mesh geom (arrays handed over) to link li at the model's next geom slot. */
static void add_mesh(struct hs_model *m, uint32_t li, double *v, uint32_t nv, uint32_t *t,
                     uint32_t nt)
{
    struct hs_geom *g = &m->geoms[m->ngeoms];
    memset(g, 0, sizeof *g);
    g->type = HS_GEOM_MESH;
    hs_pose_identity(&g->pose);
    g->u.mesh = (struct hs_mesh){.vertices = v, .nvertices = nv, .indices = t, .ntriangles = nt};
    struct hs_link *l = &m->links[li];
    if (l->geom_count == 0)
        l->geom_first = m->ngeoms;
    l->geom_count++;
    m->ngeoms++;
}

/* A UV sphere of radius 0.05 m with bumps (non-convex): rings x segments + 2 poles. */
static void bumpy_sphere(double **ret_v, uint32_t *ret_nv, uint32_t **ret_t, uint32_t *ret_nt)
{
    enum { RINGS = 24, SEG = 48 };
    uint32_t nv = RINGS * SEG + 2, nt = 2 * SEG * RINGS;
    double *v = malloc(3 * nv * sizeof *v);
    uint32_t *t = malloc(3 * nt * sizeof *t);
    assert_non_null(v);
    assert_non_null(t);
    v[0] = 0, v[1] = 0, v[2] = 0.05;  /* north */
    v[3] = 0, v[4] = 0, v[5] = -0.05; /* south */
    for (int r = 0; r < RINGS; r++) {
        double th = M_PI * (r + 1) / (RINGS + 1);
        for (int s = 0; s < SEG; s++) {
            double ph = 2 * M_PI * s / SEG;
            double rad = 0.05 * (1 + 0.2 * sin(5 * ph) * sin(3 * th));
            double *p = &v[3 * (2 + r * SEG + s)];
            p[0] = rad * sin(th) * cos(ph), p[1] = rad * sin(th) * sin(ph), p[2] = rad * cos(th);
        }
    }
    uint32_t k = 0;
#define IDX(r, s) (2u + (uint32_t)(r)*SEG + (uint32_t)((s) % SEG))
    for (int s = 0; s < SEG; s++) {
        t[k++] = 0, t[k++] = IDX(0, s), t[k++] = IDX(0, s + 1);
        t[k++] = 1, t[k++] = IDX(RINGS - 1, s + 1), t[k++] = IDX(RINGS - 1, s);
    }
    for (int r = 0; r + 1 < RINGS; r++)
        for (int s = 0; s < SEG; s++) {
            t[k++] = IDX(r, s), t[k++] = IDX(r + 1, s), t[k++] = IDX(r + 1, s + 1);
            t[k++] = IDX(r, s), t[k++] = IDX(r + 1, s + 1), t[k++] = IDX(r, s + 1);
        }
#undef IDX
    *ret_v = v, *ret_nv = nv, *ret_t = t, *ret_nt = k / 3;
}

static void free_model(struct hs_model *m)
{
    /* hs_model_free frees what the loaders allocate: meshes, hulls, warnings */
    hs_model_free(m);
}

static void hull_is_convex_and_holds_the_mesh(void **state)
{
    (void)state;
    struct hs_model *m = mb_new("bumpy", 1, 1, 0);
    double *v;
    uint32_t *t, nv, nt;
    bumpy_sphere(&v, &nv, &t, &nt);
    add_mesh(m, 0, v, nv, t, nt);
    struct hs_diag d = {0};
    assert_int_equal(hs_model_mesh_collision(m, HS_MESH_CONVEX, &d), 0);
    const struct hs_mesh *mesh = &m->geoms[0].u.mesh;
    const struct hs_hull *h = mesh->hull;
    assert_non_null(h);
    assert_int_equal(mesh->collision, HS_MESH_CONVEX);
    assert_true(h->nplanes >= 4);
    assert_true(h->npoints < nv); /* the dents are not on the hull */
    uint32_t w = 0, edges2 = 0;
    /* merged facets: vertices within a few merge tolerances of the faces (0.1 % of 0.12 m) */
    const double tol = 3 * h->tolerance_m;
    assert_true(h->tolerance_m > 0 && h->tolerance_m < 2e-4);
    for (uint32_t f = 0; f < h->nplanes; f++) {
        const double *pl = &h->planes[4 * f];
        assert_float_equal(pl[0] * pl[0] + pl[1] * pl[1] + pl[2] * pl[2], 1, 1e-9);
        for (uint32_t i = 0; i < h->npoints; i++) {
            const double *p = &h->points[3 * i];
            assert_true(pl[0] * p[0] + pl[1] * p[1] + pl[2] * p[2] <= pl[3] + tol);
        }
        assert_true(pl[3] > 0); /* ODE's convex geom needs its origin inside */
        uint32_t n = h->polygons[w];
        const uint32_t *idx = &h->polygons[w + 1];
        assert_true(n >= 3);
        double nw[3] = {0, 0, 0};
        for (uint32_t i = 0; i < n; i++) {
            assert_true(idx[i] < h->npoints);
            const double *a = &h->points[3 * idx[i]], *b = &h->points[3 * idx[(i + 1) % n]];
            assert_float_equal(pl[0] * a[0] + pl[1] * a[1] + pl[2] * a[2], pl[3], tol);
            nw[0] += (a[1] - b[1]) * (a[2] + b[2]);
            nw[1] += (a[2] - b[2]) * (a[0] + b[0]);
            nw[2] += (a[0] - b[0]) * (a[1] + b[1]);
        }
        assert_true(nw[0] * pl[0] + nw[1] * pl[1] + nw[2] * pl[2] > 0); /* CCW from outside */
        edges2 += n;
        w += 1 + n;
    }
    double out = 0;
    for (uint32_t f = 0; f < h->nplanes; f++)
        for (uint32_t i = 0; i < nv; i++) {
            const double *pl = &h->planes[4 * f];
            double x = pl[0] * (v[3 * i] - h->centre[0]) + pl[1] * (v[3 * i + 1] - h->centre[1]) +
                       pl[2] * (v[3 * i + 2] - h->centre[2]) - pl[3];
            out = fmax(out, x);
        }
    print_message("hull: %u faces, %u points, tolerance %.3g m, mesh vertices at most %.3g m "
                  "outside\n",
                  h->nplanes, h->npoints, h->tolerance_m, out);
    assert_true(out <= 5 * h->tolerance_m);
    assert_int_equal(w, h->npolygon_words);
    /* Euler: each edge is in two faces */
    assert_int_equal((int)h->npoints - (int)(edges2 / 2) + (int)h->nplanes, 2);
    /* the hull holds the mesh: more volume, and here a good fit (no warning) */
    assert_true(h->volume_m3 > h->mesh_volume_m3);
    assert_true(h->volume_m3 < HS_HULL_POOR_FIT_RATIO * h->mesh_volume_m3);
    assert_int_equal(m->nwarnings, 0);
    free_model(m);
}

static void identical_meshes_share_a_hull_and_poor_fits_warn(void **state)
{
    (void)state;
    struct hs_model *m = mb_new("parts", 3, 3, 0);
    snprintf(m->links[1].name, sizeof m->links[1].name, "gripper");
    for (int k = 0; k < 2; k++) { /* link 0 and link 2: the same cube */
        double *v = malloc(24 * sizeof *v);
        uint32_t *t = malloc(36 * sizeof *t);
        cube_mesh(0.1, (double[3]){0, 0, 0}, v, t, 0);
        add_mesh(m, k ? 2 : 0, v, 8, t, 12);
    }
    double *v = malloc(48 * sizeof *v); /* two cubes 0.3 m apart: its hull is a poor fit */
    uint32_t *t = malloc(72 * sizeof *t);
    cube_mesh(0.05, (double[3]){0, 0, 0}, v, t, 0);
    cube_mesh(0.05, (double[3]){0.3, 0, 0}, v + 24, t + 36, 8);
    add_mesh(m, 1, v, 16, t, 24);
    /* geoms go in link order in a real model: reorder link 1's slice before link 2's */
    struct hs_geom tmp = m->geoms[1];
    m->geoms[1] = m->geoms[2], m->geoms[2] = tmp;
    m->links[1].geom_first = 1, m->links[2].geom_first = 2;
    struct hs_diag d = {0};
    assert_int_equal(hs_model_mesh_collision(m, HS_MESH_CONVEX, &d), 0);
    assert_int_equal(m->nhulls, 2);
    assert_ptr_equal(m->geoms[0].u.mesh.hull, m->geoms[2].u.mesh.hull);
    const struct hs_hull *h = m->geoms[0].u.mesh.hull;
    assert_int_equal(h->nplanes, 6); /* coplanar triangles merged into the cube's faces */
    assert_int_equal(h->npoints, 8);
    assert_float_equal(h->volume_m3, 1e-3, 1e-12);
    assert_float_equal(h->mesh_volume_m3, 1e-3, 1e-12);
    assert_int_equal(m->nwarnings, 1);
    assert_non_null(strstr(m->warnings[0], "link 'gripper'"));
    assert_non_null(strstr(m->warnings[0], "poor fit"));
    /* exact drops the hulls again; box replaces the meshes */
    assert_int_equal(hs_model_mesh_collision(m, HS_MESH_EXACT, &d), 0);
    assert_int_equal(m->nhulls, 0);
    assert_null(m->geoms[0].u.mesh.hull);
    assert_int_equal(m->geoms[0].u.mesh.collision, HS_MESH_EXACT);
    assert_int_equal(hs_model_mesh_collision(m, HS_MESH_BOX, &d), 0);
    assert_int_equal(m->geoms[1].type, HS_GEOM_BOX);
    assert_float_equal(m->geoms[1].u.box.size[0], 0.35, 1e-12);
    assert_float_equal(m->geoms[1].pose.p[0], 0.15, 1e-12);
    free_model(m);
}

/* Two config entries loading one file (hull_source, as the bench passes it): the second model
 * takes the first one's hull instead of running qhull again; without it, a hull of its own. */
static void a_second_load_of_one_file_borrows_its_hulls(void **state)
{
    (void)state;
    static const char wrl[] =
        "#VRML V2.0 utf8\n"
        "DEF ROOT Joint { jointType \"free\" children [\n"
        "  Segment { mass 1 momentsOfInertia [0.01 0 0 0 0.01 0 0 0 0.01] }\n"
        "  Shape { geometry IndexedFaceSet { coord Coordinate { point [\n"
        "    0 0 0, 0.1 0 0, 0.1 0.1 0, 0 0.1 0, 0 0 0.1, 0.1 0 0.1, 0.1 0.1 0.1, 0 0.1 0.1 ] }\n"
        "    coordIndex [ 0 3 2 1 -1, 4 5 6 7 -1, 0 1 5 4 -1, 1 2 6 5 -1, 2 3 7 6 -1,\n"
        "                 3 0 4 7 -1 ] } }\n"
        "] }\n";
    char path[] = "/tmp/hs_hull_share_XXXXXX.wrl";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, wrl, sizeof wrl - 1), (ssize_t)(sizeof wrl - 1));
    close(fd);
    struct hs_model *a = NULL, *b = NULL, *c = NULL;
    struct hs_diag d = {0};
    struct hs_model_options o = {.mesh_approx = HS_MESH_CONVEX};
    assert_int_equal(hs_model_load_opts(path, &o, &a, &d), 0);
    assert_int_equal(hs_model_load_opts(path, &o, &c, &d), 0);
    o.hull_source = a;
    assert_int_equal(hs_model_load_opts(path, &o, &b, &d), 0);
    unlink(path);
    assert_int_equal(a->ngeoms, 1);
    assert_int_equal(a->nhulls, 1);
    assert_int_equal(b->nhulls, 0);                                     /* nothing of its own ... */
    assert_ptr_equal(b->geoms[0].u.mesh.hull, a->geoms[0].u.mesh.hull); /* ... a's hull */
    assert_int_equal(c->nhulls, 1);
    assert_ptr_not_equal(c->geoms[0].u.mesh.hull, a->geoms[0].u.mesh.hull);
    assert_int_equal(b->geoms[0].u.mesh.hull->nplanes, 6);
    hs_model_free(b); /* the borrower first or last: a's hull is a's */
    hs_model_free(c);
    hs_model_free(a);
}

static void flat_mesh_has_no_hull(void **state)
{
    (void)state;
    struct hs_model *m = mb_new("plate", 1, 1, 0);
    double *v = malloc(12 * sizeof *v);
    uint32_t *t = malloc(6 * sizeof *t);
    const double q[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    memcpy(v, q, sizeof q);
    const uint32_t tr[6] = {0, 1, 2, 0, 2, 3};
    memcpy(t, tr, sizeof tr);
    add_mesh(m, 0, v, 4, t, 2);
    struct hs_diag d = {0};
    assert_int_equal(hs_model_mesh_collision(m, HS_MESH_CONVEX, &d), 0);
    assert_null(m->geoms[0].u.mesh.hull);
    assert_int_equal(m->nwarnings, 0); /* a plate is no poor fit: its triangles are right */
    free_model(m);
}

/* ---- resting contact ---- */

static void near_cb(void *data, dGeomID a, dGeomID b)
{
    hs_world_ode_near_callback(data, a, b);
}

struct rest {
    double z;  /* body height at rest, m */
    double fz; /* sum of the floor's normal forces on it, N */
    int ntris; /* triangles of the trimesh geoms in the world */
    struct hs_world_health_summary health;
};

/* A 0.1 m cube of 1 kg as `kind` (0 box primitive, else a mesh collided as `how`) dropped from
 * 1 mm over the box floor; after 2 s, one more step of the world's own collision and solver with
 * joint feedback on its contacts. */
static struct rest rest_on_floor(int kind, enum hs_mesh_approx how)
{
    const double a = 0.1, mass = 1;
    struct hs_model *floor = mb_floor(), *cube;
    if (kind == 0) {
        cube = mb_cube(a, mass);
    } else {
        cube = mb_new("cube", 1, 1, 0);
        double i = mass * a * a / 6;
        mb_mass(&cube->links[0], mass, 0, 0, 0, i, i, i);
        double *v = malloc(24 * sizeof *v);
        uint32_t *t = malloc(36 * sizeof *t);
        cube_mesh(a, (double[3]){0, 0, 0}, v, t, 0);
        add_mesh(cube, 0, v, 8, t, 12);
        struct hs_diag d = {0};
        assert_int_equal(hs_model_mesh_collision(cube, how, &d), 0);
    }
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], cube);
    s[1].root_pose.p[2] = a / 2 + 1e-3;
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = NULL;
    struct hs_diag d = {0};
    int r = hs_world_create(&p, s, 2, &w, &d);
    if (r)
        fail_msg("hs_world_create: %d %s", r, d.msg);
    for (int i = 0; i < 2000; i++)
        assert_int_equal(hs_world_step(w), 0);
    struct rest res = {0};
    hs_world_health_summary(w, &res.health);
    dSpaceID space = hs_world_ode_space(w);
    for (int i = 0; i < dSpaceGetNumGeoms(space); i++)
        if (dGeomGetClass(dSpaceGetGeom(space, i)) == dTriMeshClass)
            res.ntris += dGeomTriMeshGetTriangleCount(dSpaceGetGeom(space, i));
    dBodyID body = hs_world_ode_body(w, 1, 0);
    hs_world_ode_step_begin(w);
    dSpaceCollide(space, w, near_cb);
    int nj = dBodyGetNumJoints(body);
    dJointFeedback fb[64];
    assert_true(nj > 0 && nj <= 64);
    for (int j = 0; j < nj; j++)
        dJointSetFeedback(dBodyGetJoint(body, j), &fb[j]);
    dWorldQuickStep(hs_world_ode_world(w), p.step_s);
    for (int j = 0; j < nj; j++) {
        dJointID jt = dBodyGetJoint(body, j);
        assert_int_equal(dJointGetType(jt), dJointTypeContact);
        res.fz += dJointGetBody(jt, 0) == body ? fb[j].f1[2] : fb[j].f2[2];
    }
    dJointGroupEmpty(hs_world_ode_contact_group(w));
    res.z = dBodyGetPosition(body)[2];
    hs_world_destroy(w);
    mb_free(floor);
    if (kind == 0)
        mb_free(cube);
    else
        hs_model_free(cube);
    return res;
}

static void box_mesh_as_convex_rests_like_a_box(void **state)
{
    (void)state;
    struct rest box = rest_on_floor(0, HS_MESH_CONVEX);
    struct rest hull = rest_on_floor(1, HS_MESH_CONVEX);
    struct rest tri = rest_on_floor(1, HS_MESH_EXACT);
    print_message("box z %.6f Fz %.4f | convex z %.6f Fz %.4f | trimesh z %.6f Fz %.4f\n", box.z,
                  box.fz, hull.z, hull.fz, tri.z, tri.fz);
    assert_int_equal(box.ntris, 0);
    assert_int_equal(hull.ntris, 12); /* the hull's 6 faces, fanned */
    assert_int_equal(tri.ntris, 12);
    const double weight = 1 * G;
    assert_float_equal(box.fz, weight, 0.01 * weight);
    assert_float_equal(hull.fz, weight, 0.01 * weight);
    assert_float_equal(tri.fz, weight, 0.01 * weight);
    assert_float_equal(hull.z, box.z, 5e-5);
    assert_float_equal(tri.z, box.z, 5e-5);
    assert_float_equal(box.z, 0.05, 1e-3); /* resting on the floor's top at z = 0 */
    /* the health's collision cost names the pair class the time went to: one test a step */
    const struct rest *rs[3] = {&box, &hull, &tri};
    const char *cls[3] = {"box-box", "box-trimesh", "box-trimesh"};
    for (int k = 0; k < 3; k++) {
        const struct hs_world_health_summary *h = &rs[k]->health;
        assert_int_equal(h->npair_costs, 1);
        assert_string_equal(h->pair_costs[0].name, cls[k]);
        assert_true(h->pair_costs[0].calls <= h->steps); /* not while it falls its 1 mm */
        assert_true(h->pair_costs[0].calls + 50 >= h->steps);
        assert_true(h->pair_costs[0].total_s > 0);
    }
}

/* The world gives ODE the hull's triangles under convex, the mesh's under exact; auto keeps a
 * scenery mesh exact and hulls a robot's. */
static void world_takes_the_hull_triangles(void **state)
{
    (void)state;
    int hull = 0; /* the hull's triangles, from the first (convex) pass */
    for (int how = 0; how < 3; how++) {
        static const enum hs_mesh_approx hows[] = {HS_MESH_CONVEX, HS_MESH_EXACT, HS_MESH_AUTO};
        struct hs_model *ball = mb_new("ball", 1, 1, 0), *scenery = mb_new("rock", 1, 1, 0);
        struct hs_model *ms[2] = {ball, scenery};
        for (int k = 0; k < 2; k++) {
            double *v;
            uint32_t *t, nv, nt;
            bumpy_sphere(&v, &nv, &t, &nt);
            add_mesh(ms[k], 0, v, nv, t, nt);
            struct hs_diag d = {0};
            assert_int_equal(hs_model_mesh_collision(ms[k], hows[how], &d), 0);
        }
        scenery->links[0].joint_type = HS_JOINT_FIXED;
        struct hs_world_body_spec s[2];
        hs_world_spec_default(&s[0], scenery);
        s[0].is_static = true;
        hs_world_spec_default(&s[1], ball);
        s[1].root_pose.p[2] = 1;
        struct hs_world_params p;
        hs_world_params_default(&p);
        struct hs_world *w = NULL;
        struct hs_diag d = {0};
        assert_int_equal(hs_world_create(&p, s, 2, &w, &d), 0);
        dSpaceID space = hs_world_ode_space(w);
        int tris[2] = {0, 0}; /* scenery, ball */
        for (int i = 0; i < dSpaceGetNumGeoms(space); i++) {
            dGeomID g = dSpaceGetGeom(space, i);
            assert_int_equal(dGeomGetClass(g), dTriMeshClass);
            tris[dGeomGetBody(g) != NULL] = dGeomTriMeshGetTriangleCount(g);
        }
        int mesh = (int)ball->geoms[0].u.mesh.ntriangles;
        if (hows[how] == HS_MESH_CONVEX)
            hull = (int)ball->geoms[0].u.mesh.hull->ntriangles;
        print_message("%s: scenery %d, robot %d triangles (mesh %d, hull %d)\n",
                      hs_mesh_approx_name(hows[how]), tris[0], tris[1], mesh, hull);
        assert_true(hull < mesh / 2);
        assert_int_equal(tris[0], hows[how] == HS_MESH_CONVEX ? hull : mesh);
        assert_int_equal(tris[1], hows[how] == HS_MESH_EXACT ? mesh : hull);
        hs_world_destroy(w);
        hs_model_free(ball);
        hs_model_free(scenery);
    }
}

/* Why the world does not give ODE its convex geom (world_geom.c): ODE 0.16's convex-box and
 * convex-convex colliders return one contact for a face resting flat on a face (the hull of a
 * cube on a box floor), where the trimesh-box collider returns the corners. Should a new ODE
 * fix this, this test fails and dCreateConvex becomes worth another look. */
static void ode_convex_box_gives_one_contact(void **state)
{
    (void)state;
    struct hs_model *m = mb_new("cube", 1, 1, 0);
    double *v = malloc(24 * sizeof *v);
    uint32_t *t = malloc(36 * sizeof *t);
    cube_mesh(0.1, (double[3]){0, 0, 0}, v, t, 0);
    add_mesh(m, 0, v, 8, t, 12);
    struct hs_diag d = {0};
    assert_int_equal(hs_model_mesh_collision(m, HS_MESH_CONVEX, &d), 0);
    const struct hs_hull *h = m->geoms[0].u.mesh.hull;
    assert_int_equal(dInitODE2(0), 1);
    dSpaceID sp = dSimpleSpaceCreate(0);
    dGeomID floor = dCreateBox(sp, 10, 10, 0.2);
    dGeomSetPosition(floor, 0, 0, -0.1);
    dGeomID cx = dCreateConvex(sp, h->planes, h->nplanes, h->points, h->npoints, h->polygons);
    dTriMeshDataID td = dGeomTriMeshDataCreate();
    dGeomTriMeshDataBuildDouble(td, h->points, 3 * sizeof(double), (int)h->npoints, h->triangles,
                                (int)(3 * h->ntriangles), 3 * sizeof(uint32_t));
    dGeomID tm = dCreateTriMesh(sp, td, NULL, NULL, NULL);
    dGeomSetPosition(cx, 0, 0, 0.049);
    dGeomSetPosition(tm, 0, 0, 0.049);
    dContactGeom c[8];
    int ncx = dCollide(cx, floor, 8, c, sizeof c[0]);
    int ntm = dCollide(tm, floor, 8, c, sizeof c[0]);
    print_message("1 mm into a box floor: convex %d contact(s), hull trimesh %d\n", ncx, ntm);
    assert_int_equal(ncx, 1);
    assert_true(ntm >= 4);
    dGeomDestroy(cx);
    dGeomDestroy(tm);
    dGeomTriMeshDataDestroy(td);
    dGeomDestroy(floor);
    dSpaceDestroy(sp);
    dCloseODE();
    hs_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hull_is_convex_and_holds_the_mesh),
        cmocka_unit_test(identical_meshes_share_a_hull_and_poor_fits_warn),
        cmocka_unit_test(a_second_load_of_one_file_borrows_its_hulls),
        cmocka_unit_test(flat_mesh_has_no_hull),
        cmocka_unit_test(box_mesh_as_convex_rests_like_a_box),
        cmocka_unit_test(world_takes_the_hull_triangles),
        cmocka_unit_test(ode_convex_box_gives_one_contact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
