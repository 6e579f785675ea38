/* VRML Extrusion as a triangle mesh: the cross-section (x, z) is placed at every spine point in
 * the spine-aligned cross-section plane, scaled and oriented, sides joined, and both ends capped
 * by ear clipping. Closed results are wound outwards (positive signed volume), since contact
 * normals follow the winding. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "hilsim/pose.h"

#define MAX_EXTRUSION_POINTS 65536

static void sub(const double *a, const double *b, double r[3])
{
    r[0] = a[0] - b[0], r[1] = a[1] - b[1], r[2] = a[2] - b[2];
}

static double norm(double v[3])
{
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 1e-12)
        v[0] /= l, v[1] /= l, v[2] /= l;
    return l;
}

static bool same(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (fabs(a[i] - b[i]) > 1e-12)
            return false;
    return true;
}

/* Rotation taking +Y onto dir (unit), for straight spines where the SCP Z axis is undefined. */
static void rot_y_to(const double dir[3], double R[9])
{
    double y[3] = {0, 1, 0}, ax[3];
    hs_vec_cross(y, dir, ax);
    double s = norm(ax), c = dir[1];
    if (s < 1e-12) {
        double flip[3] = {1, 0, 0};
        hs_rot_from_axis_angle(flip, c > 0 ? 0 : M_PI, R);
        return;
    }
    hs_rot_from_axis_angle(ax, atan2(s, c), R);
}

/* SCP axes (columns X, Y, Z) for every spine point. */
static void spine_frames(const double *sp, uint32_t ns, double *frames)
{
    bool closed = ns > 2 && same(&sp[0], &sp[3 * (ns - 1)], 3);
    double prevz[3] = {0, 0, 0};
    bool have_z = false;
    double straight[9];
    double dir[3];
    sub(&sp[3 * (ns - 1)], &sp[0], dir);
    if (norm(dir) < 1e-12)
        dir[0] = 0, dir[1] = 1, dir[2] = 0;
    rot_y_to(dir, straight);
    for (uint32_t i = 0; i < ns; i++) {
        double y[3], z[3] = {0, 0, 0};
        uint32_t ip = i > 0 ? i - 1 : (closed ? ns - 2 : 0);
        uint32_t in = i + 1 < ns ? i + 1 : (closed ? 1 : ns - 1);
        sub(&sp[3 * in], &sp[3 * ip], y);
        if (norm(y) < 1e-12)
            memcpy(y, dir, sizeof y);
        if ((i > 0 && i + 1 < ns) || closed) {
            double a[3], b[3];
            sub(&sp[3 * in], &sp[3 * i], a);
            sub(&sp[3 * ip], &sp[3 * i], b);
            hs_vec_cross(a, b, z);
        }
        if (norm(z) < 1e-12) {
            if (have_z)
                memcpy(z, prevz, sizeof z);
            else
                z[0] = straight[2], z[1] = straight[5], z[2] = straight[8];
        } else if (have_z && z[0] * prevz[0] + z[1] * prevz[1] + z[2] * prevz[2] < 0) {
            z[0] = -z[0], z[1] = -z[1], z[2] = -z[2];
        }
        /* Z must be normal to Y: project, and fall back to the straight frame if degenerate. */
        double d = z[0] * y[0] + z[1] * y[1] + z[2] * y[2];
        for (int k = 0; k < 3; k++)
            z[k] -= d * y[k];
        if (norm(z) < 1e-12)
            z[0] = straight[2], z[1] = straight[5], z[2] = straight[8];
        memcpy(prevz, z, sizeof z);
        have_z = true;
        double x[3];
        hs_vec_cross(y, z, x);
        norm(x);
        double *F = &frames[9 * i];
        for (int r = 0; r < 3; r++)
            F[r * 3] = x[r], F[r * 3 + 1] = y[r], F[r * 3 + 2] = z[r];
    }
    /* A spine with a first interior Z: ends take their neighbour's Z (done via prevz above for
     * the last point; the first point copies the second). */
    if (ns > 2 && !closed) {
        double F1[9];
        memcpy(F1, &frames[9], sizeof F1);
        double y0[3] = {frames[1], frames[4], frames[7]}, z1[3] = {F1[2], F1[5], F1[8]}, x0[3];
        double d = z1[0] * y0[0] + z1[1] * y0[1] + z1[2] * y0[2];
        for (int k = 0; k < 3; k++)
            z1[k] -= d * y0[k];
        if (norm(z1) > 1e-12) {
            hs_vec_cross(y0, z1, x0);
            norm(x0);
            for (int r = 0; r < 3; r++)
                frames[r * 3] = x0[r], frames[r * 3 + 2] = z1[r];
        }
    }
}

