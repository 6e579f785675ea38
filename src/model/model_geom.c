/* Shape geometry of a link: Box, Sphere, Cylinder and Cone stay primitives posed in the link
 * frame; IndexedFaceSet and Extrusion become triangle meshes. A scale a primitive cannot represent
 * (e.g. a non-uniform scale on a Sphere, or a shear) is tessellated into a mesh instead of
 * rejected. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

#define TESS_SEGMENTS 24

static int add_geom(struct hs__builder *b, const struct hs__vnode *n, int32_t link,
                    const struct hs_geom *g)
{
    if (b->ngeoms >= HS_MODEL_MAX_GEOMS)
        return hs_diag_set(b->diag, -E2BIG, n->file, n->line, n->column, "more than %d shapes",
                           HS_MODEL_MAX_GEOMS);
    if (hs__grow((void **)&b->geoms, &b->geoms_cap, b->ngeoms + 1, sizeof *b->geoms) < 0)
        return hs_diag_set(b->diag, -ENOMEM, n->file, n->line, n->column, "out of memory");
    b->geoms[b->ngeoms].geom = *g;
    b->geoms[b->ngeoms].geom.material = b->shape_material;
    b->geoms[b->ngeoms].link = link;
    b->ngeoms++;
    return 0;
}

/* Takes ownership of verts (in the shape frame) and tris. */
static int add_mesh(struct hs__builder *b, const struct hs__vnode *n, const struct hs__bctx *ctx,
                    double *verts, uint32_t nv, uint32_t *tris, uint32_t nt)
{
    struct hs_geom g = {.type = HS_GEOM_MESH};
    if (hs__affine_is_rigid(&ctx->M)) {
        hs__affine_to_pose(&ctx->M, &g.pose);
    } else {
        /* Scaled: bake the transform into the vertices; a mirror flips the winding. */
        for (uint32_t i = 0; i < nv; i++)
            hs__affine_apply(&ctx->M, &verts[3 * i], &verts[3 * i]);
        if (hs__det3(ctx->M.A) < 0)
            for (uint32_t t = 0; t < nt; t++) {
                uint32_t k = tris[3 * t + 1];
                tris[3 * t + 1] = tris[3 * t + 2];
                tris[3 * t + 2] = k;
            }
        struct hs__affine id;
        hs__affine_identity(&id);
        hs__affine_to_pose(&id, &g.pose);
    }
    g.u.mesh.vertices = verts;
    g.u.mesh.nvertices = nv;
    g.u.mesh.indices = tris;
    g.u.mesh.ntriangles = nt;
    int r = add_geom(b, n, ctx->link, &g);
    if (r < 0) {
        free(verts);
        free(tris);
    }
    return r;
}

/* Splits the linear part into R * diag(s) when its columns are orthogonal (no shear). */
static bool split_scale(const struct hs__affine *M, double R[9], double s[3])
{
    for (int j = 0; j < 3; j++) {
        s[j] = sqrt(M->A[j] * M->A[j] + M->A[3 + j] * M->A[3 + j] + M->A[6 + j] * M->A[6 + j]);
        if (!(s[j] > 1e-12))
            return false;
    }
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++) {
            double d = M->A[i] * M->A[j] + M->A[3 + i] * M->A[3 + j] + M->A[6 + i] * M->A[6 + j];
            if (fabs(d) > 1e-9 * s[i] * s[j])
                return false;
        }
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            R[r * 3 + c] = M->A[r * 3 + c] / s[c];
    return hs__det3(R) > 0;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* Tessellates a primitive in its own frame (VRML conventions: cylinder/cone axis on Y). */
