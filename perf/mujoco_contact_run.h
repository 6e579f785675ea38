/* The contact benchmark's timeline (contact_run.h: settle, rest, hip sway from foot to foot) on
 * a MuJoCo model of the same robot, recording the same series (struct hs_contact_series) as a
 * hilsim run does, so every figure and goal of the contact benchmark is computed alike for both
 * engines. The robot's parts, gains and hold targets are taken from a hilsim run of the same
 * robot (its twin): the ankle F/T sensors' links and frames, the accelerometer's link and frame,
 * every hinge's kp, kd and q0, the four roll joints; MuJoCo's bodies and joints are found by the
 * same names (its URDF importer keeps them).
 *
 * What MuJoCo reports in place of hilsim's sensors, after each mj_step (mj_rnePostConstraint:
 * the accelerations and interaction forces of that step):
 *   - an ankle F/T: the force and torque the foot's subtree passes to its parent (-cfrc_int),
 *     moved to the sensor's origin and turned into its frame, as MuJoCo's own force and torque
 *     sensors do; Fz and the CoP from them exactly as contact_run.c does from hilsim's F/T;
 *   - the accelerometer: the acceleration at the sensor's origin less gravity (cacc starts from
 *     -g), in its frame, as MuJoCo's accelerometer;
 *   - the sinkage: the deepest contact (-dist) at rest.
 * The PD hold is applied explicitly (qfrc_applied), as hilsim's plant applies its torque.
 * Built only where MuJoCo is installed. */
#ifndef HS_PERF_MUJOCO_CONTACT_RUN_H
#define HS_PERF_MUJOCO_CONTACT_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mujoco/mujoco.h>

#include "contact_run.h"

struct hs_mujoco_contact_run;

/* Run options. CONVERGED: MuJoCo's Newton solver run to machine precision (tolerance 1e-15, up
 * to 1000 iterations): the reference a run's CoP is judged against, as hilsim's quick step is
 * against its exact solver. FLOOR_ONLY: robot-floor contacts only (hs_mujoco_floor_only). */
#define HS_MJ_CONVERGED 1u
#define HS_MJ_FLOOR_ONLY 2u

/* model: copied (the run owns its copy). twin: a created hilsim run of the same robot
 * (borrowed during create only). flags: HS_MJ_*. 0, or -1 with err filled (a part the model
 * lacks, a timestep other than the twin's tick). */
int hs_mujoco_contact_run_create(const mjModel *model, struct hs_contact_run *twin, double sway_rad,
                                 unsigned flags, struct hs_mujoco_contact_run **ret, char *err,
                                 size_t errsz);
void hs_mujoco_contact_run_destroy(struct hs_mujoco_contact_run *run);
/* All HS_CR_TICKS ticks. */
void hs_mujoco_contact_run_all(struct hs_mujoco_contact_run *run);
const struct hs_contact_series *
hs_mujoco_contact_run_series(const struct hs_mujoco_contact_run *run);
/* The series' figures (hs_contact_series_metrics) with the twin's weight above the sensors;
 * and contacts_mean. */
void hs_mujoco_contact_run_metrics(const struct hs_mujoco_contact_run *run,
                                   struct hs_contact_metrics *ret);
/* Deepest contact at rest (m); mean solver iterations per step at rest and while swaying. */
double hs_mujoco_contact_run_sinkage(const struct hs_mujoco_contact_run *run);
void hs_mujoco_contact_run_iterations(const struct hs_mujoco_contact_run *run, double *ret_rest,
                                      double *ret_sway);

#endif
