/* Compare, figure 3: one forward of every variant from every archive on one
 * time scale, one lane per archive, so a kernel that got longer, a Memset that
 * appeared or a GEMM that changed shows where it happened. Each lane starts at
 * its forward's first GPU operation; the forward drawn is the median one. The
 * numbers printed are named: the median CUDA time is the table's (a sum of
 * operation durations), the span is the lane's length (idle gaps included). */
#include "fig.h"

#include "compare.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LABEL_COL 170.0
#define TOP 66.0
#define LANE_H 18.0
#define LANE_GAP 3.0
#define GROUP_GAP 12.0

/* The representative forward, the one every view of the report draws
 * (analysis_median_forward); NULL when the variant has none with operations. */
static const forward *median_forward_of(const variant_analysis *va)
{
    int i = va ? analysis_median_forward(va) : -1;
    return i >= 0 && va->forwards[i].n_ops ? &va->forwards[i] : NULL;
}

static double span_us(const forward *fw)
{
    if (!fw || !fw->n_ops)
        return 0;
    int64_t s = fw->ops[0]->start_ns, e = fw->ops[0]->end_ns;
    for (int i = 1; i < fw->n_ops; i++) {
        if (fw->ops[i]->start_ns < s) s = fw->ops[i]->start_ns;
        if (fw->ops[i]->end_ns > e) e = fw->ops[i]->end_ns;
    }
    return (double)(e - s) / 1000.0;
}

void compare_timeline_label(const compare_cell *c, int short_form, char *out, size_t n)
{
    const forward *fw = median_forward_of(c->va);
    if (!fw) {
        snprintf(out, n, "%s", "");
        return;
    }
    /* The lane's numbers, named: the variant's median CUDA time as the table
     * prints it (a sum of operation durations), and the drawn forward's span
     * (first start to last end, idle gaps included), which the lane's length
     * shows. */
    char cuda[48], span[48];
    units_us_column(c->va->cuda_us.median, cuda, sizeof cuda);
    units_us_column(span_us(fw), span, sizeof span);
    if (short_form)
        snprintf(out, n, "CUDA %s (median)", cuda);
    else
        snprintf(out, n, "CUDA %s (median) \xc2\xb7 span %s incl. idle", cuda, span);
}

static double plot_height(const compare_data *m)
{
    return m->n_variants * (m->n * (LANE_H + LANE_GAP) + GROUP_GAP);
}

/* The time axis shared by every lane: ticks to the longest median forward, a grid line
 * and label at each. Returns the scale in pixels per microsecond. */
static double draw_time_axis(cairo_t *cr, const compare_data *m, double x0, double right, double bottom)
{
    char buf[512];
    double max_us = 0;
    for (int v = 0; v < m->n_variants; v++)
        for (int i = 0; i < m->n; i++) {
            double s = span_us(median_forward_of(m->variants[v].cell[i].va));
            if (s > max_us) max_us = s;
        }
    if (!(max_us > 0))
        max_us = 1;
    fig_ticks t;
    fig_nice_ticks(0, max_us, 8, &t);
    double hi = t.n ? t.v[t.n - 1] : max_us;
    if (hi < max_us) hi += t.step;
    double scale = (right - x0) / hi;
    fig_time_fmt tf = fig_time_fmt_for(hi, t.step);
    fig_font(cr, 8.5, 0);
    for (int i = 0; i < t.n; i++) {
        double gx = x0 + t.v[i] * scale;
        fig_set(cr, FIG_GRID);
        cairo_set_line_width(cr, 0.5);
        cairo_move_to(cr, gx, TOP - 4);
        cairo_line_to(cr, gx, bottom);
        cairo_stroke(cr);
        fig_time_label(&tf, t.v[i], buf, sizeof buf);
        fig_set(cr, FIG_INK);
        fig_text(cr, gx, bottom + 12, buf, ALIGN_CENTER);
    }
    return scale;
}

/* One forward's GPU operations on a lane at height y, from its first start; each
 * operation's class is marked in `present` for the legend. */
static void draw_lane_ops(cairo_t *cr, const forward *fw, double x0, double y, double scale, int present[OPC_COUNT])
{
    char fit[512];
    int64_t origin = fw->ops[0]->start_ns;
    for (int k = 1; k < fw->n_ops; k++)
        if (fw->ops[k]->start_ns < origin) origin = fw->ops[k]->start_ns;
    for (int k = 0; k < fw->n_ops; k++) {
        const gpu_op *op = fw->ops[k];
        op_class cls = classify_op(op);
        present[cls] = 1;
        double bx = x0 + (double)(op->start_ns - origin) / 1000.0 * scale;
        double bw = (double)(op->end_ns - op->start_ns) / 1000.0 * scale;
        if (bw < 1.0) bw = 1.0;
        rgb col = fig_class_colour(cls);
        fig_fill_rect(cr, bx, y, bw, LANE_H, col);
        if (cls == OPC_OTHER) {
            fig_set(cr, FIG_GREY);
            cairo_set_line_width(cr, 0.5);
            cairo_rectangle(cr, bx, y, bw, LANE_H);
            cairo_stroke(cr);
        }
        char label[160];
        fig_op_label(op, label, sizeof label);
        fig_font(cr, 7, 0);
        if (bw > 24 && fig_fit_text(cr, label, bw - 4, 4, fit, sizeof fit)) {
            fig_set(cr, fig_text_on(col));
            fig_text(cr, bx + 2, y + LANE_H - 6, fit, ALIGN_LEFT);
        }
    }
}

