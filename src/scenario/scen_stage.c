/* The scenario as the bench's one scenario stage (hs_bench_io_ops' commands, substep and
 * readings), and its accessors. A tick of the scenario begins in commands (the timeline moves
 * on), acts on the physics in substep, and ends in readings (sensor faults, then the
 * expectations on this tick's truth). Warm-up ticks are not scenario ticks. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scen_internal.h"

static void stage_commands(void *ctx, struct hs_bench *b, int64_t now_ns)
{
    struct hs_scenario *s = ctx;
    if (s->done || hs_bench_warming_up(b))
        return;
    s->in_tick = true;
    hs__scen_tick_commands(s, now_ns);
}

static void stage_substep(void *ctx, struct hs_bench *b, uint32_t substep)
{
    struct hs_scenario *s = ctx;
    (void)b, (void)substep;
    if (s->in_tick)
        hs__scen_tick_substep(s);
}

static void stage_readings(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    struct hs_scenario *s = ctx;
    (void)b, (void)now_ns, (void)tick;
    hs__scen_can_clock(s);
    if (!s->in_tick)
        return;
    hs__scen_tick_readings(s);
    /* A bench in SAFE HOLD moves on its own hold, not the controller's commands: what the
     * expectations would see from then on says nothing about the controller, so they stop
     * being decided and the verdict is ERROR (hs_scenario_finish). */
    if (s->hold_tick < 0 && hs_bench_in_safe_hold(b))
        s->hold_tick = s->k;
    if (s->hold_tick < 0)
        hs__scen_tick_judge(s);
    s->in_tick = false;
    if (++s->k >= s->end_tick)
        s->done = true;
}

static void stage_destroy(void *ctx)
{
    hs_scenario_destroy(ctx);
}

const struct hs_bench_io_ops hs_scenario_stage_ops = {
    .name = "scenario",
    .destroy = stage_destroy,
    .commands = stage_commands,
    .substep = stage_substep,
    .readings = stage_readings,
};

int hs_scenario_attach(struct hs_scenario *s, struct hs_bench *bench)
{
    if (bench != s->bench)
        return -EINVAL;
    return hs_bench_add_io(bench, &hs_scenario_stage_ops, s);
}

bool hs_scenario_done(const struct hs_scenario *s)
{
    return s->done;
}

double hs_scenario_duration_s(const struct hs_scenario *s)
{
    return s->duration_s;
}

uint64_t hs_scenario_ticks(const struct hs_scenario *s)
{
    return (uint64_t)s->k;
}

void hs_scenario_set_stop_cause(struct hs_scenario *s, const char *cause)
{
    snprintf(s->stop_cause, sizeof s->stop_cause, "%s", cause);
}

/* Why the run could not decide the scenario, first cause first: the plant's fault ends the
 * run, a safe hold makes the rest meaningless, an early stop leaves it unplayed. */
static void find_error(struct hs_scenario *s)
{
    const struct hs_world_fault *f = hs_bench_fault(s->bench);
    if (f) {
        char why[400];
        hs_bench_fault_format(s->bench, why, sizeof why);
        snprintf(s->error, sizeof s->error, "plant fault: %s", why);
        s->error_tick = s->k;
    } else if (s->hold_tick >= 0) {
        snprintf(s->error, sizeof s->error,
                 "SAFE HOLD latched (the overrun bucket ran out): the controller no longer "
                 "commanded the plant");
        s->error_tick = s->hold_tick;
    } else if (!s->done && s->end_tick != HS_SCEN_NEVER) {
        snprintf(s->error, sizeof s->error, "stopped early: %s",
                 s->stop_cause[0] ? s->stop_cause : "the run ended before the scenario's end");
        s->error_tick = s->k;
    }
    if (s->error[0])
        snprintf(s->undecided, sizeof s->undecided, "not decided: %s at tick %lld", s->error,
                 (long long)s->error_tick);
}

