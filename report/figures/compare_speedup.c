/* Compare, figure 2: each run against the baseline, per variant, as the tables give it
 * (time ratio, below 1 is faster; throughput ratio, above 1 is faster, when the shapes
 * differ), with the 95% bootstrap interval as a whisker and a line at 1. Filled points are
 * faster or slower (the interval wholly beyond the noise floor); hollow ones are same or
 * ambiguous. The figure keeps its name, compare-speedup. */
#include "fig.h"

#include "compare.h"
#include "units.h"

#include <math.h>
#include <stdio.h>

#define PLOT_X0 (FIG_MARGIN + 62)
#define PLOT_Y0 70.0
#define PLOT_H 280.0
#define HEIGHT 450.0

int fig_compare_speedup_of(const compare_cell *c, double *v, double *lo, double *hi)
{
    const ratio_ci *r = &c->metric_ratio.ci;
    if (c->metric_ratio.verdict == VERDICT_NONE || !isfinite(r->ratio) || r->ratio <= 0 || r->lo <= 0)
        return 0;
    *v = r->ratio, *lo = r->lo, *hi = r->hi;
    return 1;
}

static int compare_speedup_draw(cairo_t *cr, const fig_job *job)
{
    const compare_data *m = job->cmp;
    double x = FIG_MARGIN, right = job->w - FIG_MARGIN;
    char buf[512], fit[512];
    fig_heading(cr, x, m->throughput ? "Throughput against the baseline" : "Time against the baseline");
    snprintf(buf, sizeof buf,
             "baseline %s = 1 \xc2\xb7 %s \xc2\xb7 whiskers: 95%% bootstrap interval \xc2\xb7 "
             "hollow: same or ambiguous (interval not wholly beyond the %.0f%% noise floor)",
             m->in[0]->label, m->throughput ? "throughput ratio, above 1 is faster" : "time ratio, below 1 is faster",
             m->min_effect * 100);
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 45, fit, ALIGN_LEFT);

    double lo = 1, hi = 1, v, l, h;
    for (int k = 0; k < m->n_variants; k++)
        for (int i = 1; i < m->n; i++)
            if (fig_compare_speedup_of(&m->variants[k].cell[i], &v, &l, &h)) {
                if (l < lo) lo = l;
                if (h > hi) hi = h;
            }
    double pad = (hi - lo) * 0.15 + 0.02;
    fig_ticks t;
    fig_nice_ticks(lo - pad, hi + pad, 7, &t);
    fig_yscale s = {.log = 0, .lo = t.n ? t.v[0] : lo - pad, .hi = t.n ? t.v[t.n - 1] : hi + pad};
    if (s.lo > lo - pad / 2) s.lo -= t.step;
    if (s.hi < hi + pad / 2) s.hi += t.step;
    s.y0 = PLOT_Y0 + PLOT_H;
    s.y1 = PLOT_Y0;
    fig_nice_ticks(s.lo, s.hi, 7, &t);
    fig_font(cr, 8.5, 0);
    for (int i = 0; i < t.n; i++) {
        double y = fig_yof(&s, t.v[i]);
        fig_set(cr, FIG_GRID);
        cairo_set_line_width(cr, 0.5);
        cairo_move_to(cr, PLOT_X0, y);
        cairo_line_to(cr, right, y);
        cairo_stroke(cr);
        snprintf(buf, sizeof buf, "%g\xc3\x97", t.v[i]);
        fig_set(cr, FIG_INK);
        fig_text(cr, PLOT_X0 - 6, y + 3, buf, ALIGN_RIGHT);
    }
    fig_set(cr, FIG_INK);
    cairo_set_line_width(cr, 1.2);
    cairo_move_to(cr, PLOT_X0, fig_yof(&s, 1));
    cairo_line_to(cr, right, fig_yof(&s, 1));
    cairo_stroke(cr);
    cairo_set_line_width(cr, 0.8);
    cairo_move_to(cr, PLOT_X0, s.y1);
    cairo_line_to(cr, PLOT_X0, s.y0);
    cairo_line_to(cr, right, s.y0);
    cairo_stroke(cr);

    int groups = m->n_variants > 0 ? m->n_variants : 1;
    double group = (right - PLOT_X0) / groups;
    double step = group * 0.7 / (m->n > 1 ? m->n - 1 : 1);
    for (int k = 0; k < m->n_variants; k++) {
        double cx = PLOT_X0 + group * (k + 0.5);
        for (int i = 1; i < m->n; i++) {
            double px = cx + (i - 1 - (m->n - 2) / 2.0) * step;
            const compare_cell *c = &m->variants[k].cell[i];
            if (!fig_compare_speedup_of(c, &v, &l, &h)) {
                fig_font(cr, 7.5, 0);
                fig_set(cr, FIG_GREY);
                fig_text(cr, px, s.y0 - 4, "n/a", ALIGN_CENTER);
                continue;
            }
            rgb col = fig_hex(fig_archive_colour(i));
            fig_set(cr, col);
            cairo_set_line_width(cr, 1.2);
            cairo_move_to(cr, px, fig_yof(&s, l));
            cairo_line_to(cr, px, fig_yof(&s, h));
            cairo_move_to(cr, px - 4, fig_yof(&s, l));
            cairo_line_to(cr, px + 4, fig_yof(&s, l));
            cairo_move_to(cr, px - 4, fig_yof(&s, h));
            cairo_line_to(cr, px + 4, fig_yof(&s, h));
            cairo_stroke(cr);
            cairo_new_path(cr);
            fig_verdict_dot(cr, px, fig_yof(&s, v), 3.6,
                            c->metric_ratio.verdict == VERDICT_FASTER || c->metric_ratio.verdict == VERDICT_SLOWER, col);
            snprintf(buf, sizeof buf, "%.*f\xc3\x97", units_ratio_decimals(l, h), v); /* as the table prints it */
            fig_font(cr, 7.5, 0);
            fig_set(cr, FIG_INK);
            fig_text(cr, px + 6, fig_yof(&s, v) + 3, buf, ALIGN_LEFT);
        }
        fig_set(cr, FIG_INK);
        fig_font(cr, 9.5, 1);
        fig_fit_text(cr, m->variants[k].name, group - 4, 3, fit, sizeof fit);
        fig_text(cr, cx, s.y0 + 15, fit, ALIGN_CENTER);
    }
    fig_legend_item items[COMPARE_MAX_ARCHIVES];
    char labels[COMPARE_MAX_ARCHIVES][96];
    for (int i = 1; i < m->n; i++) {
        snprintf(labels[i], sizeof labels[i], "%s vs %s", m->in[i]->label, m->in[0]->label);
        items[i - 1] = (fig_legend_item){fig_hex(fig_archive_colour(i)), labels[i], 0};
    }
    fig_legend(cr, x, s.y0 + 34, right - x, items, m->n - 1, 1);
    return 0;
}

int fig_compare_speedup_prepare(fig_job *job, cairo_t *measure, const compare_data *m)
{
    (void)measure;
    snprintf(job->name, sizeof job->name, "compare-speedup");
    snprintf(job->caption, sizeof job->caption,
             "Each run against the baseline %s per variant (%s), with 95%% bootstrap intervals.",
             m->in[0]->label, m->throughput ? "throughput ratio, above 1 is faster" : "time ratio, below 1 is faster");
    job->cmp = m;
    job->draw = compare_speedup_draw;
    job->w = FIG_WIDTH;
    job->h = HEIGHT;
    return 0;
}
