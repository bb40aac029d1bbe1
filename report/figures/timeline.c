/* The per-variant timeline: one figure per variant, NVTX ranges and API calls over GPU
 * operations for one to three forwards around the median one. Its scene and lanes are
 * timeline_scene.c and timeline_lanes.c; the overview of all variants timeline_overview.c. */
#include "timeline_parts.h"
#include "model_roles.h"
#include "units.h"

#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- per-variant timeline --------------------------------------------------- */

static const tl_lane_style TIMELINE_STYLE = {.nvtx_row = 17, .api_row = 19, .gpu_row = 32,
                                          .gap_api_gpu = 18, .font = 9, .sublabels = 1};


/* One to three consecutive forwards around the representative (median) one
 * (analysis_median_forward): three when a forward is a few operations (the
 * repetition is the story), one when it is many (the names must stay readable). */
static void pick_forwards(const variant_analysis *va, int *first, int *count)
{
    int ops = va->ops_per_forward;
    int want = ops <= 4 ? 3 : ops <= 12 ? 2 : 1;
    if (want > va->n_forwards)
        want = va->n_forwards;
    *count = want;
    int med = analysis_median_forward(va);
    int first_ = med - want / 2;
    if (first_ + want > va->n_forwards)
        first_ = va->n_forwards - want;
    *first = want && first_ > 0 ? first_ : 0;
}

static void medians_text(const variant_analysis *va, char *out, size_t n)
{
    char cuda[32], cpu[32];
    if (va->cuda_us.n == 0 && va->cpu_us.n == 0) {
        snprintf(out, n, "no forwards recorded");
        return;
    }
    fig_format_us(va->cuda_us.median, cuda, sizeof cuda);
    fig_format_us(va->cpu_us.median, cpu, sizeof cpu);
    char count[48];
    units_count_noun(va->cuda_us.n > va->cpu_us.n ? va->cuda_us.n : va->cpu_us.n, model_unit_word(va), count,
                     sizeof count);
    snprintf(out, n, "median per %s: CUDA %s, CPU %s (%s)", model_unit_word(va), cuda, cpu, count);
}

static double timeline_legend_height(cairo_t *cr, const tl_scene *sc, double maxw)
{
    fig_legend_item items[OPC_COUNT + API_CAT_COUNT + 2];
    tl_legend_text text;
    int n = tl_legend_items(sc, 1, items, 1, &text);
    return fig_legend(cr, 0, 0, maxw, items, n, 0);
}

