/* The parts of report/figures/ that draw timelines, shared by the per-variant timeline
 * (timeline.c) and the overview (timeline_overview.c): the scene (what a figure shows of
 * one variant's forwards, packed into rows, timeline_scene.c) and its lanes (NVTX ranges,
 * API calls and GPU operations drawn on one time axis, with their legend, timeline_lanes.c).
 * Internal to figures/: nothing outside it includes this header. */
#ifndef ATTNPROF_TIMELINE_PARTS_H
#define ATTNPROF_TIMELINE_PARTS_H

#include "fig.h"

#define MAX_ROWS 6          /* overlapping items beyond this share the last row */
#define MIN_BOX_W 1.0       /* pt: 2 px in the PNG, so a 1 µs call stays visible */
#define LABEL_COL 76.0      /* timeline: lane names */
#define OVERVIEW_COL 150.0  /* overview: variant names */
#define TIMELINE_TOP 60.0   /* below the title and subtitle */

typedef struct tl_item {
    int64_t s, e;
    int row;
    const gpu_op *op;
    const api_call *api;
    const host_range *range;
} tl_item;

typedef struct tl_list {
    tl_item *v;
    int n, cap, rows;
} tl_list;

typedef struct tl_scene {
    int64_t origin;     /* t = 0 on the axis: start of the first forward shown */
    int64_t lo, hi;     /* what is selected */
    tl_list nvtx, api, gpu;
    const variant_analysis *va;
    const forward *calls; /* the ranges it draws from: va->forwards, or va->backwards */
    int first, count;   /* calls shown: calls[first .. first+count) */
} tl_scene;

typedef struct tl_geom {
    double x0, x1;     /* plot area */
    double t0, t1;     /* ns at x0 and x1 */
} tl_geom;

typedef struct tl_lane_style {
    double nvtx_row, api_row, gpu_row; /* row heights */
    double gap_api_gpu;                /* room for the flow lines */
    double font;
    int sublabels;                     /* durations under the names */
} tl_lane_style;

typedef struct tl_lane_pos {
    double nvtx_y, api_y, gpu_y, end_y;
} tl_lane_pos;

/* The series contrasts runtime launches (cudaLaunchKernel) with driver ones
 * (cuLaunchKernelEx, used by cuBLAS and cuDNN), so they get their own shades. */
typedef enum api_category {
    API_CAT_RUNTIME_LAUNCH, API_CAT_DRIVER_LAUNCH, API_CAT_COPY, API_CAT_OTHER, API_CAT_COUNT
} api_category;

/* Legend entries for what the scenes contain, in a fixed order. */
typedef struct tl_legend_text {
    char api[API_CAT_COUNT][200];
} tl_legend_text;

/* `strict`: only the forwards' own ops and the calls inside their ranges (the
 * overview); otherwise everything recorded in the padded window (timeline). It cannot
 * fail (out of memory ends the command, alloc.h). */
void tl_scene_build(tl_scene *sc, const trace *t, const variant_analysis *va, int first,
                    int count, int strict);
/* The same over another set of the variant's ranges (its backwards: `calls` is va->backwards). */
void tl_scene_build_of(tl_scene *sc, const trace *t, const variant_analysis *va, const forward *calls,
                       int first, int count, int strict);
void tl_scene_free(tl_scene *sc);
/* The variant's name, or "variant N" when the archive has none. */
const char *tl_variant_name(const variant_analysis *va, int i, char *buf, size_t n);

tl_lane_pos tl_lane_layout(const tl_scene *sc, const tl_lane_style *st, double y);
void tl_draw_lane_backgrounds(cairo_t *cr, const tl_geom *g, const tl_lane_style *st,
                              const tl_lane_pos *p, double lane_x0);
void tl_draw_lane_items(cairo_t *cr, const tl_scene *sc, const tl_geom *g, const tl_lane_style *st,
                        const tl_lane_pos *p);
/* Grid lines at the ticks from y0 to y1. */
void tl_draw_time_grid(cairo_t *cr, const tl_geom *g, int64_t origin, double y0, double y1);
void tl_draw_time_axis(cairo_t *cr, const tl_geom *g, int64_t origin, double y);
/* An overview figure (timeline_overview.c draws every one): one range of each variant, picked by
 * `pick` from `calls` (its forwards, or its backwards), all on one time scale and aligned at the
 * range's start, each labelled by `labels` (three lines; `drawn` is NULL when the variant has
 * none: the first line then says so). `heading` writes the title, the subtitle and the axis's
 * name. */
typedef struct tl_overview_spec {
    const forward *(*calls)(const variant_analysis *va);
    int (*pick)(const variant_analysis *va); /* index into calls, -1: none */
    void (*labels)(const variant_analysis *va, const forward *drawn, char lines[3][96]);
    void (*heading)(const analysis *a, char *title, size_t n_title, char *sub, size_t n_sub, char *axis,
                    size_t n_axis);
} tl_overview_spec;
/* Lays the job out (size, draw function) for the spec; the caller names it and writes the caption. */
int tl_overview_layout(fig_job *job, cairo_t *measure, const analysis *a, const tl_overview_spec *sp);

/* Legend entries for what the scenes contain, in a fixed order. */
int tl_legend_items(const tl_scene *scenes, int n, fig_legend_item *items, int with_nvtx,
                    tl_legend_text *text);

#endif
