/* CiA 402 drive defaults, the one place they are written: hs_cia402_config_init() and the
 * config's can.nodes[].cia402 defaults (cia402_config.c) both take them from here, and
 * tests/can/test_can_protocols.c checks that they agree.
 *
 * The loops are a cascade, as a servo drive's firmware has it: the position loop turns the
 * position error into a velocity reference (gain position_kp / velocity_kp, 1/s), the velocity
 * loop is a PI with its proportional part evaluated by the plant (stiff, every physics step)
 * and its integral kept by the drive at its cycle, and the current loop is the plant's torque
 * limit. Position loop gain Kp / Kv = 20 /s, integral time Kv / Ki = 0.05 s. Routh's condition
 * for the cascade on a rigid load J, Kv^2 (Kp + Ki) > J Ki Kp, holds with these gains up to
 * J = 3 kg*m^2 (config/arm2-cia402.yaml's SHOULDER, about 1 kg*m^2, holds its arm with them); the
 * plant runs the proportional part as an implicit row (src/plant/actuator.c), so light links take
 * the velocity gain too. */
#ifndef HS_CAN_CIA402_DEFAULTS_H
#define HS_CAN_CIA402_DEFAULTS_H

#define HS_CIA402_DEFAULT_COUNTS_PER_REV 131072u /* 17-bit encoder */
#define HS_CIA402_DEFAULT_RATED_TORQUE_NM 1.0
#define HS_CIA402_DEFAULT_RATED_CURRENT_A 5.0
#define HS_CIA402_DEFAULT_TORQUE_CONSTANT_NM_A 0.2 /* when the joint names none */
#define HS_CIA402_DEFAULT_MAX_TORQUE_PERMILLE 3000
#define HS_CIA402_DEFAULT_POSITION_KP_NM_RAD 600.0
#define HS_CIA402_DEFAULT_VELOCITY_KD_NM_S_RAD 30.0
#define HS_CIA402_DEFAULT_VELOCITY_KI_NM_RAD 600.0
#define HS_CIA402_DEFAULT_HEARTBEAT_MS 0u
#define HS_CIA402_DEFAULT_BOOT_TIME_MS 0u /* reset node -> boot-up at the next cycle */
#define HS_CIA402_DEFAULT_FOLLOWING_ERROR_WINDOW_COUNTS (HS_CIA402_DEFAULT_COUNTS_PER_REV / 4)
#define HS_CIA402_DEFAULT_FOLLOWING_ERROR_TIMEOUT_MS 100u

#endif
