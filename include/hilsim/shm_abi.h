/* The shared-memory ABI between hilsim (the server) and local controllers (clients).
 *
 * One POSIX shm segment per bench, /dev/shm/hilsim-<bench>, created by the server (mode 0660,
 * never world-writable). Everything in it is fixed-width and located by offsets from the start
 * of the segment, never by pointers, so processes of any bitness-compatible build can map it.
 *
 *   offset 0               struct hs_shm_header (magic, ABI version, sizes, offsets, control)
 *   header.names_offset    struct hs_shm_name[name_count]: joints, then sensors
 *   header.state_offset    struct hs_shm_state_head, then joint, IMU and F/T states
 *   header.readings_offset struct hs_shm_readings_head, then the reading descriptors, stamps
 *                          and values of every sensor, of any kind (ABI 1.3; 0: absent)
 *   header.command_offset  struct hs_shm_command_head, then struct hs_shm_joint_command[]
 * (readers locate every section by its offset, never by the order above)
 *
 * Access marks per field: rt = the server's tick thread, client = local controllers.
 * Only the words marked _Atomic (and the seqlocked data, word by word) change after creation.
 *
 * Why a seqlock and not a triple buffer for the state: the state has one writer (the tick) that
 * must never wait, and any number of readers in other processes that we do not trust to make
 * progress. A seqlock never blocks the writer and needs no per-reader bookkeeping in shared memory;
 * a reader that overlaps a publish simply copies again. A triple buffer would also never block the
 * writer, but with several readers each needs its own buffer index handshake (or the buffers
 * multiply), and a reader that stalls mid-copy pins a buffer. The snapshot is small (about 1.5 KiB
 * for 30 joints and 6 sensors, a few hundred nanoseconds to copy), so retries are cheap and rare
 * at a 1 ms period. The same argument holds for the command section, with roles swapped: one
 * client writes, the tick reads and must not wait.
 *
 * Seqlock protocol (after Linux seqcount and Boehm, "Can seqlocks get along with programming
 * language memory models?", MSPC 2012). Data words are accessed with relaxed atomics, so the
 * protocol is race-free in the C11 model (and under ThreadSanitizer), and on x86-64 and AArch64
 * a relaxed 64-bit load or store is a plain move:
 *   writer: s = seq (relaxed, single writer); seq = s + 1 (relaxed, now odd);
 *           release fence; data stores (relaxed); seq = s + 2 (release, even again).
 *   reader: s0 = seq (acquire); odd -> retry; data loads (relaxed); acquire fence;
 *           s1 = seq (relaxed); s1 != s0 -> retry.
 * A writer that dies between the two seq stores leaves seq odd forever: readers never accept the
 * half-written data. */
#ifndef HILSIM_SHM_ABI_H
#define HILSIM_SHM_ABI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HS_SHM_MAGIC 0x4d485348u /* "HSHM" in memory on little-endian hosts */
/* Compatibility rule: abi_version changes when an existing field moves, changes type or meaning,
 * or a section changes size for the same counts; readers refuse any other version. A field taken
 * from reserved space, where zero keeps the old meaning ("unknown" or "not set"), does not change
 * the version: old readers ignore it, new readers treat zero as "not recorded" (creator_start,
 * bench_flags). Reserved words are zero when the server creates the segment. */
#define HS_SHM_ABI_VERSION 1u
/* Additions under that rule, recorded in abi_minor (servers before 1.2 leave it 0):
 *   1.1  creator_start;
 *   1.2  clock_mode, release_futex, release_waiting (lockstep). A client that predates them
 *        never releases a lockstep tick: such a server runs it at its lockstep timeout (on_timeout
 *        step), holds, or stops, as configured.
 *   1.3  readings_offset, readings_size: the generic readings section (below).
 *
 * Sensor kinds and the ABI. The IMU and F/T state arrays and their name-table entries are the
 * 1.0 layout and stay as they are (old clients size the name table and the state section from
 * their counts). Every sensor of every kind (hilsim/sensor_kinds.h: accel, gyro, force, range,
 * and whatever is added later) is described in the readings section instead: a descriptor per
 * sensor says its name, its kind's name, its unit, how many values it has and where they are,
 * with four kind-defined parameters. So a new sensor kind is new descriptors with a new kind
 * string, never a new field, kind number or section: no ABI change at all, not even a minor.
 * The rule for readers: find sensors by name (and check the kind string if it matters), take
 * value_count values from value_index, and ignore kinds you do not know. The section itself
 * changes only under the rules above: new words come from its reserved space. */
