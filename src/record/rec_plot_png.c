/* The replay plot as a PNG (cairo): the same panels as the SVG (one per chosen signal,
 * recorded solid blue, replayed dashed red, the first divergence as an orange line, the value
 * range and the signal's name as text), for a bug report, a CI artifact or a chat window that
 * shows pictures but not SVG. cairo draws antialiased lines and its own text, so no font or
 * rasteriser code lives here. */
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rec_internal.h"

#define W 900.0
#define PH 180.0 /* panel height */
#define ML 80.0
#define MR 20.0
#define MT 30.0
#define MB 44.0         /* the time axis: ticks, values and its title */
#define DH 40.0         /* the difference strip under a panel, when there is a replay */
#define MAX_POINTS 4000 /* per curve: a long run is decimated by taking every k-th tick */

struct plot {
    cairo_t *cr;
    const double *t; /* hs__rec_plot_times */
    double tspan;
};

static double x_of(const struct plot *p, uint32_t k)
{
    return ML + p->t[k] / p->tspan * (W - ML - MR);
}

static void curve(const struct plot *p, const double *vals, uint32_t stride, int col, uint32_t n,
                  double lo, double hi, double y0)
{
    uint32_t step = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
    bool pen = false;
    for (uint32_t k = 0; k < n; k += step) {
        double v = vals[(size_t)k * stride + (uint32_t)col];
        if (!isfinite(v)) { /* a gap, as the SVG's points are left out */
            pen = false;
            continue;
        }
        double y = y0 + PH - 20 - (v - lo) / (hi - lo) * (PH - 40);
        if (pen)
            cairo_line_to(p->cr, x_of(p, k), y);
        else
            cairo_move_to(p->cr, x_of(p, k), y);
        pen = true;
    }
    cairo_stroke(p->cr);
}

static void text(cairo_t *cr, double x, double y, bool right, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, right ? x - e.x_advance : x, y);
    cairo_show_text(cr, s);
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int length)
{
    return fwrite(data, 1, length, closure) == length ? CAIRO_STATUS_SUCCESS
                                                      : CAIRO_STATUS_WRITE_ERROR;
}

