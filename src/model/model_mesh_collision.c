/* mesh_collision applied to a loaded model, whatever format it came from: box meshes become
 * their bounding boxes; convex and auto meshes get their hull, one per distinct mesh content
 * (the same STL on both feet, a DEF/USE'd IndexedFaceSet: one qhull run, one hull in memory);
 * a hull much larger than its mesh warns, naming the link. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_format.h"
#include "model_internal.h"

/* A flat mesh's box gets this thickness: ODE needs a volume. */
#define HS_MIN_BOX_M 1e-3

/* Replaces the mesh by its bounding box in the mesh's frame (the pose moves to the centre). */
void hs__mesh_to_box(struct hs_geom *g)
{
    struct hs_mesh *mesh = &g->u.mesh;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t v = 0; v < mesh->nvertices; v++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], mesh->vertices[3 * v + k]);
            hi[k] = fmax(hi[k], mesh->vertices[3 * v + k]);
        }
    double c[3] = {0, 0, 0}, size[3] = {HS_MIN_BOX_M, HS_MIN_BOX_M, HS_MIN_BOX_M}, wc[3];
    for (int k = 0; mesh->nvertices && k < 3; k++) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        size[k] = fmax(hi[k] - lo[k], HS_MIN_BOX_M);
    }
    free(mesh->vertices);
    free(mesh->indices);
    hs_pose_apply(&g->pose, c, wc);
    memcpy(g->pose.p, wc, sizeof wc);
    g->type = HS_GEOM_BOX;
    memcpy(g->u.box.size, size, sizeof size);
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t mesh_key(const struct hs_mesh *m)
{
    uint64_t h = 14695981039346656037ull;
    h = fnv1a(h, &m->nvertices, sizeof m->nvertices);
    h = fnv1a(h, &m->ntriangles, sizeof m->ntriangles);
    h = fnv1a(h, m->vertices, (size_t)m->nvertices * 3 * sizeof *m->vertices);
    return fnv1a(h, m->indices, (size_t)m->ntriangles * 3 * sizeof *m->indices);
}

static bool same_mesh(const struct hs_mesh *a, const struct hs_mesh *b)
{
    return a->nvertices == b->nvertices && a->ntriangles == b->ntriangles &&
           memcmp(a->vertices, b->vertices, (size_t)a->nvertices * 3 * sizeof(double)) == 0 &&
           memcmp(a->indices, b->indices, (size_t)a->ntriangles * 3 * sizeof(uint32_t)) == 0;
}