#define HS_SHM_ABI_MINOR 3u
#define HS_SHM_PATH_PREFIX "/hilsim-" /* shm_open name: "/hilsim-<bench>" */
#define HS_SHM_BENCH_MAX 64           /* bench name length limit, bytes, without NUL */
#define HS_SHM_NAME_MAX 48            /* joint or sensor name, bytes, with NUL */
#define HS_SHM_UNIT_MAX 16            /* unit string, bytes, with NUL */
#define HS_SHM_JOINTS_MAX 1024
#define HS_SHM_SENSORS_MAX 1024
#define HS_SHM_READING_VALUES_MAX (1u << 20) /* values in the readings section, all sensors */
#define HS_SHM_ALIGN 64                      /* sections start on cache lines */

enum hs_shm_kind {
    HS_SHM_KIND_JOINT = 1, /* index into joint states/commands */
    HS_SHM_KIND_IMU = 2,   /* index into IMU states */
    HS_SHM_KIND_FORCE = 3, /* index into force/torque states */
    HS_SHM_KIND_MAX
};

/* Joint command modes. Setpoints not used by a mode are ignored. */
enum hs_shm_mode {
    HS_SHM_MODE_DISABLED = 0, /* no torque (the actuator's own idle behaviour) */
    HS_SHM_MODE_TORQUE,       /* tau = tau_ff */
    HS_SHM_MODE_CURRENT,      /* motor current = current_a */
    HS_SHM_MODE_VELOCITY,     /* tau = kd (dq* - dq) + tau_ff */
    HS_SHM_MODE_POSITION_PD,  /* tau = kp (q* - q) + kd (dq* - dq) + tau_ff (MIT style) */
    HS_SHM_MODE_BRAKE,        /* joint held by the brake */
    HS_SHM_MODE_MAX
};

/* The bench's own state at a tick (state head bench_flags). The word was reserved (zero) before
 * these bits existed, so old servers read as "no flag set" and the ABI version is unchanged. */
enum {
    /* The bench's overrun policy holds every joint in its safe behaviour: no command source,
     * shm or CAN, is in effect until hilsim restarts. */
    HS_SHM_BENCH_SAFE_HOLD = 1u << 0,
    /* The plant faulted (the divergence guard tripped, or ODE reported an internal error): the
     * world has stopped, the bench is in its safe stop and exits with status 3. The state
     * published with this flag is the last one, as the fault left it. */
    HS_SHM_BENCH_FAULT = 1u << 1,
};

/* What the server made of the command section at a tick (published in the state head). */
enum hs_shm_client_status {
    HS_SHM_CLIENT_NONE = 0, /* no client owns the command section */
    HS_SHM_CLIENT_ACTIVE,   /* an owner whose heartbeat advances */
    HS_SHM_CLIENT_LOST,     /* heartbeat silent for client_timeout_ns: may be taken over */
    HS_SHM_CLIENT_STATUS_MAX
};

/* How the server paces its ticks (header clock_mode; 0 from servers before ABI 1.2). */
enum hs_shm_clock_mode {
    HS_SHM_CLOCK_WALL = 0,     /* one tick per period of CLOCK_MONOTONIC */
    HS_SHM_CLOCK_LOCKSTEP = 1, /* the command owner releases every tick (hs_client_step) */
    HS_SHM_CLOCK_SYNC = 2,     /* wall, with the period locked to an external event */
    HS_SHM_CLOCK_MODE_MAX
};

enum hs_shm_server_state {
    HS_SHM_SERVER_INIT = 0,
    HS_SHM_SERVER_RUNNING = 1,
    HS_SHM_SERVER_STOPPED = 2, /* destroyed: wait_tick returns -ESHUTDOWN */
    HS_SHM_SERVER_STATE_MAX
};

/* Offset 0. Written once by the server before magic is set (magic is stored last, release). */
struct hs_shm_header {
    _Atomic uint32_t magic; /* rt:w client:r  HS_SHM_MAGIC once the segment is ready */
    uint32_t abi_version;   /* HS_SHM_ABI_VERSION */
    uint64_t total_size;    /* bytes of the whole segment */
    uint32_t header_size;   /* sizeof(struct hs_shm_header) */
    int32_t creator_pid;    /* server pid, for the stale-segment check */
    uint32_t joint_count;
    uint32_t imu_count;
    uint32_t ft_count;
    uint32_t name_count; /* joint_count + imu_count + ft_count */
    uint64_t tick_period_ns;
    uint64_t command_timeout_ns; /* a joint command older than this is stale */
    uint64_t client_timeout_ns;  /* a heartbeat silent this long: client lost */
    uint64_t names_offset, names_size;
    uint64_t state_offset, state_size;
    uint64_t command_offset, command_size;
    /* Start time of creator_pid (field 22 of /proc/PID/stat, clock ticks since boot; 0 from
     * servers before version 1.1 of this header): a pid reused by another process does not make
     * a dead server's segment look alive. */
    uint64_t creator_start;
    uint32_t clock_mode; /* enum hs_shm_clock_mode (0 from servers before ABI 1.2: wall) */
    uint32_t abi_minor;  /* HS_SHM_ABI_MINOR of the server (0 before 1.2) */

