/* The sm_90a fused backward of flash (kernels/attn_bwd_sm90a.cu), head dims 128 and 64: FlashAttention-3's
 * design (wgmma, TMA, a producer warp and two consumer warpgroups) in place of the mma.sync kernel
 * of kernels/attn_bwd_tc.cu, for the same tensors: [B, H, S, D] contiguous bf16, scale 1/sqrt(D),
 * causal or not, lse [bh*seq] natural-log log-sum-exp of the scaled scores.
 *
 * BENCH-ONLY, NEVER RUN ON A GPU (written 2026-12-04 without a device): not attnprof's default,
 * not in the recorder; bench/bwd_tc_bench runs it beside the mma.sync configurations and checks it
 * against the FP32 reference there (bench/bwd_wgmma_h200.sh). Until that check has passed on an
 * H200 its results are not to be trusted.
 *
 * Three kernels per backward, as attn_bwd_tc.cu: a pre-pass (delta = rowsum(dO o O), lse * log2 e,
 * both padded to whole 64-row tiles, and the FP32 dQ accumulator zeroed), the main kernel, and the
 * dQ conversion. None synchronizes; each returns the launch status. Built only for sm_90a, and only
 * into the bench (the Makefile keeps it out of the recorder). */
#ifndef ATTNPROF_ATTN_BWD_SM90A_H
#define ATTNPROF_ATTN_BWD_SM90A_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero when this process can run the kernels: a device of compute capability 9.0 and the
 * driver's tensor-map encoder. */
int attn_bwd_sm90a_available(void);

/* The main kernel's configurations: head dim, keys per block (block_n), query rows per step
 * (block_m), ring stages of the Q/dO tiles; dq_atomic: 0 adds each step's dQ tile to the FP32
 * accumulator by one TMA reduce-add from shared memory (FA3's way), 1 by red.global.add from the
 * registers (attn_bwd_tc.cu's way; a name ending _red); overlap: 1 keeps a step's dK product in
 * flight under the next step's first products (FA3's order), 0 waits for all of a step's
 * products at its end (a name ending _serial). */
typedef struct attn_bwd_sm90a_config {
    int head_dim, block_n, block_m, stages, dq_atomic, overlap;
    const char *name;
} attn_bwd_sm90a_config;
int attn_bwd_sm90a_config_count(void);
const attn_bwd_sm90a_config *attn_bwd_sm90a_config_at(int i);

/* Workspace floats: the dQ accumulator [bh*seq*dim], then lse * log2 e and delta, [bh][seq
 * rounded up to 64] each. */
size_t attn_bwd_sm90a_workspace_floats(int bh, int seq, int dim);

/* The backward; workspace of attn_bwd_sm90a_workspace_floats (16-byte aligned); config an index of
 * the table. cudaErrorInvalidValue for a dim other than 64 and 128 or not the config's, bh < 1,
 * seq < 1, bh*seq*dim >= 2^31 or an unknown config; cudaErrorNotSupported without the
 * tensor-map encoder. */
cudaError_t launch_attn_bwd_sm90a(const void *q, const void *k, const void *v, const void *out, const void *dout,
                                  const float *lse, float *workspace, void *dq, void *dk, void *dv, int bh, int seq,
                                  int dim, int causal, int config, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
