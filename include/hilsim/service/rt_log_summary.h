/* Overrun and skip records of the tick loop's log, summarised per second for the person reading
 * the log: on a busy or non-RT host a 3 s run printed 889 such lines of 939. The first of each
 * kind in a second is printed as it comes; the rest of that second are counted and printed as
 * one line when the second is over (or at the end). The recording still gets every record. Not
 * RT: the supervisor thread drains the log. */
#ifndef HS_SERVICE_RT_LOG_SUMMARY_H
#define HS_SERVICE_RT_LOG_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/rt/rt_ring.h"

struct hs__rt_log_summary {
    int64_t window_end_ns; /* CLOCK_MONOTONIC end of the current second; 0 before the first */
    bool printed_overrun, printed_skip;        /* this second's first of each kind went out */
    uint64_t overruns, skips, skipped_periods; /* held back in this second */
    uint64_t first_tick, last_tick;            /* of the held-back records */
    int64_t worst_ns;                          /* longest held-back overrun */
};

/* Takes one record: true when it is to be printed as it is (not an overrun or skip, or the
 * first of its kind this second). A summary line of the window that rec closes is written to
 * line (size bytes) first, with *ret_summary set; else *ret_summary is false. */
bool hs__rt_log_summary_take(struct hs__rt_log_summary *s, const struct hs_rt_log_rec *rec,
                             char *line, uint32_t size, bool *ret_summary);
/* The held-back count of the open window as one line (then forgotten); false when none. */
bool hs__rt_log_summary_flush(struct hs__rt_log_summary *s, char *line, uint32_t size);

#endif
