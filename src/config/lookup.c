/* Name lookups into a loaded config: a per-joint entry or the section defaults. */
#include <string.h>

#include "cfg_can_proto.h"

const struct hs_cfg_actuator *hs_config_actuator(const struct hs_config *config, const char *joint)
{
    for (uint32_t i = 0; i < config->actuators.njoints; i++)
        if (!strcmp(config->actuators.joints[i].joint, joint))
            return &config->actuators.joints[i];
    return &config->actuators.defaults;
}

const struct hs_cfg_encoder *hs_config_encoder(const struct hs_config *config, const char *joint)
{
    for (uint32_t i = 0; i < config->sensors.nencoders; i++)
        if (!strcmp(config->sensors.encoders[i].joint, joint))
            return &config->sensors.encoders[i];
    return &config->sensors.encoder_defaults;
}

const struct hs_cfg_gains *hs_config_gains(const struct hs_config *config, const char *joint)
{
    for (uint32_t i = 0; i < config->controller.njoints; i++)
        if (!strcmp(config->controller.joints[i].joint, joint))
            return &config->controller.joints[i];
    return &config->controller.defaults;
}

const struct hs_cfg_node *hs_config_node_for_joint(const struct hs_config *config,
                                                   const char *joint)
{
    const struct hs_cfg_can *can = &config->can;
    char key[8];
    for (uint32_t i = 0; i < can->nnodes; i++) {
        const char *j;
        for (uint32_t k = 0; (j = hs__cfg_node_joint(config, &can->nodes[i], k, key, sizeof key));
             k++)
            if (!strcmp(j, joint))
                return &can->nodes[i];
    }
    return NULL;
}

enum hs_cfg_command_source hs_config_joint_source(const struct hs_config *config, const char *joint)
{
    enum hs_cfg_command_source s = hs_config_actuator(config, joint)->source;
    if (s != HS_CFG_SOURCE_AUTO)
        return s;
    return hs_config_node_for_joint(config, joint) ? HS_CFG_SOURCE_CAN : HS_CFG_SOURCE_CONTROLLER;
}
