/* Internal to the DBC parser: a bounded character scanner and the mutable build state. */
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
int hs__dbc_err(struct hs__dbc_scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool hs__dbc_eof(const struct hs__dbc_scan *s);
void hs__dbc_skip_ws(struct hs__dbc_scan *s);     /* spaces and newlines */
void hs__dbc_skip_hspace(struct hs__dbc_scan *s); /* spaces only */
bool hs__dbc_at_eol(struct hs__dbc_scan *s);      /* after horizontal space: newline or EOF */
void hs__dbc_skip_line(struct hs__dbc_scan *s);   /* to just after the next newline */
int hs__dbc_peek(const struct hs__dbc_scan *s);   /* -1 at EOF */
/* Identifier span (not copied); -EINVAL with "expected <what>" if none. */
int hs__dbc_ident_span(struct hs__dbc_scan *s, const char **ret, size_t *ret_len, const char *what);
int hs__dbc_ident(struct hs__dbc_scan *s, char **ret, const char *what);
int hs__dbc_expect(struct hs__dbc_scan *s, char c, const char *what);
int hs__dbc_uint(struct hs__dbc_scan *s, uint64_t max, uint64_t *ret, const char *what);
int hs__dbc_int(struct hs__dbc_scan *s, int64_t *ret, const char *what);
int hs__dbc_number(struct hs__dbc_scan *s, double *ret, const char *what);
int hs__dbc_string(struct hs__dbc_scan *s, char **ret, const char *what);
/* Skips to just after the next ';' outside strings. */
int hs__dbc_skip_statement(struct hs__dbc_scan *s, const char *keyword);
char *hs__dbc_strndup(const char *p, size_t n);

/* Bit positions of a signal (linear byte*8+bit), -ERANGE if outside 64 bytes. */
int hs__dbc_signal_span(struct hs_dbc_signal *sig);

#endif
