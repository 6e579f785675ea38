/* The immediate-reply I/O thread (see hilsim/can_replier.h). A real MIT board answers each
 * command from its last sampled state within tens of microseconds; answering from the tick
 * would cost up to a period. The thread answers from the last completed tick's state and leaves
 * the command to the tick, so the plant's command slots keep their single writer. */
#include "hilsim/can_replier.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "can_internal.h"
#include "cia402/cia402_io.h"
#include "hilsim/can_odrive.h"
#include "moteus/moteus.h"

#define RX_BATCH 32
#define POLL_MS 10         /* how soon the thread notices a stop */
#define SEQLOCK_TRIES 1000 /* the writer holds it for three stores; a reader never waits long */

struct slot {
    bool odrive;      /* else MIT */
    uint8_t motor_id; /* MIT: the command ID; ODrive: the node ID */
    uint16_t master_id;
    uint32_t getters;           /* ODrive: cmd IDs answered on request */
    struct hs_mit_limits rl;    /* reply ranges */
    bool ak;                    /* MIT: the 8-byte AK reply (+ temperature byte, error code) */
    _Atomic uint32_t ak_status; /* MIT AK: bytes 6 and 7 of the reply, as the tick built them */
    /* seqlock: odd while the tick writes; MIT: p, v, t as double bit patterns; ODrive: the
     * 8 data bytes of each getter's answer */
    _Atomic uint32_t seq;
    _Atomic uint64_t p, v, t;
    _Atomic uint64_t answer[32];
    _Atomic uint64_t replies;          /* io:w */
    hs_can_replier_answer_fn answerer; /* a protocol's own answers (else MIT/ODrive above) */
    void *answerer_ctx;
    bool moteus; /* moteus: motor_id is the servo ID; the register table */
    _Atomic uint64_t regs[HS_CAN_REPLIER_REGS_MAX];
    struct hs_cia402_io *cia402; /* CiA 402: answers through cia402_io.c; NULL for others */
};
_Static_assert(HS_MT_NREGS <= HS_CAN_REPLIER_REGS_MAX, "moteus register table");

struct hs_can_replier {
    struct hs_can_bus *bus;
    struct slot slots[HS_CAN_REPLIER_MAX_NODES];
    uint32_t nslots;
    pthread_t thread;
    bool running;
    _Atomic bool stop;
    /* single producer (I/O thread) ring to the tick */
    _Atomic uint32_t head, tail;
    struct hs_can_frame ring[HS_CAN_REPLIER_RING];
    _Atomic uint32_t live_state;
    _Atomic uint64_t live_drops;
    _Atomic uint64_t frames, unanswered, send_errors, ring_drops;
};