static int add_warning(struct hs_model *m, const struct hs_link *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int add_warning(struct hs_model *m, const struct hs_link *l, const char *fmt, ...)
{
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    const char *file = l->source_file ? l->source_file : (m->path ? m->path : m->name);
    int len = snprintf(NULL, 0, "%s:%d:%d: link '%s': %s", file, l->source_line, l->source_column,
                       l->name, text);
    char *s = len < 0 ? NULL : malloc((size_t)len + 1);
    if (!s)
        return -ENOMEM;
    snprintf(s, (size_t)len + 1, "%s:%d:%d: link '%s': %s", file, l->source_line, l->source_column,
             l->name, text);
    char **n = realloc(m->warnings, (m->nwarnings + 1) * sizeof *n);
    if (!n) {
        free(s);
        return -ENOMEM;
    }
    m->warnings = n;
    m->warnings[m->nwarnings++] = s;
    return 0;
}

/* The link whose geom slice holds geom g (the model keeps no back index). */
static const struct hs_link *link_of(const struct hs_model *m, uint32_t g)
{
    for (uint32_t i = 0; i < m->nlinks; i++)
        if (g >= m->links[i].geom_first && g - m->links[i].geom_first < m->links[i].geom_count)
            return &m->links[i];
    return NULL;
}

struct hull_slot {
    uint64_t key;
    uint32_t first_geom; /* the geom whose mesh it was made from */
    int32_t hull;        /* index into the model's hulls, -1: qhull could not hull it */
};

static int warn_fit(struct hs_model *m, const struct hs_link *l, const struct hs_hull *h)
{
    if (!l)
        return 0;
    if (!(h->mesh_volume_m3 > 0))
        return add_warning(m, l,
                           "its collision mesh encloses no volume (open or flat), so its convex "
                           "hull may not fit it; mesh_collision: exact keeps the triangles");
    double ratio = h->volume_m3 / h->mesh_volume_m3;
    if (ratio > HS_HULL_POOR_FIT_RATIO)
        return add_warning(m, l,
                           "the convex hull of its collision mesh is %.2f times the mesh's volume "
                           "(more than %.2f): a poor fit; split the mesh into convex parts (one "
                           "Shape or <collision> each) or use mesh_collision: exact",
                           ratio, HS_HULL_POOR_FIT_RATIO);
    return 0;
}

/* A hull of share's for a mesh identical to mesh, or NULL. */
static const struct hs_hull *shared_hull(const struct hs_model *share, uint64_t key,
                                         const struct hs_mesh *mesh)
{
    for (uint32_t k = 0; share && k < share->ngeoms; k++) {
        const struct hs_geom *g = &share->geoms[k];
        if (g->type == HS_GEOM_MESH && g->u.mesh.hull && mesh_key(&g->u.mesh) == key &&
            same_mesh(&g->u.mesh, mesh))
            return g->u.mesh.hull;
    }
    return NULL;
}

int hs_model_mesh_collision(struct hs_model *m, enum hs_mesh_approx how, struct hs_diag *diag)
{
    return hs__model_mesh_collision_shared(m, how, NULL, diag);
}

int hs__model_mesh_collision_shared(struct hs_model *m, enum hs_mesh_approx how,
                                    const struct hs_model *share, struct hs_diag *diag)
{
    if ((unsigned)how >= HS_MESH_APPROX_MAX)
        return hs_diag_set(diag, -EINVAL, m->path ? m->path : m->name, 0, 0,
                           "unknown mesh_collision value %d", (int)how);
    hs__model_free_hulls(m); /* a second call starts over */
    struct hull_slot *slots = NULL;
    uint32_t nslots = 0, nmesh = 0;
    for (uint32_t i = 0; i < m->ngeoms; i++)
        nmesh += m->geoms[i].type == HS_GEOM_MESH;
    if (how == HS_MESH_BOX || how == HS_MESH_EXACT) {
        for (uint32_t i = 0; i < m->ngeoms; i++)
            if (m->geoms[i].type == HS_GEOM_MESH) {
                if (how == HS_MESH_BOX)
                    hs__mesh_to_box(&m->geoms[i]);
                else
                    m->geoms[i].u.mesh.collision = HS_MESH_EXACT;
            }
        return 0;
    }
    if (nmesh == 0)
        return 0;
    slots = calloc(nmesh, sizeof *slots);
    struct hs_hull *hulls = calloc(nmesh, sizeof *hulls);
    int32_t *hull_of = malloc((size_t)m->ngeoms * sizeof *hull_of);
    const struct hs_hull **borrowed = calloc(m->ngeoms, sizeof *borrowed);
    uint32_t nhulls = 0;
    int r = 0;
    if (!slots || !hulls || !hull_of || !borrowed) {
        r = hs_diag_set(diag, -ENOMEM, "", 0, 0, "out of memory hulling meshes");
        goto out;
    }
    for (uint32_t i = 0; i < m->ngeoms; i++) {
        hull_of[i] = -1;
        struct hs_geom *g = &m->geoms[i];
        if (g->type != HS_GEOM_MESH)
            continue;
        g->u.mesh.collision = how;
        uint64_t key = mesh_key(&g->u.mesh);
        const struct hull_slot *hit = NULL;
        for (uint32_t s = 0; !hit && s < nslots; s++)
            if (slots[s].key == key && same_mesh(&m->geoms[slots[s].first_geom].u.mesh, &g->u.mesh))
                hit = &slots[s];
        if (hit) {
            hull_of[i] = hit->hull;
            continue;
        }
        if ((borrowed[i] = shared_hull(share, key, &g->u.mesh))) {
            if ((r = warn_fit(m, link_of(m, i), borrowed[i])) < 0)
                goto out;
            continue;
        }
        struct hull_slot *s = &slots[nslots++];
        *s = (struct hull_slot){.key = key, .first_geom = i, .hull = -1};
        r = hs__hull_of_mesh(&g->u.mesh, &hulls[nhulls], NULL, 0);
        if (r == -ENOMEM) {
            r = hs_diag_set(diag, r, "", 0, 0, "out of memory hulling a mesh");
            goto out;
        }
        if (r) { /* flat (a plate, a floor quad) or fewer than 4 points: no volume to hull,
                    and the triangles are the right shape; not worth a warning */
            r = 0;
            continue;
        }
        s->hull = (int32_t)nhulls++;
        hull_of[i] = s->hull;
        if ((r = warn_fit(m, link_of(m, i), &hulls[s->hull])) < 0)
            goto out;
    }
    /* Pointers only now: the array no longer moves. */
    for (uint32_t i = 0; i < m->ngeoms; i++)
        if (hull_of[i] >= 0)
            m->geoms[i].u.mesh.hull = &hulls[hull_of[i]];
        else if (borrowed[i])
            m->geoms[i].u.mesh.hull = borrowed[i];
    m->hulls = hulls;
    m->nhulls = nhulls;
    hulls = NULL;
out:
    if (hulls)
        for (uint32_t k = 0; k < nhulls; k++)
            hs__hull_free(&hulls[k]);
    free(hulls);
    free(slots);
    free(hull_of);
    free(borrowed);
    return r;
}

void hs__model_free_hulls(struct hs_model *m)
{
    for (uint32_t i = 0; i < m->ngeoms; i++)
        if (m->geoms[i].type == HS_GEOM_MESH)
            m->geoms[i].u.mesh.hull = NULL;
    for (uint32_t k = 0; k < m->nhulls; k++)
        hs__hull_free(&m->hulls[k]);
    free(m->hulls);
    m->hulls = NULL;
    m->nhulls = 0;
}

const char *hs_mesh_approx_name(enum hs_mesh_approx a)
{
    static const char *const names[HS_MESH_APPROX_MAX] = {[HS_MESH_CONVEX] = "convex",
                                                          [HS_MESH_EXACT] = "exact",
                                                          [HS_MESH_BOX] = "box",
                                                          [HS_MESH_AUTO] = "auto"};
    return (unsigned)a < HS_MESH_APPROX_MAX ? names[a] : "?";
}