int hs__build_extrusion(struct hs__builder *b, const struct hs__vnode *n,
                        const struct hs__venv *env, const struct hs__bctx *ctx, double **ret_v,
                        uint32_t *ret_nv, uint32_t **ret_t, uint32_t *ret_nt)
{
    static const double def_cs[] = {1, 1, 1, -1, -1, -1, -1, 1, 1, 1};
    static const double def_sp[] = {0, 0, 0, 0, 1, 0};
    const struct hs__vvalue *cs_v, *sp_v, *sc_v, *or_v;
    bool begin_cap, end_cap;
    int r;
    if ((r = hs__get_numbers(b, n, env, "crossSection", HS__FT_MFVEC2F, &cs_v)) < 0 ||
        (r = hs__get_numbers(b, n, env, "spine", HS__FT_MFVEC3F, &sp_v)) < 0 ||
        (r = hs__get_numbers(b, n, env, "scale", HS__FT_MFVEC2F, &sc_v)) < 0 ||
        (r = hs__get_numbers(b, n, env, "orientation", HS__FT_MFROTATION, &or_v)) < 0 ||
        (r = hs__get_bool(b, n, env, "beginCap", true, &begin_cap)) < 0 ||
        (r = hs__get_bool(b, n, env, "endCap", true, &end_cap)) < 0)
        return r;
    (void)ctx;
    uint32_t ncs = cs_v ? cs_v->n / 2 : 5, ns = sp_v ? sp_v->n / 3 : 2;
    *ret_v = NULL;
    *ret_t = NULL;
    *ret_nv = *ret_nt = 0;
    if (ncs < 2 || ns < 2)
        return 0; /* nothing to sweep */
    if ((uint64_t)ncs * ns > MAX_EXTRUSION_POINTS)
        return hs_diag_set(b->diag, -E2BIG, n->file, n->line, n->column,
                           "Extrusion with more than %d points", MAX_EXTRUSION_POINTS);
    double *cs = malloc(2 * (size_t)ncs * sizeof *cs), *sp = malloc(3 * (size_t)ns * sizeof *sp);
    double *frames = malloc(9 * (size_t)ns * sizeof *frames);
    double *v = malloc(3 * (size_t)ncs * ns * sizeof *v);
    uint32_t maxt = 2 * ncs * (ns - 1) + 2 * ncs;
    uint32_t *t = malloc(3 * (size_t)maxt * sizeof *t), *poly = malloc(ncs * sizeof *poly);
    if (!cs || !sp || !frames || !v || !t || !poly) {
        r = hs_diag_set(b->diag, -ENOMEM, n->file, n->line, n->column, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < 2 * ncs; i++)
        cs[i] = cs_v ? cs_v->items[i].num : def_cs[i];
    for (uint32_t i = 0; i < 3 * ns; i++)
        sp[i] = sp_v ? sp_v->items[i].num : def_sp[i];
    bool cs_closed = ncs > 2 && same(&cs[0], &cs[2 * (ncs - 1)], 2);
    uint32_t m = cs_closed ? ncs - 1 : ncs; /* distinct cross-section points */
    spine_frames(sp, ns, frames);
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t si = sc_v && sc_v->n >= 2 ? (i < sc_v->n / 2 ? i : sc_v->n / 2 - 1) : 0;
        uint32_t oi = or_v && or_v->n >= 4 ? (i < or_v->n / 4 ? i : or_v->n / 4 - 1) : 0;
        double sx = sc_v && sc_v->n >= 2 ? sc_v->items[2 * si].num : 1;
        double sz = sc_v && sc_v->n >= 2 ? sc_v->items[2 * si + 1].num : 1;
        double O[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        if (or_v && or_v->n >= 4) {
            double ax[3] = {or_v->items[4 * oi].num, or_v->items[4 * oi + 1].num,
                            or_v->items[4 * oi + 2].num};
            hs_rot_from_axis_angle(ax, or_v->items[4 * oi + 3].num, O);
        }
        double FO[9];
        hs_rot_mul(&frames[9 * i], O, FO);
        for (uint32_t j = 0; j < m; j++) {
            double local[3] = {cs[2 * j] * sx, 0, cs[2 * j + 1] * sz}, w[3];
            hs_rot_apply(FO, local, w);
            for (int k = 0; k < 3; k++)
                v[3 * (i * m + j) + k] = sp[3 * i + k] + w[k];
        }
    }
    uint32_t nt = 0, edges = cs_closed ? m : m - 1;
    for (uint32_t i = 0; i + 1 < ns; i++)
        for (uint32_t j = 0; j < edges; j++) {
            uint32_t a = i * m + j, b2 = i * m + (j + 1) % m, c = a + m, d = b2 + m;
            t[3 * nt] = a, t[3 * nt + 1] = b2, t[3 * nt + 2] = d, nt++;
            t[3 * nt] = a, t[3 * nt + 1] = d, t[3 * nt + 2] = c, nt++;
        }
    bool capped = cs_closed && begin_cap && end_cap;
    if (cs_closed) {
        for (int end = 0; end < 2; end++) {
            if (!(end ? end_cap : begin_cap))
                continue;
            uint32_t base = end ? (ns - 1) * m : 0;
            for (uint32_t j = 0; j < m; j++)
                poly[j] = base + j;
            uint32_t k = hs__triangulate(v, poly, m, &t[3 * nt]);
            if (end == 0) /* the begin cap faces backwards along the spine */
                for (uint32_t q = nt; q < nt + k; q++) {
                    uint32_t tmp = t[3 * q + 1];
                    t[3 * q + 1] = t[3 * q + 2];
                    t[3 * q + 2] = tmp;
                }
            nt += k;
        }
    }
    if (capped) {
        double vol = 0;
        for (uint32_t q = 0; q < nt; q++) {
            const double *a = &v[3 * t[3 * q]], *b2 = &v[3 * t[3 * q + 1]],
                         *c = &v[3 * t[3 * q + 2]];
            vol += a[0] * (b2[1] * c[2] - b2[2] * c[1]) - a[1] * (b2[0] * c[2] - b2[2] * c[0]) +
                   a[2] * (b2[0] * c[1] - b2[1] * c[0]);
        }
        if (vol < 0)
            for (uint32_t q = 0; q < nt; q++) {
                uint32_t tmp = t[3 * q + 1];
                t[3 * q + 1] = t[3 * q + 2];
                t[3 * q + 2] = tmp;
            }
    }
    free(cs);
    free(sp);
    free(frames);
    free(poly);
    *ret_v = v;
    *ret_nv = ns * m;
    *ret_t = t;
    *ret_nt = nt;
    return 0;
fail:
    free(cs);
    free(sp);
    free(frames);
    free(v);
    free(t);
    free(poly);
    return r;
}
