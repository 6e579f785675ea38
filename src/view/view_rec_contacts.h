/* What a recording does not keep, replayed for the page: the contact points and the solver's
 * health (view_rec_contacts.c). Shared by the files of src/view only. */
#ifndef HS_VIEW_REC_CONTACTS_H
#define HS_VIEW_REC_CONTACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/record.h"

/* A contact as the page draws it: where it acts and the force on the link, world frame. */
struct hs__view_rc_point {
    float p[3], f[3];
};

struct hs__view_rc_sample {
    const struct hs__view_rc_point *points;
    uint32_t n, dropped; /* points kept, and made but not kept */
    double health[3];    /* penetration m, joint error m, contact force jump N */
    uint32_t ord;        /* the state it was taken after */
};

struct hs__view_rc_progress {
    uint32_t replayed, states; /* states replayed so far, of the recording's */
    bool done;                 /* the replay ended (whole, stopped, or failed) */
    int64_t diverged_ord;      /* the first state the replay differed from the recording, -1 */
    int rc;                    /* the replay's error (negative errno), 0 */
};

struct hs__view_rc;

/* Starts replaying rec (which must outlive the replay) on a thread of its own, sampling every
 * state whose time crossed the next 1/60 s. -errno when no thread could be started. */
int hs__view_rc_start(const struct hs_recording *rec, struct hs__view_rc **ret);
/* Any thread: the sample for state ord (the last taken at or before it), false when the replay
 * has not got there, or differed from the recording before it (a contact shown must be the
 * run's). */
bool hs__view_rc_at(struct hs__view_rc *rc, uint32_t ord, struct hs__view_rc_sample *ret);
void hs__view_rc_progress(struct hs__view_rc *rc, struct hs__view_rc_progress *ret);
/* Stops the replay at its next tick, waits for it, frees everything. Accepts NULL. */
void hs__view_rc_stop(struct hs__view_rc *rc);

#endif
