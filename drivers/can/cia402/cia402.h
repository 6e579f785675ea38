/* CANopen CiA 402 drive: a simulated servo drive on a classic CAN bus (a struct hs_can_node).
 *
 * Communication (CiA 301): NMT slave with boot-up message, heartbeat producer (0x1017) and
 * consumer (0x1016), EMCY producer (0x1014) with the pre-defined error field (0x1003), SDO
 * server (expedited and segmented), 4 RPDOs and 4 TPDOs whose mapping the master may change by
 * SDO, SYNC consumer (0x1005). COB-IDs are the pre-defined connection set (CiA 301 7.3.5):
 * NMT 0x000, SYNC 0x080, EMCY 0x080+n, TPDO1-4 0x180/0x280/0x380/0x480+n, RPDO1-4
 * 0x200/0x300/0x400/0x500+n, SDO 0x580+n (server to client) / 0x600+n, heartbeat 0x700+n.
 *
 * Drive (CiA 402): the power drive system state machine (controlword 0x6040 in, statusword
 * 0x6041 out), modes profile position (1), profile velocity (3), homing (6, methods 35/37:
 * "current position"), cyclic synchronous position (8), velocity (9) and torque (10).
 *
 * Timing: frames go in with on_frame; everything else happens at poll, once per tick.
 * Synchronous RPDOs (transmission type 0..240) are buffered and written to the object
 * dictionary when the next SYNC arrives; synchronous TPDOs are sampled when SYNC arrives (from
 * the actual values of the last poll, i.e. the plant state at the SYNC instant) and sent at the
 * next poll. The drive's own cycle (controlword, modes, statusword) runs at poll. With a reply
 * thread (cia402_io.h) SDO answers, synchronous TPDOs and RTR answers leave at once from there
 * and the node is quiet about them.
 *
 * Units on the wire: positions in increments (counts_per_rev per joint revolution), velocities
 * in increments/s, accelerations in increments/s^2, torques in per mille of the rated torque
 * (0x6076, mN*m), currents in per mille of the rated current (0x6075, mA). The joint command
 * and state are in SI radians at the joint (see hilsim/can_node.h).
 *
 * Sources, read for facts: CiA 301 v4.2 and CiA 402-2 summaries in the CANopenNode
 * documentation and sources (CANopenNode/CANopenNode 301/CO_SDOserver.h, CO_PDO.h, CO_NMT_
 * Heartbeat.h, CO_Emergency.h), the canopen python library docs (canopen.readthedocs.io: sdo,
 * pdo, nmt, profiles/402), ros2_canopen canopen_402_driver (state and command tables), and
 * vendors' object references (Beckhoff InfoSys AX/AMP8000 objects 0x6040/0x6041, Novanta
 * 0x1600 mapping procedure). No code was copied. */
#ifndef HS_CIA402_H
#define HS_CIA402_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hilsim/can_node.h"
#include "hilsim/diag.h"

#define HS_CIA402_PDO_N 4        /* RPDOs and TPDOs each */
#define HS_CIA402_PDO_MAP_MAX 8  /* mapping entries per PDO */
#define HS_CIA402_HB_CONSUMERS 2 /* 0x1016 sub-indices */
#define HS_CIA402_ERR_HISTORY 8  /* 0x1003 sub-indices */
#define HS_CIA402_EXTRA_MAX 64   /* manufacturer objects an EDS may add (0x2000-0x5FFF) */
#define HS_CIA402_ENTRIES_MAX 320
#define HS_CIA402_SDO_BUF 64 /* largest segmented transfer (strings) */
#define HS_CIA402_TXQ 32     /* frames queued between on_frame and poll */
#define HS_CIA402_STR_MAX 32

/* NMT states as the heartbeat reports them (CiA 301 7.2.8.3.2.1). */
enum hs_cia402_nmt {
    HS_CIA402_NMT_INITIALISING = 0x00,
    HS_CIA402_NMT_STOPPED = 0x04,
    HS_CIA402_NMT_OPERATIONAL = 0x05,
    HS_CIA402_NMT_PRE_OPERATIONAL = 0x7F,
};

