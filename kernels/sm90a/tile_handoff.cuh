/* Which tile a block of the sm_90a flash kernel works on next, and how the
 * producer hands it to the consumers.
 *
 * Schedule. Persistent: block b starts with tile b, then takes the next tile
 * not yet taken (an atomic counter: a list schedule; a static round-robin left
 * the busiest block 17-40% above the mean in the causal case, and a static
 * snake order up to 24%, simulated with tile durations fitted to measured
 * ones). The tiles are numbered in groups of heads_per_group heads
 * (kernels/flash_tile_order.h), a group's K and V small enough to stay in the
 * L2 while the blocks running at any moment share it (numbered over all heads
 * at once, K and V came from DRAM about five times over at 4x16x4096x128).
 * Within a group, causal tiles go heavy first, query tile by query tile across
 * the group's heads, so the light ones fill in at the end. The schedule stays
 * dynamic also where the handoff is decoupled (below): the counter is what
 * balances the blocks.
 *
 * Handoff. The tile index travels from the producer to the consumers through
 * two shared slots, one per parity of the block's tile count, and one named
 * barrier (bar.sync on both sides: compute-sanitizer's racecheck does not
 * count bar.arrive as ordering, and reported the one-slot arrive/sync
 * handoff). For its tile j the producer writes slot j&1, issues Q and the
 * first key tiles (whose ring slots tile j-1 frees), and then meets the
 * consumers, who come to the barrier at the end of tile j-1, so neither
 * side waits longer than it would for the data. Slot j&1 is written again
 * for tile j+2, after the barrier of tile j+1, which the consumers reach
 * only after reading it. A slot holds the tile's coordinates, which the
 * producer computes anyway, so that the consumers find them there instead
 * of computing them again between tiles.
 * Decoupled (SM90A_OPT_DECOUPLED), the producer meets each consumer warpgroup
 * at a barrier of their own (named barrier 4 + w, 160 threads), in warpgroup
 * order, so that a warpgroup done with its tile starts the next while the
 * others finish theirs (with ping-pong turns, the first warpgroup is half a
 * key tile ahead, and a block-wide barrier drained that lead at every tile);
 * the slot argument above holds for each warpgroup. Only the kernels with
 * turns use it: without them, racecheck reported the slot as racing
 * (bench/RESULTS.md, step 25). */
#ifndef ATTNPROF_SM90A_TILE_HANDOFF_CUH
#define ATTNPROF_SM90A_TILE_HANDOFF_CUH

#include "layout.cuh"

namespace {

/* One of the two shared slots: a tile's coordinates, indexed by these. */
enum TileSlotField {
    SLOT_TILE = 0,      /* the tile (-1: none left) */
    SLOT_HEAD = 1,      /* its head (batch * heads index) */
    SLOT_Q0 = 2,        /* its first query row */
    SLOT_KEY_TILES = 3, /* its key tiles */
    SLOT_FIELDS = 4,
};
typedef int TileSlot[SLOT_FIELDS];

/* Named barriers 0-3 are __syncthreads' and the ping-pong turns'. */
constexpr int TILE_BARRIER = 4;

/* The producer's warp and consumer warpgroup w (all of them, not decoupled). */
template <class C> __device__ __forceinline__ void tile_barrier(int w)
{
    if constexpr (C::DECOUPLED)
        asm volatile("bar.sync %0, %1;\n" ::"r"(TILE_BARRIER + w), "n"(32 + 128) : "memory");
    else
        asm volatile("bar.sync %0, %1;\n" ::"n"(TILE_BARRIER), "n"(32 + 128 * C::WGS) : "memory");
}

/* A tile's head, first query row and key tiles (S: the sequence length). */
template <class C>
__device__ __forceinline__ void tile_coords(const Sm90aParams &p, int S, int tile, int &bh, int &q0, int &n_kt)
{
    int q_tile;
    flash_tile_order_at(&p.order, tile, C::CAUSAL, &bh, &q_tile);
    /* Causal with three warpgroups: the tiles end at S, S - BLOCK_M, ...
     * so that a ragged tile (S not a multiple of BLOCK_M) is the first,
     * with the fewest keys, its first rows before row 0 (zero-filled by
     * TMA, masked, never written); aligned at 0, it was the last, its
     * one or two live warpgroups running the most key tiles while the
     * rest idled. */
    q0 = C::END_ALIGNED ? S - (p.q_tiles - q_tile) * C::BLOCK_M : q_tile * C::BLOCK_M;
    const int kv_end = C::CAUSAL ? min(q0 + C::BLOCK_M, S) : S;
    n_kt = (kv_end + C::BN - 1) / C::BN;
}

/* By the producer's leader, before the tile barrier. */
__device__ __forceinline__ void tile_publish(TileSlot &slot, int tile, int bh, int q0, int n_kt)
{
    slot[SLOT_TILE] = tile;
    slot[SLOT_HEAD] = bh;
    slot[SLOT_Q0] = q0;
    slot[SLOT_KEY_TILES] = n_kt;
}

/* The block's next tile (by the producer's leader, once the current tile's
 * copies are issued). */
__device__ __forceinline__ int scheduler_take(const Sm90aParams &p)
{
    return (int)gridDim.x + atomicAdd(&p.scheduler[0], 1);
}

/* Every block takes tiles until one is out of range; the last block to
 * get there leaves the counter at zero for the next launch (which the
 * stream orders after this one). */
__device__ __forceinline__ void scheduler_leave(const Sm90aParams &p)
{
    if (atomicAdd(&p.scheduler[1], 1) == (int)gridDim.x - 1) {
        atomicExch(&p.scheduler[0], 0);
        atomicExch(&p.scheduler[1], 0);
    }
}

} // namespace

#endif
