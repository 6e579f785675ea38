/* The bench config: one YAML file describes one bench (models, physics, real-time loop, budgets,
 * demo controller, actuators, sensors, CAN, shared memory, tracing). config/README.md documents
 * every key with its unit and range.
 *
 * The file is parsed once into a const struct hs_config and validated completely: unknown keys,
 * wrong types, out-of-range values, bad enums, duplicate keys and names, and cross-field rules are
 * errors naming file:line:column and the field path. Name references into the robot models
 * (joints, sensors) are checked syntactically here and against the loaded models by
 * hs_config_check_against_models().
 *
 * Ownership: hs_config_load*() returns one heap block owned by the caller; the path strings
 * inside are owned by it too and live until hs_config_free(). Everything the tick reads is in
 * fixed-size arrays (HS_CFG_MAX_*), so the struct can be read from the RT thread without
 * allocation. Per-joint/per-sensor sections hold only the names the file lists; the helpers
 * hs_config_actuator() etc. return the entry for a name or the section defaults. */
#ifndef HILSIM_CONFIG_H
#define HILSIM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hilsim/can_protocols.h"
#include "hilsim/diag.h"
#include "hilsim/model.h"
#include "hilsim/pose.h"
#include "hilsim/rt/tick_pace.h"
#include "hilsim/world.h"

#define HS_CFG_MAX_MODELS 8
#define HS_CFG_MAX_INITIAL_JOINTS 256 /* initial joint states, all models together */
#define HS_CFG_MAX_PACKAGES 64        /* models[].package_paths entries, all models together */
#define HS_CFG_MAX_MODEL_SENSORS 64   /* models[].sensors entries, all models together */
#define HS_CFG_MAX_JOINTS 128         /* per-joint entries in each of actuators/encoders/gains */
#define HS_CFG_MAX_IMUS 8
#define HS_CFG_MAX_FORCE_SENSORS 8
#define HS_CFG_MAX_BUSES 8
#define HS_CFG_MAX_NODES 64
#define HS_CFG_MAX_BINDINGS 256 /* DBC signal bindings, all nodes together */
#define HS_CFG_MAX_TX 128       /* DBC transmitted messages, all nodes together */
#define HS_CFG_MAX_DELAY_TICKS 64
#define HS_CFG_MAX_VELOCITY_WINDOW 256
#define HS_CFG_TEXT_MAX 256
#define HS_CFG_IFNAME_MAX 16 /* IFNAMSIZ */
#define HS_CFG_GROUP_MAX 32

/* Where an entry was written, for messages after the file is closed (1-based; 0 = unknown). */
struct hs_cfg_src {
    int32_t line, column;
};

/* ---- bench ---- */
struct hs_cfg_bench {
    char name[HS_NAME_MAX]; /* [a-z0-9_-], 1..63 chars; shm is /dev/shm/hilsim-<name> */
    char description[HS_CFG_TEXT_MAX];
};

/* ---- models ---- */
struct hs_cfg_initial_joint {
    char joint[HS_NAME_MAX];
    double q;  /* rad or m */
    double dq; /* rad/s or m/s */
    struct hs_cfg_src src;
};

/* models[].package_paths.NAME: URDF package://NAME/ is the directory dir. */
struct hs_cfg_package {
    char name[HS_NAME_MAX];
    char dir[HS_CFG_TEXT_MAX]; /* absolute (resolved against the config's directory) */
    struct hs_cfg_src src;
};

/* models[].sensors.NAME: a sensor the model file does not declare (URDF has no sensor element),
 * added to the model on a named link at a pose before the config's names are checked. */
struct hs_cfg_model_sensor {
    char name[HS_NAME_MAX];
    enum hs_sensor_type type; /* accel, gyro or force */
    char link[HS_NAME_MAX];   /* URDF link name, or the name hilsim gives the link (its joint) */
    double position[3];       /* m, in the link frame */
    double rotation[4];       /* axis-angle, sensor frame in the link frame */
    struct hs_cfg_src src;
};

