/* A block on an inclined floor, the scene of the friction tests (tests/world/test_world_slope.c,
 * test_world_material_set.c, tests/model/test_urdf_surface.c): any floor and block model, the
 * slope turned about the world's y axis so "down the slope" is the floor's own +x. */
#ifndef HS_TEST_SLOPE_SCENE_H
#define HS_TEST_SLOPE_SCENE_H

#include "hilsim/world.h"

/* Turns the floor (spec[0], made static) and the block (spec[1]) by th rad about y and puts the
 * block's origin lift_m along the slope's normal from the world origin, so a block whose
 * origin is lift_m above its bottom face starts just clear of a floor whose top is at z = 0.
 * ret_down: the downhill unit vector in the world. */
void slope_place(struct hs_world_body_spec spec[2], double th, double lift_m, double ret_down[3]);

/* Steps w 1200 times and reads the block's (body 1) position along down at steps 200, 700 and
 * 1200: ret_travel the distance between the first and the last, ret_a the acceleration from
 * their second difference, taking a step as 1 ms (0.5 s apart). */
void slope_slide(struct hs_world *w, const double down[3], double *ret_travel, double *ret_a);

#endif
