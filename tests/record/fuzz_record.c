/* libFuzzer target: the recording reader's parsers on one input. The first byte picks the
 * parser (state file, item file, candump log, manifest) and, with bit 2, whether the parsers
 * salvage (a crashed run's reading: stop at the first truncation or CRC mismatch, keep what was
 * whole before it); the rest is the file, any version (3: blocks, raw or zstd frames, a header
 * left open by a crash). The manifest's
 * files are looked for in a folder that does not exist, so every path through its checks up to
 * the first file read is taken. Whatever the bytes,
 * the parsers return 0 or a negative errno with a message, never read outside the buffer, and
 * whatever they accept is consistent (counts match the arrays, FD lengths are legal ones). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/can.h"
#include "hilsim/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t which = data[0] % 4;
    bool salvage = data[0] & 4;
    data++, size--;
    /* a copy of exactly size bytes, so ASan sees any read past the end */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    struct hs_recording *r = calloc(1, sizeof *r);
    if (!r) {
        free(buf);
        return 0;
    }
    r->salvage = salvage;
    struct hs_diag d = {0};
    if (which == 0) {
        int rc = hs_rec_parse_state(r, buf, size, "fuzz.state", &d);
        if (rc == 0 && r->nstates && !r->values)
            __builtin_trap();
        /* versions 1 and 2 hold records bare: never more of them than the bytes allow */
        if (rc == 0 && r->format_version < 3 && r->state_stride &&
            (size_t)r->nstates * (32 + 8 * (size_t)r->state_stride) > size)
            __builtin_trap();
        /* version 3: a block decompresses to at most 1 MiB (or one record), and a block
         * header takes 16 bytes, so the states are bounded by the blocks the bytes hold */
        if (rc == 0 && r->format_version >= 3 && r->state_stride &&
            (size_t)r->nstates > (size / 16 + 1) * ((1u << 20) / (32 + 8 * r->state_stride) + 1))
            __builtin_trap();
        /* salvaged: only whole records before the damage, and the damage is named */
        if (rc == 0 && r->damaged && (!salvage || !r->damage[0]))
            __builtin_trap();
    } else if (which == 1) {
        if (hs_rec_parse_items(r, buf, size, "fuzz.items", &d) == 0 && r->damaged && !salvage)
            __builtin_trap(); /* a finished recording's damage is an error, never skipped */
        for (uint32_t i = 0; i < r->nevents; i++)
            if (memchr(r->events[i].text, 0, HS_REC_TEXT_MAX) == NULL)
                __builtin_trap();
    } else if (which == 3) {
        struct hs_recording *m = NULL;
        if (hs_recording_open_manifest("/nonexistent/hilsim-fuzz", (const char *)buf, size, &m,
                                       &d) == 0) {
            /* only a manifest without segments' files could pass: then nothing was loaded */
            if (m->nstates || (m->nbuses && !m->bus_names))
                __builtin_trap();
            hs_recording_free(m);
        } else if (!d.msg[0]) {
            __builtin_trap(); /* an error always says why */
        }
    } else {
        struct hs_rec_frame *fr = NULL;
        uint32_t n = 0;
        if (hs_rec_parse_candump((const char *)buf, size, "fuzz.log", NULL, &fr, &n, &d) == 0)
            for (uint32_t i = 0; i < n; i++) {
                if (fr[i].len > 64 || ((fr[i].flags & HS_CAN_FLAG_FD) == 0 && fr[i].len > 8))
                    __builtin_trap();
                bool wide = fr[i].flags & (HS_CAN_FLAG_EXT | HS_CAN_FLAG_ERR);
                if (fr[i].id > (wide ? HS_CAN_EFF_MASK : HS_CAN_SFF_MASK))
                    __builtin_trap();
            }
        free(fr);
    }
    hs_recording_free(r);
    free(buf);
    return 0;
}
