/* CLOCK_MONOTONIC in nanoseconds and absolute sleeps: the one time base of the tick loop,
 * the baseline and the trace (LTTng's default clock is monotonic too). Header-only, so every
 * layer (drivers/shm and the client library too) reads the clock through it and none keeps its
 * own copy. */
#ifndef HS_RT_CLOCK_H
#define HS_RT_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#define HS_NS_PER_S 1000000000LL

/* RT-safe (vDSO, no syscall on x86-64). */
static inline int64_t hs_rt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * HS_NS_PER_S + ts.tv_nsec;
}

/* RT-safe. CLOCK_REALTIME in nanoseconds: never a deadline (it jumps with NTP and the
 * administrator); for dates and for mapping the kernel's wall-clock stamps (SO_TIMESTAMP) onto the
 * monotonic base. */
static inline int64_t hs_rt_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * HS_NS_PER_S + ts.tv_nsec;
}

/* RT-safe. Sleeps until the absolute CLOCK_MONOTONIC time t_ns; a signal does not shorten it
 * (the loop is bounded by the deadline). */
static inline void hs_rt_sleep_until(int64_t t_ns)
{
    struct timespec ts = {.tv_sec = t_ns / HS_NS_PER_S, .tv_nsec = t_ns % HS_NS_PER_S};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

#endif