/* Power drive system states (CiA 402-2 figure "state machine"). */
enum hs_cia402_state {
    HS_CIA402_NOT_READY_TO_SWITCH_ON = 0,
    HS_CIA402_SWITCH_ON_DISABLED,
    HS_CIA402_READY_TO_SWITCH_ON,
    HS_CIA402_SWITCHED_ON,
    HS_CIA402_OPERATION_ENABLED,
    HS_CIA402_QUICK_STOP_ACTIVE,
    HS_CIA402_FAULT_REACTION_ACTIVE,
    HS_CIA402_FAULT,
    HS_CIA402_STATE_MAX
};

/* Modes of operation (0x6060) that are simulated. */
enum {
    HS_CIA402_MODE_PP = 1,
    HS_CIA402_MODE_PV = 3,
    HS_CIA402_MODE_HM = 6,
    HS_CIA402_MODE_CSP = 8,
    HS_CIA402_MODE_CSV = 9,
    HS_CIA402_MODE_CST = 10,
};

/* SDO abort codes (CiA 301 table 22). */
enum {
    HS_CIA402_ABORT_TOGGLE = 0x05030000,
    HS_CIA402_ABORT_COMMAND = 0x05040001,
    HS_CIA402_ABORT_UNSUPPORTED = 0x06010000,
    HS_CIA402_ABORT_WRITE_ONLY = 0x06010001,
    HS_CIA402_ABORT_READ_ONLY = 0x06010002,
    HS_CIA402_ABORT_NO_OBJECT = 0x06020000,
    HS_CIA402_ABORT_NOT_MAPPABLE = 0x06040041,
    HS_CIA402_ABORT_PDO_LENGTH = 0x06040042,
    HS_CIA402_ABORT_INCOMPATIBLE = 0x06040043,
    HS_CIA402_ABORT_LENGTH = 0x06070010,
    HS_CIA402_ABORT_LENGTH_HIGH = 0x06070012,
    HS_CIA402_ABORT_LENGTH_LOW = 0x06070013,
    HS_CIA402_ABORT_NO_SUB = 0x06090011,
    HS_CIA402_ABORT_VALUE = 0x06090030,
    HS_CIA402_ABORT_VALUE_HIGH = 0x06090031,
    HS_CIA402_ABORT_VALUE_LOW = 0x06090032,
    HS_CIA402_ABORT_STATE = 0x08000022,
};

/* EMCY error codes used (CiA 301 table 21, CiA 402-2 annex). */
enum {
    HS_CIA402_EMCY_RESET = 0x0000,           /* error reset / no error */
    HS_CIA402_EMCY_HEARTBEAT = 0x8130,       /* life guard or heartbeat error */
    HS_CIA402_EMCY_PDO_LENGTH = 0x8210,      /* PDO not processed due to length error */
    HS_CIA402_EMCY_PDO_TOO_LONG = 0x8220,    /* PDO length exceeded */
    HS_CIA402_EMCY_FOLLOWING_ERROR = 0x8611, /* position following error */
};

/* Error register (0x1001) bits. */
enum {
    HS_CIA402_ERRREG_GENERIC = 1u << 0,
    HS_CIA402_ERRREG_COMM = 1u << 4,
    HS_CIA402_ERRREG_PROFILE = 1u << 5,
    HS_CIA402_ERRREG_MANUFACTURER = 1u << 7,
};

struct hs_cia402_pdo_comm {
    uint8_t n_sub;      /* sub0: highest sub-index */
    uint32_t cob_id;    /* sub1: bit 31 = PDO not valid, bit 30 = no RTR, bit 29 = 29-bit ID */
    uint8_t type;       /* sub2: 0 acyclic sync, 1..240 every n-th SYNC, 254/255 event */
    uint16_t inhibit;   /* sub3: 100 us units (TPDO) */
    uint16_t event_ms;  /* sub5: event timer (TPDO) / deadline (RPDO, not monitored) */
    uint8_t sync_start; /* sub6 (TPDO): stored, the SYNC counter is not used */
};

struct hs_cia402_pdo_map {
    uint8_t n;                             /* sub0: entries in use */
    uint32_t entry[HS_CIA402_PDO_MAP_MAX]; /* index << 16 | sub << 8 | bits */
};

