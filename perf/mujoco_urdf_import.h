/* MuJoCo's own reading of the URDF that `hilsim model --urdf` writes (hs_model_write_urdf): its
 * importer (mj_loadXML), its output saved as MJCF (mj_saveLastXML), and the two things URDF
 * cannot hold added to that output as text: a floor plane in the worldbody, and hilsim's step and
 * gravity (its 9.80665 m/s², not MuJoCo's 9.81) as the option. Nothing of the robot is converted
 * by hand. Built only where MuJoCo is installed. */
#ifndef HS_PERF_MUJOCO_URDF_IMPORT_H
#define HS_PERF_MUJOCO_URDF_IMPORT_H

#include <stddef.h>

#include <mujoco/mujoco.h>

/* urdf: the file to import; xml: where MuJoCo's MJCF (with the floor) is written; step_s and
 * gravity: the world's (hilsim's defaults). The model, or NULL with err filled. */
mjModel *hs_mujoco_import_urdf(const char *urdf, const char *xml, double step_s,
                               const double gravity[3], char *err, size_t errsz);

/* Robot-floor contacts only, as hilsim collides one robot: every geom of the world body (the
 * floor) collides with every other geom, no two geoms of the robot collide. MuJoCo's own filter
 * (parent-child pairs excluded, every other pair colliding) makes SR1's hip links touch. */
void hs_mujoco_floor_only(mjModel *m);

#endif
