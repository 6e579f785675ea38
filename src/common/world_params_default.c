/* hs_world_params_default lives in hs_common, not in hs_world: the config library fills its
 * physics defaults from it without linking ODE, and there is one list of the values. */
#include <string.h>

#include "hilsim/world.h"

void hs_world_params_default(struct hs_world_params *ret_params)
{
    memset(ret_params, 0, sizeof *ret_params);
    ret_params->step_s = 1e-3;
    ret_params->substeps = 1;
    ret_params->solver = HS_SOLVER_QUICK;
    ret_params->quick_iterations = 20;
    ret_params->gravity[2] = -9.80665;
    ret_params->erp = 0.2;
    ret_params->cfm = 1e-10;
    ret_params->friction = 1.0;
    ret_params->bounce = 0.0;
    ret_params->bounce_min_vel = 0.01;
    ret_params->contact_erp = 0.2;
    ret_params->contact_cfm = 1e-5;
    /* Measured (bench/contact_bench.c, config/README.md "Contact and solver"): SR1 (130.8 kg)
     * stands with converged ankle forces at 20 quick-step iterations and sinks ~0.3 mm. */
    ret_params->contact_stiffness_n_m = 1e6;
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
    ret_params->warmup_steps = 10;
    /* Far beyond any bench (a humanoid's joints reach tens of rad/s, a flywheel a few thousand;
     * a fall from 10 m lands at 14 m/s), well inside the range where ODE still steps. */
    ret_params->guard.max_position_m = 1e4;
    ret_params->guard.max_linear_velocity_mps = 1e3;
    ret_params->guard.max_angular_velocity_rad_s = 1e4;
    ret_params->guard.joint_rate_factor = 10;
}
