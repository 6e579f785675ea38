/* Geometry: full VRML Transform math into geom poses, primitives and their scaling, the
 * tessellation fallback, IndexedFaceSet triangulation (non-convex, missing -1, ccw) and the
 * ear-clipping routine itself on a non-convex polygon in a tilted plane; Choreonoid's Surface
 * (collision shapes in place of the visual ones). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "model_internal.h"
#include "model_test_util.h"

static struct hs_model *load_ok(const char *src)
{
    struct hs_model *m = NULL;
    struct hs_diag d;
    int r = load_src(src, &m, &d);
    if (r < 0)
        fprintf(stderr, "%d:%d: %s\n", d.line, d.column, d.msg);
    assert_int_equal(r, 0);
    return m;
}

static void tri_normal(const double *v, const uint32_t *t, double n[3])
{
    const double *a = &v[3 * t[0]], *b = &v[3 * t[1]], *c = &v[3 * t[2]];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    n[0] = 0.5 * (u[1] * w[2] - u[2] * w[1]);
    n[1] = 0.5 * (u[2] * w[0] - u[0] * w[2]);
    n[2] = 0.5 * (u[0] * w[1] - u[1] * w[0]);
}

/* T*C*R*SR*S*-SR*-C with a uniform scale: the origin maps to t + c - R c scaled about c. */
static void test_transform_center_rotation_scale(void **state)
{
    (void)state;
    struct hs_model *m =
        load_ok("Joint { jointType \"free\" children [\n"
                " Transform { translation 1 0 0 center 0 1 0 rotation 0 0 1 1.5707963267948966\n"
                "  children Shape { geometry Box { size 1 2 3 } } }\n"
                " Transform { translation 1 0 0 center 0 1 0 rotation 0 0 1 1.5707963267948966\n"
                "  scale 2 2 2 scaleOrientation 1 0 0 0.3 children Shape { geometry Box { size 1 2 "
                "3 } } }\n"
                "] }");
    assert_int_equal(m->ngeoms, 2);
    const struct hs_geom *a = &m->geoms[0], *b = &m->geoms[1];
    assert_int_equal(a->type, HS_GEOM_BOX);
    assert_near(a->pose.p[0], 2, 1e-12);
    assert_near(a->pose.p[1], 1, 1e-12);
    assert_near(a->pose.R[1], -1, 1e-12);
    assert_near(a->u.box.size[1], 2, 0);
    assert_int_equal(b->type, HS_GEOM_BOX);
    assert_near(b->pose.p[0], 3, 1e-9);
    assert_near(b->pose.p[1], 1, 1e-9);
    assert_near(b->u.box.size[2], 6, 1e-9);
    hs_model_free(m);
}

static void test_scaled_primitives(void **state)
{
    (void)state;
    struct hs_model *m = load_ok(
        "Joint { jointType \"free\" children [\n"
        " Transform { scale 2 3 2 children Shape { geometry Cylinder { radius 1 height 1 } } }\n"
        " Transform { scale 1 3 1 children Shape { geometry Sphere { radius 0.5 } } }\n"
        " Transform { scale 2 1 1 scaleOrientation 0 0 1 0.7853981633974483\n"
        "  children Shape { geometry Box { size 1 1 1 } } }\n"
        " Transform { scale 0.5 0.5 0.5 children Shape { geometry Cone { } } }\n"
        "] }");
    assert_int_equal(m->ngeoms, 4);
    assert_int_equal(m->geoms[0].type, HS_GEOM_CYLINDER);
    assert_near(m->geoms[0].u.cylinder.radius, 2, 1e-12);
    assert_near(m->geoms[0].u.cylinder.height, 3, 1e-12);
    /* A sphere cannot scale non-uniformly: it becomes a mesh with its pole at y = 1.5. */
    const struct hs_geom *s = &m->geoms[1];
    assert_int_equal(s->type, HS_GEOM_MESH);
    double ymax = -1;
    for (uint32_t i = 0; i < s->u.mesh.nvertices; i++)
        ymax = fmax(ymax, s->u.mesh.vertices[3 * i + 1]);
    assert_near(ymax, 1.5, 1e-12);
    /* A box scaled along a diagonal is sheared: mesh, corner (.5,.5,.5) -> (1, 1, .5). */
    const struct hs_geom *bx = &m->geoms[2];
    assert_int_equal(bx->type, HS_GEOM_MESH);
    assert_int_equal(bx->u.mesh.nvertices, 8);
    assert_int_equal(bx->u.mesh.ntriangles, 12);
    bool found = false;
    for (uint32_t i = 0; i < 8; i++) {
        const double *v = &bx->u.mesh.vertices[3 * i];
        found =
            found || (fabs(v[0] - 1) < 1e-9 && fabs(v[1] - 1) < 1e-9 && fabs(v[2] - 0.5) < 1e-9);
    }
    assert_true(found);
    /* Outward winding: the signed volume of the tessellated box is its volume det(A) = 2. */
    double vol = 0;
    for (uint32_t t = 0; t < 12; t++) {
        const uint32_t *ix = &bx->u.mesh.indices[3 * t];
        const double *a = &bx->u.mesh.vertices[3 * ix[0]], *b = &bx->u.mesh.vertices[3 * ix[1]],
                     *c = &bx->u.mesh.vertices[3 * ix[2]];
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                a[2] * (b[0] * c[1] - b[1] * c[0])) /
               6;
    }
    assert_near(vol, 2, 1e-9);
    assert_int_equal(m->geoms[3].type, HS_GEOM_CONE);
    assert_near(m->geoms[3].u.cone.bottom_radius, 0.5, 1e-12);
    assert_near(m->geoms[3].u.cone.height, 1, 1e-12);
    hs_model_free(m);
}

