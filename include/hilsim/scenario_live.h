/* Scenario steps injected into a running bench (live control, scenarios/README.md "Live
 * control"), and the hooks a stage needs to run a scenario file it started itself.
 *
 * Live steps: a fixed set of HS_SCENARIO_LIVE_SLOTS step slots, allocated when the live set is
 * created. The control thread parses one step (the same mapping a scenario file's `steps`
 * entry is, through the same parser and binding) into a free slot: everything the step needs
 * (a delay ring, a path's rows) is allocated there, off the tick. The tick starts the slot at a
 * tick boundary, plays it with the scenario's own code, and gives the slot back when the step
 * has ended; the control thread frees what it allocated (reap). A full set refuses the step.
 *
 * Threads: prepare, discard, reap: one control thread. start, clear and the phases: the tick
 * (RT-safe: no allocation, no stdio, bounded loops). Counters: any thread. */
#ifndef HILSIM_SCENARIO_LIVE_H
#define HILSIM_SCENARIO_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "hilsim/bench.h"
#include "hilsim/diag.h"
#include "hilsim/scenario.h"

#define HS_SCENARIO_LIVE_SLOTS 16

struct hs_scenario_live;

/* init only, after the CAN module opened its buses: allocates the slots and puts a CAN fault
 * filter on every open bus that has none (a scenario attached before keeps its own, which live
 * steps share). seed: the live noise and spikes repeat with the same seed. */
/* What a live step may ask of the plant (push's own limit; the rest of the same order): past
 * these the plant guard stops the bench, so the step is refused instead. */
#define HS_SCENARIO_LIVE_FORCE_MAX_N 1e5
#define HS_SCENARIO_LIVE_TORQUE_MAX_NM 1e4
#define HS_SCENARIO_LIVE_GRAVITY_MAX_M_S2 100.0

int hs_scenario_live_create(struct hs_bench *bench, uint64_t seed, struct hs_scenario_live **ret);
void hs_scenario_live_destroy(struct hs_scenario_live *l); /* accepts NULL; no tick running */

/* Control thread: parses text (one YAML mapping, a scenario step; at most size bytes) and binds
 * it into a free slot. A live step starts at the tick that takes it, or after_s later, or when
 * its `when` condition comes true; at_s, after (a step name) and expect are refused. 0 with
 * *ret_slot; -EINVAL with diag (name "live", line:column in text); -ENOSPC when every slot is
 * busy; -ENOMEM. A can_fault step adds its rules to its bus's filter, put there when the live
 * set was created; a bus has HS_CAN_FAULT_RULES_MAX rules for the whole run (not reused). */
int hs_scenario_live_prepare(struct hs_scenario_live *l, const char *text, size_t size,
                             const char *base_dir, uint32_t *ret_slot, struct hs_diag *diag);
/* The same for a control client's step: a path step's CSV is read from path_fd (the client
 * opened it and passed it; borrowed for the call; -1: none passed), never opened by name. */
int hs_scenario_live_prepare_client(struct hs_scenario_live *l, const char *text, size_t size,
                                    int path_fd, uint32_t *ret_slot, struct hs_diag *diag);
/* Client side: the file a step names (a path step's CSV, resolved against base_dir) into buf:
 * 1; 0 when it names none; negative errno when it does not parse (the server says why). */
int hs_scenario_live_step_file(const char *text, size_t size, const char *base_dir, char *buf,
                               size_t bufsize);
/* Control thread: gives back a prepared slot that will not be started. */
void hs_scenario_live_discard(struct hs_scenario_live *l, uint32_t slot);
/* Control thread: frees the slots whose steps ended; returns how many. */
uint32_t hs_scenario_live_reap(struct hs_scenario_live *l);

/* RT-safe, tick thread, before hs_scenario_live_commands: the prepared slot's step joins the
 * timeline at this tick. */
void hs_scenario_live_start(struct hs_scenario_live *l, uint32_t slot);
/* RT-safe, tick thread: every live step ends at the next tick (what it changed comes back). */
void hs_scenario_live_clear(struct hs_scenario_live *l);
/* RT-safe tick phases, as a scenario stage's (hs_bench_io_ops commands, substep, readings). */
void hs_scenario_live_commands(struct hs_scenario_live *l, int64_t now_ns);
void hs_scenario_live_substep(struct hs_scenario_live *l);
void hs_scenario_live_readings(struct hs_scenario_live *l);

/* Any thread: steps on the timeline now (started, not yet ended). */
uint32_t hs_scenario_live_running(const struct hs_scenario_live *l);
/* Any thread: the live scenario (its steps' counters for tests: hs_scenario_step_*). */
const struct hs_scenario *hs_scenario_live_scenario(const struct hs_scenario_live *l);

/* A scenario file run by another stage (live control's `scenario start`): the scenario's own
 * stage ops, called by that stage in its phases instead of attaching the scenario. */
extern const struct hs_bench_io_ops hs_scenario_stage_ops;
/* Any thread: the file's scenario.name. */
const char *hs_scenario_name(const struct hs_scenario *s);
/* RT-safe: every step but the expectations ends at the next tick (what it changed comes back);
 * the expectations stay open, so hs_scenario_finish judges them as a run stopped early. */
void hs_scenario_end_steps(struct hs_scenario *s);

#endif
