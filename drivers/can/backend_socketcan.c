/* SocketCAN CAN_RAW backend: kernel filters, CAN FD, drop counting, kernel receive stamps,
 * error frames, batched non-blocking I/O (can_fdio.c), bus management (can_link.c). */
#include <errno.h>
#include <linux/can/error.h>
#include <linux/can/raw.h>
#include <linux/net_tstamp.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "can_internal.h"
#include "can_link.h"

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

struct sc_priv {
    struct hs__can_fdio io;
    int64_t bus_off_since_ns; /* when the manual restart policy first saw bus-off; 0 if not */
};

static int set_filters(int s, const struct hs_can_config *cfg)
{
    if (!cfg->n_filters)
        return 0; /* kernel default: everything */
    struct can_filter f[HS_CAN_FILTER_MAX];
    for (unsigned i = 0; i < cfg->n_filters; i++) {
        /* EFF in the mask so 11- and 29-bit frames never alias; RTR left out so remote
         * requests for a filtered identifier still arrive */
        f[i].can_id = cfg->filters[i].id | (cfg->filters[i].ext ? CAN_EFF_FLAG : 0);
        f[i].can_mask = cfg->filters[i].mask | CAN_EFF_FLAG;
    }
    if (setsockopt(s, SOL_CAN_RAW, CAN_RAW_FILTER, f, cfg->n_filters * sizeof f[0]) < 0)
        return -errno;
    return 0;
}

static int set_timestamps(int s)
{
    int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
                SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE;
    if (setsockopt(s, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) == 0)
        return 0;
    int one = 1;
    return setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) == 0 ? 0 : -errno;
}

static int sc_open(struct hs_can_bus *bus, const struct hs_can_config *cfg, struct hs_diag *d)
{
    const char *ifn = cfg->iface;
    if (!ifn[0])
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "can: no interface name configured");
    int s = socket(PF_CAN, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, CAN_RAW);
    if (s < 0)
        return hs_diag_set(d, -errno, NULL, 0, 0, "can %s: cannot open CAN_RAW socket (%s)", ifn,
                           errno == EAFNOSUPPORT ? "kernel has no SocketCAN" : "socket failed");
    int r;
    struct sc_priv *p = NULL;
    enum hs_can_link_mgmt mgmt;
    r = hs__can_link_probe(ifn, &mgmt, d);
    if (r < 0)
        goto fail;
    if (mgmt == HS_CAN_LINK_MGMT_OK) {
        r = hs__can_link_configure(ifn, cfg, d);
        if (r < 0)
            goto fail;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifn);
    if (ioctl(s, SIOCGIFINDEX, &ifr) < 0) {
        r = hs_diag_set(d, -errno, NULL, 0, 0, "can %s: no such interface", ifn);
        goto fail;
    }
    int ifindex = ifr.ifr_ifindex;
    if (cfg->fd) {
        int on = 1;
        if (ioctl(s, SIOCGIFMTU, &ifr) < 0 || ifr.ifr_mtu != CANFD_MTU) {
            r = hs_diag_set(d, -EOPNOTSUPP, NULL, 0, 0,
                            "can %s: CAN FD requested but the interface MTU is not %d", ifn,
                            (int)CANFD_MTU);
            goto fail;
        }
        if (setsockopt(s, SOL_CAN_RAW, CAN_RAW_FD_FRAMES, &on, sizeof on) < 0) {
            r = hs_diag_set(d, -errno, NULL, 0, 0, "can %s: CAN_RAW_FD_FRAMES refused", ifn);
            goto fail;
        }
    }
    r = set_filters(s, cfg);
    if (r < 0) {
        hs_diag_set(d, r, NULL, 0, 0, "can %s: CAN_RAW_FILTER refused", ifn);
        goto fail;
    }
    can_err_mask_t em = cfg->recv_error_frames ? CAN_ERR_MASK : 0;
    int lb = cfg->loopback ? 1 : 0, one = 1;
    if (setsockopt(s, SOL_CAN_RAW, CAN_RAW_ERR_FILTER, &em, sizeof em) < 0 ||
        setsockopt(s, SOL_CAN_RAW, CAN_RAW_LOOPBACK, &lb, sizeof lb) < 0 ||
        setsockopt(s, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one) < 0) {
        r = hs_diag_set(d, -errno, NULL, 0, 0, "can %s: socket option refused", ifn);
        goto fail;
    }
    r = set_timestamps(s);
    if (r < 0) {
        hs_diag_set(d, r, NULL, 0, 0, "can %s: receive timestamps refused", ifn);
        goto fail;
    }
    struct sockaddr_can addr = {.can_family = AF_CAN, .can_ifindex = ifindex};
    if (bind(s, (struct sockaddr *)&addr, sizeof addr) < 0) {
        r = hs_diag_set(d, -errno, NULL, 0, 0, "can %s: bind failed", ifn);
        goto fail;
    }
    p = calloc(1, sizeof *p);
    if (!p) {
        r = hs_diag_set(d, -ENOMEM, NULL, 0, 0, "can %s: out of memory", ifn);
        goto fail;
    }
    r = hs__can_fdio_init(&p->io, s, cfg->batch_max, cfg->fd);
    if (r < 0) {
        hs_diag_set(d, r, NULL, 0, 0, "can %s: out of memory", ifn);
        goto fail;
    }
    bus->priv = p;
    bus->fd = s;
    bus->state.link_mgmt = mgmt;
    if (mgmt == HS_CAN_LINK_MGMT_OK)
        (void)hs__can_link_read(ifn, &bus->state);
    return 0;
