/* Heap-call counter for measuring executables: perf/bench_step (hilsim bench-step with heap
 * calls counted) and the no-allocation tests (through tests/common/call_counter.c).
 *
 * heap_counter.c defines malloc, calloc, realloc, free, memalign, aligned_alloc and
 * posix_memalign, forwarding each to glibc's __libc_* implementation (glibc has no malloc hooks
 * any more), so it takes over every allocation of the executable it is linked into. It is built
 * as its own object library (hs_heap_counter) and linked only into such executables, never into
 * a module library. A call counts when the calling thread has set hs_heap_counting; the flag is
 * thread-local so library threads (LTTng-UST's listeners, a logger) do not count, and the total
 * is global so a test can read it after joining the counting thread.
 *
 * Under AddressSanitizer, ThreadSanitizer or MemorySanitizer, which interpose malloc
 * themselves, nothing is interposed: hs_heap_counter_active is false and the total stays 0. */
#ifndef HS_PERF_HEAP_COUNTER_H
#define HS_PERF_HEAP_COUNTER_H

#include <stdbool.h>

extern __thread int hs_heap_counting;     /* set on the thread whose heap calls count */
extern long hs_heap_calls;                /* calls counted so far; only counting threads write it */
extern const bool hs_heap_counter_active; /* false in sanitizer builds: nothing is counted */

#endif