static int tessellate(const struct hs_geom *g, double **ret_v, uint32_t *ret_nv, uint32_t **ret_t,
                      uint32_t *ret_nt)
{
    const int S = TESS_SEGMENTS, RINGS = TESS_SEGMENTS / 2;
    uint32_t nv, nt;
    if (g->type == HS_GEOM_BOX)
        nv = 8, nt = 12;
    else if (g->type == HS_GEOM_SPHERE)
        nv = (uint32_t)(S * (RINGS - 1) + 2), nt = (uint32_t)(2 * S * (RINGS - 1));
    else
        nv = (uint32_t)(2 * S + 2), nt = (uint32_t)(4 * S);
    double *v = calloc(3 * (size_t)nv, sizeof *v);
    uint32_t *t = calloc(3 * (size_t)nt, sizeof *t);
    if (!v || !t) {
        free(v);
        free(t);
        return -ENOMEM;
    }
    uint32_t k = 0;
#define TRI(a, b_, c)                                                                              \
    do {                                                                                           \
        t[3 * k] = (uint32_t)(a), t[3 * k + 1] = (uint32_t)(b_), t[3 * k + 2] = (uint32_t)(c);     \
        k++;                                                                                       \
    } while (0)
    if (g->type == HS_GEOM_BOX) {
        for (int i = 0; i < 8; i++) {
            v[3 * i] = (i & 1 ? 0.5 : -0.5) * g->u.box.size[0];
            v[3 * i + 1] = (i & 2 ? 0.5 : -0.5) * g->u.box.size[1];
            v[3 * i + 2] = (i & 4 ? 0.5 : -0.5) * g->u.box.size[2];
        }
        static const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                        {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
        for (int q = 0; q < 6; q++) {
            TRI(quads[q][0], quads[q][1], quads[q][2]);
            TRI(quads[q][0], quads[q][2], quads[q][3]);
        }
    } else if (g->type == HS_GEOM_SPHERE) {
        double rad = g->u.sphere.radius;
        v[1] = rad;                 /* north pole: vertex 0 */
        v[3 * (nv - 1) + 1] = -rad; /* south pole: last */
        for (int r = 1; r < RINGS; r++)
            for (int s = 0; s < S; s++) {
                double th = M_PI * r / RINGS, ph = 2 * M_PI * s / S;
                double *p = &v[3 * (1 + (r - 1) * S + s)];
                p[0] = rad * sin(th) * sin(ph);
                p[1] = rad * cos(th);
                p[2] = rad * sin(th) * cos(ph);
            }
        for (int s = 0; s < S; s++) {
            int s1 = (s + 1) % S;
            TRI(0, 1 + s, 1 + s1);
            for (int r = 1; r < RINGS - 1; r++) {
                int a = 1 + (r - 1) * S + s, b_ = 1 + (r - 1) * S + s1;
                TRI(a, a + S, b_ + S);
                TRI(a, b_ + S, b_);
            }
            int base = 1 + (RINGS - 2) * S;
            TRI(base + s, (int)nv - 1, base + s1);
        }
    } else {
        bool cone = g->type == HS_GEOM_CONE;
        double rad = cone ? g->u.cone.bottom_radius : g->u.cylinder.radius;
        double h = cone ? g->u.cone.height : g->u.cylinder.height;
        for (int s = 0; s < S; s++) {
            double ph = 2 * M_PI * s / S;
            double *lo = &v[3 * s], *hi = &v[3 * (S + s)];
            lo[0] = rad * sin(ph), lo[1] = -h / 2, lo[2] = rad * cos(ph);
            hi[0] = cone ? 0 : lo[0], hi[1] = h / 2, hi[2] = cone ? 0 : lo[2];
        }
        int cb = 2 * S, ct = 2 * S + 1;
        v[3 * cb + 1] = -h / 2;
        v[3 * ct + 1] = h / 2;
        for (int s = 0; s < S; s++) {
            int s1 = (s + 1) % S;
            TRI(s, s1, S + s1);
            TRI(s, S + s1, S + s);
            TRI(cb, s1, s);
            TRI(ct, S + s, S + s1);
        }
    }
#undef TRI
    *ret_v = v;
    *ret_nv = nv;
    *ret_t = t;
    *ret_nt = k;
    return 0;
}

static int add_primitive(struct hs__builder *b, const struct hs__vnode *n,
                         const struct hs__bctx *ctx, struct hs_geom *g)
{
    struct hs_geom raw = *g;
    double R[9], s[3];
    if (split_scale(&ctx->M, R, s)) {
        bool ok = true;
        switch (g->type) {
        case HS_GEOM_BOX:
            for (int i = 0; i < 3; i++)
                g->u.box.size[i] *= s[i];
            break;
        case HS_GEOM_SPHERE:
            ok = near(s[0], s[1]) && near(s[1], s[2]);
            g->u.sphere.radius *= s[0];
            break;
        case HS_GEOM_CYLINDER:
            ok = near(s[0], s[2]);
            g->u.cylinder.radius *= s[0];
            g->u.cylinder.height *= s[1];
            break;
        default:
            ok = near(s[0], s[2]);
            g->u.cone.bottom_radius *= s[0];
            g->u.cone.height *= s[1];
            break;
        }
        if (ok) {
            memcpy(g->pose.R, R, sizeof R);
            memcpy(g->pose.p, ctx->M.p, sizeof g->pose.p);
            return add_geom(b, n, ctx->link, g);
        }
    }
    double *v;
    uint32_t nv, *t, nt;
    if (tessellate(&raw, &v, &nv, &t, &nt) < 0)
        return hs_diag_set(b->diag, -ENOMEM, n->file, n->line, n->column, "out of memory");
    return add_mesh(b, n, ctx, v, nv, t, nt);
}

static int positive(struct hs__builder *b, const struct hs__vnode *n, const char *what, double v)
{
    if (v > 0)
        return 0;
    return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column, "%s %s is %g (expected > 0)",
                       n->type, what, v);
}

