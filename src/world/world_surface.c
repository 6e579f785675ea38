/* Per-link contact surfaces from the model (URDF Gazebo mu1, mu2, kp, kd: hs_link
 * surface_given) laid over the contact's surface parameters, which hold the world's (or the
 * contact material's) values on entry.
 *
 * Combination, as Gazebo's ODE back end does it: friction coefficients take the smaller of the
 * two sides (a side that gives none brings the entry value); stiffness in series
 * (1/kp = 1/kp1 + 1/kp2) and damping added, from the sides that give them; a quantity neither
 * side gives comes from the entry ERP/CFM (kp = erp / (cfm·dt), kd = (1 - erp) / cfm). The
 * spring and damper become ODE's per-contact ERP and CFM for the step dt:
 * erp = dt·kp / (dt·kp + kd), cfm = 1 / (dt·kp + kd). RT-safe. */
#include <math.h>

#include "world_internal.h"

static const struct hs_link *model_link(const struct hs__world_link *l)
{
    return &l->owner->model->links[l->link_index];
}

static double side_mu(const struct hs_link *l, uint32_t bit, double mu, double entry)
{
    return l->surface_given & bit ? mu : entry;
}

void hs__world_surface(const struct hs_world *w, const struct hs__world_link *l1,
                       const struct hs__world_link *l2, dSurfaceParameters *s)
{
    const struct hs_link *a = model_link(l1), *b = model_link(l2);
    uint32_t given = a->surface_given | b->surface_given;
    if (!given)
        return;
    double mu = s->mu;
    if (given & (HS_SURFACE_MU1 | HS_SURFACE_MU2)) {
        double a1 = side_mu(a, HS_SURFACE_MU1, a->mu1, mu),
               b1 = side_mu(b, HS_SURFACE_MU1, b->mu1, mu);
        double a2 = side_mu(a, HS_SURFACE_MU2, a->mu2, a1),
               b2 = side_mu(b, HS_SURFACE_MU2, b->mu2, b1);
        s->mu = fmin(a1, b1);
        double mu2 = fmin(a2, b2);
        if (mu2 != s->mu) {
            s->mode |= dContactMu2;
            s->mu2 = mu2;
        }
    }
    if (!(given & (HS_SURFACE_KP | HS_SURFACE_KD)))
        return;
    double dt = w->params.step_s, erp = s->soft_erp, cfm = s->soft_cfm;
    double kp, kd;
    if (given & HS_SURFACE_KP) {
        double c = 0; /* compliance */
        c += a->surface_given & HS_SURFACE_KP ? 1 / a->contact_kp : 0;
        c += b->surface_given & HS_SURFACE_KP ? 1 / b->contact_kp : 0;
        kp = 1 / c;
    } else {
        kp = cfm > 0 ? erp / (cfm * dt) : INFINITY;
    }
    if (given & HS_SURFACE_KD)
        kd = (a->surface_given & HS_SURFACE_KD ? a->contact_kd : 0) +
             (b->surface_given & HS_SURFACE_KD ? b->contact_kd : 0);
    else
        kd = cfm > 0 ? (1 - erp) / cfm : 0;
    double d = dt * kp + kd;
    if (!isfinite(d)) {
        s->soft_erp = 1;
        s->soft_cfm = 0;
    } else if (d > 0) {
        s->soft_erp = dt * kp / d;
        s->soft_cfm = 1 / d;
    }
    s->mode |= dContactSoftERP | dContactSoftCFM;
}
