/* The loop's wake latency against the bare clock_nanosleep baseline of the same run. */
#include "rt_out.h"
#include "hilsim/rt/rt_stats.h"

enum { NCOL = 3 + HS_STATS_NPCT }; /* min, mean, percentiles..., max */

static void columns(const struct hs_hist *h, double v[NCOL])
{
    v[0] = (double)h->min_ns;
    v[1] = hs_hist_mean_ns(h);
    for (int k = 0; k < HS_STATS_NPCT; k++) {
        int64_t x = 0;
        hs_hist_percentile(h, hs_stats_pct_ppm[k], &x);
        v[2 + k] = (double)x;
    }
    v[NCOL - 1] = (double)h->max_ns;
}

size_t hs_rt_format_vs_baseline(const struct hs_hist *loop_wake, const struct hs_hist *base_wake,
                                char *buf, size_t size)
{
    struct hs__out o;
    hs__out_init(&o, buf, size);
    char row[256];
    hs__out_put(&o, "%-10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "wake [us]", "count", "min",
                "mean", "p50", "p99", "p99.9", "p99.99", "max");
    hs_rt_stats_format_row("hilsim", loop_wake, row, sizeof row);
    hs__out_put(&o, "%s", row);
    hs_rt_stats_format_row("baseline", base_wake, row, sizeof row);
    hs__out_put(&o, "%s", row);
    hs__out_put(&o, "%-10s %10s", "ratio", "");
    if (loop_wake->count && base_wake->count) {
        double a[NCOL], b[NCOL];
        columns(loop_wake, a);
        columns(base_wake, b);
        for (int i = 0; i < NCOL; i++) {
            if (b[i] > 0)
                hs__out_put(&o, " %10.2f", a[i] / b[i]);
            else
                hs__out_put(&o, " %10s", "-");
        }
    }
    hs__out_put(&o, "\n");
    return hs__out_finish(&o);
}
