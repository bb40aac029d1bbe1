/* Launchers for the elementwise and softmax kernels of the unfused variants
 * (kernels/elementwise.cu). bf16 tensors are passed as void*. Each returns the
 * launch status (cudaGetLastError after the launch); none synchronizes. */
#ifndef ATTNPROF_ELEMENTWISE_H
#define ATTNPROF_ELEMENTWISE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = in[i] * scale (bf16 in/out, fp32 math); out may equal in. */
cudaError_t launch_scale_bf16(const void *in, void *out, size_t n, float scale, cudaStream_t s);
/* mask[i*S + j] = (j > i): the boolean causal mask, as torch.triu(ones, 1). */
cudaError_t launch_causal_mask_u8(uint8_t *mask, int S, cudaStream_t s);
/* x[m, i, j] = value where mask[i, j] for every matrix m of `matrices` SxS matrices. */
cudaError_t launch_masked_fill_bf16(void *x, const uint8_t *mask, size_t matrices, int S,
                                    float value, cudaStream_t s);
/* The same for decode's [rows, cols] (fewer queries than keys): key j masked for query i when
 * j > i + cols - rows, the causal mask aligned to the end of the keys. */
cudaError_t launch_causal_mask_rect_u8(uint8_t *mask, int rows, int cols, cudaStream_t s);
/* x[m, i, j] = value where mask[i, j] for every matrix m of rows x cols. */
cudaError_t launch_masked_fill_rect_bf16(void *x, const uint8_t *mask, size_t matrices, int rows, int cols,
                                         float value, cudaStream_t s);
/* Grouped-query K or V [batch, kv_heads, S, D] (head_elems = S*D) copied out to
 * [batch, kv_heads * group, S, D], query head h getting key/value head h / group: PyTorch's
 * repeat_kv (expand, then reshape), one copy kernel. */
cudaError_t launch_repeat_kv_bf16(const void *in, void *out, int batch, int kv_heads, int group, size_t head_elems,
                                  cudaStream_t s);
/* Row softmax over `cols` columns, fp32 math, bf16 in/out; out may equal in. */
cudaError_t launch_softmax_rows_bf16(const void *in, void *out, size_t rows, int cols,
                                     cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
