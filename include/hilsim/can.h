/* CAN frames and bus backends.
 *
 * A bus is one CAN channel behind an ops table (socketpair for tests, SocketCAN for benches).
 * Lifecycle: hs_can_bus_open (allocates, validates config) -> hs_can_bus_start -> per tick
 * hs_can_bus_recv / hs_can_bus_send / hs_can_bus_state -> hs_can_bus_stop -> hs_can_bus_close.
 * The bus owns its file descriptor(s) and every buffer; nothing is allocated after open. */
#ifndef HILSIM_CAN_H
#define HILSIM_CAN_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/diag.h"

#define HS_CAN_DATA_MAX 64     /* CAN FD payload */
#define HS_CAN_CLASSIC_MAX 8   /* classic CAN payload */
#define HS_CAN_SFF_MASK 0x7FFu /* 11-bit identifier */
#define HS_CAN_EFF_MASK 0x1FFFFFFFu
#define HS_CAN_BATCH_MAX 256 /* largest recv/send batch a bus preallocates */

enum hs_can_frame_flag {
    HS_CAN_FLAG_EXT = 1u << 0, /* 29-bit identifier */
    HS_CAN_FLAG_RTR = 1u << 1, /* remote request (classic only; len = requested DLC) */
    HS_CAN_FLAG_FD = 1u << 2,  /* CAN FD frame */
    HS_CAN_FLAG_ERR = 1u << 3, /* error frame from the controller (id = CAN_ERR_* class bits) */
    HS_CAN_FLAG_BRS = 1u << 4, /* FD bit-rate switch */
    HS_CAN_FLAG_ESI = 1u << 5, /* FD error state indicator */
};

struct hs_can_frame {
    uint32_t id;        /* identifier without flag bits */
    uint8_t flags;      /* enum hs_can_frame_flag */
    uint8_t len;        /* payload bytes: 0..8 classic, FD lengths 0..8,12,16,20,24,32,48,64 */
    uint8_t pad_[2];    /* zero */
    int64_t rx_time_ns; /* kernel receive time (CLOCK_REALTIME), 0 when the backend has none */
    uint8_t data[HS_CAN_DATA_MAX];
};

enum hs_can_bus_state {
    HS_CAN_BUS_ERROR_ACTIVE = 0,
    HS_CAN_BUS_ERROR_WARNING,
    HS_CAN_BUS_ERROR_PASSIVE,
    HS_CAN_BUS_OFF,
    HS_CAN_BUS_STOPPED,
    HS_CAN_BUS_UNKNOWN, /* no information (e.g. vcan, socketpair without error frames) */
    HS_CAN_BUS_STATE_MAX
};

/* Whether the interface's controller can be managed (libsocketcan netlink). */
enum hs_can_link_mgmt {
    HS_CAN_LINK_MGMT_NONE = 0,    /* backend without a controller (socketpair) */
    HS_CAN_LINK_MGMT_UNSUPPORTED, /* CAN link without controller netlink data (vcan): reported,
                                   * not a failure */
    HS_CAN_LINK_MGMT_OK,          /* real controller: bit timing, state, berr counters */
    HS_CAN_LINK_MGMT_MAX
};

/* Counters only grow; all are totals since open. */
struct hs_can_state {
    enum hs_can_bus_state bus;
    uint16_t tx_err_count; /* controller TEC, from error frames or libsocketcan */
    uint16_t rx_err_count; /* controller REC */
    uint64_t rx_frames;
    uint64_t tx_frames;
    uint64_t rx_dropped_kernel; /* socket receive queue overflows (SO_RXQ_OVFL) */
    uint64_t rx_bad;            /* records of the wrong length, truncated, or malformed */
    uint64_t tx_dropped;        /* frames lost to ENOBUFS/EAGAIN under the tx policy */
    uint64_t tx_replaced;       /* KEEP_NEWEST: backlog frames overwritten by a newer one */
    uint64_t tx_errors;         /* send failures other than ENOBUFS/EAGAIN */
    uint64_t err_frames;        /* error frames received */
    uint64_t bus_off_events;
    uint64_t restarts; /* bus-off restarts requested by the restart policy */
    enum hs_can_link_mgmt link_mgmt;
};

