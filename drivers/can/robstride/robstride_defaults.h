/* Robstride/CyberGear defaults, the one place they are written: the node's hs_rs_config_init()
 * and the config's can.nodes[].robstride defaults (robstride_config.c) both take them from here.
 * Host ID 0 and CAN_TIMEOUT 0 (off): the CyberGear manual's parameter table (CAN_MASTER,
 * CAN_TIMEOUT). Bus voltage and temperature are what hilsim reports without a supply or thermal
 * model: 24 V (the CyberGear's rated supply), 25 °C. Per-model ranges and gains are tables
 * (robstride_models.c, robstride_params.c), not single defaults. */
#ifndef HS_CAN_ROBSTRIDE_DEFAULTS_H
#define HS_CAN_ROBSTRIDE_DEFAULTS_H

#define HS_RS_DEFAULT_MODEL 0 /* enum hs_rs_model: HS_RS_MODEL_CYBERGEAR */
#define HS_RS_DEFAULT_HOST_ID 0
#define HS_RS_DEFAULT_TIMEOUT_S 0.0
#define HS_RS_DEFAULT_VBUS_V 24.0
#define HS_RS_DEFAULT_TEMPERATURE_C 25.0

#endif
