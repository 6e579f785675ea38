/* Internal to src/record: the on-disk layout (README.md documents it for other readers), the
 * rings between the tick and the writer thread, and the recorder object. */
#ifndef HS_REC_INTERNAL_H
#define HS_REC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "hilsim/record.h"

/* ---- on disk (host byte order: little-endian on every supported host) ---- */
#define HS__REC_STATE_MAGIC "HSRSTATE"
#define HS__REC_ITEMS_MAGIC "HSRITEMS"
#define HS__REC_VERSION 3u /* 3: run id, counts, blocks; 2: bare records; 1: six per sensor */

struct hs__rec_file_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size; /* sizeof this struct: 32 */
    uint32_t record_size;
    /* state files (0 in item files); nsensors: version 1 the sensor count (six values each),
     * version 2 the sensor values in a record (each sensor's count is in the manifest) */
    uint32_t njoints, nsensors, nbodies;
};

/* Version 3's header: the version 2 header (version 3, header_size 80), then what ties the
 * file to its run and bounds it. records and body_bytes are HS__REC_OPEN while the segment is
 * being written (a crash leaves them so); its close rewrites them, and header_crc (CRC-32 of
 * the 80 bytes with header_crc as 0) covers both writes. */
#define HS__REC_OPEN UINT64_MAX
enum { HS__REC_CODEC_NONE = 0, HS__REC_CODEC_ZSTD = 1 };
struct hs__rec_file_header3 {
    struct hs__rec_file_header h;
    uint8_t run_id[16]; /* random (getrandom), the manifest's run_id */
    uint32_t segment;   /* the segment this file belongs to */
    uint32_t codec;     /* HS__REC_CODEC_*: what the writer was set to (blocks say their own) */
    uint64_t records;   /* records in the file's blocks */
    uint64_t body_bytes;
    uint32_t header_crc;
    uint32_t pad;
};

/* Version 3's body: blocks. Each is this header, then `stored` bytes: the block's records
 * as they are (HS__REC_BLOCK_RAW) or one zstd frame with its content checksum
 * (HS__REC_BLOCK_ZSTD) that decompresses to exactly nrecords x record_size bytes, the records
 * byte-shuffled: byte j of record i at j x nrecords + i (the bytes of a field that changes
 * slowly from record to record lie side by side, where zstd finds them). crc: CRC-32
 * of the block header's first 12 bytes and the stored bytes: a block cut short by a crash or
 * corrupted is told apart before anything is decompressed. */
#define HS__REC_BLOCK_RAW 0x30425348u     /* "HSB0" */
#define HS__REC_BLOCK_ZSTD 0x5a425348u    /* "HSBZ" */
#define HS__REC_BLOCK_MAX (1u << 20)      /* raw bytes of a block at most (a reader's bound) */
#define HS__REC_BLOCK_TARGET (256u << 10) /* the writer's: zstd's window sees many records */
struct hs__rec_block {
    uint32_t magic;
    uint32_t nrecords;
    uint32_t stored;
    uint32_t crc;
};

/* A state record: this prefix, then njoints x 7 eight-byte values, each sensor's values (as many
 * as its kind declares: struct hs_sensor_layout.nvalues), nbodies x 7,
 * then per CAN bus a u32: the frames the tick took from that bus (padded with a zero u32 to a
 * multiple of 8 bytes). crc: CRC-32 (IEEE) of the whole record with crc as 0. A joint's seventh
 * value holds the raw encoder counter's bits (uint64), the others are doubles. */
struct hs__rec_state_prefix {
    uint64_t tick;
    int64_t now_ns;
    int64_t real_ns;
    uint32_t flags;
    uint32_t crc;
};

enum { HS__REC_ITEM_SHM = 1, HS__REC_ITEM_EVENT = 2, HS__REC_ITEM_FRAME = 3 };

