/* Benchmark only: the global-timer stamps of the sm_90a flash kernels built
 * with SM90A_OPT_TIMELINE (names ending in _tl), written into the buffer of
 * flash_sm90a_set_timeline when it is not null. bench/flash_sm90a_torch.py's
 * `timeline` mode reads this layout, taking the slots' values from the enums
 * below (keep them one `NAME = value,` per line):
 *   per tile t: TILE_STAMP_WORDS words at TILE_STAMP_WORDS * t, indexed by
 *     Sm90aTileStamp;
 *   then per block b: BLOCK_STAMP_WORDS words at
 *     TILE_STAMP_WORDS * tiles + BLOCK_STAMP_WORDS * b, indexed by
 *     Sm90aBlockStamp.
 * Stamps are nanoseconds of %globaltimer (8 ns steps on the H200). Every call
 * site is under `C::TIMELINE && p.timeline` (p.timeline read where used: a
 * kernel parameter, no register held for it), spelled out rather than behind
 * a function so that the compiler's front end drops the stamps of the other
 * kernels before optimising: a call there left their blocks (asm volatile, a
 * store) in the code until inlined, and the kernels' machine code changed
 * (bench/sass_identity.sh). */
#ifndef ATTNPROF_SM90A_TIMELINE_CUH
#define ATTNPROF_SM90A_TIMELINE_CUH

#include "layout.cuh"

namespace {

enum Sm90aTileStamp {
    TILE_STAMP_BLOCK = 0,      /* the block that ran the tile | its SM << 32 (not a time) */
    TILE_STAMP_START = 1,      /* consumer warpgroup 0 passed the tile barrier */
    TILE_STAMP_Q_ISSUED = 2,   /* the producer issued the tile's Q */
    TILE_STAMP_Q_LANDED = 3,   /* consumer warpgroup 0 saw its Q land */
    TILE_STAMP_FIRST_K = 4,    /* + w: warpgroup w's first key tile landed */
    TILE_STAMP_DONE = 7,       /* + w: warpgroup w stored its rows */
    TILE_STAMP_KEY_TILES = 10, /* the tile's key tiles (a count, not a time) */
    TILE_STAMP_WORDS = 16,
};
enum Sm90aBlockStamp {
    BLOCK_STAMP_ENTRY = 0, /* the block started (thread 128) */
    BLOCK_STAMP_EXIT = 1,  /* consumer warpgroup 0 found no tile left */
    BLOCK_STAMP_WORDS = 4,
};
static_assert(TILE_STAMP_FIRST_K + 3 <= TILE_STAMP_DONE && TILE_STAMP_DONE + 3 <= TILE_STAMP_KEY_TILES &&
                  TILE_STAMP_KEY_TILES < TILE_STAMP_WORDS,
              "a slot per consumer warpgroup (at most three)");

__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

__device__ __forceinline__ void stamp_tile(const Sm90aParams &p, int tile, int slot, unsigned long long value)
{
    p.timeline[tile * TILE_STAMP_WORDS + slot] = value;
}

__device__ __forceinline__ void stamp_block(const Sm90aParams &p, int slot, unsigned long long value)
{
    p.timeline[(size_t)p.q_tiles * p.heads_total * TILE_STAMP_WORDS + blockIdx.x * BLOCK_STAMP_WORDS + slot] = value;
}

/* A tile's start, by consumer warpgroup 0 once its Q has landed. */
__device__ __forceinline__ void stamp_tile_start(const Sm90aParams &p, int tile, unsigned long long start,
                                                 int key_tiles)
{
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
    stamp_tile(p, tile, TILE_STAMP_BLOCK, blockIdx.x | (unsigned long long)smid << 32);
    stamp_tile(p, tile, TILE_STAMP_START, start);
    stamp_tile(p, tile, TILE_STAMP_Q_LANDED, global_ns());
    stamp_tile(p, tile, TILE_STAMP_KEY_TILES, key_tiles);
}

} // namespace

#endif
