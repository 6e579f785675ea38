#include "hilsim/delay_line.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int hs_delay_line_init(struct hs_delay_line *dl, size_t record_size, uint32_t delay_ticks,
                       const void *initial)
{
    memset(dl, 0, sizeof(*dl));
    if (record_size == 0 || delay_ticks > HS_DELAY_TICKS_MAX)
        return -EINVAL;
    size_t n = (size_t)delay_ticks + 1;
    unsigned char *buf = calloc(n, record_size);
    if (!buf)
        return -ENOMEM;
    if (initial)
        for (size_t i = 0; i < n; i++)
            memcpy(buf + i * record_size, initial, record_size);
    dl->buf = buf;
    dl->record_size = record_size;
    dl->delay_ticks = delay_ticks;
    dl->head = 0;
    return 0;
}

void hs_delay_line_free(struct hs_delay_line *dl)
{
    if (!dl)
        return;
    free(dl->buf);
    memset(dl, 0, sizeof(*dl));
}

const void *hs_delay_line_push(struct hs_delay_line *dl, const void *record)
{
    /* delay + 1 slots: the slot after the one just written was written delay pushes ago. */
    uint32_t n = dl->delay_ticks + 1;
    memcpy(dl->buf + (size_t)dl->head * dl->record_size, record, dl->record_size);
    dl->head = dl->head + 1 == n ? 0 : dl->head + 1;
    return dl->buf + (size_t)dl->head * dl->record_size;
}
