/* ODE's global init is reference counted so several worlds (and tests that create and destroy
 * many) can coexist. ODE here has no TLS, so all worlds live on one thread: a plain counter. */
#include <errno.h>

#include <ode/ode.h>

#include "world_internal.h"

static unsigned ode_users;

int hs__ode_acquire(void)
{
    if (ode_users == 0 && !dInitODE2(0))
        return -ENOMEM;
    /* Per-thread collision data; repeated calls on the same thread are cheap no-ops. */
    if (!dAllocateODEDataForThread(dAllocateMaskAll)) {
        if (ode_users == 0)
            dCloseODE();
        return -ENOMEM;
    }
    ode_users++;
    return 0;
}

void hs__ode_release(void)
{
    if (ode_users > 0 && --ode_users == 0)
        dCloseODE();
}
