/* NMT slave, heartbeat producer and consumer, EMCY producer and the frame queue.
 *
 * CiA 301 7.2.8: NMT command [cs, node] on COB-ID 0 (node 0: every node): 0x01 start, 0x02
 * stop, 0x80 enter pre-operational, 0x81 reset node, 0x82 reset communication. After a reset
 * (and at power-on) the node sends its boot-up message (heartbeat COB-ID, one byte 0x00) and is
 * pre-operational. Stopped: only NMT and heartbeat; pre-operational: SDO, SYNC, EMCY, no PDO;
 * operational: everything.
 * Heartbeat (7.2.8.3.2.2): 0x700 + node, one byte state, every 0x1017 ms (0: off). Consumer
 * (0x1016 sub n = node << 16 | time_ms): monitoring starts with the first heartbeat heard from
 * that node; silence longer than time_ms is a heartbeat event: EMCY 0x8130 and the CiA 402
 * abort connection option (0x6007).
 * EMCY (7.2.7): 8 bytes: error code u16, error register (0x1001) u8, 5 manufacturer bytes
 * (zero here); inhibit time 0x1015 in 100 us; each error enters the pre-defined error field
 * 0x1003 (newest at sub 1). Not sent while stopped. */
#include <string.h>

#include "cia402/cia402_internal.h"

void hs__cia402_tx(struct hs_cia402_node *n, uint32_t id, const uint8_t *data, unsigned len)
{
    if (n->txq_n == HS_CIA402_TXQ) {
        n->base.stats.tx_overflow++;
        return;
    }
    struct hs_can_frame *f = &n->txq[n->txq_n++];
    memset(f, 0, sizeof *f);
    f->id = id & HS_CAN_SFF_MASK;
    f->len = (uint8_t)len;
    memcpy(f->data, data, len);
}

void hs__cia402_reset_comm(struct hs_cia402_node *n)
{
    struct hs_cia402_od *od = &n->od, *def = &n->od_def;
    /* the communication profile area 0x1000-0x1FFF goes back to its defaults */
    size_t end = offsetof(struct hs_cia402_od, abort_connection_option);
    uint8_t err = od->error_register, errn = od->err_count;
    uint32_t hist[HS_CIA402_ERR_HISTORY];
    memcpy(hist, od->err_history, sizeof hist);
    memcpy(od, def, end);
    /* the error state is the device's, not communication parameters */
    od->error_register = err, od->err_count = errn;
    memcpy(od->err_history, hist, sizeof hist);
    hs__cia402_sdo_reset(n);
    hs__cia402_pdo_reset(n);
    for (unsigned i = 0; i < HS_CIA402_HB_CONSUMERS; i++)
        n->hb_rx_state[i] = 0;
    n->emcy_q_n = 0;
    n->nmt = HS_CIA402_NMT_INITIALISING;
    n->boot_pending = true;
    n->boot_due_ns = 0;
}

void hs__cia402_nmt_command(struct hs_cia402_node *n, uint8_t cs, int64_t now_ns)
{
    switch (cs) {
    case 0x01:
        if (n->nmt != HS_CIA402_NMT_INITIALISING)
            n->nmt = HS_CIA402_NMT_OPERATIONAL;
        break;
    case 0x02:
        if (n->nmt != HS_CIA402_NMT_INITIALISING) {
            if (n->nmt != HS_CIA402_NMT_STOPPED)
                hs__cia402_drive_connection_lost(n);
            n->nmt = HS_CIA402_NMT_STOPPED;
        }
        break;
    case 0x80:
        if (n->nmt != HS_CIA402_NMT_INITIALISING)
            n->nmt = HS_CIA402_NMT_PRE_OPERATIONAL;
        break;
    case 0x81: /* reset node: the application too */
        n->od = n->od_def;
        hs__cia402_drive_reset(n);
        hs__cia402_reset_comm(n);
        /* a drive reboots: silent (initialising) until its boot-up message */
        if (n->cfg.boot_time_ms)
            n->boot_due_ns = now_ns + (int64_t)n->cfg.boot_time_ms * 1000000;
        break;
    case 0x82:
        hs__cia402_reset_comm(n);
        break;
    default:
        n->base.stats.frames_unknown++;
        return;
    }
    n->base.stats.frames_ok++;
}

