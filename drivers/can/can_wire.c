/* Conversion between hs_can_frame and the kernel's can_frame / canfd_frame records. */
#include <errno.h>
#include <string.h>

#include "can_internal.h"

size_t hs__can_frame_to_wire(const struct hs_can_frame *f, struct canfd_frame *w)
{
    memset(w, 0, sizeof *w);
    canid_t id = f->id;
    if (f->flags & HS_CAN_FLAG_EXT)
        id |= CAN_EFF_FLAG;
    if (f->flags & HS_CAN_FLAG_RTR)
        id |= CAN_RTR_FLAG;
    w->can_id = id;
    w->len = f->len;
    if (f->flags & HS_CAN_FLAG_FD) {
        w->flags = (uint8_t)(((f->flags & HS_CAN_FLAG_BRS) ? CANFD_BRS : 0) |
                             ((f->flags & HS_CAN_FLAG_ESI) ? CANFD_ESI : 0));
        memcpy(w->data, f->data, f->len);
        return CANFD_MTU;
    }
    if (!(f->flags & HS_CAN_FLAG_RTR))
        memcpy(w->data, f->data, f->len);
    return CAN_MTU;
}

int hs__can_frame_from_wire(const void *buf, size_t len, bool fd_frames, struct hs_can_frame *f)
{
    const struct canfd_frame *w = buf;
    bool fd;
    if (len == CAN_MTU)
        fd = false;
    else if (len == CANFD_MTU && fd_frames)
        fd = true;
    else
        return -EBADMSG;
    if (fd ? !hs_can_fd_len_valid(w->len) : w->len > CAN_MAX_DLEN)
        return -EBADMSG;
    memset(f, 0, offsetof(struct hs_can_frame, data));
    f->len = w->len;
    if (w->can_id & CAN_ERR_FLAG) {
        f->flags = HS_CAN_FLAG_ERR;
        f->id = w->can_id & CAN_ERR_MASK;
    } else if (w->can_id & CAN_EFF_FLAG) {
        f->flags = HS_CAN_FLAG_EXT;
        f->id = w->can_id & CAN_EFF_MASK;
    } else {
        f->id = w->can_id & CAN_SFF_MASK;
        if (w->can_id & (CAN_EFF_MASK & ~CAN_SFF_MASK))
            return -EBADMSG; /* standard frame with stray high identifier bits */
    }
    if (w->can_id & CAN_RTR_FLAG) {
        if (fd)
            return -EBADMSG;
        f->flags |= HS_CAN_FLAG_RTR;
    }
    if (fd) {
        f->flags |= HS_CAN_FLAG_FD;
        if (w->flags & CANFD_BRS)
            f->flags |= HS_CAN_FLAG_BRS;
        if (w->flags & CANFD_ESI)
            f->flags |= HS_CAN_FLAG_ESI;
    }
    if (!(f->flags & HS_CAN_FLAG_RTR))
        memcpy(f->data, w->data, f->len);
    return 0;
}
