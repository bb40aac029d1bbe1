/* Backward kernels of attnprof's variants (kernels/attn_bwd.cu), causal, scale 1/sqrt(D),
 * tensors [B, H, S, D] contiguous, bf16 unless said otherwise. None synchronizes; each returns
 * the launch status.
 *
 * The unfused chains (naive, math) need only softmax's backward (PyTorch's
 * _softmax_backward_data): dx = p * (dp - rowsum(dp * p)), one block per row.
 *
 * The fused backward of flash and efficient is FlashAttention-2's algorithm with plain FP32
 * arithmetic (no tensor cores yet): a pre-pass delta_i = dO_i · O_i, then a kernel with K/V
 * tiles outer that recomputes P from the saved log-sum-exp and accumulates dK and dV of its 64
 * keys over every query row, and a second kernel with Q tiles outer for dQ (a separate pass, so
 * dQ needs no atomics). The kernels are named attnprof_bwd_*. */
#ifndef ATTNPROF_ATTN_BWD_H
#define ATTNPROF_ATTN_BWD_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dx[r, :] = p[r, :] * (dp[r, :] - sum_j dp[r, j] * p[r, j]) for `rows` rows of `cols`; dx may be dp. */
cudaError_t launch_softmax_bwd_bf16(const void *p, const void *dp, void *dx, size_t rows, int cols, cudaStream_t s);
cudaError_t launch_softmax_bwd_f32(const float *p, const float *dp, float *dx, size_t rows, int cols, cudaStream_t s);

/* The largest head dim the fused backward takes (its shared-memory tiles are FP32). */
#define ATTN_BWD_MAX_DIM 128

/* lse[B*H*S] (natural log) of the causal scores, recomputed from q and k: for a forward that
 * keeps none (efficient). */
cudaError_t launch_attn_bwd_lse(const void *q, const void *k, float *lse, int bh, int seq, int dim, cudaStream_t s);
/* The fused backward: delta [B*H*S] floats of workspace; dq, dk, dv bf16 outputs. Raises the
 * kernels' shared-memory limit on first use. cudaErrorInvalidValue unless dim is a multiple of 8 in
 * [8, ATTN_BWD_MAX_DIM] and bh, seq >= 1. Three kernels: delta, dK/dV, dQ. */
cudaError_t launch_attn_bwd_fused(const void *q, const void *k, const void *v, const void *out, const void *dout,
                                  const float *lse, float *delta, void *dq, void *dk, void *dv, int bh, int seq,
                                  int dim, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
