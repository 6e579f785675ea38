/* The per-tick record the loop hands to the tracer (one pointer keeps the tracepoint within
 * LTTng's argument limit). Plain data, no LTTng dependency. */
#ifndef HS_RT_TRACE_EVENT_H
#define HS_RT_TRACE_EVENT_H

#include <stdint.h>

struct hs_trace_tick {
    uint64_t tick;      /* period number */
    int64_t planned_ns; /* CLOCK_MONOTONIC */
    int64_t actual_ns;  /* wake time */
    int64_t wake_latency_ns;
    int64_t inputs_ns;
    int64_t actuation_ns;
    int64_t physics_ns;
    int64_t sensors_ns;
    int64_t outputs_ns;
    int64_t tick_ns;
    uint8_t overrun;
};

/* The sync clock after a tick (hilsim:sync): what the discipline measured and did. */
struct hs_trace_sync {
    uint64_t tick;
    int64_t phase_error_ns; /* this tick's, or the last one measured */
    int64_t adjust_ns;      /* added to every later deadline */
    int64_t drift_ppb;      /* the event clock against the nominal period */
    uint32_t events;        /* seen this tick */
    uint8_t state;          /* enum hs_sync_state: 0 free, 1 acquiring, 2 locked, 3 holdover */
};

#endif
