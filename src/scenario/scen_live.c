/* Live steps (include/hilsim/scenario_live.h): two scenarios of HS_SCENARIO_LIVE_SLOTS steps.
 * `bind` belongs to the control thread: a step is parsed and bound there into a slot, with the
 * scenario's own parser and binding. `run` belongs to the tick: it holds the running steps,
 * newest first, and is played with the scenario's own timeline and actions. Newest first, so
 * steps that end at the same tick (clear) undo their changes in the reverse order of their
 * starts: three gravity steps cleared at once leave the gravity they found first. A slot moves
 * FREE -> PREPARED (control) -> LIVE (tick: the bound step is copied to the front of run) ->
 * DONE (tick: it ended and left run) -> FREE (control: frees what the binding allocated, which
 * the tick no longer touches). */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_internal.h"
#include "hilsim/scenario_live.h"
#include "scen_internal.h"

#define TIMING_NEVER 3 /* a step whose start never comes: an inert slot, or one cleared */

enum { SLOT_FREE, SLOT_PREPARED, SLOT_LIVE, SLOT_DONE };

struct hs_scenario_live {
    struct hs_scenario *bind; /* control thread */
    struct hs_scenario *run;  /* tick thread */
    _Atomic int state[HS_SCENARIO_LIVE_SLOTS];
    _Atomic uint32_t running;
    uint32_t slot_of[HS_SCENARIO_LIVE_SLOTS]; /* tick: run->steps[i] is bind slot slot_of[i] */
    uint32_t streams;                         /* random streams handed out (control thread) */
};

_Static_assert(HS_SCENARIO_LIVE_SLOTS <= HS_SCEN_MAX_STEPS, "live slots fit a scenario");

static void inert(struct hs_scenario *s, uint32_t k)
{
    memset(&s->specs[k], 0, sizeof s->specs[k]);
    memset(&s->steps[k], 0, sizeof s->steps[k]);
    struct hs__scen_step *st = &s->steps[k];
    st->sp = &s->specs[k];
    st->kind = HS__SCEN_KIND_MAX;
    st->timing = TIMING_NEVER;
    st->onset = -1;
    st->joint = st->sensor = -1;
    st->result_tick = -1;
    st->why = "";
}

static struct hs_scenario *empty(struct hs_bench *bench, uint64_t seed, uint32_t nsteps)
{
    struct hs_scenario *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup("live"))) {
        free(s);
        return NULL;
    }
    s->bench = bench;
    s->seed = seed;
    snprintf(s->name, sizeof s->name, "live");
    s->period_ns = hs_bench_tick_period_ns(bench);
    s->end_tick = HS_SCEN_NEVER;
    s->hold_tick = -1;
    s->duration_s = INFINITY;
    s->nsteps = nsteps;
    for (uint32_t k = 0; k < HS_SCENARIO_LIVE_SLOTS; k++)
        inert(s, k);
    return s;
}

int hs_scenario_live_create(struct hs_bench *bench, uint64_t seed, struct hs_scenario_live **ret)
{
    struct hs_scenario_live *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    l->bind = empty(bench, seed, HS_SCENARIO_LIVE_SLOTS);
    l->run = empty(bench, seed, 0);
    if (!l->bind || !l->run) {
        hs_scenario_live_destroy(l);
        return -ENOMEM;
    }
    /* every open bus gets its fault filter now, before the first tick: a CAN fault injected
     * later only adds rules to it */
    int r = hs__scen_can_filters(l->bind);
    if (r < 0) {
        hs_scenario_live_destroy(l);
        return r;
    }
    *ret = l;
    return 0;
}

static void free_scenario(struct hs_scenario *s)
{
    if (s)
        free(s->path);
    free(s);
}

void hs_scenario_live_destroy(struct hs_scenario_live *l)
{
    if (!l)
        return;
    if (l->bind)
        hs__scen_unbind_can(l->bind);
    /* the allocations are the bound steps'; the running copies share them */
    for (uint32_t k = 0; l->bind && k < HS_SCENARIO_LIVE_SLOTS; k++)
        hs__scen_step_free(&l->bind->steps[k]);
    free_scenario(l->bind);
    free_scenario(l->run);
    free(l);
}

static int refuse(struct hs_diag *d, const struct hs__scen_step_spec *sp, const char *why)
{
    return hs_diag_set(d, -EINVAL, "live", sp->src.line, sp->src.column, "step: %s", why);
}

/* A kind's own limits on a live step (push and gravity: efforts within the bounds the short
 * commands keep, HS_SCENARIO_LIVE_FORCE_MAX_N and the like): a value the plant guard would trip
 * on is refused here, with the step never started, instead of stopping the bench with a plant
 * fault. */
static int bounded(struct hs_diag *d, const struct hs__scen_step_spec *sp)
{
    char why[160];
    const struct hs__scen_kind_ops *o = hs__scen_kind(sp->kind);
    if (o->live_refused && o->live_refused(sp, why, sizeof why))
        return refuse(d, sp, why);
    return 0;
}

