#include "hilsim/rt/rt_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define PREFAULT_MAX_KIB 8192

const char *hs_rt_grant_name(enum hs_rt_grant g)
{
    switch (g) {
    case HS_RT_GRANTED:
        return "granted";
    case HS_RT_REFUSED:
        return "refused";
    default:
        return "not asked";
    }
}

static void step_result(struct hs_rt_step *s, int err)
{
    s->state = err ? HS_RT_REFUSED : HS_RT_GRANTED;
    s->err = err;
}

static int first_refusal(const struct hs_rt_step *const *steps, int n)
{
    for (int i = 0; i < n; i++)
        if (steps[i]->state == HS_RT_REFUSED)
            return -(steps[i]->err ? steps[i]->err : EPERM);
    return 0;
}

int hs_rt_setup_process(const struct hs_rt_opts *o, struct hs_rt_process *proc,
                        struct hs_rt_report *rep)
{
    proc->dma_fd = -1;
    rep->priority = o->priority;
    rep->cpu = o->cpu;
    rep->mlockall = (struct hs_rt_step){HS_RT_NOT_ASKED, 0};
    rep->dma_latency = (struct hs_rt_step){HS_RT_NOT_ASKED, 0};
    if (o->lock_memory)
        step_result(&rep->mlockall, mlockall(MCL_CURRENT | MCL_FUTURE) ? errno : 0);
    if (o->hold_dma_latency) {
        int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
        int err = fd < 0 ? errno : 0;
        if (fd >= 0) {
            /* The request lasts while the fd stays open; 0 keeps CPUs out of deep C-states. */
            int32_t zero = 0;
            if (write(fd, &zero, sizeof zero) != (ssize_t)sizeof zero) {
                err = errno ? errno : EIO;
                close(fd);
                fd = -1;
            }
        }
        step_result(&rep->dma_latency, err);
        proc->dma_fd = fd;
    }
    if (!o->require_rt)
        return 0;
    const struct hs_rt_step *steps[] = {&rep->mlockall, &rep->dma_latency};
    return first_refusal(steps, 2);
}

void hs_rt_process_release(struct hs_rt_process *proc)
{
    if (!proc || proc->dma_fd < 0)
        return;
    close(proc->dma_fd);
    proc->dma_fd = -1;
}

void hs_rt_prefault_stack(size_t kib)
{
    if (kib > PREFAULT_MAX_KIB)
        kib = PREFAULT_MAX_KIB;
    if (kib == 0)
        return;
    /* A VLA on this frame, written page by page through a volatile pointer so the compiler
     * keeps the stores. */
    size_t n = kib * 1024;
    unsigned char buf[n];
    volatile unsigned char *p = buf;
    for (size_t i = 0; i < n; i += 4096)
        p[i] = 0;
    p[n - 1] = 0;
}

int hs_rt_setup_thread(const struct hs_rt_opts *o, struct hs_rt_report *rep)
{
    rep->priority = o->priority;
    rep->cpu = o->cpu;
    rep->sched_fifo = (struct hs_rt_step){HS_RT_NOT_ASKED, 0};
    rep->affinity = (struct hs_rt_step){HS_RT_NOT_ASKED, 0};
    rep->prefault = (struct hs_rt_step){HS_RT_NOT_ASKED, 0};
    if (o->priority > 0) {
        struct sched_param sp = {.sched_priority = o->priority};
        step_result(&rep->sched_fifo, pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp));
    }
    if (o->cpu >= 0) {
        int err = EINVAL;
        if (o->cpu < CPU_SETSIZE) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(o->cpu, &set);
            err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        }
        step_result(&rep->affinity, err);
    }
    if (o->prefault_stack_kib) {
        /* On the main thread the stack is RLIMIT_STACK: touch at most half of it. */
        size_t kib = o->prefault_stack_kib;
        struct rlimit rl;
        if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            kib > rl.rlim_cur / 2048)
            kib = rl.rlim_cur / 2048;
        hs_rt_prefault_stack(kib);
        step_result(&rep->prefault, 0);
    }
    if (!o->require_rt)
        return 0;
    const struct hs_rt_step *steps[] = {&rep->sched_fifo, &rep->affinity};
    return first_refusal(steps, 2);
}
