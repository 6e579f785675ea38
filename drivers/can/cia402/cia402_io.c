/* CiA 402 answers from the reply thread (see cia402_io.h). */
#include "cia402/cia402_io.h"

#include <string.h>

#include "cia402/cia402_internal.h"

#define SEQLOCK_TRIES 1000

void hs_cia402_io_init(struct hs_cia402_io *io, struct hs_cia402_node *node)
{
    memset(io, 0, sizeof *io);
    io->shadow = *node;
    io->shadow.quiet = false; /* the shadow is the one that answers */
    io->shadow.txq_n = 0;
    hs__cia402_sdo_reset(&io->shadow);
    node->quiet = true;
    hs_cia402_io_publish(io, node);
}

void hs_cia402_io_publish(struct hs_cia402_io *io, const struct hs_cia402_node *node)
{
    uint64_t w[HS_CIA402_IO_WORDS] = {0};
    memcpy(w, &node->od, sizeof node->od);
    uint32_t q = atomic_load_explicit(&io->seq, memory_order_relaxed);
    atomic_store_explicit(&io->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (size_t i = 0; i < HS_CIA402_IO_WORDS; i++)
        atomic_store_explicit(&io->od[i], w[i], memory_order_relaxed);
    atomic_store_explicit(&io->nmt, node->nmt, memory_order_relaxed);
    atomic_store_explicit(&io->sdo_taken, node->sdo_requests, memory_order_relaxed);
    atomic_store_explicit(&io->seq, q + 2, memory_order_release);
}

/* The snapshot into the shadow, with the acknowledged downloads the tick has not taken yet on
 * top. false when no consistent snapshot could be read (the tick preempted mid-write). */
static bool refresh(struct hs_cia402_io *io)
{
    uint64_t w[HS_CIA402_IO_WORDS];
    uint32_t nmt = 0, taken = 0;
    bool ok = false;
    for (int t = 0; t < SEQLOCK_TRIES && !ok; t++) {
        uint32_t a = atomic_load_explicit(&io->seq, memory_order_acquire);
        if (a & 1)
            continue;
        for (size_t i = 0; i < HS_CIA402_IO_WORDS; i++)
            w[i] = atomic_load_explicit(&io->od[i], memory_order_relaxed);
        nmt = atomic_load_explicit(&io->nmt, memory_order_relaxed);
        taken = atomic_load_explicit(&io->sdo_taken, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        ok = atomic_load_explicit(&io->seq, memory_order_relaxed) == a;
    }
    if (!ok)
        return false;
    struct hs_cia402_node *s = &io->shadow;
    memcpy(&s->od, w, sizeof s->od);
    s->nmt = (uint8_t)nmt;
    unsigned k = 0;
    for (unsigned i = 0; i < io->nlog; i++)
        if ((int32_t)(io->log[i].at - taken) > 0) /* not applied by the tick yet */
            io->log[k++] = io->log[i];
    io->nlog = k;
    for (unsigned i = 0; i < io->nlog; i++)
        hs__cia402_od_set(&s->od, &s->entries[io->log[i].entry], io->log[i].raw);
    /* the PDOs' run-time state (mapping lookups, SYNC counters) follows their parameters */
    uint8_t sig[sizeof io->pdo_sig];
    size_t c = sizeof s->od.rpdo, m = sizeof s->od.rpdo_map;
    memcpy(sig, s->od.rpdo, c);
    memcpy(sig + c, s->od.rpdo_map, m);
    memcpy(sig + c + m, s->od.tpdo, c);
    memcpy(sig + 2 * c + m, s->od.tpdo_map, m);
    if (memcmp(sig, io->pdo_sig, sizeof sig)) {
        memcpy(io->pdo_sig, sig, sizeof sig);
        hs__cia402_pdo_reset(s);
    }
    return true;
}

/* The downloads a request made: every writable entry whose value it changed. */
static void log_writes(struct hs_cia402_io *io)
{
    const struct hs_cia402_node *s = &io->shadow;
    for (unsigned i = 0; i < s->n_entries; i++) {
        const struct hs_cia402_entry *e = &s->entries[i];
        if (!(e->access & HS_CIA402_WO) || e->access == HS_CIA402_CONST || e->type == 9)
            continue;
        uint32_t v = hs__cia402_od_get(&s->od, e);
        if (v == hs__cia402_od_get(&io->scratch, e))
            continue;
        if (io->nlog == HS_CIA402_IO_LOG) /* the tick is far behind: forget the oldest */
            memmove(io->log, io->log + 1, sizeof io->log[0] * --io->nlog);
        io->log[io->nlog].at = io->sdo_seen;
        io->log[io->nlog].entry = (int16_t)i;
        io->log[io->nlog].raw = v;
        io->nlog++;
    }
}

static int take_out(struct hs_cia402_io *io, struct hs_can_frame *out, unsigned max)
{
    struct hs_cia402_node *s = &io->shadow;
    unsigned k = s->txq_n < max ? s->txq_n : max;
    memcpy(out, s->txq, k * sizeof *out);
    s->txq_n = 0;
    return (int)k;
}

int hs_cia402_io_answer(struct hs_cia402_io *io, const struct hs_can_frame *f, int64_t now_ns,
                        struct hs_can_frame *out, unsigned max)
{
    struct hs_cia402_node *s = &io->shadow;
    if (f->flags & (HS_CAN_FLAG_EXT | HS_CAN_FLAG_ERR | HS_CAN_FLAG_FD) || f->len > 8)
        return 0;
    bool rtr = f->flags & HS_CAN_FLAG_RTR;
    uint8_t id = s->cfg.node_id;
    if (f->id == 0x600u + id && !rtr && f->len == 8) {
        /* counted as the node counts it (cia402_node.c), answered or not */
        io->sdo_seen++;
        if (!refresh(io))
            return 0;
        if (s->nmt != HS_CIA402_NMT_PRE_OPERATIONAL && s->nmt != HS_CIA402_NMT_OPERATIONAL)
            return 0;
        io->scratch = s->od;
        hs__cia402_sdo_frame(s, f);
        log_writes(io);
        return take_out(io, out, max);
    }
    /* only a frame that may be a SYNC (0 or 1 byte) or a remote request costs a snapshot:
     * not the other nodes' commands */
    if ((!rtr && f->len > 1) || !refresh(io))
        return 0;
    if (!rtr && f->id == (s->od.cob_id_sync & 0x7FF)) {
        if (s->nmt != HS_CIA402_NMT_OPERATIONAL)
            return 0;
        hs__cia402_sync(s, now_ns);
        return take_out(io, out, max);
    }
    if (rtr && hs__cia402_tpdo_rtr(s, f, now_ns))
        return take_out(io, out, max);
    return 0;
}
