/* The `sync` clock mode's discipline: a second-order (PI) phase-locked loop that locks the tick
 * timeline to an external periodic event (a CANopen SYNC frame, a chosen CAN frame ID, the shm
 * client's command arrival). Pure: it sees timestamps only, never a clock, a socket or a thread,
 * so it is unit-tested on synthetic event streams.
 *
 * Phase. The event should arrive lead_ns before the tick that consumes it (by default half a
 * period: the tick sits mid-way between two events, as far as it can be from both, so jitter up
 * to +-P/2 never moves an event to the wrong tick). For an event at E, fed while the tick planned
 * at T runs, the phase error is E - (T - lead_ns), wrapped into [-P/2, P/2): positive means the
 * event came later than wanted, so the ticks must move later (a longer next period).
 *
 * Loop filter. Once per tick (adjust): with the tick's events averaged into one error e,
 *     freq += ki * e                 (the drift estimate, ns per period; clamped to max slew)
 *     adj   = freq + kp * e          (clamped to +-max_slew: a period never changes by more)
 * and the caller adds adj to every later deadline. Acquiring, the gains are wide and the
 * integrator stops while adj is clamped (no wind-up: a start half a period off pulls in without
 * overshoot); locked, the gains narrow four times so arrival jitter barely moves the ticks.
 *
 * States. FREE (no events: nominal period) -> ACQUIRING (events, |error| not yet small) ->
 * LOCKED (|error| <= lock_window_ns for lock_count ticks in a row) -> HOLDOVER (locked, but a
 * tick came without an event: the drift estimate keeps the phase) -> back to LOCKED on the next
 * event, or FREE after timeout_periods ticks without one (the loss is counted and reported once:
 * the caller warns; the period returns to nominal). While locked, a tick with no event is a
 * missed cycle (counted when the events come back: a stopped source is a loss, not misses) and
 * a tick with two or more is a double; but an event that belongs to a silent tick's slot and
 * was fed only at the next (its receive path stalled past the lead) is counted late, not as a
 * miss and a double: the clock kept its phase, the delivery did not.
 *
 * Threads: event, adjust and the counters belong to one thread (the tick loop's RT thread).
 * hs_clock_discipline_status may be called from any thread (relaxed atomics; not a snapshot of
 * one instant). */
#ifndef HS_RT_CLOCK_DISCIPLINE_H
#define HS_RT_CLOCK_DISCIPLINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hilsim/diag.h"

#define HS_SYNC_SLEW_MAX_PPM 100000 /* 10 %: beyond that the source is not the same period */

struct hs_clock_discipline_config {
    int64_t period_ns;        /* the nominal tick period (> 0) */
    int64_t lead_ns;          /* wanted event-to-tick lead, 0 .. period_ns - 1; < 0: period / 2 */
    int32_t max_slew_ppm;     /* bound on a period's change (and the drift), 1 .. 100000 */
    int64_t lock_window_ns;   /* |phase error| counted as locked; 0: period / 8 */
    uint32_t lock_count;      /* ticks in the window before LOCKED; 0: 16 */
    uint32_t timeout_periods; /* ticks without an event before FREE; 0: 10 */
};

enum hs_sync_state {
    HS_SYNC_FREE,      /* free-running at the nominal period */
    HS_SYNC_ACQUIRING, /* events arrive, phase still pulling in */
    HS_SYNC_LOCKED,
    HS_SYNC_HOLDOVER, /* locked, events missing for fewer than timeout_periods ticks */
    HS_SYNC_STATE_MAX
};

/* What adjust reports as having happened in this tick (for the caller's log and trace). */
enum hs_sync_change {
    HS_SYNC_CHANGE_NONE,
    HS_SYNC_CHANGE_LOCKED, /* entered LOCKED (first lock or after a loss) */
    HS_SYNC_CHANGE_LOST,   /* events stopped: FREE now, running on the nominal period */
    HS_SYNC_CHANGE_MAX
};