struct hs_cfg_model {
    char name[HS_NAME_MAX];
    char *file;          /* absolute path of the VRML97 file (resolved against the config's dir) */
    bool is_static;      /* environment: geoms only, no bodies */
    double position[3];  /* m, root link frame in the world */
    double rotation[4];  /* VRML axis-angle: ax, ay, az, angle rad */
    struct hs_pose pose; /* the same as a pose (computed) */
    uint32_t initial_first, initial_count; /* slice of hs_config.initial_joints */
    uint32_t package_first, package_count; /* slice of hs_config.packages */
    uint32_t sensor_first, sensor_count;   /* slice of hs_config.model_sensors */
    enum hs_mesh_approx mesh_collision;    /* URDF collision meshes: exact or box */
    bool rest_on_static; /* a free-root robot inside the static models starts just above them */
    struct hs_cfg_src src;
};

/* ---- rt ---- */
enum hs_cfg_overrun_policy {
    HS_CFG_OVERRUN_SKIP,     /* drop the missed ticks, keep the phase */
    HS_CFG_OVERRUN_CATCH_UP, /* run the missed ticks back to back */
    HS_CFG_OVERRUN_STOP,     /* stop the loop at the first overrun */
    HS_CFG_OVERRUN_POLICY_MAX
};

enum hs_cfg_leaky_action { HS_CFG_LEAKY_HOLD, HS_CFG_LEAKY_STOP, HS_CFG_LEAKY_ACTION_MAX };

/* Leaky bucket over overruns: each overrun adds increment, each on-time tick removes decrement
 * (not below 0); reaching threshold triggers action (hold: safe behaviour on every joint). */
struct hs_cfg_leaky {
    uint32_t increment; /* 1 .. 1000000 */
    uint32_t decrement; /* 0 .. 1000000 */
    uint32_t threshold; /* 1 .. 1000000000 */
    enum hs_cfg_leaky_action action;
};

/* rt.clock.mode: what starts a tick is enum hs_clock_mode (hilsim/rt/tick_pace.h: the one enum
 * and name table, with the modes' contract). */
/* rt.clock.sync: the external event of the sync mode (and, for CAN, the lockstep release). */
enum hs_cfg_sync_source {
    HS_CFG_SYNC_NONE, /* no event: sync runs free (as wall) */
    HS_CFG_SYNC_CAN,  /* a frame with can_id on bus: CANopen SYNC (0x080) or a chosen ID */
    HS_CFG_SYNC_SHM,  /* the shm command owner's command arrival */
    HS_CFG_SYNC_SOURCE_MAX
};
struct hs_cfg_clock_sync {
    enum hs_cfg_sync_source source;
    char bus[32];             /* can: a can.buses name; "" = the first bus */
    uint32_t can_id;          /* can: 11-bit ID, 0 .. 0x7FF (CANopen SYNC: 0x080) */
    double lead_s;            /* s, 0 .. period: event-to-tick lead wanted; 0 = half a period */
    uint32_t max_slew_ppm;    /* 1 .. 100000: bound on a period's change and on the drift */
    double lock_window_s;     /* s, 0 .. period/2: |phase error| counted locked; 0 = period/8 */
    uint32_t lock_ticks;      /* 1 .. 100000: ticks in the window before locked */
    uint32_t timeout_periods; /* 1 .. 1000000: ticks without an event before free-running */
    uint32_t bus_index;       /* set by validation */
};

/* rt.clock.lockstep_source: what releases a lockstep tick. */
enum hs_cfg_lockstep_source {
    HS_CFG_LOCKSTEP_AUTO,         /* can_frame with rt.clock.sync.source can, else shm
                                   * (hs_config_lockstep_source resolves it) */
    HS_CFG_LOCKSTEP_SHM,          /* the shm command owner's step */
    HS_CFG_LOCKSTEP_CAN_FRAME,    /* the clock frame of rt.clock.sync (CANopen SYNC) */
    HS_CFG_LOCKSTEP_CAN_COMMANDS, /* every CAN node's command for the cycle has arrived */
    HS_CFG_LOCKSTEP_SOURCE_MAX
};

