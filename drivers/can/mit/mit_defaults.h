/* MIT-mode defaults, the one place they are written: the node's hs_mit_config_init() and the
 * config's can.nodes[].mit defaults (mit_config.c) both take them from here.
 * Ranges: CubeMars AK80-6 manual (v1.0.8) "MIT mode" table; the torque constant is the AK80-6's
 * at the output shaft. The command timeout: the mini-cheetah firmware's CAN_TIMEOUT cuts the
 * output when commands stop; 0.1 s, ten missed 100 Hz commands, is hilsim's chosen default. */
#ifndef HS_CAN_MIT_DEFAULTS_H
#define HS_CAN_MIT_DEFAULTS_H

#define HS_MIT_DEFAULT_P_MIN (-12.5) /* rad */
#define HS_MIT_DEFAULT_P_MAX 12.5
#define HS_MIT_DEFAULT_V_MIN (-50.0) /* rad/s */
#define HS_MIT_DEFAULT_V_MAX 50.0
#define HS_MIT_DEFAULT_KP_MAX 500.0  /* N·m/rad */
#define HS_MIT_DEFAULT_KD_MAX 5.0    /* N·m·s/rad */
#define HS_MIT_DEFAULT_T_MIN (-18.0) /* N·m */
#define HS_MIT_DEFAULT_T_MAX 18.0
#define HS_MIT_DEFAULT_I_MIN (-40.0) /* A, the reply's current range */
#define HS_MIT_DEFAULT_I_MAX 40.0
#define HS_MIT_DEFAULT_REPLY_CURRENT 1 /* the reply's 12-bit field carries current */
#define HS_MIT_DEFAULT_TIMEOUT_S 0.1
#define HS_MIT_DEFAULT_KT_NM_A 0.091
#define HS_MIT_DEFAULT_TEMPERATURE_C 25.0 /* the AK reply's temperature without a thermal model */

#endif
