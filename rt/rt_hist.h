/* Latency histogram with fixed-width bins plus one overflow bin, preallocated at init.
 *
 * Percentile definition (shared with scripts/trace-analyze.py, keep them identical):
 * with N samples and p given in parts per million, k = ceil(p_ppm * N / 1e6) (at least 1);
 * the percentile is the upper edge (i + 1) * bin_ns of the smallest bin i whose cumulative
 * count reaches k. Values below 0 count in bin 0. When k is only reached in the overflow bin
 * the percentile is the exact maximum. min, max and mean are exact. */
#ifndef HS_RT_HIST_H
#define HS_RT_HIST_H

#include <stdint.h>

#define HS_HIST_DEFAULT_BIN_NS 1000
#define HS_HIST_DEFAULT_RANGE_NS 20000000 /* 20 ms in 1 us bins: 160 KB per histogram */

struct hs_hist {
    uint64_t *bins;    /* owned; nbins entries */
    uint32_t nbins;    /* range_ns / bin_ns */
    int64_t bin_ns;    /* width of each bin */
    uint64_t overflow; /* samples >= nbins * bin_ns */
    uint64_t count;
    int64_t min_ns; /* valid when count > 0 */
    int64_t max_ns;
    int64_t sum_ns; /* for the exact mean; 2^63 ns is 292 years of samples */
};

/* init only: allocates. range_ns must be a positive multiple of bin_ns. Returns 0 or -EINVAL /
 * -ENOMEM; h is zeroed on failure (so hs_hist_destroy is safe). The bins are touched here so
 * that recording never page-faults. */
int hs_hist_init(struct hs_hist *h, int64_t range_ns, int64_t bin_ns);
/* init only. Accepts NULL and zeroed histograms. */
void hs_hist_destroy(struct hs_hist *h);
/* RT-safe. Forgets every sample. */
void hs_hist_reset(struct hs_hist *h);
/* RT-safe: O(1), no allocation. */
void hs_hist_record(struct hs_hist *h, int64_t value_ns);
/* RT-safe but O(nbins): call from a non-RT thread. Returns 0 and the value in *ret_ns, or
 * -ENODATA when the histogram is empty, -EINVAL when p_ppm is not in 1..1000000. */
int hs_hist_percentile(const struct hs_hist *h, uint32_t p_ppm, int64_t *ret_ns);
/* Exact mean in ns (0 when empty). */
double hs_hist_mean_ns(const struct hs_hist *h);

#endif