struct hs_cfg_clock {
    enum hs_clock_mode mode;
    double lockstep_timeout_s; /* s, 0.001 .. 3600: a lockstep wait longer than this expires */
    enum hs_lockstep_expiry on_timeout; /* hilsim/rt/tick_pace.h: the one enum and names */
    enum hs_cfg_lockstep_source lockstep_source;
    struct hs_cfg_clock_sync sync;
};

struct hs_cfg_rt {
    uint64_t period_ns;   /* tick period, 100000 .. 100000000 */
    int32_t priority;     /* SCHED_FIFO, 1 .. 99 */
    int32_t cpu;          /* CPU to pin to, -1 = none */
    bool lock_memory;     /* mlockall + prefault */
    bool cpu_dma_latency; /* hold /dev/cpu_dma_latency at 0 */
    bool require_rt;      /* fail instead of warn when RT set-up is impossible */
    enum hs_cfg_overrun_policy overrun_policy;
    struct hs_cfg_leaky overrun_leaky;
    uint32_t warmup_ticks;     /* ticks not counted in stats/budgets, 0 .. 1000000 */
    uint32_t histogram_max_us; /* stats histograms span 0 .. this (log-linear bins) */
    struct hs_cfg_clock clock;
};

/* ---- budgets (bench verdicts) ---- */
struct hs_cfg_budgets {
    uint64_t max_misses;                  /* deadline misses allowed */
    double tick_p9999_fraction_of_period; /* tick work p99.99 / period, (0, 1] */
    double tick_max_fraction_of_period;   /* tick work max / period, (0, 10] */
    double wake_latency_p99_us;           /* µs */
    double wake_latency_max_us;           /* µs */
    uint64_t max_can_rx_drops;            /* frames dropped by the kernel (SO_RXQ_OVFL) */
};

/* ---- controller (built-in demo controller for joints no CAN/shm source drives) ---- */
enum hs_cfg_controller_type {
    HS_CFG_CONTROLLER_NONE,
    HS_CFG_CONTROLLER_PD_HOLD,    /* PD to the initial position */
    HS_CFG_CONTROLLER_TRAJECTORY, /* PD hold, plus a sine on one joint */
    HS_CFG_CONTROLLER_TYPE_MAX
};

struct hs_cfg_gains {
    char joint[HS_NAME_MAX]; /* "" in the defaults entry */
    double kp;               /* N·m/rad or N/m */
    double kd;               /* N·m·s/rad or N·s/m */
    struct hs_cfg_src src;
};

struct hs_cfg_trajectory {
    char joint[HS_NAME_MAX];
    double amplitude;    /* rad or m, about the initial position */
    double frequency_hz; /* Hz */
};

struct hs_cfg_controller {
    enum hs_cfg_controller_type type;
    /* rad/s, [0, 1000]. > 0: every joint's gains are tuned for a critically damped PD of this
     * bandwidth on the inertia it moves at the initial pose (defaults/joints gains ignored). */
    double bandwidth_rad_s;
    struct hs_cfg_gains defaults;
    struct hs_cfg_gains joints[HS_CFG_MAX_JOINTS];
    uint32_t njoints;
    struct hs_cfg_trajectory trajectory; /* type trajectory only */
};

/* ---- actuators ---- */
enum hs_cfg_actuator_mode {
    HS_CFG_MODE_TORQUE,
    HS_CFG_MODE_CURRENT,
    HS_CFG_MODE_VELOCITY,
    HS_CFG_MODE_POSITION, /* MIT-style PD: kp, kd, q*, dq*, tau_ff */
    HS_CFG_ACTUATOR_MODE_MAX
};
#define HS_CFG_MODE_BIT(m) (1u << (m))

enum hs_cfg_safe_behaviour {
    HS_CFG_SAFE_ZERO_TORQUE,
    HS_CFG_SAFE_BRAKE, /* viscous brake: velocity_gain towards zero velocity */
    HS_CFG_SAFE_HOLD,  /* PD hold at the position when the command went stale */
    HS_CFG_SAFE_BEHAVIOUR_MAX
};

enum hs_cfg_command_source {
    HS_CFG_SOURCE_AUTO, /* can if a CAN node drives the joint, else controller */
    HS_CFG_SOURCE_CONTROLLER,
    HS_CFG_SOURCE_CAN,
    HS_CFG_SOURCE_SHM,
    HS_CFG_COMMAND_SOURCE_MAX
};

