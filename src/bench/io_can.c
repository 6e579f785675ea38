/* CAN I/O module: buses and protocol nodes from the config, tick phases, safe stop, counters.
 * See io_can.h for the units and the plant slot mapping. */
#include "io_can.h"

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

#include "hilsim/can_mit.h"
#include "hilsim/can_odrive.h"
#include "hilsim/can_replier.h"
#include "io_can_dbc.h"
#include "rt/trace.h"

#define TWO_PI 6.283185307179586
#define RX_BATCH 64
#define TX_PER_NODE 16

struct can_node {
    union {
        struct hs_can_node base;
        struct hs_mit_node mit;
        struct hs_odrive_node odrive;
    } u;
    struct hs_can_node *node;     /* &u.base, or the DBC node's */
    struct hs__can_dbc_node *dbc; /* protocol dbc: owned */
    const struct hs_cfg_node *cfg;
    uint32_t bus;
    uint32_t joint;
    bool motor_side;    /* ODrive: wire units are the motor's */
    double gear, eta;   /* motor turns per joint turn, gear efficiency */
    double kt;          /* motor torque constant, N·m/A */
    int64_t last_rx_ns; /* CLOCK_MONOTONIC of the last frame the node acted on */
    int64_t pending_ns; /* first command frame not answered yet (MIT latency), 0: none */
    uint32_t node_seq;  /* node command seq at the last mapping */
    uint32_t slot_mode; /* mode written at the last mapping */
    uint64_t slot_seq;
    bool replied;          /* poll produced a frame this tick */
    bool immediate;        /* replies: immediate: its bus's I/O thread answers (MIT commands,
                            * ODrive remote requests) */
    uint32_t replier_slot; /* its snapshot in that thread */
};

struct can_bus {
    const struct hs_cfg_bus *cfg;
    struct hs_can_bus *bus;
    struct hs_can_node *nodes[HS_CFG_MAX_NODES];
    uint32_t node_index[HS_CFG_MAX_NODES]; /* into hs_bench_can.nodes */
    unsigned nnodes;
    uint64_t unclaimed, err_frames, send_errors, rx_capped_ticks;
    struct hs_can_frame rx[RX_BATCH];
    struct hs_can_frame *tx; /* TX_PER_NODE per node (DBC: its tx messages, if more) */
    unsigned ntx;
    /* rt:w supervisor:r — the bus state and kernel drops as of the last tick, for systemd's
     * STATUS= line; the bus's own state is only touched by the tick thread. */
    _Atomic uint32_t live_state;
    _Atomic uint64_t live_drops;
    /* replies: immediate with MIT nodes: owns the bus's receive side (can_replier.h) */
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
    const struct hs_config *cfg;
    struct can_bus buses[HS_CFG_MAX_BUSES];
    uint32_t nbuses;
    struct can_node nodes[HS_CFG_MAX_NODES];
    uint32_t nnodes;
    uint32_t *lat_hist; /* HS_BENCH_CAN_LAT_MAX_US + 1 bins */
    uint64_t lat_n;
    bool stopped;
    bool tick_time_stamps;
    uint64_t tick;               /* for trace events: the tick being served */
    uint64_t warmup_frames_held; /* built during the runner's warm-up and never sent */
    struct can_clock clock;      /* rt.clock.sync.source can: the clock frame */
};

static int64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- per-tick ---- */

static struct hs_can_joint_state joint_state(const struct can_node *n,
                                             const struct hs_joint_reading *r)
{
    struct hs_can_joint_state js = {0};
    if (n->motor_side) {
        js.q_rad = r->q * n->gear;
        js.dq_rad_s = r->dq * n->gear;
        js.tau_nm = r->current * n->kt;
    } else {
        js.q_rad = r->q;
        js.dq_rad_s = r->dq;
        js.tau_nm = r->torque;
    }
    js.current_a = r->current;
    return js;
}