/* What to do with frames the kernel will not take now (ENOBUFS/EAGAIN); send never blocks. */
enum hs_can_tx_policy {
    HS_CAN_TX_DROP = 0,    /* drop them and count in tx_dropped */
    HS_CAN_TX_KEEP_NEWEST, /* keep the newest frame per (id, ext) and send it first next call;
                            * a frame replaced by a newer one with the same id counts in
                            * tx_replaced; frames beyond backlog slots count in tx_dropped */
    HS_CAN_TX_POLICY_MAX
};

/* After bus-off (SocketCAN backend, real CAN interfaces only). */
enum hs_can_restart_policy {
    HS_CAN_RESTART_KERNEL = 0, /* leave it to the driver's restart-ms (set restart_ms > 0) */
    HS_CAN_RESTART_MANUAL,     /* hs_can_bus_state() calls can_do_restart once the bus has
                                * been off for restart_delay_ns */
    HS_CAN_RESTART_NEVER,      /* stay off; the operator restarts the link */
    HS_CAN_RESTART_POLICY_MAX
};

struct hs_can_filter {
    uint32_t id;   /* identifier bits to match */
    uint32_t mask; /* identifier bits that must match */
    bool ext;      /* match 29-bit frames (else 11-bit) */
};

#define HS_CAN_FILTER_MAX 64
#define HS_CAN_IFNAME_MAX 16

struct hs_can_config {
    char iface[HS_CAN_IFNAME_MAX]; /* SocketCAN interface name, e.g. "can0", "vcan0" */
    bool fd;                       /* accept and send CAN FD frames */
    unsigned batch_max;            /* frames per recv/send call, 1..HS_CAN_BATCH_MAX */
    unsigned n_filters;            /* 0: receive every identifier */
    struct hs_can_filter filters[HS_CAN_FILTER_MAX];
    bool recv_error_frames; /* subscribe to controller error frames (bus state) */
    bool loopback;          /* SocketCAN: see own frames on other sockets (kernel default on) */
    enum hs_can_tx_policy tx_policy;
    unsigned tx_backlog_max; /* KEEP_NEWEST slots, 1..HS_CAN_BATCH_MAX (0: batch_max) */

    /* Bus management (SocketCAN backend, CAN links only; 0 leaves the setting alone). */
    uint32_t bitrate_bps;
    uint16_t sample_point_permille; /* with bitrate_bps, e.g. 875 */
    uint32_t restart_ms;            /* kernel automatic restart after bus-off */
    enum hs_can_restart_policy restart_policy;
    int64_t restart_delay_ns; /* HS_CAN_RESTART_MANUAL */

    int socketpair_fd; /* socketpair backend: connected SOCK_SEQPACKET endpoint; bus owns it */
    const struct hs_can_tap_ops *tap; /* NULL: no tap (see struct hs_can_tap_ops below) */
    void *tap_ctx;                    /* tap->attach's ctx */
};

struct hs_can_bus;

struct hs_can_backend_ops {
    const char *name;
    /* init only: allocates priv state; fills d on failure. */
    int (*open)(struct hs_can_bus *bus, const struct hs_can_config *cfg, struct hs_diag *d);
    int (*start)(struct hs_can_bus *bus); /* optional */
    int (*stop)(struct hs_can_bus *bus);  /* optional */
    /* Non-blocking. Returns frames stored (0 when nothing is queued) or -errno. */
    int (*recv_batch)(struct hs_can_bus *bus, struct hs_can_frame *frames, unsigned max);
    /* Non-blocking. Returns how many leading frames the kernel took (0..n) or -errno for a
     * failure that is not back-pressure; ENOBUFS/EAGAIN end the batch early with the count. */
    int (*send_batch)(struct hs_can_bus *bus, const struct hs_can_frame *frames, unsigned n);
    /* optional, not RT-safe (netlink): refresh bus state and error counters from the driver
     * and apply the restart policy. */
    int (*state)(struct hs_can_bus *bus, int64_t now_ns);
    /* optional, not RT-safe: restart the controller after bus-off. */
    int (*restart)(struct hs_can_bus *bus);
    void (*close)(struct hs_can_bus *bus);
};

extern const struct hs_can_backend_ops hs_can_socketpair_ops;
extern const struct hs_can_backend_ops hs_can_socketcan_ops;

