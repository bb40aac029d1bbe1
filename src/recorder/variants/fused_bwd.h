/* The fused backward of flash and efficient: the tensor-core one (kernels/attn_bwd_tc.h) at head
 * dims 64 and 128, the FP32 one (kernels/attn_bwd.h) at the others. One helper both variants'
 * backward calls with the log-sum-exp their forward kept (flash) or none (efficient: the
 * backward recomputes it first, one more kernel). Multi-head shapes, head dims up to
 * ATTN_BWD_MAX_DIM. */
#ifndef ATTNPROF_FUSED_BWD_H
#define ATTNPROF_FUSED_BWD_H

#include "variant.h"

/* delta [B*H*S] floats, and the recomputed lse when the forward keeps none. */
size_t fused_bwd_workspace_bytes(const attn_shape *s);
int fused_bwd_check_shape(const attn_shape *s, attn_error *why);
/* lse: the forward's, or NULL (recomputed into the workspace). */
int fused_bwd_run(const attn_shape *s, const void *q, const void *k, const void *v, const void *out,
                  const void *dout, const float *lse, void *dq, void *dk, void *dv, void *workspace,
                  cudaStream_t stream, attn_error *err);
/* Operations per backward: delta, dK/dV, dQ (tensor cores: delta and the dQ zeroing, dK/dV with dQ
 * atomics, dQ convert), and the lse recompute when there is none kept. */
#define FUSED_BWD_OPS 3

#endif
