/* Hand-built hs_model bodies for the world tests, independent of the VRML loader. */
#ifndef HS_TEST_MODEL_BUILDERS_H
#define HS_TEST_MODEL_BUILDERS_H

#include "hilsim/model.h"
#include "hilsim/world.h"

/* An empty model with n links (identity origins, unit mass, small inertia) and room for
 * ngeoms geoms and nextra extra joints; link i's parent is i-1. Free with mb_free(). */
struct hs_model *mb_new(const char *name, uint32_t nlinks, uint32_t ngeoms, uint32_t nextra);
void mb_free(struct hs_model *m);

/* Sets link mass properties: mass, centre of mass, diagonal inertia about the centre of mass. */
void mb_mass(struct hs_link *l, double mass, double cx, double cy, double cz, double ixx,
             double iyy, double izz);
void mb_joint(struct hs_link *l, enum hs_joint_type t, double ax, double ay, double az);
/* Adds a box geom (link frame, at p) as the model's next geom and attaches it to link li. */
void mb_box(struct hs_model *m, uint32_t li, double sx, double sy, double sz, double px, double py,
            double pz);

/* A static floor: one fixed link holding a 10 m x 10 m x 0.2 m box whose top face is z = 0. */
struct hs_model *mb_floor(void);
/* A free cube of side a and mass m (uniform). */
struct hs_model *mb_cube(double a, double mass);
/* A 5 kg chassis (0.4 x 0.3 x 0.04 m box) on two crawler links, axis +y, whose 0.4 x 0.05 x 0.1 m
 * track boxes at y = ±0.175 touch the floor when its root is at z = 0.05: a positive track speed
 * drives along y × z = +x. */
struct hs_model *mb_crawler(void);

/* hs_world_create of n bodies; the test fails (with the error and its message) if it does. */
struct hs_world *mb_world(const struct hs_world_params *p, const struct hs_world_body_spec *s,
                          uint32_t n);
/* mb_world of a static floor and one model above it, its root at height z. */
struct hs_world *mb_on_floor(const struct hs_model *floor, const struct hs_model *m, double z,
                             const struct hs_world_params *p);

#endif
