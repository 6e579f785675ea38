/* The reply thread's side of a Robstride node (robstride_reply.h). */
#include "robstride_reply.h"

#include <string.h>

#define SEQLOCK_TRIES 1000

static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double value(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

void hs_rs_replier_init(struct hs_rs_replier *rr, const struct hs_rs_node *n)
{
    memset(rr, 0, sizeof *rr);
    rr->cfg = n->cfg;
    rr->regs = n->regs;
    rr->events_seen = n->events;
    atomic_init(&rr->events, n->events);
}

/* RT-safe */
void hs_rs_replier_publish(struct hs_rs_replier *rr, const struct hs_rs_node *n, double q_raw)
{
    const struct hs_rs_measured *m = &n->meas;
    uint32_t q = atomic_load_explicit(&rr->seq, memory_order_relaxed);
    atomic_store_explicit(&rr->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&rr->q_raw, bits(q_raw), memory_order_relaxed);
    atomic_store_explicit(&rr->zero_offset, bits(n->zero_offset_rad), memory_order_relaxed);
    atomic_store_explicit(&rr->dq, bits(m->dq_rad_s), memory_order_relaxed);
    atomic_store_explicit(&rr->tau, bits(m->tau_nm), memory_order_relaxed);
    atomic_store_explicit(&rr->iq, bits(m->iq_a), memory_order_relaxed);
    atomic_store_explicit(&rr->vbus, bits(m->vbus_v), memory_order_relaxed);
    atomic_store_explicit(&rr->temp, bits(m->temp_c), memory_order_relaxed);
    atomic_store_explicit(&rr->events, n->events, memory_order_relaxed);
    atomic_store_explicit(&rr->mode_faults, (uint32_t)n->regs.mode | (uint32_t)n->regs.faults << 8,
                          memory_order_relaxed);
    atomic_store_explicit(&rr->fault_word, n->regs.fault_word, memory_order_relaxed);
    atomic_store_explicit(&rr->zeros_applied, n->zeros_applied, memory_order_relaxed);
    atomic_store_explicit(&rr->seq, q + 2, memory_order_release);
}

struct snap {
    double q_raw, zero_offset;
    struct hs_rs_measured m;
    uint32_t events, mode_faults, fault_word, zeros_applied;
};

/* false until the tick has published once, or while it was preempted mid-write all along */
static bool snapshot(struct hs_rs_replier *rr, struct snap *s)
{
    for (int i = 0; i < SEQLOCK_TRIES; i++) {
        uint32_t a = atomic_load_explicit(&rr->seq, memory_order_acquire);
        if (a & 1)
            continue;
        s->q_raw = value(atomic_load_explicit(&rr->q_raw, memory_order_relaxed));
        s->zero_offset = value(atomic_load_explicit(&rr->zero_offset, memory_order_relaxed));
        s->m.dq_rad_s = value(atomic_load_explicit(&rr->dq, memory_order_relaxed));
        s->m.tau_nm = value(atomic_load_explicit(&rr->tau, memory_order_relaxed));
        s->m.iq_a = value(atomic_load_explicit(&rr->iq, memory_order_relaxed));
        s->m.vbus_v = value(atomic_load_explicit(&rr->vbus, memory_order_relaxed));
        s->m.temp_c = value(atomic_load_explicit(&rr->temp, memory_order_relaxed));
        s->events = atomic_load_explicit(&rr->events, memory_order_relaxed);
        s->mode_faults = atomic_load_explicit(&rr->mode_faults, memory_order_relaxed);
        s->fault_word = atomic_load_explicit(&rr->fault_word, memory_order_relaxed);
        s->zeros_applied = atomic_load_explicit(&rr->zeros_applied, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&rr->seq, memory_order_relaxed) != a)
            continue;
        return a != 0;
    }
    return false;
}

int hs_rs_replier_answer(void *ctx, const struct hs_can_frame *f, struct hs_can_frame *ret_out)
{
    struct hs_rs_replier *rr = ctx;
    if (!(f->flags & HS_CAN_FLAG_EXT) || (f->id & 0xFF) != rr->cfg.motor_id)
        return -1;
    struct snap s;
    bool have = snapshot(rr, &s);
    struct hs_rs_regs *g = &rr->regs;
    if (have && s.events != rr->events_seen) { /* the node went to reset on its own */
        rr->events_seen = s.events;
        g->mode = (enum hs_rs_mode)(s.mode_faults & 0xFF);
        g->faults = (uint8_t)(s.mode_faults >> 8);
        g->fault_word = s.fault_word;
    }
    unsigned fx;
    int type = hs_rs_regs_apply(g, &rr->cfg, f, &fx);
    if (type < 0)
        return -1;
    if (!have)
        return 0;
    if (fx & HS_RS_FX_ZERO)
        rr->zero_q_raw = s.q_raw;
    /* a set-zero the tick has not applied yet: the angle the frame found is already zero */
    s.m.zero_offset_rad = g->zeros != s.zeros_applied ? rr->zero_q_raw : s.zero_offset;
    s.m.q_rad = s.q_raw - s.m.zero_offset_rad;
    hs_rs_build_answer(g, &rr->cfg, &s.m, type, (uint16_t)(f->data[0] | f->data[1] << 8), ret_out);
    return 1;
}
