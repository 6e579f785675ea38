/* The control stage: the tick's side of live control. At each tick boundary (the commands
 * phase) it pops at most HS_CTL_POP_PER_TICK checked commands from the queue the control socket
 * fills, and plays what they started with the scenario's own code (hilsim/scenario_live.h):
 * injected steps (the short push and fault commands are such steps too) and a scenario file
 * started live, after the bench's own scenario stage. So pushes act before every physics step,
 * actuator faults on the drive's output after the motor model, and sensor faults edit the
 * readings before any I/O module sends them (CAN, shm and the log all carry the faulty value).
 * It also copies the loop's counters for `status`. RT-safe: everything is preallocated at
 * create. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/ctl.h"
#include "hilsim/record.h"
#include "hilsim/scenario_live.h"
#include "ctl_state.h"

struct hs_ctl_stage {
    struct hs_bench *bench;
    int64_t period_ns;
    struct hs_ctl_cmd q[HS_CTL_QUEUE_LEN];
    _Alignas(64) _Atomic uint64_t head;                             /* socket thread writes */
    _Alignas(64) _Atomic uint64_t tail;                             /* tick thread writes */
    _Alignas(64) _Atomic uint64_t accepted, rejected, queue_full;   /* socket thread */
    _Alignas(64) _Atomic uint64_t applied, last_applied_tick, tick; /* tick thread */
    _Atomic uint64_t slots_full, unauthorised;                      /* socket thread */
    bool applied_now;
    /* injected steps: slots bound by the socket thread, played by the tick */
    struct hs_scenario_live *live;
    /* a scenario file started live: the tick's while running, handed over through scen_out */
    struct hs_scenario *scen;                /* tick thread */
    bool scen_stopping;                      /* tick thread: `scenario stop` came */
    struct hs_scenario *_Atomic scen_queued; /* socket thread -> tick (with the queue) */
    struct hs_scenario *_Atomic scen_out;    /* tick -> socket thread */
    atomic_bool scen_out_stopped;
    _Atomic int scen_state;
    uint64_t scen_started;  /* tick thread: scenarios it began, the one running included */
    uint64_t scen_queued_n; /* socket thread: scenarios it queued that the tick will begin */
    /* the loop's counters, a seqlock the tick writes */
    void (*loop_fill)(void *ctx, struct hs_ctl_loop *ret);
    void *loop_ctx;
    _Alignas(64) _Atomic uint32_t loop_seq;
    _Atomic uint64_t loop_v[7]; /* tick, ticks, last_tick, overruns, missed, timeouts, worst */
    atomic_bool loop_safe_hold, loop_running;
    void (*on_destroy)(void *);
    void *on_destroy_arg;
    struct hs__ctl_state *state; /* `ctl state`: copied by the tick on request */
};

_Static_assert((HS_CTL_QUEUE_LEN & (HS_CTL_QUEUE_LEN - 1)) == 0, "queue length: a power of two");

int hs_ctl_stage_create(struct hs_bench *bench, struct hs_ctl_stage **ret)
{
    struct hs_ctl_stage *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->bench = bench;
    s->period_ns = hs_bench_tick_period_ns(bench);
    int r = hs_scenario_live_create(bench, 0, &s->live);
    if (r < 0) {
        free(s);
        return r;
    }
    if ((r = hs__ctl_state_create(bench, &s->state)) < 0) {
        hs_scenario_live_destroy(s->live);
        free(s);
        return r;
    }
    *ret = s;
    return 0;
}

void hs_ctl_stage_destroy(struct hs_ctl_stage *s)
{
    if (!s)
        return;
    if (s->on_destroy)
        s->on_destroy(s->on_destroy_arg);
    bool stopped;
    hs_scenario_destroy(hs_ctl_stage_take_scenario(s, true, &stopped));
    hs_scenario_live_destroy(s->live);
    hs__ctl_state_destroy(s->state);
    free(s);
}

void hs_ctl_stage_on_destroy(struct hs_ctl_stage *s, void (*fn)(void *), void *arg)
{
    s->on_destroy = fn;
    s->on_destroy_arg = arg;
}

int hs_ctl_stage_push(struct hs_ctl_stage *s, const struct hs_ctl_cmd *cmd)
{
    uint64_t head = atomic_load_explicit(&s->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire);
    if (head - tail >= HS_CTL_QUEUE_LEN) {
        atomic_fetch_add_explicit(&s->queue_full, 1, memory_order_relaxed);
        return -ENOBUFS;
    }
    s->q[head & (HS_CTL_QUEUE_LEN - 1)] = *cmd;
    atomic_store_explicit(&s->head, head + 1, memory_order_release);
    atomic_fetch_add_explicit(&s->accepted, 1, memory_order_relaxed);
    return 0;
}

