/* The CAN I/O module's side of the protocol registry, generated from hilsim/can_protocols.h. */
#include <errno.h>

#include "can_protocol.h"

#define DECLARE(name, NAME) extern const struct hs_can_protocol hs_can_##name##_protocol;
HS_CAN_PROTOCOLS(DECLARE)
#undef DECLARE

#define ENTRY(name, NAME) [HS_CFG_PROTO_##NAME] = &hs_can_##name##_protocol,
static const struct hs_can_protocol *const protocols[HS_CFG_CAN_PROTOCOL_MAX] = {
    HS_CAN_PROTOCOLS(ENTRY)};
#undef ENTRY

const struct hs_can_protocol *hs_can_protocol_get(enum hs_cfg_can_protocol p)
{
    return (unsigned)p < HS_CFG_CAN_PROTOCOL_MAX ? protocols[p] : NULL;
}

int hs_can_port_command_heard(const struct hs_can_port *port)
{
    if (port->proto->command_heard)
        return port->proto->command_heard(port);
    return port->node->stats.frames_ok != port->frames_ok_at_poll;
}
