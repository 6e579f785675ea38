/* A link's inertia a rigid body can have: the principal moments obey the triangle inequality
 * (each at most the sum of the other two, as I1 + I2 - I3 = 2 ∫ z² dm >= 0). A tensor that
 * breaks it (a typo, a CAD export in the wrong units on one axis) is still positive definite,
 * so the world simulates it, but no real link turns that way: the loader says so, naming the
 * link, and loads it as authored. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model_format.h"

/* Eigenvalues of a symmetric 3x3 matrix, ascending (the closed form through the
 * characteristic polynomial's trigonometric solution). */
static void principal_moments(const double I[9], double ret[3])
{
    double a00 = I[0], a11 = I[4], a22 = I[8];
    double a01 = 0.5 * (I[1] + I[3]), a02 = 0.5 * (I[2] + I[6]), a12 = 0.5 * (I[5] + I[7]);
    double p1 = a01 * a01 + a02 * a02 + a12 * a12;
    double e[3];
    if (p1 == 0) {
        e[0] = a00, e[1] = a11, e[2] = a22;
    } else {
        double q = (a00 + a11 + a22) / 3;
        double p2 = (a00 - q) * (a00 - q) + (a11 - q) * (a11 - q) + (a22 - q) * (a22 - q) + 2 * p1;
        double p = sqrt(p2 / 6);
        double b00 = (a00 - q) / p, b11 = (a11 - q) / p, b22 = (a22 - q) / p;
        double b01 = a01 / p, b02 = a02 / p, b12 = a12 / p;
        double det = b00 * (b11 * b22 - b12 * b12) - b01 * (b01 * b22 - b12 * b02) +
                     b02 * (b01 * b12 - b11 * b02);
        double r = fmax(-1.0, fmin(1.0, det / 2));
        double phi = acos(r) / 3;
        e[2] = q + 2 * p * cos(phi);
        e[0] = q + 2 * p * cos(phi + 2 * M_PI / 3);
        e[1] = 3 * q - e[0] - e[2];
    }
    for (int i = 0; i < 3; i++) /* sort ascending */
        for (int j = i + 1; j < 3; j++)
            if (e[j] < e[i]) {
                double t = e[i];
                e[i] = e[j];
                e[j] = t;
            }
    for (int i = 0; i < 3; i++)
        ret[i] = e[i];
}

int hs__model_warn_inertia(struct hs_model *m)
{
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        bool finite = isfinite(l->mass);
        for (int k = 0; k < 9; k++)
            finite = finite && isfinite(l->inertia[k]);
        if (!finite || !(l->mass > 0))
            continue; /* the world's own mass guard deals with these */
        double e[3];
        principal_moments(l->inertia, e);
        /* a point mass or a thin rod sits on the boundary (e0 + e1 == e2): allow rounding */
        if (!(e[0] > 0) || e[0] + e[1] >= e[2] * (1 - 1e-6))
            continue;
        if (m->nwarnings >= 1000)
            return 0;
        char **w = realloc(m->warnings, (m->nwarnings + 1) * sizeof *w);
        if (!w)
            return -ENOMEM;
        m->warnings = w;
        const char *file = l->source_file ? l->source_file : m->path ? m->path : "<model>";
        char where[32] = "";
        if (l->source_line > 0)
            snprintf(where, sizeof where, ":%d", (int)l->source_line);
        if (asprintf(&w[m->nwarnings],
                     "%s%s: link '%s': inertia violates the triangle "
                     "inequality (principal moments %.6g, %.6g, %.6g kg*m^2: %.6g + %.6g < "
                     "%.6g): no rigid body has it; simulated as given",
                     file, where, l->name, e[0], e[1], e[2], e[0], e[1], e[2]) < 0)
            return -ENOMEM;
        m->nwarnings++;
    }
    return 0;
}