/* An item: the ring's unit, and (shm, event) a 112-byte record of shm.bin / events.bin. */
struct hs__rec_item {
    uint8_t type; /* HS__REC_ITEM_* */
    uint8_t tx;   /* frames: sent by hilsim */
    uint16_t bus; /* frames: config bus index */
    uint32_t crc; /* on disk: CRC-32 of the record with crc as 0 */
    uint64_t ord; /* ordinal of the tick being recorded */
    int64_t real_ns;
    union {
        struct {
            uint32_t joint, shm_mode, mode, pad;
            double v[7]; /* q dq kp kd tau_ff current velocity */
            int64_t rx_time_ns;
            uint64_t seq;
        } shm;
        struct {
            uint32_t kind, pad;
            uint64_t tick;
            int64_t a, b;
            char text[HS_REC_TEXT_MAX];
        } ev;
        struct {
            uint32_t id;
            uint8_t flags, len, pad[2];
            uint8_t data[64];
        } fr;
    } u;
};
_Static_assert(sizeof(struct hs__rec_item) == 112, "item record layout is on disk");
_Static_assert(sizeof(struct hs__rec_file_header) == 32, "file header layout is on disk");
_Static_assert(sizeof(struct hs__rec_state_prefix) == 32, "state prefix layout is on disk");
_Static_assert(sizeof(struct hs__rec_file_header3) == 80, "v3 header layout is on disk");
_Static_assert(sizeof(struct hs__rec_block) == 16, "block header layout is on disk");

uint32_t hs__rec_crc32(const void *buf, size_t len); /* RT-safe, pure */
/* A block's n records of size bytes each, byte-shuffled into out (and back): see above. */
void hs__rec_shuffle(uint8_t *out, const uint8_t *in, uint32_t n, uint32_t size);
void hs__rec_unshuffle(uint8_t *out, const uint8_t *in, uint32_t n, uint32_t size);
/* The CRC-32 of the bytes before (crc) followed by buf, as zlib's crc32(crc, buf, len). */
uint32_t hs__rec_crc32_update(uint32_t crc, const void *buf, size_t len);
/* Non-RT: the file's SHA-256 as 64 hex digits + NUL. 0 or -errno. */
int hs__rec_sha256_file(const char *path, char hex[65]);
/* The same over bytes, whole (buf) or as they pass (init, update..., hex). */
struct hs__sha256 {
    uint32_t h[8];
    uint8_t block[64];
    size_t fill;
    uint64_t bits;
};
void hs__rec_sha256_init(struct hs__sha256 *s);
void hs__rec_sha256_update(struct hs__sha256 *s, const void *buf, size_t n);
void hs__rec_sha256_hex(struct hs__sha256 *s, char hex[65]);
void hs__rec_sha256_buf(const void *buf, size_t n, char hex[65]);
/* A copy's first line (HS_REC_COPY_MARK, hilsim/record.h) naming a run other than r's: an
 * error naming path, line 1. 0 when it names r's run, or has no such line (a version 2 copy,
 * or a version 3 manifest's SHA-256 decides). */
int hs__rec_check_copy_mark(const struct hs_recording *r, const char *text, size_t len,
                            const char *path, struct hs_diag *d);

/* ---- rings ---- */
/* Many producers (the tick, a bus's reply thread, the supervisor), one consumer (the writer):
 * a bounded queue with a sequence number per cell (Vyukov). A producer claims a cell with one
 * compare-and-swap and publishes it with a release store; a full ring refuses at once. */
struct hs__rec_cell {
    _Atomic uint64_t seq;
    struct hs__rec_item item;
};

struct hs__rec_items_ring {
    struct hs__rec_cell *cells; /* owned */
    uint64_t mask;
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t tail; /* consumer only */
    _Alignas(64) _Atomic uint64_t dropped;
    _Atomic uint64_t pushed;
};

int hs__rec_items_init(struct hs__rec_items_ring *r, uint32_t capacity); /* init only */
void hs__rec_items_free(struct hs__rec_items_ring *r);
/* RT-safe, any producer thread. 0 or -ENOBUFS (dropped and counted). */
int hs__rec_items_push(struct hs__rec_items_ring *r, const struct hs__rec_item *it);
int hs__rec_items_pop(struct hs__rec_items_ring *r, struct hs__rec_item *ret); /* -EAGAIN */

