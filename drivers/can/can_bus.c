/* Bus object: config validation, lifecycle, and the wrappers around the backend ops. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "can_internal.h"

void hs_can_config_init(struct hs_can_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->batch_max = 32;
    cfg->tx_policy = HS_CAN_TX_DROP;
    cfg->restart_policy = HS_CAN_RESTART_KERNEL;
    cfg->loopback = true;
    cfg->socketpair_fd = -1;
}

static int validate(const struct hs_can_config *cfg, struct hs_diag *d)
{
    if (cfg->batch_max < 1 || cfg->batch_max > HS_CAN_BATCH_MAX)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "can: batch_max %u out of range 1..%u",
                           cfg->batch_max, HS_CAN_BATCH_MAX);
    if (cfg->n_filters > HS_CAN_FILTER_MAX)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "can: %u filters, at most %u", cfg->n_filters,
                           HS_CAN_FILTER_MAX);
    for (unsigned i = 0; i < cfg->n_filters; i++) {
        uint32_t lim = cfg->filters[i].ext ? HS_CAN_EFF_MASK : HS_CAN_SFF_MASK;
        if ((cfg->filters[i].id | cfg->filters[i].mask) & ~lim)
            return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                               "can: filter %u id/mask 0x%X/0x%X exceeds %s identifier", i,
                               cfg->filters[i].id, cfg->filters[i].mask,
                               cfg->filters[i].ext ? "29-bit" : "11-bit");
    }
    if ((unsigned)cfg->tx_policy >= HS_CAN_TX_POLICY_MAX)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "can: unknown tx_policy %d", cfg->tx_policy);
    if (cfg->tx_backlog_max > HS_CAN_BATCH_MAX)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "can: tx_backlog_max %u above %u",
                           cfg->tx_backlog_max, HS_CAN_BATCH_MAX);
    if ((unsigned)cfg->restart_policy >= HS_CAN_RESTART_POLICY_MAX)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "can: unknown restart_policy %d",
                           cfg->restart_policy);
    if (cfg->sample_point_permille && (!cfg->bitrate_bps || cfg->sample_point_permille >= 1000))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "can: sample_point_permille %u needs bitrate_bps and must be < 1000",
                           cfg->sample_point_permille);
    if (cfg->restart_delay_ns < 0)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "can: restart_delay_ns is negative");
    if (memchr(cfg->iface, 0, sizeof cfg->iface) == NULL)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "can: interface name not terminated");
    return 0;
}

/* ---- recording tap: one call in recv, one in send (can_tx_policy.c) ---- */
static void tap_none(void *bus_ctx, bool tx, const struct hs_can_frame *frames, unsigned n)
{
    (void)bus_ctx, (void)tx, (void)frames, (void)n;
}
static const struct hs_can_tap_ops tap_noop = {.frames = tap_none};

static void tap_attach(struct hs_can_bus *bus)
{
    const struct hs_can_tap_ops *ops = bus->cfg.tap;
    void *c = ops ? ops->attach(bus->cfg.tap_ctx, &bus->cfg) : NULL;
    bus->tap = c ? ops : &tap_noop;
    bus->tap_ctx = c;
}

int hs_can_bus_open(const struct hs_can_backend_ops *ops, const struct hs_can_config *cfg,
                    struct hs_can_bus **ret_bus, struct hs_diag *d)
{
    int r = validate(cfg, d);
    if (r < 0)
        return r;
    struct hs_can_bus *bus = calloc(1, sizeof *bus);
    if (!bus)
        return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "can: out of memory");
    bus->ops = ops;
    bus->cfg = *cfg;
    if (!bus->cfg.tx_backlog_max)
        bus->cfg.tx_backlog_max = bus->cfg.batch_max;
    bus->fd = -1;
    bus->state.bus = HS_CAN_BUS_UNKNOWN;
    tap_attach(bus);
    if (cfg->tx_policy == HS_CAN_TX_KEEP_NEWEST) {
        bus->backlog = calloc(bus->cfg.tx_backlog_max, sizeof *bus->backlog);
        if (!bus->backlog) {
            free(bus);
            return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "can: out of memory");
        }
    }
    r = ops->open(bus, &bus->cfg, d);
    if (r < 0) {
        free(bus->backlog);
        free(bus);
        return r;
    }
    hs__can_fault_bus_opened(bus);
    *ret_bus = bus;
    return 0;
}

void hs_can_bus_close(struct hs_can_bus *bus)
{
    if (!bus)
        return;
    bus->ops->close(bus);
    free(bus->backlog);
    free(bus);
}

int hs_can_bus_start(struct hs_can_bus *bus)
{
    if (!bus->ops->start)
        return -ENOSYS;
    int r = bus->ops->start(bus);
    if (r == 0)
        bus->running = true;
    return r;
}

int hs_can_bus_stop(struct hs_can_bus *bus)
{
    if (!bus->ops->stop)
        return -ENOSYS;
    bus->running = false;
    return bus->ops->stop(bus);
}

int hs__can_bus_recv_untapped(struct hs_can_bus *bus, struct hs_can_frame *frames, unsigned max)
{
    if (!bus->running)
        return -ENETDOWN;
    if (max > bus->cfg.batch_max)
        max = bus->cfg.batch_max;
    return bus->fault_rx(bus->fault_ctx, frames, bus->ops->recv_batch(bus, frames, max), max);
}

int hs_can_bus_recv(struct hs_can_bus *bus, struct hs_can_frame *frames, unsigned max)
{
    int r = hs__can_bus_recv_untapped(bus, frames, max);
    if (r > 0)
        bus->tap->frames(bus->tap_ctx, false, frames, (unsigned)r);
    return r;
}

int hs_can_bus_state(const struct hs_can_bus *bus, struct hs_can_state *ret_state)
{
    *ret_state = bus->state;
    return 0;
}

int hs_can_bus_link_poll(struct hs_can_bus *bus, int64_t now_ns)
{
    return bus->ops->state ? bus->ops->state(bus, now_ns) : -ENOSYS;
}

int hs_can_bus_restart(struct hs_can_bus *bus)
{
    return bus->ops->restart ? bus->ops->restart(bus) : -ENOSYS;
}

int hs_can_bus_link_view(const struct hs_can_bus *bus, struct hs_can_state *ret_state)
{
    *ret_state = bus->link;
    return 0;
}

unsigned hs_can_bus_backlog(const struct hs_can_bus *bus)
{
    return bus->n_backlog;
}

int hs_can_bus_fd(const struct hs_can_bus *bus)
{
    return bus->fd;
}

const char *hs_can_bus_state_name(enum hs_can_bus_state s)
{
    static const char *const names[HS_CAN_BUS_STATE_MAX] = {
        [HS_CAN_BUS_ERROR_ACTIVE] = "error-active",
        [HS_CAN_BUS_ERROR_WARNING] = "error-warning",
        [HS_CAN_BUS_ERROR_PASSIVE] = "error-passive",
        [HS_CAN_BUS_OFF] = "bus-off",
        [HS_CAN_BUS_STOPPED] = "stopped",
        [HS_CAN_BUS_UNKNOWN] = "unknown",
    };
    return (unsigned)s < HS_CAN_BUS_STATE_MAX ? names[s] : "invalid";
}