static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double value(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

int hs_can_replier_create(struct hs_can_bus *bus, struct hs_can_replier **ret_replier,
                          struct hs_diag *d)
{
    if (hs_can_bus_fd(bus) < 0)
        return hs_diag_set(d, -EOPNOTSUPP, NULL, 0, 0,
                           "can: immediate replies need a bus with a socket to wait on");
    struct hs_can_replier *r = calloc(1, sizeof *r);
    if (!r)
        return hs_diag_set(d, -ENOMEM, NULL, 0, 0, "can: out of memory");
    r->bus = bus;
    *ret_replier = r;
    return 0;
}

int hs_can_replier_add_mit(struct hs_can_replier *r, const struct hs_mit_config *cfg,
                           uint32_t *ret_slot)
{
    if (r->running)
        return -EBUSY;
    if (r->nslots == HS_CAN_REPLIER_MAX_NODES)
        return -ENOSPC;
    struct slot *s = &r->slots[r->nslots];
    s->motor_id = cfg->motor_id;
    s->master_id = cfg->master_id;
    s->rl = cfg->limits;
    s->ak = cfg->reply_ak;
    uint8_t st[8] = {0};
    hs_mit_pack_reply_ak_status(cfg->temperature_c, 0, st);
    atomic_init(&s->ak_status, (uint32_t)st[6] | (uint32_t)st[7] << 8);
    if (cfg->reply_current && cfg->i_min < cfg->i_max)
        s->rl.t_min = cfg->i_min, s->rl.t_max = cfg->i_max;
    *ret_slot = r->nslots++;
    return 0;
}

int hs_can_replier_add_odrive(struct hs_can_replier *r, uint8_t node_id, uint32_t getters,
                              uint32_t *ret_slot)
{
    if (r->running)
        return -EBUSY;
    if (r->nslots == HS_CAN_REPLIER_MAX_NODES)
        return -ENOSPC;
    struct slot *s = &r->slots[r->nslots];
    s->odrive = true;
    s->motor_id = node_id;
    s->getters = getters;
    *ret_slot = r->nslots++;
    return 0;
}

int hs_can_replier_add_answerer(struct hs_can_replier *r, hs_can_replier_answer_fn answer,
                                void *ctx, uint32_t *ret_slot)
{
    if (r->running)
        return -EBUSY;
    if (r->nslots == HS_CAN_REPLIER_MAX_NODES)
        return -ENOSPC;
    struct slot *s = &r->slots[r->nslots];
    s->answerer = answer;
    s->answerer_ctx = ctx;
    *ret_slot = r->nslots++;
    return 0;
}

int hs_can_replier_add_cia402(struct hs_can_replier *r, struct hs_cia402_io *io, uint32_t *ret_slot)
{
    if (r->running)
        return -EBUSY;
    if (r->nslots == HS_CAN_REPLIER_MAX_NODES)
        return -ENOSPC;
    r->slots[r->nslots].cia402 = io;
    *ret_slot = r->nslots++;
    return 0;
}

/* RT-safe */
void hs_can_replier_publish_answers(struct hs_can_replier *r, uint32_t slot,
                                    const struct hs_can_frame *frames, unsigned n)
{
    struct slot *s = &r->slots[slot];
    uint32_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (unsigned i = 0; i < n; i++) {
        uint64_t d;
        memcpy(&d, frames[i].data, sizeof d);
        atomic_store_explicit(&s->answer[hs_odrive_cmd_of(frames[i].id)], d, memory_order_relaxed);
    }
    atomic_store_explicit(&s->seq, q + 2, memory_order_release);
}

/* false until the tick has published once */
static bool odrive_answer(struct slot *s, unsigned cmd, uint8_t data[8])
{
    for (int i = 0; i < SEQLOCK_TRIES; i++) {
        uint32_t a = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (a & 1)
            continue;
        uint64_t d = atomic_load_explicit(&s->answer[cmd], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != a)
            continue;
        if (!a)
            return false;
        memcpy(data, &d, 8);
        return true;
    }
    return false;
}

/* RT-safe */
void hs_can_replier_publish(struct hs_can_replier *r, uint32_t slot, double p_rad, double v_rad_s,
                            double t)
{
    struct slot *s = &r->slots[slot];
    uint32_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->p, bits(p_rad), memory_order_relaxed);
    atomic_store_explicit(&s->v, bits(v_rad_s), memory_order_relaxed);
    atomic_store_explicit(&s->t, bits(t), memory_order_relaxed);
    atomic_store_explicit(&s->seq, q + 2, memory_order_release);
}

/* RT-safe */
void hs_can_replier_publish_ak_status(struct hs_can_replier *r, uint32_t slot, double temp_c,
                                      uint8_t error)
{
    uint8_t st[8] = {0};
    hs_mit_pack_reply_ak_status(temp_c, error, st);
    atomic_store_explicit(&r->slots[slot].ak_status, (uint32_t)st[6] | (uint32_t)st[7] << 8,
                          memory_order_relaxed);
}

/* false until the tick has published once */
static bool snapshot(struct slot *s, double *p, double *v, double *t)
{
    for (int i = 0; i < SEQLOCK_TRIES; i++) {
        uint32_t a = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (a & 1)
            continue;
        uint64_t pu = atomic_load_explicit(&s->p, memory_order_relaxed);
        uint64_t vu = atomic_load_explicit(&s->v, memory_order_relaxed);
        uint64_t tu = atomic_load_explicit(&s->t, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != a)
            continue;
        if (!a)
            return false;
        *p = value(pu), *v = value(vu), *t = value(tu);
        return true;
    }
    return false; /* the writer was preempted mid-write all along: no reply beats a torn one */
}

static void send_reply(struct hs_can_replier *r, struct slot *s, const struct hs_can_frame *out)
{
    struct canfd_frame w;
    size_t n = hs__can_frame_to_wire(out, &w);
    if (send(r->bus->fd, &w, n, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)n) {
        atomic_fetch_add_explicit(&s->replies, 1, memory_order_relaxed);
        r->bus->tap->frames(r->bus->tap_ctx, true, out, 1); /* recording */
    } else
        atomic_fetch_add_explicit(&r->send_errors, 1, memory_order_relaxed);
}