/* NAN in gear_ratio, gear_efficiency, rotor_inertia, torque_const, velocity_limit means "take the
 * model's value". Torques and limits are joint side (after the gear) unless named motor side. */
struct hs_cfg_actuator {
    char joint[HS_NAME_MAX];  /* "" in the defaults entry */
    uint32_t modes;           /* HS_CFG_MODE_BIT() set of allowed modes */
    double torque_limit_nm;   /* joint side, N·m or N, (0, inf], or NAN (derived default) */
    double current_limit_a;   /* motor current, A, (0, inf] */
    double gear_ratio;        /* motor turns per joint turn, [-1e5, 1e5] not 0, or NAN */
    double gear_efficiency;   /* (0, 1] or NAN */
    double rotor_inertia;     /* kg·m² motor side, [0, 10] or NAN */
    double torque_const;      /* N·m/A motor side, (0, 100] or NAN */
    double viscous_friction;  /* N·m·s/rad joint side, [0, 10000] */
    double coulomb_friction;  /* N·m joint side, [0, 10000] */
    double velocity_limit;    /* rad/s or m/s, (0, inf] or NAN (model) */
    double velocity_gain;     /* velocity mode and brake, N·m·s/rad, [0, 1e6] */
    double command_timeout_s; /* stale after this, s, [0, 10]; 0 = never stale */
    enum hs_cfg_safe_behaviour safe_behaviour;
    uint32_t command_delay_ticks; /* 0 .. HS_CFG_MAX_DELAY_TICKS */
    enum hs_cfg_command_source source;
    struct hs_cfg_src src;
};

struct hs_cfg_actuators {
    struct hs_cfg_actuator defaults;
    struct hs_cfg_actuator joints[HS_CFG_MAX_JOINTS]; /* defaults overlaid with the entry */
    uint32_t njoints;
};

/* ---- sensors ---- */
enum hs_cfg_encoder_mode {
    HS_CFG_ENCODER_ABSOLUTE,    /* counts from the joint zero at start */
    HS_CFG_ENCODER_INCREMENTAL, /* counts from 0 at start, wherever the joint is */
    HS_CFG_ENCODER_MODE_MAX
};

struct hs_cfg_encoder {
    char joint[HS_NAME_MAX]; /* "" in the defaults entry */
    uint32_t counter_bits;   /* counter width, 8 .. 63 (the encoder model keeps counts in 64-bit
                                signed arithmetic); wraps at 2^bits */
    int64_t zero_offset_counts;
    double counts_per_rev; /* motor side, (0, 1e9]; 0 = model's encoderPulse */
    enum hs_cfg_encoder_mode mode;
    uint32_t velocity_window_ticks; /* 1 .. HS_CFG_MAX_VELOCITY_WINDOW */
    uint32_t delay_ticks;           /* 0 .. HS_CFG_MAX_DELAY_TICKS */
    struct hs_cfg_src src;
};

struct hs_cfg_accel_gyro {
    double accel; /* accelerometer part, m/s² based unit */
    double gyro;  /* gyroscope part, rad/s based unit */
};

/* One IMU: an AccelerationSensor and/or a RateGyroSensor of the model under one name. */
struct hs_cfg_imu {
    char name[HS_NAME_MAX];
    char accel[HS_NAME_MAX];                /* model sensor name, "" = none */
    char gyro[HS_NAME_MAX];                 /* model sensor name, "" = none */
    double rate_hz;                         /* output rate, divides the tick rate; 0 = every tick */
    struct hs_cfg_accel_gyro noise_density; /* m/s²/√Hz and rad/s/√Hz */
    double accel_bias[3];                   /* m/s², sensor frame */
    double gyro_bias[3];                    /* rad/s, sensor frame */
    struct hs_cfg_accel_gyro bias_random_walk; /* m/s³/√Hz and rad/s²/√Hz */
    double accel_lsb;                          /* m/s² per count, 0 = no quantisation */
    double gyro_lsb;                           /* rad/s per count, 0 = no quantisation */
    uint32_t delay_ticks;
    struct hs_cfg_src src;
};

