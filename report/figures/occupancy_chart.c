/* Occupancy chart: for the distinct kernels of one forward of each variant,
 * theoretical occupancy (what registers, shared memory, warps and blocks per SM
 * allow) next to the grid-limited estimate Kineto reports, and, when the archive has
 * counters (counters.json), the occupancy the hardware measured
 * (sm__warps_active.avg.pct_of_peak_sustained_active). */
#include "exit_codes.h"
#include "fig.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "escape.h"
#include "hash_index.h"
#include "occupancy.h"

#define NAME_COL 210.0
#define BAR_X0 (FIG_MARGIN + NAME_COL + 8)
#define BAR_W 290.0
#define DETAIL_X (BAR_X0 + BAR_W + 44)
#define ROW_H_PLAIN 34.0
#define ROW_H_MEASURED 46.0
#define HEADER_H 20.0
#define NOTE_H 16.0
/* Rows per variant: keeps the PNG of 16 variants under cairo's 32767 px. */
#define MAX_ROWS_SHOWN 24
#define TOP 78.0

static const unsigned THEORETICAL = TOL_BLUE, ESTIMATED = TOL_MUTED_CYAN, MEASURED = TOL_MUTED_ROSE;

/* A third bar per row only when the archive has counters. */
static int has_measured(const analysis *a) { return a->run && a->run->counters.meta.status == CTR_OK && a->run->counters.n > 0; }
static double row_h(const analysis *a) { return has_measured(a) ? ROW_H_MEASURED : ROW_H_PLAIN; }

/* Achieved occupancy of the kernel from the counter pass: the first kernel range of the
 * variant with the same name; NAN when none. */
static double measured_occupancy(const analysis *a, const char *variant, const char *kernel)
{
    const counters_set *cs = &a->run->counters;
    for (int i = 0; i < cs->n; i++)
        if (!strcmp(cs->r[i].kind, "kernel") && !strcmp(cs->r[i].variant, variant) && kernel &&
            (!strcmp(cs->r[i].name, kernel) || strstr(cs->r[i].name, kernel)))
            return cs->r[i].v[M_WARPS_ACTIVE_PCT] / 100.0;
    return NAN;
}

typedef struct occ_row {
    const gpu_op *op;   /* first launch of this configuration */
    int launches;       /* in the forward */
} occ_row;

typedef struct occ_group {
    const variant_analysis *va;
    int iteration;
    occ_row *rows;
    int n;
    int copies;         /* memcpy/memset in the forward: no occupancy */
} occ_group;

static int same_launch(const gpu_op *a, const gpu_op *b)
{
    return a->kind == b->kind && strcmp(a->name ? a->name : "", b->name ? b->name : "") == 0 &&
           memcmp(a->grid, b->grid, sizeof a->grid) == 0 &&
           memcmp(a->block, b->block, sizeof a->block) == 0 && a->registers == b->registers &&
           a->static_smem == b->static_smem && a->dynamic_smem == b->dynamic_smem;
}

/* The key of a launch in groups_build's hash index: what same_launch compares. */
static uint64_t launch_hash(const gpu_op *op)
{
    uint64_t h = hash_str(HASH_SEED, op->name);
    int kind = op->kind;
    h = hash_bytes(h, &kind, sizeof kind);
    h = hash_bytes(h, op->grid, sizeof op->grid);
    h = hash_bytes(h, op->block, sizeof op->block);
    h = hash_bytes(h, &op->registers, sizeof op->registers);
    h = hash_bytes(h, &op->static_smem, sizeof op->static_smem);
    return hash_bytes(h, &op->dynamic_smem, sizeof op->dynamic_smem);
}

typedef struct launch_key {
    const occ_row *rows;
    const gpu_op *op;
} launch_key;

static int launch_equal(int pos, const void *ctx)
{
    const launch_key *k = ctx;
    return same_launch(k->rows[pos].op, k->op);
}

static void groups_free(occ_group *g, int n)
{
    for (int i = 0; i < n; i++)
        free(g[i].rows);
    free(g);
}

