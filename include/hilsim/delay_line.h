/* A fixed delay of whole ticks for one signal (a command or a reading record of any size), to
 * emulate bus and filter latency. Storage is allocated once at init; push is O(record size).
 *
 * Ownership: the caller owns the struct; buf is owned by the delay line until
 * hs_delay_line_free(). */
#ifndef HILSIM_DELAY_LINE_H
#define HILSIM_DELAY_LINE_H

#include <stddef.h>
#include <stdint.h>

#define HS_DELAY_TICKS_MAX 100000u

struct hs_delay_line {
    unsigned char *buf; /* (delay_ticks + 1) records */
    size_t record_size;
    uint32_t delay_ticks;
    uint32_t head;
};

/* init only: allocates. Every slot starts as a copy of initial (zeros when NULL), which is what
 * comes out during the first delay_ticks pushes. -EINVAL for record_size 0 or a delay above
 * HS_DELAY_TICKS_MAX, -ENOMEM. On failure dl is left zeroed. */
int hs_delay_line_init(struct hs_delay_line *dl, size_t record_size, uint32_t delay_ticks,
                       const void *initial);
void hs_delay_line_free(struct hs_delay_line *dl); /* accepts NULL and a zeroed struct */

/* RT-safe: stores record and returns the record pushed delay_ticks pushes ago (record itself
 * when delay_ticks is 0). The pointer is valid until the next push. */
const void *hs_delay_line_push(struct hs_delay_line *dl, const void *record);

#endif