fail:
    free(p);
    close(s);
    return r;
}

static int sc_start(struct hs_can_bus *bus)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", bus->cfg.iface);
    if (ioctl(bus->fd, SIOCGIFFLAGS, &ifr) < 0)
        return -errno;
    if (!(ifr.ifr_flags & IFF_UP))
        return -ENETDOWN;
    if (bus->state.link_mgmt != HS_CAN_LINK_MGMT_OK && bus->state.bus == HS_CAN_BUS_UNKNOWN)
        bus->state.bus = HS_CAN_BUS_ERROR_ACTIVE; /* vcan: no controller, never in error */
    return 0;
}

static int sc_stop(struct hs_can_bus *bus)
{
    return 0; /* the link stays up for other users; we only stop reading */
}

static int sc_recv(struct hs_can_bus *bus, struct hs_can_frame *frames, unsigned max)
{
    struct sc_priv *p = bus->priv;
    return hs__can_fdio_recv(&p->io, &bus->state, frames, max);
}

static int sc_send(struct hs_can_bus *bus, const struct hs_can_frame *frames, unsigned n)
{
    struct sc_priv *p = bus->priv;
    return hs__can_fdio_send(&p->io, &bus->state, frames, n);
}

static int sc_restart(struct hs_can_bus *bus)
{
    if (bus->state.link_mgmt != HS_CAN_LINK_MGMT_OK)
        return -EOPNOTSUPP;
    int r = hs__can_link_restart(bus->cfg.iface);
    if (r == 0)
        bus->link.restarts++;
    return r;
}

static int sc_state(struct hs_can_bus *bus, int64_t now_ns)
{
    struct sc_priv *p = bus->priv;
    if (bus->state.link_mgmt != HS_CAN_LINK_MGMT_OK)
        return -EOPNOTSUPP; /* vcan: nothing to read; error frames still update the state */
    int r = hs__can_link_read(bus->cfg.iface, &bus->link);
    if (r < 0)
        return r;
    bus->link.link_mgmt = bus->state.link_mgmt; /* set once at open, read-only since */
    if (bus->link.bus != HS_CAN_BUS_OFF) {
        p->bus_off_since_ns = 0;
        return 0;
    }
    if (bus->cfg.restart_policy != HS_CAN_RESTART_MANUAL)
        return 0;
    if (!p->bus_off_since_ns)
        p->bus_off_since_ns = now_ns;
    if (now_ns - p->bus_off_since_ns >= bus->cfg.restart_delay_ns) {
        p->bus_off_since_ns = 0;
        return sc_restart(bus);
    }
    return 0;
}

static void sc_close(struct hs_can_bus *bus)
{
    struct sc_priv *p = bus->priv;
    if (p) {
        hs__can_fdio_free(&p->io);
        free(p);
    }
    if (bus->fd >= 0)
        close(bus->fd);
}

const struct hs_can_backend_ops hs_can_socketcan_ops = {
    .name = "socketcan",
    .open = sc_open,
    .start = sc_start,
    .stop = sc_stop,
    .recv_batch = sc_recv,
    .send_batch = sc_send,
    .state = sc_state,
    .restart = sc_restart,
    .close = sc_close,
};
