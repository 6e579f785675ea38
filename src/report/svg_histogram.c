/* latency.svg: the report's histogram picture, drawn from the log-linear histograms. Columns are
 * equal steps of log10(time), so the picture's size depends on the decades spanned, never on the
 * number of samples or the histogram's range. Not RT (stdio). */
#include "hilsim/report.h"
#include "hilsim/xml_escape.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_DECADES 12 /* 1 ns .. 1000 s: more than HS_HIST_RANGE_MAX_NS */
#define MAX_COLS (MAX_DECADES * HS_SVG_COLS_PER_DECADE)

static const uint32_t mark_ppm[] = {500000, 990000, 999000};
static const char *const mark_name[] = {"p50", "p99", "p99.9"};
#define NMARK (sizeof mark_ppm / sizeof mark_ppm[0])

struct frame {
    double W, H, L, R, T, B, pw, ph;
    int d0, d1;    /* x axis spans 10^d0 .. 10^d1 ns */
    double ymax;   /* decades of count + 1 */
    double over_w; /* width of the overflow slot, 0 when no series overflows */
};

/* Counts span many decades (millions of fast ticks, a handful of slow ones), so the y axis is
 * log10(count + 1): a single outlier stays visible next to the bulk. */
static double ylog(double c)
{
    return log10(c + 1.0);
}

/* "42 ns", "12.35 µs", "1.250 ms", "2.000 s": sub-microsecond values stay in ns. */
static void fmt_time(char *buf, size_t size, double ns)
{
    if (ns < 1e3)
        snprintf(buf, size, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, size, "%.2f µs", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, size, "%.3f ms", ns / 1e6);
    else
        snprintf(buf, size, "%.3f s", ns / 1e9);
}

/* Axis labels at powers of ten: "1 ns", "100 ns", "10 µs", "1 s". */
static void fmt_decade(char *buf, size_t size, int d)
{
    static const char *const unit[] = {"ns", "µs", "ms", "s"};
    int u = d < 0 ? 0 : d / 3 > 3 ? 3 : d / 3;
    snprintf(buf, size, "%g %s", pow(10, d - 3 * u), unit[u]);
}

static double xpos(const struct frame *f, double ns)
{
    double d = ns < 1 ? 0 : log10(ns);
    if (d < f->d0)
        d = f->d0;
    if (d > f->d1)
        d = f->d1;
    return f->L + f->pw * (d - f->d0) / (f->d1 - f->d0);
}

static double ypos(const struct frame *f, double ylogv)
{
    return f->T + f->ph - f->ph * ylogv / f->ymax;
}

/* Sums a histogram's bins into the picture's columns. A bin wider than a column (the exact 1 ns
 * bins below 128 ns are, at tens of ns) is spread over the columns it covers in proportion to
 * the log-width each holds, so the outline shows no comb of empty columns. */
static void columns(const struct frame *f, const struct hs_hist *h, double *col, int ncols)
{
    for (int c = 0; c < ncols; c++)
        col[c] = 0;
    for (uint32_t i = 0; i < h->nbins; i++) {
        if (!h->bins[i])
            continue;
        double lo = (double)hs_hist_bin_lo(i), hi = lo + (double)hs_hist_bin_width(i);
        double a = lo < 1 ? 0 : (log10(lo) - f->d0) * HS_SVG_COLS_PER_DECADE;
        double b = (log10(hi) - f->d0) * HS_SVG_COLS_PER_DECADE;
        a = fmax(0, fmin(a, ncols - 1e-9));
        b = fmax(a, fmin(b, ncols - 1e-9));
        int ca = (int)a, cb = (int)b;
        if (ca == cb || lo < 1) {
            col[ca] += (double)h->bins[i];
            continue;
        }
        for (int c = ca; c <= cb; c++) {
            double part = (fmin(b, c + 1.0) - fmax(a, (double)c)) / (b - a);
            col[c] += part * (double)h->bins[i];
        }
    }
}

static void set_frame(struct frame *f, const struct hs_svg_series *series, uint32_t nseries)
{
    int64_t lo = INT64_MAX, hi = 1;
    bool over = false;
    for (uint32_t s = 0; s < nseries; s++) {
        const struct hs_hist *h = series[s].hist;
        if (!h->count)
            continue;
        int64_t a = h->min_ns < 1 ? 1 : h->min_ns;
        int64_t b = h->max_ns >= h->range_ns ? h->range_ns : h->max_ns;
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
        over = over || h->overflow;
    }
    if (lo == INT64_MAX)
        lo = 1;
    f->d0 = (int)floor(log10((double)lo));
    f->d1 = (int)ceil(log10((double)hi + 1));
    if (f->d1 <= f->d0)
        f->d1 = f->d0 + 1;
    if (f->d1 - f->d0 > MAX_DECADES)
        f->d0 = f->d1 - MAX_DECADES;
    f->W = 900;
    f->L = 70;
    f->R = 36;
    f->T = 40;
    f->B = 60 + 18.0 * nseries;
    f->H = 380 + 18.0 * nseries;
    f->over_w = over ? 64 : 0;
    f->pw = f->W - f->L - f->R - f->over_w;
    f->ph = f->H - f->T - f->B;
}