static void map_command(struct can_node *n, const struct hs_can_joint_command *c,
                        const struct hs_bench_joint *j)
{
    struct hs_joint_command *s = j->cmd;
    uint32_t mode = HS_JOINT_MODE_DISABLED;
    double g = n->motor_side ? n->gear : 1.0, g2 = g * g;
    double tau_scale = n->motor_side ? n->gear * n->eta : 1.0;
    double kp = 0, kd = 0, q = 0, dq = 0, tau = 0, current = 0;
    if (c->enabled && c->mode != HS_CAN_JOINT_MODE_OFF) {
        switch (c->mode) {
        case HS_CAN_JOINT_MODE_TORQUE:
            if (n->motor_side) {
                mode = HS_JOINT_MODE_CURRENT;
                current = c->tau_ff_nm / n->kt;
            } else {
                mode = HS_JOINT_MODE_TORQUE;
                tau = c->tau_ff_nm;
            }
            break;
        case HS_CAN_JOINT_MODE_VELOCITY:
        case HS_CAN_JOINT_MODE_POSITION_PD:
        default:
            mode = HS_JOINT_MODE_POSITION;
            kp = c->mode == HS_CAN_JOINT_MODE_VELOCITY ? 0 : c->kp_nm_rad * g2;
            kd = c->kd_nm_s_rad * g2;
            q = c->q_ref_rad / g;
            dq = c->dq_ref_rad_s / g;
            tau = c->tau_ff_nm * tau_scale;
            break;
        }
    }
    if (c->seq != n->node_seq || mode != n->slot_mode) {
        n->node_seq = c->seq;
        n->slot_mode = mode;
        n->slot_seq++;
    }
    if (n->slot_seq == 0)
        return; /* nothing heard yet: the plant keeps its safe behaviour */
    s->mode = mode;
    s->kp = kp, s->kd = kd, s->q = q, s->dq = dq, s->tau_ff = tau;
    s->current = current;
    s->velocity = dq;
    s->rx_time_ns = n->last_rx_ns;
    s->seq = n->slot_seq;
}

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
        int64_t wait = deadline_ns - clock_ns(CLOCK_MONOTONIC);
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

/* init only: rt.clock.sync.source can on this bench. */
static int clock_attach(struct hs_bench_can *c, struct hs_bench *bench, struct hs_diag *d)
{
    const struct hs_cfg_clock_sync *s = &c->cfg->rt.clock.sync;
    enum hs_cfg_clock_mode mode = hs_bench_clock_mode(bench);
    c->clock.bench = bench;
    if (s->source != HS_CFG_SYNC_CAN || mode == HS_CFG_CLOCK_WALL)
        return 0;
    c->clock.bus = &c->buses[s->bus_index];
    c->clock.id = s->can_id;
    c->clock.lockstep = mode == HS_CFG_CLOCK_LOCKSTEP;
    if (c->clock.lockstep)
        c->tick_time_stamps = true; /* the tick clock is simulated: so are the frames' times */
    c->clock.held = calloc(CLOCK_HELD_MAX, sizeof *c->clock.held);
    if (!c->clock.held)
        return hs_diag_set(d, -ENOMEM, c->cfg->path, 0, 0, "can: out of memory");
    return 0;
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
        for (int k = 0; k < got; k++) {
            const struct hs_can_frame *f = &b->rx[k];
            if (c->cfg->trace.enabled)
                HS_TRACE_CAN_FRAME(c->tick, 0, (int)(b - c->buses), trace_id(f), f->data, f->len);
            if (f->flags & HS_CAN_FLAG_ERR) {
                b->err_frames++;
                continue;
            }
            int64_t t =
                f->rx_time_ns > 0 && !c->tick_time_stamps ? f->rx_time_ns + real_to_mono : now_ns;
            uint64_t *unclaimed = clock_frame_seen(c, b, f, t) ? &c->clock.frames : &b->unclaimed;
            int i = hs_can_nodes_dispatch(b->nodes, b->nnodes, f, t, unclaimed);
            if (i < 0)
                continue;
            struct can_node *n = &c->nodes[b->node_index[i]];
            n->last_rx_ns = t;
            if (!n->pending_ns)
                n->pending_ns = t;
        }
        if (got < RX_BATCH)
            return;
    }
    b->rx_capped_ticks++;
}

/* The ODrive getters a remote request may ask for. */
#define ODRIVE_GETTERS                                                                             \
    ((1u << HS_ODRIVE_GET_MOTOR_ERROR) | (1u << HS_ODRIVE_GET_ENCODER_ERROR) |                     \
     (1u << HS_ODRIVE_GET_SENSORLESS_ERROR) | (1u << HS_ODRIVE_GET_ENCODER_ESTIMATES) |            \
     (1u << HS_ODRIVE_GET_ENCODER_COUNT) | (1u << HS_ODRIVE_GET_IQ) |                              \
     (1u << HS_ODRIVE_GET_SENSORLESS_ESTIMATES) | (1u << HS_ODRIVE_GET_VBUS_VOLTAGE))

