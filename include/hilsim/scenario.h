/* Test scenarios: a timeline of disturbances, scene changes, faults and expectations played
 * into a bench from a YAML file (scenarios/README.md documents every key), and the verdict.
 *
 * Lifecycle: hs_scenario_parse (init only: reads and checks the file, no bench needed) ->
 * hs_scenario_compile (init only: resolves joint, link and sensor names against a bench and
 * allocates everything the tick will touch) -> hs_scenario_attach (the bench owns the scenario
 * from then on and runs it as its one scenario stage: see hs_bench_io_ops) -> ticks (RT-safe:
 * no allocation, no stdio, bounded loops) -> hs_scenario_finish (non-RT: closes what is still
 * open) -> reports -> hs_bench_destroy frees it.
 *
 * Time is tick time: the scenario's clock is the number of ticks it has seen times the bench's
 * period, so a scenario runs the same in every clock mode (free-running, lockstep, offline). */
#ifndef HILSIM_SCENARIO_H
#define HILSIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hilsim/bench.h"
#include "hilsim/diag.h"

struct hs_scenario_spec; /* a parsed file, not yet bound to a bench */
struct hs_scenario;      /* bound to a bench, runnable */

/* init only: allocates. base_dir resolves relative paths (NULL: they are errors). On failure
 * *ret_spec is untouched and diag names file:line:column and the key. */
int hs_scenario_parse(const char *data, size_t size, const char *name, const char *base_dir,
                      struct hs_scenario_spec **ret_spec, struct hs_diag *diag);
int hs_scenario_parse_file(const char *path, struct hs_scenario_spec **ret_spec,
                           struct hs_diag *diag);
void hs_scenario_spec_free(struct hs_scenario_spec *spec); /* accepts NULL */
/* The files a parsed scenario names besides itself (path CSVs, resolved), in order: a client
 * opens them with its own rights and passes them (hilsim ctl, scenario start). */
uint32_t hs_scenario_spec_file_count(const struct hs_scenario_spec *spec);
const char *hs_scenario_spec_file(const struct hs_scenario_spec *spec, uint32_t i);
/* init only: the binding (hs_scenario_compile) reads the i-th file from fds[i] (borrowed until
 * compile returns; -1: not passed) and never opens a name itself: a file not passed is an
 * error. For the control socket, which opens no path a client names. */
void hs_scenario_spec_client_files(struct hs_scenario_spec *spec, const int *fds, uint32_t n);

/* init only: allocates. spec is borrowed for the call only. Every name must exist in the bench
 * (else -EINVAL with the step's file:line:column). */
int hs_scenario_compile(const struct hs_scenario_spec *spec, struct hs_bench *bench,
                        struct hs_scenario **ret, struct hs_diag *diag);
/* init only: hands the scenario to the bench (its stage; the bench destroys it). Attach after
 * the CAN and shm modules so their command slots are written before the stage sees them. */
int hs_scenario_attach(struct hs_scenario *s, struct hs_bench *bench);
void hs_scenario_destroy(struct hs_scenario *s); /* accepts NULL; not once attached */

/* RT-safe. True once the scenario's duration has been played. */
bool hs_scenario_done(const struct hs_scenario *s);
double hs_scenario_duration_s(const struct hs_scenario *s);
uint64_t hs_scenario_ticks(const struct hs_scenario *s); /* ticks played so far */

enum hs_scenario_status {
    HS_SCENARIO_PENDING,
    HS_SCENARIO_PASS,
    HS_SCENARIO_FAIL,
    HS_SCENARIO_ERROR, /* not decided: the run could not (hs_scenario_error says why) */
    HS_SCENARIO_STATUS_MAX
};

struct hs_scenario_result {
    const char *name; /* the step's name (or "step N") */
    const char *what; /* the expectation in words, e.g. "joint ELBOW within 0.01 of 0.5" */
    int line;         /* where the file states it */
    enum hs_scenario_status status;
    int64_t tick;        /* scenario tick of the pass or fail; -1 when it never started */
    double time_s;       /* the same in seconds */
    double value;        /* the measured quantity at that tick (the worst one for "always") */
    const char *why;     /* failure reason (static text), "" on pass */
    int64_t opened_tick; /* scenario tick its window opened; -1 when it never did */
};