static int parse(const char *text, size_t size, const char *base_dir,
                 struct hs__scen_step_spec *ret, struct hs_diag *diag)
{
    struct hs__ctx c = {.file = "live", .base_dir = base_dir, .diag = diag};
    int r = hs__cfg_check_depth(&c, text, size);
    if (r < 0)
        return r;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return hs_diag_set(diag, -ENOMEM, "live", 0, 0, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    if (!yaml_parser_load(&parser, &doc)) {
        r = hs__cfg_syntax_error(&parser, "live", diag);
        yaml_parser_delete(&parser);
        return r;
    }
    c.doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root)
        r = hs_diag_set(diag, -EINVAL, "live", 0, 0,
                        "empty step: give one mapping, e.g. {push: {link: L, force_n: [0, 0, 10]}, "
                        "duration_s: 0.1}");
    else if (root->type == YAML_MAPPING_NODE && hs__cfg_child(&c, root, "at_s"))
        r = hs__cfg_err(&c, hs__cfg_child(&c, root, "at_s"),
                        "step.at_s: a live step starts when it reaches the tick; delay it with "
                        "after_s");
    else
        r = hs__scen_parse_step(&c, root, ret);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return r;
}

static int prepare(struct hs_scenario_live *l, const char *text, size_t size, const char *base_dir,
                   bool client, int path_fd, uint32_t *ret_slot, struct hs_diag *diag)
{
    uint32_t k = 0;
    while (k < HS_SCENARIO_LIVE_SLOTS &&
           atomic_load_explicit(&l->state[k], memory_order_acquire) != SLOT_FREE)
        k++;
    if (k == HS_SCENARIO_LIVE_SLOTS)
        return hs_diag_set(diag, -ENOSPC, "live", 0, 0,
                           "all %d live step slots are in use: wait for a step to end, or clear",
                           HS_SCENARIO_LIVE_SLOTS);
    struct hs_scenario *s = l->bind;
    struct hs__scen_step_spec *sp = &s->specs[k];
    inert(s, k);
    int r = parse(text, strnlen(text, size), base_dir, sp, diag);
    if (r < 0) {
        free(sp->file);
        inert(s, k);
        return r;
    }
    if (sp->after[0])
        r = refuse(diag, sp, "after: a live step cannot follow another step; use after_s");
    else if (hs__scen_is_expectation(sp->kind))
        r = hs_diag_set(diag, -EINVAL, "live", sp->src.line, sp->src.column,
                        "step: %s: expectations belong to a scenario file (scenario start)",
                        hs__scen_kind_names[sp->kind]);
    else
        r = bounded(diag, sp);
    if (r == 0) {
        char *file = sp->file; /* the binding takes the rows; the name is ours */
        sp->no_open = client;
        sp->file_fd1 = client && path_fd >= 0 ? path_fd + 1 : 0;
        r = hs__scen_bind_step(s, k, diag);
        free(file);
        sp->file = NULL;
        sp->file_fd1 = 0;
    } else {
        free(sp->file);
        sp->file = NULL;
    }
    if (r < 0) {
        hs__scen_step_free(&s->steps[k]);
        inert(s, k);
        return r;
    }
    struct hs__scen_step *st = &s->steps[k];
    if (st->timing == 1)
        st->timing = 0; /* after_s counts from the tick that takes the step */
    st->rng = hs__scen_seed(s->seed, l->streams++);
    atomic_store_explicit(&l->state[k], SLOT_PREPARED, memory_order_release);
    *ret_slot = k;
    return 0;
}

int hs_scenario_live_prepare(struct hs_scenario_live *l, const char *text, size_t size,
                             const char *base_dir, uint32_t *ret_slot, struct hs_diag *diag)
{
    return prepare(l, text, size, base_dir, false, -1, ret_slot, diag);
}

int hs_scenario_live_prepare_client(struct hs_scenario_live *l, const char *text, size_t size,
                                    int path_fd, uint32_t *ret_slot, struct hs_diag *diag)
{
    /* "." only resolves the name the messages show: the rows come from path_fd */
    return prepare(l, text, size, ".", true, path_fd, ret_slot, diag);
}

int hs_scenario_live_step_file(const char *text, size_t size, const char *base_dir, char *buf,
                               size_t bufsize)
{
    struct hs__scen_step_spec *sp = calloc(1, sizeof *sp);
    if (!sp)
        return -ENOMEM;
    struct hs_diag d = {0};
    int r = parse(text, strnlen(text, size), base_dir, sp, &d);
    if (r == 0 && sp->file) {
        int n = snprintf(buf, bufsize, "%s", sp->file);
        r = n < 0 || (size_t)n >= bufsize ? -ENAMETOOLONG : 1;
    }
    free(sp->file);
    free(sp);
    return r;
}

void hs_scenario_live_discard(struct hs_scenario_live *l, uint32_t slot)
{
    if (slot >= HS_SCENARIO_LIVE_SLOTS ||
        atomic_load_explicit(&l->state[slot], memory_order_acquire) != SLOT_PREPARED)
        return;
    hs__scen_step_free(&l->bind->steps[slot]);
    inert(l->bind, slot);
    atomic_store_explicit(&l->state[slot], SLOT_FREE, memory_order_release);
}

