/* The consumers of the sm_90a flash kernel with the epilogue overlapped
 * (SM90A_OPT_OVERLAP): a warpgroup issues its last P V of a tile,
 * meets the producer at the next tile's barrier, issues that tile's first
 * Q K^T, and only then waits for the P V and writes the tile's O and
 * log-sum-exp (kernels/sm90a/epilogue.cuh) while the tensor cores compute the
 * next tile's first scores. Without it (kernels/sm90a/mainloop.cuh) the
 * epilogue, the tile barrier, the Q wait and the first Q K^T run one after the
 * other, the tensor pipe idle for this warpgroup meanwhile: the per-tile fixed
 * cost that keeps short sequences behind (bench/RESULTS.md).
 *
 * Every wgmma group is committed and waited for within one pass of the loop
 * below (the first Q K^T of tile j+1 is issued and waited for in the pass of
 * tile j), so that ptxas sees well-formed pipeline stages; the Makefile fails
 * the build if it serialises them. The key-tile loop itself is that of
 * mainloop.cuh. */
#ifndef ATTNPROF_SM90A_OVERLAP_CUH
#define ATTNPROF_SM90A_OVERLAP_CUH

#include "epilogue.cuh"
#include "layout.cuh"
#include "mainloop.cuh"
#include "softmax.cuh"
#include "tile_handoff.cuh"

