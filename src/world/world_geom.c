/* Collision geometry of one link: boxes, spheres and cylinders as native ODE geoms, cones as
 * trimeshes, meshes as the trimesh of their convex hull or as themselves, by the mesh's
 * mesh_collision (hilsim/model.h). Geoms of dynamic links ride on the link's body with an offset
 * from the centre of mass; geoms of static bodies are placed once in the world. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

_Static_assert(sizeof(dTriIndex) == sizeof(uint32_t), "model mesh indices are 32-bit");

#define HS_CONE_SEGMENTS 24
/* Static geoms never collide with each other: their category bit is masked out of their own
 * collide bits, so the space skips those pairs before the callback. */
#define HS_CAT_STATIC 1u
#define HS_CAT_DYNAMIC 2u

void hs__rot_to_ode(const double R[9], dMatrix3 ret)
{
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            ret[r * 4 + c] = R[r * 3 + c];
        ret[r * 4 + 3] = 0;
    }
}

static int push_mesh(struct hs_world *w, struct hs__world_mesh m)
{
    if (w->nmeshes == w->meshes_cap) {
        uint32_t cap = w->meshes_cap ? 2 * w->meshes_cap : 8;
        struct hs__world_mesh *n = realloc(w->meshes, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        w->meshes = n;
        w->meshes_cap = cap;
    }
    w->meshes[w->nmeshes++] = m;
    return 0;
}

/* VRML Cone: axis along local Y, apex at +h/2, base disc at -h/2. Triangles counter-clockwise
 * seen from outside, as ODE's trimesh expects. */
static int cone_mesh(struct hs_world *w, double r, double h, dTriMeshDataID *ret)
{
    const int n = HS_CONE_SEGMENTS;
    struct hs__world_mesh m = {0};
    m.vertices = malloc((size_t)(n + 2) * 3 * sizeof(double));
    m.indices = malloc((size_t)2 * n * 3 * sizeof(dTriIndex));
    m.data = dGeomTriMeshDataCreate();
    if (!m.vertices || !m.indices || !m.data)
        goto fail;
    double *v = m.vertices;
    v[0] = 0, v[1] = h / 2, v[2] = 0;  /* apex */
    v[3] = 0, v[4] = -h / 2, v[5] = 0; /* base centre */
    for (int i = 0; i < n; i++) {
        double a = 2 * M_PI * i / n;
        v[6 + 3 * i] = r * cos(a);
        v[7 + 3 * i] = -h / 2;
        v[8 + 3 * i] = r * sin(a);
    }
    dTriIndex *t = m.indices;
    for (int i = 0; i < n; i++) {
        dTriIndex pi = 2 + i, pn = 2 + (i + 1) % n;
        t[6 * i + 0] = 0, t[6 * i + 1] = pn, t[6 * i + 2] = pi;
        t[6 * i + 3] = 1, t[6 * i + 4] = pi, t[6 * i + 5] = pn;
    }
    dGeomTriMeshDataBuildDouble(m.data, m.vertices, 3 * sizeof(double), n + 2, m.indices, 2 * n * 3,
                                3 * sizeof(dTriIndex));
    if (push_mesh(w, m))
        goto fail;
    *ret = m.data;
    return 0;
fail:
    if (m.data)
        dGeomTriMeshDataDestroy(m.data);
    free(m.vertices);
    free(m.indices);
    return -ENOMEM;
}

/* The model owns the arrays and outlives the world, so ODE reads them in place. */
static int model_mesh(struct hs_world *w, const struct hs_mesh *mesh, dTriMeshDataID *ret)
{
    struct hs__world_mesh m = {0};
    m.data = dGeomTriMeshDataCreate();
    if (!m.data)
        return -ENOMEM;
    dGeomTriMeshDataBuildDouble(m.data, mesh->vertices, 3 * sizeof(double), (int)mesh->nvertices,
                                mesh->indices, (int)(3 * mesh->ntriangles), 3 * sizeof(uint32_t));
    if (push_mesh(w, m)) {
        dGeomTriMeshDataDestroy(m.data);
        return -ENOMEM;
    }
    *ret = m.data;
    return 0;
}

/* auto keeps meshes of up to this many triangles exact: cheap enough as triangles. */
#define HS_AUTO_EXACT_TRIANGLES 100

/* Whether the mesh collides as its hull. auto: scenery keeps its triangles (stairs, a terrain:
 * what robots walk on must keep its shape, and it has no body to slow down), and so do small
 * meshes and those whose hull is a poor fit (model.h HS_HULL_POOR_FIT_RATIO). */
static bool use_hull(const struct hs__world_link *wl, const struct hs_mesh *m)
{
    if (!m->hull || m->hull->nplanes == 0)
        return false;
    if (m->collision == HS_MESH_CONVEX)
        return true;
    if (m->collision != HS_MESH_AUTO || !wl->body || m->ntriangles <= HS_AUTO_EXACT_TRIANGLES)
        return false;
    return m->hull->mesh_volume_m3 > 0 &&
           m->hull->volume_m3 <= HS_HULL_POOR_FIT_RATIO * m->hull->mesh_volume_m3;
}

static bool positive(double v)
{
    return isfinite(v) && v > 0;
}

static int check_geom(const struct hs_model *model, const struct hs_link *link,
                      const struct hs_geom *g, struct hs_diag *d)
{
    const char *file = model->path ? model->path : model->name;
    bool ok = true;
    const char *what = "";
    switch (g->type) {
    case HS_GEOM_BOX:
        ok = positive(g->u.box.size[0]) && positive(g->u.box.size[1]) && positive(g->u.box.size[2]);
        what = "Box size must be three positive numbers";
        break;
    case HS_GEOM_SPHERE:
        ok = positive(g->u.sphere.radius);
        what = "Sphere radius must be positive";
        break;
    case HS_GEOM_CYLINDER:
        ok = positive(g->u.cylinder.radius) && positive(g->u.cylinder.height);
        what = "Cylinder radius and height must be positive";
        break;
    case HS_GEOM_CONE:
        ok = positive(g->u.cone.bottom_radius) && positive(g->u.cone.height);
        what = "Cone bottomRadius and height must be positive";
        break;
    case HS_GEOM_MESH: {
        const struct hs_mesh *m = &g->u.mesh;
        ok = m->nvertices > 0 && m->ntriangles > 0 && m->vertices && m->indices &&
             m->nvertices < INT32_MAX / 3 && m->ntriangles < INT32_MAX / 3;
        for (uint32_t i = 0; ok && i < 3 * m->ntriangles; i++)
            ok = m->indices[i] < m->nvertices;
        for (uint32_t i = 0; ok && i < 3 * m->nvertices; i++)
            ok = isfinite(m->vertices[i]);
        what = "mesh needs vertices, triangles and in-range indices";
        break;
    }
    default:
        ok = false;
        what = "unknown geometry type";
    }
    if (!ok)
        return hs_diag_set(d, -EINVAL, file, link->source_line, 0, "link '%s': %s", link->name,
                           what);
    return 0;
}

int hs__world_link_geoms(struct hs_world *w, struct hs__world_link *wl, struct hs_diag *d)
{
    const struct hs_model *model = wl->owner->model;
    const struct hs_link *link = &model->links[wl->link_index];
    if ((uint64_t)link->geom_first + link->geom_count > model->ngeoms)
        return hs_diag_set(d, -EINVAL, model->path ? model->path : model->name, link->source_line,
                           0, "link '%s': geometry slice out of range", link->name);
    for (uint32_t k = 0; k < link->geom_count; k++) {
        const struct hs_geom *g = &model->geoms[link->geom_first + k];
        int r = check_geom(model, link, g, d);
        if (r)
            return r;
        double R[9], gp[3]; /* the ODE geom's frame in the link: R, gp */
        memcpy(R, g->pose.R, sizeof R);
        memcpy(gp, g->pose.p, sizeof gp);
        dGeomID geom = NULL;
        dTriMeshDataID data = NULL;
        switch (g->type) {
        case HS_GEOM_BOX:
            geom = dCreateBox(w->space, g->u.box.size[0], g->u.box.size[1], g->u.box.size[2]);
            break;
        case HS_GEOM_SPHERE:
            geom = dCreateSphere(w->space, g->u.sphere.radius);
            break;
        case HS_GEOM_CYLINDER: {
            /* ODE's cylinder axis is its local Z, VRML's is Y: turn Z onto Y (Rx(-90°)). */
            static const double zy[9] = {1, 0, 0, 0, 0, 1, 0, -1, 0};
            hs_rot_mul(g->pose.R, zy, R);
            geom = dCreateCylinder(w->space, g->u.cylinder.radius, g->u.cylinder.height);
            break;
        }
        case HS_GEOM_CONE:
            r = cone_mesh(w, g->u.cone.bottom_radius, g->u.cone.height, &data);
            if (r)
                return hs_diag_set(d, r, "", 0, 0, "out of memory building a cone mesh");
            geom = dCreateTriMesh(w->space, data, NULL, NULL, NULL);
            break;
        case HS_GEOM_MESH:
            if (use_hull(wl, &g->u.mesh)) {
                /* The hull as a (small) trimesh, not ODE's convex geom: ODE 0.16's convex-box
                 * and convex-convex colliders return one contact point for a face resting on a
                 * face, so a foot on the floor balances on a point, and a garbage contact at
                 * some depths (tests/world/test_world_convex.c shows both). The model owns the
                 * hull and outlives the world: ODE reads it in place. */
                const struct hs_hull *h = g->u.mesh.hull;
                const struct hs_mesh hm = {.vertices = h->points,
                                           .nvertices = h->npoints,
                                           .indices = h->triangles,
                                           .ntriangles = h->ntriangles};
                r = model_mesh(w, &hm, &data);
                if (r)
                    return hs_diag_set(d, r, "", 0, 0, "out of memory building a hull trimesh");
                geom = dCreateTriMesh(w->space, data, NULL, NULL, NULL);
                hs_pose_apply(&g->pose, h->centre, gp);
                break;
            }
            r = model_mesh(w, &g->u.mesh, &data);
            if (r)
                return hs_diag_set(d, r, "", 0, 0, "out of memory building a trimesh");
            geom = dCreateTriMesh(w->space, data, NULL, NULL, NULL);
            break;
        default:
            break;
        }
        if (!geom)
            return hs_diag_set(d, -ENOMEM, "", 0, 0, "ODE could not create a geom");
        dGeomSetData(geom, wl);
        dMatrix3 Rode;
        hs__rot_to_ode(R, Rode);
        if (wl->body) {
            dGeomSetCategoryBits(geom, HS_CAT_DYNAMIC);
            dGeomSetCollideBits(geom, ~0ul);
            dGeomSetBody(geom, wl->body);
            /* The geom in the body frame: the link's offset in the body (the centre of mass,
             * and for a merged link its fixed pose on the owner, world_merge.c) after the
             * geom's own pose in the link. */
            struct hs_pose gl = {0}, gb;
            memcpy(gl.p, gp, sizeof gl.p);
            memcpy(gl.R, R, sizeof gl.R);
            hs_pose_mul(&wl->in_body, &gl, &gb);
            hs__rot_to_ode(gb.R, Rode);
            dGeomSetOffsetPosition(geom, gb.p[0], gb.p[1], gb.p[2]);
            dGeomSetOffsetRotation(geom, Rode);
        } else {
            dGeomSetCategoryBits(geom, HS_CAT_STATIC);
            dGeomSetCollideBits(geom, ~(unsigned long)HS_CAT_STATIC);
            struct hs_pose gs = {0}, world_geom;
            memcpy(gs.p, gp, sizeof gs.p);
            memcpy(gs.R, R, sizeof gs.R);
            hs_pose_mul(&wl->static_pose, &gs, &world_geom);
            hs__rot_to_ode(world_geom.R, Rode);
            dGeomSetPosition(geom, world_geom.p[0], world_geom.p[1], world_geom.p[2]);
            dGeomSetRotation(geom, Rode);
        }
    }
    return 0;
}
