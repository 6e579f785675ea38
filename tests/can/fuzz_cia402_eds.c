/* libFuzzer target: the EDS (INI) loader on arbitrary text. Checks: it returns 0 or -EINVAL
 * (with a message naming a line for -EINVAL), and a node loaded from it still boots and runs. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cia402/cia402.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct hs_cia402_node node;
    struct hs_cia402_config cfg;
    hs_cia402_config_init(&cfg, 9);
    if (hs_cia402_node_init(&node, &cfg, NULL) < 0)
        __builtin_trap();
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_cia402_node_load_eds(&node, (const char *)data, size, "fuzz.eds", NULL, &d);
    if (r != 0 && r != -EINVAL)
        __builtin_trap();
    if (r == -EINVAL && (d.line <= 0 || !d.msg[0]))
        __builtin_trap();
    if (r == 0 && node.n_entries > HS_CIA402_ENTRIES_MAX)
        __builtin_trap();
    /* boot, start, SYNC, a few polls */
    struct hs_can_joint_state js = {.q_rad = 1, .dq_rad_s = 2};
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[HS_CIA402_TXQ];
    const uint8_t start[2] = {1, 0};
    for (int64_t t = 1; t < 6; t++) {
        struct hs_can_frame f = {.id = t == 2 ? 0u : 0x80u, .len = t == 2 ? 2 : 0};
        memcpy(f.data, start, 2);
        hs_can_node_on_frame(&node.base, &f, t * 1000000);
        int k = hs_can_node_poll(&node.base, t * 1000000, &js, &cmd, out, HS_CIA402_TXQ);
        if (k < 0 || !isfinite(cmd.tau_ff_nm))
            __builtin_trap();
        for (int i = 0; i < k; i++)
            if (out[i].len > 8 || out[i].id > 0x7FF)
                __builtin_trap();
    }
    return 0;
}
