/* Roofline: one point per kernel of the counter pass, its arithmetic intensity (measured
 * FLOPs ÷ measured DRAM bytes) against its achieved FLOP/s (FLOPs ÷ measured duration),
 * log-log, under the roofs measured in the same run (copy bandwidth, bf16 tensor GEMM,
 * FP32 FMA SGEMM), coloured by variant: the forward's kernels as discs, the backward's (run
 * --backward, kind "bwd_kernel") as diamonds. Drawn only when the archive has counters. */
#include "fig.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "counters.h"
#include "err.h"

#define PLOT_X0 (FIG_MARGIN + 70)
#define PLOT_Y0 64.0
#define PLOT_W (FIG_WIDTH - PLOT_X0 - FIG_MARGIN - 10)
#define PLOT_H 400.0
#define HEIGHT 560.0

static const unsigned PALETTE[] = {TOL_BLUE, TOL_RED,    TOL_GREEN, TOL_YELLOW,
                                   TOL_CYAN, TOL_PURPLE, TOL_GREY,  0x000000 /* black */};

typedef struct roof_scale {
    double xlo, xhi, ylo, yhi; /* FLOP/B and FLOP/s, decades */
} roof_scale;

static double px(const roof_scale *s, double ai)
{
    return PLOT_X0 + (log10(ai) - log10(s->xlo)) / (log10(s->xhi) - log10(s->xlo)) * PLOT_W;
}

static double py(const roof_scale *s, double fps)
{
    return PLOT_Y0 + PLOT_H - (log10(fps) - log10(s->ylo)) / (log10(s->yhi) - log10(s->ylo)) * PLOT_H;
}

/* A kernel range that can be placed: FLOPs, DRAM bytes and a duration all positive. */
static int point_of(const counter_range *r, double *ai, double *fps)
{
    double f = counters_flops(r), b = counters_dram_bytes(r), s = counters_seconds(r);
    if (!counters_is_kernel(r) || !(f > 0) || !(b > 0) || !(s > 0))
        return 0;
    *ai = f / b;
    *fps = f / s;
    return 1;
}

static int variant_index(const analysis *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (a->v[i].result && !strcmp(a->v[i].result->name, name))
            return i;
    return ATTN_NONE;
}

static void scale_for(const analysis *a, roof_scale *s)
{
    const counters_set *cs = &a->run->counters;
    const ceilings *c = &a->run->ceilings;
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0, ai, fps;
    for (int i = 0; i < cs->n; i++)
        if (point_of(&cs->r[i], &ai, &fps)) {
            xlo = fmin(xlo, ai), xhi = fmax(xhi, ai), ylo = fmin(ylo, fps), yhi = fmax(yhi, fps);
        }
    double roof = c->tensor_bf16_tflops > 0 ? c->tensor_bf16_tflops * 1e12 : 0;
    if (roof > 0)
        yhi = fmax(yhi, roof), xhi = fmax(xhi, ceilings_ridge(c) * 4);
    if (!isfinite(xlo))
        xlo = 0.1, xhi = fmax(xhi, 1000), ylo = 1e9, yhi = fmax(yhi, 1e15);
    s->xlo = pow(10, floor(log10(xlo)));
    s->xhi = pow(10, ceil(log10(xhi * 1.01)));
    s->ylo = pow(10, floor(log10(ylo)));
    s->yhi = pow(10, ceil(log10(yhi * 1.2)));
    if (s->xhi / s->xlo < 100)
        s->xhi = s->xlo * 100;
    if (s->yhi / s->ylo < 100)
        s->ylo = s->yhi / 100;
}

static void roof_line(cairo_t *cr, const roof_scale *s, double bw, double flops, rgb colour, int dashed,
                      const char *label)
{
    /* min(AI · bw, flops), drawn over the x range */
    double x_ridge = bw > 0 ? flops / bw : s->xlo;
    double xa = s->xlo, xb = fmin(fmax(x_ridge, s->xlo), s->xhi);
    cairo_save(cr);
    cairo_rectangle(cr, PLOT_X0, PLOT_Y0, PLOT_W, PLOT_H);
    cairo_clip(cr);
    fig_set(cr, colour);
    cairo_set_line_width(cr, 1.6);
    if (dashed) {
        double d[] = {5, 3};
        cairo_set_dash(cr, d, 2, 0);
    }
    if (bw > 0) {
        cairo_move_to(cr, px(s, xa), py(s, xa * bw));
        cairo_line_to(cr, px(s, xb), py(s, xb * bw));
    } else {
        cairo_move_to(cr, px(s, xb), py(s, flops));
    }
    cairo_line_to(cr, px(s, s->xhi), py(s, flops));
    cairo_stroke(cr);
    cairo_restore(cr);
    fig_font(cr, 8.5, 0);
    fig_set(cr, colour);
    fig_text(cr, PLOT_X0 + PLOT_W - 4, py(s, flops) - 4, label, ALIGN_RIGHT);
}

