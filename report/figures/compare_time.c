/* Compare, figure 1: each variant's CUDA time per forward in every archive,
 * grouped by variant (median bars, min–max whiskers), linear or logarithmic;
 * TFLOP/s instead when the archives' shapes differ. */
#include "fig.h"

#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PLOT_X0 (FIG_MARGIN + 62)
#define PLOT_Y0 70.0
#define PLOT_H 300.0
#define HEIGHT 480.0

/* Paul Tol's "bright" scheme: one colour per archive, colour-blind safe. */
unsigned fig_archive_colour(int i)
{
    static const unsigned c[] = {TOL_BLUE, TOL_RED,    TOL_GREEN, TOL_YELLOW,
                                 TOL_CYAN, TOL_PURPLE, TOL_GREY,  FIG_NEAR_BLACK};
    return c[i % (int)(sizeof c / sizeof c[0])];
}

static void tflops_label(double v, char *out, size_t n) { snprintf(out, n, "%.0f", v); }

/* TFLOP/s axis: round numbers, linear. */
static void draw_value_axis(cairo_t *cr, const fig_yscale *s, double x0, double x1)
{
    fig_ticks t;
    fig_nice_ticks(s->lo, s->hi, 7, &t);
    char labels[sizeof t.v / sizeof t.v[0]][32];
    for (int i = 0; i < t.n; i++)
        snprintf(labels[i], sizeof labels[i], "%g", t.v[i]);
    fig_draw_y_axis(cr, s, x0, x1, t.v, labels, t.n);
}

static int compare_time_draw(cairo_t *cr, const fig_job *job)
{
    const compare_data *m = job->cmp;
    double x = FIG_MARGIN, right = job->w - FIG_MARGIN;
    char buf[512], fit[512];
    fig_heading(cr, x, m->throughput ? "Throughput per forward (TFLOP/s), run by run" : "CUDA time per forward, run by run");
    snprintf(buf, sizeof buf, "bars: median, whiskers: min\xe2\x80\x93max over the recorded forwards \xc2\xb7 baseline: %s%s",
             m->in[0]->label, job->log_axis ? " \xc2\xb7 logarithmic axis" : "");
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 45, fit, ALIGN_LEFT);

    double lo = INFINITY, hi = 0;
    for (int v = 0; v < m->n_variants; v++)
        for (int i = 0; i < m->n; i++) {
            const stats *st = &m->variants[v].cell[i].metric_stats;
            if (!m->variants[v].cell[i].va || st->n == 0 || !isfinite(st->max))
                continue;
            if (st->max > hi) hi = st->max;
            if (st->min > 0 && st->min < lo) lo = st->min;
        }
    fig_yscale s;
    fig_yscale_fit(&s, lo, hi, job->log_axis && !m->throughput);
    s.y0 = PLOT_Y0 + PLOT_H;
    s.y1 = PLOT_Y0;
    if (m->throughput)
        draw_value_axis(cr, &s, PLOT_X0, right);
    else
        fig_draw_time_axis(cr, &s, PLOT_X0, right);

    int groups = m->n_variants > 0 ? m->n_variants : 1;
    double group = (right - PLOT_X0) / groups;
    double bar = group * 0.8 / m->n > 30 ? 30 : group * 0.8 / m->n;
    for (int v = 0; v < m->n_variants; v++) {
        double cx = PLOT_X0 + group * (v + 0.5);
        for (int i = 0; i < m->n; i++) {
            double bx = cx + (i - (m->n - 1) / 2.0) * bar;
            const compare_cell *c = &m->variants[v].cell[i];
            stats none = {0};
            fig_draw_bar(cr, &s, bx, bar * 0.86, c->va ? &c->metric_stats : &none, fig_archive_colour(i), bar * 1.9,
                         m->throughput ? tflops_label : fig_format_us);
        }
        fig_set(cr, FIG_INK);
        fig_font(cr, 9.5, 1);
        fig_fit_text(cr, m->variants[v].name, group - 4, 3, fit, sizeof fit);
        fig_text(cr, cx, s.y0 + 15, fit, ALIGN_CENTER);
    }
    fig_legend_item items[COMPARE_MAX_ARCHIVES + 1];
    char labels[COMPARE_MAX_ARCHIVES][96];
    for (int i = 0; i < m->n; i++) {
        snprintf(labels[i], sizeof labels[i], "%s%s", m->in[i]->label, i == 0 ? " (baseline)" : "");
        items[i] = (fig_legend_item){fig_hex(fig_archive_colour(i)), labels[i], 0};
    }
    items[m->n] = (fig_legend_item){FIG_INK, "min\xe2\x80\x93max", 2};
    fig_legend(cr, x, s.y0 + 34, right - x, items, m->n + 1, 1);
    return 0;
}

int fig_compare_time_prepare(fig_job *job, cairo_t *measure, const compare_data *m, int log_axis)
{
    (void)measure;
    snprintf(job->name, sizeof job->name, "compare-time");
    snprintf(job->caption, sizeof job->caption,
             "%s per forward of every variant in each run: median with min\xe2\x80\x93max whiskers%s.",
             m->throughput ? "Throughput (TFLOP/s)" : "CUDA time", log_axis && !m->throughput ? ", logarithmic axis" : "");
    job->cmp = m;
    job->draw = compare_time_draw;
    job->log_axis = log_axis;
    job->w = FIG_WIDTH;
    job->h = HEIGHT;
    return 0;
}
