/* The report's figures, drawn with Cairo from the archive in memory (trace +
 * run_info + analysis), so `attnprof report` needs no GPU:
 *   timeline-<variant>  CPU lane (NVTX ranges, API calls) over GPU lane, 1-3 forwards
 *   timeline-overview   one forward of every variant on one time scale
 *   timeline-backward   one backward of every variant on one time scale (archives with backwards)
 *   occupancy           theoretical vs estimated occupancy of each variant's kernels
 *   time-per-forward    CUDA vs CPU time per forward (median, min-max)
 *   roofline            kernels' achieved FLOP/s vs arithmetic intensity (archives with counters)
 * and compare's (compare-time, compare-speedup, compare-timeline, compare-model-roles-<N> per
 * pair of model traces) and the sweep's (sweep-time, -tflops, -memory, -kernels).
 * Files go to <dir>/figures/<figure>.<png|svg|pdf>; the same input gives the
 * same bytes. */
#ifndef ATTNPROF_FIGURES_H
#define ATTNPROF_FIGURES_H

#include <stddef.h>

#include "analysis.h"
#include "compare.h"
#include "sweep.h"

enum { FIG_PNG = 1, FIG_SVG = 2, FIG_PDF = 4 };
/* Figure sizes (--figure-size): screen is the report's own; column (3.5 in) and
 * text (7 in) add paper-sized figures whose text is at least 8 pt at that size. */
enum { FIG_SIZE_SCREEN = 0, FIG_SIZE_COLUMN = 1, FIG_SIZE_TEXT = 2 };
/* Every function here that can fail returns an exit code (exit_codes.h) where the failure is
 * known: EXIT_OK; EXIT_IO for the disk or memory; EXIT_BAD_ARCHIVE when cairo refused what the
 * archive holds (text that is not UTF-8), the archive's fault and not the disk's. */

typedef struct figure_file {
    char path[256];    /* relative to `dir`: "figures/timeline-naive.png" */
    char caption[256]; /* one sentence for the report */
    char kind[16];     /* "png", "svg", "pdf" */
    char figure[64];   /* "timeline-naive", "timeline-overview", "occupancy", "time-per-forward" */
} figure_file;

typedef struct figure_list {
    int n;
    figure_file *files;
} figure_list;

/* Renders every figure in every requested format (FIG_* bits) into
 * <dir>/figures/ (created if missing). `log_axis` makes the time chart's axis
 * logarithmic. Returns EXIT_OK; on failure EXIT_IO (I/O, memory) or EXIT_BAD_ARCHIVE
 * (cairo refused the archive's text) with a one-line reason in `err`, and `out` lists
 * the files written so far. Each figure has its own file name, even for variants
 * whose names differ only in characters a file name cannot hold ("a/b", "a_b"). */
int figures_render(const analysis *a, const char *dir, unsigned formats, int log_axis,
                   figure_list *out, char *err, size_t errlen);
void figure_list_free(figure_list *l);
/* The paper-sized figures (FIG_SIZE_COLUMN or FIG_SIZE_TEXT): figures/timeline-
 * compact-<size> and figures/occupancy-table-<size> in every requested format,
 * appended to `out`. FIG_SIZE_SCREEN adds nothing. Returns as figures_render. */
int figures_render_paper(const analysis *a, const char *dir, unsigned formats, int size, figure_list *out,
                         char *err, size_t errlen);

/* The comparison's figures (compare.h) into <dir>/figures (figures/render.c). */
int compare_figures_render(const compare_data *m, const char *dir, unsigned formats, int log_axis,
                           figure_list *out, char *err, size_t errlen);
/* figures/compare_timeline.c: the label at the end of a lane of compare-timeline,
 * "CUDA 61.9 µs (median) · span 74.0 µs incl. idle" (short_form: the first part):
 * the variant's median CUDA time as the CUDA-time table prints it, and the drawn
 * (median) forward's span. Empty when the cell has no forward. */
void compare_timeline_label(const compare_cell *c, int short_form, char *out, size_t n);
/* figures/compare_model_roles.c, the figure of a pair of model traces (compare-model-roles-<N>):
 * the rows it draws top to bottom, as indices into pr->rows written to `order` (room for
 * TRACE_MAX_ROWS): per phase, its attention roles, their sum, then its other roles. Returns
 * their count, every row of the pair once (pr->n_rows). */
int compare_model_roles_order(const trace_pair *pr, int *order);
/* The text beside a row: `ratio` "0.07× [0.07–0.07]" with `verdict` "faster"; "0.59× (medians)"
 * and an empty verdict below COMPARE_MIN_STEPS steps a side; "only in <run>" when one side
 * lacks the role. */
void compare_model_roles_ratio_text(const compare_data *m, const trace_pair *pr, const trace_role_row *row,
                                    char *ratio, size_t n_ratio, char *verdict, size_t n_verdict);
/* The paper-sized comparison figure (FIG_SIZE_COLUMN or _TEXT), appended to `out`. */
int compare_figures_render_paper(const compare_data *m, const char *dir, unsigned formats, int size,
                                 figure_list *out, char *err, size_t errlen);

/* The sweep's four figures (sweep.h) into <dir>/figures (figures/render.c). */
int sweep_figures_render(const sweep_data *m, const char *dir, unsigned formats, figure_list *out, char *err,
                         size_t errlen);

#endif
