/* Placeholder until the shm I/O module lands: a config that asks for shm is refused rather than
 * silently run without it. */
#include <errno.h>

#include "runner.h"

int hs__attach_shm(struct hs_runner *r, struct hs_diag *d)
{
    if (!r->cfg->shm.enabled)
        return 0;
    return hs_diag_set(d, -ENOSYS, r->cfg->path, 0, 0, "shm: shared memory is not served yet");
}
