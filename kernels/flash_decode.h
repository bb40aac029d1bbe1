/* Split-KV ("flash-decoding") attention forward for decode (kernels/flash_decode.cu): few new
 * queries against a long key/value cache, grouped-query heads native. bf16 q and out
 * [B, Hq, q_seq, D], k and v [B, Hkv, seq, D] contiguous, scale 1/sqrt(D), causal with the
 * mask aligned to the end of the keys (query i sees keys 0 .. i + seq - q_seq), log-sum-exp
 * per query row into a float buffer [B, Hq, q_seq] (natural log).
 *
 * The query rows of one key/value head (its group's heads × q_seq, contiguous in memory) are
 * one tile of 16 rows (more rows: several tiles), so the group's heads share every K/V load.
 * The keys are cut into `splits` ranges, one block each, so that B × Hkv alone does not
 * leave multiprocessors idle; each block's four warps stream their own chunks of 16 or 32 keys through a
 * three-deep ring (cp.async, or on sm_90 at D = 64 and 128 exactly, 128B-swizzled tensor copies issued
 * by one lane onto per-stage mbarriers: 2-5% faster, bench/results/2026-12-04-decode-tma.md), run Q·Kᵀ and P·V on mma.sync m16n8k16 and merge their partial
 * softmaxes in shared memory. With more than one split each block writes its normalised
 * partial output and log-sum-exp (fp32, the workspace), and a second kernel, the combine,
 * weighs them by exp(lse − max) into the output (eight splits' partials loaded at once: a chain of
 * L2 round trips had cost 5-23 us a forward, bench/results/2026-12-04-decode-persistent.md): two
 * kernels per forward, both this variant's. Beside this fixed grid, one-kernel grids of equal key
 * ranges per block (launch_flash_decode_balanced): the balanced one, and on sm_90 the persistent one
 * (`_tma_pers`: chunk ranges, each warp's ring running on across tile boundaries); both measured
 * slower than the fixed grid with the TMA ring at every H200 decode point. Kernels:
 * attnprof_flash_decode_bf16_d<D>_16x<keys per warp step>_w4_s<stages>[_tma][_bal|_pers] and
 * attnprof_flash_decode_combine_bf16, for D = 64 and 128 (a smaller multiple of 8 runs the
 * next one up, its missing columns zero-filled). */
#ifndef ATTNPROF_FLASH_DECODE_H
#define ATTNPROF_FLASH_DECODE_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flash_decode_config {
    const char *kernel_name;  /* the split kernel's (unmangled) name */
    const char *combine_name; /* the combine kernel's */
    int head_dim;             /* compiled D */
    int block_rows;           /* query rows per tile */
    int chunk_keys;           /* keys per warp step */
    int warps, threads;
    size_t smem_bytes;        /* dynamic shared memory per block */
    const char *path;
    int balanced;             /* launch_flash_decode_balanced's grids, no combine kernel: 1 the balanced grid
                               * (rounds of warps x chunk keys per block, a ring refill per tile), 2 the
                               * persistent one (chunks per block, the rings running on across tiles) */
    int merge_rows_max;       /* the fixed grid's kernel merges its own splits (each tile's last block) when a
                               * key/value head has at most this many query rows (group x q_seq); more, or 0:
                               * the combine kernel follows */
} flash_decode_config;

int flash_decode_config_count(void);
const flash_decode_config *flash_decode_config_at(int i); /* NULL out of range */
/* The configuration a head dim runs on (the smallest compiled D >= head_dim), or -1 (not a
 * multiple of 8, or above the largest). */
int flash_decode_config_for_dim(int head_dim);
/* The configuration a head dim runs on a device of compute capability cc_major: on 9.x the TMA ring
 * where one is compiled for exactly that head dim, else flash_decode_config_for_dim's. */
int flash_decode_config_for_device(int head_dim, int cc_major);
/* The balanced-grid configuration of the same head dim and the same loads (TMA or cp.async), or -1. */
int flash_decode_balanced_twin(int config);
/* 1 for a configuration of the TMA ring (sm_90, its head dim exactly), else 0. */
int flash_decode_tma_ring(int config);
/* Raises the kernel's dynamic shared-memory limit; call once per process and device. */
cudaError_t flash_decode_prepare(int config);
cudaError_t flash_decode_blocks_per_sm(int config, int *blocks);
/* Query-row tiles per key/value head: ceil(heads / kv_heads * q_seq / block_rows). */
int flash_decode_row_tiles(int config, int heads, int kv_heads, int q_seq);
/* Workspace of a launch with `splits` > 1: the partial outputs and log-sum-exps, then the arrival
 * counters of the configurations that merge in the kernel (0 for one split). Zero it (cudaMemset) once
 * after allocating: every launch leaves the counters at zero. */
size_t flash_decode_workspace_bytes(int batch, int heads, int q_seq, int head_dim, int splits);
/* 1 where a fixed-grid forward of `splits` > 1 merges its splits inside the split kernel (merge_rows_max),
 * so it is one kernel; 0 where the combine kernel follows. */
int flash_decode_merges_in_kernel(int config, int heads, int kv_heads, int q_seq, int splits);
/* One forward: the split kernel, then (splits > 1, unless it merges in the kernel) the combine.
 * keys_per_split: a multiple of
 * the configuration's chunk_keys, splits = ceil(seq / keys_per_split). Returns the launch status; does not
 * synchronize. cudaErrorInvalidValue for a bad argument (kv_heads not dividing heads,
 * q_seq > seq, head_dim not a multiple of 8 or above the configuration's, a grid too large). */
cudaError_t launch_flash_decode(int config, const void *q, const void *k, const void *v, void *out, float *lse,
                                void *workspace, int batch, int heads, int kv_heads, int q_seq, int seq, int head_dim,
                                int splits, int keys_per_split, cudaStream_t stream);

/* The balanced grid (configurations with `balanced`): min(slots, rounds) blocks, slots being the
 * multiprocessors x resident blocks; every tile's keys in rounds of warps x chunk_keys, the rounds
 * of all tiles laid end to end and cut into one equal range per block, so no multiprocessor idles
 * for want of a whole tile (B x Hkv x row tiles against the SM count) and no wave is left part
 * full. A tile cut over several blocks ("pieces") is merged by the block whose piece lands last
 * (an arrival counter per tile in the workspace, zeroed once before the first launch and left at
 * zero by every launch): one kernel per forward. -1 / 0 for a configuration that is not balanced. */
int flash_decode_balanced(int config);
int flash_decode_balanced_grid(int config, int batch, int heads, int kv_heads, int q_seq, int seq, int slots);
/* The most blocks a tile is cut over with `grid` blocks (1: no tile is cut). */
int flash_decode_balanced_pieces(int config, int batch, int heads, int kv_heads, int q_seq, int seq, int grid);
/* The pieces' partial outputs and log-sum-exps (fp32; none when no tile is cut) and the counters;
 * zero it (cudaMemset) once after allocating. */
size_t flash_decode_balanced_workspace_bytes(int config, int batch, int heads, int kv_heads, int q_seq, int seq,
                                             int head_dim, int grid);
cudaError_t launch_flash_decode_balanced(int config, const void *q, const void *k, const void *v, void *out,
                                         float *lse, void *workspace, int batch, int heads, int kv_heads, int q_seq,
                                         int seq, int head_dim, int grid, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
