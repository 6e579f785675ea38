/* DBC signal databases (Vector CANdb++ text format) and table-driven signal encode/decode.
 *
 * hs_dbc_load_* parse a whole file into one read-only struct hs_dbc (init only: allocates).
 * Everything it points to is owned by it and lives until hs_dbc_free. Signal decode/encode
 * (hs_dbc_signal_*) are allocation-free and RT-safe.
 *
 * Parsed: VERSION, NS_, BS_, BU_ (the node list may span lines), BO_ (bit 31 of the ID =
 * extended), SG_ (Intel @1 / Motorola @0, +/-, factor, offset, [min|max], unit, receivers,
 * multiplexor M / multiplexed mNN), SIG_VALTYPE_ (1 float, 2 double), VAL_, CM_ (strings may
 * span lines), the VFrameFormat attribute (BA_DEF_, BA_DEF_DEF_, BA_). Every other statement
 * (VAL_TABLE_, SIG_GROUP_, other attributes, ...) is skipped up to its ';'.
 *
 * Lenient where the established tools (canmatrix, cantools) are: slips a reader can interpret
 * load with a warning in hs_dbc.warnings (line:column of the name or number concerned):
 * comments, value tables, value types and attributes naming an unknown message or signal
 * (ignored); an unflagged ID above 0x7FF (taken as extended); names starting with a digit;
 * a bare "m" indicator (taken as the multiplexor M); a CM_ or VAL_ without its ';'; a CM_ of a
 * form not understood (ignored); a signal that does not fit its message (left out); a length
 * above 8 with no VFrameFormat (taken as CAN FD). What cannot be interpreted is refused with
 * file:line:column: a malformed BO_ or SG_, a length that no CAN frame has (9..11, 13..15, ...
 * or FD lengths on a message VFrameFormat says is classic), duplicate IDs or signal names,
 * a float SIG_VALTYPE_ on a signal of the wrong length, ambiguous multiplexing.
 *
 * Limits (each refused with a clear error beyond): HS_DBC_FILE_MAX bytes, HS_DBC_MESSAGES_MAX
 * messages, HS_DBC_SIGNALS_PER_MESSAGE_MAX signals in one message, HS_DBC_SIGNALS_MAX in all.
 * Parsing is linear in the file size (names and IDs are hashed). */
#ifndef HILSIM_CAN_DBC_H
#define HILSIM_CAN_DBC_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/can.h"
#include "hilsim/diag.h"

#define HS_DBC_FILE_MAX (64ul << 20)
#define HS_DBC_MESSAGES_MAX 16384u
#define HS_DBC_SIGNALS_PER_MESSAGE_MAX 100000u
#define HS_DBC_SIGNALS_MAX 262144u
#define HS_DBC_WARNINGS_MAX 1000u /* kept; more are counted in n_warnings_dropped */

enum hs_dbc_byte_order {
    HS_DBC_MOTOROLA = 0, /* "@0": big endian, start bit = MSB in sawtooth numbering */
    HS_DBC_INTEL = 1,    /* "@1": little endian, start bit = LSB */
    HS_DBC_BYTE_ORDER_MAX
};

enum hs_dbc_value_type {
    HS_DBC_INTEGER = 0,
    HS_DBC_FLOAT32, /* SIG_VALTYPE_ 1 */
    HS_DBC_FLOAT64, /* SIG_VALTYPE_ 2 */
    HS_DBC_VALUE_TYPE_MAX
};

enum hs_dbc_mux {
    HS_DBC_PLAIN = 0,
    HS_DBC_MULTIPLEXOR, /* "M" */
    HS_DBC_MULTIPLEXED, /* "mNN": present when the multiplexor's raw value is mux_value */
    HS_DBC_MUX_MAX
};

struct hs_dbc_value_desc {
    int64_t value;
    const char *text;
};

