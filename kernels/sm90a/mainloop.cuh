/* The consumers of the sm_90a flash kernel: warpgroups 1..WGS, 64 query rows
 * each. Per key tile, S = Q K^T by wgmma with both operands in shared memory,
 * the online softmax in registers (kernels/sm90a/softmax.cuh), then O += P V
 * by wgmma with P straight from registers. The next key tile's Q K^T is
 * issued with this tile's P V, before the softmax, so that the tensor cores
 * work while it runs (pipelining within a warpgroup); with ping-pong turns
 * (D = 128) the two warpgroups also take turns to issue, so one's softmax
 * overlaps the other's GEMMs; at D = 32, 64 and 96 a third warpgroup does
 * that without turns. Key tiles are visited from the last (the causal
 * diagonal, the only ones that need a mask) to the first.
 *
 * consumer_loop is a warpgroup's life: take a tile from the handoff
 * (kernels/sm90a/tile_handoff.cuh), run its key tiles (consume_key_tiles),
 * store its rows (kernels/sm90a/epilogue.cuh). */
#ifndef ATTNPROF_SM90A_MAINLOOP_CUH
#define ATTNPROF_SM90A_MAINLOOP_CUH

#include "../wgmma_bf16.cuh"
#include "epilogue.cuh"
#include "layout.cuh"
#include "softmax.cuh"
#include "tile_handoff.cuh"
#include "timeline.cuh"

namespace {

template <int N> __device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t a, uint64_t b, int acc)
{
    if constexpr (N == 64)
        wgmma::ss_n64(d, a, b, acc);
    else if constexpr (N == 96)
        wgmma::ss_n96(d, a, b, acc);
    else if constexpr (N == 128)
        wgmma::ss_n128(d, a, b, acc);
    else if constexpr (N == 176)
        wgmma::ss_n176(d, a, b, acc);
    else if constexpr (N == 192)
        wgmma::ss_n192(d, a, b, acc);
    else
        static_assert(N == 64, "no wgmma wrapper for this key tile");
}
template <int N> __device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b)
{
    if constexpr (N == 32)
        wgmma::rs_n32(d, a, b, 1);
    else if constexpr (N == 64)
        wgmma::rs_n64(d, a, b, 1);
    else if constexpr (N == 96)
        wgmma::rs_n96(d, a, b, 1);
    else if constexpr (N == 128)
        wgmma::rs_n128(d, a, b, 1);
    else if constexpr (N == 256)
        wgmma::rs_n256(d, a, b, 1);
    else
        static_assert(N == 32, "no wgmma wrapper for this head dim");
}

/* Q K^T of warpgroup wg's rows and the key tile in ring stage `stage`: D/16
 * k-steps; within a chunk a k-step moves the descriptor start by 32 bytes (the
 * swizzle applies to the absolute address, so a start inside the pattern row
 * is allowed). */
template <class C>
__device__ __forceinline__ void issue_qk(float (&s)[C::BN / 2], const Sm90aSmem<C> &sm, int wg, int stage)
{
    typedef typename C::Tile T;
    constexpr int RB = T::ROW_BYTES;
#pragma unroll
    for (int kk = 0; kk < C::D / 16; kk++) {
        const int c = kk * 16 / T::CW, within = (kk * 16 % T::CW) * 2;
        const uint64_t da = sm90::matrix_descriptor(sm.q + c * C::BLOCK_M * RB + wg * 64 * RB + within, 16,
                                                    T::GROUP_BYTES, T::SWIZZLE);
        const uint64_t db = sm90::matrix_descriptor(sm.k + stage * T::KV_BYTES + c * C::BN * RB + within, 16,
                                                    T::GROUP_BYTES, T::SWIZZLE);
        wgmma_ss<C::BN>(s, da, db, kk > 0);
    }
}

/* O += P V: BN/16 k-steps of 16 keys; V is the MN-major B operand, its
 * column chunks BN*RB bytes apart. */
template <class C>
__device__ __forceinline__ void issue_pv(float (&o)[C::D / 2], const uint32_t (&pa)[C::BN / 16][4],
                                         const Sm90aSmem<C> &sm, int stage)
{
    typedef typename C::Tile T;
    constexpr int RB = T::ROW_BYTES;
#pragma unroll
    for (int kk = 0; kk < C::BN / 16; kk++) {
        const uint64_t db = sm90::matrix_descriptor(sm.v + stage * T::KV_BYTES + kk * 16 * RB, C::BN * RB,
                                                    T::GROUP_BYTES, T::SWIZZLE);
        wgmma_rs<C::D>(o, pa[kk], db);
    }
}

/* One arrival per warp: wgmma.wait_group is warpgroup-wide, so once it
 * returns no lane still reads the stage. */
__device__ __forceinline__ void release(uint32_t bar, int lane)
{
    __syncwarp();
    if (lane == 0)
        sm90::mbar_arrive(bar);
}