static void test_ifs_nonconvex_and_missing_terminator(void **state)
{
    (void)state;
    struct hs_model *m =
        load_ok("Joint { jointType \"free\" children Shape { geometry IndexedFaceSet {\n"
                " coord Coordinate { point [ 0 0 0, 2 0 0, 2 1 0, 1 1 0, 1 2 0, 0 2 0, 0 0 1 ] }\n"
                " coordIndex [ 0 1 2 3 4 5 -1 0 6 1 ] } } }");
    assert_int_equal(m->ngeoms, 1);
    const struct hs_mesh *me = &m->geoms[0].u.mesh;
    assert_int_equal(m->geoms[0].type, HS_GEOM_MESH);
    assert_int_equal(me->nvertices, 7);
    assert_int_equal(me->ntriangles, 5); /* 4 for the L, 1 for the last face without -1 */
    double area = 0;
    for (uint32_t t = 0; t < 4; t++) {
        double n[3];
        tri_normal(me->vertices, &me->indices[3 * t], n);
        assert_true(n[2] > 0); /* same winding as the polygon */
        area += n[2];
    }
    assert_near(area, 3, 1e-12); /* the L covers 3 unit squares, no overlap */
    hs_model_free(m);

    m = load_ok("Joint { jointType \"free\" children Shape { geometry IndexedFaceSet {\n"
                " coord Coordinate { point [ 0 0 0, 1 0 0, 0 1 0 ] } coordIndex [ 0 1 2 -1 ]\n"
                " ccw FALSE } } }");
    double n[3];
    tri_normal(m->geoms[0].u.mesh.vertices, m->geoms[0].u.mesh.indices, n);
    assert_true(n[2] < 0);
    hs_model_free(m);

    struct hs_model *bad = NULL;
    struct hs_diag d;
    assert_true(load_src("Joint { children Shape { geometry IndexedFaceSet {\n"
                         " coord Coordinate { point [ 0 0 0, 1 0 0, 0 1 0 ] }\n"
                         " coordIndex [ 0 1 3 ] } } }",
                         &bad, &d) < 0);
    assert_int_equal(d.line, 3);
    assert_int_equal(d.column, 19);
    assert_non_null(strstr(d.msg, "out of range"));
}

/* A comb (3 teeth) in the plane x + y + z = 1 seen from any side. */
static void test_ear_clipping_comb_in_tilted_plane(void **state)
{
    (void)state;
    static const double p2[][2] = {{0, 0}, {5, 0}, {5, 3}, {4, 3}, {4, 1}, {3, 1},
                                   {3, 3}, {2, 3}, {2, 1}, {1, 1}, {1, 3}, {0, 3}};
    enum { N = sizeof p2 / sizeof p2[0] };
    double e1[3] = {1 / sqrt(2), -1 / sqrt(2), 0}, e2[3] = {1 / sqrt(6), 1 / sqrt(6), -2 / sqrt(6)};
    double verts[3 * N];
    uint32_t poly[N], tris[3 * (N - 2)];
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 3; k++)
            verts[3 * i + k] = p2[i][0] * e1[k] + p2[i][1] * e2[k] + 1.0 / 3;
        poly[i] = (uint32_t)i;
    }
    uint32_t nt = hs__triangulate(verts, poly, N, tris);
    assert_int_equal(nt, N - 2);
    double nrm[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                     e1[0] * e2[1] - e1[1] * e2[0]};
    double area = 0;
    for (uint32_t t = 0; t < nt; t++) {
        double n[3];
        tri_normal(verts, &tris[3 * t], n);
        double a = n[0] * nrm[0] + n[1] * nrm[1] + n[2] * nrm[2];
        assert_true(a > -1e-12); /* no flipped triangle */
        area += a;
    }
    assert_near(area, 5 * 3 - 2 * 2, 1e-9); /* 15 minus two 1x2 notches */
    /* Degenerate (collinear) faces give nothing rather than garbage. */
    double line[9] = {0, 0, 0, 1, 0, 0, 2, 0, 0};
    uint32_t lp[4] = {0, 1, 2, 1};
    assert_int_equal(hs__triangulate(line, lp, 4, tris), 0);
}

static double signed_volume(const struct hs_mesh *me)
{
    double vol = 0;
    for (uint32_t t = 0; t < me->ntriangles; t++) {
        const uint32_t *ix = &me->indices[3 * t];
        const double *a = &me->vertices[3 * ix[0]], *b = &me->vertices[3 * ix[1]],
                     *c = &me->vertices[3 * ix[2]];
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                a[2] * (b[0] * c[1] - b[1] * c[0])) /
               6;
    }
    return vol;
}

