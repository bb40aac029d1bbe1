/* References beside our numbers: the figures the series ("Profiling in PyTorch",
 * part 3) published for its A100, as citations (never measurements), and the
 * abstract paragraph derived from the records. report.c places them. */
#ifndef ATTNPROF_SERIES_H
#define ATTNPROF_SERIES_H

#include "analysis.h"

#include <stdio.h>

/* The series' GPU as it names it; every cited number carries this label. */
#define SERIES_LABEL "A100-SXM4-80GB, the series"

/* What the series published for one variant; NAN / 0 / NULL where it gave nothing. */
typedef struct series_fact {
    const char *variant;       /* attnprof's variant name */
    int kernels;               /* kernels per forward */
    double fwd_cuda_ms;        /* `*_fwd` CUDA time, average */
    double self_cuda_total_ms; /* self CUDA total of the profile */
    double cuda_us, cpu_us;    /* CUDA / CPU time per forward */
    int kineto_occ_pct;        /* Kineto's estimated achieved occupancy; -1 not given */
    int kineto_occ_approx;     /* the series writes "≈" */
    const char *kernel;        /* the kernel it names */
    const char *kernel_note;   /* e.g. "240 registers × 256 threads" */
} series_fact;

/* The series' figure for `variant`, or NULL. */
const series_fact *series_fact_of(const char *variant);

/* The variant of `ref` (a --reference archive) that stands beside our `name`: the one of that
 * name, else one whose name is ours once the prefixes of PyTorch's harness are taken off
 * (kineto_<variant>, sdpa_<backend>, kineto_sdpa_<backend>: the file names that
 * bench/torch_traces.py writes and `import` names its variants after). NULL when none. */
const variant_analysis *series_counterpart(const analysis *ref, const char *name);

/* A ratio the series discusses: CUDA time of variant x over variant y, with the series'
 * own value (from its series_facts). Every ratio of this run set beside the series'
 * (the abstract, "Beside the series") is one of these pairs, so ours compares the same
 * two variants as the number it stands next to. */
typedef struct series_ratio {
    const char *x, *y; /* attnprof's variant names */
    const char *what;  /* the series' wording, e.g. "math vs naive in-place" */
    double series;     /* the series' ratio, NAN if its facts lack a time */
    const char *basis; /* what the series' times are ("`*_fwd` CUDA time avg"), or NULL */
} series_ratio;

/* The series' ratios: *n of them, static storage. */
const series_ratio *series_ratios(int *n);
/* This run's value of a series ratio (median CUDA times), or NAN. */
double series_ratio_here(const analysis *a, const series_ratio *r);

/* The summary table's reference cell for a variant (Markdown, µs), "–" when the
 * series gave nothing for it. */
void series_cell(const char *variant, char *out, size_t n);

/* 1 when a variant of the archive is one the series published (by name, or an import
 * of the bench's harness: kineto_<variant>, sdpa_<backend>); else the report has no
 * "Beside the series" section and no series column. */
int series_applies(const analysis *a);

/* "## Beside the series" (Markdown): our numbers next to the series', the
 * ratios it discusses, and where its explanation and our records disagree. */
void series_section(FILE *f, const analysis *a);

/* The abstract: one paragraph derived from the records (fastest variant, the
 * ratios the series discusses, what differs from the expectation). */
void series_abstract(FILE *f, const analysis *a);

/* "Why Kineto reads 0%" (Markdown), from the records: Kineto's occupancy call keeps
 * the default per-block shared memory limit; the kernels above it, and their
 * launch APIs, in the median forwards. */
void series_kineto_paragraph(FILE *f, const analysis *a);
/* What a --reference archive is (label, GPU, shape, version), and whether it ran
 * on another GPU or shape. */
void series_reference_note(FILE *f, const analysis *a, const analysis *ref, const char *label);
/* "## Cite attnprof": the BibTeX entry with the version that recorded the run. */
void series_citation(FILE *f, const analysis *a);

#endif
