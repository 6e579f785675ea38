/* The same robot, floor and PD hold in MuJoCo (libmujoco-dev 2.2.2, Debian 12), for the contact
 * benchmark's side-by-side row: MuJoCo has no VRML loader, so the hilsim bench's loaded models
 * are written out as MJCF with the same masses, inertias (full tensors), joint axes, rotor
 * armature, geometry (boxes, spheres, cylinders) and robot-floor-only collision, then stepped with
 * mj_step (its defaults: Newton solver, 1 ms here, soft contacts of its own). The PD hold uses
 * the bench's gains, explicitly, as hilsim's plant does. Built only where MuJoCo is installed. */
#ifndef HS_BENCH_MUJOCO_RUN_H
#define HS_BENCH_MUJOCO_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contact_run.h"

struct hs_mujoco_run;

/* bench: a created hilsim bench (borrowed during create only): robot = its first non-static
 * model, environment = its static ones. 0, or -1 with err filled. */
int hs_mujoco_run_create(struct hs_bench *bench, struct hs_mujoco_run **ret, char *err,
                         size_t errsz);
void hs_mujoco_run_destroy(struct hs_mujoco_run *run);
/* Up to n more ticks of HS_CR_SETTLE + HS_CR_REST, each mj_step timed. */
void hs_mujoco_run_ticks(struct hs_mujoco_run *run, uint32_t n);
bool hs_mujoco_run_done(const struct hs_mujoco_run *run);
/* Fills the rest figures (load_n, rest_std_pct, rest_jump_pct: each foot's total contact normal
 * force, foot mass included; imu_z_std: the waist body's z acceleration; contacts_mean) and the
 * step time; 0 elsewhere. */
/* MuJoCo's version string (e.g. "2.2.2"). */
const char *hs_mujoco_version(void);
void hs_mujoco_run_metrics(struct hs_mujoco_run *run, struct hs_contact_metrics *ret);

#endif
