/* The CAN fault filter (include/hilsim/can_fault.h) and the registry of open buses the
 * scenario binds faults with. RT-safe per frame: bounded loops over the batch, at most
 * HS_CAN_FAULT_RULES_MAX rules and HS_CAN_FAULT_DELAY_MAX held frames, preallocated scratch.
 * Each direction has its own scratch and queue: the receiving and the sending thread of a bus
 * may differ (a reply thread receives while the tick sends). */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "can_internal.h"
#include "hilsim/can_fault.h"

struct rule {
    struct hs_can_fault_rule r;
    uint32_t pattern_len;
    atomic_bool active;
    uint64_t pattern_pos[2]; /* per direction: the threads never share one */
    uint64_t rng[2];
    _Atomic uint64_t matched, acted, overflow;
};

struct held {
    struct hs_can_frame fr;
    int64_t due; /* the filter tick it comes out at */
};

/* Frames a delay holds, in arrival order (due ticks differ when rules' delays do). */
struct delay_queue {
    struct held q[HS_CAN_FAULT_DELAY_MAX];
    uint32_t n;
};

struct hs_can_fault_filter {
    struct rule rules[HS_CAN_FAULT_RULES_MAX];
    /* published with release after the rule is written, so a rule can be added while the bus
     * runs (live control); rules are never removed */
    _Atomic uint32_t nrules;
    _Atomic int64_t tick;
    /* tx: the filtered copy of a batch (duplicates can double it); moved: frames that go to
     * the end of their batch, per direction */
    struct hs_can_frame tx[2 * HS_CAN_BATCH_MAX];
    struct hs_can_frame moved[2][HS_CAN_BATCH_MAX];
    struct delay_queue held[2];
};

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

int hs_can_fault_filter_create(uint64_t seed, struct hs_can_fault_filter **ret)
{
    struct hs_can_fault_filter *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    for (uint32_t i = 0; i < HS_CAN_FAULT_RULES_MAX; i++)
        for (int d = 0; d < 2; d++)
            f->rules[i].rng[d] = (seed + 1) * 0x9e3779b97f4a7c15ull ^ (i * 2u + (unsigned)d + 1);
    *ret = f;
    return 0;
}

void hs_can_fault_filter_destroy(struct hs_can_fault_filter *f)
{
    free(f);
}

int hs_can_fault_filter_add(struct hs_can_fault_filter *f, const struct hs_can_fault_rule *rule,
                            uint32_t *ret_index)
{
    uint32_t n = atomic_load_explicit(&f->nrules, memory_order_relaxed);
    if (n >= HS_CAN_FAULT_RULES_MAX)
        return -ENOSPC;
    if (rule->kind == HS_CAN_FAULT_DELAY &&
        (rule->delay_ticks < 1 || rule->delay_ticks > HS_CAN_FAULT_DELAY_TICKS_MAX))
        return -EINVAL;
    if ((unsigned)rule->kind >= HS_CAN_FAULT_KIND_MAX || !(rule->probability >= 0) ||
        rule->probability > 1 || !(rule->direction & (HS_CAN_FAULT_RX | HS_CAN_FAULT_TX)) ||
        !memchr(rule->pattern, 0, sizeof rule->pattern))
        return -EINVAL;
    for (const char *p = rule->pattern; *p; p++)
        if (*p != '0' && *p != '1')
            return -EINVAL;
    struct rule *r = &f->rules[n];
    r->r = *rule;
    r->pattern_len = (uint32_t)strlen(rule->pattern);
    atomic_init(&r->active, false);
    *ret_index = n;
    atomic_store_explicit(&f->nrules, n + 1, memory_order_release);
    return 0;
}

void hs_can_fault_filter_set_active(struct hs_can_fault_filter *f, uint32_t rule, bool on)
{
    atomic_store_explicit(&f->rules[rule].active, on, memory_order_release);
}

void hs_can_fault_filter_set_tick(struct hs_can_fault_filter *f, int64_t tick)
{
    atomic_store_explicit(&f->tick, tick, memory_order_release);
}

void hs_can_fault_filter_counts(const struct hs_can_fault_filter *f, uint32_t rule,
                                struct hs_can_fault_counts *ret)
{
    ret->matched = atomic_load(&f->rules[rule].matched);
    ret->acted = atomic_load(&f->rules[rule].acted);
    ret->overflow = atomic_load(&f->rules[rule].overflow);
}

static void hold(struct hs_can_fault_filter *f, struct rule *r, const struct hs_can_frame *fr,
                 int dir)
{
    struct delay_queue *d = &f->held[dir];
    if (d->n >= HS_CAN_FAULT_DELAY_MAX) {
        atomic_fetch_add_explicit(&r->overflow, 1, memory_order_relaxed);
        return;
    }
    int64_t now = atomic_load_explicit(&f->tick, memory_order_acquire);
    d->q[d->n++] = (struct held){*fr, now + (int64_t)r->r.delay_ticks};
}

/* Appends the held frames that are due to out[*n, max), in arrival order; the rest stay. */
static void release(struct hs_can_fault_filter *f, int dir, struct hs_can_frame *out, unsigned *n,
                    unsigned max)
{
    struct delay_queue *d = &f->held[dir];
    if (!d->n)
        return;
    int64_t now = atomic_load_explicit(&f->tick, memory_order_acquire);
    uint32_t keep = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        if (d->q[i].due <= now && *n < max) {
            out[*n] = d->q[i].fr;
            if (dir == 0)
                out[*n].rx_time_ns = 0; /* it arrives now, not when the wire carried it */
            (*n)++;
        } else {
            d->q[keep++] = d->q[i];
        }
    }
    d->n = keep;
}