static int build_ifs(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                     const struct hs__bctx *ctx)
{
    struct hs__vnode *const *coord;
    uint32_t ncoord;
    const struct hs__venv *cenv;
    const struct hs__vvalue *pts = NULL, *idx;
    bool ccw;
    int r;
    if ((r = hs__get_nodes(b, n, env, "coord", &coord, &ncoord, &cenv)) < 0 ||
        (r = hs__get_numbers(b, n, env, "coordIndex", HS__FT_MFINT32, &idx)) < 0 ||
        (r = hs__get_bool(b, n, env, "ccw", true, &ccw)) < 0)
        return r;
    if (ncoord) {
        if (strcmp(coord[0]->type, "Coordinate") != 0)
            return hs_diag_set(b->diag, -EINVAL, coord[0]->file, coord[0]->line, coord[0]->column,
                               "IndexedFaceSet coord: expected a Coordinate node, got %s",
                               coord[0]->type);
        if ((r = hs__get_numbers(b, coord[0], cenv, "point", HS__FT_MFVEC3F, &pts)) < 0)
            return r;
    }
    uint32_t np = pts ? pts->n / 3 : 0, ni = idx ? idx->n : 0;
    if (np == 0 || ni == 0)
        return 0; /* an empty mesh (exporters write them) adds nothing */
    b->vertices += np;
    if (b->vertices > HS_MODEL_MAX_VERTICES)
        return hs_diag_set(b->diag, -E2BIG, n->file, n->line, n->column,
                           "more than %u mesh vertices in the model", HS_MODEL_MAX_VERTICES);
    double *v = malloc(3 * (size_t)np * sizeof *v);
    uint32_t *poly = malloc((size_t)ni * sizeof *poly);
    uint32_t *tris = malloc(3 * (size_t)ni * sizeof *tris); /* faces add at most n-2 each */
    if (!v || !poly || !tris) {
        r = hs_diag_set(b->diag, -ENOMEM, n->file, n->line, n->column, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < 3 * np; i++)
        v[i] = pts->items[i].num;
    uint32_t nt = 0, pn = 0;
    for (uint32_t i = 0; i <= ni; i++) {
        /* A face ends at -1 or, without a final -1, at the end of the list. */
        if (i == ni || idx->items[i].num == -1) {
            if (pn > HS_MODEL_MAX_POLYGON) {
                r = hs_diag_set(b->diag, -E2BIG, idx->file, idx->line, idx->column,
                                "face with more than %d vertices", HS_MODEL_MAX_POLYGON);
                goto fail;
            }
            nt += hs__triangulate(v, poly, pn, &tris[3 * nt]);
            pn = 0;
            continue;
        }
        double k = idx->items[i].num;
        if (k < 0 || k >= np) {
            r = hs_diag_set(b->diag, -EINVAL, idx->file, idx->items[i].line, idx->items[i].column,
                            "coordIndex %.0f out of range (expected -1 or 0..%u)", k, np - 1);
            goto fail;
        }
        poly[pn++] = (uint32_t)k;
    }
    free(poly);
    if (nt == 0) {
        free(v);
        free(tris);
        return 0;
    }
    if (!ccw)
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t k = tris[3 * t + 1];
            tris[3 * t + 1] = tris[3 * t + 2];
            tris[3 * t + 2] = k;
        }
    return add_mesh(b, n, ctx, v, np, tris, nt);
fail:
    free(v);
    free(poly);
    free(tris);
    return r;
}

