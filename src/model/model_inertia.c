/* Mass properties of a link from several Segments: mass-weighted centre of mass and the
 * parallel-axis theorem, every tensor already rotated into the link frame. */
#include <string.h>

#include "model_internal.h"

void hs__inertia_rotate(const double R[9], const double I[9], double ret[9])
{
    double RI[9], Rt[9];
    hs_rot_mul(R, I, RI);
    hs_rot_transpose(R, Rt);
    hs_rot_mul(RI, Rt, ret);
}

/* Inertia of a point mass m at offset d: m (|d|^2 E - d d^T). */
static void shift(double m, const double d[3], double I[9])
{
    double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            I[i * 3 + j] += m * ((i == j ? dd : 0.0) - d[i] * d[j]);
}

void hs__mass_add(struct hs__mass *acc, double m, const double com[3], const double inertia[9])
{
    double total = acc->mass + m;
    double c[3];
    for (int i = 0; i < 3; i++)
        c[i] = total > 0 ? (acc->mass * acc->com[i] + m * com[i]) / total
                         : (acc->mass > 0 ? acc->com[i] : com[i]);
    double I[9];
    for (int i = 0; i < 9; i++)
        I[i] = acc->inertia[i] + inertia[i];
    double d1[3], d2[3];
    for (int i = 0; i < 3; i++) {
        d1[i] = acc->com[i] - c[i];
        d2[i] = com[i] - c[i];
    }
    shift(acc->mass, d1, I);
    shift(m, d2, I);
    acc->mass = total;
    memcpy(acc->com, c, sizeof c);
    memcpy(acc->inertia, I, sizeof I);
}
