/* `hilsim can eds`: a config node's drive, built as the bench builds it, written as its EDS. */
#include <errno.h>

#include "cia402_config.h"
#include "cia402_from_cfg.h"
#include "hilsim/can_cia402.h"

int hs_cia402_write_node_eds(const struct hs_cfg_node *cn, FILE *out, const char *file_name,
                             struct hs_diag *d)
{
    static struct hs_cia402_node n; /* large: not on the stack; the CLI builds one at a time */
    struct hs_cia402_config cc;
    hs_cia402_config_from_cfg(&cc, cn);
    if (hs_cia402_node_init(&n, &cc, d) < 0 ||
        (hs_cfg_cia402(cn)->eds &&
         hs_cia402_node_load_eds_file(&n, hs_cfg_cia402(cn)->eds, NULL, d) < 0))
        return -EINVAL;
    return hs_cia402_node_write_eds(&n, out, file_name) < 0 ? -EIO : 0;
}
