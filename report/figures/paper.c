/* Paper-sized figures (--figure-size column|text): drawn at their printed size,
 * 3.5 in (252 pt, one column) or 7 in (504 pt, the text width), so that a LaTeX
 * document includes them at 100% and every text is at least FIG_PAPER_MIN_PT.
 *   timeline-compact-<size>  one row per variant: the GPU operations of its median
 *                            forward on one time scale, coloured by class
 *   occupancy-table-<size>   a table-figure: each distinct kernel of the median
 *                            forwards with theoretical, estimated and Kineto's
 *                            occupancy */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fig.h"
#include "occupancy.h"

static double paper_width(int size) { return size == FIG_SIZE_TEXT ? 504.0 : 252.0; }
static double paper_font(int size) { return size == FIG_SIZE_TEXT ? 9.0 : FIG_PAPER_MIN_PT; }
static const char *size_name(int size) { return size == FIG_SIZE_TEXT ? "text" : "column"; }

#define PAD 4.0

/* ---- timeline-compact ------------------------------------------------------- */

static double row_h(int size) { return paper_font(size) + 6; }

static double label_col(cairo_t *cr, const analysis *a, int size)
{
    fig_font(cr, paper_font(size), 0);
    double w = 0;
    for (int i = 0; i < a->n; i++) {
        double t = fig_text_width(cr, a->v[i].result->name);
        if (t > w)
            w = t;
    }
    double cap = paper_width(size) * 0.3;
    return (w < cap ? w : cap) + PAD;
}

static int64_t forward_start(const forward *f)
{
    int64_t s = INT64_MAX;
    for (int k = 0; k < f->n_ops; k++)
        if (f->ops[k]->start_ns < s)
            s = f->ops[k]->start_ns;
    return s;
}

static double longest_span_us(const analysis *a)
{
    double span = 0;
    for (int i = 0; i < a->n; i++) {
        int m = analysis_median_forward(&a->v[i]);
        if (m >= 0 && a->v[i].forwards[m].gpu_span_us > span)
            span = a->v[i].forwards[m].gpu_span_us;
    }
    return span > 0 ? span : 1;
}

static int compact_legend(const analysis *a, fig_legend_item *items)
{
    int seen[OPC_COUNT] = {0}, n = 0;
    static const char *names[OPC_COUNT];
    for (int c = 0; c < OPC_COUNT; c++)
        names[c] = op_class_name((op_class)c);
    for (int i = 0; i < a->n; i++) {
        int m = analysis_median_forward(&a->v[i]);
        for (int k = 0; m >= 0 && k < a->v[i].forwards[m].n_ops; k++)
            seen[classify_op(a->v[i].forwards[m].ops[k])] = 1;
    }
    for (int c = 0; c < OPC_COUNT; c++)
        if (seen[c])
            items[n++] = (fig_legend_item){fig_class_colour((op_class)c), names[c], 0};
    return n;
}

static double compact_height(cairo_t *cr, const analysis *a, int size)
{
    fig_legend_item items[OPC_COUNT];
    int n = compact_legend(a, items);
    double f = paper_font(size);
    return PAD + a->n * row_h(size) + 4 + f + 4 + f + 6 +
           fig_legend_sized(cr, 0, 0, paper_width(size) - 2 * PAD, items, n, f, 0) + PAD;
}

