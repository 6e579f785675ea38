/* What the CLI needs of the CiA 402 drive without reaching into drivers/can (`hilsim can eds`). */
#ifndef HILSIM_CAN_CIA402_H
#define HILSIM_CAN_CIA402_H

#include <stdio.h>

#include "hilsim/config.h"
#include "hilsim/diag.h"

/* Not RT (stdio, a node built on the heap's static storage): writes to OUT the EDS (CiA 306) of
 * the drive config node CN describes, its own EDS/DCF (hs_cfg_cia402(cn)->eds) applied,
 * FILE_NAME in its FileInfo (may be NULL). 0; -EINVAL with *d naming what the node's config or
 * EDS got wrong; -EIO when OUT refused a write. */
int hs_cia402_write_node_eds(const struct hs_cfg_node *cn, FILE *out, const char *file_name,
                             struct hs_diag *d);

#endif