/* RT-safe. What an immediate node's next replies carry: MIT the joint state; ODrive every
 * getter's answer, built by the node's own code on a scratch copy (asked for every getter, its
 * timers off) so the I/O thread's answers match the tick's byte for byte and the node itself is
 * untouched. */
static void publish_replies(struct can_bus *b, struct can_node *n, int64_t now_ns,
                            const struct hs_can_joint_state *js)
{
    if (n->cfg->protocol == HS_CFG_PROTO_MIT) {
        const struct hs_mit_node *m = &n->u.mit;
        hs_can_replier_publish(b->replier, n->replier_slot, js->q_rad - m->zero_offset_rad,
                               js->dq_rad_s, m->cfg.reply_current ? js->current_a : js->tau_nm);
        return;
    }
    struct hs_odrive_node tmp = n->u.odrive;
    // cppcheck-suppress unreadVariable ; read by hs_can_node_poll through &tmp.base
    tmp.rtr_pending = ODRIVE_GETTERS;
    tmp.cfg.heartbeat_period_ns = tmp.cfg.encoder_period_ns = tmp.cfg.watchdog_timeout_ns = 0;
    struct hs_can_frame f[TX_PER_NODE];
    struct hs_can_joint_command cmd;
    int k = hs_can_node_poll(&tmp.base, now_ns, js, &cmd, f, TX_PER_NODE);
    if (k > 0)
        hs_can_replier_publish_answers(b->replier, n->replier_slot, f, (unsigned)k);
}

static unsigned tx_slots(const struct can_node *n)
{
    unsigned d = n->dbc ? hs__can_dbc_node_tx_max(n->dbc) : 0;
    return d > TX_PER_NODE ? d : TX_PER_NODE;
}

static int can_inputs(void *ctx, struct hs_bench *bench, int64_t now_ns)
{
    struct hs_bench_can *c = ctx;
    int64_t real_to_mono = clock_ns(CLOCK_MONOTONIC) - clock_ns(CLOCK_REALTIME);
    for (uint32_t i = 0; i < c->nbuses; i++) {
        struct can_bus *b = &c->buses[i];
        b->ntx = 0;
        drain_bus(c, b, now_ns, real_to_mono);
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
    for (uint32_t i = 0; i < c->nnodes; i++) {
        struct can_node *n = &c->nodes[i];
        struct can_bus *b = &c->buses[n->bus];
        if (n->dbc) {
            int k = hs__can_dbc_node_poll(n->dbc, bench, now_ns, b->tx + b->ntx, tx_slots(n));
            b->ntx += (unsigned)(k > 0 ? k : 0);
            continue;
        }
        const struct hs_bench_joint *j = hs_bench_joint(bench, n->joint);
        struct hs_can_joint_state js = joint_state(n, hs_bench_joint_reading(bench, n->joint));
        struct hs_can_joint_command cmd;
        bool mit = n->cfg->protocol == HS_CFG_PROTO_MIT;
        if (n->immediate && !mit)
            n->u.odrive.rtr_pending = 0; /* answered by the I/O thread; cyclic frames stay here */
        uint64_t overflow = n->node->stats.tx_overflow;
        int k = hs_can_node_poll(n->node, now_ns, &js, &cmd, b->tx + b->ntx, TX_PER_NODE);
        if (n->immediate)
            publish_replies(b, n, now_ns, &js);
        if (n->immediate && mit) {
            /* already answered by the I/O thread: drop the tick's copies */
            n->node->stats.tx_frames -= (uint64_t)(k > 0 ? k : 0);
            n->node->stats.tx_overflow = overflow; /* copies it had no room for: not lost */
            n->pending_ns = 0;
            k = 0;
        }
        n->replied = k > 0;
        b->ntx += (unsigned)(k > 0 ? k : 0);
        map_command(n, &cmd, j);
    }
    return 0;
}

static void record_latency(struct hs_bench_can *c, int64_t sent_ns)
{
    for (uint32_t i = 0; i < c->nnodes; i++) {
        struct can_node *n = &c->nodes[i];
        if (!n->replied || !n->pending_ns)
            continue;
        if (n->cfg->protocol == HS_CFG_PROTO_MIT) {
            int64_t us = (sent_ns - n->pending_ns) / 1000;
            us = us < 0 ? 0 : us > HS_BENCH_CAN_LAT_MAX_US ? HS_BENCH_CAN_LAT_MAX_US : us;
            c->lat_hist[us]++;
            c->lat_n++;
        }
        n->pending_ns = 0;
        n->replied = false;
    }
}

static int can_outputs(void *ctx, struct hs_bench *bench, int64_t now_ns, uint64_t tick)
{
    (void)now_ns;
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
        b->ntx = 0;
    }
    record_latency(c, clock_ns(CLOCK_MONOTONIC));
    c->tick = tick + 1;
    return 0;
}

