/* The error model of a measured 3-vector: bias, white noise, bias random walk, range saturation
 * and quantisation, driven by a seeded deterministic generator (xoshiro256** seeded through
 * splitmix64, normal deviates by the polar Box-Muller method). Same seed and stream, same
 * sequence, on every run: sensor logs are byte-identical across runs. No libc rand().
 *
 * Ownership: every struct here is plain storage owned by the caller; nothing allocates. */
#ifndef HILSIM_NOISE_H
#define HILSIM_NOISE_H

#include <stdbool.h>
#include <stdint.h>

struct hs_rng {
    uint64_t s[4];
    double spare; /* second deviate of the last Box-Muller pair */
    bool has_spare;
};

/* RT-safe. stream separates independent generators drawn from one seed (e.g. per sensor axis),
 * so adding a sensor never changes another sensor's noise. */
void hs_rng_seed(struct hs_rng *rng, uint64_t seed, uint64_t stream);
uint64_t hs_rng_next(struct hs_rng *rng);  /* RT-safe */
double hs_rng_uniform(struct hs_rng *rng); /* RT-safe: [0, 1), 53 random bits */
double hs_rng_gauss(struct hs_rng *rng);   /* RT-safe: standard normal */

struct hs_channel_params {
    double bias[3];     /* constant offset, signal units */
    double white_std;   /* standard deviation per output sample, signal units (0 = off) */
    double bias_rw_std; /* bias random walk, signal units per sqrt(s) (0 = off) */
    double range[3];    /* |value| saturates here; <= 0 or INFINITY = unlimited */
    double quantum;     /* LSB, signal units; 0 = continuous */
};

struct hs_channel {
    struct hs_channel_params p;
    struct hs_rng rng[3];
    double bias_walk[3];  /* current random-walk part of the bias */
    uint64_t saturations; /* samples where at least one axis hit the range */
};

/* RT-safe. Copies p; seeds one generator per axis from (seed, stream * 3 + axis). */
void hs_channel_init(struct hs_channel *ch, const struct hs_channel_params *p, uint64_t seed,
                     uint64_t stream);
/* RT-safe. true value in, measured value out (in and out may alias). dt_s is the time since
 * the previous sample (random-walk step). Order: + bias + walk + white, saturate, quantise.
 * Returns true when an axis saturated. */
bool hs_channel_apply(struct hs_channel *ch, const double in[3], double dt_s, double out[3]);

/* RT-safe: clamp to ±range (range <= 0 or not finite: unchanged); sets *saturated if clamped. */
double hs_saturate(double x, double range, bool *saturated);
/* RT-safe: nearest multiple of quantum (quantum <= 0: unchanged). */
double hs_quantise(double x, double quantum);

#endif
