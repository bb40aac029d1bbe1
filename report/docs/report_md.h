/* The parts of report.md inside the docs layer (report.c walks them): the document a section
 * writes from, and the pieces more than one section uses. report.h is the public side. */
#ifndef ATTNPROF_REPORT_MD_H
#define ATTNPROF_REPORT_MD_H

#include "report.h"

#include <stdio.h>

/* What every section of report.md is written from. */
typedef struct report_doc {
    const analysis *a;
    const figure_list *figs;        /* may be NULL: no figures */
    const char *inline_dir;         /* set: figures inlined from this directory (report.html) */
    const report_reference *ref;    /* may be NULL: no reference column */
} report_doc;

/* One section of report.md: `applies` NULL means always; `write` writes it whole. */
typedef struct report_section {
    const char *name;
    int (*applies)(const report_doc *d);
    void (*write)(FILE *f, const report_doc *d);
} report_section;

/* What an archive does not hold, in every table cell that would hold it. */
#define REPORT_NOT_RECORDED "not recorded"

/* Markdown we wrote (findings) inside a table cell: an unescaped '|' escaped, a newline a
 * space; archive strings inside it were escaped when the sentence was written
 * (report_md_cells.c). */
void report_md_cell(FILE *f, const char *s);
/* " **FAILED**", " *(skipped)*", " *(unavailable)*" or "" after a variant's name. */
const char *report_status_word(const variant_result *r);

/* The title, the table of what the run was and how it was measured (report_header.c). */
void report_header_md(FILE *f, const analysis *a);
/* "## Variants" and each variant's section (report_variants.c). */
void report_variants_md(FILE *f, const report_doc *d);

#endif
