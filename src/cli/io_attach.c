/* I/O modules are attached here as they land (CAN, shm); each is configured from the bench
 * config and owns its resources through the bench's I/O ops. */
#include "runner.h"

int hs__attach_io(struct hs_runner *r, struct hs_diag *d)
{
    (void)r;
    (void)d;
    return 0;
}