struct hs_cfg_force_sensor {
    char name[HS_NAME_MAX]; /* model ForceSensor name */
    double force_noise_n;   /* white noise std dev, N */
    double torque_noise_nm; /* white noise std dev, N·m */
    double force_bias[3];   /* N, sensor frame */
    double torque_bias[3];  /* N·m, sensor frame */
    uint32_t delay_ticks;
    struct hs_cfg_src src;
};

struct hs_cfg_sensors {
    struct hs_cfg_encoder encoder_defaults;
    struct hs_cfg_encoder encoders[HS_CFG_MAX_JOINTS]; /* defaults overlaid with the entry */
    uint32_t nencoders;
    struct hs_cfg_imu imus[HS_CFG_MAX_IMUS];
    uint32_t nimus;
    struct hs_cfg_force_sensor force[HS_CFG_MAX_FORCE_SENSORS];
    uint32_t nforce;
    uint64_t noise_seed; /* every noise source derives from this; same seed, same run */
};

/* ---- CAN ---- */
enum hs_cfg_send_queue_policy {
    HS_CFG_SEND_DROP,        /* a full socket queue drops the new frame (counted) */
    HS_CFG_SEND_KEEP_LATEST, /* keep one pending frame per ID and send it when there is room */
    HS_CFG_SEND_QUEUE_POLICY_MAX
};

/* When a node answers a command or a remote request: as the firmware does, at once from the
 * last completed tick's state (an I/O thread per bus), or with the next tick's frames. */
enum hs_cfg_can_replies { HS_CFG_REPLIES_IMMEDIATE, HS_CFG_REPLIES_TICK, HS_CFG_CAN_REPLIES_MAX };

struct hs_cfg_bus {
    char name[HS_NAME_MAX];
    char interface[HS_CFG_IFNAME_MAX]; /* e.g. can0, vcan0 */
    bool fd;                           /* CAN FD frames */
    uint32_t bitrate_bps;              /* bit/s, 10000 .. 1000000 (used when manage) */
    double sample_point;               /* 0.5 .. 0.95 (used when manage) */
    uint32_t restart_ms;               /* bus-off auto restart, 0 .. 60000; 0 = off */
    bool manage;                       /* set bit timing via libsocketcan (needs CAP_NET_ADMIN) */
    enum hs_cfg_send_queue_policy send_queue_policy;
    enum hs_cfg_can_replies replies;
    int32_t reply_priority; /* SCHED_FIFO of the bus's reply thread, 1 .. 99; 0 = rt.priority */
    int32_t reply_cpu;      /* CPU the reply thread is pinned to, -1 = the process's affinity */
    struct hs_cfg_src src;
};

/* One value per line of the registry (hilsim/can_protocols.h). */
#define HS__CFG_PROTO_ENUM(name, NAME) HS_CFG_PROTO_##NAME,
enum hs_cfg_can_protocol { HS_CAN_PROTOCOLS(HS__CFG_PROTO_ENUM) HS_CFG_CAN_PROTOCOL_MAX };
#undef HS__CFG_PROTO_ENUM

enum hs_cfg_tx_schedule {
    HS_CFG_TX_CYCLIC,     /* every period_s */
    HS_CFG_TX_ON_RECEIVE, /* when message `trigger` arrives */
    HS_CFG_TX_ON_REQUEST, /* on a remote (RTR) frame for this message */
    HS_CFG_TX_SCHEDULE_MAX
};

enum hs_cfg_binding_dir {
    HS_CFG_BIND_TO,   /* received signal -> joint command */
    HS_CFG_BIND_FROM, /* joint state or sensor reading -> transmitted signal */
    HS_CFG_BINDING_DIR_MAX
};

enum hs_cfg_ref_kind { HS_CFG_REF_JOINT, HS_CFG_REF_SENSOR, HS_CFG_REF_KIND_MAX };