/* The object dictionary's values (one instance holds the defaults, one the live values). */
struct hs_cia402_od {
    uint32_t device_type;   /* 0x1000 */
    uint8_t error_register; /* 0x1001 */
    uint8_t err_count;      /* 0x1003 sub0 */
    uint32_t err_history[HS_CIA402_ERR_HISTORY];
    uint32_t cob_id_sync;                               /* 0x1005 */
    uint32_t cycle_period_us;                           /* 0x1006 */
    char device_name[HS_CIA402_STR_MAX];                /* 0x1008 */
    char hw_version[HS_CIA402_STR_MAX];                 /* 0x1009 */
    char sw_version[HS_CIA402_STR_MAX];                 /* 0x100A */
    uint32_t cob_id_emcy;                               /* 0x1014 */
    uint16_t emcy_inhibit;                              /* 0x1015, 100 us */
    uint8_t hb_consumer_n;                              /* 0x1016 sub0 */
    uint32_t hb_consumer[HS_CIA402_HB_CONSUMERS];       /* node << 16 | time_ms */
    uint16_t hb_producer_ms;                            /* 0x1017 */
    uint8_t identity_n;                                 /* 0x1018 sub0 */
    uint32_t identity[4];                               /* vendor, product, revision, serial */
    struct hs_cia402_pdo_comm rpdo[HS_CIA402_PDO_N];    /* 0x1400.. */
    struct hs_cia402_pdo_map rpdo_map[HS_CIA402_PDO_N]; /* 0x1600.. */
    struct hs_cia402_pdo_comm tpdo[HS_CIA402_PDO_N];    /* 0x1800.. */
    struct hs_cia402_pdo_map tpdo_map[HS_CIA402_PDO_N]; /* 0x1A00.. */
    int16_t abort_connection_option; /* 0x6007: 0 none, 1 fault, 2 disable voltage, 3 quick stop */
    uint16_t error_code;             /* 0x603F */
    uint16_t controlword;            /* 0x6040 */
    uint16_t statusword;             /* 0x6041 */
    int16_t quick_stop_option;       /* 0x605A: 0..8 */
    int16_t halt_option;             /* 0x605D: 1..4 */
    int16_t fault_reaction_option;   /* 0x605E: 0..4 */
    int8_t modes;                    /* 0x6060 */
    int8_t modes_display;            /* 0x6061 */
    int32_t position_demand;         /* 0x6062 */
    int32_t position_actual;         /* 0x6064 */
    uint32_t following_error_window; /* 0x6065; 0xFFFFFFFF: off */
    uint16_t following_error_timeout_ms; /* 0x6066 */
    uint32_t position_window;            /* 0x6067 */
    uint16_t position_window_ms;         /* 0x6068 */
    int32_t velocity_actual;             /* 0x606C */
    uint16_t velocity_window;            /* 0x606D */
    uint16_t velocity_threshold;         /* 0x606F */
    int16_t target_torque;               /* 0x6071 */
    uint16_t max_torque;                 /* 0x6072, per mille */
    uint32_t rated_current_ma;           /* 0x6075 */
    uint32_t rated_torque_mnm;           /* 0x6076 */
    int16_t torque_actual;               /* 0x6077 */
    int16_t current_actual;              /* 0x6078 */
    int32_t target_position;             /* 0x607A */
    int32_t home_offset;                 /* 0x607C */
    uint8_t sw_limit_n;                  /* 0x607D sub0 */
    int32_t sw_limit[2];                 /* min, max; off when min >= max */
    uint32_t profile_velocity;           /* 0x6081 */
    uint32_t profile_acceleration;       /* 0x6083 */
    uint32_t profile_deceleration;       /* 0x6084 */
    uint32_t quick_stop_deceleration;    /* 0x6085 */
    int8_t homing_method;                /* 0x6098 */
    int32_t velocity_offset;             /* 0x60B1 */
    int16_t torque_offset;               /* 0x60B2 */
    uint8_t interp_n;                    /* 0x60C2 sub0 */
    uint8_t interp_period;               /* 0x60C2 sub1 */
    int8_t interp_exponent;              /* 0x60C2 sub2: period = value * 10^exponent s */
    int32_t following_error_actual;      /* 0x60F4 */
    int32_t target_velocity;             /* 0x60FF */
    uint32_t supported_modes;            /* 0x6502 */
    uint32_t extra[HS_CIA402_EXTRA_MAX]; /* EDS manufacturer objects */
};

/* One PDO as the config gives it. */
struct hs_cia402_pdo_config {
    bool valid; /* COB-ID bit 31 clear */
    uint8_t type;
    uint16_t inhibit_100us;
    uint16_t event_ms;
    uint8_t n;
    uint32_t map[HS_CIA402_PDO_MAP_MAX];
};

