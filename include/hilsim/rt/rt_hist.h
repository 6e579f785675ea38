/* Latency histogram with log-linear bins (HDR style), preallocated at init; one overflow count.
 *
 * Bins: values below HS_HIST_SUB ns have 1 ns bins (exact). Above, every power of two [2^e,
 * 2^(e+1)) is cut into HS_HIST_SUB equal bins, so a bin is never wider than 1/HS_HIST_SUB of its
 * lower edge. A bin's value is its midpoint (over the integer ns it holds), so any value reported
 * from a bin is within HS_HIST_REL_ERR (1/256, 0.39 %) of every sample in that bin. The layout is
 * the same for every histogram; only the range differs (samples >= range_ns count in overflow).
 * Memory: 8 bytes per bin, e.g. 2329 bins (18 KB) for 20 ms, 3478 bins (27 KB) for 10 s.
 *
 * Percentile definition (shared with scripts/trace-analyze.py, keep them identical):
 * with N samples and p given in parts per million, k = ceil(p_ppm * N / 1e6) (at least 1);
 * the percentile is the value (midpoint) of the smallest bin i whose cumulative count reaches k,
 * clamped into [min, max]. k = 1 gives the exact min and k = N the exact max. Values below 0 count
 * in bin 0. When k is only reached in the overflow the percentile is the exact maximum. min, max
 * and mean are exact. */
#ifndef HS_RT_HIST_H
#define HS_RT_HIST_H

#include <stdint.h>

#define HS_HIST_SUB_BITS 7
#define HS_HIST_SUB (1 << HS_HIST_SUB_BITS) /* bins per power of two */
#define HS_HIST_REL_ERR (1.0 / (2 * HS_HIST_SUB))
#define HS_HIST_RANGE_MAX_NS (1LL << 36)       /* 68.7 s */
#define HS_HIST_DEFAULT_RANGE_NS 10000000000LL /* 10 s */

struct hs_hist {
    uint64_t *bins;    /* owned; nbins entries */
    uint32_t nbins;    /* hs_hist_bin_of(range_ns - 1) + 1 */
    int64_t range_ns;  /* samples >= range_ns count in overflow */
    uint64_t overflow; /* samples >= range_ns */
    uint64_t count;
    int64_t min_ns; /* valid when count > 0 */
    int64_t max_ns;
    int64_t sum_ns; /* for the exact mean; 2^63 ns is 292 years of samples */
};

/* init only: allocates. range_ns in 1..HS_HIST_RANGE_MAX_NS, 0 = HS_HIST_DEFAULT_RANGE_NS.
 * Returns 0 or -EINVAL / -ENOMEM; h is zeroed on failure (so hs_hist_destroy is safe). The bins
 * are touched here so that recording never page-faults. */
int hs_hist_init(struct hs_hist *h, int64_t range_ns);
/* init only. Accepts NULL and zeroed histograms. */
void hs_hist_destroy(struct hs_hist *h);
/* RT-safe but O(nbins). Forgets every sample. */
void hs_hist_reset(struct hs_hist *h);
/* RT-safe: O(1) (one bit scan), no allocation. */
void hs_hist_record(struct hs_hist *h, int64_t value_ns);
/* Non-RT, O(nbins): adds src's samples into dst. Both must have the same range (else -EINVAL).
 */
int hs_hist_merge(struct hs_hist *dst, const struct hs_hist *src);
/* RT-safe but O(nbins): call from a non-RT thread. Returns 0 and the value in *ret_ns, or
 * -ENODATA when the histogram is empty, -EINVAL when p_ppm is not in 1..1000000. */
int hs_hist_percentile(const struct hs_hist *h, uint32_t p_ppm, int64_t *ret_ns);
/* Exact mean in ns (0 when empty). */
double hs_hist_mean_ns(const struct hs_hist *h);

/* The layout, for tests and pictures. RT-safe, O(1). bin_of clamps negative values to bin 0;
 * value_ns >= 0 lies in [bin_lo(i), bin_lo(i) + bin_width(i)) for i = bin_of(value_ns). */
uint32_t hs_hist_bin_of(int64_t value_ns);
int64_t hs_hist_bin_lo(uint32_t i);
int64_t hs_hist_bin_width(uint32_t i);
/* The value a bin reports: the midpoint of the integers it holds, lo + (width - 1) / 2. */
int64_t hs_hist_bin_value(uint32_t i);

#endif
