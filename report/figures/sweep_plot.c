/* The plot every sweep figure uses (fig.h, fig_sweep_draw): one panel per family
 * (head dim D, and the K/V heads and queries where the sweep has them) side by side, sequence length S on a log2 axis with a tick at every
 * measured S, the metric on a log or linear axis shared by the panels, one line
 * per variant in series colours, and where a variant's curve ends for a reason (a
 * skipped or failed variant, a failed shape) an "x" in its colour on the panel's
 * top edge with the reason's first word. Memory may draw skipped points too
 * (hollow): their bytes were recorded although they did not run. */
#include "fig.h"

#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TOP 64.0
#define PLOT_H 300.0
#define LEFT 70.0
#define GAP 26.0
#define AXIS_ROOM 46.0

/* One colour per variant name in every sweep figure, whatever subset a sweep ran;
 * names the series does not know take the remaining colours in order. */
static unsigned variant_colour(const sweep_data *m, int k)
{
    static const char *known[] = {"naive", "naive_inplace", "math", "efficient", "flash", "cudnn"};
    static const unsigned c[] = {TOL_RED,  TOL_YELLOW, TOL_PURPLE,     TOL_GREEN,
                                 TOL_BLUE, TOL_CYAN,   FIG_NEAR_BLACK, TOL_GREY};
    for (int i = 0; i < 6; i++)
        if (!strcmp(m->variants[k], known[i]))
            return c[i];
    int other = 0;
    for (int j = 0; j < k; j++) {
        int is_known = 0;
        for (int i = 0; i < 6; i++)
            is_known |= !strcmp(m->variants[j], known[i]);
        other += !is_known;
    }
    return c[6 + other % 2];
}

/* Memory ticks at powers of two (128 MiB, 1 GiB, 8 GiB, …): round numbers in the
 * unit the capacity line speaks. */
static void memory_ticks(double lo, double hi, fig_ticks *t)
{
    t->n = 0;
    int k0 = (int)ceil(log2(lo)), k1 = (int)floor(log2(hi));
    int step = 1;
    while ((k1 - k0) / step + 1 > 8)
        step++;
    for (int k = k0; k <= k1 && t->n < 64; k++)
        if (k % step == 0)
            t->v[t->n++] = ldexp(1, k);
    t->step = step;
}

/* The value drawn for a point; *hollow for a recorded value of a variant that did not run. */
static int value_of(const sweep_point *p, fig_sweep_metric metric, double *v, int *hollow)
{
    *hollow = 0;
    switch (metric) {
    case FIG_SWEEP_TIME: *v = p->us; break;
    case FIG_SWEEP_TFLOPS: *v = p->tflops; break;
    case FIG_SWEEP_OPS: *v = p->ops >= 0 ? p->ops : NAN; break;
    case FIG_SWEEP_KV_GBPS: *v = p->kv_gbps; break;
    case FIG_SWEEP_MEMORY:
        *v = p->device_bytes;
        if (p->state == SWEEP_SKIPPED && isfinite(*v) && *v > 0) {
            *hollow = 1;
            return 1;
        }
        break;
    }
    return p->state == SWEEP_OK && isfinite(*v) && *v > 0;
}

static void axis_label(fig_sweep_metric metric, double v, char *out, size_t n)
{
    switch (metric) {
    case FIG_SWEEP_TIME: fig_format_us(v, out, n); return;
    case FIG_SWEEP_MEMORY:
        if (v >= 1099511627776.0)
            snprintf(out, n, "%.3g TiB", v / 1099511627776.0);
        else if (v >= 1073741824.0)
            snprintf(out, n, "%.3g GiB", v / 1073741824.0);
        else if (v >= 1048576.0)
            snprintf(out, n, "%.3g MiB", v / 1048576.0);
        else
            fig_format_bytes(v, out, n);
        return;
    case FIG_SWEEP_TFLOPS:
    case FIG_SWEEP_KV_GBPS:
    case FIG_SWEEP_OPS: snprintf(out, n, "%g", v); return;
    }
}

static void seq_label(int s, char *out, size_t n)
{
    if (s >= 1024 && s % 1024 == 0)
        snprintf(out, n, "%dk", s / 1024);
    else
        snprintf(out, n, "%d", s);
}

double fig_sweep_height(const sweep_data *m)
{
    (void)m;
    return TOP + 22 + PLOT_H + AXIS_ROOM + 40;
}