int hs_replay_write_png(FILE *out, const struct hs_recording *rec, const double *replayed,
                        uint32_t nreplayed, const int *signals, uint32_t n, int64_t mark_ord)
{
    uint32_t cols = n ? n : (rec->njoints ? rec->njoints : 1);
    if (cols > 64)
        return -E2BIG;                    /* 64 panels are 11,550 pixels high already */
    double ph = PH + (replayed ? DH : 0); /* a panel and its difference strip */
    int height = (int)(MT + cols * ph + MB);
    double *t = hs__rec_plot_times(rec);
    if (!t)
        return -ENOMEM;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)W, height);
    cairo_t *cr = cairo_create(s);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 14);
    cairo_set_source_rgb(cr, 0, 0, 0);
    char line[512];
    snprintf(line, sizeof line,
             replayed ? "%s: recorded (solid blue), replayed (dashed red), their difference (green)"
                      : "%s: recorded",
             rec->dir ? rec->dir : "");
    text(cr, ML, 18, false, line);
    cairo_set_font_size(cr, 12);
    struct plot p = {.cr = cr, .t = t, .tspan = 1};
    if (rec->nstates && t[rec->nstates - 1] > 0)
        p.tspan = t[rec->nstates - 1];
    for (uint32_t i = 0; rec->nstates && i < cols; i++) {
        int c = n ? signals[i] : (int)(i * HS_REC_JOINT_FIELDS); /* default: every joint's q */
        double lo, hi, y0 = MT + i * ph;
        hs__rec_plot_range(rec, replayed, nreplayed, c, &lo, &hi);
        cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
        cairo_set_line_width(cr, 1);
        cairo_rectangle(cr, ML + 0.5, y0 + 10.5, W - ML - MR, PH - 20);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        hs_recording_signal_name(rec, (uint32_t)c, line, sizeof line);
        text(cr, ML + 5, y0 + 24, false, line);
        snprintf(line, sizeof line, "%.4g", hi);
        text(cr, ML - 5, y0 + 24, true, line);
        snprintf(line, sizeof line, "%.4g", lo);
        text(cr, ML - 5, y0 + PH - 12, true, line);
        { /* the y axis' label: the quantity's unit, where the name says it */
            char name[256];
            hs_recording_signal_name(rec, (uint32_t)c, name, sizeof name);
            const char *unit = hs__rec_signal_unit(name);
            cairo_text_extents_t e;
            cairo_text_extents(cr, unit ? unit : "value", &e);
            cairo_save(cr);
            cairo_move_to(cr, 18, y0 + PH / 2 + e.x_advance / 2);
            cairo_rotate(cr, -M_PI / 2);
            cairo_show_text(cr, unit ? unit : "value");
            cairo_restore(cr);
        }
        cairo_save(cr); /* curves stay inside their panel */
        cairo_rectangle(cr, ML, y0 + 10, W - ML - MR, PH - 20);
        cairo_clip(cr);
        cairo_set_source_rgb(cr, 0x1f / 255.0, 0x77 / 255.0, 0xb4 / 255.0);
        cairo_set_line_width(cr, 1.5);
        curve(&p, rec->values, rec->state_stride, c, rec->nstates, lo, hi, y0);
        if (replayed) {
            static const double dash[] = {6, 4};
            cairo_set_source_rgb(cr, 0xd6 / 255.0, 0x27 / 255.0, 0x28 / 255.0);
            cairo_set_line_width(cr, 1.2);
            cairo_set_dash(cr, dash, 2, 0);
            curve(&p, replayed, rec->state_stride, c,
                  nreplayed < rec->nstates ? nreplayed : rec->nstates, lo, hi, y0);
            cairo_set_dash(cr, NULL, 0, 0);
        }
        cairo_restore(cr);
        if (replayed) { /* replayed minus recorded, on its own symmetric scale */
            double m = hs__rec_plot_diff_max(rec, replayed, nreplayed, c), ys = y0 + PH - 6;
            double mid = ys + DH / 2, scale = m > 0 ? (DH / 2 - 3) / m : 0;
            cairo_set_source_rgb(cr, 0.8, 0.8, 0.8);
            cairo_set_line_width(cr, 1);
            cairo_rectangle(cr, ML + 0.5, ys + 0.5, W - ML - MR, DH);
            cairo_stroke(cr);
            cairo_set_source_rgb(cr, 0x2c / 255.0, 0xa0 / 255.0, 0x2c / 255.0);
            uint32_t nd = nreplayed < rec->nstates ? nreplayed : rec->nstates;
            uint32_t step = nd > MAX_POINTS ? (nd + MAX_POINTS - 1) / MAX_POINTS : 1;
            bool pen = false;
            for (uint32_t k = 0; k < nd; k += step) {
                double d = replayed[(size_t)k * rec->state_stride + (uint32_t)c] -
                           rec->values[(size_t)k * rec->state_stride + (uint32_t)c];
                if (!isfinite(d)) {
                    pen = false;
                    continue;
                }
                if (pen)
                    cairo_line_to(cr, x_of(&p, k), mid - d * scale);
                else
                    cairo_move_to(cr, x_of(&p, k), mid - d * scale);
                pen = true;
            }
            cairo_stroke(cr);
            snprintf(line, sizeof line, "replayed - recorded: %s%.3g", m > 0 ? "max |d| " : "", m);
            text(cr, ML + 5, ys + 12, false, line);
            cairo_set_source_rgb(cr, 0, 0, 0);
            snprintf(line, sizeof line, "±%.3g", m);
            text(cr, ML - 5, ys + 12, true, line);
        }
        if (mark_ord >= 0 && (uint32_t)mark_ord < rec->nstates) {
            cairo_set_source_rgb(cr, 1, 0x7f / 255.0, 0x0e / 255.0);
            cairo_set_line_width(cr, 1);
            cairo_move_to(cr, x_of(&p, (uint32_t)mark_ord), y0 + 10);
            cairo_line_to(cr, x_of(&p, (uint32_t)mark_ord), y0 + ph - 6);
            cairo_stroke(cr);
        }
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    /* the time axis: five ticks with their values, and its title */
    double ya = MT + cols * ph, tspan = rec->nstates ? p.tspan : 0.0;
    for (int k = 0; k <= 4; k++) {
        double x = ML + k / 4.0 * (W - ML - MR);
        cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
        cairo_move_to(cr, x + 0.5, ya - 4);
        cairo_line_to(cr, x + 0.5, ya + 2);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        snprintf(line, sizeof line, "%.4g", k / 4.0 * tspan);
        cairo_text_extents_t e;
        cairo_text_extents(cr, line, &e);
        text(cr, x - e.x_advance / 2, ya + 16, false, line);
    }
    snprintf(line, sizeof line, "time since the first recorded tick (s)");
    cairo_text_extents_t e;
    cairo_text_extents(cr, line, &e);
    text(cr, ML + (W - ML - MR) / 2 - e.x_advance / 2, ya + 36, false, line);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_write_to_png_stream(s, to_file, out);
    cairo_surface_destroy(s);
    free(t);
    if (st == CAIRO_STATUS_NO_MEMORY)
        return -ENOMEM;
    return st == CAIRO_STATUS_SUCCESS && !ferror(out) ? 0 : -EIO;
}