void hs_scenario_finish(struct hs_scenario *s)
{
    if (s->finished)
        return;
    s->finished = true;
    find_error(s);
    for (uint32_t i = 0; i < s->nsteps; i++) {
        struct hs__scen_step *st = &s->steps[i];
        if (!hs__scen_is_expectation(st->kind) || st->status != HS_SCENARIO_PENDING)
            continue;
        if (s->error[0]) {
            st->status = HS_SCENARIO_ERROR;
            st->why = s->undecided;
            st->result_tick = -1;
            continue;
        }
        const struct hs__scen_kind_ops *o = hs__scen_kind(st->kind);
        if (o->finish)
            o->finish(s, st);
    }
}

static const struct hs__scen_step *expect_at(const struct hs_scenario *s, uint32_t i)
{
    for (uint32_t k = 0; k < s->nsteps; k++)
        if (hs__scen_is_expectation(s->steps[k].kind) && i-- == 0)
            return &s->steps[k];
    return NULL;
}

uint32_t hs_scenario_expect_count(const struct hs_scenario *s)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < s->nsteps; k++)
        n += hs__scen_is_expectation(s->steps[k].kind);
    return n;
}

static void fill_result(const struct hs_scenario *s, const struct hs__scen_step *st,
                        struct hs_scenario_result *ret)
{
    ret->name = st->sp->name[0] ? st->sp->name : st->what;
    ret->what = st->what;
    ret->line = st->sp->src.line;
    ret->status = st->status;
    ret->tick = st->result_tick;
    ret->time_s = st->result_tick < 0 ? NAN : (double)st->result_tick * (double)s->period_ns * 1e-9;
    ret->value = st->result_value;
    ret->why = st->why;
    ret->opened_tick = st->onset;
}

void hs_scenario_result(const struct hs_scenario *s, uint32_t i, struct hs_scenario_result *ret)
{
    const struct hs__scen_step *st = expect_at(s, i);
    *ret = (struct hs_scenario_result){0};
    if (st)
        fill_result(s, st, ret);
}

bool hs_scenario_step_result(const struct hs_scenario *s, uint32_t step,
                             struct hs_scenario_result *ret)
{
    *ret = (struct hs_scenario_result){0};
    if (step >= s->nsteps || !hs__scen_is_expectation(s->steps[step].kind))
        return false;
    fill_result(s, &s->steps[step], ret);
    return true;
}

const char *hs_scenario_step_name(const struct hs_scenario *s, uint32_t step)
{
    return s->steps[step].sp->name;
}

const char *hs_scenario_step_kind(const struct hs_scenario *s, uint32_t step)
{
    return hs__scen_kind_names[s->steps[step].kind];
}

const char *hs_scenario_error(const struct hs_scenario *s, int64_t *ret_tick)
{
    if (!s->finished || !s->error[0])
        return NULL;
    if (ret_tick)
        *ret_tick = s->error_tick;
    return s->error;
}

bool hs_scenario_passed(const struct hs_scenario *s)
{
    if (hs_scenario_error(s, NULL))
        return false;
    for (uint32_t k = 0; k < s->nsteps; k++)
        if (hs__scen_is_expectation(s->steps[k].kind) && s->steps[k].status != HS_SCENARIO_PASS)
            return false;
    return true;
}

uint32_t hs_scenario_step_count(const struct hs_scenario *s)
{
    return s->nsteps;
}

int hs_scenario_find_step(const struct hs_scenario *s, const char *name)
{
    for (uint32_t k = 0; k < s->nsteps; k++)
        if (!strcmp(s->specs[k].name, name))
            return (int)k;
    return -ENOENT;
}

uint64_t hs_scenario_step_active_ticks(const struct hs_scenario *s, uint32_t step)
{
    return s->steps[step].active_ticks;
}

uint64_t hs_scenario_step_activations(const struct hs_scenario *s, uint32_t step)
{
    return s->steps[step].activations;
}

int64_t hs_scenario_step_onset(const struct hs_scenario *s, uint32_t step)
{
    return s->steps[step].onset;
}
