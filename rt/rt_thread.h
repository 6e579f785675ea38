/* Internal: start a thread with real-time attributes (SCHED_FIFO explicit, stack size,
 * affinity), falling back to a plain thread plus in-thread set-up when the attributes are
 * refused and real time is not required, so every step still lands in the report. */
#ifndef HS_RT_THREAD_H
#define HS_RT_THREAD_H

#include <pthread.h>
#include <stdbool.h>

#include "hilsim/rt/rt_setup.h"

struct hs__rt_thread {
    pthread_t thread;
    struct hs_rt_opts opts;
    struct hs_rt_report *rep; /* filled by start and by enter */
    bool attrs_applied;       /* sched and affinity came from the attributes */
    void *(*fn)(void *);
    void *arg;
};

/* init only. 0 or -errno (the first refusal when opts->require_rt). */
int hs__rt_thread_start(struct hs__rt_thread *t, const struct hs_rt_opts *opts,
                        struct hs_rt_report *rep, void *(*fn)(void *), void *arg);
/* init only: first thing on the new thread. Applies what the attributes did not and prefaults
 * the stack (bounded by the stack size). 0 or -errno under require_rt. */
int hs__rt_thread_enter(struct hs__rt_thread *t);

#endif
