/* The plant: everything between the joint command slots and the readings a controller board
 * gets back, for one (non-static) body of an hs_world: per joint the motor model (actuator.h)
 * and an encoder (encoder.h); per model sensor, its kind's ops (one file per kind in
 * src/plant/sensors/, registered in hilsim/sensor_kinds.h: accelerometer and gyro through
 * imu.h, force-torque through ft_sensor.h, range by ray casts; vision is not simulated);
 * noise, saturation and quantisation (noise.h); and whole-tick delay lines (delay_line.h) on
 * commands and readings.
 *
 * Lifecycle: hs_plant_params_init() (defaults from the model) -> adjust -> hs_plant_armature()
 * into hs_world_body_spec.armature -> hs_world_create() -> hs_plant_create() -> per tick:
 * write command slots, hs_plant_apply_commands(), hs_world_step() (substeps times, calling
 * apply before each if the motor loops should run at the physics rate),
 * hs_plant_update_sensors(), read readings -> hs_plant_destroy().
 *
 * Threads: everything after create runs on the thread that steps the world (ODE is not thread
 * safe here). Command slots are plain memory written by that same thread.
 *
 * Joints are numbered densely: plant joint j is the j-th link of the model (in link order) with a
 * rotate or slide joint. Sensors keep the model's sensor index.
 *
 * Repeatability: the noise comes from the plant's own seeded generators (noise.h), so with the
 * same seed and the same physics the readings are byte-identical. ODE's QuickStep reorders rows
 * with ODE's global random state; dRandSetSeed() before hs_world_create makes the physics repeat
 * within one process too (tests/plant/plant_test_model.c does so). */
#ifndef HILSIM_PLANT_H
#define HILSIM_PLANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/actuator.h"
#include "hilsim/diag.h"
#include "hilsim/encoder.h"
#include "hilsim/model.h"
#include "hilsim/noise.h"
#include "hilsim/world.h"

struct hs_plant_joint_params {
    struct hs_actuator_params actuator;
    struct hs_encoder_params encoder;
    uint32_t command_delay_ticks; /* bus latency before the drive sees a command */
    uint32_t reading_delay_ticks; /* latency of the joint readings */
};

struct hs_plant_sensor_params {
    /* Error models. Accel: [0] specific force, m/s². Gyro: [0] rate, rad/s.
     * Force: [0] force N, [1] torque N·m. range defaults from the model's max fields. */
    struct hs_channel_params channel[2];
    uint32_t rate_divider; /* a new sample every rate_divider ticks, held between (>= 1) */
    uint32_t delay_ticks;  /* latency of the output */
};

struct hs_plant_params {
    uint64_t seed; /* noise generator seed; same seed, same noise */
    uint32_t njoints;
    struct hs_plant_joint_params *joints; /* njoints, plant joint order */
    uint32_t nsensors;
    struct hs_plant_sensor_params *sensors; /* model->nsensors; vision and range are unused */
};

/* init only: allocates the arrays and fills defaults from the model (see
 * hs_actuator_params_default, hs_encoder_params_default; sensors: no noise or bias, range from
 * maxAcceleration / maxAngularVelocity / maxForce / maxTorque, every tick, no delay; seed 0).
 * On failure ret_params is untouched. */
int hs_plant_params_init(const struct hs_model *model, struct hs_plant_params *ret_params);
void hs_plant_params_free(struct hs_plant_params *params); /* accepts NULL; zeroes it */

struct hs_config;
/* init only, no allocation. The sensors' params from a bench config's sensors section (noise,
 * bias, rate, delay), each through its kind's ops (src/plant/sensors/): for every sensor of
 * model, in params->sensors. Call after hs_plant_params_init. */
void hs_plant_params_from_config(const struct hs_config *cfg, const struct hs_model *model,
                                 struct hs_plant_params *params);