/* The S range of one panel (all shapes planned in that family, measured or not). */
static int seq_range(const sweep_data *m, const sweep_family *fam, double *lo, double *hi)
{
    *lo = INFINITY, *hi = 0;
    for (int i = 0; i < m->n_shapes; i++)
        if (sweep_in_family(&m->shapes[i].shape, fam)) {
            if (m->shapes[i].shape.seq < *lo) *lo = m->shapes[i].shape.seq;
            if (m->shapes[i].shape.seq > *hi) *hi = m->shapes[i].shape.seq;
        }
    if (!(*hi > 0))
        return 0;
    if (*hi <= *lo)
        *lo /= 2, *hi *= 2;
    return 1;
}

static double x_of(double s, double lo, double hi, double x0, double x1)
{
    double pad = 0.35;
    double f = (log2(s) - log2(lo) + pad) / (log2(hi) - log2(lo) + 2 * pad);
    return x0 + f * (x1 - x0);
}

static void marker(cairo_t *cr, double x, double y, int hollow)
{
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, 3.2, 0, 2 * M_PI);
    if (hollow) {
        cairo_set_line_width(cr, 1.2);
        cairo_stroke(cr);
    } else {
        cairo_fill(cr);
    }
}

static void cross(cairo_t *cr, double x, double y)
{
    cairo_set_line_width(cr, 1.8);
    cairo_move_to(cr, x - 4, y - 4);
    cairo_line_to(cr, x + 4, y + 4);
    cairo_move_to(cr, x + 4, y - 4);
    cairo_line_to(cr, x - 4, y + 4);
    cairo_stroke(cr);
}

static const char *stop_word(const sweep_shape *x, const sweep_point *p)
{
    if (p->state == SWEEP_SKIPPED) return "skipped";
    if (p->state == SWEEP_FAILED) return "failed";
    if (p->state == SWEEP_UNAVAILABLE) return "unavailable";
    if (x->state == SHAPE_FAILED) return "shape failed";
    return NULL;
}

/* One y scale for all panels: every drawn value and the capacity line. The count of
 * drawn values goes to n_values. */
static fig_yscale sweep_yscale(const sweep_data *m, const fig_sweep_spec *spec, int *n_values_out)
{
    double lo = INFINITY, hi = 0, v;
    int hollow, n_values = 0;
    for (int i = 0; i < m->n_shapes; i++)
        for (int k = 0; k < m->n_variants && (!spec->decode_only || attn_shape_is_decode(&m->shapes[i].shape)); k++)
            if (value_of(&m->shapes[i].p[k], spec->metric, &v, &hollow)) {
                if (v < lo) lo = v;
                if (v > hi) hi = v;
                n_values++;
            }
    if (isfinite(spec->capacity) && spec->capacity > 0) {
        if (spec->capacity > hi) hi = spec->capacity;
        if (spec->capacity < lo) lo = spec->capacity;
    }
    fig_yscale ys;
    if (spec->log_y) {
        fig_yscale_fit(&ys, lo, hi, 1);
    } else {
        fig_ticks t;
        fig_nice_ticks(0, (hi > 0 ? hi : 1) * 1.15, 6, &t);
        ys.log = 0;
        ys.lo = 0;
        ys.hi = t.n ? t.v[t.n - 1] : 1;
        if (ys.hi < hi * 1.1)
            ys.hi += t.step;
    }
    *n_values_out = n_values;
    return ys;
}

/* One horizontal grid line at value v across [x0, x1], in `colour`, with its y label
 * at the left when `label` is set. */
static void grid_row(cairo_t *cr, const fig_sweep_spec *spec, const fig_yscale *ys, double x0, double x1, double v,
                     rgb colour, int label)
{
    char buf[256];
    fig_set(cr, colour);
    cairo_move_to(cr, x0, fig_yof(ys, v));
    cairo_line_to(cr, x1, fig_yof(ys, v));
    cairo_stroke(cr);
    if (label) {
        axis_label(spec->metric, v, buf, sizeof buf);
        fig_set(cr, FIG_INK);
        fig_text(cr, x0 - 6, fig_yof(ys, v) + 3, buf, ALIGN_RIGHT);
    }
}

/* A panel's horizontal grid and, on the first panel (`labels`), the y labels: the
 * memory axis at its own ticks, a log axis at 1-9 of each decade (labelled at 1, and
 * at 2 and 5 over at most three decades), a linear one at nice ticks. */
