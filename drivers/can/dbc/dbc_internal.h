/* Internal to the DBC parser: a bounded character scanner, a hash index and the mutable build
 * state shared by the statement parsers. */
#ifndef HS_DBC_INTERNAL_H
#define HS_DBC_INTERNAL_H

#include <stddef.h>

#include "hilsim/can_dbc.h"

struct hs__dbc_scan {
    const char *p, *end;
    const char *line_start;
    int line;
    const char *name; /* for diagnostics */
    struct hs_diag *d;
};

void hs__dbc_scan_init(struct hs__dbc_scan *s, const char *text, size_t len, const char *name,
                       struct hs_diag *d);
/* Error at the scanner's position. */
int hs__dbc_err(struct hs__dbc_scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Error at `at`, a position on the current line (the start of the offending token). */
int hs__dbc_err_at(struct hs__dbc_scan *s, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int hs__dbc_col(const struct hs__dbc_scan *s, const char *at); /* 1-based, on the current line */
/* A place in the text, taken before parsing on (which may cross lines). */
struct hs__dbc_pos {
    int line, col;
};
struct hs__dbc_pos hs__dbc_pos(struct hs__dbc_scan *s); /* after skip_ws: the next token */
int hs__dbc_err_pos(struct hs__dbc_scan *s, struct hs__dbc_pos at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool hs__dbc_eof(const struct hs__dbc_scan *s);
void hs__dbc_skip_ws(struct hs__dbc_scan *s);     /* spaces and newlines */
void hs__dbc_skip_hspace(struct hs__dbc_scan *s); /* spaces only */
bool hs__dbc_at_eol(struct hs__dbc_scan *s);      /* after horizontal space: newline or EOF */
void hs__dbc_skip_line(struct hs__dbc_scan *s);   /* to just after the next newline */
int hs__dbc_peek(const struct hs__dbc_scan *s);   /* -1 at EOF */
/* skip_ws, then the position of the next token */
const char *hs__dbc_mark(struct hs__dbc_scan *s);
/* A DBC keyword or C identifier: [A-Za-z_][A-Za-z0-9_]*. Span not copied; -EINVAL with
 * "expected <what>" if none. */
int hs__dbc_ident_span(struct hs__dbc_scan *s, const char **ret, size_t *ret_len, const char *what);
/* A name as the established tools read it: [A-Za-z0-9_]+ (may start with a digit). */
int hs__dbc_name_span(struct hs__dbc_scan *s, const char **ret, size_t *ret_len, const char *what);
int hs__dbc_expect(struct hs__dbc_scan *s, char c, const char *what);
int hs__dbc_uint(struct hs__dbc_scan *s, uint64_t max, uint64_t *ret, const char *what);
int hs__dbc_int(struct hs__dbc_scan *s, int64_t *ret, const char *what);
int hs__dbc_number(struct hs__dbc_scan *s, double *ret, const char *what);
int hs__dbc_string(struct hs__dbc_scan *s, char **ret, const char *what);
/* Skips to just after the next ';' outside strings. */
int hs__dbc_skip_statement(struct hs__dbc_scan *s, const char *keyword);
char *hs__dbc_strndup(const char *p, size_t n);
bool hs__dbc_is_keyword(const char *p, size_t n); /* a statement keyword (BO_, CM_, ...) */

/* Bit positions of a signal (linear byte*8+bit), -ERANGE if outside 64 bytes. */
int hs__dbc_signal_span(struct hs_dbc_signal *sig);

/* Open-addressing hash index from a 64-bit key hash to item numbers; the caller compares
 * the items themselves. Insert and lookup are O(1) expected, so the parser stays linear. */
struct hs__dbc_index {
    struct hs__dbc_slot {
        uint32_t item1; /* item + 1; 0 = empty */
        uint32_t hash;
    } * slot;
    unsigned cap, n;
};
uint32_t hs__dbc_hash(const void *p, size_t n);
int hs__dbc_index_add(struct hs__dbc_index *ix, uint32_t hash, unsigned item);
/* Items with this hash, in turn: start with *cursor = 0; returns -1 when done. */
int hs__dbc_index_next(const struct hs__dbc_index *ix, uint32_t hash, unsigned *cursor);
void hs__dbc_index_free(struct hs__dbc_index *ix);

/* ---- build state ---- */

enum { HS__DBC_BARE_M = HS_DBC_MUX_MAX }; /* sig->mux while parsing: a bare "m" indicator */

struct hs__dbc_msg_build {
    struct hs_dbc_message m;
    uint32_t key; /* hs__dbc_compound_id of the ID as written */
    struct hs_dbc_signal *sig;
    unsigned cap;
    struct hs__dbc_index by_name; /* signal names, dropped ones included */
    bool *dropped_sig;            /* parallel to sig: left out with a warning */
    unsigned n_dropped;
    bool dropped;          /* the whole message is left out (pseudo message or unusable ID) */
    int len_line, len_col; /* where the length was written */
    int fd;                /* VFrameFormat: -1 unsaid, 0 classic, 1 FD */
};

struct hs__dbc_build {
    struct hs__dbc_scan s;
    struct hs_dbc *dbc;
    struct hs__dbc_msg_build *msgs;
    unsigned n_msgs, cap_msgs;
    struct hs__dbc_index by_id; /* compound ID (bit 31 = extended) */
    unsigned n_signals;         /* kept, over all messages */
    char **nodes;
    unsigned n_nodes, cap_nodes;
    struct hs_dbc_warning *warn;
    unsigned n_warn, cap_warn;
    bool skip_signals; /* inside a message that is left out */
    /* VFrameFormat attribute: names of the ENUM values, and the default */
    char **vff_names;
    unsigned n_vff;
    int vff_default; /* -1 none, else 0 classic / 1 FD */
};

int hs__dbc_grow(void **arr, unsigned *cap, unsigned need, size_t elem);
int hs__dbc_nomem(struct hs__dbc_build *b);
/* Records a warning at line:column; never fails the load (beyond HS_DBC_WARNINGS_MAX they are
 * counted only). */
void hs__dbc_warn(struct hs__dbc_build *b, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The message with this DBC ID as written (bit 31 = extended; an unflagged ID above 0x7FF is
 * the extended one, as BO_ took it), NULL if none. */
struct hs__dbc_msg_build *hs__dbc_find_msg(struct hs__dbc_build *b, uint64_t dbc_id);
/* Index of the signal of that name in mb, -1 if none. */
int hs__dbc_find_sig(const struct hs__dbc_msg_build *mb, const char *name, size_t len);
uint32_t hs__dbc_compound_id(uint64_t dbc_id);

/* One statement at the scanner's position (dbc_parse.c). */
int hs__dbc_statement(struct hs__dbc_build *b);
void hs__dbc_free_signal(struct hs_dbc_signal *s);

/* BA_DEF_, BA_DEF_DEF_, BA_: VFrameFormat is read, references are checked, the rest skipped. */
int hs__dbc_parse_ba_def(struct hs__dbc_build *b);
int hs__dbc_parse_ba_def_def(struct hs__dbc_build *b);
int hs__dbc_parse_ba(struct hs__dbc_build *b);
void hs__dbc_attr_free(struct hs__dbc_build *b);

#endif
