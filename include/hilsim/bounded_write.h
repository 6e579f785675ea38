/* Output that cannot hold the process: writes to a descriptor that may be a pipe or socket
 * nobody reads (`hilsim run | less` left paused, a stuck log collector). Not RT-safe. */
#ifndef HILSIM_BOUNDED_WRITE_H
#define HILSIM_BOUNDED_WRITE_H

#include <stddef.h>

/* Writes LEN bytes of BUF to FD, waiting for room at most TIMEOUT_MS in all (0: no wait).
 * Never blocks in write(2) itself: a socket is written with MSG_DONTWAIT, anything else in
 * pieces of at most PIPE_BUF bytes once poll(2) reports room (a pipe then always takes the
 * piece whole). Returns the bytes written (LEN when all went out), or a negative errno when
 * the descriptor failed before any byte went out; fewer than LEN means the wait ran out. */
long hs_write_bounded(int fd, const void *buf, size_t len, int timeout_ms);

#endif
