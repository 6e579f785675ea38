/* Opening input files (configs, models, DBCs) without hanging on what is not a file.
 *
 * fopen() on a FIFO blocks until a writer appears, and on a character device it may read
 * forever; a loader should refuse both before it waits. These helpers stat the path first
 * (a clear error before any open), open with O_NONBLOCK (so a FIFO swapped in after the stat
 * cannot block the open either), check the opened file with fstat and only then clear
 * O_NONBLOCK. init only (system calls; no allocation besides fdopen's). */
#ifndef HILSIM_FILE_OPEN_H
#define HILSIM_FILE_OPEN_H

#include <stdio.h>

/* Opens path read-only (O_CLOEXEC). 0 and *ret_fd, or a negative errno with *ret_fd untouched:
 * -EISDIR for a directory, -EINVAL for anything else that is not a regular file (FIFO,
 * socket, device), or open()'s and stat()'s own errors. */
int hs_open_regular(const char *path, int *ret_fd);
/* The same as a stdio stream ("rb"). 0 and *ret_file, or a negative errno. */
int hs_fopen_regular(const char *path, FILE **ret_file);
/* Text for hs_open_regular's errors: "not a regular file (a FIFO, device or socket)" for
 * -EINVAL, strerror otherwise. Not RT. */
const char *hs_open_regular_strerror(int neg_errno);

#endif
