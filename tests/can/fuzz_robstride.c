/* libFuzzer target: a stream of frames (6-byte header: 29-bit id little-endian in 4 bytes,
 * flags, len; then len bytes) into a Robstride node (CyberGear ranges, motor 0x7F), polled after
 * each frame; a header flags byte with bit 7 set raises the fault word in its id bytes instead.
 * The node must write only whole 29-bit frames of 8 bytes addressed to a host (or the
 * type 0 target 0xFE) carrying its own ID, never more than it has room for, never a non-finite
 * command, and never drive the joint outside run mode or while faulted. The reply thread's side
 * (robstride_reply.c) takes each frame too, as the I/O thread does before the tick: its copy of
 * the registers must stay the node's, and its answers whole frames from the node's ID. The model
 * (CyberGear or RS04) follows the input's length. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "robstride/robstride.h"
#include "robstride/robstride_reply.h"
#include "fuzz_frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OUT_MAX 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_rs_config cfg;
    hs_rs_config_init(&cfg, size % 2 ? HS_RS_MODEL_RS04 : HS_RS_MODEL_CYBERGEAR, 0x7F);
    cfg.timeout_ns = 3;
    struct hs_rs_node node;
    if (hs_rs_node_init(&node, &cfg, NULL) < 0)
        __builtin_trap();
    static struct hs_rs_replier rr;
    hs_rs_replier_init(&rr, &node);
    struct hs_can_joint_state js = {.q_rad = 0.1, .dq_rad_s = -1, .tau_nm = 2, .current_a = 1};
    int64_t t = 0;
    static const struct fuzz_frame_format fmt = {4, 0x1FFFFFFF, 0x7};
    struct fuzz_frame in;
    while (fuzz_next_frame(&fmt, &data, &size, &in)) {
        if (in.raw_flags & 0x80) /* a fault raised with the raw id as its code */
            hs_rs_node_fault(&node, in.raw_id);
        else {
            hs_can_node_on_frame(&node.base, &in.f, t);
            struct hs_can_frame ans;
            int a = hs_rs_replier_answer(&rr, &in.f, &ans);
            if (a >= 0 && memcmp(&rr.regs, &node.regs, sizeof rr.regs) != 0)
                __builtin_trap(); /* the reply thread's registers left the node's */
            if (a == 1 &&
                (!(ans.flags & HS_CAN_FLAG_EXT) || ans.len != 8 || (ans.id >> 8 & 0xFF) != 0x7F))
                __builtin_trap();
        }
        struct hs_can_joint_command cmd;
        struct hs_can_frame out[OUT_MAX];
        int k = hs_can_node_poll(&node.base, t, &js, &cmd, out, OUT_MAX);
        if (k < 0 || k > OUT_MAX || !isfinite(cmd.q_ref_rad) || !isfinite(cmd.kp_nm_rad) ||
            !isfinite(cmd.kd_nm_s_rad) || !isfinite(cmd.tau_ff_nm) || !isfinite(cmd.dq_ref_rad_s))
            __builtin_trap();
        if (cmd.enabled &&
            (node.regs.mode != HS_RS_MODE_RUN || node.regs.faults || node.regs.fault_word))
            __builtin_trap();
        for (int i = 0; i < k; i++) {
            const struct hs_can_frame *o = &out[i];
            unsigned type = o->id >> 24;
            if (!(o->flags & HS_CAN_FLAG_EXT) || o->len != 8 || o->id > 0x1FFFFFFF ||
                (o->id >> 8 & 0xFF) != 0x7F)
                __builtin_trap();
            if (type != 0 && type != 2 && type != 17 && type != 21)
                __builtin_trap();
            if (type == 0 && (o->id & 0xFF) != 0xFE)
                __builtin_trap();
        }
        hs_rs_replier_publish(&rr, &node, js.q_rad);
        js.q_rad += 0.01;
        t += 1;
    }
    return 0;
}
