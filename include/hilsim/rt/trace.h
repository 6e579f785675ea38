/* Tracing macros for the RT path. With HS_HAVE_LTTNG they fire the "hilsim" LTTng-UST
 * tracepoints (about 0.5 ns when no session listens); without it they compile to nothing and
 * their arguments are not evaluated. */
#ifndef HS_RT_TRACE_H
#define HS_RT_TRACE_H

#include "hilsim/rt/trace_event.h"

#ifdef HS_HAVE_LTTNG
#include "hilsim/rt/trace_provider.h"
/* t: const struct hs_trace_tick * */
#define HS_TRACE_TICK(t) lttng_ust_tracepoint(hilsim, tick, (t))
#define HS_TRACE_OVERRUN(tick, tick_ns, missed)                                                    \
    lttng_ust_tracepoint(hilsim, overrun, (tick), (tick_ns), (missed))
#define HS_TRACE_POLICY(tick, action, value)                                                       \
    lttng_ust_tracepoint(hilsim, policy_action, (tick), (action), (value))
/* dir: 0 received, 1 sent; data: len (<= 64) payload bytes */
#define HS_TRACE_CAN_FRAME(tick, dir, bus, can_id, data, len)                                      \
    lttng_ust_tracepoint(hilsim, can_frame, (tick), (dir), (bus), (can_id), (data), (len))
/* s: const struct hs_trace_sync * */
#define HS_TRACE_SYNC(s) lttng_ust_tracepoint(hilsim, sync, (s))
#define HS_TRACE_ENABLED(name) lttng_ust_tracepoint_enabled(hilsim, name)
#else
/* sizeof keeps the arguments unevaluated but "used", so callers build warning-free both ways. */
#define HS_TRACE_TICK(t) ((void)sizeof(t))
#define HS_TRACE_OVERRUN(tick, tick_ns, missed)                                                    \
    ((void)sizeof(tick), (void)sizeof(tick_ns), (void)sizeof(missed))
#define HS_TRACE_POLICY(tick, action, value)                                                       \
    ((void)sizeof(tick), (void)sizeof(action), (void)sizeof(value))
#define HS_TRACE_CAN_FRAME(tick, dir, bus, can_id, data, len)                                      \
    ((void)sizeof(tick), (void)sizeof(dir), (void)sizeof(bus), (void)sizeof(can_id),               \
     (void)sizeof(data), (void)sizeof(len))
#define HS_TRACE_SYNC(s) ((void)sizeof(s))
#define HS_TRACE_ENABLED(name) 0
#endif

#endif