struct hs_cia402_config {
    uint8_t node_id;             /* 1..127 */
    uint32_t counts_per_rev;     /* position increments per joint revolution */
    double rated_torque_nm;      /* 0x6076 */
    double rated_current_a;      /* 0x6075 */
    double torque_constant_nm_a; /* current actual = torque / kt */
    double max_torque_permille;  /* 0x6072 */
    double position_kp_nm_rad;   /* position loop: stiffness (velocity ref = kp/kd x error) */
    double velocity_kd_nm_s_rad; /* velocity loop, proportional (all position/velocity modes) */
    double velocity_ki_nm_rad;   /* velocity loop, integral (N*m per rad of velocity error) */
    uint16_t heartbeat_ms;       /* 0x1017 default */
    uint16_t boot_time_ms;       /* NMT reset node -> boot-up message after this long */
    uint32_t following_error_window_counts; /* 0x6065 default, increments */
    uint16_t following_error_timeout_ms;
    uint32_t vendor_id, product_code, revision, serial;
    struct hs_cia402_pdo_config rpdo[HS_CIA402_PDO_N], tpdo[HS_CIA402_PDO_N];
};

/* Defaults: cia402_defaults.h (17-bit encoder, rated torque 1 N*m, the loops' gains, ...); PDOs as
 * CiA 402's predefined set for the CSP master of ros2_canopen would expect to remap: RPDO1 =
 * controlword, TPDO1 = statusword (event-driven), the rest not valid. Init only. */
void hs_cia402_config_init(struct hs_cia402_config *cfg, uint8_t node_id);

/* An object dictionary entry (one sub-index). */
struct hs_cia402_entry {
    uint16_t index;
    uint8_t sub;
    uint8_t type;    /* CiA 301 data type: 2..7 integers, 9 visible string */
    uint8_t access;  /* enum hs_cia402_access */
    uint8_t pdo;     /* bit 0 RPDO-mappable, bit 1 TPDO-mappable */
    uint8_t kind;    /* write check (cia402_od.c) */
    uint8_t size;    /* bytes; strings: capacity */
    uint32_t offset; /* into struct hs_cia402_od */
    int64_t min, max;
};

enum hs_cia402_access {
    HS_CIA402_RO = 1,
    HS_CIA402_WO = 2,
    HS_CIA402_RW = 3,
    HS_CIA402_CONST = 5, /* read only, never changes */
};

struct hs_cia402_rpdo_rt {
    int16_t entry[HS_CIA402_PDO_MAP_MAX]; /* mapped entries (index into entries; -1: dummy) */
    uint8_t len;                          /* mapped bytes */
    bool pending;                         /* synchronous: data waits for SYNC */
    bool length_error;                    /* latched: EMCY sent once */
    uint8_t data[8];
};

struct hs_cia402_tpdo_rt {
    int16_t entry[HS_CIA402_PDO_MAP_MAX]; /* as in hs_cia402_rpdo_rt */
    uint8_t len;
    uint8_t sync_count;
    bool sent_once;
    uint8_t last[8];
    int64_t last_tx_ns;
    int64_t event_due_ns;
};

struct hs_cia402_sdo {
    uint8_t state; /* 0 idle, 1 download segments, 2 upload segments */
    uint8_t toggle;
    uint16_t index;
    uint8_t sub;
    uint16_t entry; /* index into entries */
    uint32_t size, pos;
    uint8_t buf[HS_CIA402_SDO_BUF];
};