/* ODrive: a remote request (or an empty frame) on a getter ID is answered from the answers the
 * tick built with the node's own code. */
static bool answer_odrive(struct hs_can_replier *r, const struct hs_can_frame *f)
{
    if (f->flags & (HS_CAN_FLAG_EXT | HS_CAN_FLAG_ERR | HS_CAN_FLAG_FD) ||
        (!(f->flags & HS_CAN_FLAG_RTR) && f->len != 0))
        return false;
    unsigned cmd = hs_odrive_cmd_of(f->id);
    for (uint32_t k = 0; k < r->nslots; k++) {
        struct slot *s = &r->slots[k];
        if (!s->odrive || hs_odrive_node_of(f->id) != s->motor_id || !(s->getters & (1u << cmd)))
            continue;
        struct hs_can_frame out;
        memset(&out, 0, sizeof out);
        out.id = f->id;
        out.len = 8;
        if (!odrive_answer(s, cmd, out.data)) {
            atomic_fetch_add_explicit(&r->unanswered, 1, memory_order_relaxed);
            return true;
        }
        send_reply(r, s, &out);
        return true;
    }
    return false;
}

/* The slots whose protocol answers for itself. */
static bool answer_custom(struct hs_can_replier *r, const struct hs_can_frame *f)
{
    for (uint32_t k = 0; k < r->nslots; k++) {
        struct slot *s = &r->slots[k];
        if (!s->answerer)
            continue;
        struct hs_can_frame out;
        int a = s->answerer(s->answerer_ctx, f, &out);
        if (a < 0)
            continue;
        if (a == 0)
            atomic_fetch_add_explicit(&r->unanswered, 1, memory_order_relaxed);
        else
            send_reply(r, s, &out);
        return true;
    }
    return false;
}

int hs_can_replier_add_moteus(struct hs_can_replier *r, uint8_t servo_id, uint32_t *ret_slot)
{
    if (r->running)
        return -EBUSY;
    if (r->nslots == HS_CAN_REPLIER_MAX_NODES)
        return -ENOSPC;
    struct slot *s = &r->slots[r->nslots];
    s->moteus = true;
    s->motor_id = servo_id;
    *ret_slot = r->nslots++;
    return 0;
}

/* RT-safe */
void hs_can_replier_publish_regs(struct hs_can_replier *r, uint32_t slot, const double *regs,
                                 unsigned n)
{
    struct slot *s = &r->slots[slot];
    if (n > HS_CAN_REPLIER_REGS_MAX)
        n = HS_CAN_REPLIER_REGS_MAX;
    uint32_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (unsigned i = 0; i < n; i++)
        atomic_store_explicit(&s->regs[i], bits(regs[i]), memory_order_relaxed);
    atomic_store_explicit(&s->seq, q + 2, memory_order_release);
}

/* false until the tick has published once */
static bool moteus_regs(struct slot *s, double *regs)
{
    for (int i = 0; i < SEQLOCK_TRIES; i++) {
        uint32_t a = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (a & 1)
            continue;
        for (unsigned k = 0; k < HS_MT_NREGS; k++)
            regs[k] = value(atomic_load_explicit(&s->regs[k], memory_order_relaxed));
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != a)
            continue;
        return a != 0;
    }
    return false;
}

/* moteus: every frame to a moteus servo is claimed here (none reaches the MIT path); a query
 * without diagnostic-stream subframes is answered from the register table the tick published,
 * byte for byte as the tick's node would answer it. */
static bool answer_moteus(struct hs_can_replier *r, const struct hs_can_frame *f)
{
    if (f->flags & (HS_CAN_FLAG_ERR | HS_CAN_FLAG_RTR) || f->id > 0xFFFF)
        return false;
    for (uint32_t k = 0; k < r->nslots; k++) {
        struct slot *s = &r->slots[k];
        if (!s->moteus || (f->id & 0xFF) != s->motor_id)
            continue;
        if (!(f->id & 0x8000))
            return true; /* no reply asked for */
        struct hs_mt_scan scan;
        if (hs_mt_scan(f->data, f->len, &scan, NULL, NULL, NULL) < 0 || scan.stream)
            return true; /* malformed: no reply; the stream: the tick answers */
        double regs[HS_MT_NREGS];
        if (!moteus_regs(s, regs)) {
            atomic_fetch_add_explicit(&r->unanswered, 1, memory_order_relaxed);
            return true;
        }
        struct hs_can_frame out;
        memset(&out, 0, sizeof out);
        out.id = (uint32_t)s->motor_id << 8 | (f->id >> 8 & 0x7F);
        out.flags = HS_CAN_FLAG_FD | (out.id > HS_CAN_SFF_MASK ? HS_CAN_FLAG_EXT : 0);
        out.len = (uint8_t)hs_mt_reply(&scan, regs, NULL, NULL, out.data);
        if (out.len)
            send_reply(r, s, &out);
        return true;
    }
    return false;
}

