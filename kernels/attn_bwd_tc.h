/* The tensor-core fused backward of flash and efficient (kernels/attn_bwd_tc.cu), head dims 64
 * and 128: FlashAttention-2's algorithm on mma.sync m16n8k16 (bf16 inputs, FP32 accumulation).
 * Tensors [B, H, S, D] contiguous bf16, scale 1/sqrt(D), causal or not. Three kernels per
 * backward: a pre-pass delta_i = dO_i · O_i that also zeroes the FP32 dQ accumulator, the main
 * kernel (K/V tiles outer, one block per key tile; Q/dO tiles inner; P recomputed from the
 * saved log-sum-exp; dK, dV in registers; dQ added to the accumulator with atomics), and a pass
 * that converts the accumulator to bf16 dQ. A forward that keeps no log-sum-exp (efficient)
 * runs launch_attn_bwd_tc_lse first. Kernels are named attnprof_bwd_tc_*. None synchronizes;
 * each returns the launch status. */
#ifndef ATTNPROF_ATTN_BWD_TC_H
#define ATTNPROF_ATTN_BWD_TC_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero when the tensor-core backward has kernels for head dim `dim` (64, 128). */
int attn_bwd_tc_supports(int dim);

/* The main kernel's tile configurations: keys per block (block_n), query rows per inner step
 * (block_m), blocks per multiprocessor asked of the register allocator; shared_p: 0 for the
 * body whose warps own 16 keys each (P^T and dS^T stay in registers), 1 for FA2's layout (8
 * warps, 128 keys x block_m queries: 32 keys x block_m/2 queries a warp for S^T, P^T and dS^T
 * shared through shared memory, 32 keys x D/2 of dK and dV a warp) with each warp's own half
 * of P^T and dS^T kept in registers, 2 the same with all of it read back from shared memory
 * (a name ending _stm: stored by stmatrix); grouped: 0 numbers the blocks key
 * tile by key tile across all heads, 1 in groups of heads whose Q, dO and dQ accumulator fit
 * half the L2 (kernels/flash_tile_order.h); a name ending _dqf: the dQ product before the dK/dV
 * update of each step. attn_bwd_tc_default_config_masked picks the measured best for a head dim
 * and mask (-1: none), the one launch_attn_bwd_tc runs for config -1;
 * attn_bwd_tc_default_config(dim) is the causal one (attnprof's run is causal). */
typedef struct attn_bwd_tc_config {
    int head_dim, warps, block_n, block_m, min_blocks, shared_p, grouped;
    const char *name;
} attn_bwd_tc_config;
int attn_bwd_tc_config_count(void);
const attn_bwd_tc_config *attn_bwd_tc_config_at(int i);
int attn_bwd_tc_default_config(int dim);
int attn_bwd_tc_default_config_masked(int dim, int causal);

/* Workspace floats: delta [bh*seq] and the dQ accumulator [bh*seq*dim]. */
size_t attn_bwd_tc_workspace_floats(int bh, int seq, int dim);

/* The backward: lse [bh*seq] natural-log log-sum-exp of the scaled scores; workspace of
 * attn_bwd_tc_workspace_floats (16-byte aligned); config -1 for the default. cudaErrorInvalidValue
 * for an unsupported dim, bh < 1, seq < 1 or bh*seq*dim >= 2^31. */
cudaError_t launch_attn_bwd_tc(const void *q, const void *k, const void *v, const void *out, const void *dout,
                               const float *lse, float *workspace, void *dq, void *dk, void *dv, int bh, int seq,
                               int dim, int causal, int config, cudaStream_t s);

/* lse [bh*seq] (natural log) recomputed from q and k on the tensor cores. */
cudaError_t launch_attn_bwd_tc_lse(const void *q, const void *k, float *lse, int bh, int seq, int dim, int causal,
                                   cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