/* ---- safe stop ---- */

/* The node's last word: built from the reading alone, without touching the node, so the
 * emergency path below can use it from a signal handler. */
static void stop_frame_fill(const struct can_node *n, const struct hs_joint_reading *r,
                            struct hs_can_frame *f)
{
    memset(f, 0, sizeof *f);
    if (n->cfg->protocol == HS_CFG_PROTO_MIT) {
        const struct hs_mit_node *m = &n->u.mit;
        struct hs_mit_limits rl = m->cfg.limits;
        if (m->cfg.reply_current && m->cfg.i_min < m->cfg.i_max)
            rl.t_min = m->cfg.i_min, rl.t_max = m->cfg.i_max;
        f->id = m->cfg.master_id;
        f->len = 6;
        hs_mit_pack_reply(&rl, m->cfg.motor_id, r->q - m->zero_offset_rad, r->dq, 0.0, f->data);
    } else {
        const struct hs_odrive_node *o = &n->u.odrive;
        f->id = hs_odrive_can_id(o->cfg.node_id, HS_ODRIVE_HEARTBEAT);
        f->len = 8;
        hs_odrive_put_u32(f->data, o->axis_error);
        f->data[4] = HS_ODRIVE_STATE_IDLE;
    }
}

static void stop_frame(struct hs_bench_can *c, struct hs_bench *bench, struct can_node *n,
                       struct hs_can_frame *f)
{
    stop_frame_fill(n, hs_bench_joint_reading(bench, n->joint), f);
    if (n->cfg->protocol == HS_CFG_PROTO_MIT)
        n->u.mit.motor_mode = false;
    else
        n->u.odrive.axis_state = HS_ODRIVE_STATE_IDLE;
    (void)c;
}

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
        for (unsigned m = 0; m < b->nnodes && k < RX_BATCH; m++)
            if (!c->nodes[b->node_index[m]].dbc) /* no protocol-defined disable frame */
                stop_frame(c, bench, &c->nodes[b->node_index[m]], &b->rx[k++]);
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
            const struct can_node *n = &c->nodes[b->node_index[m]];
            if (n->dbc)
                continue;
            struct hs_can_frame f;
            stop_frame_fill(n, hs_bench_joint_reading(bench, n->joint), &f);
            /* Classic frames only (MIT and ODrive); a raw socket with FD enabled takes them too. */
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
        hs_can_bus_close(c->buses[i].bus);
        free(c->buses[i].tx);
    }
    for (uint32_t i = 0; i < HS_CFG_MAX_NODES; i++)
        hs__can_dbc_node_destroy(c->nodes[i].dbc);
    free(c->lat_hist);
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

