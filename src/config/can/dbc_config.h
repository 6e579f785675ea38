/* The DBC node's config section, can.nodes[].dbc (documented in drivers/can/dbc/README.md):
 * the DBC file, an ID offset, and slices of the config's binding and tx pools
 * (hs_cfg_can.bindings, .tx). */
#ifndef HS_CAN_DBC_CONFIG_H
#define HS_CAN_DBC_CONFIG_H

#include "hilsim/config.h"

struct hs_cfg_dbc {
    char *file;                            /* absolute path (owned by the config) */
    uint32_t id_offset;                    /* added to every message ID, 0 .. 0x1fffffff */
    uint32_t binding_first, binding_count; /* slice of hs_cfg_can.bindings */
    uint32_t tx_first, tx_count;           /* slice of hs_cfg_can.tx */
};

_Static_assert(sizeof(struct hs_cfg_dbc) <= HS_CFG_PROTO_SECTION_MAX, "dbc section too large");

static inline const struct hs_cfg_dbc *hs_cfg_dbc(const struct hs_cfg_node *n)
{
    return (const struct hs_cfg_dbc *)(const void *)n->proto[HS_CFG_PROTO_DBC].bytes;
}

#endif
