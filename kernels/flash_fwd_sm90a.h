/* Hopper-native flash attention forward (kernels/flash_fwd_sm90a.cu), built
 * for sm_90a only: K/V tiles by the tensor memory accelerator into a ring of
 * shared-memory stages, a producer warp and two or three consumer warpgroups that run
 * wgmma (S = Q K^T from shared memory, O += P V with P from registers).
 * bf16 q/k/v/out [B, H, S, head_dim] contiguous, fp32 log-sum-exp [B, H, S]
 * (natural log), scale 1/sqrt(head_dim), causal or not.
 *
 * Each configuration is compiled for one head dim D; a smaller head_dim that
 * is a multiple of 8 runs on it with the missing columns zero-filled by the
 * copy engine (no copy kernels). Kernel names say path, D and tile, e.g.
 * attnprof_flash_fwd_sm90a_bf16_d128_128x128_wg2_pp (128 query rows x 128
 * keys; wg2: two consumer warpgroups; _pp: ping-pong turns) or
 * attnprof_flash_fwd_sm90a_bf16_d64_192x128_wg3; the non-causal kernels end in
 * _noncausal.
 *
 * The functions below are in every build; the kernels exist only where the
 * sm_90a object was built (ATTNPROF_HAVE_SM90A), and only an sm_90 GPU runs
 * them: flash_sm90a_available() says whether both hold. */
#ifndef ATTNPROF_FLASH_FWD_SM90A_H
#define ATTNPROF_FLASH_FWD_SM90A_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#include "flash_fwd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether this build carries the sm_90a kernels. */
int flash_sm90a_built(void);
/* Whether, besides, the current device can run them (compute capability 9.0)
 * and the driver has the tensor-map encoder. */
int flash_sm90a_available(void);
int flash_sm90a_config_count(void);
/* NULL when i is out of range. */
const flash_fwd_config *flash_sm90a_config_at(int i);
/* Index of the configuration compiled for head dim d, or -1. */
int flash_sm90a_config_for_dim(int d);
/* Raises the kernels' shared-memory limit and reads the current device's
 * multiprocessor count and L2 size for the launches that follow on this
 * thread. Call on the device the launches will use. */
cudaError_t flash_sm90a_prepare(int i);
cudaError_t flash_sm90a_blocks_per_sm(int i, int *blocks);
/* Device memory the launch needs for its tile scheduler (a counter). The
 * caller allocates it once, zeroed; each launch leaves it zeroed again. Launches
 * that may run at the same time (other streams) need workspaces of their own. */
size_t flash_sm90a_workspace_bytes(void);
/* Benchmark only: the kernels built with SM90A_OPT_TIMELINE (names ending
 * in _tl) write global-timer stamps (ns) into buffer when it is not NULL, for
 * launches from this thread: per tile t, 16 words at 16t: block | smid << 32,
 * consumers start, Q issued, Q landed, first key tile landed per warpgroup
 * (3), warpgroup done (3), key tiles; then per block b, 4 words at
 * 16 * tiles + 4b: entry, exit (the slots are named in
 * kernels/sm90a/timeline.cuh). Other kernels ignore it. */
void flash_sm90a_set_timeline(unsigned long long *buffer);
/* One forward. head_dim: the tensors' real head dim, a multiple of 8 and at
 * most the configuration's; causal: 0 or 1. Tensor maps are encoded on the
 * first launch with a given buffer and cached per thread. Returns the launch
 * status (cudaErrorInvalidValue for bad arguments or misaligned pointers,
 * cudaErrorNotSupported when the build has no sm_90a code); does not
 * synchronize. */
cudaError_t launch_flash_sm90a(int i, const void *q, const void *k, const void *v, void *out, float *lse,
                               int *workspace, int batch, int heads, int seq, int head_dim, int causal,
                               cudaStream_t stream);

/* The same for grouped-query attention: k and v [batch, kv_heads, seq, head_dim], query head h
 * reading key/value head h / (heads / kv_heads) (no copy); cudaErrorInvalidValue also unless
 * kv_heads divides heads. */
cudaError_t launch_flash_sm90a_gqa(int i, const void *q, const void *k, const void *v, void *out, float *lse,
                                   int *workspace, int batch, int heads, int kv_heads, int seq, int head_dim,
                                   int causal, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
