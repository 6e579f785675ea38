/* One frame to a servo, walked subframe by subframe, and the reply to it (moteus.h). Shared by
 * the node (the tick) and the reply thread, so both answer a query with the same bytes. The
 * order of a reply's subframes is the request's, as mjlib's multiplex micro_server writes them. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "moteus.h"

struct reg_row {
    uint16_t reg;
    uint8_t q;
    bool writable;
};

/* Sorted by register: hs_mt_reg_index() searches it. */
static const struct reg_row regs[] = {
    {HS_MT_R_MODE, HS_MT_Q_INT, true},
    {HS_MT_R_POSITION, HS_MT_Q_POSITION, false},
    {HS_MT_R_VELOCITY, HS_MT_Q_VELOCITY, false},
    {HS_MT_R_TORQUE, HS_MT_Q_TORQUE, false},
    {HS_MT_R_Q_CURRENT, HS_MT_Q_CURRENT, false},
    {HS_MT_R_D_CURRENT, HS_MT_Q_CURRENT, false},
    {HS_MT_R_POWER, HS_MT_Q_POWER, false},
    {HS_MT_R_MOTOR_TEMPERATURE, HS_MT_Q_TEMPERATURE, false},
    {HS_MT_R_TRAJECTORY_COMPLETE, HS_MT_Q_INT, false},
    {HS_MT_R_HOME_STATE, HS_MT_Q_INT, false},
    {HS_MT_R_VOLTAGE, HS_MT_Q_VOLTAGE, false},
    {HS_MT_R_TEMPERATURE, HS_MT_Q_TEMPERATURE, false},
    {HS_MT_R_FAULT, HS_MT_Q_INT, false},
    {HS_MT_R_CMD_Q_CURRENT, HS_MT_Q_CURRENT, true},
    {HS_MT_R_CMD_POSITION, HS_MT_Q_POSITION, true},
    {HS_MT_R_CMD_VELOCITY, HS_MT_Q_VELOCITY, true},
    {HS_MT_R_CMD_FF_TORQUE, HS_MT_Q_TORQUE, true},
    {HS_MT_R_CMD_KP_SCALE, HS_MT_Q_SCALE, true},
    {HS_MT_R_CMD_KD_SCALE, HS_MT_Q_SCALE, true},
    {HS_MT_R_CMD_MAX_TORQUE, HS_MT_Q_TORQUE, true},
    {HS_MT_R_CMD_WATCHDOG, HS_MT_Q_TIME, true},
    {HS_MT_R_CMD_VELOCITY_LIMIT, HS_MT_Q_VELOCITY, true},
    {HS_MT_R_CMD_ACCEL_LIMIT, HS_MT_Q_ACCEL, true},
    {HS_MT_R_CONTROL_POSITION, HS_MT_Q_POSITION, false},
    {HS_MT_R_CONTROL_VELOCITY, HS_MT_Q_VELOCITY, false},
    {HS_MT_R_CONTROL_TORQUE, HS_MT_Q_TORQUE, false},
    {HS_MT_R_POSITION_ERROR, HS_MT_Q_POSITION, false},
    {HS_MT_R_VELOCITY_ERROR, HS_MT_Q_VELOCITY, false},
    {HS_MT_R_MODEL_NUMBER, HS_MT_Q_INT, false},
    {HS_MT_R_FIRMWARE_VERSION, HS_MT_Q_INT, false},
    {HS_MT_R_REGISTER_MAP_VERSION, HS_MT_Q_INT, false},
    {HS_MT_R_MULTIPLEX_ID, HS_MT_Q_INT, false},
    {HS_MT_R_SERIAL_NUMBER1, HS_MT_Q_INT, false},
    {HS_MT_R_SERIAL_NUMBER2, HS_MT_Q_INT, false},
    {HS_MT_R_SERIAL_NUMBER3, HS_MT_Q_INT, false},
};
_Static_assert(sizeof regs / sizeof regs[0] == HS_MT_NREGS, "HS_MT_NREGS");

