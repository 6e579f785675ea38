/* Affine transforms for VRML Transform chains. Scale is allowed here (shapes may be scaled);
 * links, sensors and masses need rigid frames and check hs__affine_is_rigid(). */
#include <math.h>
#include <string.h>

#include "model_internal.h"

void hs__affine_identity(struct hs__affine *ret)
{
    memset(ret, 0, sizeof *ret);
    ret->A[0] = ret->A[4] = ret->A[8] = 1.0;
}

void hs__affine_mul(const struct hs__affine *a, const struct hs__affine *b, struct hs__affine *ret)
{
    struct hs__affine r;
    hs_rot_mul(a->A, b->A, r.A);
    hs_rot_apply(a->A, b->p, r.p);
    for (int i = 0; i < 3; i++)
        r.p[i] += a->p[i];
    *ret = r;
}

void hs__affine_apply(const struct hs__affine *a, const double v[3], double ret[3])
{
    double r[3];
    hs_rot_apply(a->A, v, r);
    for (int i = 0; i < 3; i++)
        ret[i] = r[i] + a->p[i];
}

static void translation(const double t[3], double sign, struct hs__affine *ret)
{
    hs__affine_identity(ret);
    for (int i = 0; i < 3; i++)
        ret->p[i] = sign * t[i];
}

static void rotation(const double r[4], struct hs__affine *ret)
{
    hs__affine_identity(ret);
    hs_rot_from_axis_angle(r, r[3], ret->A);
}

void hs__affine_vrml(const double translation_[3], const double rot[4], const double center[3],
                     const double scale[3], const double scale_orient[4],
                     struct hs__affine *ret_rigid, struct hs__affine *ret_scale)
{
    struct hs__affine T, C, Cinv, R, SR, SRinv, S, tmp;
    translation(translation_, 1, &T);
    translation(center, 1, &C);
    translation(center, -1, &Cinv);
    rotation(rot, &R);
    rotation(scale_orient, &SR);
    hs__affine_identity(&SRinv);
    hs_rot_transpose(SR.A, SRinv.A);
    hs__affine_identity(&S);
    S.A[0] = scale[0];
    S.A[4] = scale[1];
    S.A[8] = scale[2];
    /* rigid = T * C * R * -C */
    hs__affine_mul(&T, &C, &tmp);
    hs__affine_mul(&tmp, &R, &tmp);
    hs__affine_mul(&tmp, &Cinv, ret_rigid);
    /* scale = C * SR * S * -SR * -C */
    hs__affine_mul(&C, &SR, &tmp);
    hs__affine_mul(&tmp, &S, &tmp);
    hs__affine_mul(&tmp, &SRinv, &tmp);
    hs__affine_mul(&tmp, &Cinv, ret_scale);
}

double hs__det3(const double A[9])
{
    return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
           A[2] * (A[3] * A[7] - A[4] * A[6]);
}

bool hs__affine_is_rigid(const struct hs__affine *a)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = 0;
            for (int k = 0; k < 3; k++)
                d += a->A[k * 3 + i] * a->A[k * 3 + j];
            if (fabs(d - (i == j)) > 1e-6)
                return false;
        }
    return hs__det3(a->A) > 0;
}

void hs__affine_to_pose(const struct hs__affine *a, struct hs_pose *ret)
{
    memcpy(ret->R, a->A, sizeof ret->R);
    memcpy(ret->p, a->p, sizeof ret->p);
}
