/* Record and replay: every bench run kept on disk, and any run replayed offline.
 *
 * A recording is a folder (format version 3, documented in src/record/README.md; every binary
 * file carries the run's random id, its segment and counts, its records in CRC-framed blocks,
 * compressed with zstd by default):
 *   manifest.json       hilsim version and commit, the config copied beside it, model hashes,
 *                       seeds, clock mode, start time, host audit, signal names, drop counts
 *   config.yaml         the config file as it was read
 *   state.bin           the plant per tick: joints, sensors as reported, root poses
 *   shm.bin             the shm commands as they reached the joints' command slots
 *   events.bin          overruns, policy actions, plant faults, scenario and lockstep events
 *   can-<bus>.log       per CAN bus, every frame received and sent, in candump's log format
 *   live-step-N.yaml    a step live control injected; live-scenario-N.yaml: a file it started
 * With a rotation policy each file gets a segment number (state.1.bin, ...) and old segments
 * are deleted.
 *
 * Threads: the tick thread (and a CAN bus's reply thread) push fixed-size records into
 * preallocated lock-free rings; a writer thread drains them to the files. A full ring drops the
 * record and counts it (hs_rec_stats); nothing on the tick side blocks, allocates or prints.
 *
 * Lifecycle: hs_rec_create (init only: allocates, creates the folder, writes the manifest) ->
 * hs_rec_can_tap_install before the CAN module opens its buses -> hs_rec_attach after every
 * other I/O module (its inputs phase must be the last one) -> the run -> hs_rec_finish (stops
 * the writer, finishes the manifest) -> hs_rec_destroy. */
#ifndef HILSIM_RECORD_H
#define HILSIM_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/diag.h"

/* Event kinds in events.bin (stable numbers: they are on disk). */
enum hs_rec_event_kind {
    HS_REC_EV_OVERRUN = 1,     /* a: tick duration ns, b: deadlines missed (rt_ring.h) */
    HS_REC_EV_SKIP = 2,        /* a: periods skipped, b: tick resumed at */
    HS_REC_EV_SAFE_HOLD = 3,   /* a: leaky counter, b: threshold */
    HS_REC_EV_STOP = 4,        /* a: stop reason, b: phase error; text: the reason */
    HS_REC_EV_STALL = 5,       /* a: injected stall ns */
    HS_REC_EV_PLANT_FAULT = 6, /* a: negative errno; text: the fault's one-line cause */
    HS_REC_EV_SHM_REFUSED = 7, /* a: joint, b: shm mode the actuator does not accept */
    HS_REC_EV_SCENARIO = 8,    /* scenario events (helper hook): a, b and text as posted */
    HS_REC_EV_LOCKSTEP = 9,    /* lockstep/sync events (helper hook) */
    HS_REC_EV_NOTE = 10,       /* free text (start, rotation, stop) */
    HS_REC_EV_LIVE = 11,       /* live control applied (a: its number, b: enum hs_rec_live) */
    HS_REC_EV_MAX
};

/* What a HS_REC_EV_LIVE event says the tick applied (stable numbers: on disk). */
enum hs_rec_live {
    HS_REC_LIVE_INJECT = 1,     /* a step: a = N of live-step-N.yaml */
    HS_REC_LIVE_CLEAR = 2,      /* every live step ended */
    HS_REC_LIVE_SCEN_START = 3, /* a scenario file: a = N of live-scenario-N.yaml */
    HS_REC_LIVE_SCEN_STOP = 4,  /* the live scenario's steps ended */
};

#define HS_REC_TEXT_MAX 48 /* event text bytes stored, NUL included */
/* What a reader takes (src/record/README.md, "Bounds"): bigger is refused before it is read. */
#define HS_REC_MANIFEST_MAX (64u << 20)  /* manifest.json, bytes */
#define HS_REC_TEXT_FILE_MAX (16u << 20) /* config, scenario and live-step copies, bytes */
#define HS_REC_SEGMENTS_MAX 1000000u     /* segments a manifest may list */
#define HS_REC_NAME_MAX 256              /* bench, bus, joint, sensor names in a manifest, bytes */
/* The first line of every text copy a version 3 recording keeps (config.yaml,
 * config-resolved.yaml, scenario.yaml, live-step-N.yaml, live-scenario-N.yaml): a YAML comment,
 * this mark, the run's 32 hex digits, ": " and what the copy is. The manifest's SHA-256 of a
 * copy covers this line too. */
