/* Test helper: counts heap calls (malloc & co.) and stdio output calls made by the current
 * thread while `counting` is set. The heap side is hilsim's own counter (perf/heap_counter.h,
 * object library hs_heap_counter, which the test must link); this file adds the stdio side by
 * interposing those functions in the test binary and forwarding to glibc. Tests that the
 * real-time path allocates nothing and prints nothing link it; they carry the "nosan" label,
 * since ASan replaces malloc itself. */
#ifndef HS_TEST_CALL_COUNTER_H
#define HS_TEST_CALL_COUNTER_H

#include "heap_counter.h"

/* The tests' short names for the heap counter's flag and total. */
#define counting hs_heap_counting /* set on the thread whose calls count */
#define heap_calls hs_heap_calls
extern long stdio_calls;

#endif
