/* One line per second for the overruns and skips of a busy host (rt_log_summary.h). */
#include <stdio.h>

#include "hilsim/service/rt_log_summary.h"

#define WINDOW_NS 1000000000LL

bool hs__rt_log_summary_flush(struct hs__rt_log_summary *s, char *line, uint32_t size)
{
    if (!s->overruns && !s->skips)
        return false;
    snprintf(line, size,
             "ticks %llu..%llu: %llu more overrun%s (worst took %lld ns) and %llu more skip%s "
             "(%llu periods) in that second; all are counted in the deadline misses and skipped "
             "periods at the end",
             (unsigned long long)s->first_tick, (unsigned long long)s->last_tick,
             (unsigned long long)s->overruns, s->overruns == 1 ? "" : "s", (long long)s->worst_ns,
             (unsigned long long)s->skips, s->skips == 1 ? "" : "s",
             (unsigned long long)s->skipped_periods);
    s->overruns = s->skips = s->skipped_periods = 0;
    s->worst_ns = 0;
    return true;
}

bool hs__rt_log_summary_take(struct hs__rt_log_summary *s, const struct hs_rt_log_rec *rec,
                             char *line, uint32_t size, bool *ret_summary)
{
    *ret_summary = false;
    bool overrun = rec->kind == HS_RT_LOG_OVERRUN;
    if (!overrun && rec->kind != HS_RT_LOG_SKIP)
        return true;
    if (rec->time_ns >= s->window_end_ns) {
        *ret_summary = hs__rt_log_summary_flush(s, line, size);
        s->window_end_ns = rec->time_ns + WINDOW_NS;
        s->printed_overrun = s->printed_skip = false;
    }
    bool *printed = overrun ? &s->printed_overrun : &s->printed_skip;
    if (!*printed) {
        *printed = true;
        return true;
    }
    if (!s->overruns && !s->skips)
        s->first_tick = rec->tick;
    s->last_tick = rec->tick;
    if (overrun) {
        s->overruns++;
        if (rec->a > s->worst_ns)
            s->worst_ns = rec->a;
    } else {
        s->skips++;
        s->skipped_periods += rec->a > 0 ? (uint64_t)rec->a : 0;
    }
    return false;
}