static occ_group *groups_build(const analysis *a)
{
    occ_group *groups = calloc(a->n > 0 ? (size_t)a->n : 1, sizeof *groups);
    if (!groups)
        return NULL;
    for (int i = 0; i < a->n; i++) {
        occ_group *g = &groups[i];
        g->va = &a->v[i];
        int mid = fig_middle_forward(g->va);
        if (mid < 0)
            continue;
        const forward *f = &g->va->forwards[mid];
        g->iteration = f->iteration;
        g->rows = calloc(f->n_ops > 0 ? (size_t)f->n_ops : 1, sizeof *g->rows);
        if (!g->rows) {
            groups_free(groups, a->n);
            return NULL;
        }
        /* distinct launches by hash: a scan of the rows found so far was quadratic in a forward
         * of 64 000 distinct kernels */
        hash_index index;
        hash_index_init(&index);
        for (int k = 0; k < f->n_ops; k++) {
            const gpu_op *op = f->ops[k];
            if (op->kind != GPU_KERNEL) {
                g->copies++;
                continue;
            }
            uint64_t hv = launch_hash(op);
            launch_key key = {g->rows, op};
            int r = hash_index_find(&index, hv, launch_equal, &key);
            if (r < 0) {
                r = g->n;
                g->rows[g->n++] = (occ_row){op, 0};
                hash_index_add(&index, hv, r);
            }
            g->rows[r].launches++;
        }
        hash_index_free(&index);
    }
    return groups;
}

static int rows_shown(const occ_group *g) { return g->n < MAX_ROWS_SHOWN ? g->n : MAX_ROWS_SHOWN; }

static double group_height(const analysis *a, const occ_group *g)
{
    return HEADER_H + rows_shown(g) * row_h(a) + (g->n == 0 || g->n > MAX_ROWS_SHOWN ? NOTE_H : 0) + 6;
}

static void draw_bar(cairo_t *cr, double y, double h, double frac, unsigned colour, const char *label)
{
    double w = frac * BAR_W;
    if (w > 0 && w < 1)
        w = 1;
    fig_fill_rect(cr, BAR_X0, y, w, h, fig_hex(colour));
    fig_set(cr, FIG_INK);
    fig_font(cr, 8, 0);
    fig_text(cr, BAR_X0 + w + 4, y + h - 1.5, label, ALIGN_LEFT);
}

/* "12.5%"; a grid of one block reads "<0.1%", not a misleading "0.0%". */
static void percent(double frac, char *out, size_t n)
{
    if (frac > 0 && frac < 0.0005)
        snprintf(out, n, "<0.1%%");
    else
        snprintf(out, n, "%.1f%%", frac * 100);
}