namespace {

/* A warpgroup's share of one tile, as read from the handoff slot. */
struct OverlapTile {
    int tile;    /* -1: none left */
    int bh, q0, n_kt;
    int n;       /* this warpgroup's key tiles (the last n of n_kt) */
    int base;    /* ring position of its first */
    int wg_row0; /* first query row of the warpgroup */
};

/* After tile `local`'s barrier: its coordinates, this warpgroup's key tiles
 * and its Q landed (it: the tile's first ring position). */
template <class C>
__device__ __forceinline__ OverlapTile overlap_begin(const Sm90aSmem<C> &sm, const TileSlot (&tile_slot)[2],
                                                     const ConsumerThread &t, int S, int local, int it)
{
    constexpr int BN = C::BN, STAGES = C::STAGES;
    OverlapTile w;
    tile_barrier<C>(t.wg);
    auto slot = [&](int field) { return warp_uniform(tile_slot[local & 1][field]); };
    w.tile = slot(SLOT_TILE);
    w.bh = w.q0 = w.n_kt = w.n = 0;
    w.base = it;
    w.wg_row0 = 0;
    if (w.tile < 0)
        return w;
    sm90::mbar_wait(sm.q_full(t.wg), local & 1);
    w.bh = slot(SLOT_HEAD), w.q0 = slot(SLOT_Q0), w.n_kt = slot(SLOT_KEY_TILES);
    w.wg_row0 = w.q0 + t.wg * 64;
    int n = w.n_kt;
    if (C::SKIP) {
        const int rows_end = min(w.wg_row0 + 64, S);
        n = w.wg_row0 >= S || rows_end <= 0 ? 0 : C::CAUSAL ? min(w.n_kt, (rows_end + BN - 1) / BN) : w.n_kt;
    }
    w.n = n;
    w.base = it + w.n_kt - n;
    return w;
}

/* Releases the stages of tile w that this warpgroup skips (the first n_kt - n of its ring
 * positions, from it), and its Q when it has no key tile at all. */
template <class C>
__device__ __forceinline__ void overlap_skip(const Sm90aSmem<C> &sm, const ConsumerThread &t, const OverlapTile &w,
                                             int it)
{
    constexpr int STAGES = C::STAGES;
    for (int i = 0; i < w.n_kt - w.n; i++) {
        const int pos = it + i, stage = pos % STAGES;
        sm90::mbar_wait(sm.k_full(stage), (pos / STAGES) & 1);
        release(sm.k_free(stage), t.lane);
        sm90::mbar_wait(sm.v_full(stage), (pos / STAGES) & 1);
        release(sm.v_free(stage), t.lane);
    }
    if (w.n == 0)
        release(sm.q_free(t.wg), t.lane); /* every row past the sequence end (or before row 0) */
}

template <class C>
__device__ __forceinline__ void consumer_loop_overlap(const Sm90aParams &p, const Sm90aSmem<C> &sm,
                                                      const TileSlot (&tile_slot)[2], int S, int warpgroup)
{
    constexpr int BN = C::BN, STAGES = C::STAGES;
    typedef Turns<C::PINGPONG> turns;
    sm90::regs_claim<C::Roles::CONSUMER_REGS>();
    ConsumerThread t;
    t.wg = warpgroup - 1;
    t.tid = threadIdx.x % 128, t.warp = t.tid / 32, t.lane = t.tid % 32;
    t.g = t.lane / 4, t.t4 = t.lane % 4;
    const int wg = t.wg, lane = t.lane;
    const float scale_log2 = p.scale_log2;

    float o[C::D / 2];
    float s[BN / 2];
    uint32_t pa[BN / 16][4];
    RowState st;

    /* The first Q K^T of a tile w (its last key tile), issued but not waited for. */
    auto issue_first_qk = [&](const OverlapTile &w) {
        const int stage = w.base % STAGES;
        sm90::mbar_wait(sm.k_full(stage), (w.base / STAGES) & 1);
        turns::wait(wg);
        sm90::wgmma_fence();
        issue_qk<C>(s, sm, wg, stage);
        sm90::wgmma_commit();
        turns::pass(wg);
    };

    turns::open(wg);
    int it = 0; /* ring position of the current tile's first key tile, as the producer counts it */
    OverlapTile cur = overlap_begin<C>(sm, tile_slot, t, S, 0, it);
    if (cur.tile >= 0)
        overlap_skip<C>(sm, t, cur, it);
    if (cur.tile >= 0 && cur.n > 0) {
        issue_first_qk(cur);
        sm90::wgmma_wait<0>();
    }
    for (int local = 0; cur.tile >= 0; local++) {
        const int n = cur.n, base = cur.base, wg_row0 = cur.wg_row0;
        const int row0 = wg_row0 + t.warp * 16 + t.g; /* this thread's rows: row0 and row0 + 8 */
        auto tile_needs_mask = [&](int kt) {
            return (C::CAUSAL && kt * BN + BN - 1 > wg_row0) || kt * BN + BN > S;
        };
        auto softmax = [&](int kt, float (&alpha)[2]) {
            if (tile_needs_mask(kt))
                softmax_tile<BN, C::CAUSAL, true>(s, st, alpha, kt * BN, row0, S, scale_log2, t.t4);
            else
                softmax_tile<BN, C::CAUSAL, false>(s, st, alpha, kt * BN, row0, S, scale_log2, t.t4);
        };
        /* Two warpgroups see every key tile of a tile (no skipping): always work. */
        const bool has_work = !C::SKIP || n > 0;
        if (has_work) {
            /* The first key tile's S has landed (waited for at the end of the previous pass). */
            sm90::fence_registers(s);
            release(sm.k_free(base % STAGES), lane);
            if (n == 1)
                release(sm.q_free(wg), lane);
#pragma unroll
            for (int i = 0; i < C::D / 2; i++)
                o[i] = 0.f;
            st.max[0] = st.max[1] = -INFINITY;
            st.sum[0] = st.sum[1] = 0.f;
            {
                float alpha[2];
                softmax(n - 1, alpha);
            }
            pack_p<BN>(s, pa);
            for (int i = 1; i < n; i++) {
                const int cur_pos = base + i, prev = base + i - 1;
                const int stage = cur_pos % STAGES, prev_stage = prev % STAGES;
                sm90::mbar_wait(sm.k_full(stage), (cur_pos / STAGES) & 1);
                sm90::mbar_wait(sm.v_full(prev_stage), (prev / STAGES) & 1);
                turns::wait(wg);
                sm90::wgmma_fence();
                issue_qk<C>(s, sm, wg, stage);
                sm90::wgmma_commit();
                issue_pv<C>(o, pa, sm, prev_stage);
                sm90::wgmma_commit();
                turns::pass(wg);
                sm90::wgmma_wait<1>();
                sm90::fence_registers(s);
                release(sm.k_free(stage), lane);
                if (i == n - 1)
                    release(sm.q_free(wg), lane);
                float alpha[2];
                softmax(n - 1 - i, alpha);
                sm90::wgmma_wait<0>();
                sm90::fence_registers(o);
                release(sm.v_free(prev_stage), lane);
#pragma unroll
                for (int j = 0; j < C::D / 8; j++) {
                    o[4 * j + 0] *= alpha[0];
                    o[4 * j + 1] *= alpha[0];
                    o[4 * j + 2] *= alpha[1];
                    o[4 * j + 3] *= alpha[1];
                }
                pack_p<BN>(s, pa);
            }
            /* The last P V, left in flight. */
            const int last = base + n - 1;
            sm90::mbar_wait(sm.v_full(last % STAGES), (last / STAGES) & 1);
            turns::wait(wg);
            sm90::wgmma_fence();
            issue_pv<C>(o, pa, sm, last % STAGES);
            sm90::wgmma_commit();
            turns::pass(wg);
        }
        /* The next tile: its barrier, Q and first Q K^T, under this tile's last P V. The Q K^T is
         * issued on every pass, so that the wgmma groups are the same on every path (ptxas
         * serialised the kernel when it was issued only if there was a next tile): with none
         * left, it reads the stage the next tile would have had, after the producer's last copy
         * has landed (nothing writes shared memory any more), and its scores are dropped. */
        it += cur.n_kt;
        const OverlapTile next = overlap_begin<C>(sm, tile_slot, t, S, local + 1, it);
        /* A warpgroup that skips two or more of the next tile's key tiles waits for the V of
         * its second ring position, which the producer loads into the stage of this tile's
         * last V, freed only once this tile's last P V is done (the producer's copies go in
         * order, so a later K waits behind it too): then the P V is waited for first, and
         * only the rest of the epilogue overlaps the Q K^T. (Found as a hang at
         * 64x16x512x64 non-causal, where the last tile's third warpgroup has no rows.) */
        bool v_released = false;
        if (C::SKIP && has_work && next.tile >= 0 && next.n_kt - next.n >= 2) {
            sm90::wgmma_wait<0>();
            sm90::fence_registers(o);
            release(sm.v_free((base + n - 1) % STAGES), lane);
            v_released = true;
        }
        if (next.tile >= 0)
            overlap_skip<C>(sm, t, next, it);
        {
            const bool real = next.tile >= 0 && next.n > 0;
            const int stage = (real ? next.base : it) % STAGES;
            if (real)
                sm90::mbar_wait(sm.k_full(stage), (next.base / STAGES) & 1);
            turns::wait(wg);
            sm90::wgmma_fence();
            issue_qk<C>(s, sm, wg, stage);
            sm90::wgmma_commit();
            turns::pass(wg);
        }
        sm90::wgmma_wait<1>(); /* the P V; the next Q K^T may still run */
        if (has_work) {
            sm90::fence_registers(o);
            if (!v_released)
                release(sm.v_free((base + n - 1) % STAGES), lane);
            epilogue_store<C>(p, o, st, S, cur.bh, row0, t.t4);
        }
        sm90::wgmma_wait<0>();
        cur = next;
    }
    turns::close(wg);
}

} // namespace

#endif