/* One Shape's geometry node n as geoms of the current link, each taking b->shape_material. */
static int build_geometry(struct hs__builder *b, const struct hs__vnode *n,
                          const struct hs__venv *env, const struct hs__bctx *ctx)
{
    int r;
    struct hs_geom g = {0};
    static const double two[3] = {2, 2, 2};
    if (strcmp(n->type, "Box") == 0) {
        g.type = HS_GEOM_BOX;
        if ((r = hs__get_vec3(b, n, env, "size", two, g.u.box.size)) < 0)
            return r;
        for (int i = 0; i < 3; i++)
            if ((r = positive(b, n, "size", g.u.box.size[i])) < 0)
                return r;
    } else if (strcmp(n->type, "Sphere") == 0) {
        g.type = HS_GEOM_SPHERE;
        if ((r = hs__get_float(b, n, env, "radius", 1, &g.u.sphere.radius)) < 0 ||
            (r = positive(b, n, "radius", g.u.sphere.radius)) < 0)
            return r;
    } else if (strcmp(n->type, "Cylinder") == 0) {
        g.type = HS_GEOM_CYLINDER;
        if ((r = hs__get_float(b, n, env, "radius", 1, &g.u.cylinder.radius)) < 0 ||
            (r = hs__get_float(b, n, env, "height", 2, &g.u.cylinder.height)) < 0 ||
            (r = positive(b, n, "radius", g.u.cylinder.radius)) < 0 ||
            (r = positive(b, n, "height", g.u.cylinder.height)) < 0)
            return r;
    } else if (strcmp(n->type, "Cone") == 0) {
        g.type = HS_GEOM_CONE;
        if ((r = hs__get_float(b, n, env, "bottomRadius", 1, &g.u.cone.bottom_radius)) < 0 ||
            (r = hs__get_float(b, n, env, "height", 2, &g.u.cone.height)) < 0 ||
            (r = positive(b, n, "bottomRadius", g.u.cone.bottom_radius)) < 0 ||
            (r = positive(b, n, "height", g.u.cone.height)) < 0)
            return r;
    } else if (strcmp(n->type, "IndexedFaceSet") == 0) {
        return build_ifs(b, n, env, ctx);
    } else if (strcmp(n->type, "Extrusion") == 0) {
        double *v;
        uint32_t nv, *t, nt;
        if ((r = hs__build_extrusion(b, n, env, ctx, &v, &nv, &t, &nt)) < 0)
            return r;
        if (nt == 0) {
            free(v);
            free(t);
            return 0;
        }
        b->vertices += nv;
        if (b->vertices > HS_MODEL_MAX_VERTICES) {
            free(v);
            free(t);
            return hs_diag_set(b->diag, -E2BIG, n->file, n->line, n->column,
                               "more than %u mesh vertices in the model", HS_MODEL_MAX_VERTICES);
        }
        return add_mesh(b, n, ctx, v, nv, t, nt);
    } else {
        return hs__builder_warn(b, n->file, n->line, n->column,
                                "geometry %s is not supported; ignored", n->type);
    }
    return add_primitive(b, n, ctx, &g);
}

int hs__build_shape(struct hs__builder *b, const struct hs__vnode *shape,
                    const struct hs__bctx *ctx)
{
    struct hs__vnode *const *geo;
    uint32_t ngeo;
    const struct hs__venv *env;
    int r = hs__get_nodes(b, shape, ctx->env, "geometry", &geo, &ngeo, &env);
    if (r < 0 || ngeo == 0)
        return r;
    if (ctx->link < 0) {
        if (b->warned_loose_shape)
            return 0;
        b->warned_loose_shape = true;
        return hs__builder_warn(b, shape->file, shape->line, shape->column,
                                "Shape outside any Joint ignored (scenery, not a link)");
    }
    if ((r = hs__build_appearance(b, shape, ctx->env, &b->shape_material)) < 0)
        return r;
    r = build_geometry(b, geo[0], env, ctx);
    b->shape_material = 0;
    return r;
}