/* Ping-pong turns: named barrier 2 + w means "warpgroup w may issue". Each
 * warpgroup takes a turn per GEMM issue and then hands the turn over; the
 * second warpgroup opens the first turn, and the first takes one last
 * turn at the end to absorb the second's final hand-over (both take the
 * same number of turns: the tiles are the block's, not the warpgroup's).
 * Without PINGPONG, nothing. */
template <bool PINGPONG> struct Turns {
    __device__ __forceinline__ static void open(int wg)
    {
        if (PINGPONG && wg == 1)
            asm volatile("bar.arrive 2, 256;\n" ::: "memory");
    }
    __device__ __forceinline__ static void wait(int wg)
    {
        if constexpr (PINGPONG)
            asm volatile("bar.sync %0, 256;\n" ::"r"(2 + wg) : "memory");
    }
    __device__ __forceinline__ static void pass(int wg)
    {
        if constexpr (PINGPONG)
            asm volatile("bar.arrive %0, 256;\n" ::"r"(2 + (wg ^ 1)) : "memory");
    }
    __device__ __forceinline__ static void close(int wg)
    {
        if (PINGPONG && wg == 0)
            asm volatile("bar.sync 2, 256;\n" ::: "memory"); /* the second warpgroup's last hand-over */
    }
};

/* A consumer thread's place: warpgroup wg (0-based among the consumers), its
 * warp, lane, and the lane's row g (of 8) and column pair t4 (of 4) in the
 * wgmma accumulator layout. */
struct ConsumerThread {
    int wg, tid, warp, lane, g, t4;
};

/* The n key tiles of warpgroup wg's rows of tile `tile` (the last n of the
 * tile's key tiles, from ring position base), S into s, P into pa, O into o,
 * the softmax state into st. row0: this thread's first row (and row0 + 8);
 * wg_row0: the warpgroup's first. Releases each stage and, with its last
 * Q K^T, the warpgroup's Q. */