/* CiA 402: every such node sees every frame (a SYNC is for all of them); each answers its own
 * SDO requests, its TPDOs' remote requests and its synchronous TPDOs. */
static void answer_cia402(struct hs_can_replier *r, const struct hs_can_frame *f)
{
    int64_t now = -1;
    for (uint32_t k = 0; k < r->nslots; k++) {
        struct slot *s = &r->slots[k];
        if (!s->cia402)
            continue;
        if (now < 0) { /* the event timers' clock, as the tick's (CLOCK_MONOTONIC) */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        }
        struct hs_can_frame out[8];
        int n = hs_cia402_io_answer(s->cia402, f, now, out, 8);
        for (int i = 0; i < n; i++)
            send_reply(r, s, &out[i]);
    }
}

static void answer(struct hs_can_replier *r, const struct hs_can_frame *f)
{
    answer_cia402(r, f);
    if (answer_custom(r, f) || answer_moteus(r, f) || answer_odrive(r, f))
        return;
    if (f->flags & (HS_CAN_FLAG_EXT | HS_CAN_FLAG_ERR | HS_CAN_FLAG_RTR | HS_CAN_FLAG_FD) ||
        f->len != 8)
        return; /* the firmware answers every 8-byte frame on its ID, nothing else */
    for (uint32_t k = 0; k < r->nslots; k++) {
        struct slot *s = &r->slots[k];
        if (s->odrive || s->answerer || s->moteus || s->cia402 || f->id != s->motor_id)
            continue;
        double p, v, t;
        if (!snapshot(s, &p, &v, &t)) {
            atomic_fetch_add_explicit(&r->unanswered, 1, memory_order_relaxed);
            return;
        }
        struct hs_can_frame out;
        memset(&out, 0, sizeof out);
        out.id = s->master_id;
        out.len = s->ak ? 8 : 6;
        hs_mit_pack_reply(&s->rl, s->motor_id, p, v, t, out.data);
        if (s->ak) { /* one word: the temperature and the error code of one tick */
            uint32_t st = atomic_load_explicit(&s->ak_status, memory_order_relaxed);
            out.data[6] = (uint8_t)st, out.data[7] = (uint8_t)(st >> 8);
        }
        send_reply(r, s, &out);
        return;
    }
}

static void push(struct hs_can_replier *r, const struct hs_can_frame *f)
{
    uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (h - t >= HS_CAN_REPLIER_RING) {
        atomic_fetch_add_explicit(&r->ring_drops, 1, memory_order_relaxed);
        return;
    }
    r->ring[h & (HS_CAN_REPLIER_RING - 1)] = *f;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

static unsigned ring_room(struct hs_can_replier *r)
{
    uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    return HS_CAN_REPLIER_RING - (h - t);
}

static void *io_thread(void *arg)
{
    struct hs_can_replier *r = arg;
    struct hs_can_frame rx[RX_BATCH];
    struct pollfd pfd = {.fd = r->bus->fd, .events = POLLIN};
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        /* The tick is behind (a flood): leave the frames in the socket, whose overflow the
         * kernel counts (SO_RXQ_OVFL) as it did before this thread existed. */
        unsigned room = ring_room(r);
        if (room < RX_BATCH) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (poll(&pfd, 1, POLL_MS) <= 0)
            continue;
        int got;
        while (ring_room(r) >= RX_BATCH &&
               (got = hs__can_bus_recv_untapped(r->bus, rx, RX_BATCH)) > 0) {
            /* into the ring before the reply: a command the board has seen answered is sure to
             * take effect at the next tick */
            for (int i = 0; i < got; i++) {
                push(r, &rx[i]);
                answer(r, &rx[i]);
            }
            atomic_fetch_add_explicit(&r->frames, (uint64_t)got, memory_order_relaxed);
        }
        /* this thread is the only writer of the bus's receive-side state while it runs */
        atomic_store_explicit(&r->live_state, (uint32_t)r->bus->state.bus, memory_order_relaxed);
        atomic_store_explicit(&r->live_drops, r->bus->state.rx_dropped_kernel,
                              memory_order_relaxed);
    }
    return NULL;
}

