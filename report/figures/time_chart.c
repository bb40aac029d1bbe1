/* Time chart: CUDA time (sum of GPU operation durations) next to CPU time
 * (the forward call on the host) per variant, median with min-max whiskers,
 * so a variant that moved its cost from the GPU to the CPU shows it. */
#include "fig.h"
#include "model_roles.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PLOT_X0 (FIG_MARGIN + 62)
#define PLOT_Y0 70.0
#define PLOT_H 300.0
#define HEIGHT 470.0

static const unsigned CUDA_COLOUR = TOL_BLUE, CPU_COLOUR = TOL_VIBRANT_ORANGE;

double fig_yof(const fig_yscale *s, double us)
{
    double f = s->log ? (log10(us) - log10(s->lo)) / (log10(s->hi) - log10(s->lo))
                      : (us - s->lo) / (s->hi - s->lo);
    if (f < 0) f = 0;
    if (f > 1) f = 1;
    return s->y0 + f * (s->y1 - s->y0);
}

static int has_data(const stats *s) { return s->n > 0 && isfinite(s->median); }

static void scale_for(const analysis *a, int log_axis, fig_yscale *s)
{
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < a->n; i++) {
        const stats *st[2] = {&a->v[i].cuda_us, &a->v[i].cpu_us};
        for (int k = 0; k < 2; k++) {
            if (!has_data(st[k]))
                continue;
            if (st[k]->max > hi) hi = st[k]->max;
            if (st[k]->min > 0 && st[k]->min < lo) lo = st[k]->min;
        }
    }
    fig_yscale_fit(s, lo, hi, log_axis);
}

void fig_yscale_fit(fig_yscale *s, double lo, double hi, int log_axis)
{
    if (!(hi > 0))
        hi = 1;
    s->log = log_axis;
    if (log_axis) {
        if (!isfinite(lo))
            lo = hi / 10;
        s->lo = pow(10, floor(log10(lo)));
        s->hi = pow(10, ceil(log10(hi * 1.25)));
        if (s->hi / s->lo < 10)
            s->hi = s->lo * 10;
    } else {
        fig_ticks t;
        fig_nice_ticks(0, hi * 1.12, 7, &t);
        s->lo = 0;
        s->hi = t.n ? t.v[t.n - 1] : hi;
        if (s->hi < hi * 1.12)
            s->hi += t.step;
    }
}

void fig_draw_y_axis(cairo_t *cr, const fig_yscale *s, double x0, double x1, const double *v,
                     const char (*labels)[32], int n)
{
    fig_font(cr, 8.5, 0);
    for (int i = 0; i < n; i++) {
        double y = fig_yof(s, v[i]);
        fig_set(cr, FIG_GRID);
        cairo_set_line_width(cr, 0.5);
        cairo_move_to(cr, x0, y);
        cairo_line_to(cr, x1, y);
        cairo_stroke(cr);
        fig_set(cr, FIG_INK);
        fig_text(cr, x0 - 6, y + 3, labels[i], ALIGN_RIGHT);
    }
    fig_set(cr, FIG_INK);
    cairo_set_line_width(cr, 0.8);
    cairo_move_to(cr, x0, s->y1);
    cairo_line_to(cr, x0, s->y0);
    cairo_line_to(cr, x1, s->y0);
    cairo_stroke(cr);
}

void fig_draw_time_axis(cairo_t *cr, const fig_yscale *s, double x0, double x1)
{
    double v[64];
    int n = 0;
    fig_time_fmt f;
    if (s->log) {
        int decades = (int)llround(log10(s->hi / s->lo));
        static const double minor[] = {1, 2, 5};
        for (double d = s->lo; d <= s->hi * 1.0001 && n < 60; d *= 10)
            for (int k = 0; k < (decades <= 3 ? 3 : 1) && n < 60; k++)
                if (d * minor[k] <= s->hi * 1.0001)
                    v[n++] = d * minor[k];
        f = fig_time_fmt_for(s->hi, s->lo);
    } else {
        fig_ticks t;
        fig_nice_ticks(s->lo, s->hi, 7, &t);
        for (int i = 0; i < t.n; i++)
            v[n++] = t.v[i];
        f = fig_time_fmt_for(s->hi, t.step);
    }
    char labels[64][32];
    for (int i = 0; i < n; i++) {
        if (s->log) {
            /* each tick is exact in its own unit: 1 µs, 20 µs, 5 ms */
            fig_time_fmt lf = fig_time_fmt_for(v[i], v[i]);
            fig_time_label(&lf, v[i], labels[i], sizeof labels[i]);
        } else {
            fig_time_label(&f, v[i], labels[i], sizeof labels[i]);
        }
    }
    fig_draw_y_axis(cr, s, x0, x1, v, labels, n);
}

