/* Opening input files (configs, models, meshes, recordings, shm segments) without hanging on
 * what is not a file.
 *
 * fopen() on a FIFO blocks until a writer appears, and on a character device it may read
 * forever; a loader should refuse both before it waits. These helpers stat the path first
 * (a clear error before any open), open with O_NONBLOCK (so a FIFO swapped in after the stat
 * cannot block the open either), check the opened file with fstat and only then clear
 * O_NONBLOCK. No call here can wait on another process, so none needs signals unblocked.
 * init only (system calls; no allocation besides fdopen's and hs_read_regular's buffer). */
#ifndef HILSIM_FILE_OPEN_H
#define HILSIM_FILE_OPEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* hs_open_regular_flags: refuse a symbolic link as the last component (-ELOOP), for files a
 * program wrote itself (a recording's, a shm segment) where a link can only be planted. */
#define HS_OPEN_NOFOLLOW 1u
/* ... and open read-write (a shm segment a client maps). */
#define HS_OPEN_RDWR 2u

/* Opens path read-only (O_CLOEXEC). 0 and *ret_fd, or a negative errno with *ret_fd untouched:
 * -EISDIR for a directory, -EINVAL for anything else that is not a regular file (FIFO,
 * socket, device), or open()'s and stat()'s own errors. */
int hs_open_regular(const char *path, int *ret_fd);
/* The same with HS_OPEN_* flags; ret_size (may be NULL) gets the file's size at open. */
int hs_open_regular_flags(const char *path, unsigned flags, int *ret_fd, uint64_t *ret_size);
/* The same as a stdio stream ("rb"). 0 and *ret_file, or a negative errno. */
int hs_fopen_regular(const char *path, FILE **ret_file);
/* Reads a whole regular file of at most max bytes into a malloc'd buffer with a NUL after
 * the last byte (the caller frees *ret). -EFBIG when it is larger (checked at open and while
 * reading, so a file that grows meanwhile is cut off too), -ENOMEM, -EIO, or the open's errors.
 * The read never waits and never allocates more than max + 1 bytes. */
int hs_read_regular(const char *path, unsigned flags, size_t max, uint8_t **ret, size_t *ret_len);
/* Text for hs_open_regular's errors: "not a regular file (a FIFO, device or socket)" for
 * -EINVAL, "a symbolic link" for -ELOOP, "too large" for -EFBIG, strerror otherwise. Not RT. */
const char *hs_open_regular_strerror(int neg_errno);

#endif
