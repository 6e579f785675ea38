/* Frame validity and candump text notation. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "can_internal.h"

bool hs_can_fd_len_valid(unsigned len)
{
    if (len <= 8)
        return true;
    switch (len) {
    case 12:
    case 16:
    case 20:
    case 24:
    case 32:
    case 48:
    case 64:
        return true;
    default:
        return false;
    }
}

bool hs__can_frame_valid(const struct hs_can_frame *f, bool fd_allowed)
{
    uint32_t mask = (f->flags & HS_CAN_FLAG_EXT) ? HS_CAN_EFF_MASK : HS_CAN_SFF_MASK;
    if (f->flags & HS_CAN_FLAG_ERR)
        return false; /* controllers raise error frames; nodes never send them */
    if (f->id & ~mask)
        return false;
    if (f->flags & HS_CAN_FLAG_FD) {
        if (!fd_allowed || (f->flags & HS_CAN_FLAG_RTR))
            return false; /* CAN FD has no remote frames */
        return hs_can_fd_len_valid(f->len);
    }
    if (f->flags & (HS_CAN_FLAG_BRS | HS_CAN_FLAG_ESI))
        return false;
    return f->len <= HS_CAN_CLASSIC_MAX;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int hs_can_frame_parse(const char *text, struct hs_can_frame *ret_frame)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    const char *p = text;
    unsigned ndig = 0;
    uint32_t id = 0;
    while (hexval(*p) >= 0) {
        if (++ndig > 8)
            return -EINVAL;
        id = id << 4 | (uint32_t)hexval(*p++);
    }
    if (*p != '#' || (ndig != 3 && ndig != 8))
        return -EINVAL;
    p++;
    if (ndig == 8) {
        if (id & ~HS_CAN_EFF_MASK)
            return -EINVAL;
        f.flags |= HS_CAN_FLAG_EXT;
    } else if (id & ~HS_CAN_SFF_MASK) {
        return -EINVAL;
    }
    f.id = id;
    unsigned max = HS_CAN_CLASSIC_MAX;
    if (*p == '#') {
        p++;
        int fl = hexval(*p++);
        if (fl < 0 || (fl & ~3))
            return -EINVAL;
        f.flags |= HS_CAN_FLAG_FD;
        if (fl & 1)
            f.flags |= HS_CAN_FLAG_BRS;
        if (fl & 2)
            f.flags |= HS_CAN_FLAG_ESI;
        max = HS_CAN_DATA_MAX;
    } else if (*p == 'R' || *p == 'r') {
        p++;
        f.flags |= HS_CAN_FLAG_RTR;
        if (*p) {
            int dlc = hexval(*p++);
            if (dlc < 0 || dlc > 8 || *p)
                return -EINVAL;
            f.len = (uint8_t)dlc;
        }
        *ret_frame = f;
        return 0;
    }
    unsigned n = 0;
    while (*p) {
        if (*p == '.') { /* candump allows dots between bytes */
            p++;
            continue;
        }
        int hi = hexval(p[0]);
        int lo = hi >= 0 ? hexval(p[1]) : -1;
        if (lo < 0 || n >= max)
            return -EINVAL;
        f.data[n++] = (uint8_t)(hi << 4 | lo);
        p += 2;
    }
    if ((f.flags & HS_CAN_FLAG_FD) && !hs_can_fd_len_valid(n))
        return -EINVAL;
    f.len = (uint8_t)n;
    *ret_frame = f;
    return 0;
}

void hs_can_frame_format(const struct hs_can_frame *f, char *buf, unsigned long size)
{
    if (!size)
        return;
    int k = snprintf(buf, size, (f->flags & HS_CAN_FLAG_EXT) ? "%08X" : "%03X", (unsigned)f->id);
    if (k < 0 || (unsigned long)k >= size)
        return;
    if (f->flags & HS_CAN_FLAG_RTR) {
        snprintf(buf + k, size - (unsigned long)k, "#R%u", (unsigned)f->len);
        return;
    }
    if (f->flags & HS_CAN_FLAG_FD)
        k += snprintf(buf + k, size - (unsigned long)k, "##%X",
                      ((f->flags & HS_CAN_FLAG_BRS) ? 1u : 0u) |
                          ((f->flags & HS_CAN_FLAG_ESI) ? 2u : 0u));
    else
        k += snprintf(buf + k, size - (unsigned long)k, "#");
    for (unsigned i = 0; i < f->len && (unsigned long)k + 3 <= size; i++)
        k += snprintf(buf + k, size - (unsigned long)k, "%02X", f->data[i]);
}