/* CAN lockstep (rt.clock.sync.source can): the clock frame releases the ticks. */
static const struct hs_bench_io_ops can_ops_lockstep = {
    .name = "can",
    .inputs = can_inputs,
    .outputs = can_outputs,
    .safe_stop = can_safe_stop,
    .destroy = can_destroy,
    .wait_release = can_wait_release,
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
        struct can_node *n = &c->nodes[b->node_index[m]];
        if (n->dbc)
            continue;
        bool mit = n->cfg->protocol == HS_CFG_PROTO_MIT;
        struct hs_diag rd = {0};
        int r = b->replier ? 0 : hs_can_replier_create(b->bus, &b->replier, &rd);
        if (r == 0 && mit)
            r = hs_can_replier_add_mit(b->replier, &n->u.mit.cfg, &n->replier_slot);
        else if (r == 0)
            r = hs_can_replier_add_odrive(b->replier, n->u.odrive.cfg.node_id, ODRIVE_GETTERS,
                                          &n->replier_slot);
        if (r < 0)
            return hs_diag_set(d, r, c->cfg->path, cb->src.line, cb->src.column,
                               "can.buses[%u].replies: %s", i,
                               rd.msg[0] ? rd.msg : "too many immediate nodes on one bus");
        n->immediate = true;
        /* the initial pose until the first tick publishes, so early commands are answered */
        struct hs_can_joint_state js = joint_state(n, hs_bench_joint_reading(bench, n->joint));
        publish_replies(b, n, clock_ns(CLOCK_MONOTONIC), &js);
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
        cc.bitrate_bps = cb->bitrate;
        cc.sample_point_permille = (uint16_t)lround(cb->sample_point * 1000);
        cc.restart_ms = cb->restart_ms;
    }
    bool all_ids = false;
    for (uint32_t k = 0; k < cfg->can.nnodes; k++) {
        const struct hs_cfg_node *n = &cfg->can.nodes[k];
        if (n->bus_index != i)
            continue;
        if (c->nodes[k].dbc) {
            all_ids |= !hs__can_dbc_node_filters(c->nodes[k].dbc, &cc);
            continue;
        }
        if (cc.n_filters == HS_CAN_FILTER_MAX) {
            all_ids = true;
            continue;
        }
        struct hs_can_filter *f = &cc.filters[cc.n_filters++];
        f->ext = false;
        if (n->protocol == HS_CFG_PROTO_MIT)
            f->id = n->id, f->mask = HS_CAN_SFF_MASK;
        else
            f->id = n->id << 5, f->mask = 0x7E0;
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
    struct hs_diag bd = {0};
    int r = hs_can_bus_open(ops, &cc, &b->bus, &bd);
    if (r < 0)
        return hs_diag_set(d, r, cfg->path, cb->src.line, cb->src.column,
                           "can.buses[%u].interface '%s': %s", i, cb->interface, bd.msg);
    r = hs_can_bus_start(b->bus);
    if (r < 0 && r != -ENOSYS)
        return hs_diag_set(d, r, cfg->path, cb->src.line, cb->src.column,
                           "can.buses[%u].interface '%s': cannot start the bus", i, cb->interface);
    return start_replier(c, bench, i, d);
}

static void joint_drive(const struct hs_bench *bench, uint32_t ji, double *gear, double *eta,
                        double *kt, double *current_max)
{
    const struct hs_bench_joint *j = hs_bench_joint(bench, ji);
    const struct hs_link *l = &hs_bench_model(bench, j->body)->links[j->link];
    const struct hs_cfg_actuator *a = hs_config_actuator(hs_bench_config(bench), j->name);
    *gear = isnan(a->gear_ratio) ? l->gear_ratio : a->gear_ratio;
    *eta = isnan(a->gear_efficiency) ? l->gear_efficiency : a->gear_efficiency;
    *kt = isnan(a->torque_const) ? l->torque_const : a->torque_const;
    *current_max = a->current_limit_a;
}

