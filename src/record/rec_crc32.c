/* CRC-32 (IEEE 802.3, reflected, as zlib and Python's zlib.crc32 compute it) for the records
 * of state.bin, shm.bin and events.bin: a reader can tell a torn or corrupted record from a
 * good one. Bitwise, no table: the writer thread computes it, never the tick. */
#include "rec_internal.h"

uint32_t hs__rec_crc32(const void *buf, size_t len)
{
    return hs__rec_crc32_update(0, buf, len);
}

uint32_t hs__rec_crc32_update(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint32_t c = crc ^ 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

void hs__rec_shuffle(uint8_t *out, const uint8_t *in, uint32_t n, uint32_t size)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < size; j++)
            out[(size_t)j * n + i] = in[(size_t)i * size + j];
}

void hs__rec_unshuffle(uint8_t *out, const uint8_t *in, uint32_t n, uint32_t size)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < size; j++)
            out[(size_t)i * size + j] = in[(size_t)j * n + i];
}
