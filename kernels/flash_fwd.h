/* FlashAttention-2 style causal forward (kernels/flash_fwd.cu): bf16 q/k/v/out
 * [B, H, S, D] contiguous, scale 1/sqrt(D), log-sum-exp per row into a float
 * buffer [B, H, S] (natural log, as PyTorch's softmax_lse).
 *
 * Several tile configurations are compiled; each is its own __global__ function
 * whose name says what it is (attnprof_flash_fwd_bf16_d<D>_<BM>x<BN>_w<warps>), so a
 * CUPTI record names the configuration that ran. The variant runs the default
 * configuration for its head dim; the benchmark compares them all. */
#ifndef ATTNPROF_FLASH_FWD_H
#define ATTNPROF_FLASH_FWD_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flash_fwd_config {
    const char *kernel_name; /* the __global__ function's (unmangled) name */
    int head_dim;
    int block_m;             /* query rows per block */
    int block_n;             /* keys per shared-memory tile */
    int warps;
    int threads;
    size_t smem_bytes;       /* dynamic shared memory per block */
    const char *path;        /* instruction path, e.g. "mma.sync (sm_80+)" */
} flash_fwd_config;

int flash_fwd_config_count(void);
/* NULL when i is out of range. */
const flash_fwd_config *flash_fwd_config_at(int i);
/* The configuration to run for this head dim on a GPU of this compute
 * capability, or -1 when no kernel takes the head dim. This is the dispatch
 * point between instruction paths. */
int flash_fwd_default_config(int head_dim, int cc_major, int cc_minor);
/* Raises the kernel's dynamic shared-memory limit (needed above 48 KB). Call once
 * per process and configuration before launching it. */
cudaError_t flash_fwd_prepare(int config);
/* Resident blocks per multiprocessor for this configuration on the current
 * device (cudaOccupancyMaxActiveBlocksPerMultiprocessor); call after prepare. */
cudaError_t flash_fwd_blocks_per_sm(int config, int *blocks);
/* One forward; lse may not be NULL. Returns the launch status; does not
 * synchronize. batch, heads, seq >= 1 and the config's head dim are the caller's
 * to check (cudaErrorInvalidValue otherwise). */
cudaError_t launch_flash_fwd(int config, const void *q, const void *k, const void *v, void *out,
                             float *lse, int batch, int heads, int seq, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