    /* Control words (own cache line). */
    _Atomic uint32_t tick_futex; /* rt:w client:r  low 32 bits of the published tick; futex */
    /* client:rw rt:r  clients inside FUTEX_WAIT; the server wakes only if > 0. A client killed
     * while waiting leaves it raised: harmless, each publish then costs one FUTEX_WAKE syscall
     * that finds nobody (non-blocking; see shm_bench "publish+nowake"). */
    _Atomic uint32_t waiters;
    _Atomic uint32_t server_state; /* rt:w client:r  enum hs_shm_server_state */
    /* client:w rt:r  lockstep: low 32 bits of the last tick the command owner is done with
     * (its commands for it are written); that releases the next tick. A futex: the server
     * waits on it. */
    _Atomic uint32_t release_futex;
    _Atomic uint64_t lost_owner; /* rt:w client:r  owner word the server declared lost (0: none) */
    /* rt:w client:r  nonzero while the server waits in FUTEX_WAIT on release_futex: a client
     * that releases wakes it only then (as waiters, with roles swapped). */
    _Atomic uint32_t release_waiting;
    uint32_t reserved3;
    /* The readings section (ABI 1.3; both 0 from older servers). Written once at create like
     * the offsets above; they live in the control line only because that is where the header
     * had reserved words left. */
    uint64_t readings_offset, readings_size;
    uint8_t reserved2[16];
};

/* Name table entry: how a client finds "RARM_ELBOW". */
struct hs_shm_name {
    char name[HS_SHM_NAME_MAX]; /* NUL-terminated */
    char unit[HS_SHM_UNIT_MAX]; /* joints: "rad" or "m"; IMU: "m/s2,rad/s"; F/T: "N,Nm" */
    uint32_t kind;              /* enum hs_shm_kind */
    uint32_t index;             /* index in that kind's state (or command) array */
};

/* State head at state_offset. Everything after seq is seqlocked data. */
struct hs_shm_state_head {
    _Atomic uint32_t seq; /* rt:w client:r  odd while a publish is in progress */
    uint32_t reserved0;
    uint64_t tick;          /* rt:w client:r  tick number (monotonic, from 1) */
    double sim_time_s;      /* simulated time, s */
    int64_t mono_ns;        /* CLOCK_MONOTONIC at publish, ns */
    uint64_t command_seq;   /* newest joint-command seq the server consumed so far */
    uint32_t client_status; /* enum hs_shm_client_status */
    uint32_t stale_joints;  /* joints whose command was stale (or absent) at this tick */
    uint64_t bench_flags;   /* HS_SHM_BENCH_* bits at this tick (0 from servers before them) */
    uint64_t reserved1;
};

/* Per joint, SI: q in rad (or m for a linear joint), dq in rad/s (m/s), tau in N m (N). */
struct hs_shm_joint_state {
    double q;
    double dq;
    double tau;            /* applied joint torque (force) */
    double current_a;      /* motor current, A */
    int64_t encoder_count; /* multi-turn, unwrapped */
};

struct hs_shm_imu_state {
    double accel_mps2[3]; /* specific force in the sensor frame, m/s² */
    double gyro_rad_s[3]; /* angular rate in the sensor frame, rad/s */
};

struct hs_shm_ft_state {
    double force_n[3];   /* in the sensor frame */
    double torque_nm[3]; /* in the sensor frame */
};

/* Readings section head at readings_offset (ABI 1.3). Offsets are from readings_offset. */
struct hs_shm_readings_head {
    uint32_t count;        /* sensors described: struct hs_shm_reading_desc[count] */
    uint32_t value_count;  /* doubles in the values array, all sensors together */
    uint64_t desc_offset;  /* struct hs_shm_reading_desc[count] (written once at create) */
    uint64_t stamp_offset; /* struct hs_shm_reading_stamp[count] (seqlocked, see below) */
    uint64_t value_offset; /* double[value_count] (seqlocked) */
    uint64_t reserved[4];
};

