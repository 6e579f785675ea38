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

#endif
