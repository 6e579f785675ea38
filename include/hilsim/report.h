/* Report pictures and files for timing validation runs. Not RT: runs after the loop stops. */
#ifndef HILSIM_REPORT_H
#define HILSIM_REPORT_H

#include <stdint.h>
#include <stdio.h>

struct hs_svg_series {
    const char *label;
    const uint64_t *counts; /* bins of bin_us microseconds starting at 0 */
    uint32_t nbins;
    uint64_t overflow; /* samples beyond the last bin, drawn as one bar at the right */
    const char *color; /* SVG colour, e.g. "#1f77b4" */
};

/* Writes a latency histogram with log-scale counts, one outlined series per entry, sharing one
 * x axis in microseconds. Returns 0 or -errno (write failure). init only (stdio). */
int hs_report_write_svg_histogram(FILE *out, const char *title, double bin_us,
                                  const struct hs_svg_series *series, uint32_t nseries);

#endif
