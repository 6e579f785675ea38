/* When each step is active: its onset (an absolute tick, a tick relative to an earlier step's
 * onset, or the tick a condition came true plus a delay), its repeats, duration and on/off
 * intermittency. RT-safe: one pass over the steps per tick. */
#include <string.h>

#include "scen_internal.h"

#include "hilsim/record.h"

static bool crossed(const struct hs__scen_step *st, double q)
{
    double v = st->sp->when.passes, a = st->prev_q - v, b = q - v;
    bool up = a < 0 && b >= 0, down = a > 0 && b <= 0;
    switch (st->sp->when.direction) {
    case HS__DIR_RISING:
        return up;
    case HS__DIR_FALLING:
        return down;
    default:
        return up || down;
    }
}

static bool condition(struct hs_scenario *s, struct hs__scen_step *st)
{
    struct hs_bench *b = s->bench;
    if (st->sp->when.node[0]) {
        /* entering: in the state now, in another one at the previous check */
        const char *now = hs__scen_node_state(st->when_port);
        bool entered =
            st->prev_state && strcmp(st->prev_state, now) && !strcmp(now, st->sp->when.state);
        st->prev_state = now;
        return entered;
    }
    if (st->sp->when.first_command) {
        /* safe hold writes every slot itself: that is not the controller speaking */
        if (hs_bench_in_safe_hold(b))
            return false;
        if (st->ref >= 0)
            return hs_bench_joint(b, (uint32_t)st->ref)->cmd->seq > 0;
        for (uint32_t i = 0; i < hs_bench_joint_count(b); i++) {
            const struct hs_bench_joint *j = hs_bench_joint(b, i);
            if (j->external && j->cmd->seq > 0)
                return true;
        }
        return false;
    }
    const struct hs_bench_joint *j = hs_bench_joint(b, (uint32_t)st->ref);
    double q = hs_world_joint_position(hs_bench_world(b), j->body, j->link);
    bool hit = st->have_prev && crossed(st, q);
    st->prev_q = q;
    st->have_prev = true;
    return hit;
}

static bool active_at(const struct hs__scen_step *st, int64_t k)
{
    if (st->onset < 0 || k < st->onset)
        return false;
    int64_t rel = k - st->onset, n = st->every ? rel / st->every : 0;
    if (n >= (int64_t)st->repeat)
        return false;
    int64_t w = rel - n * st->every;
    if (w >= st->dur)
        return false;
    return !st->on || w % (st->on + st->off) < st->on;
}

void hs__scen_timeline(struct hs_scenario *s)
{
    int64_t k = s->k;
    for (uint32_t i = 0; i < s->nsteps; i++) {
        struct hs__scen_step *st = &s->steps[i];
        if (st->onset < 0) {
            if (st->timing == 0)
                st->onset = st->offset;
            else if (st->timing == 1 && s->steps[st->ref].onset >= 0)
                st->onset = s->steps[st->ref].onset + st->offset;
            else if (st->timing == 2 && condition(s, st))
                st->onset = k + st->offset;
        }
        st->was_active = st->active;
        st->active = active_at(st, k);
        if (st->active != st->was_active) { /* the recording's scenario event (record.h) */
            const struct hs_bench_tap *t = hs_bench_tap(s->bench);
            t->event(t->ctx, HS_REC_EV_SCENARIO, i, st->active, st->sp->name);
        }
        if (st->active) {
            st->active_ticks++;
            /* a new activation: the first, a repeat, or the next "on" of an intermittent one */
            if (!st->was_active)
                st->activations++;
        }
    }
}
