/* Looking at a recording: a CSV PlotJuggler opens as it is (a header, a time column in
 * seconds, one column per signal) and an SVG with one panel per chosen signal, recorded beside
 * replayed, so a divergence shows at a glance. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rec_internal.h"
#include "hilsim/xml_escape.h"

static int all_or_given(const struct hs_recording *rec, const int *signals, uint32_t n, uint32_t i)
{
    return n ? signals[i] : (int)i;
}

int hs_replay_write_csv(FILE *out, const struct hs_recording *rec, const double *replayed,
                        uint32_t nreplayed, const int *signals, uint32_t n)
{
    uint32_t cols = n ? n : rec->state_stride;
    char name[256];
    fprintf(out, "time_s"); /* the column names: docs/recording.md, "CSV columns" */
    for (uint32_t i = 0; i < cols; i++) {
        hs_recording_signal_name(rec, (uint32_t)all_or_given(rec, signals, n, i), name,
                                 sizeof name);
        fprintf(out, ",%s", name);
        if (replayed)
            fprintf(out, ",%s.replay", name);
    }
    fprintf(out, "\n");
    int64_t t0 = rec->nstates ? rec->now_ns[0] : 0;
    for (uint32_t k = 0; k < rec->nstates; k++) {
        fprintf(out, "%.9f", (double)(rec->now_ns[k] - t0) / 1e9);
        const double *v = rec->values + (size_t)k * rec->state_stride;
        const double *w =
            replayed && k < nreplayed ? replayed + (size_t)k * rec->state_stride : NULL;
        for (uint32_t i = 0; i < cols; i++) {
            int c = all_or_given(rec, signals, n, i);
            fprintf(out, ",%.17g", v[c]);
            if (replayed) {
                if (w)
                    fprintf(out, ",%.17g", w[c]);
                else
                    fprintf(out, ",");
            }
        }
        fprintf(out, "\n");
    }
    return ferror(out) ? -EIO : 0;
}

#define W 900.0
#define PH 180.0 /* panel height */
#define ML 80.0
#define MR 20.0
#define MT 30.0
#define DH 40.0 /* the difference strip under a panel, when there is a replay */
#define MB 44.0 /* the time axis: ticks, values and its title */

/* At most this many points per polyline: a long run is decimated by taking every k-th tick. */
#define MAX_POINTS 4000

static void polyline(FILE *out, const double *vals, uint32_t stride, int col, uint32_t n,
                     const double *t, double tspan, double lo, double hi, double y0,
                     const char *style)
{
    uint32_t step = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
    fprintf(out, "<polyline fill=\"none\" %s points=\"", style);
    for (uint32_t k = 0; k < n; k += step) {
        double v = vals[(size_t)k * stride + (uint32_t)col];
        if (!isfinite(v))
            continue;
        double x = ML + t[k] / tspan * (W - ML - MR);
        double y = y0 + PH - 20 - (v - lo) / (hi - lo) * (PH - 40);
        fprintf(out, "%.1f,%.1f ", x, y);
    }
    fprintf(out, "\"/>\n");
}

double *hs__rec_plot_times(const struct hs_recording *rec)
{
    double *t = malloc((rec->nstates ? rec->nstates : 1) * sizeof *t);
    if (!t)
        return NULL;
    double step = 0;
    for (uint32_t k = 0; k < rec->nstates; k++) {
        int64_t d = k ? rec->now_ns[k] - rec->now_ns[k - 1] : 0;
        if (d > 0)
            step = (double)d / 1e9;
        t[k] = k ? t[k - 1] + step : 0;
    }
    return t;
}

void hs__rec_plot_range(const struct hs_recording *rec, const double *replayed, uint32_t nreplayed,
                        int c, double *ret_lo, double *ret_hi)
{
    double lo = INFINITY, hi = -INFINITY;
    for (uint32_t k = 0; k < rec->nstates; k++) {
        double v = rec->values[(size_t)k * rec->state_stride + (uint32_t)c];
        double w =
            replayed && k < nreplayed ? replayed[(size_t)k * rec->state_stride + (uint32_t)c] : v;
        if (isfinite(v))
            lo = fmin(lo, v), hi = fmax(hi, v);
        if (isfinite(w))
            lo = fmin(lo, w), hi = fmax(hi, w);
    }
    if (!(hi > lo)) {
        double m = isfinite(lo) ? lo : 0;
        lo = m - 1, hi = m + 1;
    }
    *ret_lo = lo;
    *ret_hi = hi;
}

const char *hs__rec_signal_unit(const char *name)
{
    static const struct {
        const char *suffix, *unit;
    } units[] = {{".q", "rad (slide: m)"},
                 {".dq", "rad/s (slide: m/s)"},
                 {".tau", "N·m (slide: N)"},
                 {".current_A", "A"},
                 {".encoder_position", "rad (slide: m)"},
                 {".encoder_velocity", "rad/s (slide: m/s)"},
                 {".encoder_count", "counts"}};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t m = strlen(units[i].suffix);
        if (n > m && !strcmp(name + n - m, units[i].suffix))
            return units[i].unit;
    }
    return NULL;
}

double hs__rec_plot_diff_max(const struct hs_recording *rec, const double *replayed,
                             uint32_t nreplayed, int c)
{
    double m = 0;
    for (uint32_t k = 0; replayed && k < nreplayed && k < rec->nstates; k++) {
        double d = replayed[(size_t)k * rec->state_stride + (uint32_t)c] -
                   rec->values[(size_t)k * rec->state_stride + (uint32_t)c];
        if (isfinite(d))
            m = fmax(m, fabs(d));
    }
    return m;
}