/* init only. Fills ret_armature[model->nlinks] with N² J_rotor for each rotate joint (0
 * elsewhere) from params (NULL: the model's fields), for hs_world_body_spec.armature: the world
 * adds it to the child body's inertia about the joint axis, because ODE has no armature term
 * (see src/world/world_mass.c for the method and its limits). */
int hs_plant_armature(const struct hs_model *model, const struct hs_plant_params *params,
                      double *ret_armature);

/* Readings, published by hs_plant_update_sensors() after their delay lines. */
struct hs_joint_reading {
    double q;                /* joint position, unwrapped, rad or m */
    double dq;               /* joint velocity, rad/s or m/s */
    double torque;           /* motor torque at the joint (after saturation), N·m or N */
    double current;          /* motor current estimate, A */
    uint64_t encoder_count;  /* raw counter value (encoder.h) */
    double encoder_velocity; /* board-style window estimate at the joint, rad/s or m/s */
    double encoder_position; /* joint position decoded from the counter, rad or m */
    int64_t time_ns;         /* now_ns of the update that measured it (before the delay) */
};

struct hs_sensor_reading {
    union {
        struct {
            double value[3];  /* accel: specific force m/s²; gyro: rate rad/s; force: force N */
            double torque[3]; /* force sensors: torque N·m about the sensor origin; else 0 */
        };
        double v[6]; /* the same six values in a row: a small kind's whole reading */
    };
    uint64_t samples; /* samples taken so far (grows every rate_divider ticks) */
    int64_t time_ns;  /* now_ns of the update that took the sample (before the delay) */
};

/* A sensor kind's reading as its ops declare it (src/plant/sensors/, one file per kind of the
 * registry hilsim/sensor_kinds.h). Users that carry readings (shm, CSV, recordings, DBC) read
 * this instead of switching on the kind. */
struct hs_sensor_layout {
    const char *kind; /* registry name, "accel" ... */
    bool simulated;   /* false: the plant leaves it idle (VisionSensor), no reading */
    uint32_t nvalues; /* doubles in the reading (0 when not simulated) */
    uint32_t group;   /* values per group: 3 for vectors, 1 for a range scan */
    const char *unit; /* per group, comma separated: "m/s2", "N,Nm", "m" */
    double param[4];  /* kind-defined, see the kind's file (range: first ray angle rad, step
                       * rad, minDistance m, maxDistance m); unused ones 0 */
    /* What a value reads when the sensor returns nothing (a dropout, a scenario's `off`), as
     * the real device reports it: 0 for the small kinds, +inf for range ("no return"). */
    double no_return;
    /* Values are distances (>= 0, with ±inf markers), not a signed quantity with a ± full
     * scale: a symmetric saturation means nothing for them. */
    bool one_sided;
};

/* Any thread, no allocation. The layout of a model sensor's reading. */
void hs_sensor_layout(const struct hs_sensor *sensor, struct hs_sensor_layout *ret_layout);
/* Any thread. Writes the name of value i of that sensor's reading ("x", "fz", "r12"), used as
 * CSV column suffix and recording field name. */
void hs_sensor_value_name(const struct hs_sensor *sensor, uint32_t i, char *buf, size_t size);

struct hs_plant_joint_counters {
    bool stale;                   /* the safe behaviour is active now */
    uint64_t stale_events;        /* fallbacks to the safe behaviour */
    uint64_t stale_ticks;         /* ticks spent in it after a command had arrived */
    uint64_t torque_saturations;  /* ticks the torque limit clipped the command */
    uint64_t current_saturations; /* ticks the current limit clipped it */
    uint64_t velocity_limits;     /* ticks a velocity limit changed the torque: the speed
                                     loop held the joint with less than the command, or the
                                     brake past the limit cut it */
    uint64_t invalid_commands;    /* ticks whose command had a non-finite term (safe behaviour) */
};

struct hs_plant;