/* The first active rule for this frame and direction that decides to act on it, or NULL. */
static struct rule *decide(struct hs_can_fault_filter *f, const struct hs_can_frame *fr, int dir)
{
    uint32_t n = atomic_load_explicit(&f->nrules, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct rule *r = &f->rules[i];
        if (!(r->r.direction & (1u << dir)) ||
            !atomic_load_explicit(&r->active, memory_order_acquire))
            continue;
        if ((fr->id & r->r.mask) != r->r.id ||
            (r->r.data0 >= 0 && (fr->len < 1 || fr->data[0] != (uint8_t)r->r.data0)))
            continue;
        atomic_fetch_add_explicit(&r->matched, 1, memory_order_relaxed);
        bool act = true;
        if (r->pattern_len)
            act = r->r.pattern[r->pattern_pos[dir]++ % r->pattern_len] == '1';
        if (act && r->r.probability < 1)
            act = (double)(next(&r->rng[dir]) >> 11) * 0x1.0p-53 < r->r.probability;
        if (!act)
            continue;
        atomic_fetch_add_explicit(&r->acted, 1, memory_order_relaxed);
        return r;
    }
    return NULL;
}

static void corrupt(struct rule *r, struct hs_can_frame *fr, int dir)
{
    uint64_t bits = next(&r->rng[dir]) | 1; /* never a no-op */
    for (unsigned k = 0; k < fr->len; k++)
        fr->data[k] ^= (uint8_t)(bits >> (8 * (k % 8)));
}

/* Filters frames[0, n) in place; capacity max. Returns the new count. */
static int filter_rx(void *ctx, struct hs_can_frame *frames, int n, unsigned max)
{
    struct hs_can_fault_filter *f = ctx;
    if (n < 0)
        return n; /* an error: held frames wait for the next good receive */
    int out = 0, nmoved = 0;
    for (int i = 0; i < n; i++) {
        struct hs_can_frame fr = frames[i];
        struct rule *r = decide(f, &fr, 0);
        if (!r) {
            frames[out++] = fr;
            continue;
        }
        switch (r->r.kind) {
        case HS_CAN_FAULT_DROP:
            break;
        case HS_CAN_FAULT_CORRUPT:
            corrupt(r, &fr, 0);
            frames[out++] = fr;
            break;
        case HS_CAN_FAULT_REORDER:
            f->moved[0][nmoved++] = fr;
            break;
        case HS_CAN_FAULT_DUPLICATE:
            frames[out++] = fr;
            /* the copy goes after the batch's frames, where there is room; else it is lost */
            if ((unsigned)(n + nmoved) < max)
                f->moved[0][nmoved++] = fr;
            break;
        case HS_CAN_FAULT_DELAY:
            hold(f, r, &fr, 0);
            break;
        default:
            frames[out++] = fr;
        }
    }
    for (int k = 0; k < nmoved && (unsigned)out < max; k++)
        frames[out++] = f->moved[0][k];
    unsigned total = (unsigned)out;
    release(f, 0, frames, &total, max);
    return (int)total;
}

static const struct hs_can_frame *filter_tx(void *ctx, const struct hs_can_frame *frames,
                                            unsigned *n, unsigned max)
{
    struct hs_can_fault_filter *f = ctx;
    unsigned out = 0, nmoved = 0;
    for (unsigned i = 0; i < *n; i++) {
        struct hs_can_frame fr = frames[i];
        struct rule *r = decide(f, &fr, 1);
        if (!r) {
            f->tx[out++] = fr;
            continue;
        }
        switch (r->r.kind) {
        case HS_CAN_FAULT_DROP:
            break;
        case HS_CAN_FAULT_CORRUPT:
            corrupt(r, &fr, 1);
            f->tx[out++] = fr;
            break;
        case HS_CAN_FAULT_DUPLICATE:
            f->tx[out++] = fr;
            f->tx[out++] = fr;
            break;
        case HS_CAN_FAULT_REORDER:
            f->moved[1][nmoved++] = fr;
            break;
        case HS_CAN_FAULT_DELAY:
            hold(f, r, &fr, 1);
            break;
        default:
            f->tx[out++] = fr;
        }
    }
    for (unsigned k = 0; k < nmoved; k++)
        f->tx[out++] = f->moved[1][k];
    /* due frames go out behind this call's own, as far as one send batch takes them */
    release(f, 1, f->tx, &out, max);
    *n = out;
    return f->tx;
}

static int no_rx(void *ctx, struct hs_can_frame *frames, int n, unsigned max)
{
    (void)ctx, (void)frames, (void)max;
    return n;
}

static const struct hs_can_frame *no_tx(void *ctx, const struct hs_can_frame *frames, unsigned *n,
                                        unsigned max)
{
    (void)ctx, (void)n, (void)max;
    return frames;
}

/* ---- the bus side ---- */
void hs__can_fault_bus_opened(struct hs_can_bus *bus)
{
    bus->fault_rx = no_rx;
    bus->fault_tx = no_tx;
    bus->fault_ctx = NULL;
}

struct hs_can_fault_filter *hs_can_bus_fault_filter(const struct hs_can_bus *bus)
{
    return bus->fault_ctx;
}

void hs_can_bus_set_fault_filter(struct hs_can_bus *bus, struct hs_can_fault_filter *f)
{
    bus->fault_rx = f ? filter_rx : no_rx;
    bus->fault_tx = f ? filter_tx : no_tx;
    bus->fault_ctx = f;
}
