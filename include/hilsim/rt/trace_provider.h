/* LTTng-UST tracepoint provider "hilsim". Only compiled when HS_HAVE_LTTNG; code uses the
 * macros of hilsim/rt/trace.h instead of including this directly. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER hilsim

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "hilsim/rt/trace_provider.h"

#if !defined(HS_RT_TRACE_PROVIDER_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define HS_RT_TRACE_PROVIDER_H

#include <lttng/tracepoint.h>

#include "hilsim/rt/trace_event.h"

/* clang-format off */
LTTNG_UST_TRACEPOINT_EVENT(hilsim, tick,
    LTTNG_UST_TP_ARGS(const struct hs_trace_tick *, t),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, tick, t->tick)
        lttng_ust_field_integer(int64_t, planned_ns, t->planned_ns)
        lttng_ust_field_integer(int64_t, actual_ns, t->actual_ns)
        lttng_ust_field_integer(int64_t, wake_latency_ns, t->wake_latency_ns)
        lttng_ust_field_integer(int64_t, inputs_ns, t->inputs_ns)
        lttng_ust_field_integer(int64_t, actuation_ns, t->actuation_ns)
        lttng_ust_field_integer(int64_t, physics_ns, t->physics_ns)
        lttng_ust_field_integer(int64_t, sensors_ns, t->sensors_ns)
        lttng_ust_field_integer(int64_t, outputs_ns, t->outputs_ns)
        lttng_ust_field_integer(int64_t, tick_ns, t->tick_ns)
        lttng_ust_field_integer(uint8_t, overrun, t->overrun)))

/* A tick that ended after its next deadline; missed = deadlines passed meanwhile. */
LTTNG_UST_TRACEPOINT_EVENT(hilsim, overrun,
    LTTNG_UST_TP_ARGS(uint64_t, tick, int64_t, tick_ns, int64_t, missed),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, tick, tick)
        lttng_ust_field_integer(int64_t, tick_ns, tick_ns)
        lttng_ust_field_integer(int64_t, missed, missed)))

/* An overrun policy action: action is an enum hs_rt_log_kind (skip, safe hold, stop). */
LTTNG_UST_TRACEPOINT_EVENT(hilsim, policy_action,
    LTTNG_UST_TP_ARGS(uint64_t, tick, int, action, int64_t, value),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, tick, tick)
        lttng_ust_field_integer(int, action, action)
        lttng_ust_field_integer(int64_t, value, value)))
/* One CAN frame in or out (dir 0 = received, 1 = sent) on bus index bus, for drivers/can. */
LTTNG_UST_TRACEPOINT_EVENT(hilsim, can_frame,
    LTTNG_UST_TP_ARGS(uint64_t, tick, int, dir, int, bus, uint32_t, can_id,
                      const uint8_t *, data, unsigned int, len),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, tick, tick)
        lttng_ust_field_integer(int, dir, dir)
        lttng_ust_field_integer(int, bus, bus)
        lttng_ust_field_integer_hex(uint32_t, can_id, can_id)
        lttng_ust_field_sequence(uint8_t, data, data, unsigned int, len)))
/* The sync clock after each tick (rt.clock.mode sync). */
LTTNG_UST_TRACEPOINT_EVENT(hilsim, sync,
    LTTNG_UST_TP_ARGS(const struct hs_trace_sync *, s),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, tick, s->tick)
        lttng_ust_field_integer(int64_t, phase_error_ns, s->phase_error_ns)
        lttng_ust_field_integer(int64_t, adjust_ns, s->adjust_ns)
        lttng_ust_field_integer(int64_t, drift_ppb, s->drift_ppb)
        lttng_ust_field_integer(uint32_t, events, s->events)
        lttng_ust_field_integer(uint8_t, state, s->state)))
/* clang-format on */

#endif

#include <lttng/tracepoint-event.h>
