/* libFuzzer target: a stream of frames (4-byte header: id low, id high, flags, len; then len
 * bytes) into an ODrive node, polled every frame. Checks: frames stay in the node's ID
 * space, classic length 8, finite commands. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hilsim/can_odrive.h"
#include "fuzz_frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_odrive_config cfg;
    hs_odrive_config_init(&cfg, 3);
    cfg.watchdog_timeout_ns = 5;
    cfg.heartbeat_period_ns = 4;
    cfg.encoder_period_ns = 2;
    struct hs_odrive_node node;
    if (hs_odrive_node_init(&node, &cfg, NULL) < 0)
        __builtin_trap();
    struct hs_can_joint_state js = {.q_rad = -7.5, .dq_rad_s = 3, .tau_nm = 0.2, .current_a = 5};
    int64_t t = 0;
    static const struct fuzz_frame_format fmt = {2, 0x7FF, 0x7};
    struct fuzz_frame in;
    while (fuzz_next_frame(&fmt, &data, &size, &in)) {
        hs_can_node_on_frame(&node.base, &in.f, t);
        struct hs_can_joint_command cmd;
        struct hs_can_frame out[4];
        int k = hs_can_node_poll(&node.base, t, &js, &cmd, out, 4);
        if (k < 0 || k > 4 || !isfinite(cmd.q_ref_rad) || !isfinite(cmd.dq_ref_rad_s) ||
            !isfinite(cmd.tau_ff_nm) || !isfinite(cmd.torque_limit_nm))
            __builtin_trap();
        for (int i = 0; i < k; i++)
            if (hs_odrive_node_of(out[i].id) != 3 || out[i].len != 8 || out[i].flags)
                __builtin_trap();
        js.q_rad += 1e3; /* drive the encoder count toward saturation */
        t += 1;
    }
    return 0;
}
