/* The end-of-run summary of `run` and `bench`, printed so that a reader who stopped reading
 * (a paused pager, a full pipe) cannot keep the stopped bench from exiting. Not RT. */
#ifndef HS_CLI_SUMMARY_OUT_H
#define HS_CLI_SUMMARY_OUT_H

#include <stddef.h>
#include <stdio.h>

/* How long the summary waits in all for room on standard output before the rest is dropped. */
#define HS_SUMMARY_WAIT_MS 5000

struct hs__summary_out {
    FILE *f; /* where to print: a memory stream, or stdout when none could be made */
    char *text;
    size_t len;
};

void hs__summary_begin(struct hs__summary_out *s);
/* Writes what was printed to standard output within HS_SUMMARY_WAIT_MS, saying on standard
 * error (which waits as little, see log.h) how much was dropped if the wait ran out. */
void hs__summary_end(struct hs__summary_out *s);

#endif
