/* "What the trace revealed": findings derived from the records of each variant,
 * never typed in. Called by analysis_build once every variant is grouped. */
#ifndef ATTNPROF_FINDINGS_H
#define ATTNPROF_FINDINGS_H

#include "analysis.h"

void findings_derive(analysis *a);

/* Pure predicates on kernel names, shared with the report and tested. */
int gemm_on_cuda_cores(const char *kernel_name); /* FP32 FFMA/SIMT GEMM rather than tensor cores */
int builds_mask(const char *kernel_name);        /* ones/tril/triu/where → additive bias */
int safe_softmax_check(const char *kernel_name); /* isneginf / row all / where-zero after softmax */

/* Median over forwards of (count, summed µs) of the ops matching `pred`. */
typedef int (*op_predicate)(const gpu_op *op);
/* "256 MiB", "4 B". */
const char *human_bytes(double bytes, char *buf, size_t n);
void per_forward_median(const variant_analysis *va, op_predicate pred, int *count, double *us);

#endif