static int compact_draw(cairo_t *cr, const fig_job *job)
{
    const analysis *a = job->a;
    int size = job->size;
    double f = paper_font(size), W = job->w;
    double lx = PAD, px0 = PAD + label_col(cr, a, size);
    fig_font(cr, f, 0);
    double value_w = fig_text_width(cr, "0000 \xc2\xb5s") + PAD;
    double px1 = W - PAD - value_w;
    double span = longest_span_us(a);
    fig_ticks ticks;
    fig_nice_ticks(0, span, size == FIG_SIZE_TEXT ? 6 : 3, &ticks);
    double axis_hi = ticks.n ? ticks.v[ticks.n - 1] : span;
    if (axis_hi < span)
        axis_hi = span;
    double y = PAD;
    char buf[128], fit[128];
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        double rh = row_h(size);
        fig_set(cr, FIG_INK);
        fig_font(cr, f, 0);
        fig_fit_text(cr, va->result->name, px0 - lx - PAD, 3, fit, sizeof fit);
        fig_text(cr, lx, y + rh - 4, fit, ALIGN_LEFT);
        int m = analysis_median_forward(va);
        if (m < 0) {
            fig_set(cr, FIG_GREY);
            fig_text(cr, px0, y + rh - 4, variant_status_name(va->result->status), ALIGN_LEFT);
            y += rh;
            continue;
        }
        const forward *fw = &va->forwards[m];
        int64_t t0 = forward_start(fw);
        for (int k = 0; k < fw->n_ops; k++) {
            const gpu_op *o = fw->ops[k];
            double s = (double)(o->start_ns - t0) / 1000.0, e = (double)(o->end_ns - t0) / 1000.0;
            double x0 = px0 + (px1 - px0) * s / axis_hi, x1 = px0 + (px1 - px0) * e / axis_hi;
            if (x1 - x0 < 0.6)
                x1 = x0 + 0.6;
            fig_fill_rect(cr, x0, y + 2, x1 - x0, rh - 4, fig_class_colour(classify_op(o)));
        }
        fig_set(cr, FIG_INK);
        fig_font(cr, f, 0);
        double end_x = px0 + (px1 - px0) * fw->gpu_span_us / axis_hi;
        /* the table's median CUDA time, not the drawn forward's own (the two differ when
         * the number of forwards is even) */
        fig_format_us(va->cuda_us.n ? va->cuda_us.median : NAN, buf, sizeof buf);
        fig_text(cr, end_x + 2, y + rh - 4, buf, ALIGN_LEFT);
        y += rh;
    }
    /* the time axis */
    y += 2;
    fig_axis_rule(cr, px0, px1, y);
    fig_time_fmt tf = fig_time_fmt_for(axis_hi, ticks.step);
    fig_font(cr, f, 0);
    for (int t = 0; t < ticks.n; t++) {
        double x = px0 + (px1 - px0) * ticks.v[t] / axis_hi;
        cairo_move_to(cr, x, y);
        cairo_line_to(cr, x, y + 2);
        cairo_stroke(cr);
        fig_time_label(&tf, ticks.v[t], buf, sizeof buf);
        fig_text(cr, x, y + 2 + f, buf, ALIGN_CENTER);
    }
    y += 4 + f;
    fig_set(cr, FIG_GREY);
    fig_fit_text(cr, "time from the first GPU operation of the median forward", W - 2 * PAD, 8,
                 fit, sizeof fit);
    fig_text(cr, PAD, y + f + 2, fit, ALIGN_LEFT);
    y += f + 6;
    fig_legend_item items[OPC_COUNT];
    int n = compact_legend(a, items);
    fig_legend_sized(cr, PAD, y, W - 2 * PAD, items, n, f, 1);
    return 0;
}

/* ---- occupancy-table ---------------------------------------------------------- */

typedef struct occ_row {
    const variant_analysis *va;
    const gpu_op *op;
} occ_row;

static int occ_rows(const analysis *a, occ_row *rows, int cap)
{
    int n = 0;
    for (int i = 0; i < a->n; i++) {
        int m = analysis_median_forward(&a->v[i]);
        const forward *fw = m >= 0 ? &a->v[i].forwards[m] : NULL;
        for (int k = 0; fw && k < fw->n_ops && n < cap; k++) {
            const gpu_op *o = fw->ops[k];
            if (o->kind != GPU_KERNEL)
                continue;
            int dup = 0;
            for (int j = 0; j < n && !dup; j++)
                dup = rows[j].va == &a->v[i] && !strcmp(rows[j].op->name, o->name);
            if (!dup)
                rows[n++] = (occ_row){&a->v[i], o};
        }
    }
    return n;
}

#define OCC_MAX_ROWS 64

static double table_height(const analysis *a, int size)
{
    occ_row rows[OCC_MAX_ROWS];
    int n = occ_rows(a, rows, OCC_MAX_ROWS);
    int groups = 0;
    for (int i = 0; i < n; i++)
        groups += i == 0 || rows[i].va != rows[i - 1].va;
    double f = paper_font(size);
    return PAD + (f + 5) * (1 + n + groups) + 4 + f + 4 + PAD;
}