void hs_ctl_stage_count_rejected(struct hs_ctl_stage *s)
{
    atomic_fetch_add_explicit(&s->rejected, 1, memory_order_relaxed);
}

void hs_ctl_stage_count_unauthorised(struct hs_ctl_stage *s)
{
    atomic_fetch_add_explicit(&s->unauthorised, 1, memory_order_relaxed);
}

void hs_ctl_stage_count_slots_full(struct hs_ctl_stage *s)
{
    atomic_fetch_add_explicit(&s->slots_full, 1, memory_order_relaxed);
}

struct hs_scenario_live *hs_ctl_stage_live(struct hs_ctl_stage *s)
{
    return s->live;
}

void hs_ctl_stage_set_loop_source(struct hs_ctl_stage *s,
                                  void (*fill)(void *ctx, struct hs_ctl_loop *ret), void *ctx)
{
    s->loop_fill = fill;
    s->loop_ctx = ctx;
}

/* Tick thread: one writer, so the sequence is odd while the values change. */
static void publish_loop(struct hs_ctl_stage *s, uint64_t tick)
{
    if (!s->loop_fill)
        return;
    struct hs_ctl_loop v;
    s->loop_fill(s->loop_ctx, &v);
    uint32_t seq = atomic_load_explicit(&s->loop_seq, memory_order_relaxed);
    atomic_store_explicit(&s->loop_seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    const uint64_t vals[7] = {tick,
                              v.ticks,
                              v.last_tick,
                              v.overruns,
                              v.missed_periods,
                              v.lockstep_timeouts,
                              (uint64_t)v.worst_tick_ns};
    for (int k = 0; k < 7; k++)
        atomic_store_explicit(&s->loop_v[k], vals[k], memory_order_relaxed);
    atomic_store_explicit(&s->loop_safe_hold, v.safe_hold, memory_order_relaxed);
    atomic_store_explicit(&s->loop_running, v.running, memory_order_relaxed);
    atomic_store_explicit(&s->loop_seq, seq + 2, memory_order_release);
}

bool hs_ctl_stage_loop(const struct hs_ctl_stage *s, struct hs_ctl_loop *ret)
{
    struct hs_ctl_stage *m = (struct hs_ctl_stage *)s; /* atomics: loads only */
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t a = atomic_load_explicit(&m->loop_seq, memory_order_acquire);
        if (a & 1)
            continue;
        uint64_t v[7];
        for (int k = 0; k < 7; k++)
            v[k] = atomic_load_explicit(&m->loop_v[k], memory_order_relaxed);
        bool hold = atomic_load_explicit(&m->loop_safe_hold, memory_order_relaxed);
        bool running = atomic_load_explicit(&m->loop_running, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&m->loop_seq, memory_order_relaxed) != a)
            continue;
        *ret = (struct hs_ctl_loop){.tick = v[0],
                                    .ticks = v[1],
                                    .last_tick = v[2],
                                    .overruns = v[3],
                                    .missed_periods = v[4],
                                    .lockstep_timeouts = v[5],
                                    .worst_tick_ns = (int64_t)v[6],
                                    .safe_hold = hold,
                                    .running = running};
        return a != 0;
    }
    return false; /* the tick kept writing: as good as not published */
}

enum hs_ctl_scen_state hs_ctl_stage_scenario_state(const struct hs_ctl_stage *s)
{
    return (enum hs_ctl_scen_state)atomic_load_explicit(&((struct hs_ctl_stage *)s)->scen_state,
                                                        memory_order_acquire);
}

int hs_ctl_stage_start_scenario(struct hs_ctl_stage *s, struct hs_scenario *scen)
{
    return hs_ctl_stage_start_scenario_rec(s, scen, 0);
}

int hs_ctl_stage_start_scenario_rec(struct hs_ctl_stage *s, struct hs_scenario *scen,
                                    uint32_t rec_seq)
{
    int idle = HS_CTL_SCEN_IDLE;
    if (!atomic_compare_exchange_strong(&s->scen_state, &idle, HS_CTL_SCEN_STARTING))
        return -EBUSY;
    atomic_store_explicit(&s->scen_queued, scen, memory_order_relaxed);
    struct hs_ctl_cmd c = {.kind = HS_CTL_SCENARIO_START, .scenario = scen, .rec_seq = rec_seq};
    int r = hs_ctl_stage_push(s, &c);
    if (r < 0) {
        atomic_store_explicit(&s->scen_queued, NULL, memory_order_relaxed);
        atomic_store_explicit(&s->scen_state, HS_CTL_SCEN_IDLE, memory_order_release);
    } else {
        s->scen_queued_n++; /* the queue keeps every command: the tick counts the same */
    }
    return r;
}

