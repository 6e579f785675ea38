/* moteus defaults, the one place they are written: hs_mt_config_init() and the config's
 * can.nodes[].moteus defaults (moteus_config.c) both take them from here. The trajectory limits,
 * the maximum velocity and the watchdog-free default are the firmware's (fw/bldc_servo_structs.h:
 * servo.default_velocity_limit nan, servo.default_accel_limit 50 rev/s², servo.max_velocity 500
 * rev/s); the gains and the torque limit are hilsim's (copy the board's with
 * `moteus_tool --dump-config`). */
#ifndef HS_CAN_MOTEUS_DEFAULTS_H
#define HS_CAN_MOTEUS_DEFAULTS_H

#include <math.h>

#define HS_MT_DEFAULT_KP_NM_REV 4.0            /* servo.pid_position.kp */
#define HS_MT_DEFAULT_KD_NM_S_REV 0.1          /* servo.pid_position.kd */
#define HS_MT_DEFAULT_MAX_TORQUE_NM 10.0       /* from servo.max_current_A */
#define HS_MT_DEFAULT_TORQUE_CONSTANT_NM_A 0.1 /* when the joint has no Kt */
#define HS_MT_DEFAULT_TIMEOUT_S 0.0            /* servo.default_timeout_s; 0: no watchdog */
#define HS_MT_DEFAULT_VELOCITY_LIMIT_REV_S NAN /* servo.default_velocity_limit: none */
#define HS_MT_DEFAULT_ACCEL_LIMIT_REV_S2 50.0  /* servo.default_accel_limit */
#define HS_MT_DEFAULT_MAX_VELOCITY_REV_S 500.0 /* servo.max_velocity */
#define HS_MT_DEFAULT_VOLTAGE_V 24.0
#define HS_MT_DEFAULT_TEMPERATURE_C 30.0

#endif
