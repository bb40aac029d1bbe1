/* FlashAttention-2 style causal forward (kernels/flash_fwd.cu): bf16 q/k/v/out
 * [B, H, S, D] contiguous, scale 1/sqrt(D), log-sum-exp per row into a float
 * buffer [B, H, S] (natural log, as PyTorch's softmax_lse).
 *
 * Several tile configurations are compiled; each is its own __global__ function
 * whose name says what it is (attnprof_flash_fwd_bf16_d<D>_<BM>x<BN>_w<warps>), so a
 * CUPTI record names the configuration that ran. Kernels are compiled for
 * D = 32, 64, 96, 128 and 256; any other head dim that is a multiple of 8 up to
 * 256 runs the kernel of the next compiled D up, which zero-fills the missing
 * columns in shared memory (flash_fwd_padded_dim). The variant runs the default
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
    const char *layout;      /* how the tile is split among the threads, for the report */
    const char *schedule;    /* how blocks take tiles, for the report */
} flash_fwd_config;

/* ---- configurations ----
 * The table holds the portable mma.sync kernels (sm_80 and later) followed by
 * the Hopper-native ones (kernels/flash_fwd_sm90a.h; wgmma + TMA, sm_90a code,
 * causal or not), whose names contain "sm90a". */
int flash_fwd_config_count(void);
/* NULL when i is out of range. */
const flash_fwd_config *flash_fwd_config_at(int i);
/* The compiled head dim a head_dim runs on: head_dim itself when a kernel is
 * compiled for it, else the next compiled one up (80 -> 96); -1 when none takes
 * it (not a multiple of 8, below 8 or above 256). */
int flash_fwd_padded_dim(int head_dim);
/* The configuration to run for this head dim (any that flash_fwd_padded_dim
 * takes; the configuration's head_dim is the padded one) on a GPU of this
 * compute capability, or -1 when no kernel takes it. This is the dispatch point
 * between instruction paths: compute capability 9.0 runs the sm_90a kernel when
 * this build has it, everything else from 8.0 up the mma.sync one. */
int flash_fwd_default_config(int head_dim, int cc_major, int cc_minor);

/* ---- launchers ---- */
/* Device memory a configuration's launches need (0 for the mma.sync kernels; a
 * tile counter for the persistent sm_90a ones): allocate once, zeroed, and pass
 * to every launch; launches that may overlap need workspaces of their own. */
size_t flash_fwd_workspace_bytes(int config);
/* Raises the kernel's dynamic shared-memory limit (needed above 48 KB). Call once
 * per process and configuration before launching it, on the device it will run
 * on. cudaErrorNotSupported when the configuration cannot run here (an sm_90a
 * kernel on another GPU, or a driver without the tensor-map encoder). */
cudaError_t flash_fwd_prepare(int config);
/* Resident blocks per multiprocessor for this configuration on the current
 * device (cudaOccupancyMaxActiveBlocksPerMultiprocessor); call after prepare. */
cudaError_t flash_fwd_blocks_per_sm(int config, int *blocks);
/* One forward of tensors [batch, heads, seq, head_dim] (rows head_dim elements
 * apart); lse may not be NULL. Returns the launch status; does not synchronize.
 * cudaErrorInvalidValue unless batch, heads, seq >= 1, seq * head_dim < 2^31
 * and head_dim is a multiple of 8 from 8 up to the config's head_dim; cudaErrorNotSupported when causal is
 * 0 and the configuration is causal only (every mma.sync one). */
cudaError_t launch_flash_fwd(int config, const void *q, const void *k, const void *v, void *out,
                             float *lse, void *workspace, int batch, int heads, int seq, int head_dim,
                             int causal, cudaStream_t stream);

/* The same for grouped-query attention: k and v [batch, kv_heads, seq, head_dim], query head h
 * reading key/value head h / (heads / kv_heads), no copy (both paths); cudaErrorInvalidValue
 * also unless kv_heads divides heads. */
cudaError_t launch_flash_fwd_gqa(int config, const void *q, const void *k, const void *v, void *out, float *lse,
                                 void *workspace, int batch, int heads, int kv_heads, int seq, int head_dim, int causal,
                                 cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