struct hs_dbc_signal {
    const char *name;
    uint16_t start_bit; /* as written in the file */
    uint8_t length;     /* bits, 1..64 */
    enum hs_dbc_byte_order byte_order;
    bool is_signed;
    enum hs_dbc_value_type value_type;
    double factor, offset;
    double min, max; /* physical range as written; min == max == 0 means unspecified */
    const char *unit;
    enum hs_dbc_mux mux;
    uint32_t mux_value; /* HS_DBC_MULTIPLEXED */
    const char *const *receivers;
    unsigned n_receivers;
    const struct hs_dbc_value_desc *values; /* VAL_ table, may be empty */
    unsigned n_values;
    const char *comment; /* CM_ SG_, NULL if none */
    int line;            /* where SG_ was written */
    /* precomputed: bit span within the payload, for the length check */
    uint16_t lsb_pos, msb_pos; /* linear bit positions (byte*8 + bit), inclusive */
};

struct hs_dbc_message {
    uint32_t id; /* without the extended flag */
    bool extended;
    const char *name;
    uint8_t length; /* bytes: 0..8, or 12, 16, 20, 24, 32, 48, 64 when fd */
    bool fd;        /* CAN FD: VFrameFormat says so, or the length is above 8 */
    const char *sender;
    const struct hs_dbc_signal *signals;
    unsigned n_signals;
    int multiplexor; /* index of the M signal, -1 if none */
    const char *comment;
    int line;
};

struct hs_dbc_warning {
    int line, column; /* of the name or number concerned */
    const char *msg;
};

struct hs_dbc {
    const char *path;
    const char *version;
    const char *const *nodes;
    unsigned n_nodes;
    const struct hs_dbc_message *messages; /* sorted by (extended, id) */
    unsigned n_messages;
    const char *comment;                   /* network comment (CM_ "..."), NULL if none */
    const struct hs_dbc_warning *warnings; /* in file order; the CLI prints them */
    unsigned n_warnings;
    unsigned n_warnings_dropped; /* beyond HS_DBC_WARNINGS_MAX */
};

/* init only: allocates. Fills d with file:line:column and the construct expected; *ret_dbc
 * untouched on failure. A path that is not a regular file (directory, device, FIFO) is refused
 * with -EINVAL before it is opened. */
int hs_dbc_load_file(const char *path, struct hs_dbc **ret_dbc, struct hs_diag *d);
/* init only: allocates. text need not be NUL-terminated; name is used in diagnostics. */
int hs_dbc_load_buffer(const char *text, unsigned long len, const char *name,
                       struct hs_dbc **ret_dbc, struct hs_diag *d);
/* init only. Accepts NULL. */
void hs_dbc_free(struct hs_dbc *dbc);

/* RT-safe: binary search. NULL if absent. */
const struct hs_dbc_message *hs_dbc_find(const struct hs_dbc *dbc, uint32_t id, bool extended);
/* RT-safe. NULL if absent. */
const struct hs_dbc_message *hs_dbc_find_by_name(const struct hs_dbc *dbc, const char *name);
const struct hs_dbc_signal *hs_dbc_signal_by_name(const struct hs_dbc_message *m, const char *name);

/* RT-safe. Raw bits of a signal (zero-extended). -ERANGE if the signal does not fit in len. */
int hs_dbc_signal_get_raw(const struct hs_dbc_signal *s, const uint8_t *data, unsigned len,
                          uint64_t *ret_raw);
/* RT-safe. Writes the low `length` bits of raw, leaving other bits alone. */
int hs_dbc_signal_set_raw(const struct hs_dbc_signal *s, uint8_t *data, unsigned len, uint64_t raw);
/* RT-safe. Physical value: sign extension, IEEE float reinterpretation, factor and offset. */
int hs_dbc_signal_decode(const struct hs_dbc_signal *s, const uint8_t *data, unsigned len,
                         double *ret_value);
/* RT-safe. Physical -> raw (rounded to nearest), saturated to the raw range: then -ERANGE is
 * returned after writing the saturated value. -EDOM for NaN into an integer signal. */
int hs_dbc_signal_encode(const struct hs_dbc_signal *s, double value, uint8_t *data, unsigned len);
/* RT-safe. Whether the signal is present in this payload (multiplexing). */
bool hs_dbc_signal_present(const struct hs_dbc_message *m, const struct hs_dbc_signal *s,
                           const uint8_t *data, unsigned len);
/* RT-safe. VAL_ text for a raw value, NULL if none. */
const char *hs_dbc_value_text(const struct hs_dbc_signal *s, int64_t raw);

#endif