struct hs_cia402_node {
    struct hs_can_node base;
    struct hs_cia402_config cfg;
    struct hs_cia402_od od;     /* live values */
    struct hs_cia402_od od_def; /* after config and EDS: what reset node restores */
    struct hs_cia402_entry entries[HS_CIA402_ENTRIES_MAX];
    unsigned n_entries, n_extra;
    /* communication */
    uint8_t nmt;
    bool boot_pending;   /* boot-up message at the next poll (not before boot_due_ns) */
    int64_t boot_due_ns; /* 0: at once */
    int64_t hb_last_tx_ns;
    int64_t hb_rx_ns[HS_CIA402_HB_CONSUMERS];
    uint8_t hb_rx_state[HS_CIA402_HB_CONSUMERS]; /* 0: not heard yet, 1: monitoring, 2: lost */
    struct hs_cia402_sdo sdo;
    struct hs_cia402_rpdo_rt rpdo[HS_CIA402_PDO_N];
    struct hs_cia402_tpdo_rt tpdo[HS_CIA402_PDO_N];
    int64_t emcy_last_ns;
    uint16_t emcy_q[4];
    uint8_t emcy_q_reg[4];
    uint8_t emcy_q_n;
    struct hs_can_frame txq[HS_CIA402_TXQ];
    unsigned txq_n;
    uint64_t syncs;
    /* drive */
    uint8_t state;      /* enum hs_cia402_state */
    uint16_t cw_prev;   /* controlword at the previous drive cycle (edges) */
    int8_t mode_active; /* the mode in effect (0x6061) */
    bool polled;        /* first poll seen */
    int64_t last_poll_ns;
    double q_rad, dq_rad_s;        /* last joint state */
    double zero_rad;               /* joint angle where position actual = 0 (homing) */
    uint16_t fault_code;           /* latched fault (0: none) */
    uint16_t pending_fault;        /* raised outside the drive cycle, taken at poll */
    double demand_rad, demand_vel; /* profile generator state (PP, PV, HM, quick stop) */
    double pp_target_rad;          /* the set-point in progress */
    bool pp_buffered;              /* a second set-point waits (bit 5 = 0) */
    double pp_buffer_rad;
    bool sp_ack;         /* statusword bit 12 in PP / HM */
    bool target_reached; /* statusword bit 10 in PP / PV */
    bool homing_done, homing_error;
    int64_t in_window_since_ns; /* position / velocity window timing, -1: outside */
    int64_t ferr_since_ns;      /* following error timing, -1: inside the window */
    bool ferr_active;
    int32_t csp_prev_target;
    double csp_ff_rad_s;
    bool internal_limit;
    double integ_nm; /* the velocity loop's integral (a torque) */
    /* replies at firmware speed (cia402_io.h): SDO answers, synchronous TPDOs and RTR answers
     * come from the reply thread; the node still applies what the frames say */
    bool quiet;
    uint32_t sdo_requests; /* SDO request frames taken (the reply thread counts the same) */
    bool stop_done; /* the stopping action in progress (quick stop, halt, fault) has stopped */
};

/* init only: validates cfg, builds the object dictionary with its defaults (config PDOs
 * validated as an SDO write would be). No allocation; the node struct is caller memory and must
 * not move while in use. Starts in NMT initialising: the boot-up message goes out at the
 * first poll. */
int hs_cia402_node_init(struct hs_cia402_node *node, const struct hs_cia402_config *cfg,
                        struct hs_diag *d);

/* init only: applies an EDS (CiA 306 INI) text's DefaultValue entries to the object
 * dictionary's defaults and live values; manufacturer objects (0x2000-0x5FFF) of integer types
 * are added (up to HS_CIA402_EXTRA_MAX). Errors name file:line:column. `name` is only used in
 * messages. ret_applied (may be NULL) receives the number of values taken. */
int hs_cia402_node_load_eds(struct hs_cia402_node *node, const char *text, size_t len,
                            const char *name, unsigned *ret_applied, struct hs_diag *d);
/* init only: reads the file and calls hs_cia402_node_load_eds. */
int hs_cia402_node_load_eds_file(struct hs_cia402_node *node, const char *path,
                                 unsigned *ret_applied, struct hs_diag *d);

/* init only: writes the node's object dictionary as an EDS (CiA 306) to out: every entry the
 * node simulates with its type, access, PDO mapping, range and reset value (cia402_eds_write.c).
 * file_name goes into [FileInfo] (NULL: a default). 0, or -EIO when out failed. */
int hs_cia402_node_write_eds(const struct hs_cia402_node *node, FILE *out, const char *file_name);

/* RT-safe: raises a drive fault (e.g. from a scenario), taken at the next poll: fault reaction,
 * then fault, EMCY with `code`, statusword fault bit; cleared by fault reset. */
void hs_cia402_node_raise_fault(struct hs_cia402_node *node, uint16_t code);

/* RT-safe accessors. */
static inline enum hs_cia402_state hs_cia402_node_state(const struct hs_cia402_node *node)
{
    return (enum hs_cia402_state)node->state;
}
/* Finds an entry; NULL when absent. */
const struct hs_cia402_entry *hs_cia402_od_find(const struct hs_cia402_node *node, uint16_t index,
                                                uint8_t sub);

#endif
