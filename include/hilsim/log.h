/* Process log for non-RT code: stderr, one line per message. Under systemd (JOURNAL_STREAM set,
 * or hs_log_set_syslog_prefix(1)) each line starts with its syslog priority, "<3>", "<4>", "<6>",
 * "<7>", so journald files it by level. The RT thread never calls this: it posts records to a
 * lock-free ring that a non-RT thread drains into hs_log(). */
#ifndef HILSIM_LOG_H
#define HILSIM_LOG_H

enum hs_log_level {
    HS_LOG_ERR = 3,
    HS_LOG_WARNING = 4,
    HS_LOG_INFO = 6,
    HS_LOG_DEBUG = 7,
};

/* A line waits at most this long for room on standard error, then is dropped (counted, and
 * the count printed before the next line that goes out): a reader that stopped reading cannot
 * hold the thread that logs, the one taking the stop signals included. */
#define HS_LOG_WAIT_MS 1000

/* not RT-safe (stdio). */
void hs_log(enum hs_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hs_log_set_level(enum hs_log_level max_level); /* messages above it are dropped */
void hs_log_set_syslog_prefix(int on);              /* default: on when JOURNAL_STREAM is set */
struct hs_diag;
/* not RT-safe. Logs a diagnostic once as an error: "file:line:column: message". */
void hs_log_diag(const struct hs_diag *diag);
int hs_log_level_from_name(const char *name, enum hs_log_level *ret_level);

#endif