void hs_ctl_stage_scenario_decided(struct hs_ctl_stage *s, const struct hs_scenario *scen,
                                   const char *verdict)
{
    /* one scenario at a time: the one taken is the one queued last */
    hs__ctl_state_decided(s->state, scen, s->scen_queued_n, verdict);
}

struct hs_scenario *hs_ctl_stage_take_scenario(struct hs_ctl_stage *s, bool no_tick,
                                               bool *ret_stopped)
{
    int st = atomic_load_explicit(&s->scen_state, memory_order_acquire);
    struct hs_scenario *out = NULL;
    *ret_stopped = false;
    if (st == HS_CTL_SCEN_ENDED) {
        out = atomic_exchange_explicit(&s->scen_out, NULL, memory_order_acquire);
        *ret_stopped = atomic_load_explicit(&s->scen_out_stopped, memory_order_relaxed);
    } else if (no_tick && st == HS_CTL_SCEN_RUNNING) {
        out = s->scen;
        s->scen = NULL;
        *ret_stopped = true;
    } else if (no_tick && st == HS_CTL_SCEN_STARTING) {
        out = atomic_exchange_explicit(&s->scen_queued, NULL, memory_order_acquire);
        *ret_stopped = true;
    } else {
        return NULL;
    }
    atomic_store_explicit(&s->scen_state, HS_CTL_SCEN_IDLE, memory_order_release);
    return out;
}

void hs_ctl_stage_counters(const struct hs_ctl_stage *s, struct hs_ctl_counters *ret)
{
    struct hs_ctl_stage *m = (struct hs_ctl_stage *)s; /* atomics: loads only */
    *ret = (struct hs_ctl_counters){
        .slots_full = atomic_load_explicit(&m->slots_full, memory_order_relaxed),
        .unauthorised = atomic_load_explicit(&m->unauthorised, memory_order_relaxed),
        .live_steps = hs_scenario_live_running(m->live),
        .accepted = atomic_load_explicit(&m->accepted, memory_order_relaxed),
        .rejected = atomic_load_explicit(&m->rejected, memory_order_relaxed),
        .queue_full = atomic_load_explicit(&m->queue_full, memory_order_relaxed),
        .applied = atomic_load_explicit(&m->applied, memory_order_relaxed),
        .last_applied_tick = atomic_load_explicit(&m->last_applied_tick, memory_order_relaxed),
        .tick = atomic_load_explicit(&m->tick, memory_order_relaxed),
        .state_copies = hs__ctl_state_copies(m->state),
    };
}

/* The recording's note of what the tick applied (RT-safe: the tap pushes a fixed-size record),
 * so a replay applies the same at the same tick. */
static void note(struct hs_ctl_stage *s, uint32_t seq, enum hs_rec_live what, const char *text)
{
    const struct hs_bench_tap *t = hs_bench_tap(s->bench);
    t->event(t->ctx, HS_REC_EV_LIVE, seq, what, text);
}

static void apply(struct hs_ctl_stage *s, const struct hs_ctl_cmd *c)
{
    switch (c->kind) {
    case HS_CTL_CLEAR:
        hs_scenario_live_clear(s->live);
        note(s, 0, HS_REC_LIVE_CLEAR, "clear");
        break;
    case HS_CTL_INJECT:
        hs_scenario_live_start(s->live, c->slot);
        note(s, c->rec_seq, HS_REC_LIVE_INJECT, "inject");
        break;
    case HS_CTL_SCENARIO_START:
        note(s, c->rec_seq, HS_REC_LIVE_SCEN_START, "scenario start");
        s->scen = c->scenario;
        s->scen_started++;
        s->scen_stopping = false;
        atomic_store_explicit(&s->scen_queued, NULL, memory_order_relaxed);
        atomic_store_explicit(&s->scen_state, HS_CTL_SCEN_RUNNING, memory_order_release);
        break;
    case HS_CTL_SCENARIO_STOP:
        if (s->scen && !s->scen_stopping) {
            note(s, 0, HS_REC_LIVE_SCEN_STOP, "scenario stop");
            hs_scenario_end_steps(s->scen);
            s->scen_stopping = true;
        }
        break;
    default: /* the others never reach the queue: status, stop, and the short commands (the
              * server queues the steps they stand for) */
        break;
    }
}