/* One sensor's reading, whatever its kind. */
struct hs_shm_reading_desc {
    char name[HS_SHM_NAME_MAX]; /* the model sensor's name, NUL-terminated */
    char kind[16];              /* the kind's registry name: "accel", "gyro", "force", "range" */
    char unit[HS_SHM_UNIT_MAX]; /* per group of values, comma separated: "m/s2", "N,Nm", "m" */
    uint32_t value_count;       /* doubles in this reading */
    uint32_t value_index;       /* index of its first value in the values array */
    uint32_t group;             /* values per group (3: x y z vectors; 1: a range scan) */
    uint32_t reserved;
    /* Kind-defined (src/plant/sensors/sensor_<kind>.c), unused ones 0. range: first ray angle
     * rad, angle step rad, minDistance m, maxDistance m (values: distances in m per ray, +inf
     * nothing within maxDistance, -inf closer than minDistance). */
    double param[4];
};

/* Per sensor, next to its values: when its current reading was taken. */
struct hs_shm_reading_stamp {
    uint64_t samples; /* readings taken so far: a change means a new sample (or scan) */
    int64_t time_ns;  /* the server's tick time when it was taken, ns */
};

/* Stamps and values are published under the state head's seq, in the same write section as
 * the state: a reader copies them between hs_shm_seq_read_begin(&state->seq) and
 * hs_shm_seq_read_valid, as it copies the state. */

/* Command head at command_offset. owner and heartbeat are outside the seqlock. */
struct hs_shm_command_head {
    /* client:rw (CAS) rt:r  ((uint64_t)generation << 32) | pid; pid 0 = free. The generation
     * increases on every claim, so a stale owner's writes are recognised. */
    _Atomic uint64_t owner;
    _Atomic uint64_t heartbeat; /* client:w rt:r  the owner bumps it on every write and wait */
    _Atomic uint32_t seq;       /* client:w rt:r  seqlock over writer and the joint commands */
    uint32_t reserved0;
    uint64_t writer; /* seqlocked: owner word of the client that wrote the data */
    uint64_t reserved1[4];
};

/* Per joint command (seqlocked). Units as in hs_shm_joint_state. */
struct hs_shm_joint_command {
    uint32_t mode; /* enum hs_shm_mode */
    uint32_t reserved;
    double q;         /* position setpoint */
    double dq;        /* velocity setpoint */
    double tau_ff;    /* feed-forward torque */
    double current_a; /* current setpoint, A */
    double kp;        /* N m / rad */
    double kd;        /* N m s / rad */
    uint64_t seq;     /* per-command sequence number (0: never commanded) */
    int64_t stamp_ns; /* client's CLOCK_MONOTONIC when written, ns */
};

_Static_assert(sizeof(struct hs_shm_header) == 192, "header layout");
_Static_assert(offsetof(struct hs_shm_header, tick_futex) == 128, "control line");
_Static_assert(offsetof(struct hs_shm_header, clock_mode) == 120, "clock mode in old reserved0");
_Static_assert(offsetof(struct hs_shm_header, release_futex) == 140, "in old reserved1");
_Static_assert(offsetof(struct hs_shm_header, release_waiting) == 152, "in old reserved2");
_Static_assert(offsetof(struct hs_shm_header, readings_offset) == 160, "in old reserved2");
_Static_assert(offsetof(struct hs_shm_header, readings_size) == 168, "in old reserved2");
_Static_assert(sizeof(struct hs_shm_readings_head) == 64, "readings head layout");
_Static_assert(sizeof(struct hs_shm_reading_desc) == 128, "reading descriptor layout");
_Static_assert(offsetof(struct hs_shm_reading_desc, param) == 96, "reading params");
_Static_assert(sizeof(struct hs_shm_reading_stamp) == 16, "reading stamp layout");
_Static_assert(sizeof(struct hs_shm_name) == 72, "name layout");
_Static_assert(sizeof(struct hs_shm_state_head) == 64, "state head layout");
_Static_assert(sizeof(struct hs_shm_joint_state) == 40, "joint state layout");
_Static_assert(sizeof(struct hs_shm_imu_state) == 48, "imu layout");
_Static_assert(sizeof(struct hs_shm_ft_state) == 48, "ft layout");
_Static_assert(sizeof(struct hs_shm_command_head) == 64, "command head layout");
_Static_assert(sizeof(struct hs_shm_joint_command) == 72, "joint command layout");
_Static_assert(sizeof(_Atomic uint64_t) == 8, "seqlocked data is copied as 64-bit atomic words");
_Static_assert(_Alignof(_Atomic uint64_t) == 8, "seqlocked data is copied as 64-bit atomic words");

