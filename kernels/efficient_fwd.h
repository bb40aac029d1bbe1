/* Memory-efficient causal attention forward in the xformers/CUTLASS style
 * (kernels/efficient_fwd.cu): one fused kernel, 64x64 tiles, working set in
 * registers, online softmax. bf16 q/k/v/out [B, H, S, D] contiguous, scale
 * 1/sqrt(D). The kernels are named attnprof_efficient_fwd_bf16_d<D>_<BM>x<BN>_w<warps>. */
#ifndef ATTNPROF_EFFICIENT_FWD_H
#define ATTNPROF_EFFICIENT_FWD_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct efficient_fwd_config {
    const char *kernel_name; /* the __global__ function's (unmangled) name */
    int head_dim;
    int block_m;             /* query rows per block */
    int block_n;             /* keys per shared-memory tile */
    int warps;
    int threads;
    size_t smem_bytes;       /* dynamic shared memory per block */
    const char *path;        /* instruction path, e.g. "mma.sync (sm_80+)" */
} efficient_fwd_config;

int efficient_fwd_config_count(void);
/* NULL when i is out of range. */
const efficient_fwd_config *efficient_fwd_config_at(int i);
/* The configuration for this head dim on a GPU of this compute capability, or
 * -1 when no kernel takes the head dim (the dispatch point between paths). */
int efficient_fwd_default_config(int head_dim, int cc_major, int cc_minor);
/* Raises the kernel's dynamic shared-memory limit (needed above 48 KB). */
cudaError_t efficient_fwd_prepare(int config);
/* Resident blocks per multiprocessor for this configuration on the current
 * device (cudaOccupancyMaxActiveBlocksPerMultiprocessor); call after prepare. */
cudaError_t efficient_fwd_blocks_per_sm(int config, int *blocks);
/* One forward. Returns the launch status; does not synchronize. */
cudaError_t launch_efficient_fwd(int config, const void *q, const void *k, const void *v,
                                 void *out, int batch, int heads, int seq, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
