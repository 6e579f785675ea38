/* Random numbers for noise bursts, spikes and CAN fault probabilities: xorshift64* per step,
 * seeded by splitmix64 from the scenario's seed, so a scenario repeats exactly. RT-safe. */
#include <math.h>

#include "scen_internal.h"

uint64_t hs__scen_seed(uint64_t seed, uint32_t stream)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (stream + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 1;
}

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

double hs__scen_uniform(uint64_t *state)
{
    return (double)(next(state) >> 11) * 0x1.0p-53;
}

/* Box-Muller; one of the pair is thrown away to keep the state one word. */
double hs__scen_gauss(uint64_t *state)
{
    double u1 = hs__scen_uniform(state), u2 = hs__scen_uniform(state);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}
