/* A run's parameters: the axes (list, range) by the run's cell, the draws (uniform, normal,
 * choice) from a generator seeded by the campaign's seed and the run's index alone, so a run
 * gets the same values whichever shard, worker or order runs it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/campaign.h"

/* SplitMix64 (Steele, Lea, Flood 2014): a full-period 64-bit generator with good mixing, ample
 * for a few draws per run, and independent streams from nearby seeds. */
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static double unit(uint64_t *s)
{
    return (double)(splitmix(s) >> 11) * 0x1.0p-53;
}

void hs_campaign_values(const struct hs_campaign *c, int run, struct hs_camp_values *out)
{
    memset(out, 0, sizeof *out);
    out->cell = run / c->runs_per_cell;
    out->rep = run % c->runs_per_cell;
    uint64_t st = c->seed * 0xD1342543DE82EF95ull + (uint64_t)run;
    out->seed = splitmix(&st) >> 33; /* 31 bits: fits any seed field a scenario has */
    int cell = out->cell;
    for (int i = c->nparams - 1; i >= 0; i--) {
        const struct hs_camp_param *p = &c->params[i];
        if (p->kind == HS_CAMP_LIST || p->kind == HS_CAMP_RANGE) {
            snprintf(out->v[i], HS_CAMP_VALUE_LEN, "%s", p->values[cell % p->nvalues]);
            cell /= p->nvalues;
        }
    }
    for (int i = 0; i < c->nparams; i++) {
        const struct hs_camp_param *p = &c->params[i];
        double x;
        switch (p->kind) {
        case HS_CAMP_UNIFORM:
            x = p->a + (p->b - p->a) * unit(&st);
            snprintf(out->v[i], HS_CAMP_VALUE_LEN, "%.9g", x);
            break;
        case HS_CAMP_NORMAL: {
            double u1 = unit(&st), u2 = unit(&st);
            x = p->a + p->b * sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2); /* Box-Muller */
            snprintf(out->v[i], HS_CAMP_VALUE_LEN, "%.9g", x);
            break;
        }
        case HS_CAMP_CHOICE:
            snprintf(out->v[i], HS_CAMP_VALUE_LEN, "%s",
                     p->values[splitmix(&st) % (uint64_t)p->nvalues]);
            break;
        default:
            break;
        }
    }
}

static const char *lookup(const struct hs_campaign *c, const struct hs_camp_values *v,
                          const char *name, size_t len, const char *const *xn,
                          const char *const *xv, int nx, char *num)
{
    for (int i = 0; i < c->nparams; i++)
        if (strlen(c->params[i].name) == len && !strncmp(c->params[i].name, name, len))
            return v->v[i];
    for (int i = 0; i < nx; i++)
        if (strlen(xn[i]) == len && !strncmp(xn[i], name, len))
            return xv[i];
    if (len == 4 && !strncmp(name, "seed", 4)) {
        snprintf(num, 24, "%llu", (unsigned long long)v->seed);
        return num;
    }
    return NULL;
}

char *hs_campaign_render(const struct hs_campaign *c, const struct hs_camp_values *v, int run,
                         const char *const *xn, const char *const *xv, int nx, const char *text,
                         char *err, size_t errlen)
{
    size_t cap = strlen(text) + 256, len = 0;
    char *out = malloc(cap), num[24], runs[24];
    if (!out) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(runs, sizeof runs, "%d", run);
    for (const char *p = text; *p;) {
        const char *rep = NULL;
        size_t skip = 1;
        char one[2] = {*p, 0};
        if (p[0] == '$' && p[1] == '{') {
            const char *end = strchr(p + 2, '}');
            size_t n = end ? (size_t)(end - p - 2) : 0;
            if (!end || n == 0) {
                snprintf(err, errlen, "an unclosed ${ at '%.20s'", p);
                free(out);
                return NULL;
            }
            rep = n == 3 && !strncmp(p + 2, "run", 3) ? runs
                                                      : lookup(c, v, p + 2, n, xn, xv, nx, num);
            if (!rep) {
                snprintf(err, errlen, "${%.*s} names no parameter (nor seed, run%s)", (int)n, p + 2,
                         nx ? ", bench, examples, dir" : "");
                free(out);
                return NULL;
            }
            skip = n + 3;
        } else {
            rep = one;
        }
        size_t rl = strlen(rep);
        if (len + rl + 1 > cap) {
            cap = (len + rl + 1) * 2;
            char *grown = realloc(out, cap);
            if (!grown) {
                free(out);
                snprintf(err, errlen, "out of memory");
                return NULL;
            }
            out = grown;
        }
        memcpy(out + len, rep, rl);
        len += rl;
        p += skip;
    }
    out[len] = 0;
    return out;
}
