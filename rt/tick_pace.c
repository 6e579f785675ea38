#include "hilsim/rt/tick_pace.h"

#include <errno.h>
#include <string.h>

const char *const hs_clock_mode_names[HS_CLOCK_MODE_MAX + 1] = {[HS_CLOCK_WALL] = "wall",
                                                                [HS_CLOCK_LOCKSTEP] = "lockstep",
                                                                [HS_CLOCK_SYNC] = "sync",
                                                                [HS_CLOCK_MODE_MAX] = NULL};

const char *const hs_lockstep_expiry_names[HS_LOCKSTEP_EXPIRY_MAX + 1] = {
    [HS_LOCKSTEP_HOLD] = "hold",
    [HS_LOCKSTEP_STEP] = "step",
    [HS_LOCKSTEP_STOP] = "stop",
    [HS_LOCKSTEP_EXPIRY_MAX] = NULL};

const char *hs_clock_mode_name(enum hs_clock_mode m)
{
    return (unsigned)m < HS_CLOCK_MODE_MAX ? hs_clock_mode_names[m] : "?";
}

const char *hs_lockstep_expiry_name(enum hs_lockstep_expiry e)
{
    return (unsigned)e < HS_LOCKSTEP_EXPIRY_MAX ? hs_lockstep_expiry_names[e] : "?";
}

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -EINVAL;
}

int hs_clock_mode_parse(const char *s, enum hs_clock_mode *ret)
{
    int i = lookup(hs_clock_mode_names, HS_CLOCK_MODE_MAX, s);
    if (i < 0)
        return i;
    *ret = (enum hs_clock_mode)i;
    return 0;
}

int hs_lockstep_expiry_parse(const char *s, enum hs_lockstep_expiry *ret)
{
    int i = lookup(hs_lockstep_expiry_names, HS_LOCKSTEP_EXPIRY_MAX, s);
    if (i < 0)
        return i;
    *ret = (enum hs_lockstep_expiry)i;
    return 0;
}