static void axes(FILE *out, const struct frame *f, const char *title)
{
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n",
            f->W, f->H);
    fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(out, "<text x=\"%.0f\" y=\"24\" font-size=\"15\">", f->L);
    hs_xml_escape(out, title);
    fprintf(out, "</text>\n");
    for (int d = 0; d <= (int)f->ymax; d++) {
        double y = ypos(f, d);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n",
                f->L, y, f->L + f->pw, y, f->L - 6, y + 4, d);
    }
    for (int d = f->d0; d <= f->d1; d++) {
        double x = xpos(f, pow(10, d));
        char lbl[32];
        fmt_decade(lbl, sizeof lbl, d);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ccc\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, f->T, x, f->T + f->ph, x, f->T + f->ph + 16, lbl);
        for (int m = 2; m <= 9 && d < f->d1; m++) {
            double xm = xpos(f, m * pow(10, d));
            fprintf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#f0f0f0\"/>\n",
                    xm, f->T, xm, f->T + f->ph);
        }
    }
    if (f->over_w > 0)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">over</text>\n",
                f->L + f->pw + 44, f->T + f->ph + 16);
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (log)</text>"
            "<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" "
            "text-anchor=\"middle\">count + 1 (log)</text>\n",
            f->L + f->pw / 2, f->T + f->ph + 34, f->T + f->ph / 2, f->T + f->ph / 2);
}

/* One series: a step outline over the columns, the overflow bar, the markers. */
static void draw_series(FILE *out, const struct frame *f, const struct hs_svg_series *sr,
                        const double *col, int ncols, uint32_t idx)
{
    const double base = f->T + f->ph, cw = f->pw / ncols;
    fprintf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"M%.1f %.1f", sr->color,
            f->L, base);
    double prev_y = base;
    for (int c = 0; c < ncols; c++) {
        double y = ypos(f, ylog(col[c]));
        if (y != prev_y)
            fprintf(out, "H%.1fV%.1f", f->L + c * cw, y);
        prev_y = y;
    }
    fprintf(out, "H%.1fV%.1f\"/>\n", f->L + f->pw, base);
    const struct hs_hist *h = sr->hist;
    if (h->overflow) {
        double y = ypos(f, ylog((double)h->overflow));
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                "fill-opacity=\"0.5\"/>\n",
                f->L + f->pw + 28 + 8.0 * idx, y, 8.0, base - y, sr->color);
    }
}

/* A label above the plot: its line's x, its text and colour, and the row it was given. */
struct label {
    double x, w;
    char text[96];
    const char *color;
    bool solid; /* a limit: a solid line; a marker: dashed */
    int row;
};

#define MAX_LABELS 64
#define LABEL_ROW_H 13.0
#define LABEL_CHAR_W 6.0 /* font-size 10 sans-serif: a generous width per character */

/* Rows by first fit, labels taken left to right: a label goes in the first row whose last label
 * ends before it starts, so none overlaps another. Returns the number of rows. */
static int place_labels(struct label *l, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) /* few labels: insertion sort by x */
        for (uint32_t j = i; j > 0 && l[j - 1].x > l[j].x; j--) {
            struct label t = l[j];
            l[j] = l[j - 1], l[j - 1] = t;
        }
    double end[MAX_LABELS];
    int rows = 0;
    for (uint32_t i = 0; i < n; i++) {
        int r = 0;
        while (r < rows && end[r] + 4 > l[i].x)
            r++;
        if (r == rows)
            rows++;
        end[r] = l[i].x + l[i].w;
        l[i].row = r;
    }
    return rows;
}

static void marker_labels(const struct frame *f, const struct hs_svg_series *sr, uint32_t idx,
                          struct label *l, uint32_t *n)
{
    const struct hs_hist *h = sr->hist;
    if (!sr->markers || !h->count)
        return;
    for (size_t k = 0; k <= NMARK && *n < MAX_LABELS; k++) {
        int64_t v = h->max_ns;
        if (k < NMARK)
            hs_hist_percentile(h, mark_ppm[k], &v);
        struct label *o = &l[(*n)++];
        *o = (struct label){.color = sr->color};
        o->x = v >= h->range_ns ? f->L + f->pw + 32 + 8.0 * idx : xpos(f, (double)v);
        char t[32];
        fmt_time(t, sizeof t, (double)v);
        snprintf(o->text, sizeof o->text, "%s %s", k < NMARK ? mark_name[k] : "max", t);
        o->w = LABEL_CHAR_W * (double)strlen(o->text);
    }
}

