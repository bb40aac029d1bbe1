/* Shared drawing toolkit of the figures (canvas.c) and the figure jobs
 * render.c runs. Internal to src/figures/. Units are PDF points; PNGs are
 * drawn at 2 pixels per point. */
#ifndef ATTNPROF_FIG_H
#define ATTNPROF_FIG_H

#include <cairo.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "figures.h"

#define FIG_FONT "DejaVu Sans"
/* Paper-sized figures: the LaTeX body's family when fontconfig has it, else FIG_FONT (fonts.c). */
#define FIG_PAPER_FONT "Latin Modern Roman"
#define FIG_PNG_SCALE 2.0
#define FIG_WIDTH 960.0
#define FIG_MARGIN 16.0

typedef struct rgb {
    double r, g, b;
} rgb;

typedef enum fig_align { ALIGN_LEFT, ALIGN_CENTER, ALIGN_RIGHT } fig_align;

/* ---- canvas.c: surfaces ------------------------------------------------ */

typedef struct fig_buffer {
    unsigned char *data;
    size_t len, cap;
    int failed;
} fig_buffer;

typedef struct fig_canvas {
    int kind; /* FIG_PNG, FIG_SVG or FIG_PDF */
    cairo_surface_t *surface;
    cairo_t *cr;
    fig_buffer buf; /* SVG/PDF bytes, written out on close */
    char *path; /* malloc'd copy of the path, any length */
} fig_canvas;

/* Opens a w x h point canvas with a white background and the figure font.
 * `pixels`: the caller's buffer for a PNG's pixels, grown as needed and kept
 * for the next canvas (the caller frees its data); NULL: one per canvas. */
int fig_canvas_open(fig_canvas *c, int kind, const char *path, double w, double h,
                    const char *title, fig_buffer *pixels, char *err, size_t errlen);
/* Finishes the surface and writes the file; frees everything either way. Returns
 * EXIT_OK; EXIT_IO with `err` set (I/O, memory); EXIT_BAD_ARCHIVE when cairo refused
 * what was drawn (e.g. a string that is not UTF-8): the archive's fault, not the disk's. */
int fig_canvas_close(fig_canvas *c, char *err, size_t errlen);

/* A context for measuring text before a canvas exists (same font options as
 * every canvas, so layouts match across formats). NULL if out of memory. */
cairo_t *fig_measure_create(void);
void fig_measure_destroy(cairo_t *cr);

/* ---- canvas.c: text ---------------------------------------------------- */

void fig_font(cairo_t *cr, double size, int bold);
/* fonts.c: the family paper-sized figures are set in (FIG_PAPER_FONT, or FIG_FONT when
 * fontconfig does not find it); a context's family for fig_font (FIG_FONT unless
 * fig_use_paper_font marked it for a paper figure). */
const char *fig_paper_family(void);
void fig_use_paper_font(cairo_t *cr, int paper);
const char *fig_family_of(cairo_t *cr);
double fig_text_width(cairo_t *cr, const char *s);
/* Draws `s` with its baseline at y; x is the left, centre or right edge. */
void fig_text(cairo_t *cr, double x, double y, const char *s, fig_align align);
/* `s`, or its longest prefix + "…" with at least `min_chars` characters, that
 * fits in `maxw`; returns 0 and an empty `out` when nothing fits. */
int fig_fit_text(cairo_t *cr, const char *s, double maxw, int min_chars, char *out, size_t n);

/* ---- canvas.c: colours -------------------------------------------------- */

void fig_set(cairo_t *cr, rgb c);
void fig_set_alpha(cairo_t *cr, rgb c, double alpha);
rgb fig_hex(unsigned hex);
rgb fig_class_colour(op_class c);
/* Black or white, whichever reads better on `fill`. */
rgb fig_text_on(rgb fill);
void fig_fill_rect(cairo_t *cr, double x, double y, double w, double h, rgb fill);

extern const rgb FIG_INK, FIG_GREY, FIG_GRID, FIG_WHITE;