#define HS_REC_COPY_MARK "# hilsim recording, run_id "

struct hs_rt_audit;

/* The clock_mode of a `hilsim sim --record` run: offline, and its sensors are read once at
 * t = 0 before the first tick (for the CSV's first row), which a replay repeats. */
#define HS_REC_CLOCK_OFFLINE "offline"

struct hs_rec_opts {
    const char *dir;           /* the recording folder: created; must not exist or be empty */
    const char *config_path;   /* the config file to copy (NULL: none) */
    const char *scenario_path; /* the scenario file the run plays, copied (NULL: none) */
    const char *const *sets;   /* --set overrides the config was loaded with (manifest) */
    uint32_t nsets;
    const char *clock_mode;          /* "realtime", "simulated", ... (manifest only) */
    const char *version;             /* hilsim version string */
    const struct hs_rt_audit *audit; /* host audit (NULL: none); read at create */
    uint32_t ring_items;             /* frame/command/event ring slots (0: 65536) */
    uint32_t ring_states;            /* state ring slots (0: 4096) */
    uint64_t rotate_bytes;           /* start a new segment past this many bytes (0: never) */
    double rotate_s;                 /* ... or past this many seconds of recording (0: never) */
    uint32_t keep_segments;          /* delete older segments beyond this many (0: keep all) */
    /* The binary files' blocks are compressed with zstd on the writer thread (never on the
     * tick) unless no_compression (then stored as they are); compression_level 0 is zstd's
     * default (3). */
    bool no_compression;
    int compression_level;
    bool writer_paused; /* tests: the writer drains nothing until hs_rec_finish, so a run longer
                           than the ring overflows it for certain */
};

struct hs_rec_stats {
    uint64_t ticks;          /* state records pushed */
    uint64_t items;          /* frames, commands and events pushed */
    uint64_t dropped_states; /* refused by a full ring: lost */
    uint64_t dropped_items;
    uint64_t bytes_written; /* on disk */
    uint64_t bytes_raw;     /* the binary files' records uncompressed, plus the logs' bytes */
    uint64_t writer_cpu_ns; /* the writer thread's CPU time (after hs_rec_finish: all of it) */
    uint32_t segments;
    int write_error; /* first writer error (negative errno), 0 */
};

struct hs_recorder;

/* init only: allocates the rings, creates the folder and its files, writes the manifest and
 * starts the writer thread. bench: its joints, sensors and bodies fix the state layout. */
int hs_rec_create(const struct hs_rec_opts *opts, struct hs_bench *bench,
                  struct hs_recorder **ret_rec, struct hs_diag *d);
/* init only: CAN buses the recorder's bench opens from now until hs_rec_can_tap_remove are
 * recorded (their frames go to can-<bus>.log, the bus named by its interface in the bench
 * config). The tap is set on the bench (hs_bench_can_set_tap), not on the process. */
void hs_rec_can_tap_install(struct hs_recorder *rec);
void hs_rec_can_tap_remove(struct hs_recorder *rec);
/* init only: adds the recorder's I/O module (after every other one) and the bench tap. The
 * bench owns the module; the recorder itself stays the caller's. */
int hs_rec_attach(struct hs_recorder *rec, struct hs_bench *bench);
/* RT-safe, any thread: one event (text: a static string or NULL; copied, truncated). */
void hs_rec_event(struct hs_recorder *rec, enum hs_rec_event_kind kind, uint64_t tick, int64_t a,
                  int64_t b, const char *text);
/* Any thread, no allocation. */
void hs_rec_stats(const struct hs_recorder *rec, struct hs_rec_stats *ret);
const char *hs_rec_dir(const struct hs_recorder *rec);
/* Any thread: the run's id (the manifest's run_id) as 32 hex digits and a NUL. */
void hs_rec_run_id_hex(const struct hs_recorder *rec, char out[33]);
/* Non-RT: "; recording: 123 dropped" or "" for STATUS= lines. */
void hs_rec_status(const struct hs_recorder *rec, char *buf, size_t size);
/* Non-RT, offline runs only (`hilsim sim --record`): waits until both rings are at most half
 * full, so a run faster than the writer slows to its pace instead of dropping records. A run in
 * time never calls it: its ring's size is its margin. 0, or the writer's error. */
