/* A bench assembled from its config: the models, the ODE world, one plant per robot, the demo
 * controller, and the I/O modules (CAN, shared memory) that carry commands and readings. It
 * provides the tick's phases for rt/tick_loop and an offline step for `hilsim sim`.
 *
 * Lifecycle: hs_bench_create (init only: loads, builds, allocates everything) -> I/O modules
 * attach with hs_bench_add_io (init only) -> per tick the phase functions (RT-safe) ->
 * hs_bench_safe_stop (non-RT: safe state, disable frames) -> hs_bench_destroy.
 * ODE: create, tick and destroy on one thread (the RT thread when the loop runs on its own
 * thread: then create the bench on that thread too, or run the loop on the creating thread). */
#ifndef HILSIM_BENCH_H
#define HILSIM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/actuator.h"
#include "hilsim/config.h"
#include "hilsim/diag.h"
#include "hilsim/model.h"
#include "hilsim/plant.h"
#include "hilsim/world.h"

/* One actuated joint of the bench (all robots together, in config model order then link order). */
struct hs_bench_joint {
    const char *name;       /* model joint name (owned by the model) */
    uint32_t body;          /* world body == config model index */
    uint32_t link;          /* model link index */
    uint32_t plant_joint;   /* index in that body's plant */
    struct hs_plant *plant; /* the body's plant */
    enum hs_cfg_command_source source;
    struct hs_joint_command *cmd; /* the plant's command slot; written by the source only */
    double q0;                    /* initial position, the demo controller's hold target */
    double kp, kd;                /* demo controller and safe hold gains */
    double hold_q;                /* safe hold target, set when safe hold begins */
    bool external;                /* an I/O module drives it: the demo controller keeps off */
};

/* One simulated sensor: every sensor of the robots whose kind the plant simulates (the
 * registry hilsim/sensor_kinds.h; today all but VisionSensor), in model order. */
struct hs_bench_sensor {
    const char *name;         /* the model sensor's name (owned by the model) */
    enum hs_sensor_type type; /* its kind */
    uint32_t body;
    uint32_t model_sensor; /* index into the model's sensors */
    struct hs_plant *plant;
    struct hs_sensor_layout layout; /* what its reading holds (plant.h) */
    const double *values;           /* layout.nvalues published values (hs_plant_sensor_values) */
};

struct hs_bench;

/* I/O modules (CAN, shm) that read commands in the inputs phase and publish readings in the
 * outputs phase. All ops run on the tick thread; inputs/outputs must be RT-safe. */
struct hs_bench_io_ops {
    const char *name;
    int (*inputs)(void *ctx, struct hs_bench *b, int64_t now_ns);
    int (*outputs)(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick);
    void (*safe_stop)(void *ctx, struct hs_bench *b); /* non-RT: disable/zero frames; may be NULL */
    void (*destroy)(void *ctx);                       /* may be NULL */
    /* Stages (the scenario of src/scenario, the control socket of src/ctl): at most
     * HS_BENCH_MAX_STAGES modules of a bench set these, run in attach order; RT-safe, each may
     * be NULL. commands: after the command sources wrote the slots, before the motor
     * models; substep: after the motor models set the efforts, before each physics step;
     * readings: after the plants published their readings, before any module's outputs. */
    void (*commands)(void *ctx, struct hs_bench *b, int64_t now_ns);
    void (*substep)(void *ctx, struct hs_bench *b, uint32_t substep);
    void (*readings)(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick);
    /* Lockstep release source (rt.clock.mode lockstep), may be NULL. RT-safe and bounded:
     * returns 0 once this module's controller released the next tick (it is done with the
     * last published one; asking again before that tick runs returns 0 at once), -ETIMEDOUT
     * when deadline_ns (absolute CLOCK_MONOTONIC) passed first, or another negative errno
     * (the loop stops). */
    int (*wait_release)(void *ctx, struct hs_bench *b, int64_t deadline_ns);
};

#define HS_BENCH_MAX_IO 8
#define HS_BENCH_MAX_STAGES 2

/* init only: allocates. config is borrowed and must outlive the bench. */
int hs_bench_create(const struct hs_config *config, struct hs_bench **ret_bench,
                    struct hs_diag *diag);
void hs_bench_destroy(struct hs_bench *bench); /* accepts NULL; destroys attached I/O */

/* init only: sets every joint's demo-controller (and safe hold) gains to a critically damped
 * PD of bandwidth omega_rad_s for the inertia the joint moves at the initial pose (its subtree
 * about the axis plus the reflected rotor inertias; mass for slide joints). A joint whose gains
 * would make the explicit PD unstable at the tick on the least inertia it moves on its own gets
 * the largest stable bandwidth instead and one bench warning (src/bench/auto_gains.c). */