/* Non-RT: closes every open expectation (an "always" window still open when the run ended, or
 * one that never began, fails with the reason). Idempotent. When the run could not decide the
 * scenario (a plant fault, a SAFE HOLD latched, or a stop before the scenario's end), the
 * verdict is ERROR: hs_scenario_error names the cause, and every expectation still open is
 * HS_SCENARIO_ERROR with why "not decided: CAUSE at tick N". */
void hs_scenario_finish(struct hs_scenario *s);
/* Non-RT, before hs_scenario_finish: what stopped the run early (e.g. "SIGTERM", "scenario
 * stop"), said in the ERROR verdict; without it the verdict says the run ended first. */
void hs_scenario_set_stop_cause(struct hs_scenario *s, const char *cause);
/* After hs_scenario_finish: the ERROR verdict's cause (*ret_tick: its scenario tick), or NULL
 * when the run decided the scenario (PASS or FAIL). */
const char *hs_scenario_error(const struct hs_scenario *s, int64_t *ret_tick);
uint32_t hs_scenario_expect_count(const struct hs_scenario *s);
void hs_scenario_result(const struct hs_scenario *s, uint32_t i, struct hs_scenario_result *ret);
/* every expectation passed, and no ERROR */
bool hs_scenario_passed(const struct hs_scenario *s);

/* Non-RT reports after hs_scenario_finish. 0 or negative errno. */
int hs_scenario_write_summary(const struct hs_scenario *s, FILE *out);
int hs_scenario_write_json(const struct hs_scenario *s, const char *path);
int hs_scenario_write_junit(const struct hs_scenario *s, const char *path);
/* The same into an open descriptor (at its offset; the caller keeps and closes fd): the
 * control socket writes into the files its client opened (src/service/io_module_ctl.c). */
int hs_scenario_write_json_fd(const struct hs_scenario *s, int fd);
int hs_scenario_write_junit_fd(const struct hs_scenario *s, int fd);

/* Counters per step for tests and the summary: ticks the step was active, activations begun. */
uint32_t hs_scenario_step_count(const struct hs_scenario *s);
int hs_scenario_find_step(const struct hs_scenario *s, const char *name); /* i or -ENOENT */
uint64_t hs_scenario_step_active_ticks(const struct hs_scenario *s, uint32_t step);
uint64_t hs_scenario_step_activations(const struct hs_scenario *s, uint32_t step);
int64_t hs_scenario_step_onset(const struct hs_scenario *s, uint32_t step); /* tick or -1 */
/* RT-safe, for a live view of the timeline. The step's name as the file gives it ("" when it
 * has none) and its kind as the file spells it ("push", "expect", ...): both live as long as
 * the scenario (the kind: static). */
const char *hs_scenario_step_name(const struct hs_scenario *s, uint32_t step);
const char *hs_scenario_step_kind(const struct hs_scenario *s, uint32_t step);
/* RT-safe: the step's result as hs_scenario_result gives it, when the step is an expectation
 * (false, and *ret zeroed, when it is not). In step order, without hs_scenario_result's search. */
bool hs_scenario_step_result(const struct hs_scenario *s, uint32_t step,
                             struct hs_scenario_result *ret);
/* Frames a can_fault step dropped, duplicated, corrupted or moved so far (0 for other steps). */
uint64_t hs_scenario_can_frames_acted(const struct hs_scenario *s, uint32_t step);
/* Frames a can_fault delay step lost because its bus's delay queue was full. */
uint64_t hs_scenario_can_frames_overflow(const struct hs_scenario *s, uint32_t step);
/* RT-safe: winding temperature (°C) of a joint's thermal model, NAN without one. */
double hs_scenario_winding_temp_c(const struct hs_scenario *s, uint32_t bench_joint);

#endif
