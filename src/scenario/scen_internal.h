/* Internal to src/scenario: the parsed file (spec, filled by the config walker's tables) and the
 * compiled scenario the tick runs. */
#ifndef HS_SCEN_INTERNAL_H
#define HS_SCEN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "hilsim/config.h"
#include "hilsim/scenario.h"
#include "scen_kinds.h"

#define HS_SCEN_MAX_STEPS 64
#define HS_SCEN_MAX_DELAY_TICKS 100000      /* a sensor delay line of at most 100 s at 1 kHz */
#define HS_SCEN_MAX_DELAY_VALUES (8u << 20) /* a sensor delay ring of at most 64 MiB of values */
#define HS_SCEN_NEVER INT64_MAX
#define HS_SCEN_MAX_BUSES 8
/* a kind's own parameters and run state (struct hs__scen_step_spec.own, struct
 * hs__scen_step.own): at most this many bytes each */
#define HS_SCEN_OWN_BYTES 256

enum hs__scen_direction { HS__DIR_ANY, HS__DIR_RISING, HS__DIR_FALLING, HS__DIR_MAX };

/* ---- the parsed file ---- */
struct hs__scen_when {
    char joint[HS_NAME_MAX]; /* joint passes `passes` in `direction` */
    double passes;
    int direction;
    bool first_command; /* the first command from an external source (on `joint`, or any) */
    char node[HS_NAME_MAX], state[HS_NAME_MAX]; /* CAN node `node` enters state `state` */
    uint64_t seen;
};

struct hs__scen_target {
    char model[HS_NAME_MAX];
    char link[HS_NAME_MAX];
    char joint[HS_NAME_MAX];
    char sensor[HS_NAME_MAX];
};

struct hs__scen_step_spec {
    struct hs_cfg_src src;
    char name[HS_NAME_MAX];
    double at_s, after_s; /* NAN: not given */
    char after[HS_NAME_MAX];
    struct hs__scen_when when;
    double duration_s; /* NAN: the kind's default */
    uint32_t repeat;
    double every_s;
    double on_s, off_s;
    enum hs__scen_kind kind;
    struct hs__scen_target t;
    /* A file the step names (path: its CSV), read when the step is bound: resolved, owned by
     * the spec; the same file as a descriptor a client opened and passed (fd + 1; 0: none,
     * borrowed); whether the binding may open it itself (not for a client's scenario). Common
     * to every kind: the spec frees it, and a client passes the files of a scenario's steps
     * (hs_scenario_spec_file, hs_scenario_spec_client_files) without knowing their kinds. */
    char *file;
    int file_fd1;
    bool no_open;
    /* the kind's own parameters: a struct its file defines (HS__SCEN_OWN, HS__SCEN_OWN_FS in
     * scen_kinds.h), zeroed before the keys are read; their defaults go in the kind's check,
     * whose seen mask says which keys were given */
    _Alignas(max_align_t) unsigned char own[HS_SCEN_OWN_BYTES];
};

struct hs_scenario_spec {
    char *path;
    char name[HS_NAME_MAX];
    char description[256];
    double duration_s;
    uint64_t seed;
    struct hs__scen_step_spec steps[HS_SCEN_MAX_STEPS];
    uint32_t nsteps;
};

/* scen_schema.c: parse a document root into spec (the walker's context is set up by the
 * caller). */
struct hs__ctx;
int hs__scen_parse_root(struct hs__ctx *c, yaml_node_t *root, struct hs_scenario_spec *spec);
/* scen_schema.c: one step mapping (live control); the step's timing defaults to after_s 0 */
int hs__scen_parse_step(struct hs__ctx *c, yaml_node_t *node, struct hs__scen_step_spec *ret);

/* ---- the compiled scenario ---- */
struct hs_can_port;

struct hs__scen_step {
    const struct hs__scen_step_spec *sp; /* a copy owned by the scenario */
    enum hs__scen_kind kind;
    int timing;                          /* 0 at, 1 after, 2 when */
    int32_t ref;                         /* after: the step index */
    int64_t offset, dur, every, on, off; /* ticks; dur HS_SCEN_NEVER = to the end */
    uint32_t repeat;
    /* resolved targets */
    int32_t joint; /* bench joint, -1 none */
    uint32_t body, link;
    int32_t sensor; /* bench sensor, -1 none */
    /* run state */
    int64_t onset; /* scenario tick of the first activation; -1 until known */
    bool active, was_active;
    uint64_t activations, active_ticks;
    double prev_q; /* `when joint passes`: last tick's position */
    bool have_prev;
    uint64_t rng;
    /* `when: {node, state}`: the CAN node and its state at the last check */
    struct hs_can_port *when_port;
    const char *prev_state;
    /* the kind's own run state (HS__SCEN_OWN): zeroed when bound, copied with the step, freed
     * by the kind's release op */
    _Alignas(max_align_t) unsigned char own[HS_SCEN_OWN_BYTES];
    /* expectation */
    enum hs_scenario_status status;
    int64_t result_tick;
    double result_value;
    const char *why;
    char what[256];
};

