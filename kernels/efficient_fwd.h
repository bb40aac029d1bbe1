/* Memory-efficient causal attention forward in the xformers/CUTLASS style
 * (kernels/efficient_fwd.cu): one fused kernel, 64x64 tiles, working set in
 * registers, online softmax. bf16 q/k/v/out [B, H, S, D] contiguous, scale
 * 1/sqrt(D). The kernels are named attnprof_efficient_fwd_bf16_d<D>_<BM>x<BN>_w<warps>,
 * one per compiled D = 32, 64, 96, 128, 256; any other head dim that is a
 * multiple of 8 up to 256 runs the kernel of the next compiled D up, which
 * zero-fills the missing columns in shared memory (efficient_fwd_padded_dim). */
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

/* ---- configurations ---- */
int efficient_fwd_config_count(void);
/* NULL when i is out of range. */
const efficient_fwd_config *efficient_fwd_config_at(int i);
/* The compiled head dim a head_dim runs on: head_dim itself when a kernel is
 * compiled for it, else the next compiled one up (80 -> 96); -1 when none takes
 * it (not a multiple of 8, below 8 or above 256). */
int efficient_fwd_padded_dim(int head_dim);
/* The configuration for this head dim (any that efficient_fwd_padded_dim takes;
 * the configuration's head_dim is the padded one) on a GPU of this compute
 * capability, or -1 when no kernel takes it (the dispatch point between paths). */
int efficient_fwd_default_config(int head_dim, int cc_major, int cc_minor);

/* ---- launchers ---- */
/* Raises the kernel's dynamic shared-memory limit (needed above 48 KB). */
cudaError_t efficient_fwd_prepare(int config);
/* Resident blocks per multiprocessor for this configuration on the current
 * device (cudaOccupancyMaxActiveBlocksPerMultiprocessor); call after prepare. */
cudaError_t efficient_fwd_blocks_per_sm(int config, int *blocks);
/* One causal forward of tensors [batch, heads, seq, head_dim] (rows head_dim
 * elements apart). Returns the launch status; does not synchronize.
 * cudaErrorInvalidValue unless batch, heads, seq >= 1, batch * heads <= 65535,
 * seq * head_dim < 2^31 and head_dim is a multiple of 8 from 8 up to the
 * config's head_dim. */
cudaError_t launch_efficient_fwd(int config, const void *q, const void *k, const void *v,
                                 void *out, int batch, int heads, int seq, int head_dim,
                                 cudaStream_t stream);

/* The same for grouped-query attention and decode: q and out [batch, heads, q_seq, head_dim],
 * k and v [batch, kv_heads, seq, head_dim]; query head h reads key/value head h / (heads /
 * kv_heads), no copy; query row i sees keys 0 .. i + seq - q_seq (the causal mask aligned to
 * the end of the keys). cudaErrorInvalidValue also unless kv_heads divides heads and
 * 1 <= q_seq <= seq. */
cudaError_t launch_efficient_fwd_gqa(int config, const void *q, const void *k, const void *v, void *out, int batch,
                                     int heads, int kv_heads, int q_seq, int seq, int head_dim, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
