/* Signal bits <-> physical values. Bit numbering follows the DBC convention: position
 * byte*8 + bit, bit 0 = LSB of the byte. Intel signals run upward from their LSB (the start
 * bit); Motorola signals start at their MSB and run toward less significant bits, wrapping
 * from bit 0 of a byte to bit 7 of the next byte. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "dbc_internal.h"

static unsigned next_motorola(unsigned pos)
{
    return (pos % 8 == 0) ? pos + 15 : pos - 1;
}

int hs__dbc_signal_span(struct hs_dbc_signal *sig)
{
    unsigned start = sig->start_bit, len = sig->length;
    if (sig->byte_order == HS_DBC_INTEL) {
        if (start + len > HS_CAN_DATA_MAX * 8)
            return -ERANGE;
        sig->lsb_pos = (uint16_t)start;
        sig->msb_pos = (uint16_t)(start + len - 1);
        return 0;
    }
    unsigned pos = start;
    for (unsigned i = 1; i < len; i++)
        pos = next_motorola(pos);
    if (pos >= HS_CAN_DATA_MAX * 8)
        return -ERANGE;
    sig->msb_pos = (uint16_t)start;
    sig->lsb_pos = (uint16_t)pos;
    return 0;
}

static unsigned bytes_needed(const struct hs_dbc_signal *s)
{
    return (unsigned)(s->lsb_pos > s->msb_pos ? s->lsb_pos : s->msb_pos) / 8 + 1;
}

int hs_dbc_signal_get_raw(const struct hs_dbc_signal *s, const uint8_t *data, unsigned len,
                          uint64_t *ret_raw)
{
    if (bytes_needed(s) > len)
        return -ERANGE;
    uint64_t raw = 0;
    if (s->byte_order == HS_DBC_INTEL) {
        for (unsigned i = 0; i < s->length; i++) {
            unsigned pos = s->start_bit + i;
            raw |= (uint64_t)((data[pos / 8] >> (pos % 8)) & 1u) << i;
        }
    } else {
        unsigned pos = s->start_bit;
        for (unsigned i = 0; i < s->length; i++) {
            raw = raw << 1 | ((data[pos / 8] >> (pos % 8)) & 1u);
            pos = next_motorola(pos);
        }
    }
    *ret_raw = raw;
    return 0;
}

int hs_dbc_signal_set_raw(const struct hs_dbc_signal *s, uint8_t *data, unsigned len, uint64_t raw)
{
    if (bytes_needed(s) > len)
        return -ERANGE;
    if (s->byte_order == HS_DBC_INTEL) {
        for (unsigned i = 0; i < s->length; i++) {
            unsigned pos = s->start_bit + i;
            uint8_t bit = (uint8_t)(1u << (pos % 8));
            data[pos / 8] = (raw >> i) & 1u ? data[pos / 8] | bit : data[pos / 8] & ~bit;
        }
    } else {
        unsigned pos = s->start_bit;
        for (unsigned i = 0; i < s->length; i++) {
            uint8_t bit = (uint8_t)(1u << (pos % 8));
            unsigned k = s->length - 1 - i;
            data[pos / 8] = (raw >> k) & 1u ? data[pos / 8] | bit : data[pos / 8] & ~bit;
            pos = next_motorola(pos);
        }
    }
    return 0;
}

int hs_dbc_signal_decode(const struct hs_dbc_signal *s, const uint8_t *data, unsigned len,
                         double *ret_value)
{
    uint64_t raw;
    int r = hs_dbc_signal_get_raw(s, data, len, &raw);
    if (r < 0)
        return r;
    double v;
    if (s->value_type == HS_DBC_FLOAT32) {
        uint32_t u = (uint32_t)raw;
        float f;
        memcpy(&f, &u, sizeof f);
        v = f;
    } else if (s->value_type == HS_DBC_FLOAT64) {
        memcpy(&v, &raw, sizeof v);
    } else if (s->is_signed) {
        if (s->length < 64 && (raw >> (s->length - 1)) & 1u)
            raw |= ~((UINT64_C(1) << s->length) - 1);
        v = (double)(int64_t)raw;
    } else {
        v = (double)raw;
    }
    *ret_value = v * s->factor + s->offset;
    return 0;
}

int hs_dbc_signal_encode(const struct hs_dbc_signal *s, double value, uint8_t *data, unsigned len)
{
    if (bytes_needed(s) > len)
        return -ERANGE;
    double x = (value - s->offset) / s->factor;
    if (s->value_type == HS_DBC_FLOAT32) {
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        return hs_dbc_signal_set_raw(s, data, len, u);
    }
    if (s->value_type == HS_DBC_FLOAT64) {
        uint64_t u;
        memcpy(&u, &x, sizeof u);
        return hs_dbc_signal_set_raw(s, data, len, u);
    }
    if (isnan(x))
        return -EDOM;
    x = nearbyint(x);
    int ret = 0;
    uint64_t raw;
    unsigned n = s->length;
    if (s->is_signed) {
        /* bounds as doubles are exact powers of two; compare before converting */
        double lo = -ldexp(1.0, (int)n - 1), hi = ldexp(1.0, (int)n - 1);
        int64_t v;
        if (x < lo) {
            v = n == 64 ? INT64_MIN : -(INT64_C(1) << (n - 1));
            ret = -ERANGE;
        } else if (x >= hi) {
            v = n == 64 ? INT64_MAX : (INT64_C(1) << (n - 1)) - 1;
            ret = -ERANGE;
        } else {
            v = (int64_t)x;
        }
        raw = (uint64_t)v;
    } else {
        double hi = ldexp(1.0, (int)n);
        if (x < 0) {
            raw = 0;
            ret = -ERANGE;
        } else if (x >= hi) {
            raw = n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
            ret = -ERANGE;
        } else {
            raw = (uint64_t)x;
        }
    }
    if (n < 64)
        raw &= (UINT64_C(1) << n) - 1;
    int r = hs_dbc_signal_set_raw(s, data, len, raw);
    return r < 0 ? r : ret;
}

