/* "What the trace revealed": findings derived from the records of each variant,
 * never typed in. They take a finished analysis (analysis_build) and fill each
 * variant's findings; analysis itself knows nothing of them. */
#ifndef ATTNPROF_FINDINGS_H
#define ATTNPROF_FINDINGS_H

#include "analysis.h"
#include "finding.h"

#include <stdio.h>

/* Fills a->v[i].findings for every variant of a built analysis: the walk of the finding
 * table's series and model-trace rows (findings.c holds the table). The counters' rows
 * are walked by predict_findings (predict.h), which needs counters. */
void findings_derive(analysis *a);
/* 1 when the variant is a model trace: an imported run whose steps hold CPU op chains (a
 * PyTorch trace); the series' host_bound is then left to model_findings.c. */
int findings_model_trace(const analysis *a, const variant_analysis *va);
/* findings_decode.c: the decode_bandwidth finding of variant vi (the finding table's derive; 0). */
int decode_bandwidth_finding(analysis *a, int vi);

/* Pure predicates on kernel names, shared with the report and tested. */
int gemm_on_cuda_cores(const char *kernel_name); /* FP32 FFMA/SIMT GEMM rather than tensor cores */
int builds_mask(const char *kernel_name);        /* ones/tril/triu/where → additive bias */
int safe_softmax_check(const char *kernel_name); /* isneginf / row all / where-zero after softmax */

/* A kernel's short name (short_kernel_name) for a sentence: at most
 * FINDING_NAME_MAX characters, a longer one ends in "…" (never cut silently). */
#define FINDING_NAME_MAX 64
void findings_short_name(const char *kernel_name, char *out, size_t n);
/* The launch API of a launcher as itself: "cudaLaunchKernelExC" is not
 * "cudaLaunchKernel". Returns a static string or l->name. */
const char *findings_launch_api_name(const api_call *l);
/* The library that issued the Memset ops[k] of forward f: the first kernel launched
 * after the Memset's API call on the same host thread inside the forward, with no
 * launch between, names it (cuBLAS, cuDNN or attnprof, from the kernel's name).
 * 0 with *library (static) and *next set, or ATTN_NONE (err.h) when no library is recognised. */
int findings_memset_library(const trace *t, const forward *f, int k, const char **library, const gpu_op **next);

/* ---- provenance ----------------------------------------------------------- */

/* Where a kernel comes from, from its name: "ours" (attnprof_*), "cuDNN", "cuBLAS",
 * "PyTorch" (ATen, PyTorch's flash and memory-efficient kernels) or "unattributed". */
const char *findings_kernel_origin(const gpu_op *o);
/* The distinct origins of the kernels of a variant's representative forward,
 * comma-separated in launch order ("" when it has no kernel). */
void findings_origins(const variant_analysis *va, char *out, size_t n);
/* Fills r->variants[i].kernel_origin from the records (before run.json is written).
 * EXIT_OK, or EXIT_BAD_ARCHIVE with err set when the trace cannot be analysed. */
int findings_record_provenance(run_info *r, const trace *t, char *err, size_t errlen);
/* run.json's kernel_origin of the variant, or (older archives) derived now into buf. */
const char *findings_variant_origin(const analysis *a, const variant_analysis *va, char *buf, size_t n);
/* The first kernel of the variant's representative forward that Kineto's default
 * shared-memory limit sets to 0%: 1 with it, its launcher and whether the 0% is
 * Kineto's own number (an import) rather than its formula applied here. */
int findings_kineto_zero(const analysis *a, const variant_analysis *va, const gpu_op **op, const api_call **via,
                         int *own);

/* "256 MiB", "4 B". */

#endif