static int table_draw(cairo_t *cr, const fig_job *job)
{
    const analysis *a = job->a;
    int size = job->size;
    double f = paper_font(size), W = job->w, lh = f + 5;
    occ_row rows[OCC_MAX_ROWS];
    int n = occ_rows(a, rows, OCC_MAX_ROWS);
    fig_font(cr, f, 1);
    const char *heads[] = {"theor.", "est.", "Kineto"};
    double num_w = fig_text_width(cr, "Kineto") + 6;
    double c3 = W - PAD, c2 = c3 - num_w, c1 = c2 - num_w, c0 = c1 - num_w; /* right edges */
    double name_w = c0 - PAD - 4;
    double y = PAD + f;
    fig_set(cr, FIG_INK);
    fig_text(cr, PAD, y, "kernel (median forward)", ALIGN_LEFT);
    double rights[] = {c1, c2, c3};
    for (int c = 0; c < 3; c++)
        fig_text(cr, rights[c], y, heads[c], ALIGN_RIGHT);
    y += 3;
    cairo_set_line_width(cr, 0.6);
    cairo_move_to(cr, PAD, y);
    cairo_line_to(cr, W - PAD, y);
    cairo_stroke(cr);
    const device_props *dev = a->trace ? &a->trace->device : &a->run->device;
    char name[256], fit[256], v[32];
    for (int i = 0; i < n; i++) {
        if (i == 0 || rows[i].va != rows[i - 1].va) {
            y += lh;
            fig_font(cr, f, 1);
            fig_set(cr, FIG_INK);
            fig_fit_text(cr, rows[i].va->result->name, W - 2 * PAD, 3, fit, sizeof fit);
            fig_text(cr, PAD, y, fit, ALIGN_LEFT);
        }
        y += lh;
        fig_font(cr, f, 0);
        fig_op_label(rows[i].op, name, sizeof name);
        fig_fit_text(cr, name, name_w - 6, 4, fit, sizeof fit);
        fig_set(cr, FIG_INK);
        fig_text(cr, PAD + 6, y, fit, ALIGN_LEFT);
        occupancy o;
        char oerr[64];
        if (occupancy_of_op(rows[i].op, dev, &o, oerr, sizeof oerr) != 0) {
            fig_set(cr, FIG_GREY);
            fig_text(cr, c3, y, "n/a", ALIGN_RIGHT);
            continue;
        }
        snprintf(v, sizeof v, "%.0f%%", 100 * o.theoretical);
        fig_text(cr, c1, y, v, ALIGN_RIGHT);
        snprintf(v, sizeof v, "%.0f%%", 100 * o.est_achieved);
        fig_text(cr, c2, y, v, ALIGN_RIGHT);
        snprintf(v, sizeof v, "%d%%%s", o.kineto_pct, o.kineto_smem_limited && o.kineto_pct == 0 ? "*" : "");
        if (o.kineto_smem_limited && o.kineto_pct == 0)
            fig_set(cr, fig_hex(0xb3261e));
        fig_text(cr, c3, y, v, ALIGN_RIGHT);
    }
    y += 4;
    fig_set(cr, FIG_INK);
    cairo_move_to(cr, PAD, y);
    cairo_line_to(cr, W - PAD, y);
    cairo_stroke(cr);
    fig_set(cr, FIG_GREY);
    fig_font(cr, f, 0);
    char note[160];
    snprintf(note, sizeof note, "* above Kineto's %d B per-block shared memory limit", dev->smem_per_block);
    fig_fit_text(cr, note, W - 2 * PAD, 8, fit, sizeof fit);
    fig_text(cr, PAD, y + f + 2, fit, ALIGN_LEFT);
    return 0;
}