int hs_mt_reg_index(uint32_t reg, enum hs_mt_quantity *ret_q, bool *ret_writable)
{
    unsigned lo = 0, hi = HS_MT_NREGS;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (regs[mid].reg < reg)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == HS_MT_NREGS || regs[lo].reg != reg)
        return -ENOENT;
    if (ret_q)
        *ret_q = (enum hs_mt_quantity)regs[lo].q;
    if (ret_writable)
        *ret_writable = regs[lo].writable;
    return (int)lo;
}

int hs_mt_write_check(uint32_t reg, double v)
{
    bool w;
    if (hs_mt_reg_index(reg, NULL, &w) < 0)
        return HS_MT_ERR_UNKNOWN;
    if (!w)
        return HS_MT_ERR_NOT_WRITABLE;
    if (isinf(v))
        return HS_MT_ERR_UNKNOWN; /* no set point, limit or scale is infinite */
    if (reg == HS_MT_R_MODE) {
        /* the modes hilsim runs; a float write can hold anything */
        if (!(v >= 0 && v <= 255))
            return HS_MT_ERR_UNKNOWN;
        int m = (int)v;
        if (m != HS_MT_MODE_STOPPED && m != HS_MT_MODE_POSITION && m != HS_MT_MODE_ZERO_VELOCITY &&
            m != HS_MT_MODE_BRAKE && m != HS_MT_MODE_CURRENT)
            return HS_MT_ERR_UNKNOWN;
    }
    return 0;
}

static void add(struct hs_mt_scan *s, struct hs_mt_item it)
{
    if (s->n < HS_MT_ITEMS_MAX)
        s->items[s->n++] = it;
}

int hs_mt_scan(const uint8_t *p, unsigned len, struct hs_mt_scan *ret, hs_mt_write_fn write,
               hs_mt_stream_fn stream, void *ctx)
{
    ret->n = 0;
    ret->stream = false;
    unsigned i = 0;
    int k;
    while (i < len) {
        uint8_t t = p[i++];
        if (t == HS_MT_NOP)
            continue;
        if (t == HS_MT_STREAM_CLIENT_DATA || t == HS_MT_STREAM_CLIENT_POLL) {
            uint32_t ch, n;
            if ((k = hs_mt_varuint_get(p + i, len - i, &ch)) < 0)
                return -EBADMSG;
            i += (unsigned)k;
            if ((k = hs_mt_varuint_get(p + i, len - i, &n)) < 0 || ch > 0xFFFF)
                return -EBADMSG;
            i += (unsigned)k;
            if (t == HS_MT_STREAM_CLIENT_DATA) {
                if (n > len - i)
                    return -EBADMSG;
                if (stream)
                    stream(ctx, ch, p + i, n);
                i += n;
                n = 64; /* the answer to data: whatever output fits */
            }
            ret->stream = true;
            add(ret, (struct hs_mt_item){.kind = HS_MT_I_STREAM,
                                         .count = (uint16_t)(n > 64 ? 64 : n),
                                         .reg = (uint16_t)ch});
            continue;
        }
        if (t == 0x43 || t == 0x44)
            return 0; /* the flow-controlled stream: not this firmware's; the frame ends here */
        uint8_t kind = t & 0xF0;
        if (kind != HS_MT_WRITE && kind != HS_MT_READ)
            return -EBADMSG; /* a reply, an error or garbage sent to a servo */
        enum hs_mt_width w = (enum hs_mt_width)(t >> 2 & 3);
        uint32_t count = t & 3, reg;
        if (!count) {
            if ((k = hs_mt_varuint_get(p + i, len - i, &count)) < 0)
                return -EBADMSG;
            i += (unsigned)k;
        }
        if ((k = hs_mt_varuint_get(p + i, len - i, &reg)) < 0 || count > 64 || reg > 0xFFFF)
            return -EBADMSG;
        i += (unsigned)k;
        if (kind == HS_MT_READ) {
            for (uint32_t r = 0; r < count; r++)
                if (hs_mt_reg_index(reg + r, NULL, NULL) < 0) {
                    /* the firmware answers the range with one read error and processes no
                     * more of the frame (mjlib micro_server ProcessSubframeRead) */
                    add(ret, (struct hs_mt_item){.kind = HS_MT_I_RERR,
                                                 .reg = (uint16_t)(reg + r),
                                                 .code = HS_MT_ERR_UNKNOWN});
                    return 0;
                }
            if (count)
                add(ret, (struct hs_mt_item){.kind = HS_MT_I_READ,
                                             .width = (uint8_t)w,
                                             .count = (uint16_t)count,
                                             .reg = (uint16_t)reg});
            continue;
        }
        unsigned wb = hs_mt_width_bytes(w);
        if (len - i < count * wb)
            return -EBADMSG;
        for (uint32_t r = 0; r < count; r++, i += wb) {
            enum hs_mt_quantity q = HS_MT_Q_INT;
            hs_mt_reg_index(reg + r, &q, NULL);
            double v = hs_mt_decode(q, w, p + i);
            int code = hs_mt_write_check(reg + r, v);
            if (!code && write)
                code = write(ctx, reg + r, v);
            if (code)
                add(ret, (struct hs_mt_item){.kind = HS_MT_I_WERR,
                                             .reg = (uint16_t)(reg + r),
                                             .code = (uint8_t)code});
        }
    }
    return 0;
}

