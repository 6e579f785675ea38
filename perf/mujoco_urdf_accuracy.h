/* Every contact-accuracy goal of the contact benchmark (tests/world/test_contact_accuracy.c:
 * force noise and jumps at rest and swaying, sum = weight, accelerometer noise at rest and
 * swaying, CoP against the exact solve at rest and swaying, the sway moving the load, sinkage)
 * measured for hilsim and MuJoCo on the same URDF, the one `hilsim model --urdf` writes: hilsim
 * loads it as a bench config (default physics; its exact solver as the CoP reference), MuJoCo
 * through its own importer (its defaults; the same Newton solver run to machine precision as
 * the reference). Every figure is in simulated time (lockstep ticks): nothing here depends on
 * the machine's load. Built only where MuJoCo is installed. */
#ifndef HS_PERF_MUJOCO_URDF_ACCURACY_H
#define HS_PERF_MUJOCO_URDF_ACCURACY_H

#include <stdbool.h>
#include <stdio.h>

#include <mujoco/mujoco.h>

#include "hilsim/model.h"

/* urdf: the written URDF (absolute path); robot: hilsim's load of it (for the IMU's sensor
 * names); floor: the floor model's file (absolute path); mj: MuJoCo's import of urdf with its
 * floor (mujoco_urdf_import.h). Prints the table to out. 0 when every goal was met by both
 * engines' defaults, 1 when one was not, -1 on an error (printed to stderr). */
int hs_mujoco_urdf_accuracy(const char *urdf, const struct hs_model *robot, const char *floor,
                            const mjModel *mj, double sway_rad, FILE *out);

#endif
