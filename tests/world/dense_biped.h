/* A small robot with dense CAD-like meshes (issue 29's traits), shared by
 * test_world_dense_feet and mesh_bench: a 0.39 kg biped, pelvis (free, 0.3 kg box), per leg hip,
 * knee and ankle hinges about y (15 g thigh, shank and foot), each foot a rounded sole of
 * 20 172 triangles (a superellipsoid 0.1 x 0.06 x 0.02 m 0.025 m under the ankle). Soles touch
 * z = 0 with the pelvis at 0.26 m. */
#ifndef HS_TEST_DENSE_BIPED_H
#define HS_TEST_DENSE_BIPED_H

#include "hilsim/model.h"

#define N_SUB 41 /* 6 x 41 x 41 x 2 = 20 172 triangles per foot */
#define HS_DENSE_BIPED_FEET_LINKS                                                                  \
    {                                                                                              \
        3, 6                                                                                       \
    }

/* The superellipsoid |x/a|^8 + |y/b|^8 + |z/c|^8 = 1 as a mesh (arrays malloc'd into *ret). */
void hs_test_dense_sole(double a, double b, double c, struct hs_mesh *ret);
/* The biped with mesh_collision how applied; free with hs_model_free. Aborts on no memory. */
struct hs_model *hs_test_dense_biped(enum hs_mesh_approx how);

#endif
