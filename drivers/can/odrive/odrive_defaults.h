/* ODrive defaults, the one place they are written: hs_odrive_config_init() and the config's
 * can.nodes[].odrive defaults (odrive_config.c) both take them from here. They are firmware
 * 0.5.x's: heartbeat 100 ms, encoder estimates 10 ms, watchdog off, the controller's gains and
 * velocity limit (MotorControl/controller.hpp, axis.hpp). */
#ifndef HS_CAN_ODRIVE_DEFAULTS_H
#define HS_CAN_ODRIVE_DEFAULTS_H

#define HS_ODRIVE_DEFAULT_HEARTBEAT_S 0.1
#define HS_ODRIVE_DEFAULT_ENCODER_S 0.01
#define HS_ODRIVE_DEFAULT_WATCHDOG_S 0.0
#define HS_ODRIVE_DEFAULT_POS_GAIN 20.0                   /* (turn/s)/turn */
#define HS_ODRIVE_DEFAULT_VEL_GAIN (1.0 / 6.0)            /* N·m/(turn/s) */
#define HS_ODRIVE_DEFAULT_VEL_INTEGRATOR_GAIN (2.0 / 6.0) /* N·m/(turn/s·s) */
#define HS_ODRIVE_DEFAULT_VEL_LIMIT 2.0                   /* turn/s */
#define HS_ODRIVE_DEFAULT_VEL_LIMIT_TOLERANCE 1.2
#define HS_ODRIVE_DEFAULT_ENABLE_VEL_LIMIT 1
#define HS_ODRIVE_DEFAULT_ENABLE_TORQUE_MODE_VEL_LIMIT 1

#endif
