#include "hilsim/rt/clock_discipline.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Loop gains per tick. With the correction applied to the next deadline, the phase error obeys
 * z^2 - (2 - kp - ki) z + (1 - kp) = 0; ki = kp^2 / 2 keeps it near critical damping. Acquiring,
 * kp = 1/8 (poles at |z| = 0.935, a time constant of ~15 ticks) pulls in fast; locked, the loop
 * shifts to kp = 1/32 (~64 ticks), so arrival jitter moves the deadlines four times less. */
#define SYNC_KP (1.0 / 8.0)
#define SYNC_KI (1.0 / 128.0)
#define SYNC_KP_LOCKED (1.0 / 32.0)
#define SYNC_KI_LOCKED (1.0 / 2048.0)

static inline void relaxed_store_i64(_Atomic int64_t *a, int64_t v)
{
    atomic_store_explicit(a, v, memory_order_relaxed);
}
static inline void relaxed_store_u64(_Atomic uint64_t *a, uint64_t v)
{
    atomic_store_explicit(a, v, memory_order_relaxed);
}
/* Single writer (the RT thread), any reader: a plain load and store, no read-modify-write. */
static inline uint64_t relaxed_add(_Atomic uint64_t *a, uint64_t n)
{
    uint64_t v = atomic_load_explicit(a, memory_order_relaxed) + n;
    atomic_store_explicit(a, v, memory_order_relaxed);
    return v;
}
static inline uint64_t relaxed_inc(_Atomic uint64_t *a)
{
    return relaxed_add(a, 1);
}

const char *hs_sync_state_name(enum hs_sync_state s)
{
    static const char *const names[HS_SYNC_STATE_MAX] = {
        [HS_SYNC_FREE] = "free",
        [HS_SYNC_ACQUIRING] = "acquiring",
        [HS_SYNC_LOCKED] = "locked",
        [HS_SYNC_HOLDOVER] = "holdover",
    };
    return (unsigned)s < HS_SYNC_STATE_MAX ? names[s] : "?";
}

int hs_clock_discipline_check(const struct hs_clock_discipline_config *c, struct hs_diag *d)
{
    if (c->period_ns <= 0)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "period_ns: %lld must be > 0",
                           (long long)c->period_ns);
    if (c->lead_ns >= c->period_ns)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "lead_ns: %lld must be below the period %lld ns",
                           (long long)c->lead_ns, (long long)c->period_ns);
    if (c->max_slew_ppm < 1 || c->max_slew_ppm > HS_SYNC_SLEW_MAX_PPM)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "max_slew_ppm: %d outside 1..%d",
                           (int)c->max_slew_ppm, HS_SYNC_SLEW_MAX_PPM);
    if (c->lock_window_ns < 0 || c->lock_window_ns > c->period_ns / 2)
        return hs_diag_set(d, -EINVAL, "", 0, 0,
                           "lock_window_ns: %lld outside 0..%lld (half the period)",
                           (long long)c->lock_window_ns, (long long)(c->period_ns / 2));
    return 0;
}

int hs_clock_discipline_init(struct hs_clock_discipline *disc,
                             const struct hs_clock_discipline_config *cfg, struct hs_diag *d)
{
    int r = hs_clock_discipline_check(cfg, d);
    if (r < 0)
        return r;
    memset(disc, 0, sizeof *disc);
    disc->cfg = *cfg;
    struct hs_clock_discipline_config *c = &disc->cfg;
    if (c->lead_ns < 0)
        c->lead_ns = c->period_ns / 2;
    if (c->lock_window_ns == 0)
        c->lock_window_ns = c->period_ns / 8;
    if (c->lock_count == 0)
        c->lock_count = 16;
    if (c->timeout_periods == 0)
        c->timeout_periods = 10;
    disc->max_slew_ns = (double)c->period_ns * c->max_slew_ppm / 1e6;
    atomic_init(&disc->state, HS_SYNC_FREE);
    return 0;
}

void hs_clock_discipline_event(struct hs_clock_discipline *disc, int64_t event_ns,
                               int64_t tick_planned_ns)
{
    const int64_t p = disc->cfg.period_ns;
    /* Where the event should have been for this tick, then the nearest whole period: an event
     * fed a tick late (or early) is still measured against its own tick. */
    int64_t x = event_ns - (tick_planned_ns - disc->cfg.lead_ns);
    int64_t k = x >= 0 ? (x + p / 2) / p : -((-x + p / 2 - 1) / p);
    x -= k * p; /* [-P/2, P/2) */
    disc->tick_planned_ns = tick_planned_ns;
    /* Nearest an earlier tick's slot: delivered after that tick had looked (a receive path
     * stalled past the lead), so it may close that tick's miss instead of doubling this one. */
    if (k < 0)
        disc->tick_late++;
    disc->tick_err_sum += (double)x;
    disc->tick_events++;
    relaxed_inc(&disc->events);
}

