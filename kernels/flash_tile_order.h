/* The order in which the persistent sm_90a flash kernel (kernels/flash_fwd_sm90a.cu)
 * takes its output tiles, in plain C so that the tests check it without a GPU
 * (tests/test_tile_order.c).
 *
 * A tile is 128 query rows of one head. Tiles are numbered in groups of
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
 * index) and query tile. Groups of heads_per_group heads, the last one
 * smaller when heads_per_group does not divide heads_total. */
FLASH_TILE_ORDER_FN void flash_tile_at(int tile, int q_tiles, int heads_total, int heads_per_group, int causal,
                                       int *bh, int *q_tile)
{
    const int group_tiles = heads_per_group * q_tiles;
    const int group = tile / group_tiles, within = tile - group * group_tiles;
    const int rest = heads_total - group * heads_per_group;
    const int heads_here = heads_per_group < rest ? heads_per_group : rest;
    const int level = within / heads_here;
    *bh = group * heads_per_group + within % heads_here;
    *q_tile = causal ? q_tiles - 1 - level : level;
}

#endif