/* The difference strip under a panel: replayed minus recorded, on its own symmetric scale. */
static void diff_polyline(FILE *out, const struct hs_recording *rec, const double *replayed,
                          uint32_t nreplayed, int c, const double *t, double tspan, double m,
                          double ytop)
{
    uint32_t n = nreplayed < rec->nstates ? nreplayed : rec->nstates;
    uint32_t step = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
    double mid = ytop + DH / 2, half = DH / 2 - 3, scale = m > 0 ? half / m : 0;
    fprintf(out, "<polyline fill=\"none\" stroke=\"#2ca02c\" stroke-width=\"1\" points=\"");
    for (uint32_t k = 0; k < n; k += step) {
        double d = replayed[(size_t)k * rec->state_stride + (uint32_t)c] -
                   rec->values[(size_t)k * rec->state_stride + (uint32_t)c];
        if (!isfinite(d))
            continue;
        fprintf(out, "%.1f,%.1f ", ML + t[k] / tspan * (W - ML - MR), mid - d * scale);
    }
    fprintf(out, "\"/>\n");
}

int hs_replay_write_svg(FILE *out, const struct hs_recording *rec, const double *replayed,
                        uint32_t nreplayed, const int *signals, uint32_t n, int64_t mark_ord)
{
    uint32_t cols = n ? n : (rec->njoints ? rec->njoints : 1);
    double ph = PH + (replayed ? DH : 0); /* a panel and its difference strip */
    double H = MT + cols * ph + MB;
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
            "fill=\"white\"/>\n<text x=\"%.0f\" y=\"18\" font-size=\"14\">",
            W, H, ML);
    hs_xml_escape(out, rec->dir ? rec->dir : "");
    fprintf(out, replayed
                     ? ": recorded (solid), replayed (dashed), their difference (green)</text>\n"
                     : ": recorded</text>\n");
    if (!rec->nstates)
        return fprintf(out, "</svg>\n") < 0 ? -EIO : 0;
    double *t = hs__rec_plot_times(rec);
    if (!t)
        return -ENOMEM;
    double tspan = t[rec->nstates - 1] > 0 ? t[rec->nstates - 1] : 1;
    for (uint32_t i = 0; i < cols; i++) {
        /* default: every joint's q */
        int c = n ? signals[i] : (int)(i * HS_REC_JOINT_FIELDS);
        double lo, hi;
        hs__rec_plot_range(rec, replayed, nreplayed, c, &lo, &hi);
        double y0 = MT + i * ph;
        char name[256];
        hs_recording_signal_name(rec, (uint32_t)c, name, sizeof name);
        fprintf(out,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                "stroke=\"#999\"/>\n<text x=\"%.0f\" y=\"%.0f\">",
                ML, y0 + 10, W - ML - MR, PH - 20, ML + 5, y0 + 24);
        hs_xml_escape(out, name);
        fprintf(out,
                "</text>\n<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.4g</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.4g</text>\n",
                ML - 5, y0 + 24, hi, ML - 5, y0 + PH - 12, lo);
        /* the y axis' label: the quantity's unit, where the name says it */
        const char *unit = hs__rec_signal_unit(name);
        double ym = y0 + PH / 2;
        fprintf(out,
                "<text x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
                "text-anchor=\"middle\" font-size=\"11\">%s</text>\n",
                ym, ym, unit ? unit : "value");
        polyline(out, rec->values, rec->state_stride, c, rec->nstates, t, tspan, lo, hi, y0,
                 "stroke=\"#1f77b4\" stroke-width=\"1.5\"");
        if (replayed)
            polyline(out, replayed, rec->state_stride, c, nreplayed, t, tspan, lo, hi, y0,
                     "stroke=\"#d62728\" stroke-width=\"1.2\" stroke-dasharray=\"6,4\"");
        if (replayed) {
            double m = hs__rec_plot_diff_max(rec, replayed, nreplayed, c), ys = y0 + PH - 6;
            fprintf(
                out,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                "stroke=\"#ccc\"/>\n<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" "
                "fill=\"#2ca02c\">replayed − recorded: %s%.3g</text>\n"
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\" font-size=\"11\">±%.3g</text>\n",
                ML, ys, W - ML - MR, DH, ML + 5, ys + 12, m > 0 ? "max |d| " : "", m, ML - 5,
                ys + 12, m);
            diff_polyline(out, rec, replayed, nreplayed, c, t, tspan, m, ys);
        }
        if (mark_ord >= 0 && (uint32_t)mark_ord < rec->nstates) {
            double x = ML + t[mark_ord] / tspan * (W - ML - MR);
            fprintf(out,
                    "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ff7f0e\"/>\n",
                    x, y0 + 10, x, y0 + ph - 6);
        }
    }
    /* the time axis: five ticks with their values, and its title */
    double ya = MT + cols * ph;
    for (int k = 0; k <= 4; k++) {
        double x = ML + k / 4.0 * (W - ML - MR);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#999\"/>"
                "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.4g</text>\n",
                x, ya - 4, x, ya + 2, x, ya + 16, k / 4.0 * tspan);
    }
    fprintf(out,
            "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">time since the first recorded "
            "tick (s)</text>\n</svg>\n",
            ML + (W - ML - MR) / 2, ya + 36);
    free(t);
    return ferror(out) ? -EIO : 0;
}
