/* CAN I/O module: buses and protocol nodes from the config, tick phases, safe stop, counters.
 * See io_can.h for the units and the plant slot mapping. Everything particular to a protocol is
 * behind its ops (src/bench/can/can_protocol.h): this file has no protocol branches. */
#include "hilsim/io_can.h"

#include <errno.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/can.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_internal.h"
#include "can_protocol.h"
#include "hilsim/can_replier.h"
#include "hilsim/rt/rt_hist.h"
#include "hilsim/rt/trace.h"
#include "hilsim/rt/rt_clock.h"

#define RX_BATCH 64

struct can_node {
    struct hs_can_port *port; /* owned */
    int64_t pending_ns;       /* first command frame not answered yet (latency), 0: none */
    bool replied;             /* poll produced a frame this tick */
    unsigned tx_max;          /* frames its poll may write per tick */
};

struct can_bus {
    const struct hs_cfg_bus *cfg;
    struct hs_can_bus *bus;
    struct hs_can_node *nodes[HS_CFG_MAX_NODES];
    uint32_t node_index[HS_CFG_MAX_NODES]; /* into hs_bench_can.nodes */
    unsigned nnodes;
    uint64_t unclaimed, err_frames, send_errors, rx_capped_ticks;
    struct hs_can_frame rx[RX_BATCH];
    struct hs_can_frame *tx; /* the nodes' tx_max each, plus one spare batch */
    unsigned ntx;
    /* rt:w supervisor:r — the bus state and kernel drops as of the last tick, for systemd's
     * STATUS= line; the bus's own state is only touched by the tick thread. */
    _Atomic uint32_t live_state;
    _Atomic uint64_t live_drops;
    /* replies: immediate with nodes that answer at once: owns the bus's receive side
     * (can_replier.h) */
    struct hs_can_replier *replier;
};

/* The controller's clock frame (see "clock frames" below). */
#define CLOCK_HELD_MAX (RX_BATCH * HS_BENCH_CAN_RX_ROUNDS)
struct can_clock {
    struct hs_bench *bench;
    struct can_bus *bus; /* NULL: no clock frame */
    uint32_t id;
    bool lockstep;             /* each clock frame releases a tick */
    struct hs_can_frame *held; /* received, not yet taken by a tick (lockstep: by the gate) */
    unsigned nheld, cut, taken;
    uint64_t frames;        /* clock frames no node claimed (not counted as unclaimed) */
    uint64_t full_releases; /* lockstep: the holding buffer filled up without a clock frame */
};

struct hs_bench_can {
    struct hs_bench *bench;
    const struct hs_config *cfg;
    struct can_bus buses[HS_CFG_MAX_BUSES];
    uint32_t nbuses;
    struct can_node nodes[HS_CFG_MAX_NODES];
    uint32_t nnodes;
    /* reply latency in µs (or ticks), clamped to HS_BENCH_CAN_LAT_MAX_US: rt's log-linear
     * histogram, exact below 128 and within 0.39 % above */
    struct hs_hist lat;
    bool stopped;
    bool tick_time_stamps;
    uint64_t tick;               /* for trace events: the tick being served */
    uint64_t warmup_frames_held; /* built during the runner's warm-up and never sent */
    struct can_clock clock;      /* rt.clock.sync.source can: the clock frame */
    bool commands_gate;          /* lockstep_source can_commands: the nodes' commands release */
    int64_t next_now_ns;         /* lockstep: the next tick's clock (the commands gate's stamp) */
};

/* ---- per-tick ---- */

/* SocketCAN's convention: bit 31 marks a 29-bit ID, bit 29 an error frame. */
static uint32_t trace_id(const struct hs_can_frame *f)
{
    return f->id | (f->flags & HS_CAN_FLAG_EXT ? 0x80000000u : 0) |
           (f->flags & HS_CAN_FLAG_ERR ? 0x20000000u : 0);
}

/* ---- clock frames (rt.clock.sync.source can) ----
 * One frame ID on one bus (CANopen SYNC, or a board's own frame) is the controller's clock. It
 * is dispatched like any other frame (a CANopen node may answer SYNC too); besides:
 *   sync      each one's receive time is a clock event for the discipline (hs_bench_sync_event);
 *   lockstep  each one releases one tick. The gate reads the bus into a holding buffer until a
 *             clock frame is in it; the tick then takes the frames up to and including that
 *             one, so what the controller sent before its SYNC drives this tick and what came
 *             after waits for the next. Frames carry the tick clock (simulated time). */
static bool is_clock_frame(const struct can_clock *k, const struct hs_can_frame *f)
{
    return f->id == k->id && !(f->flags & (HS_CAN_FLAG_EXT | HS_CAN_FLAG_ERR | HS_CAN_FLAG_RTR));
}