/* The palette, once. Paul Tol's colour-blind-safe schemes: "bright" for runs, variants and
 * series (each figure keeps its own order of them), "muted" for the op classes and the
 * occupancy's measured bar, one "vibrant" orange for CPU time. */
enum {
    TOL_BLUE = 0x4477AA, TOL_RED = 0xEE6677, TOL_GREEN = 0x228833, TOL_YELLOW = 0xCCBB44,
    TOL_CYAN = 0x66CCEE, TOL_PURPLE = 0xAA3377, TOL_GREY = 0xBBBBBB,
    TOL_MUTED_INDIGO = 0x332288, TOL_MUTED_CYAN = 0x88CCEE, TOL_MUTED_SAND = 0xDDCC77,
    TOL_MUTED_GREEN = 0x117733, TOL_MUTED_ROSE = 0xCC6677, TOL_MUTED_WINE = 0x882255,
    TOL_MUTED_TEAL = 0x44AA99, TOL_MUTED_PURPLE = 0xAA4499, TOL_MUTED_PALE = 0xDDDDDD,
    TOL_VIBRANT_ORANGE = 0xEE7733,
    FIG_NEAR_BLACK = 0x222222, /* the eighth series colour after the bright seven */
};

/* A figure's heading: its title (13 pt bold, ink) with the baseline at y 28 from x, then the
 * subtitle's style set (9.5 pt, grey) for what the figure writes under it. */
void fig_heading(cairo_t *cr, double x, const char *title);
/* A point with its verdict: filled when the interval says faster or slower, hollow (white
 * inside) when same or ambiguous; drawn in `col` at (x, y) with radius r. */
void fig_verdict_dot(cairo_t *cr, double x, double y, double r, int decided, rgb col);
/* A thin ink rule from x0 to x1 at y (a time axis's baseline), 0.6 pt. */
void fig_axis_rule(cairo_t *cr, double x0, double x1, double y);

/* ---- canvas.c: numbers and axes ---------------------------------------- */

/* 1-2-5 steps: ticks at multiples of the step in [lo, hi], at most ~max_ticks. */
typedef struct fig_ticks {
    int n;
    double v[64];
    double step;
} fig_ticks;
void fig_nice_ticks(double lo, double hi, int max_ticks, fig_ticks *t);

/* Tick labels of a time axis in µs: unit (µs or ms) picked from the largest
 * tick, decimals from the step, so the labels are round and consistent. */
typedef struct fig_time_fmt {
    double div;
    const char *unit;
    int decimals;
} fig_time_fmt;
fig_time_fmt fig_time_fmt_for(double max_us, double step_us);
void fig_time_label(const fig_time_fmt *f, double us, char *out, size_t n);

/* A duration with 3 significant digits: "850 ns", "12.3 µs", "1.25 ms". */
void fig_format_us(double us, char *out, size_t n);
/* Bytes as "48 KiB", "131.0 KiB", "0 B". */
void fig_format_bytes(double bytes, char *out, size_t n);

/* ---- time_chart.c: a vertical time axis and bars on it ----------------- */

typedef struct fig_yscale {
    int log;
    double lo, hi; /* µs */
    double y0, y1; /* points of lo (bottom) and hi (top) */
} fig_yscale;
/* Picks lo/hi (round, 0-based when linear, whole decades when log) to hold the
 * data range [lo, hi]; y0/y1 are left to the caller. */
void fig_yscale_fit(fig_yscale *s, double lo, double hi, int log_axis);
double fig_yof(const fig_yscale *s, double us);
/* A grid line and a label at each of the n values, then the axis lines at x0
 * and y0. */
void fig_draw_y_axis(cairo_t *cr, const fig_yscale *s, double x0, double x1, const double *v,
                     const char (*labels)[32], int n);
/* Grid lines and time labels at round values, axis lines at x0 and y0. */
void fig_draw_time_axis(cairo_t *cr, const fig_yscale *s, double x0, double x1);
/* A bar at the median with a min–max whisker and the median's label (written by
 * `format`) above when it fits in `label_room`; "n/a" without data. */
void fig_draw_bar(cairo_t *cr, const fig_yscale *s, double cx, double w, const stats *st, unsigned colour,
                  double label_room, void (*format)(double value, char *out, size_t n));