void hs_bench_set_auto_gains(struct hs_bench *bench, double omega_rad_s);
/* init only: the quick look's hold (hilsim sim --model): every joint's position loop implicit
 * (HS_POSITION_LOOP_ODE_MOTOR), gains critically damped at omega_rad_s on what the joint moves,
 * a free robot's stance joints at least stiff enough to carry the robot standing on them
 * (src/bench/quick_look_gains.c). */
void hs_bench_set_quick_look_gains(struct hs_bench *bench, double omega_rad_s);
/* init only: what the bench found allowed but suspect while it was built (torque limits left
 * at .inf, initial positions outside joint limits, bodies that start overlapping, clamped
 * tuned gains), one line each, in order; the CLI prints each once. NULL past the count. */
uint32_t hs_bench_warning_count(const struct hs_bench *bench);
const char *hs_bench_warning(const struct hs_bench *bench, uint32_t i);
/* init only: an I/O module claims joint i, so the demo controller leaves it alone. */
void hs_bench_claim_joint(struct hs_bench *bench, uint32_t i);
/* init only. The bench takes ownership of ctx (ops->destroy frees it). -ENOSPC when full;
 * -EBUSY past HS_BENCH_MAX_STAGES modules with stage ops (commands, substep, readings). */
int hs_bench_add_io(struct hs_bench *bench, const struct hs_bench_io_ops *ops, void *ctx);

/* Tick phases, RT-safe, in this order: inputs, actuation, physics, sensors, outputs. now_ns is
 * CLOCK_MONOTONIC (offline: simulated time). Return 0 or the first I/O module error. */
int hs_bench_inputs(struct hs_bench *bench, int64_t now_ns);
int hs_bench_actuation(struct hs_bench *bench, int64_t now_ns);
/* Steps the world substeps times. A plant fault (hs_world_step's -ERANGE from the divergence
 * guard, -EFAULT from an ODE internal error) latches the bench: this and every later physics
 * phase return it, the world steps no more, and the caller stops the loop and runs
 * hs_bench_safe_stop (the same safe stop as a SIGTERM). */
int hs_bench_physics(struct hs_bench *bench, int64_t now_ns, uint64_t tick);
/* Reads the world into the plants' readings; after an ODE internal error (-EFAULT) it keeps
 * the last readings, as the abandoned step left the bodies half integrated. */
int hs_bench_sensors(struct hs_bench *bench, int64_t now_ns, uint64_t tick);
int hs_bench_outputs(struct hs_bench *bench, int64_t now_ns, uint64_t tick);
/* RT-safe, bounded by deadline_ns: the lockstep gate. Waits until every I/O module with a
 * wait_release op released the next tick (0), or -ETIMEDOUT, or a module's error. With no such
 * module it returns -ENODEV at once. */
int hs_bench_wait_release(struct hs_bench *bench, int64_t deadline_ns);
/* RT-safe: the number of I/O modules that release ticks in lockstep (0: lockstep impossible). */
uint32_t hs_bench_release_sources(const struct hs_bench *bench);
/* init only, before the I/O modules attach: the clock mode the run uses (default rt.clock.mode;
 * the CLI's --clock overrides it). I/O modules read it at attach: shm tells its clients. */
void hs_bench_set_clock_mode(struct hs_bench *bench, enum hs_clock_mode mode);
enum hs_clock_mode hs_bench_clock_mode(const struct hs_bench *bench);
/* The sync clock's events (rt.clock.sync). RT-safe, tick thread: an I/O module that sees the
 * configured event in its inputs phase (a SYNC frame, the shm owner's command) reports its
 * time, CLOCK_MONOTONIC (a frame's kernel receive time, not the drain time). The runner's
 * discipline takes them after the tick; past HS_BENCH_SYNC_EVENTS_MAX a tick's events are
 * counted without their time. take: copies up to max times into ret and returns how many
 * events the tick saw (may exceed max), then forgets them. */
#define HS_BENCH_SYNC_EVENTS_MAX 8
/* RT-safe. The tick's planned wake (CLOCK_MONOTONIC), set by the runner before the inputs: in
 * sync mode a frame received after it belongs to the next tick, however late this one woke.
 * 0 (never set: offline runs, tests): the tick's now_ns stands for it. */
void hs_bench_set_planned(struct hs_bench *bench, int64_t planned_ns);
int64_t hs_bench_planned(const struct hs_bench *bench);
void hs_bench_sync_event(struct hs_bench *bench, int64_t event_ns);
uint32_t hs_bench_sync_take(struct hs_bench *bench, int64_t *ret, uint32_t max);
/* RT-safe: every phase, in the order above (offline simulation, warm-up). Every phase runs
 * even after an earlier one failed, as in rt/tick_loop; returns the first error. */
