/* Internal to drivers/can: the bus object shared by the wrappers and the backends. */
#ifndef HS_CAN_INTERNAL_H
#define HS_CAN_INTERNAL_H

#include <linux/can.h>
#include <stddef.h>
#include <sys/socket.h>

#include "hilsim/can.h"

struct hs_can_bus {
    const struct hs_can_backend_ops *ops;
    struct hs_can_config cfg;
    struct hs_can_state state; /* rt:w — the tick thread's view (frames, error frames) */
    /* The controller's view over netlink (libsocketcan): written only by the thread that calls
     * hs_can_bus_link_poll / hs_can_bus_restart, never by the tick, so the two never race. */
    struct hs_can_state link;
    bool running;
    int fd;                       /* the socket to poll, -1 if none */
    void *priv;                   /* backend state, owned by the backend */
    struct hs_can_frame *backlog; /* KEEP_NEWEST slots (cfg.tx_backlog_max) */
    unsigned n_backlog;
    const struct hs_can_tap_ops *tap; /* never NULL (cfg.tap, or a no-op) */
    void *tap_ctx;
    /* CAN faults (can_fault_filter.c): no-ops unless a scenario installed a filter */
    int (*fault_rx)(void *ctx, struct hs_can_frame *frames, int n, unsigned max);
    const struct hs_can_frame *(*fault_tx)(void *ctx, const struct hs_can_frame *frames,
                                           unsigned *n, unsigned max);
    void *fault_ctx;
};

/* can_fault_filter.c: a new bus starts with the no-op filter. */
void hs__can_fault_bus_opened(struct hs_can_bus *bus);

/* Batched non-blocking datagram I/O on a socket carrying struct can_frame / canfd_frame
 * records: shared by the socketpair and SocketCAN backends so both have the same frame
 * semantics. Buffers are allocated once by hs__can_fdio_init. */
struct hs__can_fdio {
    int fd;
    unsigned batch;
    bool fd_frames; /* 72-byte canfd_frame records accepted */
    struct mmsghdr *rx_msgs;
    struct iovec *rx_iov;
    struct canfd_frame *rx_buf;
    unsigned char *rx_cmsg;
    size_t cmsg_space;
    struct mmsghdr *tx_msgs;
    struct iovec *tx_iov;
    struct canfd_frame *tx_buf;
    uint32_t ovfl_last; /* last SO_RXQ_OVFL total seen */
};

int hs__can_fdio_init(struct hs__can_fdio *io, int fd, unsigned batch, bool fd_frames);
void hs__can_fdio_free(struct hs__can_fdio *io);
int hs__can_fdio_recv(struct hs__can_fdio *io, struct hs_can_state *st, struct hs_can_frame *out,
                      unsigned max);
int hs__can_fdio_send(struct hs__can_fdio *io, struct hs_can_state *st,
                      const struct hs_can_frame *frames, unsigned n);

/* hs_can_bus_recv without the recording tap: the reply thread's receive, whose frames are tapped
 * when the tick takes them from its ring (hs_can_replier_recv). */
int hs__can_bus_recv_untapped(struct hs_can_bus *bus, struct hs_can_frame *frames, unsigned max);

/* Wire format (Linux can_frame / canfd_frame). */
size_t hs__can_frame_to_wire(const struct hs_can_frame *f, struct canfd_frame *w);
int hs__can_frame_from_wire(const void *buf, size_t len, bool fd_frames, struct hs_can_frame *f);
bool hs__can_frame_valid(const struct hs_can_frame *f, bool fd_allowed);

/* Error frames (linux/can/error.h) into bus state and counters. */
void hs__can_errframe_apply(struct hs_can_state *st, const struct hs_can_frame *f);

#endif
