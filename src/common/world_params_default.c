/* hs_world_params_default lives in hs_common, not in hs_world: the config library fills its
 * physics defaults from it without linking ODE, and there is one list of the values. */
#include <math.h>
#include <string.h>

#include "hilsim/world.h"

void hs_world_params_default(struct hs_world_params *ret_params)
{
    memset(ret_params, 0, sizeof *ret_params);
    ret_params->step_s = 1e-3;
    ret_params->substeps = 1;
    ret_params->solver = HS_SOLVER_QUICK;
    /* 12 iterations at SOR factor 1.2 (ODE's is 1.3), with the contact damping below: on SR1
     * standing and swaying (perf/contact_bench.c) the ankle forces keep 0.04 % noise and 0.30 %
     * worst tick-to-tick jump, the waist IMU 0.012 m/s², for a step 0.98x MuJoCo's mj_step on
     * the same robot; 11 iterations break the IMU goal (0.021 m/s²). At 1e4 N·s/m the same 12
     * iterations left 1.2 % jumps, so the old default needed 16 (config/README.md, "What each
     * lever bought"). */
    ret_params->quick_iterations = 12;
    /* ... but 8, which shuffle no row, while the scene is calm (world_iterations.c): SR1
     * standing meets every contact goal there with no tick-to-tick jump at 0.76x the step of
     * 12; moving or stacked scenes keep 12 and ODE's shuffle (perf/measurements.md). */
    ret_params->quick_iterations_min = 8;
    ret_params->quick_w = 1.2;
    ret_params->gravity[2] = -9.80665;
    ret_params->erp = 0.2;
    /* Joint rows' CFM: at ERP 0.2 and 1 ms a joint stiffness of ERP / (h CFM) = 2e6 N/m and
     * N·m/rad (SR1's hips separate by ~0.3 mm under its weight). It lets 12 quick-step
     * iterations converge on a humanoid standing on two feet: at 1e-10 SR1's ankle forces
     * kept 1.9 % noise, 11 % tick-to-tick jumps and the waist IMU 0.9 m/s²
     * (perf/contact_bench.c). */
    ret_params->cfm = 1e-4;
    ret_params->friction = 1.0;
    ret_params->bounce = 0.0;
    ret_params->bounce_min_vel = 0.01;
    ret_params->contact_erp = 0.2;
    ret_params->contact_cfm = 1e-5;
    /* Measured (perf/contact_bench.c, config/README.md "Contacts and solver health"): SR1
     * (130.8 kg) stands with converged ankle forces at 12 quick-step iterations and sinks
     * 0.56 mm (0.1 mm of it the surface layer). The damping sets the rows' CFM, 1 / (h k + c):
     * 5e3 instead of 1e4 makes it 1.7x larger, so the solver converges in fewer iterations
     * (damping ratio ~0.2 for SR1 on its feet). Dropped from 5 cm, SR1 under its PD hold leaves
     * the floor for 19 ticks against 16 at 1e4 (the legs' spring, not the contact); 3e3 is
     * quieter still but bounces more (21). */
    ret_params->contact_stiffness_n_m = 2e6;
    ret_params->contact_damping_n_s_m = 5e3;
    ret_params->health.max_penetration_m = 0.005;
    ret_params->health.max_joint_error_m = 0.001;
    ret_params->health.max_force_jump_ratio = 0.01;
    ret_params->surface_layer = 1e-4;
    ret_params->max_contacts = 4;
    ret_params->linear_damping = 0.0;
    ret_params->angular_damping = 0.0;
    ret_params->self_collision = false;
    ret_params->contactless = false;
    ret_params->merge_fixed_links = true;
    ret_params->warmup_steps = 10;
    /* Far beyond any bench (a humanoid's joints reach tens of rad/s, a flywheel a few thousand;
     * a fall from 10 m lands at 14 m/s), well inside the range where ODE still steps. */
    ret_params->guard.max_position_m = 1e4;
    ret_params->guard.max_linear_velocity_mps = 1e3;
    ret_params->guard.max_angular_velocity_rad_s = 1e4;
    ret_params->guard.joint_rate_factor = 10;
    /* A hard landing sinks a link millimetres into the default contact for a few steps; one
     * that went through keeps falling, 0.05 m in 0.1 s from rest. */
    ret_params->guard.floor_z_m = NAN;
    ret_params->guard.floor_depth_m = 0.05;
    ret_params->guard.floor_time_s = 0.01;
}