/* Returns true for the clock frame (the caller does not count it as unclaimed). */
static bool clock_frame_seen(struct hs_bench_can *c, const struct can_bus *b,
                             const struct hs_can_frame *f, int64_t t)
{
    if (c->clock.bus != b || !is_clock_frame(&c->clock, f))
        return false;
    if (!c->clock.lockstep)
        hs_bench_sync_event(c->clock.bench, t);
    return true;
}

/* Where this tick's frames end in the holding buffer. lockstep: after the first clock frame
 * (all of them when the tick runs without one: a wait that expired with on_timeout step).
 * sync: before the first frame received after the tick's planned wake (a late wake must not
 * take the next cycle's frames); without receive times or a planned time, all. */
static unsigned clock_cut(const struct can_clock *k, int64_t real_to_mono)
{
    unsigned i = 0;
    if (k->lockstep) {
        while (i < k->nheld && !is_clock_frame(k, &k->held[i]))
            i++;
        return i < k->nheld ? i + 1 : k->nheld;
    }
    int64_t planned = hs_bench_planned(k->bench);
    while (i < k->nheld && (!planned || k->held[i].rx_time_ns <= 0 ||
                            k->held[i].rx_time_ns + real_to_mono <= planned))
        i++;
    return i;
}

/* RT-safe: this tick's share of the held frames, at most max per call (sync: what the bus
 * has is read into the buffer first). */
static int clock_take(struct hs_bench_can *c, struct can_bus *b, struct hs_can_frame *out,
                      unsigned max, int64_t real_to_mono)
{
    struct can_clock *k = &c->clock;
    if (!k->lockstep && k->taken == 0) {
        for (unsigned round = 0; round < HS_BENCH_CAN_RX_ROUNDS && k->nheld < CLOCK_HELD_MAX;
             round++) {
            unsigned room = CLOCK_HELD_MAX - k->nheld;
            room = room < RX_BATCH ? room : RX_BATCH;
            int got = b->replier ? hs_can_replier_recv(b->replier, k->held + k->nheld, room)
                                 : hs_can_bus_recv(b->bus, k->held + k->nheld, room);
            if (got <= 0)
                break;
            k->nheld += (unsigned)got;
        }
    }
    if (k->taken == 0)
        k->cut = clock_cut(k, real_to_mono);
    unsigned n = k->cut - k->taken < max ? k->cut - k->taken : max;
    memcpy(out, k->held + k->taken, n * sizeof *out);
    k->taken += n;
    if (n < max) { /* this tick's share is out: the rest waits for the next */
        memmove(k->held, k->held + k->cut, (k->nheld - k->cut) * sizeof *k->held);
        k->nheld -= k->cut;
        k->cut = k->taken = 0;
    }
    return (int)n;
}

static bool clock_held(const struct can_clock *k)
{
    for (unsigned i = 0; i < k->nheld; i++)
        if (is_clock_frame(k, &k->held[i]))
            return true;
    return false;
}

