/* The timeline overview: one forward of every variant (its forward of median CUDA time) on
 * one time scale, aligned at the start of the forward call, labelled with the summary
 * table's medians; and the drawing every overview shares (tl_overview_layout: the backward
 * timeline is one too). */
#include "timeline_parts.h"
#include "model_roles.h"
#include "units.h"

#include "alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- overview ---------------------------------------------------------------- */

static const tl_lane_style OVERVIEW_STYLE = {.nvtx_row = 6, .api_row = 15, .gpu_row = 22,
                                          .gap_api_gpu = 10, .font = 8, .sublabels = 0};
#define OVERVIEW_GAP 12.0

typedef struct overview_plan {
    int n;
    tl_scene *scenes;
    int64_t span; /* longest range drawn: the common time scale */
} overview_plan;

static void overview_free(overview_plan *pl)
{
    for (int i = 0; i < pl->n; i++)
        tl_scene_free(&pl->scenes[i]);
    free(pl->scenes);
    memset(pl, 0, sizeof *pl);
}

static void overview_plan_build(overview_plan *pl, const analysis *a, const tl_overview_spec *sp)
{
    memset(pl, 0, sizeof *pl);
    pl->scenes = attn_calloc(a->n > 0 ? (size_t)a->n : 1, sizeof *pl->scenes);
    pl->n = a->n;
    for (int i = 0; i < a->n; i++) {
        int mid = sp->pick(&a->v[i]);
        tl_scene_build_of(&pl->scenes[i], a->trace, &a->v[i], sp->calls(&a->v[i]), mid < 0 ? 0 : mid,
                          mid < 0 ? 0 : 1, 1);
        if (mid >= 0 && pl->scenes[i].hi - pl->scenes[i].origin > pl->span)
            pl->span = pl->scenes[i].hi - pl->scenes[i].origin;
    }
    /* a little room right of the longest range */
    pl->span = pl->span > 0 ? pl->span + pl->span / 50 : 1000;
}

static double overview_block_height(const tl_scene *sc)
{
    tl_lane_pos p = tl_lane_layout(sc, &OVERVIEW_STYLE, 0);
    return p.end_y > 48 ? p.end_y : 48; /* room for the name and its three label lines */
}

void fig_overview_label(const variant_analysis *va, char *cuda, size_t n_cuda, char *cpu, size_t n_cpu)
{
    char t[32];
    fig_format_us(va->cuda_us.n ? va->cuda_us.median : NAN, t, sizeof t);
    snprintf(cuda, n_cuda, "median CUDA %s", t);
    fig_format_us(va->cpu_us.n ? va->cpu_us.median : NAN, t, sizeof t);
    snprintf(cpu, n_cpu, "median CPU %s", t);
}

static int overview_draw(cairo_t *cr, const fig_job *job)
{
    const analysis *a = job->a;
    const tl_overview_spec *sp = job->overview;
    overview_plan pl;
    overview_plan_build(&pl, a, sp);
    double x = FIG_MARGIN, right = job->w - FIG_MARGIN;
    char title[128], sub[512], axis[128], fit[256], name[48];
    sp->heading(a, title, sizeof title, sub, sizeof sub, axis, sizeof axis);
    fig_set(cr, FIG_INK);
    fig_font(cr, 13, 1);
    fig_text(cr, x, 28, title, ALIGN_LEFT);
    fig_font(cr, 9.5, 0);
    fig_set(cr, FIG_GREY);
    fig_fit_text(cr, sub, right - x, 8, fit, sizeof fit);
    fig_text(cr, x, 45, fit, ALIGN_LEFT);

    double y = 62;
    tl_geom g = {x + OVERVIEW_COL, right, 0, 0};
    for (int i = 0; i < pl.n; i++) {
        const tl_scene *sc = &pl.scenes[i];
        const variant_analysis *va = &a->v[i];
        double h = overview_block_height(sc);
        if (i > 0) {
            fig_set(cr, FIG_GRID);
            cairo_set_line_width(cr, 0.6);
            cairo_move_to(cr, x, y - OVERVIEW_GAP / 2);
            cairo_line_to(cr, right, y - OVERVIEW_GAP / 2);
            cairo_stroke(cr);
        }
        fig_set(cr, FIG_INK);
        fig_font(cr, 10, 1);
        fig_fit_text(cr, tl_variant_name(va, i, name, sizeof name), OVERVIEW_COL - 8, 4, fit, sizeof fit);
        fig_text(cr, x, y + 12, fit, ALIGN_LEFT);
        fig_font(cr, 8, 0);
        fig_set(cr, FIG_GREY);
        char lines[3][96] = {"", "", ""};
        sp->labels(va, sc->count > 0 ? &sc->calls[sc->first] : NULL, lines);
        for (int l = 0; l < 3; l++) { /* left of the lanes' "CPU" / "GPU" names */
            fig_fit_text(cr, lines[l], (sc->count > 0 ? OVERVIEW_COL - 26 : right - x), 4, fit, sizeof fit);
            fig_text(cr, x, y + 23 + 10 * l, fit, ALIGN_LEFT);
        }
        if (sc->count > 0) {
            g.t0 = (double)sc->origin;
            g.t1 = (double)(sc->origin + pl.span);
            tl_lane_pos p = tl_lane_layout(sc, &OVERVIEW_STYLE, y);
            tl_draw_lane_backgrounds(cr, &g, &OVERVIEW_STYLE, &p, g.x0);
            tl_draw_time_grid(cr, &g, sc->origin, p.nvtx_y, p.end_y + 2);
            tl_draw_lane_items(cr, sc, &g, &OVERVIEW_STYLE, &p);
            fig_font(cr, 7.5, 0);
            fig_set(cr, FIG_GREY);
            fig_text(cr, g.x0 - 4, p.api_y + OVERVIEW_STYLE.api_row / 2 + 3, "CPU", ALIGN_RIGHT);
            fig_text(cr, g.x0 - 4, p.gpu_y + OVERVIEW_STYLE.gpu_row / 2 + 3, "GPU", ALIGN_RIGHT);
        }
        y += h + OVERVIEW_GAP;
    }
    /* One axis for all: time since each range's start. */
    g.t0 = 0;
    g.t1 = (double)pl.span;
    double axis_y = y - OVERVIEW_GAP + 4;
    tl_draw_time_axis(cr, &g, 0, axis_y);
    fig_font(cr, 8.5, 0);
    fig_set(cr, FIG_GREY);
    fig_text(cr, g.x1, axis_y + 27, axis, ALIGN_RIGHT);

    fig_legend_item items[OPC_COUNT + API_CAT_COUNT + 2];
    tl_legend_text text;
    int n = tl_legend_items(pl.scenes, pl.n, items, 1, &text);
    fig_legend(cr, x, axis_y + 34, right - x, items, n, 1);
    overview_free(&pl);
    return 0;
}