/* ---- figure jobs (render.c runs them for every format) ------------------ */

struct compare_data;
struct sweep_data;
typedef struct fig_job fig_job;
struct fig_job {
    char name[64];
    char caption[256];
    double w, h;
    int (*draw)(cairo_t *cr, const fig_job *job); /* EXIT_OK, or an EXIT_* code */
    const analysis *a;
    int variant;  /* index into a->v, for per-variant figures */
    int log_axis;
    int first_forward, n_forwards; /* timeline: forwards shown */
    const struct compare_data *cmp; /* compare figures */
    int pair;     /* compare-model-roles: index into cmp->traces.pairs */
    const struct sweep_data *sweep; /* sweep figures */
    int size;     /* FIG_SIZE_*: paper figures */
    const struct tl_overview_spec *overview; /* overview figures: what they draw of each variant */
};

/* render.c: draws every job in every format (FIG_* bits) into <dir>/figures,
 * and lists the files in `out`. EXIT_OK, or an EXIT_* code with `err`. */
int fig_render_jobs(const fig_job *jobs, int n_jobs, const char *dir, unsigned formats, figure_list *out,
                    char *err, size_t errlen);

/* Each prepares a job: size, caption and the draw function; EXIT_OK (out of memory ends the
 * command, alloc.h). */
int fig_timeline_prepare(fig_job *job, cairo_t *measure, const analysis *a, int variant);
int fig_overview_prepare(fig_job *job, cairo_t *measure, const analysis *a);
/* The backward timeline (timeline_backward.c): only for archives with backwards (fig_backward_wanted). */
int fig_backward_wanted(const analysis *a);
int fig_backward_timeline_prepare(fig_job *job, cairo_t *measure, const analysis *a);
int fig_occupancy_prepare(fig_job *job, cairo_t *measure, const analysis *a);
int fig_time_chart_prepare(fig_job *job, cairo_t *measure, const analysis *a, int log_axis);
/* The roofline (roofline.c): only for archives with counters (fig_roofline_wanted). */
int fig_roofline_wanted(const analysis *a);
int fig_roofline_prepare(fig_job *job, cairo_t *measure, const analysis *a);

/* compare_time.c, compare_speedup.c, compare_timeline.c: the comparison's figures. */
/* The colour of the i-th archive in every compare figure (compare_time.c). */
unsigned fig_archive_colour(int i);
int fig_compare_time_prepare(fig_job *job, cairo_t *measure, const struct compare_data *m, int log_axis);
int fig_compare_speedup_prepare(fig_job *job, cairo_t *measure, const struct compare_data *m);
/* The ratio of a run against the baseline as the tables print it (time ratio, below 1 is
 * faster; throughput ratio when the shapes differ) and its interval: 1 with *v, *lo, *hi
 * set, 0 when the cell has no ratio to draw. compare-speedup and the paper's figure share it. */
struct compare_cell;
int fig_compare_speedup_of(const struct compare_cell *c, double *v, double *lo, double *hi);
int fig_compare_timeline_prepare(fig_job *job, cairo_t *measure, const struct compare_data *m);
/* compare_model_roles.c: compare-model-roles-<pair + 1>, one per pair of model traces. */
int fig_compare_model_roles_prepare(fig_job *job, cairo_t *measure, const struct compare_data *m, int pair);

/* sweep_plot.c: the sweep's figures share one plot: a panel per head dim D, S on a
 * log2 axis, one line per variant, and where a variant stops (skipped, failed,
 * shape failed) an "x" at that S on the panel's top edge. Each figure is its own
 * file (sweep_time.c, sweep_tflops.c, sweep_memory.c, sweep_kernels.c) and only
 * says what to plot. */