static void panel_grid(cairo_t *cr, const fig_sweep_spec *spec, const fig_yscale *ys, double x0, double x1,
                       int labels)
{
    fig_font(cr, 8.5, 0);
    cairo_set_line_width(cr, 0.5);
    fig_ticks t;
    if (ys->log && spec->metric == FIG_SWEEP_MEMORY) {
        memory_ticks(ys->lo, ys->hi, &t);
        for (int i = 0; i < t.n; i++)
            grid_row(cr, spec, ys, x0, x1, t.v[i], FIG_GRID, labels);
    } else if (ys->log) {
        for (double dec = ys->lo; dec <= ys->hi * 1.0001; dec *= 10)
            for (int mult = 1; mult < 10; mult++) {
                double y = dec * mult;
                if (y > ys->hi * 1.0001)
                    break;
                grid_row(cr, spec, ys, x0, x1, y, mult == 1 ? FIG_GRID : fig_hex(0xF2F2F2),
                         labels && (mult == 1 || ((mult == 2 || mult == 5) && ys->hi / ys->lo <= 1000)));
            }
    } else {
        fig_nice_ticks(ys->lo, ys->hi, 6, &t);
        for (int i = 0; i < t.n; i++)
            grid_row(cr, spec, ys, x0, x1, t.v[i], FIG_GRID, labels);
    }
}

/* A panel's x ticks at every S of its D, its frame and titles, and the capacity line. */
static void panel_frame(cairo_t *cr, const sweep_data *m, const fig_sweep_spec *spec, const fig_yscale *ys_in,
                        const sweep_family *fam, double slo, double shi, double x0, double x1, double top)
{
    const fig_yscale ys = *ys_in;
    char buf[256];
    int last_tick = -1;
    for (int i = 0; i < m->n_shapes; i++) {
        int s = m->shapes[i].shape.seq;
        if (!sweep_in_family(&m->shapes[i].shape, fam) || s == last_tick)
            continue;
        last_tick = s;
        double x = x_of(s, slo, shi, x0, x1);
        fig_set(cr, FIG_GRID);
        cairo_move_to(cr, x, ys.y1);
        cairo_line_to(cr, x, ys.y0);
        cairo_stroke(cr);
        seq_label(s, buf, sizeof buf);
        fig_set(cr, FIG_INK);
        fig_text(cr, x, ys.y0 + 13, buf, ALIGN_CENTER);
    }
    fig_set(cr, FIG_INK);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, x0, ys.y1, x1 - x0, ys.y0 - ys.y1);
    cairo_stroke(cr);
    fig_font(cr, 10, 1);
    sweep_family_label(fam, buf, sizeof buf);
    fig_text(cr, (x0 + x1) / 2, top - 8, buf, ALIGN_CENTER);
    fig_font(cr, 9, 0);
    fig_text(cr, (x0 + x1) / 2, ys.y0 + 28, spec->x_axis ? spec->x_axis : "sequence length S", ALIGN_CENTER);

    if (isfinite(spec->capacity) && spec->capacity > 0) {
        double y = fig_yof(&ys, spec->capacity);
        static const double dash[] = {5, 3};
        cairo_set_dash(cr, dash, 2, 0);
        fig_set(cr, FIG_INK);
        cairo_set_line_width(cr, 1.2);
        cairo_move_to(cr, x0, y);
        cairo_line_to(cr, x1, y);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        if (spec->capacity_label) {
            fig_font(cr, 8.5, 0);
            fig_text(cr, x1 - 4, y - 4, spec->capacity_label, ALIGN_RIGHT);
        }
    }
}

/* A panel's curves, one per variant: a line between drawn points (dashed where hollow),
 * and where a curve ends, a cross on the top edge with the reason (staggered per variant). */