/* One producer (the tick), one consumer: fixed-size state records written in place. */
struct hs__rec_state_ring {
    uint8_t *buf; /* owned: capacity x stride */
    uint32_t stride, mask;
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t tail;
    _Alignas(64) _Atomic uint64_t dropped;
};

int hs__rec_states_init(struct hs__rec_state_ring *r, uint32_t capacity, uint32_t stride);
void hs__rec_states_free(struct hs__rec_state_ring *r);
/* RT-safe, producer: the next free record, or NULL when full (then counted as dropped). */
void *hs__rec_states_reserve(struct hs__rec_state_ring *r);
void hs__rec_states_commit(struct hs__rec_state_ring *r);
/* consumer: the oldest record or NULL; release it with hs__rec_states_release. */
const void *hs__rec_states_peek(struct hs__rec_state_ring *r);
void hs__rec_states_release(struct hs__rec_state_ring *r);

/* ---- the recorder ---- */
#define HS__REC_MAX_BUSES 8

struct hs__rec_bus_tap {
    struct hs_recorder *rec;
    uint16_t bus;
};

/* A binary file being written: the records of its block being filled (writer thread only). */
struct hs__rec_out {
    FILE *f;
    uint8_t *raw; /* owned: one block's records */
    uint32_t cap, nrec, rsize;
    uint64_t records, body_bytes;
};

struct hs__rec_seg_files {
    struct hs__rec_out state, shm, events;
    FILE *can[HS__REC_MAX_BUSES];
};

struct hs_recorder {
    struct hs_rec_opts o;
    char *dir;
    struct hs_bench *bench;
    const struct hs_config *cfg;
    uint32_t njoints, nsensors, nbodies;
    uint32_t nsensor_values;              /* doubles of all sensors in a state record */
    uint32_t bodies[HS_CFG_MAX_MODELS];   /* world body index of each recorded root */
    uint32_t state_size;                  /* bytes per state record */
    uint32_t nbuses;                      /* CAN buses counted in each state record */
    uint32_t rx_count[HS__REC_MAX_BUSES]; /* tick side: frames taken this tick, per bus */
    struct hs__rec_items_ring items;
    struct hs__rec_state_ring states;
    struct hs__rec_bus_tap bus_taps[HS__REC_MAX_BUSES];
    bool bus_tapped[HS__REC_MAX_BUSES];
    struct hs_bench_tap bench_tap;

    /* tick side */
    _Atomic uint64_t ord; /* ordinal of the tick being recorded; tap threads read it */
    int64_t inputs_real_ns;
    bool attached;

    /* writer side */
    pthread_t writer;
    bool writer_running;
    _Atomic bool stop;
    struct hs__rec_seg_files f;
    uint8_t run_id[16];
    void *zctx;    /* ZSTD_CCtx (NULL: compression none) */
    uint8_t *zbuf; /* a compressed block */
    uint8_t *shuf; /* a block's records byte-shuffled */
    size_t zcap;
    uint64_t *seg_counts;      /* per closed segment: 3 record counts, then 3 file sizes */
    uint32_t segment;          /* current segment number (0: unsuffixed names) */
    uint64_t seg_bytes;        /* bytes in the current segment */
    int64_t seg_start_ns;      /* CLOCK_MONOTONIC when it began */
    uint64_t *seg_first_tick;  /* per segment: its first tick (writer's, grows) */
    uint64_t *seg_first_ord;   /* per segment: the ord of its first state */
    struct hs__rec_item stash; /* an item of a tick whose state is not written yet */
    bool stashed;
    uint32_t seg_first_deleted; /* segments below this were deleted (keep_segments) */
    _Atomic uint64_t bytes_written;
    _Atomic uint64_t bytes_raw; /* what the binary files would hold uncompressed */
    _Atomic uint64_t writer_cpu_ns;
    _Atomic uint64_t states_written;
    _Atomic int write_error;
    int64_t start_real_ns, end_real_ns;
    char start_utc[32];
    char stop_reason[64];
    bool finished;
    void *signals_json; /* json_t: the names, taken while the bench exists (rec_manifest.c) */
    void *audit_json;   /* json_t: o.audit as the report writes it, taken at the first write */
    /* SHA-256 (hex; "" until made) of the files as the run read them and of the copies kept,
     * taken once when the copies are written (rec_manifest.c) */
    char config_sha[65], config_copy_sha[65], resolved_sha[65];
    char scenario_sha[65], scenario_copy_sha[65];
    /* The candump logs carry no mark (README.md: python-can reads no comment line): the
     * manifest ties each closed one to the run by its size and SHA-256 as written (writer
     * side: the current segment's; per segment x HS__REC_MAX_BUSES once it is closed). */
    struct hs__sha256 can_hash[HS__REC_MAX_BUSES];
    uint64_t can_len[HS__REC_MAX_BUSES];
    uint64_t *seg_can_bytes;
    char *seg_can_sha;            /* 65 bytes each, "" when not closed */
    struct hs__rec_item *sortbuf; /* frames of one drain, sorted by time per bus */
    uint32_t sortcap;
};