static void stage_commands(void *ctx, struct hs_bench *b, int64_t now_ns)
{
    struct hs_ctl_stage *s = ctx;
    (void)now_ns;
    if (hs_bench_warming_up(b))
        return; /* commands wait for the first real tick */
    uint64_t tail = atomic_load_explicit(&s->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&s->head, memory_order_acquire);
    uint32_t n = 0;
    bool injected = false;
    for (; tail != head && n < HS_CTL_POP_PER_TICK; tail++, n++) {
        const struct hs_ctl_cmd *c = &s->q[tail & (HS_CTL_QUEUE_LEN - 1)];
        /* one step starts per tick, so live steps never start together: each finds the scene
         * the one before left, and they undo in the reverse order */
        if (c->kind == HS_CTL_INJECT && injected)
            break;
        injected |= c->kind == HS_CTL_INJECT;
        apply(s, c);
    }
    atomic_store_explicit(&s->tail, tail, memory_order_release);
    if (n) {
        atomic_fetch_add_explicit(&s->applied, n, memory_order_relaxed);
        s->applied_now = true;
    }
    hs_scenario_live_commands(s->live, now_ns);
    if (s->scen)
        hs_scenario_stage_ops.commands(s->scen, b, now_ns);
}

static void stage_substep(void *ctx, struct hs_bench *b, uint32_t substep)
{
    struct hs_ctl_stage *s = ctx;
    if (hs_bench_warming_up(b))
        return;
    hs_scenario_live_substep(s->live);
    if (s->scen)
        hs_scenario_stage_ops.substep(s->scen, b, substep);
}

static void stage_readings(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    struct hs_ctl_stage *s = ctx;
    if (hs_bench_warming_up(b))
        return;
    hs_scenario_live_readings(s->live);
    bool scen_ended = false;
    if (s->scen) {
        hs_scenario_stage_ops.readings(s->scen, b, now_ns, tick);
        scen_ended = hs_scenario_done(s->scen) || s->scen_stopping;
    }
    /* before the scenario is handed back: from then on the socket thread may destroy it */
    hs__ctl_state_tick(s->state, tick, s->scen, s->scen_started, scen_ended);
    if (s->scen) {
        /* played to its end, or stopped (its steps ended this tick): back to the socket */
        if (scen_ended) {
            atomic_store_explicit(&s->scen_out_stopped, s->scen_stopping, memory_order_relaxed);
            atomic_store_explicit(&s->scen_out, s->scen, memory_order_release);
            atomic_store_explicit(&s->scen_state, HS_CTL_SCEN_ENDED, memory_order_release);
            s->scen = NULL;
        }
    }
    publish_loop(s, tick);
    atomic_store_explicit(&s->tick, tick, memory_order_relaxed);
    if (s->applied_now) {
        atomic_store_explicit(&s->last_applied_tick, tick, memory_order_relaxed);
        s->applied_now = false;
    }
}

static void stage_destroy(void *ctx)
{
    hs_ctl_stage_destroy(ctx);
}

const struct hs_bench_io_ops hs_ctl_stage_ops = {
    .name = "ctl",
    .destroy = stage_destroy,
    .commands = stage_commands,
    .substep = stage_substep,
    .readings = stage_readings,
};

int hs_ctl_stage_attach(struct hs_ctl_stage *s, struct hs_bench *bench)
{
    if (bench != s->bench)
        return -EINVAL;
    return hs_bench_add_io(bench, &hs_ctl_stage_ops, s);
}

void hs_ctl_stage_set_phase_source(struct hs_ctl_stage *s,
                                   void (*take)(void *ctx, struct hs_tick_window *ret), void *ctx)
{
    hs__ctl_state_set_phase_source(s->state, take, ctx);
}

void hs_ctl_stage_set_can(struct hs_ctl_stage *s, const struct hs_bench_can *can)
{
    hs__ctl_state_set_can(s->state, can);
}

int hs_ctl_stage_state(struct hs_ctl_stage *s, int timeout_ms, bool json, char *buf, size_t size,
                       size_t *ret_need)
{
    return hs__ctl_state_read(s->state, timeout_ms, json, buf, size, ret_need);
}

int hs_ctl_stage_state_again(struct hs_ctl_stage *s, bool json, char *buf, size_t size)
{
    return hs__ctl_state_again(s->state, json, buf, size);
}