static void set_state(struct hs_clock_discipline *disc, enum hs_sync_state s)
{
    atomic_store_explicit(&disc->state, s, memory_order_relaxed);
}

static double clamp(double v, double lim)
{
    return v > lim ? lim : v < -lim ? -lim : v;
}

/* A tick without events: locked loops coast on the drift estimate until the timeout. */
static int64_t silent_tick(struct hs_clock_discipline *disc, enum hs_sync_state s,
                           enum hs_sync_change *change)
{
    if (s == HS_SYNC_FREE)
        return 0;
    if (s == HS_SYNC_LOCKED || s == HS_SYNC_HOLDOVER) {
        disc->pending_missed += !disc->excused; /* missed if the events come back in time */
        if (s == HS_SYNC_LOCKED)
            set_state(disc, HS_SYNC_HOLDOVER);
    }
    if (++disc->silent < disc->cfg.timeout_periods)
        return (int64_t)disc->freq_ns;
    /* Events stopped: back to the nominal period; the caller warns. */
    disc->freq_ns = 0;
    disc->fit.points = 0;
    disc->pending_missed = 0; /* the source stopped: a loss, not missed cycles */
    disc->in_window = 0;
    disc->silent = 0;
    set_state(disc, HS_SYNC_FREE);
    relaxed_inc(&disc->losses);
    relaxed_store_i64(&disc->drift_ppb, 0);
    *change = HS_SYNC_CHANGE_LOST;
    return 0;
}

/* The lock detector: lock_count ticks in the window lock; an error of twice the window (a phase
 * slip) drops back to acquiring. */
static void track_lock(struct hs_clock_discipline *disc, enum hs_sync_state s, double err,
                       enum hs_sync_change *change)
{
    const double win = (double)disc->cfg.lock_window_ns;
    const bool locked = s == HS_SYNC_LOCKED || s == HS_SYNC_HOLDOVER;
    if (fabs(err) <= win) {
        if (disc->in_window < UINT32_MAX)
            disc->in_window++;
    } else {
        disc->in_window = 0;
    }
    /* NOLINTNEXTLINE(bugprone-branch-clone): losing the lock and not having it both acquire */
    if (locked && fabs(err) > 2 * win) {
        set_state(disc, HS_SYNC_ACQUIRING);
    } else if (locked) {
        set_state(disc, HS_SYNC_LOCKED);
    } else if (disc->in_window >= disc->cfg.lock_count) {
        disc->fit.points = 0; /* the drift is fitted afresh over this lock */
        set_state(disc, HS_SYNC_LOCKED);
        relaxed_inc(&disc->locks);
        *change = HS_SYNC_CHANGE_LOCKED;
    } else {
        set_state(disc, HS_SYNC_ACQUIRING);
    }
}

static void account_locked(struct hs_clock_discipline *disc, double err, uint32_t events)
{
    /* An event of an earlier, silent tick's slot that arrived late: that tick's cycle was late,
     * not missed, and this tick's is not a double. One that finds no silent tick to close is a
     * second event for its slot: a double, counted below. */
    uint32_t late = disc->tick_late < disc->pending_missed ? disc->tick_late : disc->pending_missed;
    if (late && events > late) {
        disc->pending_missed -= late;
        events -= late;
        relaxed_add(&disc->late, late);
    }
    if (disc->pending_missed) { /* a gap in the events while locked, now closed */
        relaxed_add(&disc->missed, disc->pending_missed);
        disc->pending_missed = 0;
    }
    if (disc->excused) /* several periods' events in one tick: not a double */
        events = 1;
    if (events > 1)
        relaxed_add(&disc->doubles, events - 1);
    uint64_t n = relaxed_inc(&disc->locked_ticks);
    int64_t a = (int64_t)fabs(err);
    if (a > atomic_load_explicit(&disc->worst_ns, memory_order_relaxed))
        relaxed_store_i64(&disc->worst_ns, a);
    disc->sum_sq_err += err * err;
    relaxed_store_u64(&disc->rms_ns, (uint64_t)sqrt(disc->sum_sq_err / (double)n));
}

/* The reported drift. The integrator is a poor report: it locks before it has converged (the
 * lock window is wide so that the loop locks within a few ticks) and, locked, follows arrival
 * jitter; any average of it inherits both (a 256-tick average read -1200 ppm against a
 * master's -4483 on 100 ms ticks). What the events themselves say is exact: their times against
 * the number of whole periods since the lock lie on a line whose slope is the event period.
 * A running least-squares fit (Welford's updates, so hours of ns stay precise in doubles) of
 * each locked tick's event time less whole nominal periods: the slope is the drift in ns per
 * period, unbiased by the loop and with the jitter averaged over the whole lock. Returns the
 * integrator until two points are in. */
