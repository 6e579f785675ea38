/* Test rig for scenarios: a bench from a YAML string (model paths under the source tree) and a
 * scenario from another, bound and attached; offline ticks as `hilsim sim` runs them. */
#ifndef HS_TEST_SCEN_RIG_H
#define HS_TEST_SCEN_RIG_H

#include <stdint.h>

#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/scenario.h"

struct scen_rig {
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_scenario *scen; /* owned by the bench once attached */
    uint64_t tick;
    int peer_fd; /* set by a rig_before_scenario that opens a CAN socketpair */
};

/* Called between the bench's creation and the scenario's binding (to attach I/O modules). */
extern void (*rig_before_scenario)(struct scen_rig *r);
/* bench_yaml may name models as @SRC@/models/x.wrl. Fails the test on any error. */
void rig_open(struct scen_rig *r, const char *bench_yaml, const char *scen_yaml);
/* One tick at simulated time tick x period; returns the tick's result. */
int rig_tick(struct scen_rig *r);
/* Ticks until the scenario is done; then hs_scenario_finish. */
void rig_run(struct scen_rig *r);
void rig_close(struct scen_rig *r);
/* The parse or compile error as "file:line:col: message" (or "" when it loaded). */
int rig_try(const char *bench_yaml, const char *scen_yaml, char *msg, size_t size);
/* Fails the test unless loading fails with want in its message (printed). */
void rig_expect_error(const char *bench_yaml, const char *scen_yaml, const char *want);

/* Pieces of the benches the scenario tests share, string literals to put together after a
 * "bench: {name: ...}" line: the arm (models/arm2.wrl) at SHOULDER 0.3, ELBOW 0.6 rad; 1 kHz
 * ticks; the arm held where it starts; the head of a CAN section on one socketpair bus (its
 * nodes follow). */
#define RIG_ARM                                                                                    \
    "models:\n"                                                                                    \
    "  - name: arm\n"                                                                              \
    "    file: @SRC@/models/arm2.wrl\n"                                                            \
    "    initial: {joints: {SHOULDER: {q: 0.3}, ELBOW: {q: 0.6}}}\n"
#define RIG_1KHZ "rt: {period_ns: 1000000}\n"
#define RIG_PD_HOLD "controller: {type: pd_hold, defaults: {kp: 300, kd: 6}}\n"
#define RIG_CAN_NODES                                                                              \
    "can:\n"                                                                                       \
    "  buses: [{name: main, interface: vcan0}]\n"                                                  \
    "  nodes:\n"
#define RIG_CAN_FD_NODES                                                                           \
    "can:\n"                                                                                       \
    "  buses: [{name: main, interface: vcan0, fd: true}]\n"                                        \
    "  nodes:\n"

#endif
