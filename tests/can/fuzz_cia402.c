/* libFuzzer target: a stream of frames (4-byte header: id low, id high, flags, len; then len
 * bytes) into a CiA 402 node, polled after every frame with a moving joint. The stream reaches
 * NMT, SYNC, SDO (expedited and segmented, PDO remapping), RPDOs and heartbeats. Checks: every
 * frame out is a classic 11-bit frame of at most 8 bytes, the joint command is finite, the node
 * never reports more frames than it was given room for. Inputs of odd length run the node with
 * replies at firmware speed (cia402_io.h): every frame also goes to the reply thread's answer
 * first, whose frames are checked the same way, and the node publishes after each poll. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cia402/cia402.h"
#include "cia402/cia402_io.h"
#include "fuzz_frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct hs_cia402_node node;
    struct hs_cia402_config cfg;
    hs_cia402_config_init(&cfg, 5);
    cfg.heartbeat_ms = 3;
    /* a synchronous RPDO with the targets, so SYNC-applied data is reachable at once */
    cfg.rpdo[1] = (struct hs_cia402_pdo_config){
        .valid = true, .type = 1, .n = 3, .map = {0x60400010, 0x60600008, 0x607A0020}};
    cfg.tpdo[1] = (struct hs_cia402_pdo_config){
        .valid = true, .type = 1, .n = 2, .map = {0x60410010, 0x60640020}};
    if (hs_cia402_node_init(&node, &cfg, NULL) < 0)
        __builtin_trap();
    static struct hs_cia402_io io;
    bool replier = size & 1;
    if (replier)
        hs_cia402_io_init(&io, &node);
    struct hs_can_joint_state js = {.q_rad = -7.5, .dq_rad_s = 3, .tau_nm = 0.2};
    int64_t t = 0;
    static const struct fuzz_frame_format fmt = {2, 0x7FF, 0x7};
    struct fuzz_frame in;
    while (fuzz_next_frame(&fmt, &data, &size, &in)) {
        if (replier) {
            struct hs_can_frame ans[8];
            int a = hs_cia402_io_answer(&io, &in.f, t, ans, 8);
            if (a < 0 || a > 8)
                __builtin_trap();
            for (int i = 0; i < a; i++)
                if (ans[i].id > 0x7FF || ans[i].len > 8 || ans[i].flags)
                    __builtin_trap();
        }
        hs_can_node_on_frame(&node.base, &in.f, t);
        struct hs_can_joint_command cmd;
        struct hs_can_frame out[8];
        unsigned room = (unsigned)(t % 9); /* sometimes too little room: frames wait */
        int k = hs_can_node_poll(&node.base, t, &js, &cmd, out, room);
        if (k < 0 || (unsigned)k > room || !isfinite(cmd.q_ref_rad) ||
            !isfinite(cmd.dq_ref_rad_s) || !isfinite(cmd.tau_ff_nm) ||
            !isfinite(cmd.torque_limit_nm) || !isfinite(cmd.kp_nm_rad))
            __builtin_trap();
        for (int i = 0; i < k; i++)
            if (out[i].id > 0x7FF || out[i].len > 8 || out[i].flags)
                __builtin_trap();
        if (replier)
            hs_cia402_io_publish(&io, &node);
        js.q_rad += 0.37 * (double)(t % 7) - 1.0;
        js.dq_rad_s = -js.dq_rad_s * 1.5;
        if (fabs(js.dq_rad_s) > 1e6)
            js.dq_rad_s = 1;
        t += 1000000;
    }
    return 0;
}