static void panel_series(cairo_t *cr, const sweep_data *m, const fig_sweep_spec *spec, const fig_yscale *ys_in,
                         const sweep_family *fam, double slo, double shi, double x0, double x1)
{
    const fig_yscale ys = *ys_in;
    double v;
    int hollow;
    for (int k = 0; k < m->n_variants; k++) {
        rgb c = fig_hex(variant_colour(m, k));
        double px = NAN, py = NAN;
        int stopped = 0;
        for (int i = 0; i < m->n_shapes; i++) {
            const sweep_shape *x = &m->shapes[i];
            if (!sweep_in_family(&x->shape, fam))
                continue;
            const sweep_point *p = &x->p[k];
            double sx = x_of(x->shape.seq, slo, shi, x0, x1);
            if (value_of(p, spec->metric, &v, &hollow)) {
                double sy = fig_yof(&ys, v);
                fig_set(cr, c);
                if (isfinite(px)) {
                    cairo_set_line_width(cr, 1.8);
                    if (hollow) {
                        static const double dash[] = {3, 3};
                        cairo_set_dash(cr, dash, 2, 0);
                    }
                    cairo_move_to(cr, px, py);
                    cairo_line_to(cr, sx, sy);
                    cairo_stroke(cr);
                    cairo_set_dash(cr, NULL, 0, 0);
                }
                marker(cr, sx, sy, hollow);
                px = sx, py = sy;
                if (!hollow)
                    stopped = 0;
                continue;
            }
            const char *why = stop_word(x, p);
            if (why && !stopped && spec->metric != FIG_SWEEP_MEMORY) {
                /* End of the curve: an x on the top edge, staggered per variant. */
                double cy = ys.y1 + 8 + 11 * (k % 6);
                fig_set(cr, c);
                cross(cr, sx, cy);
                fig_font(cr, 7.5, 0);
                if (sx + 8 + fig_text_width(cr, why) > x1)
                    fig_text(cr, sx - 7, cy + 3, why, ALIGN_RIGHT);
                else
                    fig_text(cr, sx + 7, cy + 3, why, ALIGN_LEFT);
                stopped = 1;
            } else if (why && !stopped && !hollow) {
                double cy = ys.y1 + 8 + 11 * (k % 6);
                fig_set(cr, c);
                cross(cr, sx, cy);
                stopped = 1;
            }
            if (p->state != SWEEP_OK)
                px = py = NAN;
        }
    }
}

int fig_sweep_draw(cairo_t *cr, const fig_job *job, const fig_sweep_spec *spec)
{
    const sweep_data *m = job->sweep;
    double right = job->w - FIG_MARGIN;
    char fit[256];
    fig_set(cr, FIG_INK);
    fig_heading(cr, FIG_MARGIN, spec->title);
    fig_fit_text(cr, spec->subtitle, right - FIG_MARGIN, 8, fit, sizeof fit);
    fig_text(cr, FIG_MARGIN, 45, fit, ALIGN_LEFT);

    /* One y scale for all panels. */
    int n_values;
    fig_yscale ys = sweep_yscale(m, spec, &n_values);
    double top = TOP + 22;
    ys.y0 = top + PLOT_H;
    ys.y1 = top;

    const sweep_family *panels[SWEEP_MAX_SHAPES];
    int np = 0;
    for (int d = 0; d < m->n_families; d++)
        if (!spec->decode_only || m->families[d].q_seq > 0)
            panels[np++] = &m->families[d];
    int nd = np ? np : 1;
    double pw = (right - (FIG_MARGIN + LEFT) - GAP * (nd - 1)) / nd;
    for (int d = 0; d < np; d++) {
        double x0 = FIG_MARGIN + LEFT + d * (pw + GAP), x1 = x0 + pw;
        panel_grid(cr, spec, &ys, x0, x1, d == 0);
        double slo, shi;
        if (!seq_range(m, panels[d], &slo, &shi))
            continue;
        panel_frame(cr, m, spec, &ys, panels[d], slo, shi, x0, x1, top);
        panel_series(cr, m, spec, &ys, panels[d], slo, shi, x0, x1);
    }
    if (!n_values) {
        fig_set(cr, FIG_GREY);
        fig_font(cr, 11, 0);
        fig_text(cr, job->w / 2, top + PLOT_H / 2,
                 spec->metric == FIG_SWEEP_MEMORY ? "not recorded: these archives predate the device-memory field"
                                                  : "no variant ran at any shape",
                 ALIGN_CENTER);
    }
    /* Axis title and legend. */
    fig_set(cr, FIG_INK);
    fig_font(cr, 9, 0);
    cairo_save(cr);
    cairo_translate(cr, FIG_MARGIN + 10, top + PLOT_H / 2);
    cairo_rotate(cr, -M_PI / 2);
    fig_text(cr, 0, 0, spec->axis, ALIGN_CENTER);
    cairo_restore(cr);
    fig_legend_item items[RUN_MAX_VARIANTS + 1];
    for (int k = 0; k < m->n_variants; k++)
        items[k] = (fig_legend_item){fig_hex(variant_colour(m, k)), m->variants[k], 2};
    fig_legend(cr, FIG_MARGIN + LEFT, top + PLOT_H + AXIS_ROOM, right - FIG_MARGIN - LEFT, items, m->n_variants, 1);
    return 0;
}

int fig_sweep_job(fig_job *job, const sweep_data *m, const char *name, const char *caption,
                  int (*draw)(cairo_t *cr, const fig_job *job))
{
    snprintf(job->name, sizeof job->name, "%s", name);
    snprintf(job->caption, sizeof job->caption, "%s", caption);
    job->sweep = m;
    job->draw = draw;
    job->w = FIG_WIDTH;
    job->h = fig_sweep_height(m);
    return 0;
}
