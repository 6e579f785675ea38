#include "rt_thread.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

static size_t stack_bytes(const struct hs_rt_opts *o)
{
    size_t kib = o->stack_size_kib ? o->stack_size_kib : 1024;
    return kib * 1024;
}

static int create(struct hs__rt_thread *t, bool rt_attrs)
{
    pthread_attr_t attr;
    int err = pthread_attr_init(&attr);
    if (err)
        return err;
    err = pthread_attr_setstacksize(&attr, stack_bytes(&t->opts));
    if (!err && rt_attrs && t->opts.priority > 0) {
        struct sched_param sp = {.sched_priority = t->opts.priority};
        err = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
        if (!err)
            err = pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
        if (!err)
            err = pthread_attr_setschedparam(&attr, &sp);
    }
    if (!err && rt_attrs && t->opts.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (t->opts.cpu >= CPU_SETSIZE)
            err = EINVAL;
        else
            CPU_SET(t->opts.cpu, &set);
        if (!err)
            err = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    }
    if (!err)
        err = pthread_create(&t->thread, &attr, t->fn, t->arg);
    pthread_attr_destroy(&attr);
    return err;
}

int hs__rt_thread_start(struct hs__rt_thread *t, const struct hs_rt_opts *opts,
                        struct hs_rt_report *rep, void *(*fn)(void *), void *arg)
{
    t->opts = *opts;
    t->rep = rep;
    t->fn = fn;
    t->arg = arg;
    rep->priority = opts->priority;
    rep->cpu = opts->cpu;
    t->attrs_applied = true;
    /* The thread reads attrs_applied in enter(); pthread_create orders that write before it. */
    int err = create(t, true);
    if (err == 0) {
        rep->sched_fifo.state = opts->priority > 0 ? HS_RT_GRANTED : HS_RT_NOT_ASKED;
        rep->sched_fifo.err = 0;
        rep->affinity.state = opts->cpu >= 0 ? HS_RT_GRANTED : HS_RT_NOT_ASKED;
        rep->affinity.err = 0;
        return 0;
    }
    if (opts->require_rt)
        return -err;
    t->attrs_applied = false;
    err = create(t, false);
    return -err;
}

int hs__rt_thread_enter(struct hs__rt_thread *t)
{
    struct hs_rt_opts o = t->opts;
    size_t max_kib = stack_bytes(&o) / 1024 / 2; /* leave half the stack for the callbacks */
    if (o.prefault_stack_kib > max_kib)
        o.prefault_stack_kib = max_kib;
    if (!t->attrs_applied)
        return hs_rt_setup_thread(&o, t->rep);
    if (o.prefault_stack_kib) {
        hs_rt_prefault_stack(o.prefault_stack_kib);
        t->rep->prefault.state = HS_RT_GRANTED;
        t->rep->prefault.err = 0;
    }
    return 0;
}
