#include "hilsim/log.h"

#include "hilsim/bounded_write.h"
#include "hilsim/diag.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic int max_level = HS_LOG_INFO;
static _Atomic int prefix_mode = -1; /* -1: decide from the environment on first use */

/* Standard error that nobody reads (a paused pager, a stuck collector) must not hold the
 * thread that logs: the supervisor that takes the stop signals logs too. A line waits for room
 * at most HS_LOG_WAIT_MS; once one was dropped the next ones do not wait until a line goes out
 * again, which first says how many were dropped. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long dropped;
static int cut_line; /* the last line went out in part: start the next on a new line */

static void emit(const char *text, size_t len)
{
    pthread_mutex_lock(&out_lock);
    int wait_ms = dropped ? 0 : HS_LOG_WAIT_MS;
    if (dropped || cut_line) {
        char note[160];
        int n = 0;
        if (cut_line)
            note[n++] = '\n';
        if (dropped)
            n += snprintf(note + n, sizeof note - (size_t)n,
                          "hilsim: warning: %llu log line%s dropped: standard error was not "
                          "being read\n",
                          dropped, dropped == 1 ? "" : "s");
        long w = hs_write_bounded(STDERR_FILENO, note, (size_t)n, 0);
        if (w == n)
            dropped = 0, cut_line = 0;
        else if (w > 0)
            cut_line = 1;
    }
    long w = dropped ? 0 : hs_write_bounded(STDERR_FILENO, text, len, wait_ms);
    if (w <= 0)
        dropped++;
    else if ((size_t)w < len)
        cut_line = 1;
    pthread_mutex_unlock(&out_lock);
}

void hs_log_set_level(enum hs_log_level level)
{
    atomic_store(&max_level, (int)level);
}

void hs_log_set_syslog_prefix(int on)
{
    atomic_store(&prefix_mode, on ? 1 : 0);
}

int hs_log_level_from_name(const char *name, enum hs_log_level *ret_level)
{
    static const struct {
        const char *name;
        enum hs_log_level level;
    } names[] = {{"error", HS_LOG_ERR},
                 {"warning", HS_LOG_WARNING},
                 {"info", HS_LOG_INFO},
                 {"debug", HS_LOG_DEBUG}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i].name)) {
            *ret_level = names[i].level;
            return 0;
        }
    return -EINVAL;
}

void hs_log(enum hs_log_level level, const char *fmt, ...)
{
    if ((int)level > atomic_load(&max_level))
        return;
    int mode = atomic_load(&prefix_mode);
    if (mode < 0) {
        /* journald sets JOURNAL_STREAM for services whose stderr it reads. */
        mode = getenv("JOURNAL_STREAM") ? 1 : 0;
        atomic_store(&prefix_mode, mode);
    }
    char line[1024], out[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    int n;
    if (mode)
        n = snprintf(out, sizeof out, "<%d>%s\n", (int)level, line);
    else {
        const char *tag = level <= HS_LOG_ERR       ? "error: "
                          : level == HS_LOG_WARNING ? "warning: "
                                                    : "";
        n = snprintf(out, sizeof out, "hilsim: %s%s\n", tag, line);
    }
    emit(out, n < (int)sizeof out ? (size_t)n : sizeof out - 1);
}

void hs_log_diag(const struct hs_diag *diag)
{
    char buf[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
    hs_diag_format(diag, buf, sizeof buf);
    hs_log(HS_LOG_ERR, "%s", buf);
}
