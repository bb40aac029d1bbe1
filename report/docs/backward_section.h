/* report.md's backward summary (run --backward archives): per variant whether its backward
 * ran, the GPU operations per backward (the variant's prediction and what the attn_bwd ranges
 * of trace.json hold), the CUDA-event median, the three gradients' errors against FP64 and what
 * the forward keeps for the backward. */
#ifndef ATTNPROF_BACKWARD_SECTION_H
#define ATTNPROF_BACKWARD_SECTION_H

#include <stdio.h>

#include "analysis.h"

int backward_section_applies(const analysis *a);
void backward_section_md(FILE *f, const analysis *a);
/* GPU operations launched inside `variant`'s attn_bwd ranges, and how many ranges. */
int backward_ops(const trace *t, const char *variant, int *n_ranges);

#endif