template <class C>
__device__ __forceinline__ void consume_key_tiles(const Sm90aParams &p, const Sm90aSmem<C> &sm, const ConsumerThread &t,
                                                  float (&o)[C::D / 2], float (&s)[C::BN / 2],
                                                  uint32_t (&pa)[C::BN / 16][4], RowState &st, int S,
                                                  float scale_log2, int tile, int base, int n, int wg_row0, int row0)
{
    constexpr int BN = C::BN, STAGES = C::STAGES;
    typedef Turns<C::PINGPONG> turns;
    const int wg = t.wg, lane = t.lane;
    /* A tile needs the mask when a key of it lies past the warpgroup's
     * first row (causal) or past the sequence end. */
    auto tile_needs_mask = [&](int kt) { return (C::CAUSAL && kt * BN + BN - 1 > wg_row0) || kt * BN + BN > S; };
    auto softmax = [&](int kt, float (&alpha)[2], RowState &state) {
        if (tile_needs_mask(kt))
            softmax_tile<BN, C::CAUSAL, true>(s, state, alpha, kt * BN, row0, S, scale_log2, t.t4);
        else
            softmax_tile<BN, C::CAUSAL, false>(s, state, alpha, kt * BN, row0, S, scale_log2, t.t4);
    };

#pragma unroll
    for (int i = 0; i < C::D / 2; i++)
        o[i] = 0.f;
    st.max[0] = st.max[1] = -INFINITY;
    st.sum[0] = st.sum[1] = 0.f;

    /* First key tile (the last one): S, softmax, nothing to rescale. */
    {
        const int stage = base % STAGES, use = base / STAGES;
        sm90::mbar_wait(sm.k_full(stage), use & 1);
        if (C::TIMELINE && p.timeline && t.tid == 0)
            stamp_tile(p, tile, TILE_STAMP_FIRST_K + wg, global_ns());
        turns::wait(wg);
        sm90::wgmma_fence();
        issue_qk<C>(s, sm, wg, stage);
        sm90::wgmma_commit();
        turns::pass(wg);
        sm90::wgmma_wait<0>();
        sm90::fence_registers(s);
        release(sm.k_free(stage), lane);
        if (n == 1)
            release(sm.q_free(wg), lane);
        float alpha[2];
        softmax(n - 1, alpha, st);
        pack_p<BN>(s, pa);
    }
    for (int i = 1; i < n; i++) {
        const int cur = base + i, prev = base + i - 1;
        const int stage = cur % STAGES, prev_stage = prev % STAGES;
        sm90::mbar_wait(sm.k_full(stage), (cur / STAGES) & 1);
        sm90::mbar_wait(sm.v_full(prev_stage), (prev / STAGES) & 1);
        turns::wait(wg);
        sm90::wgmma_fence();
        issue_qk<C>(s, sm, wg, stage); /* S of this tile ... */
        sm90::wgmma_commit();
        issue_pv<C>(o, pa, sm, prev_stage); /* ... then O += P V of the previous one */
        sm90::wgmma_commit();
        turns::pass(wg);
        sm90::wgmma_wait<1>(); /* S has landed; P V may still run */
        sm90::fence_registers(s);
        release(sm.k_free(stage), lane);
        if (i == n - 1)
            release(sm.q_free(wg), lane);
        float alpha[2];
        softmax(n - 1 - i, alpha, st);
        sm90::wgmma_wait<0>(); /* P V done: its V is free, O and pa may be touched */
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
    {
        const int last = base + n - 1, stage = last % STAGES;
        sm90::mbar_wait(sm.v_full(stage), (last / STAGES) & 1);
        turns::wait(wg);
        sm90::wgmma_fence();
        issue_pv<C>(o, pa, sm, stage);
        sm90::wgmma_commit();
        turns::pass(wg);
        sm90::wgmma_wait<0>();
        sm90::fence_registers(o);
        release(sm.v_free(stage), lane);
    }
}

/* A consumer warpgroup (warpgroup >= 1) from its register claim to the last
 * tile. */
template <class C>
__device__ __forceinline__ void consumer_loop(const Sm90aParams &p, const Sm90aSmem<C> &sm,
                                              const TileSlot (&tile_slot)[2], int S, int warpgroup)
{
    constexpr int BN = C::BN, STAGES = C::STAGES;
    typedef Turns<C::PINGPONG> turns;
    sm90::regs_claim<C::Roles::CONSUMER_REGS>();
    ConsumerThread t;
    t.wg = warpgroup - 1;
    t.tid = threadIdx.x % 128, t.warp = t.tid / 32, t.lane = t.tid % 32;
    t.g = t.lane / 4, t.t4 = t.lane % 4;
    const int wg = t.wg;
    const float scale_log2 = p.scale_log2;

    float o[C::D / 2];
    float s[BN / 2];
    uint32_t pa[BN / 16][4];

    turns::open(wg);
    int it = 0; /* ring position, as the producer counts it */
    for (int local = 0;; local++) {
        tile_barrier<C>(wg);
        /* Read through a lambda over the parity, as the kernel was tuned:
         * a reference to the slot reordered two loop counters in the code
         * (bench/sass_identity.sh). */
        auto slot = [&](int field) { return warp_uniform(tile_slot[local & 1][field]); };
        const int tile = slot(SLOT_TILE);
        if (tile < 0) {
            if (C::TIMELINE && p.timeline && t.tid == 0 && wg == 0)
                stamp_block(p, BLOCK_STAMP_EXIT, global_ns());
            break;
        }
        const unsigned long long t_start = C::TIMELINE ? global_ns() : 0;
        sm90::mbar_wait(sm.q_full(wg), local & 1);
        const int bh = slot(SLOT_HEAD), q0 = slot(SLOT_Q0), n_kt = slot(SLOT_KEY_TILES);
        if (C::TIMELINE && p.timeline && t.tid == 0 && wg == 0)
            stamp_tile_start(p, tile, t_start, n_kt);
        const int wg_row0 = q0 + wg * 64;             /* first query row of this warpgroup */
        const int row0 = wg_row0 + t.warp * 16 + t.g; /* this thread's rows: row0 and row0 + 8 */

        /* This warpgroup's key tiles: the last n of the tile's n_kt (they are
         * visited from the last key tile to the first, so the skipped ones
         * come first). A skipped stage is released once it has landed: the
         * arrival must fall in the phase the producer waits on next. */
        int n = n_kt;
        if (C::SKIP) {
            const int rows_end = min(wg_row0 + 64, S);
            n = wg_row0 >= S || rows_end <= 0 ? 0 : C::CAUSAL ? min(n_kt, (rows_end + BN - 1) / BN) : n_kt;
        }
        for (int i = 0; i < n_kt - n; i++) {
            const int pos = it + i, stage = pos % STAGES;
            sm90::mbar_wait(sm.k_full(stage), (pos / STAGES) & 1);
            release(sm.k_free(stage), t.lane);
            sm90::mbar_wait(sm.v_full(stage), (pos / STAGES) & 1);
            release(sm.v_free(stage), t.lane);
        }
        if (n == 0) {
            if (C::TIMELINE && p.timeline && t.tid == 0) {
                const unsigned long long now = global_ns();
                stamp_tile(p, tile, TILE_STAMP_DONE + wg, now);
                stamp_tile(p, tile, TILE_STAMP_FIRST_K + wg, now);
            }
            release(sm.q_free(wg), t.lane);
            it += n_kt;
            continue; /* every row past the sequence end (or before row 0): nothing to write */
        }
        const int base = it + n_kt - n; /* ring position of this warpgroup's first key tile */
        RowState st;
        consume_key_tiles<C>(p, sm, t, o, s, pa, st, S, scale_log2, tile, base, n, wg_row0, row0);
        it += n_kt;
        epilogue_store<C>(p, o, st, S, bh, row0, t.t4);
        if (C::TIMELINE && p.timeline && t.tid == 0)
            stamp_tile(p, tile, TILE_STAMP_DONE + wg, global_ns());
    }
    turns::close(wg);
}

} // namespace

#endif