int hs_rec_wait_room(struct hs_recorder *rec);
/* Non-RT: drains the rings, stops the writer, closes the files, rewrites the manifest with the
 * counts. Idempotent. Returns the first write error or 0. */
int hs_rec_finish(struct hs_recorder *rec, const char *stop_reason);
/* Accepts NULL; finishes first if needed. The bench must be destroyed first (or never have
 * had the module attached). */
void hs_rec_destroy(struct hs_recorder *rec);

/* ---- reading (non-RT) ---- */

/* One tick of state.bin as stored. */
struct hs_rec_state {
    uint64_t tick;         /* the loop's tick number (warm-up ticks count from 0 too) */
    int64_t now_ns;        /* the phases' now_ns */
    int64_t real_ns;       /* CLOCK_REALTIME at the end of the inputs phase */
    uint32_t flags;        /* HS_REC_STATE_* */
    const double *joints;  /* njoints x HS_REC_JOINT_FIELDS */
    const double *sensors; /* each sensor's values as its kind declares them, in order */
    const double *bodies;  /* nbodies x 7: x y z qw qx qy qz */
};
enum {
    HS_REC_STATE_WARMUP = 1u << 0,
    HS_REC_STATE_SAFE_HOLD = 1u << 1,
    HS_REC_STATE_FAULT = 1u << 2,
};
/* q, dq, torque, current, encoder_position, encoder_velocity, encoder_count (as a double). */
#define HS_REC_JOINT_FIELDS 7

/* One shm command slot write. */
struct hs_rec_shm {
    uint64_t ord;      /* the recorded tick's ordinal (0 = first state record) */
    int64_t real_ns;   /* when it was recorded */
    uint32_t joint;    /* bench joint index */
    uint32_t shm_mode; /* HS_SHM_MODE_*, or HS_REC_SHM_STALE: the slot was marked stale */
    uint32_t mode;     /* the plant mode written (enum hs_joint_mode) */
    double q, dq, kp, kd, tau_ff, current, velocity;
    int64_t rx_time_ns;
    uint64_t seq;
};
#define HS_REC_SHM_STALE 0xFFFFFFFFu

struct hs_rec_event {
    uint64_t ord;
    int64_t real_ns;
    uint32_t kind;
    uint64_t tick;
    int64_t a, b;
    char text[HS_REC_TEXT_MAX];
};

struct hs_rec_frame {
    int64_t time_us; /* the log's timestamp in µs (CLOCK_REALTIME) */
    bool rx;         /* received by hilsim (R), else sent (T) */
    uint32_t id;
    uint8_t flags; /* enum hs_can_frame_flag */
    uint8_t len;
    uint8_t data[64];
};

/* A recording opened for reading: the manifest, the signal layout and every record in memory. */
struct hs_recording {
    char *dir;
    char *config_text; /* config.yaml */
    size_t config_len;
    char *config_base_dir; /* where the config's relative paths resolve */
    char **config_sets;    /* the run's --set overrides of config.yaml (replayed first) */
    uint32_t nconfig_sets;
    char *config_resolved_text; /* config-resolved.yaml: the run's config as its hilsim resolved
                                 * it, --set overrides and defaults included (NULL: recorded
                                 * before it was kept) */
    size_t config_resolved_len;
    char *hilsim_commit; /* the recording hilsim's git commit (NULL: not in the manifest) */
    char *scenario_text; /* scenario.yaml: the scenario the run played (NULL: none) */
    size_t scenario_len;
    char *scenario_base_dir;
    char *clock_mode;
    uint32_t njoints, nsensors, nbodies;
    char **joint_names, **sensor_names, **body_names;
    uint32_t format_version;  /* of the files read (1: six values per sensor) */
    uint32_t *sensor_nvalues; /* per sensor: its doubles in a state record (its kind's layout) */
    uint32_t nsensor_values;  /* their sum */
    char **sensor_fields;     /* nsensor_values: each value's name ("x", "fx", "r0", ...) */
    uint32_t nstates;
    uint32_t state_stride; /* doubles per state record payload */
    uint64_t *ticks;
    int64_t *now_ns, *real_ns;
    uint32_t *flags;
    double *values;       /* nstates x state_stride */
    uint32_t count_buses; /* u32 frame counts per state record (the CAN buses, padded even) */
    uint32_t *rx_counts;  /* nstates x count_buses: frames the tick took from each bus */
    uint32_t nshm;
    struct hs_rec_shm *shm;
    uint32_t nevents;
    struct hs_rec_event *events;
    uint32_t nbuses;
    char **bus_names;
    uint32_t *nframes;
    struct hs_rec_frame **frames;
    uint64_t dropped_states, dropped_items;
    bool complete;
    /* The rotation policy deleted segments 0 .. first_segment-1 (keep_segments): the states
     * begin at the run's state first_ord (items' ord count from the run's start). 0, 0 for a
     * whole recording. */
    uint32_t first_segment;
    uint64_t first_ord;
    /* A run that crashed (manifest not complete) leaves a half-written record, line or file
     * at the end: the reader salvages every whole tick before the first damage it meets and
     * says where in damage (file and byte offset); damaged is then true and nstates is the
     * count of ticks recovered. Set salvage before the parsers run to get that behaviour from
     * them (hs_recording_open sets it from the manifest); a complete recording's damage is
     * an error. */
    int64_t period_ns;    /* the manifest's (0: absent) */
    uint8_t run_id[16];   /* version 3: the manifest's run_id, in every binary file's header */
    uint32_t cur_segment; /* the segment being read (its files' headers must say so) */
    /* version 3, a crashed run: segments found by the writer's naming rule and the run id
     * beyond those the manifest lists (the crash came before it was rewritten); non-empty
     * says which (a warning, not damage). */
    char unlisted[256];
    int64_t manifest_ticks; /* the manifest's ticks (state records pushed; -1: absent) */
    bool salvage;
    bool damaged;
    char damage[512];
};

