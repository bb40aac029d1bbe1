/* "What the trace revealed": findings derived from the records of each variant,
 * never typed in. They take a finished analysis (analysis_build) and fill each
 * variant's findings; analysis itself knows nothing of them. */
#ifndef ATTNPROF_FINDINGS_H
#define ATTNPROF_FINDINGS_H

#include "analysis.h"

/* Fills a->v[i].findings for every variant of a built analysis. */
void findings_derive(analysis *a);

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
 * 0 with *library (static) and *next set, or -1 when no library is recognised. */
int findings_memset_library(const trace *t, const forward *f, int k, const char **library, const gpu_op **next);

/* "256 MiB", "4 B". */
const char *human_bytes(double bytes, char *buf, size_t n);

#endif