/* A status for reports, STATUS= and tests. */
struct hs_sync_status {
    enum hs_sync_state state;
    int64_t phase_error_ns; /* the last tick's averaged phase error */
    double drift_ppm;       /* event period vs nominal: +5000 = events 0.5 % slower (fitted over the
                             * events since the lock; the loop's integrator while not locked) */
    int64_t adjust_ns;      /* the last correction applied to the next deadline */
    uint64_t events;        /* fed in total */
    uint64_t locks;         /* times LOCKED was entered */
    uint64_t losses;        /* times events stopped and the loop went FREE */
    uint64_t missed;        /* ticks without an event while locked, the events coming back after */
    uint64_t doubles;       /* extra events in a tick while LOCKED */
    uint64_t late;    /* events of a silent tick's slot that came only at the next tick (delivered
                       * after that tick looked: a stalled receive path); neither missed nor double */
    uint64_t excused; /* ticks excused from that count (hs_clock_discipline_excuse) */
    uint64_t locked_ticks;        /* ticks spent LOCKED; the error figures below cover these */
    int64_t worst_phase_error_ns; /* largest |phase error| while LOCKED */
    double rms_phase_error_ns;    /* over the LOCKED ticks */
};

/* The drift report's least-squares fit (clock_discipline.c, fit_event). */
struct hs__drift_fit {
    uint64_t points;   /* 0: starts afresh at the next locked tick */
    uint64_t periods;  /* whole periods from the anchor tick to the last point's */
    int64_t anchor_ns; /* planned time of the first point's tick */
    int64_t last_ns;   /* planned time of the last point's tick */
    double mean_x, mean_y, cxy, m2x;
};

/* The discipline: plain storage, embed it anywhere; init fills every field. */
struct hs_clock_discipline {
    struct hs_clock_discipline_config cfg; /* with the defaults filled in */
    double max_slew_ns;                    /* per period */
    double freq_ns;                        /* integrator: drift estimate, ns per period */
    struct hs__drift_fit fit;              /* the reported drift */
    /* this tick's events */
    int64_t tick_planned_ns; /* the tick they were fed in */
    uint32_t tick_events;
    uint32_t tick_late; /* of them, nearest an earlier tick's slot */
    double tick_err_sum;
    /* state */
    uint32_t in_window;      /* consecutive ticks in the lock window */
    uint32_t silent;         /* consecutive ticks without an event */
    uint32_t pending_missed; /* silent locked ticks, missed if the events come back in time */
    bool excused;            /* this tick is not judged for missed/double cycles */
    double sum_sq_err;       /* over locked ticks */
    /* published: rt:w any:r */
    _Atomic int state;
    _Atomic int64_t phase_error_ns, adjust_ns, worst_ns;
    _Atomic int64_t drift_ppb;
    _Atomic uint64_t events, locks, losses, missed, doubles, late, locked_ticks, excused_ticks;
    _Atomic uint64_t rms_ns; /* published root-mean-square, ns */
};

/* init only: checks cfg (errors name the field in d: "lead_ns", ...). */
int hs_clock_discipline_check(const struct hs_clock_discipline_config *cfg, struct hs_diag *d);
/* init only: checks cfg, then sets d up (state FREE, no drift). 0 or -EINVAL. */
int hs_clock_discipline_init(struct hs_clock_discipline *disc,
                             const struct hs_clock_discipline_config *cfg, struct hs_diag *d);

/* RT-safe. One external event at event_ns (CLOCK_MONOTONIC, e.g. a frame's receive time), fed
 * while the tick planned at tick_planned_ns runs (before that tick's adjust). */
void hs_clock_discipline_event(struct hs_clock_discipline *disc, int64_t event_ns,
                               int64_t tick_planned_ns);

/* RT-safe. Closes the current tick: runs the loop filter on its events and returns the ns to add
 * to every later deadline (|result| <= max slew). *ret_change (may be NULL) says whether the
 * state locked or was lost in this tick. */
int64_t hs_clock_discipline_adjust(struct hs_clock_discipline *disc,
                                   enum hs_sync_change *ret_change);

/* RT-safe, before adjust: this tick is not judged for missed or double cycles (the loop skipped
 * periods before it, so its events span several). The filter still runs. */
void hs_clock_discipline_excuse(struct hs_clock_discipline *disc);

/* RT-safe, any thread. */
void hs_clock_discipline_status(const struct hs_clock_discipline *disc, struct hs_sync_status *ret);

/* RT-safe: static strings ("free", "acquiring", "locked", "holdover"). */
const char *hs_sync_state_name(enum hs_sync_state s);

#endif