static void draw_row(cairo_t *cr, const analysis *a, const char *variant, const occ_row *row, double y, double right)
{
    const gpu_op *op = row->op;
    char name[256], fit[256], line[320], err[160];
    fig_op_label(op, name, sizeof name);
    if (row->launches > 1) {
        size_t len = strlen(name);
        snprintf(name + len, sizeof name - len, " \xc3\x97%d", row->launches);
        esc_utf8_trim(name);
    }
    fig_set(cr, FIG_INK);
    fig_font(cr, 9, 0);
    fig_fit_text(cr, name, NAME_COL - 12, 4, fit, sizeof fit);
    fig_text(cr, FIG_MARGIN + 10, y + 14, fit, ALIGN_LEFT);

    occupancy o;
    const device_props *dev = a->trace ? &a->trace->device : &a->run->device;
    int threads = op->block[0] * op->block[1] * op->block[2];
    long long grid = (long long)op->grid[0] * op->grid[1] * op->grid[2];
    fig_font(cr, 7.5, 0);
    fig_set(cr, FIG_GREY);
    snprintf(line, sizeof line, "grid %lld \xc3\x97 block %d", grid, threads);
    fig_fit_text(cr, line, NAME_COL - 12, 4, fit, sizeof fit);
    fig_text(cr, FIG_MARGIN + 10, y + 25, fit, ALIGN_LEFT);

    if (occupancy_of_op(op, dev, &o, err, sizeof err) != 0) {
        fig_font(cr, 8, 0);
        snprintf(line, sizeof line, "occupancy not computed: %s", err);
        fig_fit_text(cr, line, right - BAR_X0, 8, fit, sizeof fit);
        fig_text(cr, BAR_X0, y + 18, fit, ALIGN_LEFT);
        return;
    }
    char v[32];
    percent(o.theoretical, v, sizeof v);
    draw_bar(cr, y + 5, 10, o.theoretical, THEORETICAL, v);
    percent(o.est_achieved, v, sizeof v);
    draw_bar(cr, y + 17, 10, o.est_achieved, ESTIMATED, v);
    if (has_measured(a)) {
        double m = measured_occupancy(a, variant, op->name);
        if (isfinite(m)) {
            percent(m, v, sizeof v);
            draw_bar(cr, y + 29, 10, m, MEASURED, v);
        } else {
            fig_set(cr, FIG_GREY);
            fig_font(cr, 8, 0);
            fig_text(cr, BAR_X0, y + 37, "not measured by the counter pass", ALIGN_LEFT);
        }
    }

    char limiter[96], smem[32], regs[48];
    occupancy_limiter_name(o.limiters, limiter, sizeof limiter);
    snprintf(smem, sizeof smem, "%d B", op->static_smem + op->dynamic_smem); /* bytes, as in the op tables */
    snprintf(regs, sizeof regs, "%d regs/thread", op->registers);
    double w = right - DETAIL_X;
    fig_font(cr, 8, 1);
    fig_set(cr, FIG_INK);
    snprintf(line, sizeof line, "limit: %s", limiter);
    fig_fit_text(cr, line, w, 8, fit, sizeof fit);
    fig_text(cr, DETAIL_X, y + 10, fit, ALIGN_LEFT);
    double lw = fig_text_width(cr, fit);
    fig_font(cr, 8, 0);
    snprintf(line, sizeof line, " \xe2\x80\x94 %d block%s/SM, %d of %d warps", o.active_blocks,
             o.active_blocks == 1 ? "" : "s", o.active_warps, o.max_warps);
    if (fig_fit_text(cr, line, w - lw, 6, fit, sizeof fit))
        fig_text(cr, DETAIL_X + lw, y + 10, fit, ALIGN_LEFT);
    fig_set(cr, FIG_GREY);
    snprintf(line, sizeof line, "%s \xe2\x86\x92 %d regs/block \xc2\xb7 shared memory %s/block", regs,
             o.regs_per_block, smem);
    fig_fit_text(cr, line, w, 8, fit, sizeof fit);
    fig_text(cr, DETAIL_X, y + 20, fit, ALIGN_LEFT);
    int est_pct = (int)(0.5 + o.est_achieved * 100);
    if (o.kineto_pct != est_pct && o.kineto_smem_limited)
        snprintf(line, sizeof line, "%.2f grid blocks per SM \xc2\xb7 Kineto: %d%% (%d B shared memory > its %d B "
                 "limit)", o.grid_blocks_per_sm, o.kineto_pct, op->static_smem + op->dynamic_smem,
                 dev->smem_per_block);
    else if (o.kineto_pct != est_pct)
        snprintf(line, sizeof line, "%.2f grid blocks per SM \xc2\xb7 Kineto: %d%%", o.grid_blocks_per_sm,
                 o.kineto_pct);
    else
        snprintf(line, sizeof line, "%.2f grid blocks per SM", o.grid_blocks_per_sm);
    fig_fit_text(cr, line, w, 8, fit, sizeof fit);
    fig_text(cr, DETAIL_X, y + 30, fit, ALIGN_LEFT);
}

static double legend_height(const analysis *a, cairo_t *cr, double maxw, int draw, double x, double y)
{
    fig_legend_item items[] = {
        {fig_hex(THEORETICAL), "theoretical: active warps the per-block resources allow, of the SM's maximum", 0},
        {fig_hex(ESTIMATED), "estimated achieved: also limited by grid blocks per SM (Kineto's formula, with the "
                             "opted-in shared memory limit; Kineto's own number in grey)", 0},
        {fig_hex(MEASURED), "measured achieved (counters): warps active per active cycle, of the maximum", 0},
    };
    return fig_legend(cr, x, y, maxw, items, has_measured(a) ? 3 : 2, draw);
}

