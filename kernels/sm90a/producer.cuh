/* The producer of the sm_90a flash kernel: warpgroup 0 gives its registers
 * away (setmaxnreg), and one thread of its first warp issues the TMA copies
 * of each tile's Q (in boxes of 64 rows, one per consumer warpgroup) and, for
 * each key tile, of K and V into the ring of STAGES shared-memory stages,
 * waiting for a stage to be free before it reuses it. Its warp takes part in
 * the tile handoff (kernels/sm90a/tile_handoff.cuh): it loads the next tile's
 * Q and K/V while the consumers finish the current one. Grouped-query attention is
 * native: a query head's K/V tiles are loaded from its key/value head (h / group). */
#ifndef ATTNPROF_SM90A_PRODUCER_CUH
#define ATTNPROF_SM90A_PRODUCER_CUH

#include "layout.cuh"
#include "tile_handoff.cuh"
#include "timeline.cuh"

namespace {

template <class C>
__device__ __forceinline__ void producer_loop(const CUtensorMap *tq, const CUtensorMap *tk, const CUtensorMap *tv,
                                              const Sm90aParams &p, const Sm90aSmem<C> &sm, TileSlot (&tile_slot)[2],
                                              int S, int total_tiles)
{
    typedef typename C::Tile T;
    constexpr int BN = C::BN, STAGES = C::STAGES, WGS = C::WGS, BLOCK_M = C::BLOCK_M, RB = T::ROW_BYTES;
    constexpr bool DECOUPLED = C::DECOUPLED;
    sm90::regs_release<C::Roles::PRODUCER_REGS>();
    if (threadIdx.x >= 32)
        return;
    /* Warp 0 takes part in the tile handoff; its lane 0 does the work. */
    const bool leader = threadIdx.x == 0;
    if (leader) {
        sm90::tma_prefetch_descriptor(tq);
        sm90::tma_prefetch_descriptor(tk);
        sm90::tma_prefetch_descriptor(tv);
    }
    int it = 0; /* key tiles loaded so far, over all tiles: the ring position */
    for (int tile = blockIdx.x, local = 0;; local++) {
        const bool last = tile >= total_tiles;
        int bh = 0, q0 = 0, n_kt = 0;
        if (!last)
            tile_coords<C>(p, S, tile, bh, q0, n_kt);
        /* Grouped-query attention: the K/V of query head h are those of key/value head h / group. */
        const int kv_bh = (bh / p.heads) * (p.heads / p.group) + (bh % p.heads) / p.group;
        /* The tile's copies in order: K and V of key tile 0, of key tile
         * 1, ... Before the barrier go Q and the first 2 * STAGES - 1 of
         * them (up to K of key tile STAGES - 1): their ring slots are
         * freed before the consumers' last P V of the previous tile, which
         * frees the slot of the next one, so the producer never waits on
         * that P V to reach the barrier (a consumer variant that met the
         * barrier before it needed this; it measured slower,
         * bench/RESULTS.md). */
        const int copies = 2 * n_kt, before_barrier = min(2 * STAGES - 1, copies);
        const int it0 = it;
        /* Copy i of the tile: K (v false) or V of its key tile i, visited from
         * the last key tile to the first. */
        auto issue = [&](int i, bool v) {
            const int s = (it0 + i) % STAGES, use = (it0 + i) / STAGES, kt = n_kt - 1 - i;
            const uint32_t free_bar = v ? sm.v_free(s) : sm.k_free(s), full_bar = v ? sm.v_full(s) : sm.k_full(s);
            const uint32_t dst = (v ? sm.v : sm.k) + s * T::KV_BYTES;
            if (use > 0)
                sm90::mbar_wait(free_bar, (use - 1) & 1);
            sm90::mbar_arrive_expect_tx(full_bar, T::KV_BYTES);
#pragma unroll
            for (int c = 0; c < T::CHUNKS; c++)
                sm90::tma_load_3d(dst + c * BN * RB, v ? tv : tk, full_bar, c * T::CW, kt * BN, kv_bh);
        };
        if (leader) {
            tile_publish(tile_slot[local & 1], last ? -1 : tile, bh, q0, n_kt);
            /* Q in boxes of 64 rows, one per warpgroup. Decoupled, each
             * warpgroup's rows come as soon as it has freed them, between
             * the ring's first copies. */
            auto issue_q = [&](int w) {
                if (local > 0 && (DECOUPLED || w == 0))
                    sm90::mbar_wait(sm.q_free(w), (local - 1) & 1);
                if (DECOUPLED || w == 0)
                    sm90::mbar_arrive_expect_tx(sm.q_full(w), DECOUPLED ? T::Q_SLICE_BYTES : T::Q_BYTES);
#pragma unroll
                for (int c = 0; c < T::CHUNKS; c++)
                    sm90::tma_load_3d(sm.q + c * BLOCK_M * RB + w * 64 * RB, tq, sm.q_full(w), c * T::CW,
                                      q0 + 64 * w, bh);
            };
            if (!last) {
                if (C::TIMELINE && p.timeline)
                    stamp_tile(p, tile, TILE_STAMP_Q_ISSUED, global_ns());
                if constexpr (DECOUPLED) {
                    for (int c = 0; c < max(WGS, before_barrier); c++) {
                        if (c < WGS)
                            issue_q(c);
                        if (c < before_barrier)
                            issue(c / 2, c & 1);
                    }
                } else {
                    for (int w = 0; w < WGS; w++)
                        issue_q(w);
                    for (int c = 0; c < before_barrier; c++)
                        issue(c / 2, c & 1);
                }
            }
        }
        __syncwarp();
        if constexpr (DECOUPLED) {
            for (int w = 0; w < WGS; w++)
                tile_barrier<C>(w);
        } else {
            tile_barrier<C>(0);
        }
        if (last)
            break;
        if (leader) {
            for (int c = before_barrier; c < copies; c++)
                issue(c / 2, c & 1);
            tile = scheduler_take(p);
        }
        it += n_kt;
        tile = warp_uniform(tile);
    }
    if (leader)
        scheduler_leave(p);
}

} // namespace

#endif
