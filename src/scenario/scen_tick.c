/* The scenario's tick: each phase runs its op of every step's kind (scen_kinds.h), in the file's
 * order. Shared by the scenario stage (scen_stage.c) and live steps (scen_live.c). RT-safe: one
 * pass over at most HS_SCEN_MAX_STEPS steps per phase. */
#include "scen_internal.h"

void hs__scen_tick_commands(struct hs_scenario *s, int64_t now_ns)
{
    hs__scen_timeline(s);
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const struct hs__scen_kind_ops *o = hs__scen_kind(s->steps[i].kind);
        if (o->commands)
            o->commands(s, &s->steps[i], now_ns);
    }
}

void hs__scen_tick_substep(struct hs_scenario *s)
{
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const struct hs__scen_kind_ops *o = hs__scen_kind(s->steps[i].kind);
        if (o->substep)
            o->substep(s, &s->steps[i]);
    }
}

void hs__scen_tick_readings(struct hs_scenario *s)
{
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const struct hs__scen_kind_ops *o = hs__scen_kind(s->steps[i].kind);
        if (o->readings)
            o->readings(s, &s->steps[i]);
    }
    /* a stale shm fault holds what the sensor faults made of the readings */
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const struct hs__scen_kind_ops *o = hs__scen_kind(s->steps[i].kind);
        if (o->publish)
            o->publish(s, &s->steps[i]);
    }
}

void hs__scen_tick_judge(struct hs_scenario *s)
{
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const struct hs__scen_kind_ops *o = hs__scen_kind(s->steps[i].kind);
        if (o->judge)
            o->judge(s, &s->steps[i]);
    }
}
