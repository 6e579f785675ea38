/* Test helper: counts heap calls (malloc & co.) and stdio output calls made by the current
 * thread while `counting` is set, by interposing those functions in the test binary and
 * forwarding to glibc. Tests that the real-time path allocates nothing and prints nothing link
 * it; they carry the "nosan" label, since ASan replaces malloc itself. */
#ifndef HS_TEST_CALL_COUNTER_H
#define HS_TEST_CALL_COUNTER_H

extern __thread int counting; /* set on the thread whose calls count */
extern long heap_calls, stdio_calls;

#endif
