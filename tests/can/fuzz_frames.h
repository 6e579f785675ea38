/* The input of the CAN protocol fuzz targets (fuzz_mit.c, fuzz_odrive.c, fuzz_cia402.c,
 * fuzz_moteus.c, fuzz_robstride.c) as a stream of frames. Each frame: id_bytes bytes of
 * little-endian id, a flags byte, a length byte (mod 65, so every CAN FD length and some
 * invalid ones), then that many payload bytes (fewer when the input ends first). The seed
 * corpora are written in this layout. */
#ifndef HS_TEST_FUZZ_FRAMES_H
#define HS_TEST_FUZZ_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/can.h"

struct fuzz_frame_format {
    unsigned id_bytes; /* 2 or 4 */
    uint32_t id_mask;  /* the bits of the id the frame keeps (0x7ff: standard ids) */
    uint8_t flags_mask;
};

struct fuzz_frame {
    struct hs_can_frame f; /* id and flags masked, unused payload bytes zero */
    uint32_t raw_id;       /* the id before the mask */
    uint8_t raw_flags;     /* the whole flags byte: bits outside the mask may steer a target */
};

/* Takes the next frame off *data / *size; false (nothing taken) when its header does not fit. */
bool fuzz_next_frame(const struct fuzz_frame_format *fmt, const uint8_t **data, size_t *size,
                     struct fuzz_frame *ret);

#endif
