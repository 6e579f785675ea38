#include "hilsim/rt/rt_baseline.h"

#include <errno.h>

#include "hilsim/rt/rt_clock.h"
#include "rt_thread.h"
#include "hilsim/rt/tick_loop.h"

struct baseline {
    const struct hs_baseline_config *cfg;
    struct hs_hist *wake;
    const atomic_bool *stop;
    struct hs_baseline_result res;
    struct hs__rt_thread thread;
    int ret;
};

static void measure(struct baseline *b)
{
    const int64_t period = b->cfg->period_ns;
    int64_t next = hs_rt_now_ns() + period;
    uint64_t i;
    for (i = 0; i < b->cfg->loops; i++) {
        if (b->stop && atomic_load_explicit(b->stop, memory_order_relaxed))
            break;
        hs_rt_sleep_until(next);
        int64_t now = hs_rt_now_ns();
        hs_hist_record(b->wake, now - next);
        next += period;
        /* Like cyclictest, stay on the absolute grid; a late wake does not shift it, but never
         * schedule into the past for long: skip deadlines already gone. */
        if (now > next)
            next += ((now - next) / period + 1) * period;
    }
    b->res.loops = i;
}

static void *thread_main(void *arg)
{
    struct baseline *b = arg;
    b->ret = hs__rt_thread_enter(&b->thread);
    if (b->ret == 0)
        measure(b);
    return NULL;
}

int hs_baseline_run(const struct hs_baseline_config *cfg, const struct hs_rt_opts *rt,
                    struct hs_hist *wake, const atomic_bool *stop, struct hs_baseline_result *ret)
{
    if (cfg->period_ns < HS_TICK_PERIOD_MIN_NS || cfg->period_ns > HS_TICK_PERIOD_MAX_NS ||
        cfg->loops == 0)
        return -EINVAL;
    struct baseline b = {.cfg = cfg, .wake = wake, .stop = stop};
    struct hs_rt_opts none = {.cpu = -1};
    const struct hs_rt_opts *o = rt ? rt : &none;
    if (cfg->own_thread) {
        int r = hs__rt_thread_start(&b.thread, o, &b.res.rep, thread_main, &b);
        if (r < 0)
            return r;
        r = pthread_join(b.thread.thread, NULL);
        if (r)
            return -r;
    } else {
        b.ret = rt ? hs_rt_setup_thread(rt, &b.res.rep) : 0;
        if (b.ret == 0)
            measure(&b);
    }
    if (b.ret < 0)
        return b.ret;
    *ret = b.res;
    return 0;
}