static int timeline_draw(cairo_t *cr, const fig_job *job)
{
    const analysis *a = job->a;
    const variant_analysis *va = &a->v[job->variant];
    tl_scene sc;
    tl_scene_build(&sc, a->trace, va, job->first_forward, job->n_forwards, 0);
    char buf[512], name[48], shape[96], med[160];
    const char *vname = tl_variant_name(va, job->variant, name, sizeof name);
    double x = FIG_MARGIN, right = job->w - FIG_MARGIN;

    fig_set(cr, FIG_INK);
    fig_font(cr, 13, 1);
    snprintf(buf, sizeof buf, "Timeline \xe2\x80\x94 %s%s%s", vname,
             va->result && va->result->title[0] ? ": " : "", va->result ? va->result->title : "");
    char fit[512];
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 28, fit, ALIGN_LEFT);

    fig_shape_text(a, shape, sizeof shape);
    medians_text(va, med, sizeof med);
    char count[48];
    int rep = analysis_median_forward(va);
    if (sc.count > 1)
        snprintf(buf, sizeof buf, "%s \xc2\xb7 %s \xc2\xb7 showing %d of %d %ss (iterations %d\xe2\x80\x93%d; "
                 "iteration %d has the median CUDA time)",
                 shape, med, sc.count, va->n_forwards, model_unit_word(va), va->forwards[sc.first].iteration,
                 va->forwards[sc.first + sc.count - 1].iteration, rep >= 0 ? va->forwards[rep].iteration : -1);
    else if (sc.count == 1)
        snprintf(buf, sizeof buf, "%s \xc2\xb7 %s \xc2\xb7 showing 1 of %s (iteration %d, of median CUDA time)",
                 shape, med, units_count_noun(va->n_forwards, model_unit_word(va), count, sizeof count),
                 va->forwards[sc.first].iteration);
    else
        snprintf(buf, sizeof buf, "%s \xc2\xb7 %s", shape, med);
    fig_font(cr, 9.5, 0);
    fig_set(cr, FIG_GREY);
    fig_fit_text(cr, buf, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 45, fit, ALIGN_LEFT);

    double y = TIMELINE_TOP;
    if (sc.count == 0) {
        const char *why = va->result && va->result->error[0] ? va->result->error : "";
        snprintf(buf, sizeof buf, "No forward of this variant was recorded%s%s%s%s",
                 va->result ? " (" : "", va->result ? variant_status_name(va->result->status) : "",
                 va->result ? ")" : "", why[0] ? ": " : "");
        fig_set(cr, FIG_INK);
        fig_font(cr, 10, 0);
        fig_text(cr, x, y + 16, buf, ALIGN_LEFT);
        if (why[0]) {
            fig_fit_text(cr, why, right - x, 8, fit, sizeof fit);
            fig_text(cr, x, y + 32, fit, ALIGN_LEFT);
        }
        tl_scene_free(&sc);
        return 0;
    }

    tl_geom g = {x + LABEL_COL, right, (double)sc.lo, (double)sc.hi};
    tl_lane_pos p = tl_lane_layout(&sc, &TIMELINE_STYLE, y);
    tl_draw_lane_backgrounds(cr, &g, &TIMELINE_STYLE, &p, g.x0);
    tl_draw_time_grid(cr, &g, sc.origin, p.nvtx_y, p.end_y + 2);
    tl_draw_lane_items(cr, &sc, &g, &TIMELINE_STYLE, &p);

    /* lane names */
    fig_set(cr, FIG_INK);
    fig_font(cr, 9, 1);
    fig_text(cr, g.x0 - 6, p.nvtx_y + TIMELINE_STYLE.nvtx_row / 2 + 3, "NVTX", ALIGN_RIGHT);
    fig_text(cr, g.x0 - 6, p.api_y + TIMELINE_STYLE.api_row / 2 + 3, "CPU API", ALIGN_RIGHT);
    fig_text(cr, g.x0 - 6, p.gpu_y + TIMELINE_STYLE.gpu_row / 2 + 3, "GPU", ALIGN_RIGHT);
    fig_font(cr, 7.5, 0);
    fig_set(cr, FIG_GREY);
    fig_text(cr, g.x0 - 6, p.api_y + TIMELINE_STYLE.api_row / 2 + 12, "host thread", ALIGN_RIGHT);
    fig_text(cr, g.x0 - 6, p.gpu_y + TIMELINE_STYLE.gpu_row / 2 + 12, "all streams", ALIGN_RIGHT);

    double axis_y = p.end_y + 2;
    tl_draw_time_axis(cr, &g, sc.origin, axis_y);
    fig_font(cr, 8.5, 0);
    fig_set(cr, FIG_GREY);
    snprintf(buf, sizeof buf, "time since the start of iteration %d", va->forwards[sc.first].iteration);
    fig_text(cr, g.x1, axis_y + 27, buf, ALIGN_RIGHT);

    fig_legend_item items[OPC_COUNT + API_CAT_COUNT + 2];
    tl_legend_text text;
    int n = tl_legend_items(&sc, 1, items, 1, &text);
    fig_legend(cr, x, axis_y + 34, right - x, items, n, 1);
    tl_scene_free(&sc);
    return 0;
}

int fig_timeline_prepare(fig_job *job, cairo_t *measure, const analysis *a, int variant)
{
    const variant_analysis *va = &a->v[variant];
    char name[48], med[160];
    const char *vname = tl_variant_name(va, variant, name, sizeof name);
    snprintf(job->name, sizeof job->name, "timeline-%s", vname);
    job->a = a;
    job->variant = variant;
    job->draw = timeline_draw;
    job->w = FIG_WIDTH;
    pick_forwards(va, &job->first_forward, &job->n_forwards);
    medians_text(va, med, sizeof med);
    char count[48];
    if (job->n_forwards == 0) {
        snprintf(job->caption, sizeof job->caption, "Timeline of %s: no forward was recorded.", vname);
        job->h = 110;
        return 0;
    }
    snprintf(job->caption, sizeof job->caption,
             "Timeline of %s: CUDA API calls and %s on the host above the GPU's "
             "operations for %d of %s; %.90s.",
             vname, a->run && a->run->imported ? "the traces' ranges and CPU ops" : "NVTX ranges", job->n_forwards,
             units_count_noun(va->n_forwards, model_unit_word(va), count, sizeof count), med);
    tl_scene sc;
    tl_scene_build(&sc, a->trace, va, job->first_forward, job->n_forwards, 0);
    tl_lane_pos p = tl_lane_layout(&sc, &TIMELINE_STYLE, TIMELINE_TOP);
    double legend = timeline_legend_height(measure, &sc, FIG_WIDTH - 2 * FIG_MARGIN);
    job->h = ceil(p.end_y + 2 + 34 + legend + 8);
    tl_scene_free(&sc);
    return 0;
}

int fig_timeline_geometry_of(const fig_job *job, fig_timeline_geometry *geo)
{
    const variant_analysis *va = &job->a->v[job->variant];
    if (job->n_forwards <= 0)
        return ATTN_NONE;
    tl_scene sc;
    tl_scene_build(&sc, job->a->trace, va, job->first_forward, job->n_forwards, 0);
    tl_lane_pos p = tl_lane_layout(&sc, &TIMELINE_STYLE, TIMELINE_TOP);
    *geo = (fig_timeline_geometry){FIG_MARGIN + LABEL_COL, job->w - FIG_MARGIN, p.nvtx_y, p.api_y,
                                   p.gpu_y, p.end_y, sc.lo, sc.hi};
    tl_scene_free(&sc);
    return 0;
}

