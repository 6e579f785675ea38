/* A node's library config from its can.nodes[] entry: what the bench (cia402_bind.c) and
 * `hilsim can eds` both build the drive from, so the EDS is the dictionary the bench runs. */
#include "cia402_config.h"
#include "cia402_from_cfg.h"

void hs_cia402_config_from_cfg(struct hs_cia402_config *cc, const struct hs_cfg_node *cn)
{
    const struct hs_cfg_cia402 *s = hs_cfg_cia402(cn);
    hs_cia402_config_init(cc, (uint8_t)cn->id);
    cc->counts_per_rev = s->counts_per_rev;
    cc->rated_torque_nm = s->rated_torque_nm;
    cc->rated_current_a = s->rated_current_a;
    if (s->torque_constant_nm_a == s->torque_constant_nm_a) /* NAN: the joint's, by the bench */
        cc->torque_constant_nm_a = s->torque_constant_nm_a;
    cc->max_torque_permille = s->max_torque_permille;
    cc->position_kp_nm_rad = s->position_kp_nm_rad;
    cc->velocity_kd_nm_s_rad = s->velocity_kd_nm_s_rad;
    cc->velocity_ki_nm_rad = s->velocity_ki_nm_rad;
    cc->heartbeat_ms = (uint16_t)s->heartbeat_ms;
    cc->boot_time_ms = (uint16_t)s->boot_time_ms;
    cc->following_error_window_counts = s->following_error_window_counts;
    cc->following_error_timeout_ms = (uint16_t)s->following_error_timeout_ms;
}
