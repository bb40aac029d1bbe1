/* report.md's backward summary (run --backward archives): per variant whether its backward
 * ran, the GPU operations per backward (what the attn_bwd ranges of trace.json hold, by kind, and
 * the variant's prediction), the CUDA-event median and the CUDA time of the recorded backwards,
 * the three gradients' errors against FP64, what the forward keeps for the backward, and the
 * backward's findings (FK_BWD_*) as the summary's cell shows the forward's. */
#ifndef ATTNPROF_BACKWARD_SECTION_H
#define ATTNPROF_BACKWARD_SECTION_H

#include <stdio.h>

#include "analysis.h"

int backward_section_applies(const analysis *a);
void backward_section_md(FILE *f, const analysis *a);

#endif