/* Non-RT: allocates. A truncated, corrupted or inconsistent recording gives -EBADMSG (or the
 * open error) with d naming the file and the byte offset; an incomplete one (a crashed run)
 * is salvaged up to its first damage (see damaged). Every file is opened without following a
 * symbolic link or waiting (a FIFO, a device: an error), and read up to the bounds the
 * README states. */
int hs_recording_open(const char *dir, struct hs_recording **ret, struct hs_diag *d);
/* The same with the manifest's text given (fuzzing): its files are read from dir. */
int hs_recording_open_manifest(const char *dir, const char *text, size_t len,
                               struct hs_recording **ret, struct hs_diag *d);
void hs_recording_free(struct hs_recording *r);
/* Parsers the reader uses, exposed for tests and fuzzing. Each validates every byte: buf is a
 * whole file, name is used in messages. */
int hs_rec_parse_state(struct hs_recording *r, const uint8_t *buf, size_t len, const char *name,
                       struct hs_diag *d);
int hs_rec_parse_items(struct hs_recording *r, const uint8_t *buf, size_t len, const char *name,
                       struct hs_diag *d);
/* One candump log line (no newline) into f; -EINVAL when it is not one. */
int hs_rec_parse_candump_line(const char *line, size_t len, struct hs_rec_frame *f);
/* A whole candump log: appends to *frames (realloc'd). -EBADMSG with d naming file and line. */
int hs_rec_parse_candump(const char *buf, size_t len, const char *name, const char *iface_filter,
                         struct hs_rec_frame **frames, uint32_t *nframes, struct hs_diag *d);
/* The state signal name of column k (0 .. state_stride-1), e.g. "joint1.q". */
int hs_recording_signal_name(const struct hs_recording *r, uint32_t k, char *buf, size_t size);
int hs_recording_find_signal(const struct hs_recording *r, const char *name); /* k or -ENOENT */

/* ---- replay (non-RT, offline, as fast as the machine allows) ---- */

struct hs_replay_opts {
    /* The config to rebuild the bench from: NULL for the recording's own copy (resolved
     * against the original config's folder); a path for a "what if" with changed values. */
    const char *config_path;
    const char *const *sets; /* "KEY=VALUE" overrides of that config (hs_config_load_sets) */
    uint32_t nsets;
    /* The scenario played again, from its first tick (the recorded scenario events are
     * checked against the replayed ones): NULL for the recording's copy, a path for another
     * one; no_scenario: none. */
    const char *scenario_path;
    bool no_scenario;
    /* Live control (hilsim ctl inject, scenario start/stop) is injected again at the ticks the
     * run applied it (HS_REC_EV_LIVE events); no_live: not (a what-if without it). */
    bool no_live;
    double until_s;   /* stop after this much of the recording (now_ns from its first tick) */
    double tolerance; /* |recorded - replayed| allowed per signal; 0: bit-exact */
    /* After every replayed tick, its state compared (NULL: none): the bench as it stands, for a
     * reader of what a recording does not keep (hilsim view takes the contacts and the solver's
     * health from it); diverged: this tick or one before differed from the recording. Returns
     * false to end the replay there (as until_s would). */
    bool (*after_tick)(void *ctx, uint32_t ord, struct hs_bench *b, bool diverged);
    void *after_tick_ctx; /* Keep no replayed values (ret->values is NULL): a reader that wants only
                           * after_tick, or the verdict, of a recording too long to hold twice in
                           * memory. */
    bool no_values;
};