int fig_paper_prepare(fig_job *jobs, cairo_t *measure, const analysis *a, int size)
{
    memset(jobs, 0, 2 * sizeof *jobs);
    const char *sz = size_name(size);
    fig_job *t = &jobs[0], *o = &jobs[1];
    snprintf(t->name, sizeof t->name, "timeline-compact-%s", sz);
    snprintf(t->caption, sizeof t->caption,
             "The forward of median CUDA time of each variant on one time scale, GPU operations coloured by "
             "class; each row ends with the variant's median CUDA time per forward, as in the summary table "
             "(%s width).", sz);
    t->w = paper_width(size);
    fig_use_paper_font(measure, 1); /* measured in the family it is drawn in */
    t->h = ceil(compact_height(measure, a, size));
    fig_use_paper_font(measure, 0);
    t->draw = compact_draw;
    t->a = a;
    t->size = size;
    snprintf(o->name, sizeof o->name, "occupancy-table-%s", sz);
    snprintf(o->caption, sizeof o->caption,
             "Theoretical, estimated and Kineto's occupancy of each kernel of the median forwards (%s width).", sz);
    o->w = paper_width(size);
    o->h = ceil(table_height(a, size));
    o->draw = table_draw;
    o->a = a;
    o->size = size;
    return 0;
}

/* ---- compare-speedup-<size>: each run against the baseline ------------------ */

#include "compare.h"
#include "units.h"

/* The range every ratio and interval spans (1 included), and the most decimals a ratio prints
 * with (the labels' room: the widest as the table prints it). */
static int cmp_range(const compare_data *m, double *lo, double *hi)
{
    double v, l, h;
    int decimals = 2;
    for (int k = 0; k < m->n_variants; k++)
        for (int i = 0; i < m->n; i++)
            if (i != m->baseline && fig_compare_speedup_of(&m->variants[k].cell[i], &v, &l, &h)) {
                if (l < *lo) *lo = l;
                if (h > *hi) *hi = h;
                if (units_ratio_decimals(l, h) > decimals)
                    decimals = units_ratio_decimals(l, h);
            }
    return decimals;
}

static int cmp_rows(const compare_data *m) { return m->n_variants * (m->n > 1 ? m->n - 1 : 1); }

/* The runs set against the baseline, by colour. */
static int cmp_legend(const compare_data *m, fig_legend_item *items)
{
    int n = 0;
    for (int i = 0; i < m->n && n < COMPARE_MAX_ARCHIVES; i++)
        if (i != m->baseline)
            items[n++] = (fig_legend_item){fig_hex(fig_archive_colour(i)), m->in[i]->label, 0};
    return n;
}

static double cmp_height(cairo_t *cr, const compare_data *m, int size)
{
    double f = paper_font(size);
    fig_legend_item items[COMPARE_MAX_ARCHIVES];
    int n = cmp_legend(m, items);
    return PAD + cmp_rows(m) * row_h(size) + 4 + f + 4 + 2 * (f + 4) + 4 +
           fig_legend_sized(cr, 0, 0, paper_width(size) - 2 * PAD, items, n, f, 0) + PAD;
}