static double fit_event(struct hs_clock_discipline *disc, double err)
{
    struct hs__drift_fit *f = &disc->fit;
    const double p = (double)disc->cfg.period_ns;
    const int64_t t = disc->tick_planned_ns;
    if (f->points == 0) {
        f->anchor_ns = t;
        f->periods = 0;
        f->mean_x = f->mean_y = f->cxy = f->m2x = 0;
    } else {
        /* ticks skipped or silent since the last point: whole periods of the current length
         * (the slew bound keeps that unambiguous for far more than timeout_periods) */
        int64_t k = llround((double)(t - f->last_ns) / (p + disc->freq_ns));
        f->periods += k > 0 ? (uint64_t)k : 1;
    }
    f->last_ns = t;
    const double x = (double)f->periods;
    const double y = (double)(t - f->anchor_ns) - x * p + err;
    f->points++;
    const double dx = x - f->mean_x;
    f->mean_x += dx / (double)f->points;
    f->mean_y += (y - f->mean_y) / (double)f->points;
    f->cxy += dx * (y - f->mean_y);
    f->m2x += dx * (x - f->mean_x);
    return f->points >= 2 && f->m2x > 0 ? f->cxy / f->m2x : disc->freq_ns;
}

int64_t hs_clock_discipline_adjust(struct hs_clock_discipline *disc,
                                   enum hs_sync_change *ret_change)
{
    enum hs_sync_change change = HS_SYNC_CHANGE_NONE;
    const enum hs_sync_state s = atomic_load_explicit(&disc->state, memory_order_relaxed);
    const uint32_t events = disc->tick_events;
    int64_t adj;
    if (events == 0) {
        adj = silent_tick(disc, s, &change);
    } else {
        const double err = disc->tick_err_sum / events;
        disc->tick_events = 0;
        disc->tick_err_sum = 0;
        disc->silent = 0;
        /* PI filter. Acquiring, the integrator holds while the output is clamped (no wind-up
         * while a large offset pulls in); locked, it always integrates, or clamped jitter
         * would bias it. */
        const bool locked = s == HS_SYNC_LOCKED || s == HS_SYNC_HOLDOVER;
        const double kp = locked ? SYNC_KP_LOCKED : SYNC_KP;
        const double ki = locked ? SYNC_KI_LOCKED : SYNC_KI;
        double f = disc->freq_ns + ki * err;
        if (locked || fabs(f + kp * err) <= disc->max_slew_ns)
            disc->freq_ns = clamp(f, disc->max_slew_ns);
        double out = clamp(disc->freq_ns + kp * err, disc->max_slew_ns);
        adj = (int64_t)out;
        relaxed_store_i64(&disc->phase_error_ns, (int64_t)err);
        track_lock(disc, s, err, &change);
        double drift_ns = disc->freq_ns;
        if (atomic_load_explicit(&disc->state, memory_order_relaxed) == HS_SYNC_LOCKED) {
            account_locked(disc, err, events);
            drift_ns = fit_event(disc, err);
        }
        relaxed_store_i64(&disc->drift_ppb,
                          (int64_t)(drift_ns / (double)disc->cfg.period_ns * 1e9));
    }
    if (disc->excused)
        relaxed_inc(&disc->excused_ticks);
    disc->excused = false;
    disc->tick_late = 0;
    relaxed_store_i64(&disc->adjust_ns, adj);
    if (ret_change)
        *ret_change = change;
    return adj;
}

void hs_clock_discipline_excuse(struct hs_clock_discipline *disc)
{
    disc->excused = true;
}

void hs_clock_discipline_status(const struct hs_clock_discipline *disc, struct hs_sync_status *ret)
{
    struct hs_clock_discipline *m = (struct hs_clock_discipline *)disc; /* atomics read only */
    ret->state = (enum hs_sync_state)atomic_load_explicit(&m->state, memory_order_relaxed);
    ret->phase_error_ns = atomic_load_explicit(&m->phase_error_ns, memory_order_relaxed);
    ret->drift_ppm = (double)atomic_load_explicit(&m->drift_ppb, memory_order_relaxed) / 1e3;
    ret->adjust_ns = atomic_load_explicit(&m->adjust_ns, memory_order_relaxed);
    ret->events = atomic_load_explicit(&m->events, memory_order_relaxed);
    ret->locks = atomic_load_explicit(&m->locks, memory_order_relaxed);
    ret->losses = atomic_load_explicit(&m->losses, memory_order_relaxed);
    ret->missed = atomic_load_explicit(&m->missed, memory_order_relaxed);
    ret->doubles = atomic_load_explicit(&m->doubles, memory_order_relaxed);
    ret->late = atomic_load_explicit(&m->late, memory_order_relaxed);
    ret->excused = atomic_load_explicit(&m->excused_ticks, memory_order_relaxed);
    ret->locked_ticks = atomic_load_explicit(&m->locked_ticks, memory_order_relaxed);
    ret->worst_phase_error_ns = atomic_load_explicit(&m->worst_ns, memory_order_relaxed);
    ret->rms_phase_error_ns = (double)atomic_load_explicit(&m->rms_ns, memory_order_relaxed);
}
