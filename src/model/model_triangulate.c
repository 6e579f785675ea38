/* Ear clipping in the polygon's own plane (Newell normal), so non-convex faces of any
 * orientation triangulate correctly. Self-intersecting or degenerate input still terminates:
 * when no ear is found the most convex corner is clipped. */
#include <math.h>
#include <stdlib.h>

#include "model_internal.h"

static double cross2(const double a[2], const double b[2], const double c[2])
{
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

static bool inside(const double p[2], const double a[2], const double b[2], const double c[2])
{
    return cross2(a, b, p) >= 0 && cross2(b, c, p) >= 0 && cross2(c, a, p) >= 0;
}

uint32_t hs__triangulate(const double *verts, const uint32_t *poly, uint32_t n, uint32_t *ret_tris)
{
    if (n < 3 || n > HS_MODEL_MAX_POLYGON)
        return 0;
    if (n == 3) {
        ret_tris[0] = poly[0], ret_tris[1] = poly[1], ret_tris[2] = poly[2];
        return 1;
    }
    double nrm[3] = {0, 0, 0};
    for (uint32_t i = 0; i < n; i++) {
        const double *a = &verts[3 * poly[i]], *b = &verts[3 * poly[(i + 1) % n]];
        nrm[0] += (a[1] - b[1]) * (a[2] + b[2]);
        nrm[1] += (a[2] - b[2]) * (a[0] + b[0]);
        nrm[2] += (a[0] - b[0]) * (a[1] + b[1]);
    }
    double len = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    if (!(len > 0))
        return 0;
    for (int i = 0; i < 3; i++)
        nrm[i] /= len;
    /* u, v span the plane with (u, v, n) right-handed, so the polygon is counter-clockwise. */
    double u[3], v[3], t[3] = {1, 0, 0};
    if (fabs(nrm[0]) > 0.9)
        t[0] = 0, t[1] = 1;
    double tn = t[0] * nrm[0] + t[1] * nrm[1] + t[2] * nrm[2];
    for (int i = 0; i < 3; i++)
        u[i] = t[i] - tn * nrm[i];
    double ul = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (int i = 0; i < 3; i++)
        u[i] /= ul;
    v[0] = nrm[1] * u[2] - nrm[2] * u[1];
    v[1] = nrm[2] * u[0] - nrm[0] * u[2];
    v[2] = nrm[0] * u[1] - nrm[1] * u[0];
    double(*p2)[2] = malloc(n * sizeof *p2);
    uint32_t *ring = malloc(n * sizeof *ring);
    if (!p2 || !ring) {
        free(p2);
        free(ring);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        const double *q = &verts[3 * poly[i]];
        p2[i][0] = q[0] * u[0] + q[1] * u[1] + q[2] * u[2];
        p2[i][1] = q[0] * v[0] + q[1] * v[1] + q[2] * v[2];
        ring[i] = i;
    }
    uint32_t m = n, ntri = 0, i = 0, misses = 0;
    /* Ear search costs O(n^2) on real faces but O(n^3) on hostile ones; past this budget every
     * clip takes the best corner directly, which is O(n) each. */
    uint64_t work = 0, budget = 64 * (uint64_t)n * n;
    while (m > 3) {
        uint32_t ip = ring[(i + m - 1) % m], ic = ring[i % m], in = ring[(i + 1) % m];
        bool ear = work < budget && cross2(p2[ip], p2[ic], p2[in]) > 0;
        work += m;
        for (uint32_t k = 0; ear && k < m; k++) {
            uint32_t r = ring[k];
            if (r != ip && r != ic && r != in && inside(p2[r], p2[ip], p2[ic], p2[in]))
                ear = false;
        }
        if (!ear && misses < m && work < budget) {
            misses++;
            i = (i + 1) % m;
            continue;
        }
        if (!ear) {
            /* No ear: degenerate or self-intersecting. Clip the corner with the largest turn. */
            double best = -INFINITY;
            for (uint32_t k = 0; k < m; k++) {
                double c = cross2(p2[ring[(k + m - 1) % m]], p2[ring[k]], p2[ring[(k + 1) % m]]);
                if (c > best)
                    best = c, i = k;
            }
            ip = ring[(i + m - 1) % m], ic = ring[i], in = ring[(i + 1) % m];
        }
        ret_tris[3 * ntri] = poly[ip];
        ret_tris[3 * ntri + 1] = poly[ic];
        ret_tris[3 * ntri + 2] = poly[in];
        ntri++;
        for (uint32_t k = i % m; k + 1 < m; k++)
            ring[k] = ring[k + 1];
        m--;
        i = i % m;
        misses = 0;
    }
    ret_tris[3 * ntri] = poly[ring[0]];
    ret_tris[3 * ntri + 1] = poly[ring[1]];
    ret_tris[3 * ntri + 2] = poly[ring[2]];
    ntri++;
    free(p2);
    free(ring);
    return ntri;
}