static int init_node(struct hs_bench_can *c, struct hs_bench *bench, uint32_t k, struct hs_diag *d)
{
    const struct hs_config *cfg = c->cfg;
    const struct hs_cfg_node *cn = &cfg->can.nodes[k];
    struct can_node *n = &c->nodes[k];
    n->cfg = cn;
    n->bus = cn->bus_index;
    n->node = &n->u.base;
    struct can_bus *b = &c->buses[n->bus];
    if (cn->protocol == HS_CFG_PROTO_DBC) {
        int r = hs__can_dbc_node_create(bench, k, &n->dbc, d);
        if (r < 0)
            return r;
        n->node = hs__can_dbc_node_base(n->dbc);
        b->node_index[b->nnodes] = k;
        b->nodes[b->nnodes++] = n->node;
        return 0;
    }
    int ji = hs_bench_find_joint(bench, cn->joint);
    if (ji < 0)
        return hs_diag_set(d, -EINVAL, cfg->path, cn->src.line, cn->src.column,
                           "can.nodes[%u].joint '%s': no such joint in the bench", k, cn->joint);
    n->joint = (uint32_t)ji;
    double current_max;
    joint_drive(bench, n->joint, &n->gear, &n->eta, &n->kt, &current_max);
    struct hs_diag nd = {0};
    int r;
    if (cn->protocol == HS_CFG_PROTO_MIT) {
        if (cn->id > 0xFF)
            return hs_diag_set(d, -EINVAL, cfg->path, cn->src.line, cn->src.column,
                               "can.nodes[%u].id 0x%X: MIT motor IDs are 8-bit", k, cn->id);
        const struct hs_cfg_mit *m = &cn->mit;
        struct hs_mit_config mc;
        hs_mit_config_init(&mc, (uint8_t)cn->id, (uint16_t)m->reply_id);
        mc.limits = (struct hs_mit_limits){
            .p_min = m->p_min,
            .p_max = m->p_max,
            .v_min = m->v_min,
            .v_max = m->v_max,
            .kp_min = 0,
            .kp_max = m->kp_max,
            .kd_min = 0,
            .kd_max = m->kd_max,
            .t_min = m->t_min,
            .t_max = m->t_max,
        };
        mc.timeout_ns = (int64_t)llround(m->timeout_s * 1e9);
        mc.reply_current = m->reply == HS_CFG_MIT_REPLY_CURRENT;
        mc.torque_constant_nm_a = fabs(n->kt * n->gear * n->eta);
        mc.i_min = m->i_min;
        mc.i_max = m->i_max;
        r = hs_mit_node_init(&n->u.mit, &mc, &nd);
    } else {
        n->motor_side = true;
        const struct hs_cfg_odrive *o = &cn->odrive;
        struct hs_odrive_config oc;
        hs_odrive_config_init(&oc, (uint8_t)cn->id);
        oc.heartbeat_period_ns = (int64_t)llround(o->heartbeat_period_s * 1e9);
        oc.encoder_period_ns = (int64_t)llround(o->encoder_period_s * 1e9);
        oc.watchdog_timeout_ns = (int64_t)llround(o->watchdog_timeout_s * 1e9);
        oc.pos_gain = o->pos_gain;
        oc.vel_gain = o->vel_gain;
        oc.vel_integrator_gain = o->vel_integrator_gain;
        oc.vel_limit_turn_s = o->vel_limit;
        oc.vel_limit_tolerance = o->vel_limit_tolerance;
        oc.enable_vel_limit = o->enable_vel_limit;
        oc.enable_torque_mode_vel_limit = o->enable_torque_mode_vel_limit;
        oc.torque_constant_nm_a = n->kt;
        if (isfinite(current_max))
            oc.current_limit_a = current_max;
        r = hs_odrive_node_init(&n->u.odrive, &oc, &nd);
    }
    if (r < 0)
        return hs_diag_set(d, r, cfg->path, cn->src.line, cn->src.column, "can.nodes[%u] '%s': %s",
                           k, cn->name, nd.msg);
    b->node_index[b->nnodes] = k;
    b->nodes[b->nnodes++] = &n->u.base;
    hs_bench_claim_joint(bench, n->joint);
    return 0;
}

int hs_bench_can_attach(struct hs_bench *bench, const struct hs_bench_can_opts *opts,
                        struct hs_bench_can **ret_can, struct hs_diag *d)
{
    const struct hs_config *cfg = hs_bench_config(bench);
    struct hs_bench_can *c = calloc(1, sizeof *c);
    if (!c)
        return hs_diag_set(d, -ENOMEM, cfg->path, 0, 0, "can: out of memory");
    c->cfg = cfg;
    c->tick_time_stamps = opts && opts->tick_time_stamps;
    int r = 0;
    uint32_t opened = 0;
    c->lat_hist = calloc(HS_BENCH_CAN_LAT_MAX_US + 1, sizeof *c->lat_hist);
    if (!c->lat_hist) {
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
        size_t slots = TX_PER_NODE;
        for (unsigned m = 0; m < b->nnodes; m++)
            slots += tx_slots(&c->nodes[b->node_index[m]]);
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
    r = hs_bench_add_io(bench, c->clock.lockstep ? &can_ops_lockstep : &can_ops, c);
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
    const struct can_node *n = &c->nodes[i];
    ret->name = n->cfg->name;
    ret->protocol = hs_cfg_can_protocol_name(n->cfg->protocol);
    ret->joint = n->dbc ? "(bindings)" : n->cfg->joint;
    ret->node = n->node->stats;
    if (n->immediate)
        ret->node.tx_frames +=
            hs_can_replier_slot_replies(c->buses[n->bus].replier, n->replier_slot);
    return 0;
}

uint64_t hs_bench_can_latency_us(const struct hs_bench_can *c, double p, double *ret_us)
{
    if (!c || !c->lat_n)
        return 0;
    uint64_t want = (uint64_t)ceil(p / 100.0 * (double)c->lat_n), seen = 0;
    if (want < 1)
        want = 1;
    for (uint32_t us = 0; us <= HS_BENCH_CAN_LAT_MAX_US; us++) {
        seen += c->lat_hist[us];
        if (seen >= want) {
            *ret_us = us;
            break;
        }
    }
    return c->lat_n;
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
