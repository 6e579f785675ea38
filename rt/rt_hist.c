#include "hilsim/rt/rt_hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint32_t hs_hist_bin_of(int64_t value_ns)
{
    if (value_ns < HS_HIST_SUB)
        return value_ns < 0 ? 0 : (uint32_t)value_ns;
    /* e >= SUB_BITS: keep the top SUB_BITS + 1 bits, so (v >> shift) is in [SUB, 2 * SUB). */
    int e = 63 - __builtin_clzll((unsigned long long)value_ns);
    int shift = e - HS_HIST_SUB_BITS;
    return ((uint32_t)shift << HS_HIST_SUB_BITS) + (uint32_t)(value_ns >> shift);
}

int64_t hs_hist_bin_lo(uint32_t i)
{
    if (i < 2 * HS_HIST_SUB)
        return i;
    int shift = (int)(i >> HS_HIST_SUB_BITS) - 1;
    return (int64_t)((i & (HS_HIST_SUB - 1)) | HS_HIST_SUB) << shift;
}

int64_t hs_hist_bin_width(uint32_t i)
{
    return i < 2 * HS_HIST_SUB ? 1 : (int64_t)1 << ((i >> HS_HIST_SUB_BITS) - 1);
}

int64_t hs_hist_bin_value(uint32_t i)
{
    return hs_hist_bin_lo(i) + (hs_hist_bin_width(i) - 1) / 2;
}

int hs_hist_init(struct hs_hist *h, int64_t range_ns)
{
    memset(h, 0, sizeof *h);
    if (range_ns == 0)
        range_ns = HS_HIST_DEFAULT_RANGE_NS;
    if (range_ns < 1 || range_ns > HS_HIST_RANGE_MAX_NS)
        return -EINVAL;
    uint32_t nbins = hs_hist_bin_of(range_ns - 1) + 1;
    /* calloc may hand out untouched zero pages; memset forces them resident now. */
    uint64_t *bins = malloc((size_t)nbins * sizeof *bins); /* init only */
    if (!bins)
        return -ENOMEM;
    memset(bins, 0, (size_t)nbins * sizeof *bins);
    h->bins = bins;
    h->nbins = nbins;
    h->range_ns = range_ns;
    return 0;
}

void hs_hist_destroy(struct hs_hist *h)
{
    if (!h)
        return;
    free(h->bins);
    memset(h, 0, sizeof *h);
}

void hs_hist_reset(struct hs_hist *h)
{
    memset(h->bins, 0, (size_t)h->nbins * sizeof *h->bins);
    h->overflow = 0;
    h->count = 0;
    h->min_ns = 0;
    h->max_ns = 0;
    h->sum_ns = 0;
}

void hs_hist_record(struct hs_hist *h, int64_t value_ns)
{
    if (value_ns >= h->range_ns)
        h->overflow++;
    else
        h->bins[hs_hist_bin_of(value_ns)]++;
    if (h->count == 0 || value_ns < h->min_ns)
        h->min_ns = value_ns;
    if (h->count == 0 || value_ns > h->max_ns)
        h->max_ns = value_ns;
    h->count++;
    h->sum_ns += value_ns;
}

int hs_hist_merge(struct hs_hist *dst, const struct hs_hist *src)
{
    if (dst->range_ns != src->range_ns || dst->nbins != src->nbins)
        return -EINVAL;
    if (src->count == 0)
        return 0;
    for (uint32_t i = 0; i < src->nbins; i++)
        dst->bins[i] += src->bins[i];
    if (dst->count == 0 || src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (dst->count == 0 || src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
    dst->overflow += src->overflow;
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    return 0;
}

int hs_hist_percentile(const struct hs_hist *h, uint32_t p_ppm, int64_t *ret_ns)
{
    if (p_ppm == 0 || p_ppm > 1000000)
        return -EINVAL;
    if (h->count == 0)
        return -ENODATA;
    /* Integer ceil so that the C and Python sides agree to the sample. */
    unsigned __int128 num = (unsigned __int128)p_ppm * h->count;
    uint64_t k = (uint64_t)((num + 999999) / 1000000);
    if (k == 0)
        k = 1;
    /* The first and the last sample are known exactly. */
    if (k == 1 || k >= h->count) {
        *ret_ns = k == 1 ? h->min_ns : h->max_ns;
        return 0;
    }
    uint64_t cum = 0;
    for (uint32_t i = 0; i < h->nbins; i++) {
        cum += h->bins[i];
        if (cum >= k) {
            /* The clamp keeps a bin's midpoint from claiming more than was seen. */
            int64_t v = hs_hist_bin_value(i);
            *ret_ns = v < h->min_ns ? h->min_ns : v > h->max_ns ? h->max_ns : v;
            return 0;
        }
    }
    *ret_ns = h->max_ns;
    return 0;
}

double hs_hist_mean_ns(const struct hs_hist *h)
{
    return h->count ? (double)h->sum_ns / (double)h->count : 0.0;
}