int hs_bench_tick(struct hs_bench *bench, int64_t now_ns, uint64_t tick);
/* RT-safe: the plant fault that latched the bench, or NULL. */
const struct hs_world_fault *hs_bench_fault(const struct hs_bench *bench);
/* Non-RT: one line naming the model, link, quantity, value, bound and tick of the fault. */
int hs_bench_fault_format(const struct hs_bench *bench, char *buf, size_t size);
/* RT-safe: from now on every joint executes its safe behaviour (leaky overrun action "hold"). */
void hs_bench_enter_safe_hold(struct hs_bench *bench);
/* Non-RT: put every actuator in its safe state and let the I/O modules send their disable or
 * zero frames. Idempotent. */
void hs_bench_safe_stop(struct hs_bench *bench);

/* Accessors (any thread, no allocation). */
const struct hs_config *hs_bench_config(const struct hs_bench *bench);
struct hs_world *hs_bench_world(struct hs_bench *bench);
const struct hs_model *hs_bench_model(const struct hs_bench *bench, uint32_t body);
uint32_t hs_bench_joint_count(const struct hs_bench *bench);
const struct hs_bench_joint *hs_bench_joint(const struct hs_bench *bench, uint32_t i);
int hs_bench_find_joint(const struct hs_bench *bench, const char *name); /* i or -ENOENT */
uint32_t hs_bench_sensor_count(const struct hs_bench *bench);
/* The bench sensor of that kind and model sensor name: i or -ENOENT (also for ""). */
int hs_bench_find_sensor(const struct hs_bench *bench, const char *name, enum hs_sensor_type type);
/* The first bench sensor of that name whose kind has that role (hilsim/sensor_kinds.h): i or
 * -ENOENT. */
int hs_bench_find_sensor_role(const struct hs_bench *bench, const char *name,
                              enum hs_sensor_role role);
const struct hs_bench_sensor *hs_bench_sensor(const struct hs_bench *bench, uint32_t i);
const struct hs_joint_reading *hs_bench_joint_reading(const struct hs_bench *bench, uint32_t i);
const struct hs_sensor_reading *hs_bench_sensor_reading(const struct hs_bench *bench, uint32_t i);
int64_t hs_bench_tick_period_ns(const struct hs_bench *bench);
bool hs_bench_in_safe_hold(const struct hs_bench *bench);
/* RT-safe. While set (the runner's warm-up, which runs every phase as fast as it can on
 * made-up times), the I/O modules publish nothing outside the process: no shm tick that a
 * client would see run faster than real time, no CAN frame on a real bus. Inputs are still
 * read, so a command sent early is in place for the first real tick. */
void hs_bench_set_warming_up(struct hs_bench *bench, bool on);
bool hs_bench_warming_up(const struct hs_bench *bench);
/* RT-safe. The scenario's shm "freeze" fault: while set the shm module publishes nothing, so
 * clients see the tick and the state stop (in lockstep the loop then waits for a release
 * that cannot come: rt.clock.on_timeout decides). */
void hs_bench_set_shm_freeze(struct hs_bench *bench, bool on);
bool hs_bench_shm_frozen(const struct hs_bench *bench);
/* The bench's state as HS_SHM_BENCH_* bits (safe hold, plant fault), for the I/O modules. */
uint64_t hs_bench_state_flags(const struct hs_bench *bench);

/* Where I/O modules report what a recording keeps beyond frames and state (hilsim/record.h):
 * every write of a joint's command slot by a module that has no frames to record (shm), and
 * events (scenario, lockstep). The bench starts with a tap whose hooks do nothing, so callers
 * never check for NULL. Hooks are RT-safe and may be called from the tick thread only. */
struct hs_bench_tap {
    void *ctx;
    /* joint: bench index; src_mode: the module's own mode number (shm: HS_SHM_MODE_*), or
     * UINT32_MAX when only the slot's rx_time_ns changed (marked stale); slot: as written. */
    void (*slot_write)(void *ctx, uint32_t joint, uint32_t src_mode,
                       const struct hs_joint_command *slot);
    /* kind: enum hs_rec_event_kind; text: a static string or NULL. */
    void (*event)(void *ctx, uint32_t kind, int64_t a, int64_t b, const char *text);
};
/* init only. tap: borrowed, outlives the bench; NULL restores the no-op tap. */
void hs_bench_set_tap(struct hs_bench *bench, const struct hs_bench_tap *tap);
/* RT-safe: never NULL. */
const struct hs_bench_tap *hs_bench_tap(const struct hs_bench *bench);

#endif