static int cmp_draw(cairo_t *cr, const fig_job *job)
{
    const compare_data *m = job->cmp;
    int size = job->size;
    double f = paper_font(size), W = job->w, rh = row_h(size);
    fig_font(cr, f, 0);
    double lw = 0;
    for (int k = 0; k < m->n_variants; k++) {
        double t = fig_text_width(cr, m->variants[k].name);
        if (t > lw)
            lw = t;
    }
    if (lw > W * 0.3)
        lw = W * 0.3;
    double lo = 1, hi = 1, v, l, h;
    char widest[16];
    snprintf(widest, sizeof widest, "%.*f\xc3\x97", cmp_range(m, &lo, &hi), 0.0);
    double px0 = PAD + lw + PAD, px1 = W - PAD - fig_text_width(cr, widest) - PAD;
    double pad = (hi - lo) * 0.1 + 0.02;
    lo -= pad, hi += pad;
    fig_ticks t;
    fig_nice_ticks(lo, hi, size == FIG_SIZE_TEXT ? 6 : 4, &t);
    double y = PAD;
#define XOF(q) (px0 + (px1 - px0) * ((q) - lo) / (hi - lo))
    /* the line at 1: as fast as the baseline */
    double total = cmp_rows(m) * rh;
    fig_set(cr, FIG_GRID);
    cairo_set_line_width(cr, 0.6);
    cairo_move_to(cr, XOF(1), y);
    cairo_line_to(cr, XOF(1), y + total);
    cairo_stroke(cr);
    char buf[64], fit[128];
    for (int k = 0; k < m->n_variants; k++) {
        for (int i = 0; i < m->n; i++) {
            if (i == m->baseline && m->n > 1)
                continue;
            fig_set(cr, FIG_INK);
            fig_font(cr, f, 0);
            fig_fit_text(cr, m->variants[k].name, lw, 3, fit, sizeof fit);
            fig_text(cr, PAD, y + rh - 4, fit, ALIGN_LEFT);
            const compare_cell *c = &m->variants[k].cell[i];
            if (fig_compare_speedup_of(c, &v, &l, &h)) {
                rgb col = fig_hex(fig_archive_colour(i));
                double cy = y + rh / 2;
                fig_set(cr, col);
                cairo_set_line_width(cr, 1.0);
                cairo_move_to(cr, XOF(l), cy);
                cairo_line_to(cr, XOF(h), cy);
                cairo_stroke(cr);
                fig_verdict_dot(cr, XOF(v), cy, 2.6,
                                c->metric_ratio.verdict == VERDICT_FASTER || c->metric_ratio.verdict == VERDICT_SLOWER,
                                col);
                fig_set(cr, FIG_INK);
                snprintf(buf, sizeof buf, "%.*f\xc3\x97", units_ratio_decimals(l, h), v); /* as the table */
                fig_text(cr, W - PAD, y + rh - 4, buf, ALIGN_RIGHT);
            } else {
                fig_set(cr, FIG_GREY);
                fig_text(cr, px0, y + rh - 4, c->state ? c->state : "not run", ALIGN_LEFT);
            }
            y += rh;
        }
    }
    y += 2;
    fig_axis_rule(cr, px0, px1, y);
    fig_font(cr, f, 0);
    for (int i = 0; i < t.n; i++) {
        if (t.v[i] < lo || t.v[i] > hi)
            continue;
        cairo_move_to(cr, XOF(t.v[i]), y);
        cairo_line_to(cr, XOF(t.v[i]), y + 2);
        cairo_stroke(cr);
        snprintf(buf, sizeof buf, "%g", t.v[i]);
        fig_text(cr, XOF(t.v[i]), y + 2 + f, buf, ALIGN_CENTER);
    }
#undef XOF
    y += 4 + f;
    fig_set(cr, FIG_GREY);
    char line[256];
    snprintf(line, sizeof line, "%s against %s; whiskers: 95%% interval",
             m->throughput ? "throughput ratio (above 1 is faster)" : "time ratio (below 1 is faster)",
             m->in[m->baseline]->label);
    fig_fit_text(cr, line, W - 2 * PAD, 8, fit, sizeof fit);
    fig_text(cr, PAD, y + f + 2, fit, ALIGN_LEFT);
    fig_fit_text(cr, "hollow: same or ambiguous", W - 2 * PAD, 8, fit, sizeof fit);
    fig_text(cr, PAD, y + 2 * (f + 4), fit, ALIGN_LEFT);
    fig_legend_item items[COMPARE_MAX_ARCHIVES];
    int n = cmp_legend(m, items);
    fig_legend_sized(cr, PAD, y + 2 * (f + 4) + 4, W - 2 * PAD, items, n, f, 1);
    return 0;
}

int fig_paper_compare_prepare(fig_job *job, cairo_t *measure, const struct compare_data *m, int size)
{
    memset(job, 0, sizeof *job);
    snprintf(job->name, sizeof job->name, "compare-speedup-%s", size_name(size));
    snprintf(job->caption, sizeof job->caption,
             "Each run against the baseline per variant (%s), 95%% bootstrap interval (%s width).",
             m->throughput ? "throughput ratio, above 1 is faster" : "time ratio, below 1 is faster", size_name(size));
    job->w = paper_width(size);
    fig_use_paper_font(measure, 1);
    job->h = ceil(cmp_height(measure, m, size));
    fig_use_paper_font(measure, 0);
    job->draw = cmp_draw;
    job->cmp = m;
    job->size = size;
    return 0;
}
