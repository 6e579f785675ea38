#include "hilsim/rt/rt_stats.h"
#include "rt_out.h"

#include <errno.h>
#include <string.h>

const uint32_t hs_stats_pct_ppm[HS_STATS_NPCT] = {500000, 990000, 999000, 999900};
static const char *const pct_label[HS_STATS_NPCT] = {"p50", "p99", "p99.9", "p99.99"};

static const char *const phase_names[HS_PHASE_MAX] = {
    [HS_PHASE_WAKE] = "wake",           [HS_PHASE_INPUTS] = "inputs",
    [HS_PHASE_ACTUATION] = "actuation", [HS_PHASE_PHYSICS] = "physics",
    [HS_PHASE_SENSORS] = "sensors",     [HS_PHASE_OUTPUTS] = "outputs",
    [HS_PHASE_TICK] = "tick",
};

const char *hs_phase_name(enum hs_phase p)
{
    return (unsigned)p < HS_PHASE_MAX ? phase_names[p] : "?";
}

int hs_rt_stats_init(struct hs_rt_stats *s, int64_t range_ns)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < HS_PHASE_MAX; i++) {
        int r = hs_hist_init(&s->phase[i], range_ns);
        if (r < 0) {
            hs_rt_stats_destroy(s);
            return r;
        }
    }
    return 0;
}

void hs_rt_stats_destroy(struct hs_rt_stats *s)
{
    if (!s)
        return;
    for (int i = 0; i < HS_PHASE_MAX; i++)
        hs_hist_destroy(&s->phase[i]);
    memset(s, 0, sizeof *s);
}

void hs_rt_stats_reset(struct hs_rt_stats *s)
{
    for (int i = 0; i < HS_PHASE_MAX; i++)
        hs_hist_reset(&s->phase[i]);
    s->ticks = 0;
    s->overruns = 0;
    s->missed_periods = 0;
}

static void row(struct hs__out *o, const char *name, const struct hs_hist *h)
{
    hs__out_put(o, "%-10s %10llu", name, (unsigned long long)h->count);
    if (h->count == 0) {
        hs__out_put(o, "\n");
        return;
    }
    hs__out_put(o, " %10.3f %10.3f", (double)h->min_ns / 1e3, hs_hist_mean_ns(h) / 1e3);
    for (int k = 0; k < HS_STATS_NPCT; k++) {
        int64_t v = 0;
        hs_hist_percentile(h, hs_stats_pct_ppm[k], &v);
        hs__out_put(o, " %10.3f", (double)v / 1e3);
    }
    hs__out_put(o, " %10.3f\n", (double)h->max_ns / 1e3);
}

size_t hs_rt_stats_format_row(const char *name, const struct hs_hist *h, char *buf, size_t size)
{
    struct hs__out o;
    hs__out_init(&o, buf, size);
    row(&o, name, h);
    return hs__out_finish(&o);
}

size_t hs_rt_stats_format_text(const struct hs_rt_stats *s, char *buf, size_t size)
{
    struct hs__out o;
    hs__out_init(&o, buf, size);
    hs__out_put(&o, "ticks %llu  overruns %llu  missed periods %llu  period %.3f us\n",
                (unsigned long long)s->ticks, (unsigned long long)s->overruns,
                (unsigned long long)s->missed_periods, (double)s->period_ns / 1e3);
    hs__out_put(&o, "%-10s %10s %10s %10s", "phase [us]", "count", "min", "mean");
    for (int k = 0; k < HS_STATS_NPCT; k++)
        hs__out_put(&o, " %10s", pct_label[k]);
    hs__out_put(&o, " %10s\n", "max");
    for (int i = 0; i < HS_PHASE_MAX; i++)
        row(&o, phase_names[i], &s->phase[i]);
    hs__out_put(&o, "percentiles are log-linear bin midpoints, within %.2f %% of the samples\n",
                100.0 * HS_HIST_REL_ERR);
    return hs__out_finish(&o);
}
