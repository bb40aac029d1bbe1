/* The order in which the persistent sm_90a flash kernel (kernels/flash_fwd_sm90a.cu)
 * takes its output tiles, in plain C so that the tests check it without a GPU
 * (tests/test_tile_order.c).
 *
 * A tile is 128 or 192 query rows (the kernel's) of one head. Tiles are numbered in groups of at most
 * heads_per_group heads, a group's K and V together at most half the L2, so that
 * the blocks running at any moment share them there; within a group, query tile
 * by query tile across the group's heads, and in the causal case heavy first (the
 * query tiles nearest the sequence end see the most keys), so that the light
 * ones fill in at the end of the list schedule. */
#ifndef ATTNPROF_FLASH_TILE_ORDER_H
#define ATTNPROF_FLASH_TILE_ORDER_H

#ifdef __CUDACC__
#define FLASH_TILE_ORDER_FN __host__ __device__ static inline
#else
#define FLASH_TILE_ORDER_FN static inline
#endif

/* Heads whose K and V (bf16, seq x head_dim each) together take half of
 * l2_bytes: at least 1, at most heads_total. */
FLASH_TILE_ORDER_FN int flash_heads_per_group(long long l2_bytes, int seq, int head_dim, int heads_total)
{
    const long long per_head = 4LL * seq * head_dim;
    const long long group = (l2_bytes / 2) / per_head;
    return (int)(group < 1 ? 1 : group > heads_total ? heads_total : group);
}

/* Tile number (0 .. q_tiles * heads_total - 1) -> its head (batch * heads
 * index) and query tile. The heads are split into ceil(heads_total /
 * heads_per_group) groups of nearly equal size (the first heads_total % groups
 * of them one head larger): a small last group would put heavy tiles at the end
 * of the list and the busiest block 5-15% above the mean (tests/test_tile_order.c). */
FLASH_TILE_ORDER_FN void flash_tile_at(int tile, int q_tiles, int heads_total, int heads_per_group, int causal,
                                       int *bh, int *q_tile)
{
    const int groups = (heads_total + heads_per_group - 1) / heads_per_group;
    const int small = heads_total / groups, large_groups = heads_total % groups;
    const int large_tiles = (small + 1) * q_tiles * large_groups; /* tiles of the larger groups, first */
    int heads_here, head0, within;
    if (tile < large_tiles) {
        const int group = tile / ((small + 1) * q_tiles);
        heads_here = small + 1;
        head0 = group * heads_here;
        within = tile - group * heads_here * q_tiles;
    } else {
        const int rest = tile - large_tiles, group = rest / (small * q_tiles);
        heads_here = small;
        head0 = large_groups * (small + 1) + group * small;
        within = rest - group * small * q_tiles;
    }
    const int level = within / heads_here;
    *bh = head0 + within % heads_here;
    *q_tile = causal ? q_tiles - 1 - level : level;
}

#endif
