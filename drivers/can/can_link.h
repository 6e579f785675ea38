/* Internal: CAN link inspection and management (libsocketcan). Not RT-safe (netlink). */
#ifndef HS_CAN_LINK_H
#define HS_CAN_LINK_H

#include <stddef.h>

#include "hilsim/can.h"

/* ARPHRD_* of the interface, via /sys/class/net/<if>/type or SIOCGIFHWADDR. */
int hs__can_link_type(const char *iface, int *ret_type);
/* rtnetlink IFLA_INFO_KIND ("can" for controllers with bit timing, "vcan", ...). */
int hs__can_link_kind(const char *iface, char *kind, size_t size);
/* -ENOTSUP for a non-CAN link; else whether the controller can be managed. */
int hs__can_link_probe(const char *iface, enum hs_can_link_mgmt *ret_mgmt, struct hs_diag *d);
/* Applies bitrate / sample point / restart-ms when configured and different. */
int hs__can_link_configure(const char *iface, const struct hs_can_config *cfg, struct hs_diag *d);
int hs__can_link_read(const char *iface, struct hs_can_state *st);
int hs__can_link_restart(const char *iface);

#endif
