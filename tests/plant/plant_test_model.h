/* Hand-built body models for the plant tests (no loader needed). */
#ifndef PLANT_TEST_MODEL_H
#define PLANT_TEST_MODEL_H

#include "hilsim/model.h"
#include "hilsim/world.h"

/* A model with nlinks links (link 0 the root, fixed to the world, each further link a child of
 * the previous one) and nsensors sensors; every field gets the loader's defaults, 1 kg and a
 * 0.01 kg·m² isotropic inertia. Free it with tm_free. */
struct hs_model *tm_new(uint32_t nlinks, uint32_t nsensors);
void tm_free(struct hs_model *m);
void tm_set_inertia(struct hs_link *l, double ixx, double iyy, double izz);

/* A world with one body: standard solver, 1 ms step, one substep, the given gravity, the
 * armature array (may be NULL) and initial velocities (may be NULL). ODE's random seed is
 * reset first so runs repeat exactly. */
struct hs_world *tm_world(const struct hs_model *m, double gz, const double *armature,
                          const double *dq0);

#endif