struct hs__scen_can_bus {
    struct hs_can_bus *bus;
    char iface[32];
    struct hs_can_fault_filter *filter;
    bool owned; /* created here; else the bus's filter when bound (its owner frees it) */
};

struct hs_scenario {
    struct hs_bench *bench;
    uint64_t seed;
    struct hs__scen_can_bus can[HS_SCEN_MAX_BUSES];
    uint32_t nbuses;
    char *path;
    char name[HS_NAME_MAX];
    char description[256];
    int64_t period_ns;
    int64_t end_tick;
    double duration_s;
    int64_t k;         /* ticks played (the current tick's index during the tick) */
    int64_t can_clock; /* bench ticks seen, the clock of the CAN filters it owns */
    bool done, finished;
    bool in_tick; /* commands ran this tick; readings closes it */
    /* why the run could not decide it (scen_stage.c, hs_scenario_finish): the first scenario
     * tick that saw the bench in SAFE HOLD (-1: none; written by the tick), and the cause of
     * an early end, "" when it played to its end */
    int64_t hold_tick;
    char stop_cause[160];
    char error[512];     /* "" or the ERROR verdict's cause, set by hs_scenario_finish */
    int64_t error_tick;  /* the scenario tick of that cause */
    char undecided[600]; /* the reason given to the expectations it left undecided */
    struct hs__scen_step_spec specs[HS_SCEN_MAX_STEPS];
    struct hs__scen_step steps[HS_SCEN_MAX_STEPS];
    uint32_t nsteps;
};

/* scen_load.c: init only: binds s->specs[i] into s->steps[i] (names, ticks, buffers, then the
 * kind's bind); frees what a bound step allocated (accepts an unbound, zeroed step); the error
 * of step sp: "steps[i]: what 'arg'" (or "step: ..." for a live step) at its line */
int hs__scen_bind_step(struct hs_scenario *s, uint32_t i, struct hs_diag *diag);
void hs__scen_step_free(struct hs__scen_step *st);
int hs__scen_err_step(const struct hs_scenario *s, const struct hs__scen_step_spec *sp,
                      struct hs_diag *diag, const char *what, const char *arg);
/* "steps[i]" or, for a live step, "step": how messages name sp */
void hs__scen_step_at(const struct hs_scenario *s, const struct hs__scen_step_spec *sp, char *buf,
                      size_t size);
/* scen_actuator.c: RT-safe, substep: the drive's output scaled by keep (a thermal derating) */
void hs__scen_drive_derate(struct hs_scenario *s, const struct hs__scen_step *st, double keep);
/* scen_timeline.c: RT-safe: advances step activity for tick s->k. */
void hs__scen_timeline(struct hs_scenario *s);
/* scen_can.c: init only: a filter on every open bus of the config (adopting one already there),
 * so steps bound later, while the buses run, only add rules; removes the filters from the buses.
 * RT-safe, once per bench tick: moves the clock CAN delays count in on the filters s owns */
int hs__scen_can_filters(struct hs_scenario *s);
void hs__scen_unbind_can(struct hs_scenario *s);
void hs__scen_can_clock(struct hs_scenario *s);
/* scen_can_node.c: the scenario's hooks into CAN nodes for the kinds and `when`. init only: the
 * running node `name` for key `what` of a step, a state name checked against its protocol,
 * `when: {node, state}`'s node, the running nodes (at most max) driving a joint. RT-safe: a
 * node's state and its protocol's state names, a temperature to nodes. */
int hs__scen_node_port(struct hs_scenario *s, struct hs__scen_step *st, const char *name,
                       const char *what, struct hs_can_port **ret, struct hs_diag *diag);
int hs__scen_node_check_state(struct hs_scenario *s, struct hs__scen_step *st,
                              const struct hs_can_port *port, const char *state, const char *what,
                              struct hs_diag *diag);
int hs__scen_bind_when_node(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag);
uint32_t hs__scen_temp_ports(struct hs_scenario *s, const char *joint, struct hs_can_port **ret,
                             uint32_t max);
void hs__scen_report_temperature(struct hs_can_port *const *ports, uint32_t n, double t_c);
const char *hs__scen_node_state(const struct hs_can_port *port);
const char *const *hs__scen_node_state_names(const struct hs_can_port *port);
/* a tiny xorshift generator per step: uniform in [0, 1) and a standard normal */
uint64_t hs__scen_seed(uint64_t seed, uint32_t stream);
double hs__scen_uniform(uint64_t *state);
double hs__scen_gauss(uint64_t *state);

#endif
