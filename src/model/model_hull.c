/* The convex hull of one mesh, with qhull's reentrant library (libqhull_r): the hull's faces as
 * ODE's convex geom reads them (planes, points, polygons). Coplanar triangles are merged into one
 * polygon, so a box mesh made of 12 triangles becomes a hull of 6 faces and 8 points; nearly
 * coplanar ones too (within HS_HULL_TOLERANCE_REL of the mesh's size), so a dense curved mesh
 * becomes a hull of a few hundred faces, which is where its speed comes from.
 *
 * libqhull_r, not libqhull: the non-reentrant library keeps its state in one global, so two
 * threads loading models at once would corrupt each other's hulls; the reentrant one keeps it
 * in the qhT we pass, here on the stack. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libqhull_r/qhull_ra.h>

#include "model_internal.h"

/* Signed volume the triangles enclose (divergence theorem), m³. */
static double mesh_volume(const struct hs_mesh *m)
{
    double v = 0;
    for (uint32_t t = 0; t < m->ntriangles; t++) {
        const double *a = &m->vertices[3 * m->indices[3 * t]];
        const double *b = &m->vertices[3 * m->indices[3 * t + 1]];
        const double *c = &m->vertices[3 * m->indices[3 * t + 2]];
        v += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
             a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    return v / 6;
}

void hs__hull_free(struct hs_hull *h)
{
    if (!h)
        return;
    free(h->planes);
    free(h->points);
    free(h->polygons);
    free(h->triangles);
    memset(h, 0, sizeof *h);
}

/* Vertex order of one facet, turned counter-clockwise about its outward normal. */
static void orient(const double *pts, uint32_t *idx, uint32_t n, const double normal[3])
{
    double nw[3] = {0, 0, 0}; /* Newell's normal of the polygon as ordered */
    for (uint32_t i = 0; i < n; i++) {
        const double *a = &pts[3 * idx[i]], *b = &pts[3 * idx[(i + 1) % n]];
        nw[0] += (a[1] - b[1]) * (a[2] + b[2]);
        nw[1] += (a[2] - b[2]) * (a[0] + b[0]);
        nw[2] += (a[0] - b[0]) * (a[1] + b[1]);
    }
    if (nw[0] * normal[0] + nw[1] * normal[1] + nw[2] * normal[2] < 0)
        for (uint32_t i = 0, j = n - 1; i < j; i++, j--) {
            uint32_t k = idx[i];
            idx[i] = idx[j];
            idx[j] = k;
        }
}

/* Fills h from qhull's facets. Vertices are renumbered 0..npoints-1 in the order met. */
static int collect(qhT *qh, const struct hs_mesh *m, struct hs_hull *h)
{
    int32_t *map = malloc((size_t)m->nvertices * sizeof *map);
    uint32_t nf = (uint32_t)qh->num_facets, nv = (uint32_t)qh->num_vertices, words = 0;
    /* qhull's FORALLfacets / FOREACHvertex_ written out: the facet list ends at a sentinel
     * (next == NULL), a set's elements at a NULL. */
    for (facetT *f = qh->facet_list; f && f->next; f = f->next)
        words += 1 + (uint32_t)qh_setsize(qh, f->vertices);
    h->planes = malloc((size_t)nf * 4 * sizeof *h->planes);
    h->points = malloc((size_t)nv * 3 * sizeof *h->points);
    h->polygons = malloc((size_t)words * sizeof *h->polygons);
    if (!map || !h->planes || !h->points || !h->polygons) {
        free(map);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < m->nvertices; i++)
        map[i] = -1;
    uint32_t w = 0;
    for (facetT *f = qh->facet_list; f && f->next; f = f->next) {
        double *pl = &h->planes[4 * h->nplanes++];
        memcpy(pl, f->normal, 3 * sizeof *pl);
        pl[3] = -f->offset;
        setT *vs = qh_facet3vertex(qh, f);
        uint32_t *poly = &h->polygons[w];
        uint32_t k = 0;
        for (int e = 0; e < qh_setsize(qh, vs); e++) {
            const vertexT *vertex = vs->e[e].p;
            int id = qh_pointid(qh, vertex->point);
            if (id < 0 || (uint32_t)id >= m->nvertices) { /* not an input point: never seen */
                qh_settempfree(qh, &vs);
                free(map);
                return -EINVAL;
            }
            if (map[id] < 0) {
                memcpy(&h->points[3 * h->npoints], &m->vertices[3 * id], 3 * sizeof(double));
                map[id] = (int32_t)h->npoints++;
            }
            poly[1 + k++] = (uint32_t)map[id];
        }
        qh_settempfree(qh, &vs);
        poly[0] = k;
        orient(h->points, poly + 1, k, pl);
        w += 1 + k;
    }
    h->npolygon_words = w;
    free(map);
    h->triangles = malloc((size_t)(words - 3 * h->nplanes) * 3 * sizeof *h->triangles);
    if (!h->triangles)
        return -ENOMEM;
    for (uint32_t f = 0, at = 0; f < h->nplanes; f++) { /* fan: each face is convex */
        uint32_t n = h->polygons[at];
        const uint32_t *idx = &h->polygons[at + 1];
        for (uint32_t k = 1; k + 1 < n; k++) {
            uint32_t *t = &h->triangles[3 * h->ntriangles++];
            t[0] = idx[0], t[1] = idx[k], t[2] = idx[k + 1];
        }
        at += 1 + n;
    }
    /* About the centre, which a convex hull holds strictly inside (ODE's convex geom needs its
     * origin inside: every plane's d > 0). */
    for (uint32_t i = 0; i < h->npoints; i++)
        for (int k = 0; k < 3; k++)
            h->centre[k] += h->points[3 * i + k] / h->npoints;
    for (uint32_t i = 0; i < h->npoints; i++)
        for (int k = 0; k < 3; k++)
            h->points[3 * i + k] -= h->centre[k];
    for (uint32_t f = 0; f < h->nplanes; f++) {
        double *pl = &h->planes[4 * f];
        pl[3] -= pl[0] * h->centre[0] + pl[1] * h->centre[1] + pl[2] * h->centre[2];
    }
    return 0;
}

int hs__hull_of_mesh(const struct hs_mesh *m, struct hs_hull *ret, char *err, size_t errsize)
{
    struct hs_hull h = {0};
    char buf[512] = "";
    FILE *errfile = fmemopen(buf, sizeof buf - 1, "w");
    if (!errfile)
        return -ENOMEM;
    qhT qh_qh, *qh = &qh_qh;
    qh_zero(qh, errfile);
    /* Pp: no precision warnings on stderr; the result is checked here instead. */
    /* C-tol: merge facets whose centrums lie within tol of their neighbours' planes. Without
     * it the hull of a dense curved mesh (a CAD foot's rounded sole) is the mesh itself, as
     * many triangles as before; with it a 20 000-triangle foot becomes a few hundred. Pp: no
     * precision warnings on stderr. */
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < m->nvertices; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], m->vertices[3 * i + k]);
            hi[k] = fmax(hi[k], m->vertices[3 * i + k]);
        }
    double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    h.tolerance_m = HS_HULL_TOLERANCE_REL * (isfinite(diag) ? diag : 0);
    char flags[64];
    snprintf(flags, sizeof flags, "qhull Pp C-%.9g", h.tolerance_m);
    int exitcode = qh_new_qhull(qh, 3, (int)m->nvertices, m->vertices, False, flags, NULL, errfile);
    int r = 0;
    if (exitcode == 0) {
        qh_getarea(qh, qh->facet_list);
        h.volume_m3 = qh->totvol;
        r = collect(qh, m, &h);
    } else {
        r = -EINVAL;
    }
    qh_freeqhull(qh, !qh_ALL);
    int curlong, totlong;
    qh_memfreeshort(qh, &curlong, &totlong);
    fclose(errfile);
    if (r == -EINVAL && err && errsize) {
        /* qhull's first line says why (e.g. QH6154: the points are flat) */
        char *nl = strchr(buf, '\n');
        if (nl)
            *nl = '\0';
        snprintf(err, errsize, "%s", buf[0] ? buf : "qhull failed");
    }
    if (r) {
        hs__hull_free(&h);
        return r;
    }
    h.mesh_volume_m3 = fabs(mesh_volume(m));
    *ret = h;
    return 0;
}