/* The lane's end label: the longest of compare_timeline_label's two forms that fits
 * before the right margin, or none. */
static void draw_lane_label(cairo_t *cr, const compare_cell *c, const forward *fw, double x0, double y, double scale,
                            double right)
{
    char buf[512];
    char both[160];
    compare_timeline_label(c, 0, both, sizeof both);
    compare_timeline_label(c, 1, buf, sizeof buf);
    double end_x = x0 + span_us(fw) * scale;
    fig_font(cr, 7.5, 0);
    fig_set(cr, FIG_INK);
    if (end_x + 4 + fig_text_width(cr, both) <= right)
        fig_text(cr, end_x + 4, y + LANE_H - 5, both, ALIGN_LEFT);
    else if (end_x + 4 + fig_text_width(cr, buf) <= right)
        fig_text(cr, end_x + 4, y + LANE_H - 5, buf, ALIGN_LEFT);
}

static int compare_timeline_draw(cairo_t *cr, const fig_job *job)
{
    const compare_data *m = job->cmp;
    double x = FIG_MARGIN, right = job->w - FIG_MARGIN, x0 = FIG_MARGIN + LABEL_COL;
    char buf[512], fit[512];
    fig_heading(cr, x, "One forward of each variant, run by run, on one time scale");
    snprintf(buf, sizeof buf,
             "the median forward of each run \xc2\xb7 a lane spans its first to last GPU operation, idle gaps "
             "included \xc2\xb7 baseline: %s", m->in[0]->label);
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 45, fit, ALIGN_LEFT);

    double bottom = TOP + plot_height(m);
    double scale = draw_time_axis(cr, m, x0, right, bottom);

    int present[OPC_COUNT] = {0};
    double y = TOP;
    for (int v = 0; v < m->n_variants; v++) {
        fig_set(cr, FIG_INK);
        fig_font(cr, 9.5, 1);
        fig_fit_text(cr, m->variants[v].name, LABEL_COL - 8, 3, fit, sizeof fit);
        fig_text(cr, x, y + LANE_H - 5, fit, ALIGN_LEFT);
        for (int i = 0; i < m->n; i++) {
            const compare_cell *c = &m->variants[v].cell[i];
            fig_font(cr, 8, 0);
            fig_set(cr, fig_hex(fig_archive_colour(i)));
            double lx = x + (i == 0 ? 0 : 10);
            fig_fill_rect(cr, x0 - 8, y + 3, 4, LANE_H - 6, fig_hex(fig_archive_colour(i)));
            fig_set(cr, FIG_GREY);
            if (i > 0) {
                fig_fit_text(cr, m->in[i]->label, x0 - 14 - lx, 3, fit, sizeof fit);
                fig_text(cr, lx, y + LANE_H - 5, fit, ALIGN_LEFT);
            }
            const forward *fw = median_forward_of(c->va);
            if (!fw) {
                fig_text(cr, x0 + 4, y + LANE_H - 5, c->va ? "no forward recorded" : c->state, ALIGN_LEFT);
                y += LANE_H + LANE_GAP;
                continue;
            }
            draw_lane_ops(cr, fw, x0, y, scale, present);
            draw_lane_label(cr, c, fw, x0, y, scale, right);
            y += LANE_H + LANE_GAP;
        }
        y += GROUP_GAP;
    }
    fig_legend_item items[OPC_COUNT + COMPARE_MAX_ARCHIVES];
    char labels[COMPARE_MAX_ARCHIVES][96];
    int n = 0;
    for (int c = 0; c < OPC_COUNT; c++)
        if (present[c])
            items[n++] = (fig_legend_item){fig_class_colour((op_class)c), op_class_name((op_class)c),
                                           c == OPC_OTHER ? 1 : 0};
    double ly = bottom + 26 + fig_legend(cr, x, bottom + 26, right - x, items, n, 1);
    for (int i = 0; i < m->n; i++) {
        snprintf(labels[i], sizeof labels[i], "lane of %s%s", m->in[i]->label, i == 0 ? " (baseline)" : "");
        items[i] = (fig_legend_item){fig_hex(fig_archive_colour(i)), labels[i], 0};
    }
    fig_legend(cr, x, ly + 4, right - x, items, m->n, 1);
    return 0;
}

int fig_compare_timeline_prepare(fig_job *job, cairo_t *measure, const compare_data *m)
{
    (void)measure;
    snprintf(job->name, sizeof job->name, "compare-timeline");
    snprintf(job->caption, sizeof job->caption,
             "One forward (the median one) of every variant from every run on one time scale, one lane per run; "
             "each lane is labelled with the variant's median CUDA time (as in the table) and the drawn forward's "
             "span, idle gaps included.");
    job->cmp = m;
    job->draw = compare_timeline_draw;
    job->w = FIG_WIDTH;
    job->h = TOP + plot_height(m) + 100;
    return 0;
}
