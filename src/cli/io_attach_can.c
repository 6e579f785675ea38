/* Placeholder until the can I/O module lands: a config that asks for can is refused rather than
 * silently run without it. */
#include <errno.h>

#include "runner.h"

int hs__attach_can(struct hs_runner *r, struct hs_diag *d)
{
    if (r->cfg->can.nnodes == 0)
        return 0;
    return hs_diag_set(d, -ENOSYS, r->cfg->path, r->cfg->can.nodes[0].src.line,
                       r->cfg->can.nodes[0].src.column, "can: CAN nodes are not served yet");
}
