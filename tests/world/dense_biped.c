/* The dense-mesh biped of issue 29 (tests/world/dense_biped.h). */
#include "world/dense_biped.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world/model_builders.h"

#define N_SUB 41 /* 6 x 41 x 41 x 2 = 20 172 triangles per foot */

/* A superellipsoid |x/a|^8 + |y/b|^8 + |z/c|^8 = 1 from a subdivided cube: flat-ish faces with
 * rounded edges, every vertex on the convex surface. */
void hs_test_dense_sole(double a, double b, double c, struct hs_mesh *ret)
{
    const int n = N_SUB;
    uint32_t nv = 6u * (n + 1) * (n + 1), nt = 6u * n * n * 2, k = 0, q = 0;
    double *v = malloc(3 * (size_t)nv * sizeof *v);
    uint32_t *t = malloc(3 * (size_t)nt * sizeof *t);
    if (!v || !t)
        abort();
    for (int f = 0; f < 6; f++) {
        int ax = f / 2;
        double s = (f % 2) ? 1 : -1;
        uint32_t base = k;
        for (int i = 0; i <= n; i++)
            for (int j = 0; j <= n; j++) {
                double p[3];
                p[ax] = s, p[(ax + 1) % 3] = -1 + 2.0 * i / n, p[(ax + 2) % 3] = -1 + 2.0 * j / n;
                double r = pow(pow(fabs(p[0]), 8) + pow(fabs(p[1]), 8) + pow(fabs(p[2]), 8), 0.125);
                v[3 * k] = a * p[0] / r, v[3 * k + 1] = b * p[1] / r, v[3 * k + 2] = c * p[2] / r;
                k++;
            }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                uint32_t A = base + (uint32_t)(i * (n + 1) + j), B = A + 1, C = A + (uint32_t)n + 1,
                         D = C + 1;
                if (s > 0) {
                    t[q++] = A, t[q++] = C, t[q++] = D, t[q++] = A, t[q++] = D, t[q++] = B;
                } else {
                    t[q++] = A, t[q++] = D, t[q++] = C, t[q++] = A, t[q++] = B, t[q++] = D;
                }
            }
    }
    *ret = (struct hs_mesh){.vertices = v, .nvertices = nv, .indices = t, .ntriangles = nt};
}

/* Pelvis (free, 0.3 kg box), per leg hip, knee and ankle hinges about y (15 g thigh and shank,
 * 15 g foot with the dense sole 0.025 m under the ankle). */
struct hs_model *hs_test_dense_biped(enum hs_mesh_approx how)
{
    struct hs_model *m = mb_new("dense_biped", 7, 7, 0);
    mb_mass(&m->links[0], 0.3, 0, 0, 0, 8e-4, 4e-4, 8e-4);
    mb_box(m, 0, 0.1, 0.15, 0.05, 0, 0, 0);
    for (int leg = 0; leg < 2; leg++) {
        uint32_t hip = 1 + 3 * (uint32_t)leg;
        for (uint32_t k = 0; k < 3; k++) {
            struct hs_link *l = &m->links[hip + k];
            snprintf(l->name, sizeof l->name, "%s_%s", leg ? "R" : "L",
                     (const char *[]){"hip", "knee", "ankle"}[k]);
            l->parent = k == 0 ? 0 : (int32_t)(hip + k - 1);
            mb_joint(l, HS_JOINT_ROTATE, 0, 1, 0);
            l->joint_id = (int32_t)(hip + k - 1);
            l->origin.p[1] = k == 0 ? (leg ? -0.05 : 0.05) : 0;
            l->origin.p[2] = k == 0 ? -0.025 : -0.1;
            if (k < 2) {
                mb_mass(l, 0.015, 0, 0, -0.05, 1.3e-5, 1.3e-5, 1e-6);
                mb_box(m, hip + k, 0.02, 0.02, 0.08, 0, 0, -0.05);
            } else {
                mb_mass(l, 0.015, 0.01, 0, -0.025, 5e-6, 1.3e-5, 1.7e-5);
                struct hs_geom *g = &m->geoms[m->ngeoms];
                memset(g, 0, sizeof *g);
                g->type = HS_GEOM_MESH;
                hs_pose_identity(&g->pose);
                g->pose.p[0] = 0.01, g->pose.p[2] = -0.025;
                hs_test_dense_sole(0.05, 0.03, 0.01, &g->u.mesh);
                l->geom_first = m->ngeoms++;
                l->geom_count = 1;
            }
        }
    }
    struct hs_diag d = {0};
    if (hs_model_mesh_collision(m, how, &d) != 0)
        abort();
    return m;
}
