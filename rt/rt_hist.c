#include "rt/rt_hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int hs_hist_init(struct hs_hist *h, int64_t range_ns, int64_t bin_ns)
{
    memset(h, 0, sizeof *h);
    if (bin_ns <= 0 || range_ns <= 0 || range_ns % bin_ns != 0 || range_ns / bin_ns > UINT32_MAX)
        return -EINVAL;
    uint32_t nbins = (uint32_t)(range_ns / bin_ns);
    /* calloc may hand out untouched zero pages; memset forces them resident now. */
    uint64_t *bins = malloc((size_t)nbins * sizeof *bins); /* init only */
    if (!bins)
        return -ENOMEM;
    memset(bins, 0, (size_t)nbins * sizeof *bins);
    h->bins = bins;
    h->nbins = nbins;
    h->bin_ns = bin_ns;
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
    int64_t idx = value_ns < 0 ? 0 : value_ns / h->bin_ns;
    if (idx >= (int64_t)h->nbins)
        h->overflow++;
    else
        h->bins[idx]++;
    if (h->count == 0 || value_ns < h->min_ns)
        h->min_ns = value_ns;
    if (h->count == 0 || value_ns > h->max_ns)
        h->max_ns = value_ns;
    h->count++;
    h->sum_ns += value_ns;
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
    uint64_t cum = 0;
    for (uint32_t i = 0; i < h->nbins; i++) {
        cum += h->bins[i];
        if (cum >= k) {
            *ret_ns = (int64_t)(i + 1) * h->bin_ns;
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
