/* Internal: snprintf-style appending into a caller's buffer for the non-RT text formatters. It
 * keeps counting the needed length after the buffer is full, so callers can size a second try. */
#ifndef HS_RT_OUT_H
#define HS_RT_OUT_H

#include <stddef.h>

struct hs__out {
    char *buf;
    size_t size, len;
};

void hs__out_init(struct hs__out *o, char *buf, size_t size);
void hs__out_put(struct hs__out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* NUL-terminates after truncation; returns the needed length. */
size_t hs__out_finish(struct hs__out *o);

#endif
