/* Launchers for the `math` variant's kernels (kernels/math_kernels.cu): the
 * elementwise and row steps of PyTorch's SDPA math backend, one kernel each, so a
 * trace shows every step. bf16 tensors are passed as void*. Each launcher returns
 * the launch status (cudaGetLastError after the launch); none synchronizes.
 * `matrices` counts the B·H score matrices of S×S values each. */
#ifndef ATTNPROF_MATH_KERNELS_H
#define ATTNPROF_MATH_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = (float)in[i]: query/key/value .to(float32). */
cudaError_t math_upcast_bf16_f32(const void *in, float *out, size_t n, cudaStream_t s);
/* out[i] = in[i] * factor (fp32): q * sqrt(scale), kᵀ * sqrt(scale). */
cudaError_t math_mul_scale_f32(const float *in, float *out, size_t n, float factor, cudaStream_t s);
/* out[i] = 1 over an S×S bool matrix: torch.ones(S, S, dtype=bool). */
cudaError_t math_ones_u8(uint8_t *out, int S, cudaStream_t s);
/* out[i, j] = in[i, j] if j <= i else 0: .tril(). */
cudaError_t math_tril_u8(const uint8_t *in, uint8_t *out, int S, cudaStream_t s);
/* *out = -inf: the 0-dim device tensor at::scalar_tensor(-inf) of the mask conversion. */
cudaError_t math_mask_fill_neginf(float *out, cudaStream_t s);
/* bias[i] = 0 where the element is kept, *neginf where it is masked out. An element is
 * kept when (cond[i] != 0) == cond_is_keep: the causal path passes the tril (nonzero =
 * keep, cond_is_keep = 1), forward_masked the caller's mask (nonzero = masked, 0). */
cudaError_t math_where_bias(const uint8_t *cond, int cond_is_keep, const float *neginf, float *bias,
                            int S, cudaStream_t s);
/* scores[m, i, j] += bias[i, j] for every matrix m: attn.add_(attn_mask). */
cudaError_t math_add_bias(float *scores, const float *bias, size_t matrices, int S, cudaStream_t s);
/* Decode's rectangular forms ([rows, cols]: fewer queries than keys), the tril's diagonal at
 * cols - rows (the causal mask aligned to the end of the keys, torch.ones(L, S).tril(S - L)). */
cudaError_t math_ones_rect_u8(uint8_t *out, int rows, int cols, cudaStream_t s);
cudaError_t math_tril_rect_u8(const uint8_t *in, uint8_t *out, int rows, int cols, cudaStream_t s);
cudaError_t math_where_bias_rect(const uint8_t *cond, int cond_is_keep, const float *neginf, float *bias, int rows,
                                 int cols, cudaStream_t s);
cudaError_t math_add_bias_rect(float *scores, const float *bias, size_t matrices, int rows, int cols, cudaStream_t s);
/* Grouped-query: key.repeat_interleave(group, -3) of the upcast K or V, [batch, kv_heads, S, D]
 * (head_elems = S*D) to [batch, kv_heads * group, S, D]: one copy kernel each. */
cudaError_t math_repeat_interleave_f32(const float *in, float *out, int batch, int kv_heads, int group,
                                       size_t head_elems, cudaStream_t s);
/* Row softmax over `cols` values, fp32 in and out (a row of -inf gives NaN, as in PyTorch). */
cudaError_t math_softmax_f32(const float *in, float *out, size_t rows, int cols, cudaStream_t s);
/* out[i] = (in[i] == -inf): self.isneginf() of _safe_softmax. */
cudaError_t math_isneginf(const float *in, uint8_t *out, size_t n, cudaStream_t s);
/* out[r] = all(in[r, :]): all(masked, dim=-1). */
cudaError_t math_row_all(const uint8_t *in, uint8_t *out, size_t rows, int cols, cudaStream_t s);
/* *out = 0: the 0-dim tensor at::scalar_tensor(0.0) of _safe_softmax. */
cudaError_t math_where_zero_fill(float *out, cudaStream_t s);
/* p[r, j] = *zero where row_all[r], else unchanged: at::where_out(out, masked_rows, zero, out). */
cudaError_t math_where_zero(const uint8_t *row_all, const float *zero, float *p, size_t rows, int cols,
                            cudaStream_t s);
/* out[i] = bf16(in[i]), round to nearest even: the output's .to(bfloat16). */
cudaError_t math_downcast_f32_bf16(const float *in, void *out, size_t n, cudaStream_t s);
/* The same conversion for the attention probabilities: attn.to(origin_dtype), which the
 * math backend returns beside the output and the caller of SDPA discards. */
cudaError_t math_downcast_probs_f32_bf16(const float *in, void *out, size_t n, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
