/* Internal to hs_config: what a CAN protocol contributes to the config. Each protocol's
 * src/config/can/<name>_config.c defines `const struct hs__can_proto_cfg hs__can_<name>_cfg`
 * (compiled into hs_config); can_protocols.c gathers them from the registry
 * (hilsim/can_protocols.h). The generic node keys (name, bus, protocol, id, joint) and the rules
 * common to every protocol (one section, ID clashes on a bus, one driver per joint) are the
 * config's; everything particular to a protocol is here. */
#ifndef HS_CONFIG_CAN_PROTO_H
#define HS_CONFIG_CAN_PROTO_H

#include "cfg_internal.h"

struct hs__can_proto_cfg {
    /* The node's section can.nodes[].<name>: its keys (at least one) and struct size, which
     * must fit HS_CFG_PROTO_SECTION_MAX (asserted where the ops are defined). */
    const struct hs__cfg_table *section;
    size_t section_size;
    bool section_required;
    /* Fills the documented defaults into the section (all of it: the slot arrives zeroed). */
    void (*defaults)(void *section);
    /* Optional: frees what parsing allocated in the section (PATH keys). */
    void (*release)(void *section);
    /* true: the node drives one joint: `id` (id_min..id_max) and `joint` are required. false:
     * both are refused and joints()/claims come from the section. */
    bool single_joint;
    uint32_t id_min, id_max;
    /* Optional: checks after the node's keys parsed (path "can.nodes[i]"). */
    int (*check)(struct hs__ctx *c, struct hs_cfg_node *n, yaml_node_t *node, const char *path);
    /* Optional: whole-config checks for node i (tick multiples, cross references). */
    int (*validate)(struct hs__ctx *c, uint32_t i);
    /* The IDs the node owns on its bus, known from the config alone (kernel filters and the
     * clash check). Returns how many (<= HS_CFG_CAN_CLAIMS_MAX); 0: none known here. */
    unsigned (*claims)(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out);
    /* Optional: the IDs the node's own frames (replies, cyclic, reports) go out on, from the
     * config alone, for CAN faults on what it says. NULL: not known here. */
    unsigned (*replies)(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out);
    /* Multi-joint protocols: the k-th joint the node drives (NULL past the end), and the path
     * of the key that names it for messages. */
    const char *(*joint_at)(const struct hs_config *cfg, const struct hs_cfg_node *n, uint32_t k,
                            char *key, size_t key_size);
};

extern const struct hs__can_proto_cfg *const hs__can_proto_cfgs[HS_CFG_CAN_PROTOCOL_MAX];

/* validate.c: an error at the node a display path such as "can.nodes[3].bus" names. */
int hs__cfg_err_field(struct hs__ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* validate.c: is period_s a whole number (>= 1) of ticks of tick_s? */
bool hs__cfg_tick_multiple(double period_s, double tick_s);

/* The k-th joint node n drives (either kind of protocol), NULL past the end. */
const char *hs__cfg_node_joint(const struct hs_config *cfg, const struct hs_cfg_node *n, uint32_t k,
                               char *key, size_t key_size);

#endif
