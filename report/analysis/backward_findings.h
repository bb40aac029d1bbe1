/* The backward's findings (run --backward): rows FK_BWD_* of the finding table (finding.h),
 * derived from the variant's attn_bwd ranges (analysis.h: backwards) and run.json's "backward"
 * object. They answer the series' questions of the backward: operations beyond the prediction,
 * hidden copies, FP32 CUDA-core GEMMs, dQ accumulated in FP32, the recompute, the bytes the
 * forward keeps for the backward, and the series' in-place advice checked. */
#ifndef ATTNPROF_BACKWARD_FINDINGS_H
#define ATTNPROF_BACKWARD_FINDINGS_H

#include "analysis.h"

/* The derive of FK_BWD_MEMSET_OUTSIDE_EXPECTATION and of every FK_BWD_* row after it. Adds
 * nothing when the archive has no backward of the variant, or it did not run ok. Returns 0. */
int backward_findings_derive(analysis *a, int vi);

#endif