/* Extrusions become closed meshes wound outwards: the default (2x2 square along 1 m of +Y)
 * has volume 4; a non-convex L cross-section (area 3, clockwise) swept 0.5 m along -Z with a
 * scale of 2 on both axes has volume 3 * 4 * 0.5 = 6. */
static void test_extrusion_volume_and_winding(void **state)
{
    (void)state;
    struct hs_model *m =
        load_ok("Joint { jointType \"free\" children [ Shape { geometry Extrusion { } }\n"
                " Shape { geometry Extrusion { crossSection [ 0 0, 0 2, 1 2, 1 1, 2 1, 2 0, 0 0 ]\n"
                "  spine [ 0 0 0, 0 0 -0.5 ] scale [ 2 2 ] } } ] }");
    assert_int_equal(m->ngeoms, 2);
    const struct hs_mesh *a = &m->geoms[0].u.mesh, *b = &m->geoms[1].u.mesh;
    assert_int_equal(m->geoms[0].type, HS_GEOM_MESH);
    assert_int_equal(a->nvertices, 8);
    assert_near(signed_volume(a), 4, 1e-9);
    double ymin = 1, ymax = 0;
    for (uint32_t i = 0; i < a->nvertices; i++) {
        ymin = fmin(ymin, a->vertices[3 * i + 1]);
        ymax = fmax(ymax, a->vertices[3 * i + 1]);
        assert_near(fabs(a->vertices[3 * i]), 1, 1e-12);
    }
    assert_near(ymin, 0, 1e-12);
    assert_near(ymax, 1, 1e-12);
    assert_int_equal(b->ntriangles, 2 * 6 + 2 * 4);
    assert_near(signed_volume(b), 6, 1e-9);
    hs_model_free(m);
}

/* Choreonoid's Surface PROTO (as GR001 declares it): the collision field's shapes are the
 * link's geoms, not the visual mesh its Group body draws; with no collision nodes the visual
 * shapes collide; a PROTO of the same name with other fields is expanded as written. */
#define SURFACE_PROTO                                                                              \
    "PROTO Surface [ field SFVec3f bboxCenter 0 0 0 field SFVec3f bboxSize -1 -1 -1\n"             \
    " field MFNode visual [ ] field MFNode collision [ ] ]\n"                                      \
    "{ Group { bboxCenter IS bboxCenter bboxSize IS bboxSize children IS visual } }\n"
#define FOOT_MESH                                                                                  \
    "Shape { geometry IndexedFaceSet { coord Coordinate { point [ 0 0 0, 1 0 0, 0 1 0, 0 0 1 "     \
    "] }\n coordIndex [ 0 2 1 -1 0 1 3 -1 0 3 2 -1 1 2 3 -1 ] } }"

static void test_surface_collision_replaces_visual(void **state)
{
    (void)state;
    struct hs_model *m =
        load_ok(SURFACE_PROTO "Joint { jointType \"free\" children [\n"
                              " Surface { visual [ " FOOT_MESH " ]\n"
                              "  collision [ Transform { translation 0.1 0.2 0.3 children Shape {\n"
                              "   geometry Box { size 0.086 0.057 0.002 } } } ] }\n"
                              "] }");
    assert_int_equal(m->ngeoms, 1);
    assert_int_equal(m->geoms[0].type, HS_GEOM_BOX);
    assert_near(m->geoms[0].u.box.size[0], 0.086, 1e-12);
    assert_near(m->geoms[0].u.box.size[2], 0.002, 1e-12);
    assert_near(m->geoms[0].pose.p[0], 0.1, 1e-12);
    assert_near(m->geoms[0].pose.p[2], 0.3, 1e-12);
    hs_model_free(m);

    m = load_ok(SURFACE_PROTO "Joint { jointType \"free\" children [\n"
                              " Surface { visual [ " FOOT_MESH " ] }\n"
                              "] }");
    assert_int_equal(m->ngeoms, 1);
    assert_int_equal(m->geoms[0].type, HS_GEOM_MESH);
    assert_int_equal(m->geoms[0].u.mesh.ntriangles, 4);
    hs_model_free(m);

    m = load_ok("PROTO Surface [ field MFNode collision [ ] field MFNode children [ ] ]\n"
                "{ Group { children IS children } }\n"
                "Joint { jointType \"free\" children [ Surface { children [ " FOOT_MESH " ]\n"
                " collision [ Shape { geometry Box { size 1 1 1 } } ] } ] }");
    assert_int_equal(m->ngeoms, 1);
    assert_int_equal(m->geoms[0].type, HS_GEOM_MESH);
    hs_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transform_center_rotation_scale),
        cmocka_unit_test(test_scaled_primitives),
        cmocka_unit_test(test_ifs_nonconvex_and_missing_terminator),
        cmocka_unit_test(test_ear_clipping_comb_in_tilted_plane),
        cmocka_unit_test(test_extrusion_volume_and_winding),
        cmocka_unit_test(test_surface_collision_replaces_visual),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