int hs_can_replier_start(struct hs_can_replier *r, int priority, int cpu, struct hs_diag *d)
{
    if (r->running)
        return 0;
    atomic_store(&r->live_state, (uint32_t)r->bus->state.bus);
    atomic_store(&r->live_drops, r->bus->state.rx_dropped_kernel);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0) {
        if (cpu >= CPU_SETSIZE)
            return hs_diag_set(d, -EINVAL, NULL, 0, 0, "reply_cpu %d: no such CPU", cpu);
        CPU_SET(cpu, &set);
    }
    pthread_attr_t a;
    pthread_attr_init(&a);
    int e = cpu >= 0 ? pthread_attr_setaffinity_np(&a, sizeof set, &set) : 0;
    if (e) {
        pthread_attr_destroy(&a);
        return hs_diag_set(d, -e, NULL, 0, 0, "reply_cpu %d: %s", cpu, strerror(e));
    }
    e = EPERM;
    if (priority > 0) {
        struct sched_param sp = {.sched_priority = priority};
        pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
        pthread_attr_setschedpolicy(&a, SCHED_FIFO);
        pthread_attr_setschedparam(&a, &sp);
        e = pthread_create(&r->thread, &a, io_thread, r);
    }
    if (e) { /* no RT privileges (a test, an unprivileged run): the caller's policy */
        pthread_attr_setinheritsched(&a, PTHREAD_INHERIT_SCHED);
        e = pthread_create(&r->thread, &a, io_thread, r);
    }
    pthread_attr_destroy(&a);
    if (e == EINVAL && cpu >= 0)
        return hs_diag_set(d, -e, NULL, 0, 0, "reply_cpu %d: not a CPU this process may use", cpu);
    if (e)
        return hs_diag_set(d, -e, NULL, 0, 0, "can: cannot start the reply thread");
    r->running = true;
    return 0;
}

/* RT-safe */
int hs_can_replier_recv(struct hs_can_replier *r, struct hs_can_frame *out, unsigned max)
{
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    unsigned n = 0;
    for (; n < max && t != h; n++, t++)
        out[n] = r->ring[t & (HS_CAN_REPLIER_RING - 1)];
    atomic_store_explicit(&r->tail, t, memory_order_release);
    /* recorded here, on the tick that takes them, not when this thread received them: a
     * replay then feeds each frame to the very tick that acted on it */
    if (n)
        r->bus->tap->frames(r->bus->tap_ctx, false, out, n);
    return (int)n;
}

void hs_can_replier_live(const struct hs_can_replier *r, enum hs_can_bus_state *ret_state,
                         uint64_t *ret_drops)
{
    struct hs_can_replier *m = (struct hs_can_replier *)r;
    *ret_state = (enum hs_can_bus_state)atomic_load_explicit(&m->live_state, memory_order_relaxed);
    *ret_drops = atomic_load_explicit(&m->live_drops, memory_order_relaxed);
}

uint64_t hs_can_replier_slot_replies(const struct hs_can_replier *r, uint32_t slot)
{
    struct hs_can_replier *m = (struct hs_can_replier *)r;
    return slot < m->nslots ? atomic_load_explicit(&m->slots[slot].replies, memory_order_relaxed)
                            : 0;
}

void hs_can_replier_stats(const struct hs_can_replier *r, struct hs_can_replier_stats *ret)
{
    struct hs_can_replier *m = (struct hs_can_replier *)r;
    memset(ret, 0, sizeof *ret);
    ret->frames = atomic_load(&m->frames);
    for (uint32_t k = 0; k < m->nslots; k++)
        ret->replies += atomic_load(&m->slots[k].replies);
    ret->unanswered = atomic_load(&m->unanswered);
    ret->send_errors = atomic_load(&m->send_errors);
    ret->ring_drops = atomic_load(&m->ring_drops);
}

void hs_can_replier_stop(struct hs_can_replier *r)
{
    if (!r || !r->running)
        return;
    atomic_store(&r->stop, true);
    pthread_join(r->thread, NULL);
    r->running = false;
}

void hs_can_replier_destroy(struct hs_can_replier *r)
{
    if (!r)
        return;
    hs_can_replier_stop(r);
    free(r);
}
