#include "hilsim/noise.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void hs_rng_seed(struct hs_rng *rng, uint64_t seed, uint64_t stream)
{
    /* Mixing the stream through its own splitmix step keeps nearby (seed, stream) pairs far
     * apart in xoshiro's state space. */
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ull + 0x632be59bd9b4e019ull);
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&x);
    rng->spare = 0;
    rng->has_spare = false;
}

uint64_t hs_rng_next(struct hs_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double hs_rng_uniform(struct hs_rng *rng)
{
    return (double)(hs_rng_next(rng) >> 11) * 0x1.0p-53;
}

double hs_rng_gauss(struct hs_rng *rng)
{
    if (rng->has_spare) {
        rng->has_spare = false;
        return rng->spare;
    }
    /* Polar method: rejection keeps it free of trig calls; the acceptance rate is pi/4, so the
     * chance of more than 40 rounds is below 1e-26. The cap keeps the loop bounded for the RT
     * path; falling out of it returns 0, a valid (if unlikely) deviate. */
    for (int i = 0; i < 64; i++) {
        double u = 2.0 * hs_rng_uniform(rng) - 1.0;
        double v = 2.0 * hs_rng_uniform(rng) - 1.0;
        double s = u * u + v * v;
        if (s > 0.0 && s < 1.0) {
            double m = sqrt(-2.0 * log(s) / s);
            rng->spare = v * m;
            rng->has_spare = true;
            return u * m;
        }
    }
    return 0.0;
}

double hs_saturate(double x, double range, bool *saturated)
{
    if (!(range > 0.0) || !isfinite(range))
        return x;
    if (x > range) {
        *saturated = true;
        return range;
    }
    if (x < -range) {
        *saturated = true;
        return -range;
    }
    return x;
}

double hs_quantise(double x, double quantum)
{
    if (!(quantum > 0.0))
        return x;
    return quantum * nearbyint(x / quantum);
}

void hs_channel_init(struct hs_channel *ch, const struct hs_channel_params *p, uint64_t seed,
                     uint64_t stream)
{
    ch->p = *p;
    for (int i = 0; i < 3; i++) {
        hs_rng_seed(&ch->rng[i], seed, stream * 3 + (uint64_t)i);
        ch->bias_walk[i] = 0.0;
    }
    ch->saturations = 0;
}

bool hs_channel_apply(struct hs_channel *ch, const double in[3], double dt_s, double out[3])
{
    const struct hs_channel_params *p = &ch->p;
    bool sat = false;
    double walk_std = p->bias_rw_std > 0.0 && dt_s > 0.0 ? p->bias_rw_std * sqrt(dt_s) : 0.0;
    for (int i = 0; i < 3; i++) {
        double x = in[i] + p->bias[i];
        /* Draw only when a term is on, so switching noise off leaves the exact signal. */
        if (walk_std > 0.0)
            ch->bias_walk[i] += walk_std * hs_rng_gauss(&ch->rng[i]);
        x += ch->bias_walk[i];
        if (p->white_std > 0.0)
            x += p->white_std * hs_rng_gauss(&ch->rng[i]);
        x = hs_saturate(x, p->range[i], &sat);
        out[i] = hs_quantise(x, p->quantum);
    }
    if (sat)
        ch->saturations++;
    return sat;
}
