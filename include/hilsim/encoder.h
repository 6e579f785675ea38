/* A joint encoder as a motor-controller board sees it: counts on the motor side
 * (counts_per_motor_rev per motor revolution, so counts_per_motor_rev · gear_ratio per joint
 * revolution), quantised to whole counts, multi-turn, absolute or incremental with a zero
 * offset, held in a counter of `bits` bits that wraps like the real register, and a velocity
 * estimate computed as a board does: counter difference over a window of ticks.
 *
 * Units: rotate joints in rad, slide joints in m with the motor turning gear_ratio rad per m
 * (a screw of lead 2π/gear_ratio m). Ownership: plain caller-owned storage, no allocation. */
#ifndef HILSIM_ENCODER_H
#define HILSIM_ENCODER_H

#include <stdbool.h>
#include <stdint.h>

#define HS_ENCODER_WINDOW_MAX 64u
#define HS_ENCODER_BITS_MAX 63u

struct hs_encoder_params {
    double counts_per_motor_rev; /* model encoderPulse, > 0 */
    double gear_ratio;           /* model gearRatio, != 0 (negative flips the count direction) */
    uint32_t bits;               /* counter width, 1 .. HS_ENCODER_BITS_MAX (e.g. 16, 24, 32) */
    bool absolute;               /* absolute: counts from joint zero; incremental: from start */
    int64_t zero_offset_counts;  /* added to the count before the wrap */
    uint32_t velocity_window;    /* ticks, 1 .. HS_ENCODER_WINDOW_MAX */
};

struct hs_encoder_reading {
    uint64_t count;           /* raw counter, 0 .. 2^bits - 1 */
    double velocity_counts_s; /* window estimate, motor counts/s */
    double velocity;          /* the same at the joint, rad/s or m/s */
    double position;          /* joint position the board would decode (unwrapped), rad or m */
};

struct hs_encoder {
    struct hs_encoder_params p;
    double counts_per_unit; /* motor counts per joint rad (or m) */
    int64_t origin;         /* quantised count subtracted (incremental: the count at start) */
    uint64_t mask;
    int64_t decoded; /* unwrapped count the board accumulates from counter differences */
    uint64_t last_raw;
    uint64_t history[HS_ENCODER_WINDOW_MAX + 1];
    uint32_t head, filled;
    double tick_s;
};

/* Fills defaults from the model's joint fields: 32 bits, absolute, no offset, window 1. */
void hs_encoder_params_default(double encoder_pulse, double gear_ratio,
                               struct hs_encoder_params *ret_params);
/* RT-safe. -EINVAL on a bad field (see hs_encoder_params). q0 is the joint position at start,
 * tick_s the update period. On failure enc is untouched. */
int hs_encoder_init(struct hs_encoder *enc, const struct hs_encoder_params *p, double q0,
                    double tick_s);
/* RT-safe: once per tick with the unwrapped joint position. */
void hs_encoder_update(struct hs_encoder *enc, double q, struct hs_encoder_reading *ret);
/* RT-safe: the whole motor-side count for q before offset and wrap (round to nearest, so the
 * quantisation error is at most half a count). */
int64_t hs_encoder_quantise(const struct hs_encoder *enc, double q);

#endif
