#include "hilsim/log.h"

#include "hilsim/diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic int max_level = HS_LOG_INFO;
static _Atomic int prefix_mode = -1; /* -1: decide from the environment on first use */

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
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (mode)
        fprintf(stderr, "<%d>%s\n", (int)level, line);
    else {
        const char *tag = level <= HS_LOG_ERR       ? "error: "
                          : level == HS_LOG_WARNING ? "warning: "
                                                    : "";
        fprintf(stderr, "hilsim: %s%s\n", tag, line);
    }
}

void hs_log_diag(const struct hs_diag *diag)
{
    char buf[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
    hs_diag_format(diag, buf, sizeof buf);
    hs_log(HS_LOG_ERR, "%s", buf);
}
