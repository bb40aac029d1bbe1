/* The parts of compare.md inside the docs layer (compare_doc.c walks them as a table of
 * sections): the numbers as text (compare_doc_text.c), the kernels of a variant
 * (compare_doc_kernels.c) and the model traces (compare_doc_traces.c). */
#ifndef ATTNPROF_COMPARE_DOC_MD_H
#define ATTNPROF_COMPARE_DOC_MD_H

#include "compare.h"
#include "figures.h"

#include <stddef.h>
#include <stdio.h>

/* What every section of compare.md is written from. */
typedef struct compare_doc_md {
    const compare_data *m;
    const figure_list *figs;   /* may be NULL: no figures */
    const char *inline_dir;    /* set: figures inlined from this directory (compare.html) */
} compare_doc_md;

/* One section of compare.md: `applies` NULL means always; `write` writes it whole. */
typedef struct compare_section {
    const char *name;
    int (*applies)(const compare_doc_md *d);
    void (*write)(FILE *f, const compare_doc_md *d);
} compare_section;

/* A run's measure: µs as a table column, or TFLOP/s when the shapes differ. */
void compare_md_metric_text(const compare_data *m, double v, char *out, size_t n);
/* "622 µs (620 µs – 627 µs, n=20)", or why there is no number (st: the cell's metric or CPU
 * stats). */
void compare_md_cell_text(const compare_data *m, const compare_cell *c, const stats *st, char *out, size_t n);
/* "0.93× [0.92–0.94] **faster**", "–" without a verdict. */
void compare_md_ratio_text(const compare_ratio *r, char *out, size_t n);

/* What the comparison is, producers first, before any tool version: "attnprof's kernels
 * against PyTorch's", "cuDNN 9.14 against 9.19", "NVIDIA H200 against NVIDIA A100" (the
 * baseline's first; "; " between them); "" when the runs' producers, cuDNN and cuBLAS releases
 * and GPUs are the same. Plain text of archive values. */
void compare_headline(const compare_data *m, char *out, size_t n);

/* One variant's kernels against the baseline's, by role (compare_doc_kernels.c). */
void compare_md_kernel_section(FILE *f, const compare_data *m, const compare_variant *cv);
/* "## Model traces, step by step", where the runs hold model traces (compare_doc_traces.c). */
void compare_md_traces_section(FILE *f, const compare_data *m, const figure_list *figs, const char *inline_from_dir);

#endif
