/* moteus register encodings (see moteus.h for the sources). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "moteus.h"

unsigned hs_mt_width_bytes(enum hs_mt_width w)
{
    static const unsigned n[HS_MT_WIDTH_MAX] = {1, 2, 4, 4};
    return (unsigned)w < HS_MT_WIDTH_MAX ? n[w] : 0;
}

/* One LSB of each width, per registers.md's "Mappings" (float: the value itself). */
static double lsb(enum hs_mt_quantity q, enum hs_mt_width w)
{
    static const double t[HS_MT_Q_MAX][3] = {
        [HS_MT_Q_INT] = {1, 1, 1},
        [HS_MT_Q_POSITION] = {0.01, 0.0001, 0.00001},
        [HS_MT_Q_VELOCITY] = {0.1, 0.00025, 0.00001},
        [HS_MT_Q_TORQUE] = {0.5, 0.01, 0.001},
        [HS_MT_Q_CURRENT] = {1, 0.1, 0.001},
        [HS_MT_Q_VOLTAGE] = {0.5, 0.1, 0.001},
        [HS_MT_Q_TEMPERATURE] = {1, 0.1, 0.001},
        [HS_MT_Q_TIME] = {0.01, 0.001, 0.000001},
        [HS_MT_Q_SCALE] = {1.0 / 127, 1.0 / 32767, 1.0 / 2147483647},
        [HS_MT_Q_ACCEL] = {0.05, 0.001, 0.00001},
        [HS_MT_Q_POWER] = {10.0, 0.05, 0.0001},
    };
    return t[q][w];
}

double hs_mt_decode(enum hs_mt_quantity q, enum hs_mt_width w, const uint8_t *p)
{
    switch (w) {
    case HS_MT_INT8: {
        int8_t v = (int8_t)p[0];
        return v == INT8_MIN ? NAN : v * lsb(q, w);
    }
    case HS_MT_INT16: {
        int16_t v = (int16_t)(uint16_t)(p[0] | p[1] << 8);
        return v == INT16_MIN ? NAN : v * lsb(q, w);
    }
    case HS_MT_INT32: {
        int32_t v = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                              (uint32_t)p[3] << 24);
        return v == INT32_MIN ? NAN : v * lsb(q, w);
    }
    default: {
        uint32_t u =
            (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    }
}

static int64_t saturate(double v, int64_t lo, int64_t hi)
{
    if (isnan(v))
        return lo - 1; /* the maximally negative integer: "unset" */
    double r = round(v);
    return r < (double)lo ? lo : r > (double)hi ? hi : (int64_t)r;
}

void hs_mt_encode(enum hs_mt_quantity q, enum hs_mt_width w, double v, uint8_t *p)
{
    uint32_t u;
    switch (w) {
    case HS_MT_INT8:
        p[0] = (uint8_t)(int8_t)saturate(v / lsb(q, w), INT8_MIN + 1, INT8_MAX);
        return;
    case HS_MT_INT16:
        u = (uint32_t)(int32_t)saturate(v / lsb(q, w), INT16_MIN + 1, INT16_MAX);
        p[0] = (uint8_t)u, p[1] = (uint8_t)(u >> 8);
        return;
    case HS_MT_INT32:
        u = (uint32_t)(int32_t)saturate(v / lsb(q, w), (int64_t)INT32_MIN + 1, INT32_MAX);
        break;
    default: {
        float f = (float)v;
        memcpy(&u, &f, sizeof u);
        break;
    }
    }
    p[0] = (uint8_t)u, p[1] = (uint8_t)(u >> 8), p[2] = (uint8_t)(u >> 16),
    p[3] = (uint8_t)(u >> 24);
}

int hs_mt_varuint_get(const uint8_t *p, unsigned len, uint32_t *ret)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < len && i < 5; i++) {
        v |= (uint64_t)(p[i] & 0x7F) << (7 * i);
        if (!(p[i] & 0x80)) {
            if (v > UINT32_MAX)
                return -EBADMSG;
            *ret = (uint32_t)v;
            return (int)i + 1;
        }
    }
    return -EBADMSG;
}

unsigned hs_mt_varuint_put(uint32_t v, uint8_t *p)
{
    unsigned n = 0;
    do {
        p[n] = (uint8_t)(v & 0x7F);
        v >>= 7;
        if (v)
            p[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

unsigned hs_mt_fd_len(unsigned n)
{
    static const unsigned lens[] = {8, 12, 16, 20, 24, 32, 48, 64};
    if (n <= 8)
        return n;
    for (unsigned i = 0; i < sizeof lens / sizeof lens[0]; i++)
        if (n <= lens[i])
            return lens[i];
    return 64;
}
