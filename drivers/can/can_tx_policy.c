/* Non-blocking send with the configured policy for frames the kernel refuses. */
#include <errno.h>
#include <string.h>

#include "can_internal.h"

static void keep_newest(struct hs_can_bus *bus, const struct hs_can_frame *f)
{
    uint8_t ext = f->flags & HS_CAN_FLAG_EXT;
    for (unsigned i = 0; i < bus->n_backlog; i++) {
        struct hs_can_frame *b = &bus->backlog[i];
        if (b->id == f->id && (b->flags & HS_CAN_FLAG_EXT) == ext) {
            *b = *f;
            bus->state.tx_replaced++;
            return;
        }
    }
    if (bus->n_backlog < bus->cfg.tx_backlog_max)
        bus->backlog[bus->n_backlog++] = *f;
    else
        bus->state.tx_dropped++;
}

static void refuse(struct hs_can_bus *bus, const struct hs_can_frame *frames, unsigned n)
{
    if (bus->cfg.tx_policy == HS_CAN_TX_KEEP_NEWEST)
        for (unsigned i = 0; i < n; i++)
            keep_newest(bus, &frames[i]);
    else
        bus->state.tx_dropped += n;
}

/* Backlog first so a kept frame never overtakes a newer one with the same identifier. */
static int flush_backlog(struct hs_can_bus *bus)
{
    if (!bus->n_backlog)
        return 0;
    int r = bus->ops->send_batch(bus, bus->backlog, bus->n_backlog);
    if (r < 0) {
        bus->state.tx_errors += bus->n_backlog;
        bus->n_backlog = 0;
        return r;
    }
    if (r > 0)
        bus->tap->frames(bus->tap_ctx, true, bus->backlog, (unsigned)r);
    memmove(bus->backlog, bus->backlog + r, (bus->n_backlog - (unsigned)r) * sizeof *bus->backlog);
    bus->n_backlog -= (unsigned)r;
    return r;
}

int hs_can_bus_send(struct hs_can_bus *bus, const struct hs_can_frame *frames, unsigned n)
{
    if (!bus->running)
        return -ENETDOWN;
    if (n > bus->cfg.batch_max)
        n = bus->cfg.batch_max;
    for (unsigned i = 0; i < n; i++)
        if (!hs__can_frame_valid(&frames[i], bus->cfg.fd))
            return -EINVAL;
    int sent = flush_backlog(bus);
    if (sent < 0)
        return sent;
    if (bus->n_backlog) {
        refuse(bus, frames, n);
        return sent;
    }
    /* CAN faults: the batch as the wire gets it; what the fault took counts as sent */
    unsigned wire_n = n;
    const struct hs_can_frame *wire =
        bus->fault_tx(bus->fault_ctx, frames, &wire_n, bus->cfg.batch_max);
    int r = wire_n ? bus->ops->send_batch(bus, wire, wire_n) : 0;
    if (r < 0) {
        bus->state.tx_errors += n;
        return r;
    }
    if (r > 0) /* the recording keeps what went on the wire */
        bus->tap->frames(bus->tap_ctx, true, wire, (unsigned)r);
    if (wire != frames)
        r = (unsigned)r >= wire_n ? (int)n : (r < (int)n ? r : (int)n);
    refuse(bus, frames + r, n - (unsigned)r);
    return sent + r;
}