struct hs_replay_result {
    uint32_t ticks; /* replayed */
    bool diverged;
    uint32_t first_ord;  /* index into the recording's states of the first divergence */
    uint64_t first_tick; /* its tick */
    int first_signal;    /* column (hs_recording_signal_name) */
    double recorded, replayed;
    double max_abs_q_err; /* over every joint's q, every tick replayed */
    uint64_t frames_fed, commands_fed;
    /* The scenario (when one was replayed): its events recorded and replayed (step i began:
     * a = i, b = 1; ended: b = 0), the first state index where they differ (-1: none), and
     * the replayed verdict. */
    bool scenario;
    uint32_t scenario_events_recorded, scenario_events_replayed;
    int64_t scenario_mismatch_ord;
    uint32_t scenario_expects, scenario_failed;
    uint32_t live_recorded, live_fed; /* HS_REC_EV_LIVE events in the recording, applied again */
    int fault_rc;                     /* the replayed bench's plant fault (negative errno) or 0 */
    double *values;                   /* ticks x state_stride replayed values (owned; free()) */
    /* The recording's first segment was deleted: the replay began at a checkpoint, the state
     * recorded in the first kept state (its values are the checkpoint's: row 0). */
    bool from_checkpoint;
};

/* Rebuilds the bench, feeds the recorded inputs at their ticks (shm slot writes at the tick
 * they happened; CAN frames hilsim received to the tick whose inputs phase ended after the
 * frame's time), steps every recorded tick with its recorded now_ns (warm-up and safe hold as
 * recorded), and compares every signal. init only: allocates.
 * A recording whose first segments were deleted (keep_segments) starts from a checkpoint: the
 * bench is built with every joint's q and dq, and each free robot's root pose, set to the
 * first kept state (as the config's initial state: --set models.N.initial.joints...), the
 * replay starts on the tick after it, and no scenario is played (its state at that tick is not
 * recorded). What a state record does not hold starts afresh: a free root's velocity (zero),
 * actuator, encoder and filter history, the demo controller's phase, command timeouts. */
int hs_replay_run(const struct hs_recording *rec, const struct hs_replay_opts *o,
                  struct hs_replay_result *ret, struct hs_diag *d);

/* Import: drive a bench open loop from a candump log recorded elsewhere. Frames of the log
 * whose interface is a bus's interface in the config go to that bus (a log with one interface
 * and a config with one bus: all of them), at the tick whose time (the log's first frame plus
 * k periods) has passed them. Runs until the last frame plus extra_s. Fills a recording-like
 * result: states with the replayed values (*ret_rec, free with hs_recording_free). */
int hs_replay_import(const char *config_path, const char *log_path, double extra_s,
                     struct hs_recording **ret_rec, struct hs_diag *d);

/* Writes a CSV (time in s, then per signal "<name>" recorded and "<name>.replay" replayed when
 * replayed is non-NULL) that PlotJuggler opens as it is. signals: columns; n == 0: all. */
int hs_replay_write_csv(FILE *out, const struct hs_recording *rec, const double *replayed,
                        uint32_t nreplayed, const int *signals, uint32_t n);
/* An SVG: one panel per signal, recorded (solid) and replayed (dashed) over time, the first
 * divergence marked. */
int hs_replay_write_svg(FILE *out, const struct hs_recording *rec, const double *replayed,
                        uint32_t nreplayed, const int *signals, uint32_t n, int64_t mark_ord);
/* The same panels as a PNG (cairo), 900 pixels wide, 180 per panel (at most 64 panels:
 * -E2BIG beyond). */
int hs_replay_write_png(FILE *out, const struct hs_recording *rec, const double *replayed,
                        uint32_t nreplayed, const int *signals, uint32_t n, int64_t mark_ord);

#endif
