/* libFuzzer target: a stream of frames (4-byte header: id low, id high, flags, len; then len
 * bytes) into an MIT node, polled after each frame. The node must never emit more than one
 * reply per poll nor produce a non-finite command. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hilsim/can_mit.h"
#include "fuzz_frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_mit_config cfg;
    hs_mit_config_init(&cfg, 1, 0);
    cfg.timeout_ns = 3;
    struct hs_mit_node node;
    if (hs_mit_node_init(&node, &cfg, NULL) < 0)
        __builtin_trap();
    struct hs_can_joint_state js = {.q_rad = 0.1, .dq_rad_s = -1, .tau_nm = 2, .current_a = 1};
    int64_t t = 0;
    static const struct fuzz_frame_format fmt = {2, 0x7FF, 0x7};
    struct fuzz_frame in;
    while (fuzz_next_frame(&fmt, &data, &size, &in)) {
        hs_can_node_on_frame(&node.base, &in.f, t);
        struct hs_can_joint_command cmd;
        struct hs_can_frame out[2];
        int k = hs_can_node_poll(&node.base, t, &js, &cmd, out, 2);
        if (k < 0 || k > 1 || !isfinite(cmd.q_ref_rad) || !isfinite(cmd.kp_nm_rad) ||
            !isfinite(cmd.tau_ff_nm))
            __builtin_trap();
        if (k == 1 && (out[0].len != 6 || out[0].data[0] != 1))
            __builtin_trap();
        js.q_rad += 0.01;
        t += 1;
    }
    return 0;
}
