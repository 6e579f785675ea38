/* libFuzzer target: a stream of frames (4-byte header: ID low, ID high, flags, len; then len
 * bytes) into a moteus node (servo 1), polled after each frame. Every frame it sends must be
 * one CAN-FD frame from servo 1 of a valid FD length whose subframes parse back (reply, error,
 * diagnostic-stream data, NOP padding to the end), and the command must stay finite. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "moteus/moteus.h"
#include "fuzz_frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reply(const struct hs_can_frame *f)
{
    if (!(f->flags & HS_CAN_FLAG_FD) || f->len != hs_mt_fd_len(f->len) || (f->id >> 8) != 1 ||
        (f->id > 0x7FF && !(f->flags & HS_CAN_FLAG_EXT)))
        __builtin_trap();
    unsigned i = 0;
    while (i < f->len) {
        uint8_t t = f->data[i++];
        if (t == HS_MT_NOP)
            continue;
        uint32_t count, reg, code;
        int k;
        if (t == HS_MT_WRITE_ERROR || t == HS_MT_READ_ERROR) {
            if ((k = hs_mt_varuint_get(f->data + i, f->len - i, &reg)) < 0)
                __builtin_trap();
            i += (unsigned)k;
            if ((k = hs_mt_varuint_get(f->data + i, f->len - i, &code)) < 0)
                __builtin_trap();
            i += (unsigned)k;
            continue;
        }
        if (t == HS_MT_STREAM_SERVER_DATA) { /* channel, length, bytes */
            if ((k = hs_mt_varuint_get(f->data + i, f->len - i, &reg)) < 0)
                __builtin_trap();
            i += (unsigned)k;
            if ((k = hs_mt_varuint_get(f->data + i, f->len - i, &count)) < 0)
                __builtin_trap();
            i += (unsigned)k + count;
            if (i > f->len)
                __builtin_trap();
            continue;
        }
        if ((t & 0xF0) != HS_MT_REPLY)
            __builtin_trap();
        count = t & 3;
        if (!count) {
            if ((k = hs_mt_varuint_get(f->data + i, f->len - i, &count)) < 0)
                __builtin_trap();
            i += (unsigned)k;
        }
        if ((k = hs_mt_varuint_get(f->data + i, f->len - i, &reg)) < 0)
            __builtin_trap();
        i += (unsigned)k + count * hs_mt_width_bytes((enum hs_mt_width)(t >> 2 & 3));
        if (i > f->len)
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_mt_config cfg;
    hs_mt_config_init(&cfg, 1);
    cfg.default_timeout_ns = 3;
    struct hs_mt_node node;
    if (hs_mt_node_init(&node, &cfg, NULL) < 0)
        __builtin_trap();
    struct hs_can_joint_state js = {.q_rad = 0.1, .dq_rad_s = -1, .tau_nm = 2, .current_a = 1};
    int64_t t = 0;
    static const struct fuzz_frame_format fmt = {2, 0xFFFF, 0xF};
    struct fuzz_frame in;
    while (fuzz_next_frame(&fmt, &data, &size, &in)) {
        hs_can_node_on_frame(&node.base, &in.f, t);
        struct hs_can_joint_command cmd;
        struct hs_can_frame out[2];
        int k = hs_can_node_poll(&node.base, t, &js, &cmd, out, 2);
        if (k < 0 || k > 1 ||
            (cmd.enabled && (!isfinite(cmd.kp_nm_rad) || !isfinite(cmd.kd_nm_s_rad) ||
                             !isfinite(cmd.q_ref_rad) || !isfinite(cmd.dq_ref_rad_s))))
            __builtin_trap();
        if (k == 1)
            check_reply(&out[0]);
        js.q_rad += 0.01;
        t += 1;
    }
    return 0;
}