void hs__cia402_heartbeat_rx(struct hs_cia402_node *n, uint8_t node_id, uint8_t state,
                             int64_t now_ns)
{
    for (unsigned i = 0; i < HS_CIA402_HB_CONSUMERS; i++) {
        uint32_t c = n->od.hb_consumer[i];
        if ((uint8_t)(c >> 16) != node_id || !(c & 0xFFFF))
            continue;
        n->hb_rx_ns[i] = now_ns;
        /* a boot-up message restarts monitoring; a lost producer heard again is back */
        n->hb_rx_state[i] = state == HS_CIA402_NMT_INITIALISING ? 0 : 1;
    }
}

static void push_history(struct hs_cia402_od *od, uint16_t code)
{
    memmove(od->err_history + 1, od->err_history,
            sizeof od->err_history[0] * (HS_CIA402_ERR_HISTORY - 1));
    od->err_history[0] = code;
    if (od->err_count < HS_CIA402_ERR_HISTORY)
        od->err_count++;
}

static void queue_emcy(struct hs_cia402_node *n, uint16_t code)
{
    if (n->emcy_q_n == sizeof n->emcy_q / sizeof n->emcy_q[0]) {
        n->base.stats.tx_overflow++;
        return;
    }
    n->emcy_q_reg[n->emcy_q_n] = n->od.error_register;
    n->emcy_q[n->emcy_q_n++] = code;
}

void hs__cia402_emcy(struct hs_cia402_node *n, uint16_t code, uint8_t reg_bits)
{
    n->od.error_register |= (uint8_t)(reg_bits | HS_CIA402_ERRREG_GENERIC);
    push_history(&n->od, code);
    queue_emcy(n, code);
}

void hs__cia402_emcy_clear(struct hs_cia402_node *n)
{
    if (!n->od.error_register)
        return;
    n->od.error_register = 0;
    queue_emcy(n, HS_CIA402_EMCY_RESET);
}

static void send_emcy(struct hs_cia402_node *n, int64_t now_ns)
{
    if (!n->emcy_q_n)
        return;
    int64_t inhibit = (int64_t)n->od.emcy_inhibit * 100000;
    if (n->emcy_last_ns && now_ns - n->emcy_last_ns < inhibit)
        return;
    uint8_t d[8] = {0};
    put_le(d, n->emcy_q[0], 2);
    d[2] = n->emcy_q_reg[0];
    if (!(n->od.cob_id_emcy & 0x80000000u) && n->nmt != HS_CIA402_NMT_STOPPED)
        hs__cia402_tx(n, n->od.cob_id_emcy & 0x7FF, d, 8);
    n->emcy_last_ns = now_ns;
    n->emcy_q_n--;
    memmove(n->emcy_q, n->emcy_q + 1, sizeof n->emcy_q[0] * n->emcy_q_n);
    memmove(n->emcy_q_reg, n->emcy_q_reg + 1, n->emcy_q_n);
}

void hs__cia402_comm_poll(struct hs_cia402_node *n, int64_t now_ns)
{
    uint32_t hb_id = 0x700u + n->cfg.node_id;
    if (n->boot_pending && now_ns >= n->boot_due_ns) {
        uint8_t boot = 0;
        hs__cia402_tx(n, hb_id, &boot, 1);
        n->boot_pending = false;
        n->nmt = HS_CIA402_NMT_PRE_OPERATIONAL;
        n->hb_last_tx_ns = now_ns;
    }
    for (unsigned i = 0; i < HS_CIA402_HB_CONSUMERS; i++) {
        uint32_t c = n->od.hb_consumer[i];
        int64_t t = (int64_t)(c & 0xFFFF) * 1000000;
        if (n->hb_rx_state[i] != 1 || !t || (uint8_t)(c >> 16) == 0)
            continue;
        if (now_ns - n->hb_rx_ns[i] > t) {
            n->hb_rx_state[i] = 2;
            n->base.stats.timeouts++;
            hs__cia402_emcy(n, HS_CIA402_EMCY_HEARTBEAT, HS_CIA402_ERRREG_COMM);
            hs__cia402_drive_connection_lost(n);
        }
    }
    int64_t period = (int64_t)n->od.hb_producer_ms * 1000000;
    if (period && now_ns - n->hb_last_tx_ns >= period) {
        uint8_t s = n->nmt;
        hs__cia402_tx(n, hb_id, &s, 1);
        n->hb_last_tx_ns = now_ns;
    }
    send_emcy(n, now_ns);
}