/* The title, and under it the shape and where the roofs come from. */
static int has_backward_kernels(const counters_set *cs)
{
    for (int i = 0; i < cs->n; i++)
        if (!strcmp(cs->r[i].kind, "bwd_kernel"))
            return 1;
    return 0;
}

static void roofline_heading(cairo_t *cr, const analysis *a)
{
    const ceilings *c = &a->run->ceilings;
    char buf[256], shape[96];
    fig_heading(cr, FIG_MARGIN, has_backward_kernels(&a->run->counters)
                                    ? "Roofline: every kernel of one forward and one backward, measured by the counter pass"
                                    : "Roofline: every kernel of one forward, measured by the counter pass");
    fig_shape_text(a, shape, sizeof shape);
    if (c->measured)
        snprintf(buf, sizeof buf, "%s · roofs measured in this run: %.0f TFLOP/s bf16, %.1f TFLOP/s FP32, %.2f TB/s copy",
                 shape, c->tensor_bf16_tflops, c->fp32_fma_tflops, c->copy_tbps);
    else
        snprintf(buf, sizeof buf, "%s · ceilings not measured in this run (--no-calibrate)", shape);
    fig_text(cr, FIG_MARGIN, 45, buf, ALIGN_LEFT);
}

/* One mark per kernel range that can be placed: a disc for the forward's, a diamond (of the same
 * area) for the backward's; *shown and *hidden count them. */
static void draw_points(cairo_t *cr, const analysis *a, const roof_scale *s, int *shown, int *hidden)
{
    const counters_set *cs = &a->run->counters;
    double ai, fps;
    for (int i = 0; i < cs->n; i++) {
        const counter_range *r = &cs->r[i];
        if (!counters_is_kernel(r))
            continue;
        if (!point_of(r, &ai, &fps)) {
            (*hidden)++;
            continue;
        }
        int vi = variant_index(a, r->variant);
        rgb col = fig_hex(PALETTE[(vi < 0 ? 7 : vi) % 8]);
        double x = px(s, ai), y = py(s, fps);
        cairo_new_path(cr);
        if (strcmp(r->kind, "bwd_kernel")) {
            cairo_arc(cr, x, y, 4.2, 0, 2 * M_PI);
        } else {
            cairo_move_to(cr, x, y - 5.3);
            cairo_line_to(cr, x + 5.3, y);
            cairo_line_to(cr, x, y + 5.3);
            cairo_line_to(cr, x - 5.3, y);
            cairo_close_path(cr);
        }
        fig_set_alpha(cr, col, 0.85);
        cairo_fill_preserve(cr);
        fig_set(cr, FIG_INK);
        cairo_set_line_width(cr, 0.6);
        cairo_stroke(cr);
        (*shown)++;
    }
}

