/* MIT-mode frame packing. The linear maps use single precision and truncation exactly like
 * the mini-cheetah firmware's float_to_uint / uint_to_float, so a simulated reply carries the
 * same bits a real board would send. Inputs are clamped first: the firmware relies on callers
 * staying in range, and an out-of-range float-to-integer conversion is undefined in C. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "hilsim/can_mit.h"

uint32_t hs_mit_float_to_uint(double x, double x_min, double x_max, unsigned bits)
{
    float span = (float)(x_max - x_min);
    float offset = (float)x_min;
    float xf = (float)x;
    if (!(xf >= (float)x_min)) /* also catches NaN */
        xf = (float)x_min;
    if (xf > (float)x_max)
        xf = (float)x_max;
    float steps = (float)((1u << bits) - 1);
    float v = (xf - offset) * steps / span;
    if (v < 0)
        v = 0;
    if (v > steps)
        v = steps;
    return (uint32_t)v;
}

double hs_mit_uint_to_float(uint32_t x, double x_min, double x_max, unsigned bits)
{
    float span = (float)(x_max - x_min);
    float offset = (float)x_min;
    return (double)((float)x * span / (float)((1u << bits) - 1) + offset);
}

void hs_mit_pack_command(const struct hs_mit_limits *lim, const struct hs_mit_command *c,
                         uint8_t data[8])
{
    uint32_t p = hs_mit_float_to_uint(c->p_rad, lim->p_min, lim->p_max, 16);
    uint32_t v = hs_mit_float_to_uint(c->v_rad_s, lim->v_min, lim->v_max, 12);
    uint32_t kp = hs_mit_float_to_uint(c->kp, lim->kp_min, lim->kp_max, 12);
    uint32_t kd = hs_mit_float_to_uint(c->kd, lim->kd_min, lim->kd_max, 12);
    uint32_t t = hs_mit_float_to_uint(c->t_ff_nm, lim->t_min, lim->t_max, 12);
    data[0] = (uint8_t)(p >> 8);
    data[1] = (uint8_t)p;
    data[2] = (uint8_t)(v >> 4);
    data[3] = (uint8_t)((v & 0xF) << 4 | kp >> 8);
    data[4] = (uint8_t)kp;
    data[5] = (uint8_t)(kd >> 4);
    data[6] = (uint8_t)((kd & 0xF) << 4 | t >> 8);
    data[7] = (uint8_t)t;
}

void hs_mit_unpack_command(const struct hs_mit_limits *lim, const uint8_t data[8],
                           struct hs_mit_command *ret)
{
    uint32_t p = (uint32_t)data[0] << 8 | data[1];
    uint32_t v = (uint32_t)data[2] << 4 | data[3] >> 4;
    uint32_t kp = (uint32_t)(data[3] & 0xF) << 8 | data[4];
    uint32_t kd = (uint32_t)data[5] << 4 | data[6] >> 4;
    uint32_t t = (uint32_t)(data[6] & 0xF) << 8 | data[7];
    ret->p_rad = hs_mit_uint_to_float(p, lim->p_min, lim->p_max, 16);
    ret->v_rad_s = hs_mit_uint_to_float(v, lim->v_min, lim->v_max, 12);
    ret->kp = hs_mit_uint_to_float(kp, lim->kp_min, lim->kp_max, 12);
    ret->kd = hs_mit_uint_to_float(kd, lim->kd_min, lim->kd_max, 12);
    ret->t_ff_nm = hs_mit_uint_to_float(t, lim->t_min, lim->t_max, 12);
}

void hs_mit_pack_reply(const struct hs_mit_limits *lim, uint8_t motor_id, double p_rad,
                       double v_rad_s, double t_nm, uint8_t data[6])
{
    uint32_t p = hs_mit_float_to_uint(p_rad, lim->p_min, lim->p_max, 16);
    uint32_t v = hs_mit_float_to_uint(v_rad_s, lim->v_min, lim->v_max, 12);
    uint32_t t = hs_mit_float_to_uint(t_nm, lim->t_min, lim->t_max, 12);
    data[0] = motor_id;
    data[1] = (uint8_t)(p >> 8);
    data[2] = (uint8_t)p;
    data[3] = (uint8_t)(v >> 4);
    data[4] = (uint8_t)((v & 0xF) << 4 | t >> 8);
    data[5] = (uint8_t)t;
}

void hs_mit_pack_reply_ak_status(double temp_c, uint8_t error, uint8_t data[8])
{
    double t = round(temp_c);
    if (!(t >= -128)) /* also NaN */
        t = isnan(t) ? 0 : -128;
    if (t > 127)
        t = 127;
    data[6] = (uint8_t)(int8_t)t;
    data[7] = error;
}

int hs_mit_unpack_reply(const struct hs_mit_limits *lim, const uint8_t *data, unsigned len,
                        uint8_t *ret_id, double *ret_p, double *ret_v, double *ret_t)
{
    if (len < 6)
        return -EBADMSG;
    uint32_t p = (uint32_t)data[1] << 8 | data[2];
    uint32_t v = (uint32_t)data[3] << 4 | data[4] >> 4;
    uint32_t t = (uint32_t)(data[4] & 0xF) << 8 | data[5];
    *ret_id = data[0];
    *ret_p = hs_mit_uint_to_float(p, lim->p_min, lim->p_max, 16);
    *ret_v = hs_mit_uint_to_float(v, lim->v_min, lim->v_max, 12);
    *ret_t = hs_mit_uint_to_float(t, lim->t_min, lim->t_max, 12);
    return 0;
}

enum hs_mit_special hs_mit_special_kind(const uint8_t *data, unsigned len)
{
    if (len != 8)
        return HS_MIT_NOT_SPECIAL;
    for (unsigned i = 0; i < 7; i++)
        if (data[i] != 0xFF)
            return HS_MIT_NOT_SPECIAL;
    switch (data[7]) {
    case 0xFC:
        return HS_MIT_ENTER;
    case 0xFD:
        return HS_MIT_EXIT;
    case 0xFE:
        return HS_MIT_ZERO;
    default:
        return HS_MIT_NOT_SPECIAL;
    }
}

void hs_mit_pack_special(enum hs_mit_special kind, uint8_t data[8])
{
    memset(data, 0xFF, 8);
    data[7] = kind == HS_MIT_ENTER ? 0xFC : kind == HS_MIT_EXIT ? 0xFD : 0xFE;
}