bool hs_dbc_signal_present(const struct hs_dbc_message *m, const struct hs_dbc_signal *s,
                           const uint8_t *data, unsigned len)
{
    if (s->mux != HS_DBC_MULTIPLEXED)
        return true;
    uint64_t sel;
    if (m->multiplexor < 0 ||
        hs_dbc_signal_get_raw(&m->signals[m->multiplexor], data, len, &sel) < 0)
        return false;
    return sel == s->mux_value;
}

const char *hs_dbc_value_text(const struct hs_dbc_signal *s, int64_t raw)
{
    for (unsigned i = 0; i < s->n_values; i++)
        if (s->values[i].value == raw)
            return s->values[i].text;
    return NULL;
}

const struct hs_dbc_message *hs_dbc_find(const struct hs_dbc *dbc, uint32_t id, bool extended)
{
    unsigned lo = 0, hi = dbc->n_messages;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        const struct hs_dbc_message *m = &dbc->messages[mid];
        int c = m->extended != extended ? (m->extended ? 1 : -1)
                                        : (m->id < id   ? -1
                                           : m->id > id ? 1
                                                        : 0);
        if (c == 0)
            return m;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const struct hs_dbc_message *hs_dbc_find_by_name(const struct hs_dbc *dbc, const char *name)
{
    for (unsigned i = 0; i < dbc->n_messages; i++)
        if (!strcmp(dbc->messages[i].name, name))
            return &dbc->messages[i];
    return NULL;
}

const struct hs_dbc_signal *hs_dbc_signal_by_name(const struct hs_dbc_message *m, const char *name)
{
    for (unsigned i = 0; i < m->n_signals; i++)
        if (!strcmp(m->signals[i].name, name))
            return &m->signals[i];
    return NULL;
}
