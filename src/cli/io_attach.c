/* Attaches the I/O modules the bench config asks for. Each transport has its own file
 * (io_attach_can.c, io_attach_shm.c) that builds its module from the config and hands it to the
 * bench, which owns it from then on. */
#include "runner.h"

int hs__attach_io(struct hs_runner *r, struct hs_diag *d)
{
    int rc = hs__record_begin(r, d);
    if (rc == 0)
        rc = hs__attach_can(r, d);
    if (rc == 0)
        rc = hs__attach_shm(r, d);
    if (rc == 0)
        rc = hs__record_attach(r, d);
    return rc;
}
