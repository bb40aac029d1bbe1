/* report.md (GitHub-flavoured Markdown: report.c, a table of sections), report.html (the
 * same through cmark-gfm inside templates/report.html, images inlined: report_html.c), the
 * figures' Markdown (report_figure.c) and the terminal's summary (report_terminal.c), from an
 * analysis. The CSVs are report_csv.h's. */
#ifndef ATTNPROF_REPORT_H
#define ATTNPROF_REPORT_H

#include "analysis.h"
#include "figures.h"
#include "report_csv.h"
#include "units.h"

#include <stdio.h>

/* Markdown text of the report (malloc'd). Images link to `figs` paths relative to
 * the archive, or, when `inline_from_dir` is set, are embedded as data: URIs read
 * from that directory. */
char *report_markdown(const analysis *a, const figure_list *figs, const char *inline_from_dir);
/* Another archive's numbers beside ours (--reference DIR: e.g. PyTorch's variants
 * on the same GPU, imported): its analysis and a label for the column. */
typedef struct report_reference {
    const analysis *a;
    char label[128];
} report_reference;
/* report_markdown with a reference column (ref may be NULL). */
char *report_markdown_ref(const analysis *a, const figure_list *figs, const char *inline_from_dir,
                          const report_reference *ref);
/* Markdown → complete HTML page (malloc'd), or NULL with `err` set. */
char *report_html(const char *markdown, const char *title, char *err, size_t errlen);

/* Pieces the other documents (compare.md/.html/.csv) share with the report. */
/* A figure as Markdown: the PNG (or SVG) image, inlined as a data: URI when
 * `inline_dir` is set, then its caption and links to the vector files. */
void report_md_figure(FILE *f, const figure_list *figs, const char *name, const char *inline_dir);

/* The terminal's summary after run/import/report: one line per variant, its
 * findings by id; what is not recorded is said, never printed as nan or -1. */
void report_terminal_summary(FILE *f, const analysis *a);

/* "93.4 µs (90.1 µs – 97.0 µs, n=20)": median, range and count, in prose units (format_us). */
void format_time_stats(const stats *s, char *out, size_t n);

#endif
