/* The step kind registry: the one place a scenario step or fault kind is listed, and the ops
 * table each kind fills in its own file (src/scenario/README.md says what such a file holds).
 *   X(NAME, name)  NAME: its enum hs__scen_kind value is HS__SCEN_<NAME>; name: the step's action
 *                  key in a scenario file (and in reports), and the kind's ops table is
 *                  hs__scen_kind_<name>, defined in the kind's file.
 * From this list the enum, the kind names, the step schema's action rows (scen_schema.c) and the
 * tick's dispatch (scen_tick.c) are generated. The order is the enum's and the schema's: append
 * new kinds at the end (a file's step is the same whatever the order; reports name the kind). */
#ifndef HS_SCEN_KINDS_H
#define HS_SCEN_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfg_internal.h"

#define HS__SCEN_KINDS(X)                                                                          \
    X(PUSH, push)                                                                                  \
    X(PAYLOAD, payload)                                                                            \
    X(SET_POSE, set_pose)                                                                          \
    X(GRAVITY, gravity)                                                                            \
    X(JOINT, joint)                                                                                \
    X(SENSOR_FAULT, sensor_fault)                                                                  \
    X(ACTUATOR_FAULT, actuator_fault)                                                              \
    X(THERMAL, thermal)                                                                            \
    X(CAN_FAULT, can_fault)                                                                        \
    X(SHM_FAULT, shm_fault)                                                                        \
    X(PATH, path)                                                                                  \
    X(EXPECT, expect)                                                                              \
    X(FRICTION, friction)                                                                          \
    X(MATERIAL, material)                                                                          \
    X(NODE_FAULT, node_fault)

#define HS__SCEN_KIND_ENUM(NAME, name) HS__SCEN_##NAME,
enum hs__scen_kind { HS__SCEN_KINDS(HS__SCEN_KIND_ENUM) HS__SCEN_KIND_MAX };
#undef HS__SCEN_KIND_ENUM

struct hs_scenario;
struct hs__scen_step;
struct hs__scen_step_spec;
struct hs_diag;

/* How long a step lasts when its duration_s is not given (and what a given one means). */
enum hs__scen_lasts {
    HS__SCEN_LASTS_TO_END,   /* to the scenario's end */
    HS__SCEN_LASTS_ONE_TICK, /* one tick: it acts once, at its start */
    HS__SCEN_LASTS_WINDOW,   /* one tick; a given duration is a window whose both ends count */
    HS__SCEN_LASTS_MAX
};

/* One kind. Every op may be NULL (the kind does nothing there). The tick ops run for each step
 * of the kind, in the file's order, on every scenario tick (the step active or not: the op looks
 * at st->active and st->was_active); RT-safe: no allocation, no stdio, bounded work. */
struct hs__scen_kind_ops {
    /* The action's keys (fields at offsets in struct hs__scen_step_spec: the targets, the file,
     * the kind's own struct through HS__SCEN_OWN_FS) and its check, which gives the own keys not
     * given their defaults (HS__SCEN_OWN_DEFAULTS). */
    struct hs__cfg_table schema;
    enum hs__scen_lasts lasts;
    /* Why a step of the kind may not repeat (NULL: it may). */
    const char *no_repeat;
    /* init only: the kind's own binding, after the targets (joint, sensor, link) and the timing
     * are bound; may allocate into the step (hs__scen_step_free frees it). Errors name the file,
     * line and key through diag. */
    int (*bind)(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag);
    /* The commands phase, after the timeline moved: the world and the command slots. */
    void (*commands)(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns);
    /* Before every physics step (ODE clears forces after each). */
    void (*substep)(struct hs_scenario *s, struct hs__scen_step *st);
    /* The readings phase: edits this tick's published readings. */
    void (*readings)(struct hs_scenario *s, struct hs__scen_step *st);
    /* After every step's readings op: what is published, as the faults left it. */
    void (*publish)(struct hs_scenario *s, struct hs__scen_step *st);
    /* Last, on the truth, unless the bench is in SAFE HOLD: an expectation's judgement. A kind
     * with judge is an expectation: its steps make the verdict. */
    void (*judge)(struct hs_scenario *s, struct hs__scen_step *st);
    /* init only, when the run ended without an error (hs_scenario_finish): the verdict of an
     * expectation still pending. */
    void (*finish)(struct hs_scenario *s, struct hs__scen_step *st);
    /* init only: the summary's words on step i after its activity (may be NULL). */
    void (*summary)(const struct hs_scenario *s, uint32_t i, FILE *out);
    /* init only: frees what bind allocated in the step's own state (and NULLs it); called for
     * a step bound or not (then zeroed). */
    void (*release)(struct hs__scen_step *st);
    /* Live steps (scen_live.c). live_refused: why the step may not run live (writes why, returns
     * true), e.g. an effort the plant guard would trip on. keeps_slot: the step's effect
     * outlives its activity (lost encoder counts), so it ends only when cleared. */
    bool (*live_refused)(const struct hs__scen_step_spec *sp, char *why, size_t size);
    bool (*keeps_slot)(const struct hs__scen_step *st);
};

