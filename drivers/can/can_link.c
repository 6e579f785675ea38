/* Bus management through libsocketcan, guarded by a link-type check: libsocketcan's start/stop
 * succeed on any interface (and really take it down), so nothing is called unless the link is
 * ARPHRD_CAN, and "no controller data" (vcan) is reported rather than treated as failure. */
#include <errno.h>
#include <libsocketcan.h>
#include <linux/can/netlink.h>
#include <net/if_arp.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "can_link.h"

int hs__can_link_type(const char *iface, int *ret_type)
{
    char path[64];
    snprintf(path, sizeof path, "/sys/class/net/%s/type", iface);
    FILE *f = fopen(path, "re");
    if (f) {
        int t;
        int ok = fscanf(f, "%d", &t) == 1;
        fclose(f);
        if (ok) {
            *ret_type = t;
            return 0;
        }
    }
    /* no sysfs (containers): ask the kernel directly */
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", iface);
    int r = ioctl(s, SIOCGIFHWADDR, &ifr);
    int e = errno;
    close(s);
    if (r < 0)
        return -e;
    *ret_type = ifr.ifr_hwaddr.sa_family;
    return 0;
}

int hs__can_link_probe(const char *iface, enum hs_can_link_mgmt *ret_mgmt, struct hs_diag *d)
{
    int type;
    int r = hs__can_link_type(iface, &type);
    if (r < 0)
        return hs_diag_set(d, r, NULL, 0, 0, "can %s: no such interface", iface);
    if (type != ARPHRD_CAN)
        return hs_diag_set(d, -ENOTSUP, NULL, 0, 0,
                           "can %s: link type %d is not CAN (%d); refusing to touch it", iface,
                           type, ARPHRD_CAN);
    /* vcan/vxcan have no controller: libsocketcan would fail and print, so ask for the kind */
    char kind[32];
    r = hs__can_link_kind(iface, kind, sizeof kind);
    if (r < 0)
        return hs_diag_set(d, r, NULL, 0, 0, "can %s: cannot read the link kind", iface);
    int state;
    *ret_mgmt = (!strcmp(kind, "can") && can_get_state(iface, &state) == 0)
                    ? HS_CAN_LINK_MGMT_OK
                    : HS_CAN_LINK_MGMT_UNSUPPORTED;
    return 0;
}

int hs__can_link_configure(const char *iface, const struct hs_can_config *cfg, struct hs_diag *d)
{
    if (!cfg->bitrate_bps && !cfg->restart_ms)
        return 0;
    struct can_bittiming bt;
    uint32_t restart = 0;
    bool bit_ok = !cfg->bitrate_bps ||
                  (can_get_bittiming(iface, &bt) == 0 && bt.bitrate == cfg->bitrate_bps &&
                   (!cfg->sample_point_permille || bt.sample_point == cfg->sample_point_permille));
    bool rst_ok = !cfg->restart_ms ||
                  (can_get_restart_ms(iface, &restart) == 0 && restart == cfg->restart_ms);
    int state;
    /* A controller fresh from its driver is down (STOPPED): managing it means bringing it up. */
    bool down = can_get_state(iface, &state) == 0 && state == CAN_STATE_STOPPED;
    if (bit_ok && rst_ok && !down)
        return 0; /* already as configured: no privileges needed, no link bounce */
    if (can_do_stop(iface) != 0)
        return hs_diag_set(d, -EPERM, NULL, 0, 0,
                           "can %s: cannot stop the link to set bit timing (needs CAP_NET_ADMIN)",
                           iface);
    int r = 0;
    if (!bit_ok) {
        if (cfg->sample_point_permille)
            r = can_set_bitrate_samplepoint(iface, cfg->bitrate_bps, cfg->sample_point_permille);
        else
            r = can_set_bitrate(iface, cfg->bitrate_bps);
        if (r != 0)
            r = hs_diag_set(d, -EINVAL, NULL, 0, 0,
                            "can %s: the driver refused bitrate %u bps (sample point %u/1000)",
                            iface, cfg->bitrate_bps, cfg->sample_point_permille);
    }
    if (r == 0 && !rst_ok && can_set_restart_ms(iface, cfg->restart_ms) != 0)
        r = hs_diag_set(d, -EINVAL, NULL, 0, 0, "can %s: the driver refused restart-ms %u", iface,
                        cfg->restart_ms);
    if (can_do_start(iface) != 0 && r == 0)
        r = hs_diag_set(d, -EIO, NULL, 0, 0, "can %s: cannot bring the link back up", iface);
    return r;
}

static enum hs_can_bus_state map_state(int s)
{
    switch (s) {
    case CAN_STATE_ERROR_ACTIVE:
        return HS_CAN_BUS_ERROR_ACTIVE;
    case CAN_STATE_ERROR_WARNING:
        return HS_CAN_BUS_ERROR_WARNING;
    case CAN_STATE_ERROR_PASSIVE:
        return HS_CAN_BUS_ERROR_PASSIVE;
    case CAN_STATE_BUS_OFF:
        return HS_CAN_BUS_OFF;
    case CAN_STATE_STOPPED:
        return HS_CAN_BUS_STOPPED;
    default:
        return HS_CAN_BUS_UNKNOWN;
    }
}

int hs__can_link_read(const char *iface, struct hs_can_state *st)
{
    int s;
    if (can_get_state(iface, &s) != 0)
        return -EIO;
    enum hs_can_bus_state next = map_state(s);
    if (next == HS_CAN_BUS_OFF && st->bus != HS_CAN_BUS_OFF)
        st->bus_off_events++;
    st->bus = next;
    struct can_berr_counter bc;
    if (can_get_berr_counter(iface, &bc) == 0) {
        st->tx_err_count = bc.txerr;
        st->rx_err_count = bc.rxerr;
    }
    return 0;
}

int hs__can_link_restart(const char *iface)
{
    return can_do_restart(iface) == 0 ? 0 : -EIO;
}
