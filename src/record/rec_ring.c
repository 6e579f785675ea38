/* The two rings between the tick and the writer thread (see rec_internal.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rec_internal.h"

static uint64_t pow2_at_least(uint32_t n)
{
    uint64_t c = 2;
    while (c < n)
        c <<= 1;
    return c;
}

int hs__rec_items_init(struct hs__rec_items_ring *r, uint32_t capacity)
{
    memset(r, 0, sizeof *r);
    if (capacity == 0 || capacity > (1u << 24))
        return -EINVAL;
    uint64_t cap = pow2_at_least(capacity);
    r->cells = calloc(cap, sizeof *r->cells); /* init only; calloc's zeroes touch every page */
    if (!r->cells)
        return -ENOMEM;
    memset(r->cells, 0, cap * sizeof *r->cells);
    for (uint64_t i = 0; i < cap; i++)
        atomic_init(&r->cells[i].seq, i);
    r->mask = cap - 1;
    return 0;
}

void hs__rec_items_free(struct hs__rec_items_ring *r)
{
    if (!r)
        return;
    free(r->cells);
    r->cells = NULL;
}

int hs__rec_items_push(struct hs__rec_items_ring *r, const struct hs__rec_item *it)
{
    uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    /* Bounded: each failed compare-and-swap means another producer claimed a cell, and there
     * are at most a handful of producer threads. */
    for (;;) {
        struct hs__rec_cell *c = &r->cells[pos & r->mask];
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                c->item = *it;
                atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
                atomic_fetch_add_explicit(&r->pushed, 1, memory_order_relaxed);
                return 0;
            }
        } else if (dif < 0) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return -ENOBUFS;
        } else {
            pos = atomic_load_explicit(&r->head, memory_order_relaxed);
        }
    }
}

int hs__rec_items_pop(struct hs__rec_items_ring *r, struct hs__rec_item *ret)
{
    uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
    struct hs__rec_cell *c = &r->cells[pos & r->mask];
    uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    if (seq != pos + 1)
        return -EAGAIN; /* empty, or a producer has claimed the cell and not yet filled it */
    *ret = c->item;
    atomic_store_explicit(&c->seq, pos + r->mask + 1, memory_order_release);
    atomic_store_explicit(&r->tail, pos + 1, memory_order_relaxed);
    return 0;
}

int hs__rec_states_init(struct hs__rec_state_ring *r, uint32_t capacity, uint32_t stride)
{
    memset(r, 0, sizeof *r);
    if (capacity == 0 || capacity > (1u << 24) || stride == 0)
        return -EINVAL;
    uint64_t cap = pow2_at_least(capacity);
    r->buf = malloc(cap * stride); /* init only */
    if (!r->buf)
        return -ENOMEM;
    memset(r->buf, 0, cap * stride); /* resident before the tick writes */
    r->stride = stride;
    r->mask = (uint32_t)(cap - 1);
    return 0;
}

void hs__rec_states_free(struct hs__rec_state_ring *r)
{
    if (!r)
        return;
    free(r->buf);
    r->buf = NULL;
}

void *hs__rec_states_reserve(struct hs__rec_state_ring *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail > r->mask) {
        atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
        return NULL;
    }
    return r->buf + (size_t)(head & r->mask) * r->stride;
}

void hs__rec_states_commit(struct hs__rec_state_ring *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

const void *hs__rec_states_peek(struct hs__rec_state_ring *r)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (tail == head)
        return NULL;
    return r->buf + (size_t)(tail & r->mask) * r->stride;
}

void hs__rec_states_release(struct hs__rec_state_ring *r)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
}