/* A tap sees every frame a bus received or handed to the kernel (recording: hilsim/record.h).
 * A bus opened with one in its config (hs_can_config.tap) gets attach's context; attach
 * returning NULL (or no tap) gives the bus a tap that does nothing, so the bus never checks.
 * Received frames (tx false) are reported on the thread that acts on them, the tick (a reply
 * thread's frames when the tick takes them from its ring); sent frames on whichever thread sent
 * them (the tick, or a reply thread). RT-safe, never blocking. */
struct hs_can_tap_ops {
    void *(*attach)(void *ctx, const struct hs_can_config *cfg); /* init only */
    void (*frames)(void *bus_ctx, bool tx, const struct hs_can_frame *frames, unsigned n);
};

/* Fills cfg with defaults: batch 32, no filters, classic frames, TX_DROP, fd -1. RT-safe */
void hs_can_config_init(struct hs_can_config *cfg);

/* init only: allocates. Validates cfg and opens the backend; *ret_bus untouched on failure. */
int hs_can_bus_open(const struct hs_can_backend_ops *ops, const struct hs_can_config *cfg,
                    struct hs_can_bus **ret_bus, struct hs_diag *d);
/* init only: opens two socketpair buses connected to each other with the same cfg. */
int hs_can_socketpair_open_pair(const struct hs_can_config *cfg, struct hs_can_bus **ret_a,
                                struct hs_can_bus **ret_b, struct hs_diag *d);
/* init only. -ENOSYS when the backend has no such op. */
int hs_can_bus_start(struct hs_can_bus *bus);
int hs_can_bus_stop(struct hs_can_bus *bus);
/* RT-safe. Returns frames received (0..max, max capped at batch_max) or -errno. Error frames
 * update the bus state and are returned too (flag HS_CAN_FLAG_ERR). */
int hs_can_bus_recv(struct hs_can_bus *bus, struct hs_can_frame *frames, unsigned max);
/* RT-safe. Sends first any backlog, then frames (n capped at batch_max), applying the tx
 * policy to what the kernel refuses. Returns frames handed to the kernel or -errno. */
int hs_can_bus_send(struct hs_can_bus *bus, const struct hs_can_frame *frames, unsigned n);
/* RT-safe: copies the counters and the last known bus state. */
int hs_can_bus_state(const struct hs_can_bus *bus, struct hs_can_state *ret_state);
/* Not RT-safe (netlink; call from a housekeeping thread, e.g. at 10 Hz): asks the driver for
 * bus state and error counters and applies the restart policy. -ENOSYS without the op. */
int hs_can_bus_link_poll(struct hs_can_bus *bus, int64_t now_ns);
/* Not RT-safe: restarts the controller now. -ENOSYS without the op. */
int hs_can_bus_restart(struct hs_can_bus *bus);
/* Not RT-safe, on the thread that calls hs_can_bus_link_poll: the controller's state, error
 * counters, bus-off events and restarts as netlink last reported them (all zero before the
 * first successful poll). Kept apart from hs_can_bus_state()'s tick-thread view. 0. */
int hs_can_bus_link_view(const struct hs_can_bus *bus, struct hs_can_state *ret_state);
/* Frames waiting in the KEEP_NEWEST backlog. RT-safe */
unsigned hs_can_bus_backlog(const struct hs_can_bus *bus);
/* The fd to poll for input, -1 if none. RT-safe */
int hs_can_bus_fd(const struct hs_can_bus *bus);
/* init only. Accepts NULL. */
void hs_can_bus_close(struct hs_can_bus *bus);

const char *hs_can_bus_state_name(enum hs_can_bus_state s); /* RT-safe */

/* Frame helpers. RT-safe */
bool hs_can_fd_len_valid(unsigned len);
/* Parses candump notation: "123#11223344", "12345678#..." (8 hex digits: extended),
 * "123#R" / "123#R4" (remote, optional DLC), "123##<flags hex digit><data>" (CAN FD). */
int hs_can_frame_parse(const char *text, struct hs_can_frame *ret_frame);
/* Formats in candump notation into buf (at least 160 bytes for FD). */
void hs_can_frame_format(const struct hs_can_frame *f, char *buf, unsigned long size);

#endif
