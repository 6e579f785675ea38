/* Diagnostics for bad input: where (file:line:column) and what was expected.
 * Library code never prints; it fills an hs_diag and returns a negative errno.
 * The CLI prints the diag once, where it handles the error. */
#ifndef HILSIM_DIAG_H
#define HILSIM_DIAG_H

#include <stdarg.h>

#define HS_DIAG_FILE_MAX 512
#define HS_DIAG_MSG_MAX 512

struct hs_diag {
    char file[HS_DIAG_FILE_MAX]; /* "" when no file is involved */
    int line;                    /* 1-based; 0 when unknown */
    int column;                  /* 1-based; 0 when unknown */
    char msg[HS_DIAG_MSG_MAX];
};

/* init only. d may be NULL (then nothing is recorded). Returns -err so callers can write
 * `return hs_diag_set(d, -EINVAL, ...)`. Pass err negative, as every return in the API (every
 * caller does); a positive errno is still negated, so none is ever returned. */
int hs_diag_set(struct hs_diag *d, int err, const char *file, int line, int column, const char *fmt,
                ...) __attribute__((format(printf, 6, 7)));
int hs_diag_vset(struct hs_diag *d, int err, const char *file, int line, int column,
                 const char *fmt, va_list ap);

/* Formats "file:line:column: msg" (parts that are unknown are left out) into buf. */
void hs_diag_format(const struct hs_diag *d, char *buf, unsigned long size);

#endif
