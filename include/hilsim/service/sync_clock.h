/* The sync clock mode in the service: the discipline (hilsim/rt/clock_discipline.h) fed with the
 * events the bench's I/O modules saw each tick (hs_bench_sync_event), plugged into the tick loop
 * as its deadline corrector, and reported in the log (locked, lost), the LTTng trace
 * (hilsim:sync, every tick), systemd's STATUS= and the run's summary and report.json.
 *
 * Threads: attach and destroy on the main thread (init); the adjust hook on the RT thread;
 * status and format from any thread (the discipline publishes with relaxed atomics). */
#ifndef HS_SERVICE_SYNC_CLOCK_H
#define HS_SERVICE_SYNC_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hilsim/diag.h"
#include "hilsim/rt/clock_discipline.h"

struct hs_runner;
struct hs__sync_clock;

/* init only: allocates. In sync mode, builds the discipline from rt.clock.sync and hands it to
 * r->loop; in other modes sets *ret NULL and returns 0. Warns once when the mode has no event
 * source (rt.clock.sync.source none: it runs as wall). 0 or -errno with d set. */
int hs__sync_clock_attach(struct hs_runner *r, struct hs__sync_clock **ret, struct hs_diag *d);
/* init only. Accepts NULL. */
void hs__sync_clock_destroy(struct hs__sync_clock *s);

/* Any thread. false (ret untouched) when s is NULL (not in sync mode). */
bool hs__sync_clock_status(const struct hs__sync_clock *s, struct hs_sync_status *ret);
/* Any thread: "; sync locked, phase +1.2 us, drift +5000.1 ppm" for STATUS= ("" for NULL). */
void hs__sync_clock_status_line(const struct hs__sync_clock *s, char *buf, size_t size);
/* Main thread, after the loop: the summary lines (nothing for NULL). */
void hs__sync_clock_summary(const struct hs__sync_clock *s, FILE *out);

#endif
