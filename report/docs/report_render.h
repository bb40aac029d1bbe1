/* The report of one archive, rendered and committed (report_render.c). */
#ifndef ATTNPROF_REPORT_RENDER_H
#define ATTNPROF_REPORT_RENDER_H

#include <stddef.h>

#include "run_info.h"
#include "trace.h"

typedef struct report_render_options {
    unsigned formats;      /* FIG_* bits; PNG is always drawn (report.html inlines it) */
    int log_axis;          /* the time chart's axis logarithmic */
    int quiet;             /* no terminal summary, no "waiting for" line */
    int pdf;               /* report.pdf through Chromium, when installed */
    int figure_size;       /* FIG_SIZE_*: also the paper-sized figures */
    const char *reference; /* --reference DIR, or NULL */
    int clean;             /* --clean: a re-render removes the outputs it does not make itself */
} report_render_options;

/* Analysis, figures and report for an archive whose trace.json and run.json are `t` and
 * `r`, written into `dir`; then report.pdf (o->pdf) and, unless quiet, the terminal
 * summary. EXIT_OK, EXIT_BAD_ARCHIVE (records that cannot be analysed or drawn, a bad
 * --reference) or EXIT_IO, with the line in `err`. */
int report_render(const char *dir, const trace *t, const run_info *r, const report_render_options *o, char *err,
                  size_t errlen);

/* Re-renders the archive directory `archive` (read into t and r) in place: under an
 * exclusive lock on the directory, after finishing or removing what a killed render
 * left, rendered into a staging folder and moved in so that every output is replaced
 * together or not at all; a failure leaves the previous report as it was. What earlier
 * renders made with other options (column-size PDFs, report.pdf, SVGs) stays, unless
 * o->clean. EXIT_OK, or report_render's codes. */
int report_rerender_archive(const char *archive, const trace *t, const run_info *r, const report_render_options *o,
                            char *err, size_t errlen);

/* Renders the archive `archive` (read into t and r) into OUT, a directory of its own: new, or
 * replaced whole under `force` (else EXIT_OUTPUT_EXISTS); the archive is only read. OUT may
 * not be, hold or lie inside the archive (EXIT_USAGE). EXIT_OK, or report_render's codes. */
int report_render_elsewhere(const char *archive, const char *out, int force, const trace *t, const run_info *r,
                            const report_render_options *o, char *err, size_t errlen);

#endif