enum hs_cfg_quantity {
    /* joint commands (to:) */
    HS_CFG_Q_POSITION_SETPOINT, /* rad or m */
    HS_CFG_Q_VELOCITY_SETPOINT, /* rad/s or m/s */
    HS_CFG_Q_TORQUE_SETPOINT,   /* N·m or N */
    HS_CFG_Q_CURRENT_SETPOINT,  /* A */
    HS_CFG_Q_KP,
    HS_CFG_Q_KD,
    HS_CFG_Q_ENABLE, /* nonzero = enabled */
    /* joint state (from:) */
    HS_CFG_Q_POSITION,
    HS_CFG_Q_VELOCITY,
    HS_CFG_Q_TORQUE,
    HS_CFG_Q_CURRENT,
    HS_CFG_Q_ENCODER_COUNTS,
    /* sensor readings (from:), sensor frame */
    HS_CFG_Q_ACCEL_X,
    HS_CFG_Q_ACCEL_Y,
    HS_CFG_Q_ACCEL_Z, /* m/s² */
    HS_CFG_Q_GYRO_X,
    HS_CFG_Q_GYRO_Y,
    HS_CFG_Q_GYRO_Z, /* rad/s */
    HS_CFG_Q_FORCE_X,
    HS_CFG_Q_FORCE_Y,
    HS_CFG_Q_FORCE_Z, /* N */
    HS_CFG_Q_TORQUE_X,
    HS_CFG_Q_TORQUE_Y,
    HS_CFG_Q_TORQUE_Z, /* N·m */
    /* sensor.<name>.<value>: any other value a sensor kind declares (src/plant/sensors/, e.g.
     * a RangeSensor's r0, r1, ...; accel x y z), named in struct hs_cfg_ref.value */
    HS_CFG_Q_SENSOR_VALUE,
    HS_CFG_QUANTITY_MAX
};

/* "joint.<name>.<quantity>" or "sensor.<name>.<quantity>": sensor names IMU or force names with
 * the quantities above, or any model sensor with a value name its kind declares. */
struct hs_cfg_ref {
    enum hs_cfg_ref_kind kind;
    char name[HS_NAME_MAX];
    enum hs_cfg_quantity quantity;
    char value[HS_NAME_MAX]; /* HS_CFG_Q_SENSOR_VALUE: the kind's value name; else empty */
};

struct hs_cfg_binding {
    char message[HS_NAME_MAX]; /* DBC message name */
    char signal[HS_NAME_MAX];  /* DBC signal name (physical value, DBC factor/offset applied) */
    enum hs_cfg_binding_dir dir;
    struct hs_cfg_ref ref;
    struct hs_cfg_src src;
};

struct hs_cfg_tx {
    char message[HS_NAME_MAX];
    enum hs_cfg_tx_schedule schedule;
    double period_s;           /* cyclic only, >= tick period (rounded to whole ticks) */
    char trigger[HS_NAME_MAX]; /* on_receive only: DBC message name */
    struct hs_cfg_src src;
};

/* A node's protocol section (can.nodes[].<protocol>), laid out by the protocol's own struct
 * (drivers/can/<protocol>/<protocol>_config.h, read through its accessor). Every protocol has
 * its slot, filled with its defaults, so defaults never depend on the order of the keys. */
#define HS_CFG_PROTO_SECTION_MAX 512
union hs_cfg_proto_section {
    long double align_;
    void *ptr_;
    unsigned char bytes[HS_CFG_PROTO_SECTION_MAX];
};

struct hs_cfg_node {
    char name[HS_NAME_MAX];
    char bus[HS_NAME_MAX]; /* a hs_cfg_bus name */
    uint32_t bus_index;    /* resolved index into hs_cfg_can.buses */
    enum hs_cfg_can_protocol protocol;
    uint32_t id;             /* protocols with one joint: the node ID (range: the protocol's) */
    char joint[HS_NAME_MAX]; /* protocols with one joint: the joint driven; else "" */
    union hs_cfg_proto_section proto[HS_CFG_CAN_PROTOCOL_MAX]; /* index: enum hs_cfg_can_protocol */
    struct hs_cfg_src src;
};

/* An ID range a node owns on its bus: frames with (ID & mask) == (id & mask). */
struct hs_cfg_can_claim {
    uint32_t id, mask;
    bool ext; /* 29-bit IDs (else 11-bit) */
};
#define HS_CFG_CAN_CLAIMS_MAX 4

