#include <ode/ode.h>

#include "bench/bench_momentum.h"

double bench_model_mass(struct hs_bench *bench, uint32_t model)
{
    struct hs_world *w = hs_bench_world(bench);
    const struct hs_model *m = hs_bench_model(bench, model);
    double mass = 0;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        dBodyID b = hs_world_ode_body(w, model, l);
        if (!b)
            continue;
        dMass dm;
        dBodyGetMass(b, &dm);
        mass += dm.mass;
    }
    return mass;
}

void bench_momentum(struct hs_bench *bench, uint32_t model, double ret[3])
{
    struct hs_world *w = hs_bench_world(bench);
    const struct hs_model *m = hs_bench_model(bench, model);
    ret[0] = ret[1] = ret[2] = 0;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        dBodyID b = hs_world_ode_body(w, model, l);
        if (!b)
            continue;
        dMass dm;
        dBodyGetMass(b, &dm);
        const dReal *v = dBodyGetLinearVel(b);
        for (int k = 0; k < 3; k++)
            ret[k] += dm.mass * v[k];
    }
}
