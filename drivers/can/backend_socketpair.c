/* Test backend: a connected AF_UNIX SOCK_SEQPACKET pair carrying can_frame/canfd_frame records,
 * so frame boundaries, lengths and FD semantics match a CAN_RAW socket. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "can_internal.h"

static int sp_open(struct hs_can_bus *bus, const struct hs_can_config *cfg, struct hs_diag *d)
{
    if (cfg->socketpair_fd < 0)
        return hs_diag_set(d, -EBADF, NULL, 0, 0, "can socketpair: no socketpair_fd given");
    struct hs__can_fdio *io = calloc(1, sizeof *io);
    if (!io)
        return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "can socketpair: out of memory");
    int r = hs__can_fdio_init(io, cfg->socketpair_fd, cfg->batch_max, cfg->fd);
    if (r < 0) {
        free(io);
        return hs_diag_set(d, r, NULL, 0, 0, "can socketpair: out of memory");
    }
    int one = 1;
    /* AF_UNIX stamps datagrams too, so tests exercise the timestamp path */
    (void)setsockopt(cfg->socketpair_fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    int fl = fcntl(cfg->socketpair_fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(cfg->socketpair_fd, F_SETFL, fl | O_NONBLOCK);
    bus->priv = io;
    bus->fd = cfg->socketpair_fd;
    bus->state.link_mgmt = HS_CAN_LINK_MGMT_NONE;
    return 0;
}

static int sp_start(struct hs_can_bus *bus)
{
    bus->state.bus = HS_CAN_BUS_ERROR_ACTIVE;
    return 0;
}

static int sp_stop(struct hs_can_bus *bus)
{
    bus->state.bus = HS_CAN_BUS_STOPPED;
    return 0;
}

/* Same acceptance rule as the CAN_RAW_FILTER set by the SocketCAN backend, so the conformance
 * suite sees one behaviour; error frames are not subject to identifier filters. */
static bool accepted(const struct hs_can_config *cfg, const struct hs_can_frame *f)
{
    if (!cfg->n_filters || (f->flags & HS_CAN_FLAG_ERR))
        return true;
    bool ext = f->flags & HS_CAN_FLAG_EXT;
    for (unsigned i = 0; i < cfg->n_filters; i++) {
        const struct hs_can_filter *flt = &cfg->filters[i];
        if (flt->ext == ext && ((f->id ^ flt->id) & flt->mask) == 0)
            return true;
    }
    return false;
}

static int sp_recv(struct hs_can_bus *bus, struct hs_can_frame *frames, unsigned max)
{
    int n = hs__can_fdio_recv(bus->priv, &bus->state, frames, max);
    if (n <= 0 || !bus->cfg.n_filters)
        return n;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (accepted(&bus->cfg, &frames[i]))
            frames[kept++] = frames[i];
        else if (!(frames[i].flags & HS_CAN_FLAG_ERR))
            bus->state.rx_frames--; /* the kernel filter would never have delivered it */
    }
    return kept;
}

static int sp_send(struct hs_can_bus *bus, const struct hs_can_frame *frames, unsigned n)
{
    return hs__can_fdio_send(bus->priv, &bus->state, frames, n);
}

static void sp_close(struct hs_can_bus *bus)
{
    hs__can_fdio_free(bus->priv);
    free(bus->priv);
    if (bus->fd >= 0)
        close(bus->fd);
}

const struct hs_can_backend_ops hs_can_socketpair_ops = {
    .name = "socketpair",
    .open = sp_open,
    .start = sp_start,
    .stop = sp_stop,
    .recv_batch = sp_recv,
    .send_batch = sp_send,
    .close = sp_close,
};

int hs_can_socketpair_open_pair(const struct hs_can_config *cfg, struct hs_can_bus **ret_a,
                                struct hs_can_bus **ret_b, struct hs_diag *d)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return hs_diag_set(d, -errno, NULL, 0, 0, "can socketpair: socketpair failed");
    struct hs_can_config c = *cfg;
    struct hs_can_bus *a = NULL, *b = NULL;
    c.socketpair_fd = sv[0];
    int r = hs_can_bus_open(&hs_can_socketpair_ops, &c, &a, d);
    if (r < 0) {
        close(sv[0]);
        close(sv[1]);
        return r;
    }
    c.socketpair_fd = sv[1];
    r = hs_can_bus_open(&hs_can_socketpair_ops, &c, &b, d);
    if (r < 0) {
        hs_can_bus_close(a);
        close(sv[1]);
        return r;
    }
    *ret_a = a;
    *ret_b = b;
    return 0;
}