struct hs_cfg_can {
    struct hs_cfg_bus buses[HS_CFG_MAX_BUSES];
    uint32_t nbuses;
    struct hs_cfg_node nodes[HS_CFG_MAX_NODES];
    uint32_t nnodes;
    struct hs_cfg_binding bindings[HS_CFG_MAX_BINDINGS];
    uint32_t nbindings;
    struct hs_cfg_tx tx[HS_CFG_MAX_TX];
    uint32_t ntx;
};

/* ---- shm, trace ---- */
struct hs_cfg_shm {
    bool enabled;
    char group[HS_CFG_GROUP_MAX]; /* group owning the segment, "" = the process's group */
    uint32_t mode;                /* permission bits, 0 .. 0777, never o+w */
    double client_timeout_s;      /* client silent this long: its commands go stale, s */
};

struct hs_cfg_trace {
    bool enabled; /* LTTng-UST tracepoints per tick and per frame */
};

/* ---- record (hilsim/record.h) ---- */
#define HS_CFG_RECORD_DIR_MAX 256
/* record.compression: the recording's binary files compressed on the writer thread or not. */
enum hs_cfg_record_compression { HS_CFG_RECORD_ZSTD = 0, HS_CFG_RECORD_NONE = 1 };
struct hs_cfg_record {
    bool enabled;                    /* record every run (a systemd bench) */
    char dir[HS_CFG_RECORD_DIR_MAX]; /* absolute parent folder: runs go to <dir>/<bench>-<UTC> */
    double rotate_mib;               /* new segment past this many MiB, 0 = never */
    double rotate_s;                 /* new segment past this many seconds, 0 = never */
    uint32_t keep_segments;          /* delete older segments beyond this many, 0 = keep all */
    uint32_t ring_items;             /* frames/commands/events in flight to the writer */
    uint32_t ring_states;            /* ticks of state in flight to the writer */
    enum hs_cfg_record_compression compression;
    uint32_t compression_level; /* zstd's level, 1..19 */
};

struct hs_config {
    char *path;     /* the config file as given ("<buffer name>" for buffers) */
    char *base_dir; /* absolute directory relative paths were resolved against, or NULL */
    struct hs_cfg_bench bench;
    struct hs_cfg_model models[HS_CFG_MAX_MODELS];
    uint32_t nmodels;
    struct hs_cfg_initial_joint initial_joints[HS_CFG_MAX_INITIAL_JOINTS];
    uint32_t ninitial_joints;
    struct hs_cfg_package packages[HS_CFG_MAX_PACKAGES];
    uint32_t npackages;
    struct hs_cfg_model_sensor model_sensors[HS_CFG_MAX_MODEL_SENSORS];
    uint32_t nmodel_sensors;
    struct hs_world_params physics;
    struct hs_cfg_rt rt;
    struct hs_cfg_budgets budgets;
    struct hs_cfg_controller controller;
    struct hs_cfg_actuators actuators;
    struct hs_cfg_sensors sensors;
    struct hs_cfg_can can;
    struct hs_cfg_shm shm;
    struct hs_cfg_trace trace;
    struct hs_cfg_record record;
};

/* init only: allocates. Reads, parses and validates path. On failure *ret_config is untouched,
 * nothing leaks and diag names file:line:column, the field path and what was expected. */
int hs_config_load(const char *path, const struct hs_config **ret_config, struct hs_diag *diag);
/* Same from a buffer. name is used in messages; base_dir resolves relative paths (NULL: a
 * relative path is then an error). Files named by the config must exist in both cases. */
int hs_config_load_buffer(const char *data, unsigned long size, const char *name,
                          const char *base_dir, const struct hs_config **ret_config,
                          struct hs_diag *diag);
void hs_config_free(const struct hs_config *config); /* accepts NULL */
/* The same with overrides for a "what if" (`--set physics.friction=0.3`): each "KEY=VALUE"
 * (a dotted key, list elements by index: models.0.pose.position or models[0].pose.position; the
 * value as YAML: 0.3, [0, 0, -9.81], true) replaces or adds that key in the file's document before
 * it is read, so it is checked like a value in the file; a bad key or value gives a diag whose
 * file is "--set" and whose message starts with the KEY=VALUE. */