static int roofline_draw(cairo_t *cr, const fig_job *job)
{
    const analysis *a = job->a;
    const counters_set *cs = &a->run->counters;
    const ceilings *c = &a->run->ceilings;
    roof_scale s;
    scale_for(a, &s);
    char buf[256];
    roofline_heading(cr, a);

    /* decade grid and labels */
    fig_font(cr, 8, 0);
    cairo_set_line_width(cr, 0.5);
    for (double x = s.xlo; x <= s.xhi * 1.001; x *= 10) {
        fig_set(cr, FIG_GRID);
        cairo_move_to(cr, px(&s, x), PLOT_Y0);
        cairo_line_to(cr, px(&s, x), PLOT_Y0 + PLOT_H);
        cairo_stroke(cr);
        fig_set(cr, FIG_INK);
        snprintf(buf, sizeof buf, "%g", x);
        fig_text(cr, px(&s, x), PLOT_Y0 + PLOT_H + 12, buf, ALIGN_CENTER);
    }
    for (double y = s.ylo; y <= s.yhi * 1.001; y *= 10) {
        fig_set(cr, FIG_GRID);
        cairo_move_to(cr, PLOT_X0, py(&s, y));
        cairo_line_to(cr, PLOT_X0 + PLOT_W, py(&s, y));
        cairo_stroke(cr);
        fig_set(cr, FIG_INK);
        if (y >= 1e12)
            snprintf(buf, sizeof buf, "%g T", y / 1e12);
        else
            snprintf(buf, sizeof buf, "%g G", y / 1e9);
        fig_text(cr, PLOT_X0 - 6, py(&s, y) + 3, buf, ALIGN_RIGHT);
    }
    fig_font(cr, 9, 0);
    fig_text(cr, PLOT_X0 + PLOT_W / 2, PLOT_Y0 + PLOT_H + 28,
             "arithmetic intensity: measured FLOPs per DRAM byte (read + written)", ALIGN_CENTER);
    cairo_save(cr);
    cairo_translate(cr, FIG_MARGIN + 10, PLOT_Y0 + PLOT_H / 2);
    cairo_rotate(cr, -M_PI / 2);
    fig_text(cr, 0, 0, "achieved FLOP/s", ALIGN_CENTER);
    cairo_restore(cr);

    if (c->measured) {
        double bw = c->copy_tbps * 1e12;
        snprintf(buf, sizeof buf, "bf16 tensor roof %.0f TFLOP/s (ridge %.0f FLOP/B)", c->tensor_bf16_tflops,
                 ceilings_ridge(c));
        roof_line(cr, &s, bw, c->tensor_bf16_tflops * 1e12, fig_hex(0x333333), 0, buf);
        snprintf(buf, sizeof buf, "FP32 FMA roof %.1f TFLOP/s", c->fp32_fma_tflops);
        roof_line(cr, &s, 0, c->fp32_fma_tflops * 1e12, fig_hex(0x777777), 1, buf);
    }

    /* points */
    int shown = 0, hidden = 0;
    draw_points(cr, a, &s, &shown, &hidden);

    /* legend: variants */
    fig_legend_item items[16];
    int n = 0;
    for (int i = 0; i < a->n && n < 16; i++)
        if (a->v[i].result)
            items[n++] = (fig_legend_item){fig_hex(PALETTE[i % 8]), a->v[i].result->name, 0};
    double ly = PLOT_Y0 + PLOT_H + 44;
    ly += fig_legend(cr, FIG_MARGIN, ly, FIG_WIDTH - 2 * FIG_MARGIN, items, n, 1);
    fig_font(cr, 8.5, 0);
    fig_set(cr, FIG_GREY);
    char count[48];
    snprintf(buf, sizeof buf,
             "%s shown%s; %d without FLOPs or DRAM traffic not placed. FLOPs: 2·FFMA + FADD + FMUL + 2 × bf16 "
             "tensor ops.",
             units_count_noun(shown, "kernel", count, sizeof count),
             has_backward_kernels(cs) ? " (discs: the forward's, diamonds: the backward's)" : "", hidden);
    fig_text(cr, FIG_MARGIN, ly + 12, buf, ALIGN_LEFT);
    return 0;
}

int fig_roofline_wanted(const analysis *a)
{
    return a->run && a->run->counters.meta.status == CTR_OK && a->run->counters.n > 0;
}

int fig_roofline_prepare(fig_job *job, cairo_t *measure, const analysis *a)
{
    (void)measure;
    snprintf(job->name, sizeof job->name, "roofline");
    const char *from = a->run ? a->run->ceilings.source : "";
    snprintf(job->caption, sizeof job->caption,
             "Roofline: each kernel's achieved FLOP/s against its arithmetic intensity (measured FLOPs per "
             "measured DRAM byte), under the ceilings measured %s%s%s.",
             from[0] ? "on the same GPU in the archive " : "in the same run", from,
             a->run && has_backward_kernels(&a->run->counters) ? "; the backward's kernels as diamonds" : "");
    job->a = a;
    job->draw = roofline_draw;
    job->w = FIG_WIDTH;
    job->h = HEIGHT;
    return 0;
}