static void draw_labels(FILE *out, const struct frame *f, const struct label *l, uint32_t n,
                        int rows)
{
    const double base = f->T + f->ph;
    for (uint32_t i = 0; i < n; i++) {
        double ty = f->T - 6 - (rows - 1 - l[i].row) * LABEL_ROW_H;
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"%s/>"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-opacity=\"0.4\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" "
                "font-size=\"10\">",
                l[i].x, f->T, l[i].x, base, l[i].color,
                l[i].solid ? " stroke-width=\"1.5\"" : " stroke-dasharray=\"4 3\"", l[i].x, ty + 2,
                l[i].x, f->T, l[i].color, l[i].x + 1, ty, l[i].color);
        hs_xml_escape(out, l[i].text);
        fprintf(out, "</text>\n");
    }
}

static void legend(FILE *out, const struct frame *f, const struct hs_svg_series *sr, uint32_t idx)
{
    const struct hs_hist *h = sr->hist;
    double y = f->T + f->ph + 52 + 18.0 * idx;
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", f->L,
            y - 10, sr->color);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", f->L + 18, y);
    hs_xml_escape(out, sr->label);
    fprintf(out, ": %llu samples", (unsigned long long)h->count);
    if (h->count) {
        char a[32];
        for (size_t k = 0; k < NMARK; k++) {
            int64_t v = 0;
            hs_hist_percentile(h, mark_ppm[k], &v);
            fmt_time(a, sizeof a, (double)v);
            fprintf(out, ", %s %s", mark_name[k], a);
        }
        fmt_time(a, sizeof a, (double)h->max_ns);
        fprintf(out, ", max %s", a);
        if (h->overflow) {
            fmt_time(a, sizeof a, (double)h->range_ns);
            fprintf(out, ", %llu over %s", (unsigned long long)h->overflow, a);
        }
    }
    fprintf(out, "</text>\n");
}

int hs_report_write_svg_histogram(FILE *out, const char *title, const struct hs_svg_series *series,
                                  uint32_t nseries)
{
    return hs_report_write_svg_histogram_limits(out, title, series, nseries, NULL, 0);
}

int hs_report_write_svg_histogram_limits(FILE *out, const char *title,
                                         const struct hs_svg_series *series, uint32_t nseries,
                                         const struct hs_svg_limit *limits, uint32_t nlimits)
{
    struct frame f;
    set_frame(&f, series, nseries);
    struct label labels[MAX_LABELS];
    uint32_t nl = 0;
    for (uint32_t s = 0; s < nseries; s++)
        marker_labels(&f, &series[s], s, labels, &nl);
    for (uint32_t k = 0; k < nlimits && nl < MAX_LABELS; k++) {
        if (!(limits[k].ns > 0))
            continue;
        struct label *o = &labels[nl++];
        *o = (struct label){.color = limits[k].color, .solid = true};
        double lo = pow(10, f.d0), hi = pow(10, f.d1);
        o->x = xpos(&f, fmin(fmax(limits[k].ns, lo), hi));
        snprintf(o->text, sizeof o->text, "%s", limits[k].label);
        o->w = LABEL_CHAR_W * (double)strlen(o->text);
    }
    int rows = place_labels(labels, nl);
    /* the label rows sit between the title and the plot */
    f.T += rows * LABEL_ROW_H;
    f.H += rows * LABEL_ROW_H;
    const int ncols = (f.d1 - f.d0) * HS_SVG_COLS_PER_DECADE;
    double col[MAX_COLS];
    f.ymax = 1;
    for (uint32_t s = 0; s < nseries; s++) {
        columns(&f, series[s].hist, col, ncols);
        for (int c = 0; c < ncols; c++)
            f.ymax = fmax(f.ymax, ylog(col[c]));
        f.ymax = fmax(f.ymax, ylog((double)series[s].hist->overflow));
    }
    f.ymax = ceil(f.ymax);
    axes(out, &f, title);
    for (uint32_t s = 0; s < nseries; s++) {
        columns(&f, series[s].hist, col, ncols);
        draw_series(out, &f, &series[s], col, ncols, s);
        legend(out, &f, &series[s], s);
    }
    draw_labels(out, &f, labels, nl, rows);
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#666\">percentiles are bin "
            "midpoints, within %.2f %% (log-linear histogram); min, max exact</text>\n",
            f.L, f.H - 6, 100.0 * HS_HIST_REL_ERR);
    fprintf(out, "</svg>\n");
    return ferror(out) ? -EIO : 0;
}