unsigned hs_mt_reply(const struct hs_mt_scan *scan, const double *rv, hs_mt_pop_fn pop, void *ctx,
                     uint8_t *out)
{
    unsigned k = 0;
    for (unsigned j = 0; j < scan->n; j++) {
        const struct hs_mt_item *it = &scan->items[j];
        if (it->kind == HS_MT_I_READ) {
            enum hs_mt_width w = (enum hs_mt_width)it->width;
            unsigned wb = hs_mt_width_bytes(w);
            if (k + 1 + 5 + 5 + it->count * wb > 64)
                break; /* no room: the rest of the query is dropped, as a full frame would */
            if (it->count <= 3) {
                out[k++] = (uint8_t)(HS_MT_REPLY | w << 2 | it->count);
            } else {
                out[k++] = (uint8_t)(HS_MT_REPLY | w << 2);
                k += hs_mt_varuint_put(it->count, out + k);
            }
            k += hs_mt_varuint_put(it->reg, out + k);
            for (unsigned r = 0; r < it->count; r++, k += wb) {
                enum hs_mt_quantity q = HS_MT_Q_INT;
                int x = hs_mt_reg_index(it->reg + r, &q, NULL);
                hs_mt_encode(q, w, x >= 0 ? rv[x] : NAN, out + k);
            }
        } else if (it->kind == HS_MT_I_STREAM) {
            if (k + 1 + 3 + 1 > 64)
                break;
            out[k++] = HS_MT_STREAM_SERVER_DATA;
            k += hs_mt_varuint_put(it->reg, out + k);
            unsigned room = 64 - k - 1, max = it->count < room ? it->count : room;
            unsigned n = pop ? pop(ctx, out + k + 1, max) : 0;
            out[k++] = (uint8_t)n; /* n < 64: one varuint byte */
            k += n;
        } else {
            if (k + 11 > 64)
                break;
            out[k++] = it->kind == HS_MT_I_WERR ? HS_MT_WRITE_ERROR : HS_MT_READ_ERROR;
            k += hs_mt_varuint_put(it->reg, out + k);
            k += hs_mt_varuint_put(it->code, out + k);
        }
    }
    if (!k)
        return 0;
    unsigned padded = hs_mt_fd_len(k);
    memset(out + k, HS_MT_NOP, padded - k);
    return padded;
}
