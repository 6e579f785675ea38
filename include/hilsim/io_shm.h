/* The shared-memory I/O module: serves a bench over /dev/shm/hilsim-<bench> (drivers/shm) so
 * local controllers (libhilsim-client) read its state every tick and command the joints whose
 * source is shm.
 *
 * What the segment holds:
 *   joints  every bench joint in bench order, unit "rad" (rotate) or "m" (slide); commands are
 *           applied only to joints whose config source is shm, the rest are read-only.
 *   IMUs    each config IMU (sensors.imu) under its config name: its accel and gyro parts (a
 *           missing part reads zero). A config without IMUs pairs each sensor of role IMU_ACCEL
 *           (hilsim/sensor_kinds.h: AccelerationSensor) with the first unpaired one of role
 *           IMU_GYRO (Gyro) on the same link, named after the accelerometer; a sensor left
 *           without a partner is an IMU of its own.
 *   F/T     every sensor of role FT (ForceSensor) of the models, under its model name.
 *   readings every simulated sensor of any kind, as its kind declares its values.
 * Timeouts: the segment's command timeout is the longest command_timeout_s of the shm joints
 * (each plant still applies its own), client timeout is shm.client_timeout_s.
 *
 * Command path (inputs phase): a FRESH or HELD joint command is written into the plant's command
 * slot with rx_time_ns = when the server first saw it, so the plant's watchdog measures its real
 * age; the slot's seq advances only for a new command. NONE or STALE (no command, a lost client,
 * a new owner) leaves the slot's command alone but makes sure the plant sees it stale now, so a
 * lost client is not obeyed for the rest of a longer command timeout.
 * Modes: torque, current and position_pd map to the plant's; velocity with kd > 0 is the ABI's
 * damping law kd (dq* - dq) + tau_ff (the plant's PD with kp = 0), with kd = 0 the actuator's
 * own velocity loop; disabled and brake are always accepted, the others only when the
 * actuator's `modes` allow them (refused commands are counted and leave the slot alone). While the
 * bench is in its overrun safe hold (which overrides every source) the state reports every joint
 * stale.
 *
 * Publishing: every tick's outputs phase, and once more at safe stop. Tick numbers keep
 * increasing across the runner's warm-up ticks and the loop (whose counters both start at 0);
 * periods the loop skipped after an overrun are gaps in the numbers. sim_time_s is the world's
 * time, mono_ns the CLOCK_MONOTONIC of the publish. Encoder counts are unwrapped from the
 * configured counter width into a multi-turn count (the ABI's encoder_count).
 * Command ages are measured on the tick's now_ns made increasing: the runner's warm-up runs on
 * made-up times ahead of the clock, and a command seen then must not live longer for it.
 *
 * Lockstep (hs_bench_clock_mode() at attach): the segment says so (header clock_mode) and the
 * module is a release source (wait_release): the next tick runs once the command owner released
 * the last published one (hs_client_step). now_ns is then simulated time, so command and client
 * timeouts count ticks. The warm-up reads no command in lockstep: the client's liveness counts
 * from the first real tick, whenever it attached. */
#ifndef HS_BENCH_IO_SHM_H
#define HS_BENCH_IO_SHM_H

#include <stdint.h>

#include "hilsim/bench.h"
#include "hilsim/diag.h"

struct hs_bench_shm;

/* Counters since attach, for the run's summary. */
struct hs_bench_shm_stats {
    uint64_t published;         /* states published */
    uint64_t commands_applied;  /* new joint commands written into command slots */
    uint64_t commands_refused;  /* valid shm commands in a mode the actuator does not allow */
    uint64_t stale_joint_ticks; /* shm joints x ticks without a fresh or held command */
    uint64_t lost_clients;      /* clients the server declared lost */
    uint64_t torn_reads;        /* command reads that found the section mid-write */
    uint64_t invalid_commands;  /* joint commands the server rejected (bad mode, NaN) */
    uint64_t segment_repairs;   /* times a client shrank the segment and the server rebuilt it */
    uint32_t client_status;     /* enum hs_shm_client_status at the last tick */
    int32_t client_pid;         /* owner at the last tick (0: none) */
};

/* init only: allocates. Creates the segment for bench->config (bench name, layout, timeouts,
 * shm.group, shm.mode), claims the shm-sourced joints from the demo controller and adds the
 * module to the bench, which owns it from then on (*ret_shm stays valid until
 * hs_bench_destroy). An occupied segment name is -EEXIST with a one-line diag; a shm joint
 * without a command timeout is -EINVAL (nothing would ever stop a dead client's command). */
int hs_bench_shm_attach(struct hs_bench *bench, struct hs_bench_shm **ret_shm,
                        struct hs_diag *diag);

/* RT-safe. Plain copies of counters the tick thread writes: call it on the tick thread or
 * after the loop stopped (safe_stop, summary). */
void hs_bench_shm_stats(const struct hs_bench_shm *shm, struct hs_bench_shm_stats *ret_stats);

/* init only. "" or a line to log about the segment (a dead server's segment taken over). */
const char *hs_bench_shm_note(const struct hs_bench_shm *shm);

/* Async-signal-safe, any thread: hs_shm_server_mark_stopped() of the module's segment, for the
 * emergency stop of a dying process (waiting clients get ESHUTDOWN at once). */
void hs_bench_shm_mark_stopped(struct hs_bench_shm *shm);

#endif
