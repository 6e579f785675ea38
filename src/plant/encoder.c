#include "hilsim/encoder.h"

#include <errno.h>
#include <math.h>

void hs_encoder_params_default(double encoder_pulse, double gear_ratio,
                               struct hs_encoder_params *ret_params)
{
    *ret_params = (struct hs_encoder_params){
        .counts_per_motor_rev = encoder_pulse,
        .gear_ratio = gear_ratio,
        .bits = 32,
        .absolute = true,
        .zero_offset_counts = 0,
        .velocity_window = 1,
    };
}

int64_t hs_encoder_quantise(const struct hs_encoder *enc, double q)
{
    return (int64_t)floor(q * enc->counts_per_unit + 0.5);
}

/* Sign-extends a bits-wide counter difference, as a board does when it decodes a wrapped
 * counter: correct as long as the joint moves less than half the counter range per tick. */
static int64_t wrapped_diff(uint64_t a, uint64_t b, uint64_t mask)
{
    uint64_t d = (a - b) & mask;
    uint64_t half = (mask >> 1) + 1;
    return d >= half ? (int64_t)d - (int64_t)(mask + 1) : (int64_t)d;
}

int hs_encoder_init(struct hs_encoder *enc, const struct hs_encoder_params *p, double q0,
                    double tick_s)
{
    if (!(p->counts_per_motor_rev > 0.0) || !isfinite(p->counts_per_motor_rev) ||
        !(p->gear_ratio != 0.0) || !isfinite(p->gear_ratio) || p->bits < 1 ||
        p->bits > HS_ENCODER_BITS_MAX || p->velocity_window < 1 ||
        p->velocity_window > HS_ENCODER_WINDOW_MAX || !(tick_s > 0.0))
        return -EINVAL;
    enc->p = *p;
    enc->counts_per_unit = p->counts_per_motor_rev * p->gear_ratio / (2.0 * M_PI);
    enc->mask = (1ull << p->bits) - 1;
    enc->origin = 0;
    enc->origin = p->absolute ? 0 : hs_encoder_quantise(enc, q0);
    enc->tick_s = tick_s;
    int64_t start = hs_encoder_quantise(enc, q0) - enc->origin + p->zero_offset_counts;
    uint64_t raw = (uint64_t)start & enc->mask;
    enc->last_raw = raw;
    enc->decoded = start;
    enc->head = 0;
    enc->filled = 1;
    enc->history[0] = raw;
    return 0;
}

void hs_encoder_update(struct hs_encoder *enc, double q, struct hs_encoder_reading *ret)
{
    uint64_t raw =
        (uint64_t)(hs_encoder_quantise(enc, q) - enc->origin + enc->p.zero_offset_counts) &
        enc->mask;
    enc->decoded += wrapped_diff(raw, enc->last_raw, enc->mask);
    enc->last_raw = raw;

    uint32_t n = enc->p.velocity_window + 1;
    enc->head = enc->head + 1 == n ? 0 : enc->head + 1;
    enc->history[enc->head] = raw;
    if (enc->filled < n)
        enc->filled++;
    /* Oldest sample in the window; during the first ticks the window is what is available. */
    uint32_t span = enc->filled - 1;
    uint32_t old = (enc->head + n - span) % n;
    double counts_s = 0.0;
    if (span > 0)
        counts_s =
            (double)wrapped_diff(raw, enc->history[old], enc->mask) / ((double)span * enc->tick_s);

    ret->count = raw;
    ret->velocity_counts_s = counts_s;
    ret->velocity = counts_s / enc->counts_per_unit;
    ret->position =
        (double)(enc->decoded - enc->p.zero_offset_counts + enc->origin) / enc->counts_per_unit;
}
