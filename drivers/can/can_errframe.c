/* Controller error frames (CAN_RAW_ERR_FILTER) into the bus state machine and counters. */
#include <linux/can/error.h>

#include "can_internal.h"

void hs__can_errframe_apply(struct hs_can_state *st, const struct hs_can_frame *f)
{
    st->err_frames++;
    enum hs_can_bus_state prev = st->bus;
    enum hs_can_bus_state next = prev;
    if (f->id & CAN_ERR_CRTL && f->len >= 2) {
        uint8_t c = f->data[1];
        if (c & (CAN_ERR_CRTL_RX_PASSIVE | CAN_ERR_CRTL_TX_PASSIVE))
            next = HS_CAN_BUS_ERROR_PASSIVE;
        else if (c & (CAN_ERR_CRTL_RX_WARNING | CAN_ERR_CRTL_TX_WARNING))
            next = HS_CAN_BUS_ERROR_WARNING;
        else if (c & CAN_ERR_CRTL_ACTIVE)
            next = HS_CAN_BUS_ERROR_ACTIVE;
    }
    if (f->id & CAN_ERR_RESTARTED)
        next = HS_CAN_BUS_ERROR_ACTIVE;
    if (f->id & CAN_ERR_BUSOFF)
        next = HS_CAN_BUS_OFF;
#ifdef CAN_ERR_CNT
    if ((f->id & CAN_ERR_CNT) && f->len >= 8) {
        st->tx_err_count = f->data[6];
        st->rx_err_count = f->data[7];
    }
#endif
    if (next == HS_CAN_BUS_OFF && prev != HS_CAN_BUS_OFF)
        st->bus_off_events++;
    st->bus = next;
}
