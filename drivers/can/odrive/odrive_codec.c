/* Little-endian field access for ODrive CAN Simple payloads (alignment- and host-independent). */
#include <string.h>

#include "hilsim/can_odrive.h"

void hs_odrive_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
    p[3] = (uint8_t)(v >> 24);
}

uint32_t hs_odrive_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void hs_odrive_put_f32(uint8_t *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    hs_odrive_put_u32(p, u);
}

float hs_odrive_get_f32(const uint8_t *p)
{
    uint32_t u = hs_odrive_get_u32(p);
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}