#define HS__SCEN_KIND_DECL(NAME, name) extern const struct hs__scen_kind_ops hs__scen_kind_##name;
HS__SCEN_KINDS(HS__SCEN_KIND_DECL)
#undef HS__SCEN_KIND_DECL

/* The kind's ops; HS__SCEN_KIND_MAX (an inert live slot) has none. */
const struct hs__scen_kind_ops *hs__scen_kind(enum hs__scen_kind kind);
/* Whether the kind is an expectation (it has judge): its steps make the verdict, they are not
 * played live, and the summary lists them as expectations, not steps. */
bool hs__scen_is_expectation(enum hs__scen_kind kind);
extern const char *const hs__scen_kind_names[]; /* NULL-terminated, in the enum's order */

/* scen_tick.c: RT-safe: the kinds' tick ops over every step, phase by phase */
void hs__scen_tick_commands(struct hs_scenario *s, int64_t now_ns);
void hs__scen_tick_substep(struct hs_scenario *s);
void hs__scen_tick_readings(struct hs_scenario *s); /* readings, then publish */
void hs__scen_tick_judge(struct hs_scenario *s);

/* Helpers for the kinds' schema rows: a common field of struct hs__scen_step_spec (the targets
 * t.*, the file). */
#define HS__SCEN_FS(k, K, m, ...)                                                                  \
    {                                                                                              \
        .key = k, .kind = K, .off = offsetof(struct hs__scen_step_spec, m), __VA_ARGS__            \
    }
#define HS__SCEN_DBL(k, m, lo, hi, fl)                                                             \
    HS__SCEN_FS(k, HS__K_DOUBLE, m, .min = lo, .max = hi, .flags = fl)
#define HS__SCEN_NAME(k, m, fl)                                                                    \
    HS__SCEN_FS(k, HS__K_NAME, m, .n = HS_NAME_MAX, .cs = HS__CS_IDENT, .flags = fl)
/* A kind's own parameters and run state: a struct its file defines, in the spec's and the step's
 * own bytes (HS_SCEN_OWN_BYTES each; HS__SCEN_OWN_FITS checks), and a schema row of one of its
 * fields (HS__SCEN_OWN_NAME: a name). */
#define HS__SCEN_OWN(type, p) ((type *)(void *)(p)->own)
#define HS__SCEN_OWN_FITS(type)                                                                    \
    _Static_assert(sizeof(type) <= HS_SCEN_OWN_BYTES, #type " fits a step's own bytes")
#define HS__SCEN_OWN_FS(type, k, K, m, ...)                                                        \
    {                                                                                              \
        .key = k, .kind = K, .off = offsetof(struct hs__scen_step_spec, own) + offsetof(type, m),  \
        __VA_ARGS__                                                                                \
    }
#define HS__SCEN_OWN_NAME(type, k, m, fl)                                                          \
    HS__SCEN_OWN_FS(type, k, HS__K_NAME, m, .n = HS_NAME_MAX, .cs = HS__CS_IDENT, .flags = fl)
/* Parse time, in a kind's check: each own key of rows[0..n) not given (its row's bit not in seen)
 * takes its value from defaults, a struct of the kind's own type. A kind whose keys have
 * defaults calls it first in its check: the own bytes are every kind's, so a step that names two
 * actions may have left the other's values there, and the check must see this kind's keys and
 * defaults only. */
void hs__scen_own_defaults(struct hs__scen_step_spec *sp, const struct hs__cfg_field *rows,
                           size_t n, uint64_t seen, const void *defaults);
#define HS__SCEN_OWN_DEFAULTS(sp, rows, seen, defaults)                                            \
    hs__scen_own_defaults(sp, rows, sizeof rows / sizeof rows[0], seen, defaults)
#define HS__SCEN_SCHEMA(fields, chk)                                                               \
    {                                                                                              \
        fields, sizeof fields / sizeof fields[0], chk                                              \
    }

#endif
