/* The config side of the CAN protocol registry, generated from hilsim/can_protocols.h. */
#include <string.h>

#include "cfg_can_proto.h"

#define DECLARE(name, NAME) extern const struct hs__can_proto_cfg hs__can_##name##_cfg;
HS_CAN_PROTOCOLS(DECLARE)
#undef DECLARE

#define ENTRY(name, NAME) [HS_CFG_PROTO_##NAME] = &hs__can_##name##_cfg,
const struct hs__can_proto_cfg *const hs__can_proto_cfgs[HS_CFG_CAN_PROTOCOL_MAX] = {
    HS_CAN_PROTOCOLS(ENTRY)};
#undef ENTRY

const char *hs__cfg_node_joint(const struct hs_config *cfg, const struct hs_cfg_node *n, uint32_t k,
                               char *key, size_t key_size)
{
    const struct hs__can_proto_cfg *p = hs__can_proto_cfgs[n->protocol];
    if (p->single_joint) {
        if (k)
            return NULL;
        hs__cfg_pathf(key, key_size, "can.nodes[%u].joint", (unsigned)(n - cfg->can.nodes));
        return n->joint;
    }
    return p->joint_at ? p->joint_at(cfg, n, k, key, key_size) : NULL;
}

unsigned hs_config_can_node_replies(const struct hs_cfg_node *n,
                                    struct hs_cfg_can_claim out[HS_CFG_CAN_CLAIMS_MAX])
{
    if ((unsigned)n->protocol >= HS_CFG_CAN_PROTOCOL_MAX ||
        !hs__can_proto_cfgs[n->protocol]->replies)
        return 0;
    return hs__can_proto_cfgs[n->protocol]->replies(n, out);
}

unsigned hs_config_can_node_claims(const struct hs_cfg_node *n,
                                   struct hs_cfg_can_claim out[HS_CFG_CAN_CLAIMS_MAX])
{
    if ((unsigned)n->protocol >= HS_CFG_CAN_PROTOCOL_MAX)
        return 0;
    return hs__can_proto_cfgs[n->protocol]->claims(n, out);
}
