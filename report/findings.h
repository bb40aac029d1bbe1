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

/* "256 MiB", "4 B". */
const char *human_bytes(double bytes, char *buf, size_t n);

#endif
