#include "hilsim/report.h"

#include <errno.h>
#include <math.h>

/* Counts span many decades (millions of fast ticks, a handful of slow ones), so the y axis is
 * log10(count + 1): a single outlier stays visible next to the bulk. */
static double ylog(uint64_t c)
{
    return log10((double)c + 1.0);
}

static uint32_t last_used_bin(const struct hs_svg_series *s)
{
    uint32_t last = 0;
    for (uint32_t i = 0; i < s->nbins; i++)
        if (s->counts[i])
            last = i;
    return last;
}

int hs_report_write_svg_histogram(FILE *out, const char *title, double bin_us,
                                  const struct hs_svg_series *series, uint32_t nseries)
{
    const double W = 900, H = 420, L = 70, R = 20, T = 40, B = 60;
    uint32_t xbins = 1;
    double ymax = 1;
    int any_overflow = 0;
    for (uint32_t s = 0; s < nseries; s++) {
        uint32_t lb = last_used_bin(&series[s]) + 1;
        if (lb > xbins)
            xbins = lb;
        for (uint32_t i = 0; i < series[s].nbins; i++)
            if (ylog(series[s].counts[i]) > ymax)
                ymax = ylog(series[s].counts[i]);
        if (series[s].overflow) {
            any_overflow = 1;
            if (ylog(series[s].overflow) > ymax)
                ymax = ylog(series[s].overflow);
        }
    }
    ymax = ceil(ymax);
    uint32_t slots = xbins + (any_overflow ? 2 : 0);
    double pw = W - L - R, ph = H - T - B, bw = pw / slots;

    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H);
    fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(out, "<text x=\"%.0f\" y=\"24\" font-size=\"15\">%s</text>\n", L, title);
    for (int d = 0; d <= (int)ymax; d++) {
        double y = T + ph - ph * d / ymax;
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n",
                L, y, L + pw, y, L - 6, y + 4, d);
    }
    uint32_t step = xbins > 10 ? xbins / 10 : 1;
    for (uint32_t i = 0; i <= xbins; i += step)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>\n", L + i * bw,
                T + ph + 16, i * bin_us);
    if (any_overflow)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">over</text>\n",
                L + (xbins + 1.5) * bw, T + ph + 16);
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">latency (us)</text>"
            "<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" "
            "text-anchor=\"middle\">count + 1 (log)</text>\n",
            L + pw / 2, H - 20, T + ph / 2, T + ph / 2);
    for (uint32_t s = 0; s < nseries; s++) {
        const struct hs_svg_series *sr = &series[s];
        fprintf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"M%.1f %.1f",
                sr->color, L, T + ph);
        for (uint32_t i = 0; i < xbins && i < sr->nbins; i++) {
            double y = T + ph - ph * ylog(sr->counts[i]) / ymax;
            fprintf(out, " L%.1f %.1f L%.1f %.1f", L + i * bw, y, L + (i + 1) * bw, y);
        }
        fprintf(out, " L%.1f %.1f\"/>\n", L + xbins * bw, T + ph);
        if (sr->overflow) {
            double y = T + ph - ph * ylog(sr->overflow) / ymax;
            fprintf(out,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                    "fill-opacity=\"0.5\"/>\n",
                    L + (xbins + 1) * bw, y, bw, T + ph - y, sr->color);
        }
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                L + pw - 220, T + 6 + 18.0 * s, sr->color, L + pw - 202, T + 16 + 18.0 * s,
                sr->label);
    }
    fprintf(out, "</svg>\n");
    return ferror(out) ? -EIO : 0;
}