/* Seqlocked data starts 8 bytes into a head (after seq and the reserved word). */
#define HS_SHM_SEQ_DATA_OFFSET 8u

/* ---- Seqlock helpers (RT-safe, header-only so server and client share one protocol) ---- */

/* Copies n 64-bit words out of shared memory with relaxed atomic loads. RT-safe */
static inline void hs_shm_words_load(void *dst, const void *src, size_t words)
{
    const _Atomic uint64_t *s = (const _Atomic uint64_t *)src;
    unsigned char *d = (unsigned char *)dst;
    for (size_t i = 0; i < words; i++) {
        uint64_t w = atomic_load_explicit(&s[i], memory_order_relaxed);
        memcpy(d + i * 8, &w, 8);
    }
}

/* Copies n 64-bit words into shared memory with relaxed atomic stores. RT-safe */
static inline void hs_shm_words_store(void *dst, const void *src, size_t words)
{
    _Atomic uint64_t *d = (_Atomic uint64_t *)dst;
    const unsigned char *s = (const unsigned char *)src;
    for (size_t i = 0; i < words; i++) {
        uint64_t w;
        memcpy(&w, s + i * 8, 8);
        atomic_store_explicit(&d[i], w, memory_order_relaxed);
    }
}

/* Writer side (single writer). Returns the odd value to pass to hs_shm_seq_write_end. RT-safe */
static inline uint32_t hs_shm_seq_write_begin(_Atomic uint32_t *seq)
{
    uint32_t s = atomic_load_explicit(seq, memory_order_relaxed);
    s |= 1u; /* a previous writer that died mid-write left it odd: stay odd */
    atomic_store_explicit(seq, s, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    return s;
}

/* RT-safe */
static inline void hs_shm_seq_write_end(_Atomic uint32_t *seq, uint32_t odd)
{
    atomic_store_explicit(seq, odd + 1u, memory_order_release);
}

/* Reader side: returns the even sequence to validate with, or an odd value (retry). RT-safe */
static inline uint32_t hs_shm_seq_read_begin(const _Atomic uint32_t *seq)
{
    return atomic_load_explicit((_Atomic uint32_t *)seq, memory_order_acquire);
}

/* Nonzero when the data copied since read_begin (which returned s0) is consistent. RT-safe */
static inline int hs_shm_seq_read_valid(const _Atomic uint32_t *seq, uint32_t s0)
{
    atomic_thread_fence(memory_order_acquire);
    return (s0 & 1u) == 0 &&
           atomic_load_explicit((_Atomic uint32_t *)seq, memory_order_relaxed) == s0;
}

static inline uint64_t hs_shm_align(uint64_t v)
{
    return (v + HS_SHM_ALIGN - 1) & ~(uint64_t)(HS_SHM_ALIGN - 1);
}

/* Section sizes implied by the counts (readers check the header against these). */
static inline uint64_t hs_shm_state_bytes(uint32_t joints, uint32_t imus, uint32_t fts)
{
    return sizeof(struct hs_shm_state_head) + (uint64_t)joints * sizeof(struct hs_shm_joint_state) +
           (uint64_t)imus * sizeof(struct hs_shm_imu_state) +
           (uint64_t)fts * sizeof(struct hs_shm_ft_state);
}

/* The readings section for count sensors with value_count values in all: head, descriptors,
 * stamps, values (each part 8-byte aligned by construction). */
static inline uint64_t hs_shm_readings_bytes(uint32_t count, uint32_t value_count)
{
    return sizeof(struct hs_shm_readings_head) +
           (uint64_t)count *
               (sizeof(struct hs_shm_reading_desc) + sizeof(struct hs_shm_reading_stamp)) +
           (uint64_t)value_count * sizeof(double);
}

static inline uint64_t hs_shm_command_bytes(uint32_t joints)
{
    return sizeof(struct hs_shm_command_head) +
           (uint64_t)joints * sizeof(struct hs_shm_joint_command);
}

/* Nonzero when bench is a valid bench name: 1..HS_SHM_BENCH_MAX of [A-Za-z0-9_.-], not starting
 * with '.'. RT-safe */
static inline int hs_shm_bench_valid(const char *bench)
{
    if (!bench || !bench[0] || bench[0] == '.')
        return 0;
    size_t n = 0;
    for (const char *p = bench; *p; p++, n++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '-' || ch == '.';
        if (!ok || n >= HS_SHM_BENCH_MAX)
            return 0;
    }
    return 1;
}

#endif