int tl_overview_layout(fig_job *job, cairo_t *measure, const analysis *a, const tl_overview_spec *sp)
{
    job->a = a;
    job->overview = sp;
    job->draw = overview_draw;
    job->w = FIG_WIDTH;
    overview_plan pl;
    overview_plan_build(&pl, a, sp);
    double y = 62;
    for (int i = 0; i < pl.n; i++)
        y += overview_block_height(&pl.scenes[i]) + OVERVIEW_GAP;
    fig_legend_item items[OPC_COUNT + API_CAT_COUNT + 2];
    tl_legend_text text;
    int n = tl_legend_items(pl.scenes, pl.n, items, 1, &text);
    double legend = fig_legend(measure, 0, 0, FIG_WIDTH - 2 * FIG_MARGIN, items, n, 0);
    job->h = ceil(y - OVERVIEW_GAP + 4 + 34 + legend + 8);
    overview_free(&pl);
    return 0;
}

/* ---- the forwards' overview ---- */

static const forward *forwards_of(const variant_analysis *va) { return va->forwards; }

static void forward_labels(const variant_analysis *va, const forward *drawn, char lines[3][96])
{
    if (!drawn) {
        snprintf(lines[0], 96, "no forward recorded%s%s", va->result ? ": " : "",
                 va->result ? variant_status_name(va->result->status) : "");
        return;
    }
    /* The table's numbers (medians over all forwards), not the drawn forward's own: that one
     * is picked by CUDA time, so its CPU time can be any of the forwards'. */
    fig_overview_label(va, lines[0], 96, lines[1], 96);
    snprintf(lines[2], 96, "%d GPU op%s, iteration %d", drawn->n_ops, drawn->n_ops == 1 ? "" : "s",
             drawn->iteration);
}

static void forward_heading(const analysis *a, char *title, size_t n_title, char *sub, size_t n_sub, char *axis,
                            size_t n_axis)
{
    const char *unit = model_unit_word_of_run(a); /* a training step is a step */
    int step = !strcmp(unit, "step");
    char shape[96];
    snprintf(title, n_title, "One %s of each variant, same time scale", unit);
    fig_shape_text(a, shape, sizeof shape);
    snprintf(sub, n_sub,
             "%s \xc2\xb7 each variant's %s of median CUDA time, aligned at the start of its "
             "%s \xc2\xb7 labels: medians over all %ss, as in the summary table",
             shape, unit, step ? "step" : "forward call", unit);
    snprintf(axis, n_axis, "%s", step ? "time since the start of each variant's step"
                                      : "time since the start of each variant's forward call");
}

static const tl_overview_spec FORWARD_OVERVIEW = {forwards_of, fig_middle_forward, forward_labels,
                                                  forward_heading};

int fig_overview_prepare(fig_job *job, cairo_t *measure, const analysis *a)
{
    snprintf(job->name, sizeof job->name, "timeline-overview");
    const char *unit = model_unit_word_of_run(a); /* a training step is a step */
    char each[64];
    if (a->n == 1)
        snprintf(each, sizeof each, "the variant");
    else
        snprintf(each, sizeof each, "each of the %d variants", a->n);
    snprintf(job->caption, sizeof job->caption,
             "One %s of %s (its %s of median CUDA time) on one time scale: "
             "host API calls above, GPU operations below, aligned at the start of the %s%s; the "
             "labels are the median CUDA and CPU times per %s of the summary table.", unit, each, unit, unit,
             strcmp(unit, "step") ? " call" : "", unit);
    return tl_overview_layout(job, measure, a, &FORWARD_OVERVIEW);
}
