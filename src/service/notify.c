#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "hilsim/service/runner.h"

#ifdef HS_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

void hs__notify(const char *fmt, ...)
{
#ifdef HS_HAVE_SYSTEMD
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sd_notify(0, msg);
#else
    (void)fmt;
#endif
}

unsigned long long hs__notify_watchdog_usec(void)
{
#ifdef HS_HAVE_SYSTEMD
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0)
        return usec;
#endif
    return 0;
}
