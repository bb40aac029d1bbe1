/* The kernel families' configuration API as one table (kernels/families.cu): every fused
 * family of kernels/ compiles several configurations (tile sizes, warps, head dims) and
 * says the same five things of them: how many there are, what configuration i is, which one
 * a head dim runs by default, how to prepare one (the shared-memory limit) and how many of
 * its blocks fit on a multiprocessor. A row here holds those five of one family, so that the
 * recorder's variants and the benchmarks ask every family the same way instead of calling
 * each family's own functions.
 *
 * What the table leaves to the families: the launch (each family's arguments differ: a
 * log-sum-exp, a workspace, the split-KV count, the gradients), the facts a variant reports
 * beyond the common fields (flash's layout and schedule, decode's combine kernel) and
 * decode's per-shape grid (the balanced configurations are chosen from B, H and S, not from
 * the head dim alone: flash_decode.h). Plain C; no row calls the GPU but prepare and
 * blocks_per_sm. */
#ifndef ATTNPROF_KERNEL_FAMILIES_H
#define ATTNPROF_KERNEL_FAMILIES_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One configuration, in the fields every family has. */
typedef struct kernel_config_desc {
    const char *name;  /* the kernel's (unmangled) name; attn_bwd_tc: its configuration's name
                          (its three kernels are named attnprof_bwd_tc_*) */
    int head_dim;      /* the compiled D */
    int block_m;       /* query rows per block (decode: per tile) */
    int block_n;       /* keys per tile (decode: per warp step) */
    int warps, threads;
    size_t smem_bytes; /* dynamic shared memory per block; 0 where the family does not say it
                          (attn_bwd_tc sizes it inside its launch) */
    const char *path;  /* the instruction path, for the report */
} kernel_config_desc;

typedef struct kernel_family {
    const char *name; /* the family's prefix: "efficient_fwd", "flash_fwd", ... */
    int (*count)(void);
    /* 0 with *out filled, -1 when i is out of range. */
    int (*describe)(int i, kernel_config_desc *out);
    /* The configuration a head dim runs on a GPU of this compute capability, or -1. */
    int (*default_for)(int head_dim, int cc_major, int cc_minor);
    /* The compiled D a head dim runs on (the next one up, its columns zero-filled), or -1. */
    int (*padded_dim)(int head_dim);
    /* NULL when the family prepares its kernels inside the launch (attn_bwd_tc). */
    cudaError_t (*prepare)(int i);
    /* NULL when the family does not expose its kernel for the occupancy API (attn_bwd_tc). */
    cudaError_t (*blocks_per_sm)(int i, int *blocks);
} kernel_family;

/* The rows, in this order. flash_fwd's row holds the Hopper-native sm_90a configurations
 * too (flash_fwd_sm90a.h), after the portable ones, as flash_fwd_config_at numbers them. */
enum kernel_family_id {
    KERNEL_FAMILY_EFFICIENT_FWD,
    KERNEL_FAMILY_FLASH_FWD,
    KERNEL_FAMILY_FLASH_DECODE,
    KERNEL_FAMILY_ATTN_BWD_TC,
    KERNEL_FAMILY_COUNT
};

/* NULL when id is out of range. */
const kernel_family *kernel_family_at(int id);
/* The largest head dim any configuration of the family is compiled for. */
int kernel_family_max_head_dim(const kernel_family *f);
/* The compute capabilities the families' objects were compiled for, as nvcc itself listed
 * them while compiling this one (__CUDA_ARCH_LIST__, e.g. "800,900"), so that run.json states
 * what was built, not what the Makefile meant to pass; "" from an nvcc without the macro. */
const char *kernel_arch_list(void);

#ifdef __cplusplus
}
#endif
#endif