/* recorder.c: RT-safe. The state payload of one tick (layout above) from the bench's readings;
 * bodies: the world body of each recorded root. */
void hs__rec_fill_state(const struct hs_bench *b, const uint32_t *bodies, uint32_t nbodies,
                        double *v);

/* rec_writer.c */
int hs__rec_open_segment(struct hs_recorder *rec, struct hs_diag *d);
void hs__rec_close_segment(struct hs_recorder *rec);
void hs__rec_out_free(struct hs__rec_out *o);
void *hs__rec_writer_main(void *arg);
/* One frame as a candump log line (with " R"/" T"), NUL-terminated; returns its length. */
size_t hs__rec_candump_line(char *buf, size_t size, int64_t real_ns, const char *iface,
                            const struct hs__rec_item *it);
/* rec_manifest.c: non-RT; final adds the counts and marks the recording complete. */
int hs__rec_write_manifest(struct hs_recorder *rec, bool final);
void hs__rec_manifest_free(struct hs_recorder *rec);
/* rec_export.c: each state's time on a plot's axis, s from the first: now_ns is not monotonic
 * across the warm-up's end (the warm-up runs on simulated time, the run on the loop's clock),
 * so a step back counts as the step before it. malloc'd (NULL: out of memory). */
double *hs__rec_plot_times(const struct hs_recording *rec);
/* The unit a signal's name implies ("rad (slide: m)" for J.q ...), or NULL (a sensor's). */
const char *hs__rec_signal_unit(const char *name);
/* The largest |replayed - recorded| of column c over the ticks both have (0: none differ). */
double hs__rec_plot_diff_max(const struct hs_recording *rec, const double *replayed,
                             uint32_t nreplayed, int c);
/* rec_export.c: a plot panel's value range: every finite recorded and replayed value of column
 * c (a flat signal gets +-1 around its value), so both curves fit. */
void hs__rec_plot_range(const struct hs_recording *rec, const double *replayed, uint32_t nreplayed,
                        int c, double *ret_lo, double *ret_hi);
/* Segment file name: base "state", ext "bin" -> "state.bin" or "state.3.bin". */
void hs__rec_seg_name(char *buf, size_t size, const char *base, uint32_t segment, const char *ext);

/* rec_read_file.c: reading one binary file (non-RT), besides hs_rec_parse_state/items. A
 * crashed run's damage (r->salvage): the first is kept in r->damage and 0 returned; otherwise
 * an error naming name and off. */
int hs__rec_damage(struct hs_recording *r, struct hs_diag *d, const char *name, size_t off,
                   const char *what);
void hs__rec_hex_id(const uint8_t id[16], char out[33]);
bool hs__rec_zero_id(const uint8_t id[16]);
/* *p (n elements of elem bytes) grown by add; -ENOMEM past UINT32_MAX / 2 elements. */
int hs__rec_grow(void **p, size_t elem, uint32_t n, uint32_t add);

#endif
