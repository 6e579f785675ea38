/* Robstride/CyberGear frame packing (see robstride.h for the layout and its sources). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "robstride.h"

uint16_t hs_rs_float_to_u16(double x, double x_min, double x_max)
{
    if (!(x >= x_min)) /* NaN too */
        x = x_min;
    if (x > x_max)
        x = x_max;
    return (uint16_t)((x - x_min) * 65535.0 / (x_max - x_min)); /* truncates, as the firmware */
}

double hs_rs_u16_to_float(uint16_t u, double x_min, double x_max)
{
    return x_min + (double)u * (x_max - x_min) / 65535.0;
}

static uint16_t get_be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

void hs_rs_unpack_motion(const struct hs_rs_limits *l, uint32_t id, const uint8_t data[8],
                         struct hs_rs_motion *c)
{
    c->t_nm = hs_rs_u16_to_float((uint16_t)(id >> 8), -l->t_max, l->t_max);
    c->p_rad = hs_rs_u16_to_float(get_be16(data), -l->p_max, l->p_max);
    c->v_rad_s = hs_rs_u16_to_float(get_be16(data + 2), -l->v_max, l->v_max);
    c->kp = hs_rs_u16_to_float(get_be16(data + 4), 0, l->kp_max);
    c->kd = hs_rs_u16_to_float(get_be16(data + 6), 0, l->kd_max);
}

uint32_t hs_rs_pack_motion(const struct hs_rs_limits *l, uint8_t motor_id,
                           const struct hs_rs_motion *c, uint8_t data[8])
{
    put_be16(data, hs_rs_float_to_u16(c->p_rad, -l->p_max, l->p_max));
    put_be16(data + 2, hs_rs_float_to_u16(c->v_rad_s, -l->v_max, l->v_max));
    put_be16(data + 4, hs_rs_float_to_u16(c->kp, 0, l->kp_max));
    put_be16(data + 6, hs_rs_float_to_u16(c->kd, 0, l->kd_max));
    return hs_rs_can_id(HS_RS_MOTION, hs_rs_float_to_u16(c->t_nm, -l->t_max, l->t_max), motor_id);
}

uint32_t hs_rs_pack_feedback(const struct hs_rs_limits *l, const struct hs_rs_feedback *fb,
                             uint8_t data[8])
{
    put_be16(data, hs_rs_float_to_u16(fb->p_rad, -l->p_max, l->p_max));
    put_be16(data + 2, hs_rs_float_to_u16(fb->v_rad_s, -l->v_max, l->v_max));
    put_be16(data + 4, hs_rs_float_to_u16(fb->t_nm, -l->t_max, l->t_max));
    double t10 = round(fb->temp_c * 10);
    put_be16(data + 6, (uint16_t)(t10 < 0 ? 0 : t10 > 65535 ? 65535 : t10));
    uint16_t d2 = (uint16_t)((uint16_t)(fb->mode & 3) << 14 | (uint16_t)(fb->faults & 0x3F) << 8 |
                             fb->motor_id);
    return hs_rs_can_id(HS_RS_FEEDBACK, d2, fb->host_id);
}

int hs_rs_unpack_feedback(const struct hs_rs_limits *l, uint32_t id, const uint8_t data[8],
                          struct hs_rs_feedback *fb)
{
    if (hs_rs_id_type(id) != HS_RS_FEEDBACK)
        return -EBADMSG;
    fb->host_id = (uint8_t)id;
    fb->motor_id = (uint8_t)(id >> 8);
    fb->faults = (uint8_t)(id >> 16 & 0x3F);
    fb->mode = (enum hs_rs_mode)(id >> 22 & 3);
    fb->p_rad = hs_rs_u16_to_float(get_be16(data), -l->p_max, l->p_max);
    fb->v_rad_s = hs_rs_u16_to_float(get_be16(data + 2), -l->v_max, l->v_max);
    fb->t_nm = hs_rs_u16_to_float(get_be16(data + 4), -l->t_max, l->t_max);
    fb->temp_c = get_be16(data + 6) / 10.0;
    return 0;
}
