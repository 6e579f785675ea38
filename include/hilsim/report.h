/* Report pictures and files for timing validation runs. Not RT: runs after the loop stops. */
#ifndef HILSIM_REPORT_H
#define HILSIM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hilsim/rt/rt_hist.h"

struct hs_svg_series {
    const char *label;
    const struct hs_hist *hist; /* log-linear histogram (hilsim/rt/rt_hist.h); borrowed */
    const char *color;          /* SVG colour, e.g. "#1f77b4" */
    bool markers;               /* draw p50, p99, p99.9 and max as vertical lines */
};

/* Writes a latency histogram: log x axis (time, one column per 1/HS_SVG_COLS_PER_DECADE of a
 * decade, the histogram's bins summed into it), log y axis (count + 1), one outlined series per
 * entry, overflow as a bar at the right, and a legend with each series' percentiles. The size
 * does not grow with the number of samples, only with the decades spanned (24 KB for three
 * series of 3e6 samples each over 10 ns..20 s, about 8 KB for a bench report). Labels and title
 * are XML-escaped. Returns 0 or -errno (write failure). init only (stdio). */
#define HS_SVG_COLS_PER_DECADE 40
int hs_report_write_svg_histogram(FILE *out, const char *title, const struct hs_svg_series *series,
                                  uint32_t nseries);
/* A limit drawn across the picture as a solid vertical line with its label (a budget). */
struct hs_svg_limit {
    const char *label; /* e.g. "wake p99 budget 50 µs" */
    double ns;
    const char *color;
};
/* The same with limits. Every marker and limit label is written horizontally above the plot,
 * each in the first row where it overlaps no other (rows added as needed), with a thin leader
 * down to its line, so no two labels overlap however close their values are. */
int hs_report_write_svg_histogram_limits(FILE *out, const char *title,
                                         const struct hs_svg_series *series, uint32_t nseries,
                                         const struct hs_svg_limit *limits, uint32_t nlimits);

#endif