static int occupancy_draw(cairo_t *cr, const fig_job *job)
{
    const analysis *a = job->a;
    occ_group *groups = groups_build(a);
    if (!groups)
        return EXIT_NO_MEMORY;
    double x = FIG_MARGIN, right = job->w - FIG_MARGIN;
    char buf[512], fit[512];
    const device_props *dev = a->trace ? &a->trace->device : &a->run->device;

    fig_set(cr, FIG_INK);
    fig_heading(cr, x, "Occupancy of each variant's kernels");
    if (dev->sm_count > 0 && dev->max_blocks_per_sm > 0)
        snprintf(buf, sizeof buf,
                 "%s (sm_%d%d, %d SMs, %d warps and %d blocks per SM%s) \xc2\xb7 distinct kernel launches "
                 "of the median forward of each variant (the one every view shows)",
                 dev->name[0] ? dev->name : "GPU", dev->major, dev->minor, dev->sm_count,
                 dev->warp_size ? dev->max_threads_per_sm / dev->warp_size : 0, dev->max_blocks_per_sm,
                 a->run && a->run->device_limits_note[0] ? ", limits not in the traces from the compute capability"
                                                         : "");
    else if (dev->sm_count > 0)
        snprintf(buf, sizeof buf, "%s (sm_%d%d, %d SMs): maximum blocks per SM (maxBlocksPerMultiprocessor) not "
                 "recorded in the traces, so occupancy cannot be computed",
                 dev->name[0] ? dev->name : "GPU", dev->major, dev->minor, dev->sm_count);
    else
        snprintf(buf, sizeof buf, "device limits not recorded: occupancy cannot be computed");
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 45, fit, ALIGN_LEFT);

    double y0 = TOP, y = y0;
    for (int i = 0; i < a->n; i++)
        y += group_height(a, &groups[i]);
    double y_end = y;

    /* percentage axis on top, grid through all rows */
    fig_font(cr, 8, 0);
    for (int p = 0; p <= 100; p += 25) {
        double gx = BAR_X0 + p / 100.0 * BAR_W;
        fig_set(cr, FIG_GRID);
        cairo_set_line_width(cr, 0.5);
        cairo_move_to(cr, gx, y0 - 4);
        cairo_line_to(cr, gx, y_end - 6);
        cairo_stroke(cr);
        fig_set(cr, FIG_INK);
        snprintf(buf, sizeof buf, "%d%%", p);
        fig_text(cr, gx, y0 - 8, buf, ALIGN_CENTER);
    }

    y = y0;
    for (int i = 0; i < a->n; i++) {
        const occ_group *g = &groups[i];
        const char *name = g->va->result && g->va->result->name[0] ? g->va->result->name : "variant";
        fig_set(cr, FIG_INK);
        fig_font(cr, 10, 1);
        fig_text(cr, x, y + 14, name, ALIGN_LEFT);
        double nw = fig_text_width(cr, name);
        fig_font(cr, 8.5, 0);
        fig_set(cr, FIG_GREY);
        if (fig_middle_forward(g->va) < 0)
            snprintf(buf, sizeof buf, "no forward recorded");
        else
            snprintf(buf, sizeof buf, "%d distinct kernel launch%s in iteration %d%s", g->n,
                     g->n == 1 ? "" : "es", g->iteration,
                     g->copies ? " (copies and memsets have no occupancy)" : "");
        fig_fit_text(cr, buf, BAR_X0 - x - nw - 12 + BAR_W, 6, fit, sizeof fit);
        fig_text(cr, x + nw + 8, y + 14, fit, ALIGN_LEFT);
        y += HEADER_H;
        for (int r = 0; r < rows_shown(g); r++) {
            draw_row(cr, a, g->va->result ? g->va->result->name : "", &g->rows[r], y, right);
            y += row_h(a);
        }
        if (g->n > MAX_ROWS_SHOWN) {
            fig_font(cr, 8.5, 0);
            fig_set(cr, FIG_GREY);
            snprintf(buf, sizeof buf, "%d more distinct launches not shown", g->n - MAX_ROWS_SHOWN);
            fig_text(cr, x + 10, y + 11, buf, ALIGN_LEFT);
        }
        if (g->n == 0 || g->n > MAX_ROWS_SHOWN)
            y += NOTE_H;
        y += 6;
    }
    legend_height(a, cr, right - x, 1, x, y_end + 2);
    groups_free(groups, a->n);
    return 0;
}

int fig_occupancy_prepare(fig_job *job, cairo_t *measure, const analysis *a)
{
    snprintf(job->name, sizeof job->name, "occupancy");
    snprintf(job->caption, sizeof job->caption,
             "Theoretical occupancy of each variant's kernels (registers, shared memory, warps, "
             "blocks per SM) and the grid-limited estimate PyTorch's profiler reports.");
    job->a = a;
    job->draw = occupancy_draw;
    job->w = FIG_WIDTH;
    occ_group *groups = groups_build(a);
    if (!groups)
        return EXIT_NO_MEMORY;
    double y = TOP;
    for (int i = 0; i < a->n; i++)
        y += group_height(a, &groups[i]);
    groups_free(groups, a->n);
    job->h = ceil(y + 2 + legend_height(a, measure, FIG_WIDTH - 2 * FIG_MARGIN, 0, 0, 0) + 8);
    return 0;
}
