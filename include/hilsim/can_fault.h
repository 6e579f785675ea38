/* CAN faults on a bus: a frame filter between the backend and its users that drops,
 * duplicates, corrupts or reorders the frames of a node or an identifier, by probability or by
 * a pattern, in either direction. The scenario stage (src/scenario) switches its rules on and
 * off per tick; without a filter a bus runs the no-op one.
 *
 * Lifecycle: hs_can_fault_filter_create (init only: allocates its scratch) -> add rules (init
 * only) -> hs_can_bus_set_fault_filter(bus, f) (init only) -> per tick set_active (RT-safe, any
 * thread) -> hs_can_bus_set_fault_filter(bus, NULL) before destroy. The filter runs on the
 * thread that calls hs_can_bus_recv / hs_can_bus_send (the tick, or a bus's reply thread): one
 * receiving and one sending thread per bus, as the bus itself requires. */
#ifndef HILSIM_CAN_FAULT_H
#define HILSIM_CAN_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/can.h"

enum hs_can_fault_kind {
    HS_CAN_FAULT_DROP,      /* the frame is lost */
    HS_CAN_FAULT_DUPLICATE, /* the frame arrives twice (when the batch has room) */
    HS_CAN_FAULT_CORRUPT,   /* payload bits flipped (what a CRC would have to catch) */
    HS_CAN_FAULT_REORDER,   /* the frame moves behind the other frames of its batch */
    HS_CAN_FAULT_DELAY,     /* the frame is held for delay_ticks of the filter's tick clock */
    HS_CAN_FAULT_KIND_MAX
};

enum { HS_CAN_FAULT_RX = 1u << 0, HS_CAN_FAULT_TX = 1u << 1 };

#define HS_CAN_FAULT_RULES_MAX 16
#define HS_CAN_FAULT_PATTERN_MAX 64
#define HS_CAN_FAULT_DELAY_MAX 256            /* frames held per direction and filter */
#define HS_CAN_FAULT_DELAY_TICKS_MAX 1000000u /* the longest delay a rule may ask */

struct hs_can_fault_rule {
    uint32_t id, mask;  /* a frame matches when (frame id & mask) == id */
    int data0;          /* >= 0: also data[0] == data0 (MIT replies carry the node id there) */
    unsigned direction; /* HS_CAN_FAULT_RX | HS_CAN_FAULT_TX */
    enum hs_can_fault_kind kind;
    double probability; /* per matching frame, [0, 1] */
    /* '1' acts, '0' lets the frame through; cycled over the matching frames (while active);
     * "" = every frame */
    char pattern[HS_CAN_FAULT_PATTERN_MAX];
    /* HS_CAN_FAULT_DELAY: ticks of the filter's clock (hs_can_fault_filter_set_tick) a frame is
     * held, 1..HS_CAN_FAULT_DELAY_TICKS_MAX. A held frame comes out at the first receive (rx) or
     * send (tx) call of its direction whose clock reached its due tick, after the call's own
     * frames (a received one with rx_time_ns 0: it arrives then); a full queue loses the frame
     * (counted as overflow). Held frames are released on time even after the rule went off. */
    uint32_t delay_ticks;
};

struct hs_can_fault_counts {
    uint64_t matched;  /* frames that matched while the rule was active */
    uint64_t acted;    /* of those, dropped, duplicated, corrupted, moved or delayed */
    uint64_t overflow; /* delay: frames lost because the filter's queue was full */
};

struct hs_can_fault_filter;

/* init only: allocates. seed: the probability draws repeat with the same seed. */
int hs_can_fault_filter_create(uint64_t seed, struct hs_can_fault_filter **ret);
void hs_can_fault_filter_destroy(struct hs_can_fault_filter *f); /* accepts NULL */
/* init only, or while the bus runs from one thread at a time (live control adds the rules of
 * a step bound in a running bench; rules are never removed): -ENOSPC when full, -EINVAL for a
 * bad rule. */
int hs_can_fault_filter_add(struct hs_can_fault_filter *f, const struct hs_can_fault_rule *rule,
                            uint32_t *ret_index);
/* RT-safe, any thread: a rule acts only while active (initially off). */
void hs_can_fault_filter_set_active(struct hs_can_fault_filter *f, uint32_t rule, bool on);
/* RT-safe, any thread: the clock delays count in (the scenario sets its tick once per tick). */
void hs_can_fault_filter_set_tick(struct hs_can_fault_filter *f, int64_t tick);
/* Any thread; exact once the bus's threads have stopped. */
void hs_can_fault_filter_counts(const struct hs_can_fault_filter *f, uint32_t rule,
                                struct hs_can_fault_counts *ret);

/* init only: installs f on bus (NULL: back to no filter). The bus does not own f. */
void hs_can_bus_set_fault_filter(struct hs_can_bus *bus, struct hs_can_fault_filter *f);
/* Any thread: the filter installed on bus, or NULL. */
struct hs_can_fault_filter *hs_can_bus_fault_filter(const struct hs_can_bus *bus);

#endif
