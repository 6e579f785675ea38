#include <ode/ode.h>

#include "bench/bench_momentum.h"

/* Sums mass and momentum over the model's ODE bodies (a static link has none). */
static void sum(struct hs_bench *bench, uint32_t model, double *ret_mass, double ret_p[3])
{
    struct hs_world *w = hs_bench_world(bench);
    const struct hs_model *m = hs_bench_model(bench, model);
    *ret_mass = ret_p[0] = ret_p[1] = ret_p[2] = 0;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        dBodyID b = hs_world_ode_body(w, model, l);
        if (!b)
            continue;
        dMass dm;
        dBodyGetMass(b, &dm);
        const dReal *v = dBodyGetLinearVel(b);
        *ret_mass += dm.mass;
        for (int k = 0; k < 3; k++)
            ret_p[k] += dm.mass * v[k];
    }
}

double bench_model_mass(struct hs_bench *bench, uint32_t model)
{
    double mass, p[3];
    sum(bench, model, &mass, p);
    return mass;
}

void bench_momentum(struct hs_bench *bench, uint32_t model, double ret[3])
{
    double mass;
    sum(bench, model, &mass, ret);
}