/* The lockstep gate (hs_bench_io_ops.wait_release): RT-safe, bounded by deadline_ns. */
static int can_wait_release(void *ctx, struct hs_bench *bench, int64_t deadline_ns)
{
    (void)bench;
    struct hs_bench_can *c = ctx;
    struct can_clock *k = &c->clock;
    int fd = hs_can_bus_fd(k->bus->bus);
    for (;;) {
        if (clock_held(k))
            return 0;
        if (k->nheld == CLOCK_HELD_MAX) { /* a flood without SYNC: the tick takes it all */
            k->full_releases++;
            return 0;
        }
        int got = hs_can_bus_recv(k->bus->bus, k->held + k->nheld, CLOCK_HELD_MAX - k->nheld);
        if (got > 0) {
            k->nheld += (unsigned)got;
            continue;
        }
        if (got < 0 && got != -EAGAIN && got != -EWOULDBLOCK)
            return got;
        int64_t wait = deadline_ns - hs_rt_now_ns();
        if (wait <= 0)
            return -ETIMEDOUT;
        if (fd < 0) { /* a backend without a descriptor: look again shortly */
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        struct timespec ts = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
        if (ppoll(&p, 1, &ts, NULL) < 0 && errno != EINTR)
            return -errno;
    }
}

/* init only: the commands gate needs a node that takes a per-cycle command, or nothing would
 * ever be missing and the ticks would run unreleased. */
static int commands_attach(struct hs_bench_can *c, struct hs_diag *d)
{
    c->commands_gate = true;
    c->tick_time_stamps = true; /* the tick clock is simulated: so are the frames' times */
    for (uint32_t i = 0; i < c->cfg->can.nnodes; i++)
        if (hs_can_port_command_heard(c->nodes[i].port) != -ENOSYS)
            return 0;
    return hs_diag_set(d, -EINVAL, c->cfg->path, 0, 0,
                       "rt.clock.lockstep_source: can_commands, but no node in can.nodes takes a "
                       "per-cycle command");
}

/* init only: rt.clock.sync.source can (sync mode, or lockstep with lockstep_source can_frame),
 * and the commands gate (lockstep with lockstep_source can_commands), on this bench. */
static int clock_attach(struct hs_bench_can *c, struct hs_bench *bench, struct hs_diag *d)
{
    const struct hs_cfg_clock_sync *s = &c->cfg->rt.clock.sync;
    enum hs_clock_mode mode = hs_bench_clock_mode(bench);
    enum hs_cfg_lockstep_source release = hs_config_lockstep_source(c->cfg);
    c->clock.bench = bench;
    if (mode == HS_CLOCK_LOCKSTEP && release == HS_CFG_LOCKSTEP_CAN_COMMANDS)
        return commands_attach(c, d);
    if (s->source != HS_CFG_SYNC_CAN || mode == HS_CLOCK_WALL ||
        (mode == HS_CLOCK_LOCKSTEP && release != HS_CFG_LOCKSTEP_CAN_FRAME))
        return 0;
    c->clock.bus = &c->buses[s->bus_index];
    c->clock.id = s->can_id;
    c->clock.lockstep = mode == HS_CLOCK_LOCKSTEP;
    if (c->clock.lockstep)
        c->tick_time_stamps = true; /* the tick clock is simulated: so are the frames' times */
    c->clock.held = calloc(CLOCK_HELD_MAX, sizeof *c->clock.held);
    if (!c->clock.held)
        return hs_diag_set(d, -ENOMEM, c->cfg->path, 0, 0, "can: out of memory");
    return 0;
}

/* One received frame: counted, traced and offered to the bus's nodes, stamped with now_ns (the
 * tick clock) or its kernel receive time. */
static void take_frame(struct hs_bench_can *c, struct can_bus *b, const struct hs_can_frame *f,
                       int64_t now_ns, int64_t real_to_mono)
{
    if (c->cfg->trace.enabled)
        HS_TRACE_CAN_FRAME(c->tick, 0, (int)(b - c->buses), trace_id(f), f->data, f->len);
    if (f->flags & HS_CAN_FLAG_ERR) {
        b->err_frames++;
        return;
    }
    int64_t t = f->rx_time_ns > 0 && !c->tick_time_stamps ? f->rx_time_ns + real_to_mono : now_ns;
    uint64_t *unclaimed = clock_frame_seen(c, b, f, t) ? &c->clock.frames : &b->unclaimed;
    int i = hs_can_nodes_dispatch(b->nodes, b->nnodes, f, t, unclaimed);
    if (i < 0)
        return;
    struct can_node *n = &c->nodes[b->node_index[i]];
    n->port->last_rx_ns = t;
    if (!n->pending_ns)
        n->pending_ns = t;
}

static void drain_bus(struct hs_bench_can *c, struct can_bus *b, int64_t now_ns,
                      int64_t real_to_mono)
{
    for (unsigned round = 0; round < HS_BENCH_CAN_RX_ROUNDS; round++) {
        int got = c->clock.held && c->clock.bus == b
                      ? clock_take(c, b, b->rx, RX_BATCH, real_to_mono)
                  : b->replier ? hs_can_replier_recv(b->replier, b->rx, RX_BATCH)
                               : hs_can_bus_recv(b->bus, b->rx, RX_BATCH);
        if (got <= 0)
            return;
        for (int k = 0; k < got; k++)
            take_frame(c, b, &b->rx[k], now_ns, real_to_mono);
        if (got < RX_BATCH)
            return;
    }
    b->rx_capped_ticks++;
}

/* RT-safe: the bus state and kernel drops for systemd's STATUS= line. */
static void publish_live(struct can_bus *b)
{
    struct hs_can_state st;
    if (b->replier) { /* the I/O thread writes the receive side: ask it */
        enum hs_can_bus_state bs;
        uint64_t drops;
        hs_can_replier_live(b->replier, &bs, &drops);
        atomic_store_explicit(&b->live_state, (uint32_t)bs, memory_order_relaxed);
        atomic_store_explicit(&b->live_drops, drops, memory_order_relaxed);
    } else if (hs_can_bus_state(b->bus, &st) == 0) {
        atomic_store_explicit(&b->live_state, (uint32_t)st.bus, memory_order_relaxed);
        atomic_store_explicit(&b->live_drops, st.rx_dropped_kernel, memory_order_relaxed);
    }
}

/* RT-safe: drains every bus and offers the frames to the nodes. With the commands gate the
 * gate has taken this cycle's frames already, and what came after waits for the next. */
static void drain_all(struct hs_bench_can *c, int64_t now_ns)
{
    int64_t real_to_mono = hs_rt_now_ns() - hs_rt_realtime_ns();
    for (uint32_t i = 0; i < c->nbuses; i++) {
        struct can_bus *b = &c->buses[i];
        if (!c->commands_gate)
            drain_bus(c, b, now_ns, real_to_mono);
        publish_live(b);
    }
}

/* ---- commands gate (rt.clock.lockstep_source can_commands) ----
 * A tick is released once every node that takes a per-cycle command has accepted one since its
 * last poll (hs_can_port_command_heard). The gate reads the buses one frame at a time and stops
 * at the frame that completes the set, so a controller that runs ahead keeps its next cycle's
 * frames for the next tick; the tick's inputs phase reads nothing more. */
static int commands_missing(const struct hs_bench_can *c)
{
    int missing = 0;
    for (uint32_t i = 0; i < c->nnodes; i++)
        missing += hs_can_port_command_heard(c->nodes[i].port) == 0;
    return missing;
}

int hs_bench_can_commands_missing(struct hs_bench_can *c, int64_t now_ns)
{
    int64_t real_to_mono = hs_rt_now_ns() - hs_rt_realtime_ns();
    int missing = commands_missing(c);
    /* bounded: a flood of frames that completes nothing returns to the caller's deadline */
    for (unsigned n = 0; missing > 0 && n < RX_BATCH * HS_BENCH_CAN_RX_ROUNDS;) {
        unsigned got_any = 0;
        for (uint32_t i = 0; i < c->nbuses && missing > 0; i++) {
            struct can_bus *b = &c->buses[i];
            int got = b->replier ? hs_can_replier_recv(b->replier, b->rx, 1)
                                 : hs_can_bus_recv(b->bus, b->rx, 1);
            if (got < 0 && got != -EAGAIN && got != -EWOULDBLOCK)
                return got;
            if (got <= 0)
                continue;
            take_frame(c, b, b->rx, now_ns, real_to_mono);
            got_any++;
            n++;
            missing = commands_missing(c);
        }
        if (!got_any)
            break;
    }
    return missing;
}

/* The commands gate (hs_bench_io_ops.wait_release): RT-safe, bounded by deadline_ns. Frames are
 * stamped with the tick clock of the tick they release. */
static int can_commands_release(void *ctx, struct hs_bench *bench, int64_t deadline_ns)
{
    (void)bench;
    struct hs_bench_can *c = ctx;
    for (;;) {
        int missing = hs_bench_can_commands_missing(c, c->next_now_ns);
        if (missing <= 0)
            return missing;
        int64_t wait = deadline_ns - hs_rt_now_ns();
        if (wait <= 0)
            return -ETIMEDOUT;
        struct pollfd p[HS_CFG_MAX_BUSES];
        nfds_t np = 0;
        for (uint32_t i = 0; i < c->nbuses; i++) {
            int fd = hs_can_bus_fd(c->buses[i].bus);
            if (fd >= 0)
                p[np++] = (struct pollfd){.fd = fd, .events = POLLIN};
        }
        if (np < c->nbuses) { /* a backend without a descriptor: look again shortly */
            wait = wait < 100000 ? wait : 100000;
            np = 0;
        }
        struct timespec ts = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
        if (ppoll(np ? p : NULL, np, &ts, NULL) < 0 && errno != EINTR)
            return -errno;
    }
}

static int can_inputs(void *ctx, struct hs_bench *bench, int64_t now_ns)
{
    struct hs_bench_can *c = ctx;
    c->next_now_ns = now_ns + hs_bench_tick_period_ns(bench); /* lockstep: no gaps in ticks */
    for (uint32_t i = 0; i < c->nbuses; i++)
        c->buses[i].ntx = 0;
    drain_all(c, now_ns);
    for (uint32_t i = 0; i < c->nnodes; i++) {
        struct can_node *n = &c->nodes[i];
        struct hs_can_port *p = n->port;
        struct can_bus *b = &c->buses[p->cfg->bus_index];
        int k = p->proto->poll(p, bench, now_ns, b->tx + b->ntx, n->tx_max);
        p->frames_ok_at_poll = p->node->stats.frames_ok;
        if (p->replier)
            n->pending_ns = 0; /* answered by the I/O thread */
        n->replied = k > 0;
        b->ntx += (unsigned)(k > 0 ? k : 0);
    }
    return 0;
}

/* unit_ns: 1000 (µs) on the wall clock; a tick's period where frames carry the tick clock, as
 * sent_ns does then: a wall-clock send time against a simulated stamp would mean nothing. */
static void record_latency(struct hs_bench_can *c, int64_t sent_ns, int64_t unit_ns)
{
    for (uint32_t i = 0; i < c->nnodes; i++) {
        struct can_node *n = &c->nodes[i];
        if (!n->replied || !n->pending_ns)
            continue;
        if (n->port->proto->reply_latency) {
            int64_t v = (sent_ns - n->pending_ns) / unit_ns;
            v = v < 0 ? 0 : v > HS_BENCH_CAN_LAT_MAX_US ? HS_BENCH_CAN_LAT_MAX_US : v;
            hs_hist_record(&c->lat, v);
        }
        n->pending_ns = 0;
        n->replied = false;
    }
}

static int can_outputs(void *ctx, struct hs_bench *bench, int64_t now_ns, uint64_t tick)
{
    struct hs_bench_can *c = ctx;
    if (hs_bench_warming_up(bench)) {
        /* Warm-up ticks run back to back: their heartbeats and answers would reach a real bus
         * at many times the configured rate. The nodes' schedules still advance. */
        for (uint32_t i = 0; i < c->nbuses; i++) {
            c->warmup_frames_held += c->buses[i].ntx;
            c->buses[i].ntx = 0;
        }
        return 0;
    }
    for (uint32_t i = 0; i < c->nbuses; i++) {
        struct can_bus *b = &c->buses[i];
        for (unsigned off = 0; off < b->ntx;) {
            unsigned n = b->ntx - off > RX_BATCH ? RX_BATCH : b->ntx - off;
            if (hs_can_bus_send(b->bus, b->tx + off, n) < 0)
                b->send_errors++;
            for (unsigned k = off; k < off + n; k++)
                if (c->cfg->trace.enabled)
                    HS_TRACE_CAN_FRAME(tick, 1, (int)i, trace_id(&b->tx[k]), b->tx[k].data,
                                       b->tx[k].len);
            off += n; /* refused frames are dropped (and counted) by the bus's policy */
        }
        /* nothing of its own to say: the send still runs, so frames a CAN delay fault holds
         * (can_fault_filter.c) and the kept backlog go out on their tick */
        if (!b->ntx && hs_can_bus_send(b->bus, b->tx, 0) < 0)
            b->send_errors++;
        b->ntx = 0;
    }
    if (c->tick_time_stamps)
        record_latency(c, now_ns, hs_bench_tick_period_ns(bench));
    else
        record_latency(c, hs_rt_now_ns(), 1000);
    c->tick = tick + 1;
    return 0;
}

/* ---- safe stop ---- */

static void can_safe_stop(void *ctx, struct hs_bench *bench)
{
    struct hs_bench_can *c = ctx;
    if (c->stopped)
        return;
    c->stopped = true;
    for (uint32_t i = 0; i < c->nbuses; i++) {
        struct can_bus *b = &c->buses[i];
        /* joins within one poll timeout; after it the tick thread owns the bus again, so the
         * counters read at stop are whole */
        hs_can_replier_stop(b->replier);
        unsigned k = 0;
        for (unsigned m = 0; m < b->nnodes && k < RX_BATCH; m++) {
            struct hs_can_port *p = c->nodes[b->node_index[m]].port;
            if (p->proto->stop_frame) /* else: no protocol-defined disable frame */
                k += (unsigned)p->proto->stop_frame(p, bench, &b->rx[k]);
            if (p->proto->stop)
                p->proto->stop(p);
        }
        if (k && hs_can_bus_send(b->bus, b->rx, k) < 0)
            b->send_errors++;
    }
}

void hs_bench_can_emergency_stop(struct hs_bench_can *c, const struct hs_bench *bench)
{
    for (uint32_t i = 0; i < c->nbuses; i++) {
        const struct can_bus *b = &c->buses[i];
        int fd = b->bus ? hs_can_bus_fd(b->bus) : -1;
        for (unsigned m = 0; fd >= 0 && m < b->nnodes; m++) {
            const struct hs_can_port *p = c->nodes[b->node_index[m]].port;
            struct hs_can_frame f;
            if (!p->proto->stop_frame || p->proto->stop_frame(p, bench, &f) != 1)
                continue;
            /* Classic frames only; a raw socket with FD enabled takes them too. */
            struct can_frame w = {.can_id = f.id | ((f.flags & HS_CAN_FLAG_EXT) ? CAN_EFF_FLAG : 0),
                                  .len = f.len};
            memcpy(w.data, f.data, sizeof w.data);
            (void)!send(fd, &w, sizeof w, MSG_DONTWAIT | MSG_NOSIGNAL);
        }
    }
}

static void can_destroy(void *ctx)
{
    struct hs_bench_can *c = ctx;
    if (!c)
        return;
    for (uint32_t i = 0; i < HS_CFG_MAX_BUSES; i++) {
        hs_can_replier_destroy(c->buses[i].replier);
        if (c->bench->can_buses[i] == c->buses[i].bus)
            c->bench->can_buses[i] = NULL;
        hs_can_bus_close(c->buses[i].bus);
        free(c->buses[i].tx);
    }
    for (uint32_t i = 0; i < HS_CFG_MAX_NODES; i++)
        if (c->nodes[i].port)
            c->nodes[i].port->proto->destroy(c->nodes[i].port);
    hs_hist_destroy(&c->lat);
    free(c->clock.held);
    free(c);
}

static const struct hs_bench_io_ops can_ops = {
    .name = "can",
    .inputs = can_inputs,
    .outputs = can_outputs,
    .safe_stop = can_safe_stop,
    .destroy = can_destroy,
};

/* CAN lockstep (rt.clock.lockstep_source can_frame): the clock frame releases the ticks. */
static const struct hs_bench_io_ops can_ops_lockstep = {
    .name = "can",
    .inputs = can_inputs,
    .outputs = can_outputs,
    .safe_stop = can_safe_stop,
    .destroy = can_destroy,
    .wait_release = can_wait_release,
};

/* CAN lockstep (rt.clock.lockstep_source can_commands): the nodes' commands release the ticks. */
static const struct hs_bench_io_ops can_ops_commands = {
    .name = "can",
    .inputs = can_inputs,
    .outputs = can_outputs,
    .safe_stop = can_safe_stop,
    .destroy = can_destroy,
    .wait_release = can_commands_release,
};

/* ---- attach ---- */

/* replies: immediate and MIT nodes on the bus: an I/O thread answers their commands at once. */
static int start_replier(struct hs_bench_can *c, struct hs_bench *bench, uint32_t i,
                         struct hs_diag *d)
{
    const struct hs_cfg_bus *cb = &c->cfg->can.buses[i];
    struct can_bus *b = &c->buses[i];
    /* in simulated time there is no "between ticks" to answer in: ticks answer */
    if (cb->replies != HS_CFG_REPLIES_IMMEDIATE || c->tick_time_stamps)
        return 0;
    for (unsigned m = 0; m < b->nnodes; m++) {
        struct hs_can_port *p = c->nodes[b->node_index[m]].port;
        if (!p->proto->replier_add)
            continue; /* answers with the tick */
        struct hs_diag rd = {0};
        uint32_t slot;
        int r = b->replier ? 0 : hs_can_replier_create(b->bus, &b->replier, &rd);
        if (r == 0)
            r = p->proto->replier_add(p, b->replier, &slot, &rd);
        if (r < 0)
            return hs_diag_set(d, r, c->cfg->path, cb->src.line, cb->src.column,
                               "can.buses[%u].replies: %s", i,
                               rd.msg[0] ? rd.msg : "too many immediate nodes on one bus");
        p->replier = b->replier;
        p->replier_slot = slot;
        /* the initial pose until the first tick publishes, so early commands are answered */
        p->proto->replier_publish(p, bench, hs_rt_now_ns());
    }
    if (!b->replier)
        return 0;
    struct hs_diag rd = {0};
    int prio = cb->reply_priority > 0 ? cb->reply_priority : c->cfg->rt.priority;
    int r = hs_can_replier_start(b->replier, prio, cb->reply_cpu, &rd);
    if (r < 0)
        return hs_diag_set(d, r, c->cfg->path, cb->src.line, cb->src.column,
                           "can.buses[%u].replies: %s", i, rd.msg);
    return 0;
}

static int open_bus(struct hs_bench_can *c, struct hs_bench *bench, uint32_t i,
                    const struct hs_bench_can_opts *o, struct hs_diag *d)
{
    const struct hs_config *cfg = c->cfg;
    const struct hs_cfg_bus *cb = &cfg->can.buses[i];
    struct can_bus *b = &c->buses[i];
    b->cfg = cb;
    struct hs_can_config cc;
    hs_can_config_init(&cc);
    memcpy(cc.iface, cb->interface, sizeof cc.iface);
    cc.iface[sizeof cc.iface - 1] = 0;
    cc.fd = cb->fd;
    cc.batch_max = RX_BATCH;
    cc.recv_error_frames = true;
    cc.tx_policy =
        cb->send_queue_policy == HS_CFG_SEND_KEEP_LATEST ? HS_CAN_TX_KEEP_NEWEST : HS_CAN_TX_DROP;
    if (cb->manage) {
        cc.bitrate_bps = cb->bitrate_bps;
        cc.sample_point_permille = (uint16_t)lround(cb->sample_point * 1000);
        cc.restart_ms = cb->restart_ms;
    }
    bool all_ids = false;
    for (unsigned m = 0; m < b->nnodes; m++) {
        const struct hs_can_port *p = c->nodes[b->node_index[m]].port;
        if (p->proto->filters) {
            all_ids |= !p->proto->filters(p, &cc);
            continue;
        }
        struct hs_cfg_can_claim cl[HS_CFG_CAN_CLAIMS_MAX];
        unsigned ncl = hs_config_can_node_claims(p->cfg, cl);
        for (unsigned k = 0; k < ncl; k++) {
            if (cc.n_filters == HS_CAN_FILTER_MAX) {
                all_ids = true;
                break;
            }
            cc.filters[cc.n_filters++] =
                (struct hs_can_filter){.id = cl[k].id, .mask = cl[k].mask, .ext = cl[k].ext};
        }
    }
    if (c->clock.bus == b && cc.n_filters < HS_CAN_FILTER_MAX)
        cc.filters[cc.n_filters++] =
            (struct hs_can_filter){.id = c->clock.id, .mask = HS_CAN_SFF_MASK, .ext = false};
    else if (c->clock.bus == b)
        all_ids = true;
    if (all_ids)
        cc.n_filters = 0; /* more IDs than kernel filters: the nodes sort the frames */
    const struct hs_can_backend_ops *ops = &hs_can_socketcan_ops;
    if (o && o->backend) {
        ops = o->backend;
        cc.socketpair_fd = o->socketpair_fd[i];
    }
    cc.tap = bench->can_tap;
    cc.tap_ctx = bench->can_tap_ctx;
    struct hs_diag bd = {0};
    int r = hs_can_bus_open(ops, &cc, &b->bus, &bd);
    if (r < 0)
        return hs_diag_set(d, r, cfg->path, cb->src.line, cb->src.column,
                           "can.buses[%u].interface '%s': %s", i, cb->interface, bd.msg);
    bench->can_buses[i] = b->bus;
    r = hs_can_bus_start(b->bus);
    if (r < 0 && r != -ENOSYS)
        return hs_diag_set(d, r, cfg->path, cb->src.line, cb->src.column,
                           "can.buses[%u].interface '%s': cannot start the bus", i, cb->interface);
    return start_replier(c, bench, i, d);
}

static int init_node(struct hs_bench_can *c, struct hs_bench *bench, uint32_t k, struct hs_diag *d)
{
    const struct hs_cfg_node *cn = &c->cfg->can.nodes[k];
    const struct hs_can_protocol *proto = hs_can_protocol_get(cn->protocol);
    struct can_node *n = &c->nodes[k];
    int r = proto->create(bench, k, &n->port, d);
    if (r < 0)
        return r;
    n->tx_max = proto->tx_max ? proto->tx_max(n->port) : HS_CAN_PORT_TX_DEFAULT;
    struct can_bus *b = &c->buses[cn->bus_index];
    b->node_index[b->nnodes] = k;
    b->nodes[b->nnodes++] = n->port->node;
    return 0;
}

int hs_bench_can_attach(struct hs_bench *bench, const struct hs_bench_can_opts *opts,
                        struct hs_bench_can **ret_can, struct hs_diag *d)
{
    const struct hs_config *cfg = hs_bench_config(bench);
    struct hs_bench_can *c = calloc(1, sizeof *c);
    if (!c)
        return hs_diag_set(d, -ENOMEM, cfg->path, 0, 0, "can: out of memory");
    c->bench = bench;
    c->cfg = cfg;
    c->tick_time_stamps = opts && opts->tick_time_stamps;
    int r = 0;
    uint32_t opened = 0;
    if (hs_hist_init(&c->lat, HS_BENCH_CAN_LAT_MAX_US + 1) < 0) {
        r = hs_diag_set(d, -ENOMEM, cfg->path, 0, 0, "can: out of memory");
        goto fail;
    }
    for (uint32_t k = 0; k < cfg->can.nnodes; k++) {
        r = init_node(c, bench, k, d);
        if (r < 0)
            goto fail;
    }
    if ((r = clock_attach(c, bench, d)) < 0)
        goto fail;
    c->nnodes = cfg->can.nnodes;
    for (; opened < cfg->can.nbuses; opened++) {
        struct can_bus *b = &c->buses[opened];
        size_t slots = HS_CAN_PORT_TX_DEFAULT;
        for (unsigned m = 0; m < b->nnodes; m++)
            slots += c->nodes[b->node_index[m]].tx_max;
        b->tx = calloc(slots, sizeof *b->tx);
        if (!b->tx) {
            r = hs_diag_set(d, -ENOMEM, cfg->path, 0, 0, "can: out of memory");
            goto fail;
        }
        r = open_bus(c, bench, opened, opts, d);
        if (r < 0) {
            opened++; /* its socketpair fd, if any, is consumed */
            goto fail;
        }
    }
    c->nbuses = cfg->can.nbuses;
    r = hs_bench_add_io(bench,
                        c->commands_gate    ? &can_ops_commands
                        : c->clock.lockstep ? &can_ops_lockstep
                                            : &can_ops,
                        c);
    if (r < 0) {
        hs_diag_set(d, r, cfg->path, 0, 0, "can: no I/O slot left on the bench");
        goto fail;
    }
    *ret_can = c;
    return 0;
fail:
    if (opts && opts->backend == &hs_can_socketpair_ops)
        for (uint32_t i = opened; i < cfg->can.nbuses; i++)
            if (opts->socketpair_fd[i] >= 0)
                close(opts->socketpair_fd[i]);
    can_destroy(c);
    return r;
}

/* ---- counters ---- */

uint32_t hs_bench_can_bus_count(const struct hs_bench_can *c)
{
    return c ? c->nbuses : 0;
}

int hs_bench_can_bus_stats(const struct hs_bench_can *c, uint32_t i,
                           struct hs_bench_can_bus_stats *ret)
{
    if (!c || i >= c->nbuses)
        return -ENOENT;
    const struct can_bus *b = &c->buses[i];
    struct hs_bench_can_bus_stats s = {
        .name = b->cfg->name,
        .iface = b->cfg->interface,
        .unclaimed = b->unclaimed,
        .err_frames = b->err_frames,
        .send_errors = b->send_errors,
        .rx_capped_ticks = b->rx_capped_ticks,
    };
    int r = hs_can_bus_state(b->bus, &s.state);
    if (r < 0)
        return r;
    if (b->replier) {
        struct hs_can_replier_stats rs;
        hs_can_replier_stats(b->replier, &rs);
        s.state.tx_frames += rs.replies;
        s.state.tx_errors += rs.send_errors;
        s.relay_drops = rs.ring_drops;
    }
    *ret = s;
    return 0;
}

uint32_t hs_bench_can_node_count(const struct hs_bench_can *c)
{
    return c ? c->nnodes : 0;
}

int hs_bench_can_node_stats(const struct hs_bench_can *c, uint32_t i,
                            struct hs_bench_can_node_stats *ret)
{
    if (!c || i >= c->nnodes)
        return -ENOENT;
    const struct hs_can_port *p = c->nodes[i].port;
    ret->name = p->cfg->name;
    ret->protocol = p->proto->name;
    ret->joint = p->cfg->joint[0] ? p->cfg->joint : "(bindings)";
    ret->node = p->node->stats;
    if (p->replier)
        ret->node.tx_frames += hs_can_replier_slot_replies(p->replier, p->replier_slot);
    return 0;
}

bool hs_bench_can_latency_in_ticks(const struct hs_bench_can *c)
{
    return c && c->tick_time_stamps;
}

uint64_t hs_bench_can_latency_us(const struct hs_bench_can *c, double p, double *ret_us)
{
    if (!c || !c->lat.count)
        return 0;
    double ppm = ceil(p * 1e4);
    int64_t v = 0;
    if (hs_hist_percentile(&c->lat, ppm < 1 ? 1 : ppm > 1e6 ? 1000000 : (uint32_t)ppm, &v) == 0)
        *ret_us = (double)v;
    return c->lat.count;
}

int hs_bench_can_bus_live(const struct hs_bench_can *c, uint32_t i, const char **ret_name,
                          enum hs_can_bus_state *ret_state, uint64_t *ret_drops)
{
    if (!c || i >= c->nbuses)
        return -ENOENT;
    const struct can_bus *b = &c->buses[i];
    *ret_name = b->cfg->name;
    *ret_state = (enum hs_can_bus_state)atomic_load_explicit(&((struct can_bus *)b)->live_state,
                                                             memory_order_relaxed);
    *ret_drops = atomic_load_explicit(&((struct can_bus *)b)->live_drops, memory_order_relaxed);
    return 0;
}

const char *hs_bench_can_bus_interface(const struct hs_bench_can *c, uint32_t i)
{
    return c && i < c->nbuses ? c->buses[i].cfg->interface : NULL;
}

int hs_bench_can_link_poll(struct hs_bench_can *c, int64_t now_ns)
{
    int managed = 0;
    for (uint32_t i = 0; c && i < c->nbuses; i++)
        managed += hs_can_bus_link_poll(c->buses[i].bus, now_ns) == 0;
    return managed;
}

int hs_bench_can_link_view(const struct hs_bench_can *c, uint32_t i, struct hs_can_state *ret_state)
{
    if (!c || i >= c->nbuses)
        return -ENOENT;
    return hs_can_bus_link_view(c->buses[i].bus, ret_state);
}

uint64_t hs_bench_can_warmup_frames_held(const struct hs_bench_can *can)
{
    return can->warmup_frames_held;
}

void hs_bench_can_set_tap(struct hs_bench *bench, const struct hs_can_tap_ops *ops, void *ctx)
{
    bench->can_tap = ops;
    bench->can_tap_ctx = ops ? ctx : NULL;
}

struct hs_can_bus *hs_bench_can_bus_find(const struct hs_bench *bench, const char *iface)
{
    const struct hs_config *cfg = bench->cfg;
    for (uint32_t i = 0; i < cfg->can.nbuses && i < HS_CFG_MAX_BUSES; i++)
        if (bench->can_buses[i] && !strcmp(cfg->can.buses[i].interface, iface))
            return bench->can_buses[i];
    return NULL;
}