uint32_t hs_scenario_live_reap(struct hs_scenario_live *l)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < HS_SCENARIO_LIVE_SLOTS; k++) {
        if (atomic_load_explicit(&l->state[k], memory_order_acquire) != SLOT_DONE)
            continue;
        hs__scen_step_free(&l->bind->steps[k]);
        inert(l->bind, k);
        atomic_store_explicit(&l->state[k], SLOT_FREE, memory_order_release);
        n++;
    }
    return n;
}

/* Moves run's steps [from, n) to [to, ...), keeping each step's spec pointer on its spec. */
static void move(struct hs_scenario_live *l, uint32_t to, uint32_t from)
{
    struct hs_scenario *s = l->run;
    uint32_t n = s->nsteps - from;
    memmove(&s->specs[to], &s->specs[from], n * sizeof s->specs[0]);
    memmove(&s->steps[to], &s->steps[from], n * sizeof s->steps[0]);
    memmove(&l->slot_of[to], &l->slot_of[from], n * sizeof l->slot_of[0]);
    for (uint32_t i = to; i < to + n; i++)
        s->steps[i].sp = &s->specs[i];
}

void hs_scenario_live_start(struct hs_scenario_live *l, uint32_t slot)
{
    struct hs_scenario *s = l->run;
    if (slot >= HS_SCENARIO_LIVE_SLOTS || s->nsteps >= HS_SCENARIO_LIVE_SLOTS ||
        atomic_load_explicit(&l->state[slot], memory_order_acquire) != SLOT_PREPARED)
        return;
    move(l, 1, 0);
    s->nsteps++;
    s->specs[0] = l->bind->specs[slot];
    s->steps[0] = l->bind->steps[slot];
    l->slot_of[0] = slot;
    struct hs__scen_step *st = &s->steps[0];
    st->sp = &s->specs[0];
    if (st->timing == 0)
        st->offset += s->k;
    atomic_store_explicit(&l->state[slot], SLOT_LIVE, memory_order_release);
    atomic_store_explicit(&l->running, s->nsteps, memory_order_relaxed);
}

void hs_scenario_live_clear(struct hs_scenario_live *l)
{
    for (uint32_t i = 0; i < l->run->nsteps; i++) {
        l->run->steps[i].repeat = 0;
        l->run->steps[i].timing = TIMING_NEVER;
    }
}

void hs_scenario_live_commands(struct hs_scenario_live *l, int64_t now_ns)
{
    struct hs_scenario *s = l->run;
    s->in_tick = true;
    hs__scen_tick_commands(s, now_ns);
}

void hs_scenario_live_substep(struct hs_scenario_live *l)
{
    if (l->run->in_tick)
        hs__scen_tick_substep(l->run);
}

/* A step has ended when it is inactive and can never be active again. Lost encoder counts stay
 * lost while their step holds its slot, so those steps end only when cleared. */
static bool ended(const struct hs_scenario *s, const struct hs__scen_step *st)
{
    if (st->active)
        return false;
    if (st->repeat == 0 || st->timing == TIMING_NEVER)
        return true;
    const struct hs__scen_kind_ops *o = hs__scen_kind(st->kind);
    if (st->onset < 0 || st->dur == HS_SCEN_NEVER || (o->keeps_slot && o->keeps_slot(st)))
        return false;
    return s->k >= st->onset + (int64_t)(st->repeat - 1) * st->every + st->dur;
}

void hs_scenario_live_readings(struct hs_scenario_live *l)
{
    struct hs_scenario *s = l->run;
    /* the filters live control put on the buses are the bind side's (set at create, only read
     * since): their delay clock moves here, on the tick */
    hs__scen_can_clock(l->bind);
    if (!s->in_tick)
        return;
    hs__scen_tick_readings(s);
    s->in_tick = false;
    for (uint32_t i = s->nsteps; i-- > 0;) {
        if (!ended(s, &s->steps[i]))
            continue;
        uint32_t slot = l->slot_of[i];
        move(l, i, i + 1);
        s->nsteps--;
        inert(s, s->nsteps);
        atomic_store_explicit(&l->state[slot], SLOT_DONE, memory_order_release);
    }
    atomic_store_explicit(&l->running, s->nsteps, memory_order_relaxed);
    s->k++;
}

uint32_t hs_scenario_live_running(const struct hs_scenario_live *l)
{
    return atomic_load_explicit(&((struct hs_scenario_live *)l)->running, memory_order_relaxed);
}

const struct hs_scenario *hs_scenario_live_scenario(const struct hs_scenario_live *l)
{
    return l->run;
}

void hs_scenario_end_steps(struct hs_scenario *s)
{
    for (uint32_t i = 0; i < s->nsteps; i++)
        if (!hs__scen_is_expectation(s->steps[i].kind)) {
            s->steps[i].repeat = 0;
            s->steps[i].timing = TIMING_NEVER;
        }
}

const char *hs_scenario_name(const struct hs_scenario *s)
{
    return s->name;
}