int hs_config_load_sets(const char *path, const char *const *sets, uint32_t nsets,
                        const struct hs_config **ret_config, struct hs_diag *diag);
int hs_config_load_buffer_sets(const char *data, unsigned long size, const char *name,
                               const char *base_dir, const char *const *sets, uint32_t nsets,
                               const struct hs_config **ret_config, struct hs_diag *diag);

/* RT-safe. Fills every documented default; no models, bench name "" (not a valid config alone).
 * Path pointers are NULL. */
void hs_config_defaults(struct hs_config *ret_config);

/* init only. models[i] is the model loaded from config->models[i].file (nmodels ==
 * config->nmodels). Checks that every joint and sensor name the config uses exists (joints:
 * movable rotate/slide joints of a non-static model; IMU parts: accel/gyro sensors; force:
 * force sensors) and is not ambiguous across models. Returns 0 or -EINVAL with diag set. */
int hs_config_check_against_models(const struct hs_config *config,
                                   const struct hs_model *const *models, uint32_t nmodels,
                                   struct hs_diag *diag);

/* Lookups (any thread, no allocation): the entry for a name, else the section defaults. */
/* init only. The options to load config->models[model] with (package paths, mesh collision);
 * ret_opts points into pk, which must outlive the load. */
void hs_config_model_options(const struct hs_config *config, uint32_t model,
                             struct hs_model_package pk[HS_CFG_MAX_PACKAGES],
                             struct hs_model_options *ret_opts);
/* init only. Adds config->models[index].sensors to model (loaded from its file): -EINVAL with
 * diag at the entry for an unknown link or a name the model already has. */
int hs_config_add_model_sensors(const struct hs_config *config, uint32_t index,
                                struct hs_model *model, struct hs_diag *diag);
const struct hs_cfg_actuator *hs_config_actuator(const struct hs_config *config, const char *joint);
const struct hs_cfg_encoder *hs_config_encoder(const struct hs_config *config, const char *joint);
const struct hs_cfg_gains *hs_config_gains(const struct hs_config *config, const char *joint);
/* The node driving a joint (mit/odrive joint, or a dbc node with a to: binding on it), or NULL. */
const struct hs_cfg_node *hs_config_node_for_joint(const struct hs_config *config,
                                                   const char *joint);
/* Any thread: rt.clock.lockstep_source with auto resolved (never HS_CFG_LOCKSTEP_AUTO). */
enum hs_cfg_lockstep_source hs_config_lockstep_source(const struct hs_config *cfg);

/* Any thread, no allocation: the IDs node n owns on its bus as far as the config says (its
 * protocol's claims; protocols whose IDs come from a file they load claim none here). Returns
 * how many were written to out (<= HS_CFG_CAN_CLAIMS_MAX). */
unsigned hs_config_can_node_claims(const struct hs_cfg_node *n,
                                   struct hs_cfg_can_claim out[HS_CFG_CAN_CLAIMS_MAX]);
/* Any thread, no allocation: the IDs node n's own frames go out on (replies, cyclic frames,
 * reports), as far as the config says; 0 when its protocol does not tell. An MIT node's replies
 * share the master's ID with every MIT node answering that master (data[0] tells them apart). */
unsigned hs_config_can_node_replies(const struct hs_cfg_node *n,
                                    struct hs_cfg_can_claim out[HS_CFG_CAN_CLAIMS_MAX]);
/* The effective command source of a joint: the actuator entry's source, with auto resolved. */
enum hs_cfg_command_source hs_config_joint_source(const struct hs_config *config,
                                                  const char *joint);

/* init only. Writes the resolved config (every key, defaults filled in, paths absolute) as YAML
 * that hs_config_load_buffer() reads back to an equal config. Returns 0 or -errno. */
int hs_config_write(const struct hs_config *config, FILE *out);

/* Enum names as written in the file (NULL for out-of-range values). */
const char *hs_cfg_command_source_name(enum hs_cfg_command_source s);
const char *hs_cfg_can_protocol_name(enum hs_cfg_can_protocol p);
const char *hs_cfg_quantity_name(enum hs_cfg_quantity q);

#endif