/* init only: allocates. world: borrowed, must outlive the plant; body: a non-static body of it;
 * model: the same model the world was built with for that body (borrowed); params: copied, NULL
 * for the model's defaults. Sets ODE joint stops from the position limits (rotate joints when
 * both limits lie within ±pi, where ODE's hinge angle is continuous; slide joints always); other
 * finite hinge limits become soft stops on the unwrapped position, through the motor row. Sets
 * joint feedback on every joint and force sensor link. On failure *ret_plant is untouched
 * and diag names the bad field ("joints[2].actuator.gear_efficiency"). */
int hs_plant_create(struct hs_world *world, uint32_t body, const struct hs_model *model,
                    const struct hs_plant_params *params, struct hs_plant **ret_plant,
                    struct hs_diag *diag);
/* init only. Accepts NULL. Call before hs_world_destroy: it detaches the feedback buffers it
 * gave ODE's joints. */
void hs_plant_destroy(struct hs_plant *plant);

/* RT-safe. The command slot of joint j, for the command source to write. Owned by the plant. */
struct hs_joint_command *hs_plant_command(struct hs_plant *plant, uint32_t j);

/* RT-safe. Runs the motor models and sets the world's joint efforts and motor rows. Call before
 * each hs_world_step (then the motor loops run at the physics rate) or once per tick. Command
 * delay lines and tick counters advance once per distinct now_ns, so calls for the substeps of
 * one tick pass the same now_ns. Staleness: a command is stale when now_ns - rx_time_ns (plus
 * the command delay) exceeds its joint's timeout_ns. */
void hs_plant_apply_commands(struct hs_plant *plant, int64_t now_ns);

/* RT-safe. After the physics steps of a tick: reads the world, updates encoders, IMUs and F/T
 * sensors (a sensor samples on ticks where tick % rate_divider == 0), pushes every reading
 * through its delay line and publishes it. */
void hs_plant_update_sensors(struct hs_plant *plant, int64_t now_ns, uint64_t tick);

/* RT-safe accessors. Returned pointers are owned by the plant, valid until destroy, and
 * overwritten by the next hs_plant_update_sensors. */
uint32_t hs_plant_joint_count(const struct hs_plant *plant);
uint32_t hs_plant_joint_link(const struct hs_plant *plant, uint32_t j);     /* model link index */
int hs_plant_find_joint(const struct hs_plant *plant, uint32_t link);       /* j or -ENOENT */
int hs_plant_find_joint_id(const struct hs_plant *plant, int32_t joint_id); /* j or -ENOENT */
const struct hs_joint_reading *hs_plant_joint_reading(const struct hs_plant *plant, uint32_t j);
const struct hs_sensor_reading *hs_plant_sensor_reading(const struct hs_plant *plant,
                                                        uint32_t sensor);
/* The published reading as hs_sensor_layout describes it (nvalues doubles): for the small kinds
 * the v[] of hs_plant_sensor_reading (so a scenario's edit shows), for a range sensor its scan.
 * Stable for the plant's life. */
const double *hs_plant_sensor_values(const struct hs_plant *plant, uint32_t sensor);
/* RT-safe: the published readings, writable, for the bench's scenario stage between
 * hs_plant_update_sensors and the outputs (a sensor fault). The next update overwrites them
 * from the plant's own state, so an edit lasts one tick and never feeds back into the model. */
struct hs_joint_reading *hs_plant_joint_reading_edit(struct hs_plant *plant, uint32_t j);
struct hs_sensor_reading *hs_plant_sensor_reading_edit(struct hs_plant *plant, uint32_t sensor);
/* The same for the published values (hs_plant_sensor_values, nvalues doubles): for the small
 * kinds they are the reading's v[], for a range sensor its published scan. */
double *hs_plant_sensor_values_edit(struct hs_plant *plant, uint32_t sensor);
void hs_plant_joint_counters(const struct hs_plant *plant, uint32_t j,
                             struct hs_plant_joint_counters *ret);
uint64_t hs_plant_sensor_saturations(const struct hs_plant *plant, uint32_t sensor);

#endif