void fig_draw_bar(cairo_t *cr, const fig_yscale *s, double cx, double w, const stats *st, unsigned colour,
                  double label_room, void (*format)(double value, char *out, size_t n))
{
    char label[32];
    if (!has_data(st) || (s->log && st->median <= 0)) {
        fig_font(cr, 8, 0);
        fig_set(cr, FIG_GREY);
        fig_text(cr, cx, s->y0 - 4, "n/a", ALIGN_CENTER);
        return;
    }
    double top = fig_yof(s, st->median);
    fig_fill_rect(cr, cx - w / 2, top, w, s->y0 - top, fig_hex(colour));
    /* whisker: min to max */
    double ylo = fig_yof(s, st->min > 0 || !s->log ? st->min : s->lo), yhi = fig_yof(s, st->max);
    fig_set(cr, FIG_INK);
    cairo_set_line_width(cr, 1);
    cairo_move_to(cr, cx, ylo);
    cairo_line_to(cr, cx, yhi);
    cairo_move_to(cr, cx - w / 4, ylo);
    cairo_line_to(cr, cx + w / 4, ylo);
    cairo_move_to(cr, cx - w / 4, yhi);
    cairo_line_to(cr, cx + w / 4, yhi);
    cairo_stroke(cr);
    format(st->median, label, sizeof label);
    fig_font(cr, 8, 0);
    if (fig_text_width(cr, label) <= label_room)
        fig_text(cr, cx, (yhi < top ? yhi : top) - 4, label, ALIGN_CENTER);
}

static int time_chart_draw(cairo_t *cr, const fig_job *job)
{
    const analysis *a = job->a;
    double x = FIG_MARGIN, right = job->w - FIG_MARGIN;
    char buf[256], fit[256];
    const char *unit = model_unit_word_of_run(a); /* a training step is a step */
    snprintf(buf, sizeof buf, "Time per %s: CUDA time vs CPU time", unit);
    fig_heading(cr, x, buf);
    char shape[96];
    fig_shape_text(a, shape, sizeof shape);
    snprintf(buf, sizeof buf,
             "%s \xc2\xb7 bars: median, whiskers: min\xe2\x80\x93max over the recorded %ss%s",
             shape, unit, job->log_axis ? " \xc2\xb7 logarithmic axis" : "");
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 45, fit, ALIGN_LEFT);

    fig_yscale s;
    scale_for(a, job->log_axis, &s);
    s.y0 = PLOT_Y0 + PLOT_H;
    s.y1 = PLOT_Y0;
    fig_draw_time_axis(cr, &s, PLOT_X0, right);

    int n = a->n > 0 ? a->n : 1;
    double group = (right - PLOT_X0) / n;
    double bar = group * 0.3 > 44 ? 44 : group * 0.3, gap = bar * 0.15;
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        double cx = PLOT_X0 + group * (i + 0.5);
        double room = bar + gap + (group - 2 * bar - gap) / 2 - 2;
        fig_draw_bar(cr, &s, cx - (bar + gap) / 2, bar, &va->cuda_us, CUDA_COLOUR, room, fig_format_us);
        fig_draw_bar(cr, &s, cx + (bar + gap) / 2, bar, &va->cpu_us, CPU_COLOUR, room, fig_format_us);

        const char *name = va->result && va->result->name[0] ? va->result->name : "variant";
        fig_set(cr, FIG_INK);
        fig_font(cr, 9.5, 1);
        fig_fit_text(cr, name, group - 4, 3, fit, sizeof fit);
        fig_text(cr, cx, s.y0 + 15, fit, ALIGN_CENTER);
        fig_font(cr, 8, 0);
        fig_set(cr, FIG_GREY);
        if (has_data(&va->cuda_us) && has_data(&va->cpu_us) && va->cuda_us.median > 0) {
            snprintf(buf, sizeof buf, "CPU/CUDA %.2f\xc3\x97", va->cpu_us.median / va->cuda_us.median);
            fig_fit_text(cr, buf, group - 4, 3, fit, sizeof fit);
            fig_text(cr, cx, s.y0 + 27, fit, ALIGN_CENTER);
        }
        units_count_noun(va->cuda_us.n > va->cpu_us.n ? va->cuda_us.n : va->cpu_us.n, model_unit_word(va), buf, sizeof buf);
        fig_fit_text(cr, buf, group - 4, 3, fit, sizeof fit);
        fig_text(cr, cx, s.y0 + 38, fit, ALIGN_CENTER);
    }
    fig_legend_item items[] = {
        {fig_hex(CUDA_COLOUR), strcmp(unit, "step") ? "CUDA time: sum of the forward's GPU operation durations"
                                                     : "CUDA time: sum of the step's GPU operation durations", 0},
        {fig_hex(CPU_COLOUR), strcmp(unit, "step") ? "CPU time: the forward call on the host, no synchronisation"
                                                   : "CPU time: the step on the host, no synchronisation", 0},
        {FIG_INK, "min\xe2\x80\x93max", 2},
    };
    fig_legend(cr, x, s.y0 + 52, right - x, items, 3, 1);
    return 0;
}

int fig_time_chart_prepare(fig_job *job, cairo_t *measure, const analysis *a, int log_axis)
{
    (void)measure;
    snprintf(job->name, sizeof job->name, "time-per-forward");
    snprintf(job->caption, sizeof job->caption,
             "CUDA time and CPU time per %s for each variant: median with min\xe2\x80\x93max "
             "whiskers%s.", model_unit_word_of_run(a), log_axis ? ", logarithmic axis" : "");
    job->a = a;
    job->draw = time_chart_draw;
    job->log_axis = log_axis;
    job->w = FIG_WIDTH;
    job->h = HEIGHT;
    return 0;
}
