/* The order in which the persistent sm_90a flash kernel (kernels/flash_fwd_sm90a.cu)
 * takes its output tiles, in plain C so that the tests check it without a GPU
 * (tests/recorder/tile_order.c).
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

/* The launch's constants of the order: the heads are split into
 * ceil(heads_total / heads_per_group) groups of nearly equal size (the first
 * heads_total % groups of them one head larger): a small last group would put
 * heavy tiles at the end of the list and the busiest block 5-15% above the
 * mean (tests/recorder/tile_order.c). Computed once per launch, so that finding a
 * tile's place takes two divisions, not six (each a dependent chain of some
 * twenty instructions, on the kernel's path between tiles). */
typedef struct {
    int q_tiles;
    int small_heads;  /* heads in a smaller group */
    int large_heads;  /* heads in the groups of small_heads + 1, which come first */
    int large_tiles;  /* their tiles */
} flash_tile_order;

FLASH_TILE_ORDER_FN flash_tile_order flash_tile_order_make(int q_tiles, int heads_total, int heads_per_group)
{
    const int groups = (heads_total + heads_per_group - 1) / heads_per_group;
    flash_tile_order o;
    o.q_tiles = q_tiles;
    o.small_heads = heads_total / groups;
    o.large_heads = (heads_total % groups) * (o.small_heads + 1);
    o.large_tiles = o.large_heads * q_tiles;
    return o;
}

/* Tile number (0 .. q_tiles * heads_total - 1) -> its head (batch * heads
 * index) and query tile. */
FLASH_TILE_ORDER_FN void flash_tile_order_at(const flash_tile_order *o, int tile, int causal, int *bh, int *q_tile)
{
    const int in_large = tile < o->large_tiles;
    const int heads_here = o->small_heads + in_large;
    const int rest = in_large ? tile : tile - o->large_tiles;
    const int group = rest / (heads_here * o->q_tiles);
    const int head0 = (in_large ? 0 : o->large_heads) + group * heads_here;
    const int within = rest - group * heads_here * o->q_tiles;
    const int level = within / heads_here;
    *bh = head0 + within - level * heads_here;
    *q_tile = causal ? o->q_tiles - 1 - level : level;
}

FLASH_TILE_ORDER_FN void flash_tile_at(int tile, int q_tiles, int heads_total, int heads_per_group, int causal,
                                       int *bh, int *q_tile)
{
    const flash_tile_order o = flash_tile_order_make(q_tiles, heads_total, heads_per_group);
    flash_tile_order_at(&o, tile, causal, bh, q_tile);
}

#endif
