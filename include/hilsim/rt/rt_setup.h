/* Real-time set-up of the process and of the RT thread: SCHED_FIFO, CPU affinity, mlockall,
 * stack prefault, /dev/cpu_dma_latency held at 0. Each step is reported as granted or refused
 * (with the errno) and a refusal does not abort unless require_rt is set: hilsim still runs on a
 * laptop, it just says what it did not get. */
#ifndef HS_RT_SETUP_H
#define HS_RT_SETUP_H

#include <stdbool.h>
#include <stddef.h>

struct hs_rt_opts {
    int priority;              /* SCHED_FIFO priority 1..99; 0 leaves the scheduler alone */
    int cpu;                   /* pin the RT thread to this CPU; -1 does not pin */
    size_t prefault_stack_kib; /* touch this much stack at thread start; 0 skips */
    size_t stack_size_kib;     /* RT thread stack size (own-thread mode); 0 = 1 MiB */
    bool lock_memory;          /* mlockall(MCL_CURRENT | MCL_FUTURE) */
    bool hold_dma_latency;     /* write 0 to /dev/cpu_dma_latency and keep the fd open */
    bool require_rt;           /* any refused step makes the set-up fail */
};

/* Defaults: priority 80, no pinning, 256 KiB prefault, lock memory, hold dma latency. */
#define HS_RT_OPTS_DEFAULT                                                                         \
    ((struct hs_rt_opts){.priority = 80,                                                           \
                         .cpu = -1,                                                                \
                         .prefault_stack_kib = 256,                                                \
                         .stack_size_kib = 1024,                                                   \
                         .lock_memory = true,                                                      \
                         .hold_dma_latency = true,                                                 \
                         .require_rt = false})

enum hs_rt_grant { HS_RT_NOT_ASKED, HS_RT_GRANTED, HS_RT_REFUSED, HS_RT_GRANT_MAX };

struct hs_rt_step {
    enum hs_rt_grant state;
    int err; /* positive errno when refused, else 0 */
};

struct hs_rt_report {
    struct hs_rt_step sched_fifo; /* thread steps */
    struct hs_rt_step affinity;
    struct hs_rt_step prefault;
    struct hs_rt_step mlockall; /* process steps */
    struct hs_rt_step dma_latency;
    int priority; /* as asked */
    int cpu;      /* as asked */
};

/* Process-wide state that must live as long as the run (the dma latency fd). */
struct hs_rt_process {
    int dma_fd; /* -1 when not held */
};

/* RT-safe: "granted", "refused" or "not asked" (static strings). */
const char *hs_rt_grant_name(enum hs_rt_grant g);

/* init only. Applies mlockall and the dma latency hold; fills the process steps of *rep.
 * Returns 0, or -EPERM (or the step's errno) when require_rt and a step was refused; the steps
 * already granted stay in effect (release them with hs_rt_process_release). */
int hs_rt_setup_process(const struct hs_rt_opts *o, struct hs_rt_process *proc,
                        struct hs_rt_report *rep);
/* init only. Closes the dma latency fd (the kernel drops the request). Accepts NULL. */
void hs_rt_process_release(struct hs_rt_process *proc);

/* init only, call on the RT thread itself: SCHED_FIFO, affinity, stack prefault; fills the thread
 * steps of *rep. Same return rule as hs_rt_setup_process. */
int hs_rt_setup_thread(const struct hs_rt_opts *o, struct hs_rt_report *rep);

/* init only: touch kib KiB of stack below the caller so later ticks do not page-fault. */
void hs_rt_prefault_stack(size_t kib);

#endif
