#include <string.h>

#include "fuzz_frames.h"

bool fuzz_next_frame(const struct fuzz_frame_format *fmt, const uint8_t **data, size_t *size,
                     struct fuzz_frame *ret)
{
    const uint8_t *d = *data;
    size_t left = *size;
    if (left < fmt->id_bytes + 2)
        return false;
    memset(ret, 0, sizeof *ret);
    for (unsigned i = 0; i < fmt->id_bytes; i++)
        ret->raw_id |= (uint32_t)d[i] << (8 * i);
    ret->raw_flags = d[fmt->id_bytes];
    ret->f.id = ret->raw_id & fmt->id_mask;
    ret->f.flags = ret->raw_flags & fmt->flags_mask;
    ret->f.len = d[fmt->id_bytes + 1] % 65;
    d += fmt->id_bytes + 2, left -= fmt->id_bytes + 2;
    size_t n = ret->f.len < left ? ret->f.len : left;
    memcpy(ret->f.data, d, n);
    *data = d + n, *size = left - n;
    return true;
}