typedef enum fig_sweep_metric {
    FIG_SWEEP_TIME,
    FIG_SWEEP_TFLOPS,
    FIG_SWEEP_MEMORY,
    FIG_SWEEP_OPS,
    FIG_SWEEP_KV_GBPS
} fig_sweep_metric;
typedef struct fig_sweep_spec {
    const char *title, *subtitle, *axis;
    const char *x_axis; /* NULL: "sequence length S" */
    fig_sweep_metric metric;
    int log_y;
    int decode_only;    /* panels only for the families with fewer queries than keys */
    double capacity; /* a dashed horizontal line at this value (NAN: none) */
    const char *capacity_label;
} fig_sweep_spec;
int fig_sweep_draw(cairo_t *cr, const fig_job *job, const fig_sweep_spec *spec);
double fig_sweep_height(const struct sweep_data *m);
/* Prepares a sweep figure's job: its file name, caption and draw function, the full width and
 * the height of m's panels. Returns 0. */
int fig_sweep_job(fig_job *job, const struct sweep_data *m, const char *name, const char *caption,
                  int (*draw)(cairo_t *cr, const fig_job *job));
int fig_sweep_time_prepare(fig_job *job, cairo_t *measure, const struct sweep_data *m);
int fig_sweep_tflops_prepare(fig_job *job, cairo_t *measure, const struct sweep_data *m);
int fig_sweep_memory_prepare(fig_job *job, cairo_t *measure, const struct sweep_data *m);
int fig_sweep_kernels_prepare(fig_job *job, cairo_t *measure, const struct sweep_data *m);
int fig_sweep_decode_prepare(fig_job *job, cairo_t *measure, const struct sweep_data *m);

/* Where a prepared timeline puts its lanes (points), so tests can look at the
 * pixels of each lane. 0, or ATTN_NONE (err.h) when the job shows no forward. */
typedef struct fig_timeline_geometry {
    double x0, x1;                       /* plot area */
    double nvtx_y, api_y, gpu_y, end_y;  /* lane tops; end_y: bottom of the GPU lane */
    int64_t t0_ns, t1_ns;                /* times at x0 and x1 */
} fig_timeline_geometry;
int fig_timeline_geometry_of(const fig_job *job, fig_timeline_geometry *g);

/* Display name of an op: short_kernel_name() for kernels (the full name when
 * that comes back empty), "memcpy DtoD" or "memset" for the others. */
void fig_op_label(const gpu_op *op, char *out, size_t n);

/* Shared by the figures: "B=1 H=16 S=1024 D=64". */
void fig_shape_text(const analysis *a, char *out, size_t n);
/* The forward drawn for a variant in one-forward figures: the median one
 * (analysis_median_forward), or ATTN_NONE. */
int fig_middle_forward(const variant_analysis *va);
/* The overview's labels of a variant: "median CUDA 2.25 ms" and "median CPU 160 µs", the
 * medians over all forwards that the summary table shows (not the drawn forward's own). */
void fig_overview_label(const variant_analysis *va, char *cuda, size_t n_cuda, char *cpu, size_t n_cpu);
/* Legend: colour swatches with labels, wrapped to `maxw`; returns its height. */
typedef struct fig_legend_item {
    rgb colour;
    const char *label;
    int style; /* 0 box, 1 outlined box, 2 line */
} fig_legend_item;
double fig_legend(cairo_t *cr, double x, double y, double maxw, const fig_legend_item *items,
                  int n, int draw);
/* The same legend in `font` points (swatches scale with it). */
double fig_legend_sized(cairo_t *cr, double x, double y, double maxw, const fig_legend_item *items, int n,
                        double font, int draw);

/* ---- paper.c: figures at a paper's size (--figure-size) ------------------ */

/* The smallest text of a paper-sized figure, in points at its printed size. */
#define FIG_PAPER_MIN_PT 8.0
/* jobs[0..1]: timeline-compact-<size> and occupancy-table-<size>, drawn at 3.5 in
 * (FIG_SIZE_COLUMN) or 7 in (FIG_SIZE_TEXT) wide. EXIT_OK, or an EXIT_* code. */
int fig_paper_prepare(fig_job *jobs, cairo_t *measure, const analysis *a, int size);
/* compare-speedup-<size>: every run's speed-up over the baseline per variant. */
struct compare_data;
int fig_paper_compare_prepare(fig_job *job, cairo_t *measure, const struct compare_data *m, int size);

#endif
