/* recvmmsg/sendmmsg batches over a socket of can_frame/canfd_frame records. Every header,
 * iovec and control buffer is set up once here; the per-tick calls only reset the lengths the
 * kernel overwrites. */
#include <errno.h>
#include <time.h> /* before linux/errqueue.h, which needs struct timespec */
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <stdlib.h>
#include <string.h>

#include "can_internal.h"

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

int hs__can_fdio_init(struct hs__can_fdio *io, int fd, unsigned batch, bool fd_frames)
{
    memset(io, 0, sizeof *io);
    io->fd = fd;
    io->batch = batch;
    io->fd_frames = fd_frames;
    /* room for SO_TIMESTAMPING (3 timespecs) or SO_TIMESTAMPNS, plus the drop counter */
    io->cmsg_space = CMSG_SPACE(sizeof(struct scm_timestamping)) +
                     CMSG_SPACE(sizeof(struct timespec)) + CMSG_SPACE(sizeof(uint32_t));
    io->rx_msgs = calloc(batch, sizeof *io->rx_msgs);
    io->rx_iov = calloc(batch, sizeof *io->rx_iov);
    io->rx_buf = calloc(batch, sizeof *io->rx_buf);
    io->rx_cmsg = calloc(batch, io->cmsg_space);
    io->tx_msgs = calloc(batch, sizeof *io->tx_msgs);
    io->tx_iov = calloc(batch, sizeof *io->tx_iov);
    io->tx_buf = calloc(batch, sizeof *io->tx_buf);
    if (!io->rx_msgs || !io->rx_iov || !io->rx_buf || !io->rx_cmsg || !io->tx_msgs || !io->tx_iov ||
        !io->tx_buf) {
        hs__can_fdio_free(io);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < batch; i++) {
        io->rx_iov[i].iov_base = &io->rx_buf[i];
        io->rx_iov[i].iov_len = sizeof io->rx_buf[i];
        io->rx_msgs[i].msg_hdr.msg_iov = &io->rx_iov[i];
        io->rx_msgs[i].msg_hdr.msg_iovlen = 1;
        io->rx_msgs[i].msg_hdr.msg_control = io->rx_cmsg + i * io->cmsg_space;
        io->tx_iov[i].iov_base = &io->tx_buf[i];
        io->tx_msgs[i].msg_hdr.msg_iov = &io->tx_iov[i];
        io->tx_msgs[i].msg_hdr.msg_iovlen = 1;
    }
    return 0;
}

void hs__can_fdio_free(struct hs__can_fdio *io)
{
    if (!io)
        return;
    free(io->rx_msgs);
    free(io->rx_iov);
    free(io->rx_buf);
    free(io->rx_cmsg);
    free(io->tx_msgs);
    free(io->tx_iov);
    free(io->tx_buf);
    io->rx_msgs = NULL, io->rx_iov = NULL, io->rx_buf = NULL, io->rx_cmsg = NULL;
    io->tx_msgs = NULL, io->tx_iov = NULL, io->tx_buf = NULL;
}

static int64_t ts_ns(const struct timespec *t)
{
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* Kernel receive time and queue-overflow total from one message's control data. */
static void read_cmsgs(struct hs__can_fdio *io, struct msghdr *m, struct hs_can_state *st,
                       int64_t *ret_time)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET)
            continue;
        if (c->cmsg_type == SO_TIMESTAMPING &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct scm_timestamping))) {
            struct scm_timestamping t;
            memcpy(&t, CMSG_DATA(c), sizeof t);
            /* a hardware stamp (ts[2]) beats the software one (ts[0]) when the driver has it */
            *ret_time = ts_ns(&t.ts[2]) ? ts_ns(&t.ts[2]) : ts_ns(&t.ts[0]);
        } else if (c->cmsg_type == SCM_TIMESTAMPNS &&
                   c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
            struct timespec t;
            memcpy(&t, CMSG_DATA(c), sizeof t);
            *ret_time = ts_ns(&t);
        } else if (c->cmsg_type == SO_RXQ_OVFL && c->cmsg_len >= CMSG_LEN(sizeof(uint32_t))) {
            uint32_t total;
            memcpy(&total, CMSG_DATA(c), sizeof total);
            /* the kernel reports a running total per socket; unsigned math survives wrap */
            st->rx_dropped_kernel += (uint32_t)(total - io->ovfl_last);
            io->ovfl_last = total;
        }
    }
}

int hs__can_fdio_recv(struct hs__can_fdio *io, struct hs_can_state *st, struct hs_can_frame *out,
                      unsigned max)
{
    if (max > io->batch)
        max = io->batch;
    if (max == 0)
        return 0;
    for (unsigned i = 0; i < max; i++) {
        struct msghdr *m = &io->rx_msgs[i].msg_hdr;
        m->msg_controllen = io->cmsg_space;
        m->msg_flags = 0;
        io->rx_msgs[i].msg_len = 0;
    }
    int n = recvmmsg(io->fd, io->rx_msgs, max, MSG_DONTWAIT, NULL);
    if (n < 0)
        return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;
    int got = 0;
    for (int i = 0; i < n; i++) {
        struct msghdr *m = &io->rx_msgs[i].msg_hdr;
        int64_t t = 0;
        read_cmsgs(io, m, st, &t);
        if ((m->msg_flags & MSG_TRUNC) ||
            hs__can_frame_from_wire(&io->rx_buf[i], io->rx_msgs[i].msg_len, io->fd_frames,
                                    &out[got]) != 0) {
            st->rx_bad++;
            continue;
        }
        out[got].rx_time_ns = t;
        if (out[got].flags & HS_CAN_FLAG_ERR)
            hs__can_errframe_apply(st, &out[got]);
        else
            st->rx_frames++;
        got++;
    }
    return got;
}

int hs__can_fdio_send(struct hs__can_fdio *io, struct hs_can_state *st,
                      const struct hs_can_frame *frames, unsigned n)
{
    if (n > io->batch)
        n = io->batch;
    if (n == 0)
        return 0;
    for (unsigned i = 0; i < n; i++) {
        io->tx_iov[i].iov_len = hs__can_frame_to_wire(&frames[i], &io->tx_buf[i]);
        io->tx_msgs[i].msg_len = 0;
    }
    int r = sendmmsg(io->fd, io->tx_msgs, n, MSG_DONTWAIT);
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
            return 0;
        return -errno;
    }
    st->tx_frames += (unsigned)r;
    return r;
}
