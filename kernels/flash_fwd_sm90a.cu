/* Hopper-native flash attention forward (sm_90a): the tensor memory
 * accelerator (TMA) brings tiles into shared memory, wgmma multiplies them.
 *
 * Persistent: one block per SM takes output tiles (64 query rows per consumer
 * warpgroup, of one head) from an atomic counter until none is left. A block
 * has three or four warpgroups:
 *   - warpgroup 0, the producer: one thread issues the TMA copies of each
 *     tile's Q and, for each key tile, of K and V into a ring of STAGES
 *     shared-memory stages; an mbarrier per stage and operand says "landed"
 *     (transaction bytes), one per stage and operand says "free again"
 *     (consumer arrivals: K as soon as its Q K^T is done, V after its P V).
 *     It loads the next tile's Q (in boxes of 64 rows, one per consumer
 *     warpgroup) and K/V while the consumers finish the current one, hands
 *     them the tile's coordinates through shared memory (so that they do no
 *     integer division between tiles), and gives its registers away
 *     (setmaxnreg).
 *   - warpgroups 1 and 2 (and 3 at D = 32, 64 and 96), the consumers: 64
 *     query rows each. Per key tile, S = Q K^T by wgmma with both operands in
 *     shared memory, the online softmax in registers (exp2 domain, scale
 *     folded into one FMA), then O += P V by wgmma with P straight from
 *     registers. The next key tile's
 *     Q K^T is issued with this tile's P V, before the softmax, so that the
 *     tensor cores work while it runs (pipelining within a warpgroup); at
 *     D = 128 the two warpgroups also take turns to issue (ping-pong), so
 *     one's softmax overlaps the other's GEMMs, and each meets the producer
 *     at a tile barrier of its own, so that the lead of the first survives
 *     from tile to tile; at D = 32, 64 and 96 a third warpgroup does that
 *     without turns. O goes to global memory straight from the accumulators.
 *   - What every lane of a warp computes alike (the warpgroup, the tile, its
 *     ring stages and barrier addresses) is made warp-uniform, so that it
 *     lives in uniform registers, off the vector pipes the softmax needs.
 *
 * Shared-memory layout: every operand is stored in column chunks of one
 * swizzle width (64 bf16 = 128 bytes with the 128-byte swizzle; 32 bf16 =
 * 64 bytes with the 64-byte swizzle for D = 32 and 96), rows contiguous within
 * a chunk. TMA writes that layout (one box per chunk) and wgmma reads it
 * through matrix descriptors: Q and K as K-major operands, V as the
 * MN-major ("transposed") B operand of P V, so V needs no transpose. A head
 * dim below the kernel's is zero-filled by TMA (out-of-range columns).
 *
 * Key tiles are visited from the last (the causal diagonal, the only ones
 * that need a mask) to the first. Tile order: see flash_sm90a_body. */
#include "flash_fwd_sm90a.h"

#include <cuda.h> /* CUtensorMap and its enums only: the encoder is reached through cudart */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "flash_tile_order.h"
#include "ptx_sm90a.cuh"
#include "wgmma_bf16.cuh"

typedef __nv_bfloat16 bf16;

struct Sm90aParams {
    bf16 *o;
    float *lse;
    int seq;
    int head_dim;    /* real head dim: row stride of q/k/v/o, columns written */
    int heads_total; /* batch * heads */
    int q_tiles;
    flash_tile_order order; /* tile order: see flash_sm90a_body */
    int *scheduler;      /* {next tile - gridDim.x, blocks finished}: zero between launches */
    float scale_log2; /* log2(e) / sqrt(head_dim) */
    /* Benchmark only (SM90A_OPT_TIMELINE kernels): when not null, the
     * timestamps of every tile and block (flash_sm90a_set_timeline). */
    unsigned long long *timeline;
};

namespace {

/* The block's roles for WGS consumer warpgroups of 64 query rows each (2 or
 * 3) behind one producer warpgroup. setmaxnreg moves registers within the
 * block's allocation at launch (168 per thread under __launch_bounds__(384, 1),
 * 128 under (512, 1)): the consumers' increase waits until the producer's
 * decrease has freed enough, so the two must balance or the block hangs. 24
 * producer registers spilled the causal tile arithmetic. */
template <int WGS> struct Sm90aRoles {
    static constexpr int BLOCK_M = 64 * WGS; /* query rows per tile */
    static constexpr int THREADS = 128 * (1 + WGS);
    static constexpr int LAUNCH_REGS = 65536 / THREADS / 8 * 8;
    static constexpr int PRODUCER_REGS = WGS == 2 ? 40 : 32;
    static constexpr int CONSUMER_REGS = WGS == 2 ? 232 : 160;
    static_assert(WGS == 2 || WGS == 3, "two or three consumer warpgroups");
    static_assert((LAUNCH_REGS - PRODUCER_REGS) * 128 >= (CONSUMER_REGS - LAUNCH_REGS) * 128 * WGS,
                  "setmaxnreg: the consumers take more registers than the producer frees");
};

template <int D, int BN, int STAGES, int WGS> struct Sm90aTile {
    static constexpr int BLOCK_M = Sm90aRoles<WGS>::BLOCK_M;
    static constexpr int CW = D % 64 == 0 ? 64 : 32;   /* chunk width, elements */
    static constexpr int CHUNKS = D / CW;
    static constexpr int ROW_BYTES = CW * 2;           /* 128 or 64 */
    static constexpr uint32_t SWIZZLE = CW == 64 ? 1 : 2; /* descriptor code: 128-byte / 64-byte */
    static constexpr uint32_t GROUP_BYTES = 8 * ROW_BYTES; /* between 8-row groups */
    static constexpr int Q_BYTES = CHUNKS * BLOCK_M * ROW_BYTES;
    static constexpr int KV_BYTES = CHUNKS * BN * ROW_BYTES; /* one stage of K (or V) */
    static constexpr int Q_SLICE_BYTES = CHUNKS * 64 * ROW_BYTES; /* one warpgroup's 64 rows */
    static constexpr int BAR_BYTES = 8 * (2 * WGS + 4 * STAGES);
    /* +1024: the dynamic shared memory base is aligned up to the swizzle pattern. */
    static constexpr size_t SMEM = (size_t)Q_BYTES + 2ull * STAGES * KV_BYTES + BAR_BYTES + 1024;
    static_assert(D % CW == 0 && D % 16 == 0, "head dim in whole chunks and k-steps");
    static_assert(BN % 16 == 0 && BN <= 256, "key tile in whole k-steps");
    static_assert(SMEM <= 227 * 1024, "shared memory per block");
};

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

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

/* Online-softmax state of the two rows a consumer thread holds (rows g and
 * g + 8 of its warp's 16). */
struct RowState {
    float max[2]; /* running max, log2 domain, scaled */
    float sum[2]; /* this thread's partial sum; the quad's lanes are summed at the end */
};

/* Turns the scores of one key tile into probabilities in place and returns
 * each row's rescale factor for O. s: the m64nBN accumulator of this thread
 * (s[4j + e]: row g + 8*(e >> 1), key 8j + 2*t4 + (e & 1)). MASK: some key of
 * the tile is past a row's diagonal (causal) or past the sequence end. */
template <int BN, bool CAUSAL, bool MASK, bool LIMIT>
__device__ __forceinline__ void softmax_tile(float (&s)[BN / 2], RowState &st, float (&alpha)[2], int key0,
                                             int row0, int seq, float scale_log2, int t4)
{
    if constexpr (MASK && LIMIT) {
        /* One limit per row: element i's key is base + a constant of i, and it
         * is masked when that constant exceeds the limit (one compare with an
         * immediate and one select per element). */
        const int base = key0 + 2 * t4;
        int limit[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            limit[h] = seq - 1 - base;
            if (CAUSAL)
                limit[h] = min(limit[h], row0 + 8 * h - base);
        }
#pragma unroll
        for (int i = 0; i < BN / 2; i++)
            if ((i >> 2) * 8 + (i & 1) > limit[(i >> 1) & 1])
                s[i] = -INFINITY;
    } else if constexpr (MASK) {
#pragma unroll
        for (int i = 0; i < BN / 2; i++) {
            const int key = key0 + (i >> 2) * 8 + 2 * t4 + (i & 1);
            const int row = row0 + ((i >> 1) & 1) * 8;
            if (key >= seq || (CAUSAL && key > row))
                s[i] = -INFINITY;
        }
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
            mx = fmaxf(mx, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(st.max[h], mx * scale_log2);
        /* A row that has seen no key yet keeps max -inf: subtract 0 instead so
         * that exp2(-inf) gives 0, not NaN. */
        const float m_use = m_new == -INFINITY ? 0.f : m_new;
        alpha[h] = fast_exp2(st.max[h] - m_use);
        st.max[h] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                float &x = s[4 * j + 2 * h + e];
                x = fast_exp2(fmaf(x, scale_log2, -m_use));
                sum += x;
            }
        st.sum[h] = st.sum[h] * alpha[h] + sum;
    }
}

/* The probabilities as wgmma A fragments: for k-step kk (keys 16kk..16kk+15)
 * the accumulator blocks 2kk and 2kk+1 are exactly the A layout. */
template <int BN> __device__ __forceinline__ void pack_p(const float (&s)[BN / 2], uint32_t (&pa)[BN / 16][4])
{
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            pa[kk][r] = pack_bf16x2(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
}

/* Options of the kernel body, so that the benchmark can build one tile
 * configuration several ways and compare them in the same run. */
enum {
    /* The two consumer warpgroups take turns issuing their GEMMs (named
     * barriers), so one's softmax runs while the other's GEMMs occupy the
     * tensor cores. */
    SM90A_OPT_PINGPONG = 1,
    /* Causal tiles aligned at the sequence end (three warpgroups only): see
     * tile_coords. */
    SM90A_OPT_END_ALIGNED = 2,
    /* Benchmark only: global-timer stamps of each tile's phases and each
     * block's entry and exit into p.timeline (layout: flash_fwd_sm90a.h). */
    SM90A_OPT_TIMELINE = 4,
    /* Benchmark only, the previous way: the warpgroup index and the tile
     * state per thread, and the mask by key and row per element. By default
     * they are made warp-uniform (a shuffle from lane 0), so that what derives
     * from them (ring stages, barrier and descriptor addresses, loop bounds)
     * lives in uniform registers on the uniform datapath, off the vector
     * pipes and registers the softmax needs; and the mask is one limit per
     * row (bench/RESULTS.md, step 23). */
    SM90A_OPT_PER_THREAD = 8,
    /* The producer meets each consumer warpgroup at a tile barrier of its
     * own, and each warpgroup's 64 rows of Q have their own barriers: see the
     * tile handoff in flash_sm90a_body. */
    SM90A_OPT_DECOUPLED = 16,
};

__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

template <int D, int BN, int STAGES, int WGS, bool CAUSAL, int OPT>
__device__ __forceinline__ void flash_sm90a_body(const CUtensorMap *tq, const CUtensorMap *tk, const CUtensorMap *tv,
                                                 const Sm90aParams &p)
{
    typedef Sm90aTile<D, BN, STAGES, WGS> T;
    typedef Sm90aRoles<WGS> R;
    constexpr int RB = T::ROW_BYTES, BLOCK_M = R::BLOCK_M;
    constexpr bool PINGPONG = (OPT & SM90A_OPT_PINGPONG) != 0;
    static_assert(!PINGPONG || WGS == 2, "ping-pong turns between two consumer warpgroups");
    /* With three warpgroups a tile's rows span more than one key tile: a
     * warpgroup skips the key tiles wholly past its rows' diagonal (and a
     * warpgroup wholly past the sequence end skips them all). With two and
     * BLOCK_M == BN both see the same key tiles, bar a tile past the sequence
     * end, and keep the turns' fixed count (ping-pong). */
    constexpr bool SKIP = WGS > 2;
    constexpr bool END_ALIGNED = (OPT & SM90A_OPT_END_ALIGNED) != 0 && CAUSAL;
    static_assert(!(OPT & SM90A_OPT_END_ALIGNED) || SKIP, "end-aligned tiles need the warpgroups' skipping");
    constexpr bool TIMELINE = (OPT & SM90A_OPT_TIMELINE) != 0;
    /* p.timeline read where used (a kernel parameter: no register held). */
#define timeline p.timeline
    if (TIMELINE && timeline && threadIdx.x == 128)
        timeline[(size_t)p.q_tiles * p.heads_total * 16 + blockIdx.x * 4 + 0] = global_ns();

    extern __shared__ unsigned char smem_raw[];
    const uint32_t smem_base = (sm90::smem_addr(smem_raw) + 1023u) & ~1023u;
    const uint32_t sQ = smem_base;
    const uint32_t sK = sQ + T::Q_BYTES;
    const uint32_t sV = sK + STAGES * T::KV_BYTES;
    const uint32_t bars = sV + STAGES * T::KV_BYTES;
    /* q_full: the Q tile has landed; q_free: every consumer warp has issued its
     * last Q K^T of the tile and it completed, so the next tile's Q may come.
     * Decoupled (see the tile handoff below), one pair per warpgroup and its 64
     * rows; otherwise pair 0 for the whole tile. */
    constexpr bool DECOUPLED = (OPT & SM90A_OPT_DECOUPLED) != 0;
    auto q_full = [&](int w) { return bars + 8u * (DECOUPLED ? w : 0); };
    auto q_free = [&](int w) { return bars + 8u * (WGS + (DECOUPLED ? w : 0)); };
    /* The tile index travels from the producer to the consumers through two
     * shared slots, one per parity of the block's tile count, and one named
     * barrier (bar.sync on both sides: compute-sanitizer's racecheck does not
     * count bar.arrive as ordering, and reported the one-slot arrive/sync
     * handoff). For its tile j the producer writes slot j&1, issues Q and the
     * first key tiles (whose ring slots tile j-1 frees), and then meets the
     * consumers, who come to the barrier at the end of tile j-1, so neither
     * side waits longer than it would for the data. Slot j&1 is written again
     * for tile j+2, after the barrier of tile j+1, which the consumers reach
     * only after reading it. A slot holds the tile's coordinates, which the
     * producer computes anyway, so that the consumers find them there instead
     * of computing them again between tiles: {tile (-1: none left), head,
     * first query row, key tiles}.
     * Decoupled, the producer meets each consumer warpgroup at a barrier of
     * their own (named barrier 4 + w, 160 threads), in warpgroup order, so
     * that a warpgroup done with its tile starts the next while the others
     * finish theirs (with ping-pong turns, the first warpgroup is half a key
     * tile ahead, and a block-wide barrier drained that lead at every tile);
     * the slot argument above holds for each warpgroup. Only the kernels with
     * turns use it: without them, racecheck reported the slot as racing
     * (bench/RESULTS.md, step 25). */
    __shared__ int tile_slot[2][4];
    constexpr int TILE_BARRIER = 4;
    auto tile_barrier = [](int w) {
        if constexpr (DECOUPLED)
            asm volatile("bar.sync %0, %1;\n" ::"r"(TILE_BARRIER + w), "n"(32 + 128) : "memory");
        else
            asm volatile("bar.sync %0, %1;\n" ::"n"(TILE_BARRIER), "n"(32 + 128 * WGS) : "memory");
    };
    auto k_full = [&](int s) { return bars + 8u * (2 * WGS + s); };
    auto v_full = [&](int s) { return bars + 8u * (2 * WGS + STAGES + s); };
    /* K and V of a stage are freed separately: K as soon as its Q K^T is done,
     * V after its P V, one key tile later. */
    auto k_free = [&](int s) { return bars + 8u * (2 * WGS + 2 * STAGES + s); };
    auto v_free = [&](int s) { return bars + 8u * (2 * WGS + 3 * STAGES + s); };

    const int S = p.seq;
    constexpr bool UNIFORM = (OPT & SM90A_OPT_PER_THREAD) == 0;
    const int warpgroup = UNIFORM ? __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0) : threadIdx.x / 128;
    /* Persistent: block b starts with tile b, then takes the next tile not yet
     * taken (an atomic counter: a list schedule; a static round-robin left the
     * busiest block 17-40% above the mean in the causal case, and a static
     * snake order up to 24%, simulated with tile durations fitted to measured
     * ones). The tiles are
     * numbered in groups of heads_per_group heads, a group's K and V small
     * enough to stay in the L2 while the blocks running at any moment share
     * it (numbered over all heads at once, K and V came from DRAM about five
     * times over at 4x16x4096x128). Within a group, causal tiles go heavy
     * first, query tile by query tile across the group's heads, so the light
     * ones fill in at the end. */
    const int total_tiles = p.q_tiles * p.heads_total;
    auto tile_coords = [&](int tile, int &bh, int &q0, int &n_kt) {
        int q_tile;
        flash_tile_order_at(&p.order, tile, CAUSAL, &bh, &q_tile);
        /* Causal with three warpgroups: the tiles end at S, S - BLOCK_M, ...
         * so that a ragged tile (S not a multiple of BLOCK_M) is the first,
         * with the fewest keys, its first rows before row 0 (zero-filled by
         * TMA, masked, never written); aligned at 0, it was the last, its
         * one or two live warpgroups running the most key tiles while the
         * rest idled. */
        q0 = END_ALIGNED ? S - (p.q_tiles - q_tile) * BLOCK_M : q_tile * BLOCK_M;
        const int kv_end = CAUSAL ? min(q0 + BLOCK_M, S) : S;
        n_kt = (kv_end + BN - 1) / BN;
    };

    if (threadIdx.x == 0) {
        for (int w = 0; w < (DECOUPLED ? WGS : 1); w++) {
            sm90::mbar_init(q_full(w), 1);
            sm90::mbar_init(q_free(w), (DECOUPLED ? 1 : WGS) * 4); /* one arrival per consumer warp */
        }
        for (int s = 0; s < STAGES; s++) {
            sm90::mbar_init(k_full(s), 1);
            sm90::mbar_init(v_full(s), 1);
            sm90::mbar_init(k_free(s), WGS * 4);
            sm90::mbar_init(v_free(s), WGS * 4);
        }
        sm90::mbar_fence_init();
    }
    __syncthreads();

    if (warpgroup == 0) {
        sm90::regs_release<R::PRODUCER_REGS>();
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
                tile_coords(tile, bh, q0, n_kt);
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
            auto issue = [&](int i, bool v) {
                const int s = (it0 + i) % STAGES, use = (it0 + i) / STAGES, kt = n_kt - 1 - i;
                const uint32_t free_bar = v ? v_free(s) : k_free(s), full_bar = v ? v_full(s) : k_full(s);
                const uint32_t dst = (v ? sV : sK) + s * T::KV_BYTES;
                if (use > 0)
                    sm90::mbar_wait(free_bar, (use - 1) & 1);
                sm90::mbar_arrive_expect_tx(full_bar, T::KV_BYTES);
#pragma unroll
                for (int c = 0; c < T::CHUNKS; c++)
                    sm90::tma_load_3d(dst + c * BN * RB, v ? tv : tk, full_bar, c * T::CW, kt * BN, bh);
            };
            if (leader) {
                tile_slot[local & 1][0] = last ? -1 : tile;
                tile_slot[local & 1][1] = bh;
                tile_slot[local & 1][2] = q0;
                tile_slot[local & 1][3] = n_kt;
                /* Q in boxes of 64 rows, one per warpgroup. Decoupled, each
                 * warpgroup's rows come as soon as it has freed them, between
                 * the ring's first copies. */
                auto issue_q = [&](int w) {
                    if (local > 0 && (DECOUPLED || w == 0))
                        sm90::mbar_wait(q_free(w), (local - 1) & 1);
                    if (DECOUPLED || w == 0)
                        sm90::mbar_arrive_expect_tx(q_full(w), DECOUPLED ? T::Q_SLICE_BYTES : T::Q_BYTES);
#pragma unroll
                    for (int c = 0; c < T::CHUNKS; c++)
                        sm90::tma_load_3d(sQ + c * BLOCK_M * RB + w * 64 * RB, tq, q_full(w), c * T::CW, q0 + 64 * w,
                                          bh);
                };
                if (!last) {
                    if (TIMELINE && timeline)
                        timeline[tile * 16 + 2] = global_ns();
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
                    tile_barrier(w);
            } else {
                tile_barrier(0);
            }
            if (last)
                break;
            if (leader) {
                for (int c = before_barrier; c < copies; c++)
                    issue(c / 2, c & 1);
                tile = (int)gridDim.x + atomicAdd(&p.scheduler[0], 1);
            }
            it += n_kt;
            tile = __shfl_sync(0xffffffffu, tile, 0);
        }
        /* Every block takes tiles until one is out of range; the last block to
         * get there leaves the counter at zero for the next launch (which the
         * stream orders after this one). */
        if (leader && atomicAdd(&p.scheduler[1], 1) == (int)gridDim.x - 1) {
            atomicExch(&p.scheduler[0], 0);
            atomicExch(&p.scheduler[1], 0);
        }
        return;
    }

    sm90::regs_claim<R::CONSUMER_REGS>();
    const int wg = warpgroup - 1;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t4 = lane % 4;
    const float scale_log2 = p.scale_log2;

    float o[D / 2];
    float s[BN / 2];
    uint32_t pa[BN / 16][4];

    /* Q K^T of the key tile in ring stage `stage`: D/16 k-steps; within a chunk
     * a k-step moves the descriptor start by 32 bytes (the swizzle applies to
     * the absolute address, so a start inside the pattern row is allowed). */
    auto issue_qk = [&](int stage) {
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            const int c = kk * 16 / T::CW, within = (kk * 16 % T::CW) * 2;
            const uint64_t da = sm90::matrix_descriptor(sQ + c * BLOCK_M * RB + wg * 64 * RB + within, 16,
                                                        T::GROUP_BYTES, T::SWIZZLE);
            const uint64_t db = sm90::matrix_descriptor(sK + stage * T::KV_BYTES + c * BN * RB + within, 16,
                                                        T::GROUP_BYTES, T::SWIZZLE);
            wgmma_ss<BN>(s, da, db, kk > 0);
        }
    };
    /* O += P V: BN/16 k-steps of 16 keys; V is the MN-major B operand, its
     * column chunks BN*RB bytes apart. */
    auto issue_pv = [&](int stage) {
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            const uint64_t db = sm90::matrix_descriptor(sV + stage * T::KV_BYTES + kk * 16 * RB, BN * RB,
                                                        T::GROUP_BYTES, T::SWIZZLE);
            wgmma_rs<D>(o, pa[kk], db);
        }
    };
    /* One arrival per warp: wgmma.wait_group is warpgroup-wide, so once it
     * returns no lane still reads the stage. */
    auto release = [&](uint32_t bar) {
        __syncwarp();
        if (lane == 0)
            sm90::mbar_arrive(bar);
    };
    /* Ping-pong turns: named barrier 2 + w means "warpgroup w may issue". Each
     * warpgroup takes a turn per GEMM issue and then hands the turn over; the
     * second warpgroup opens the first turn, and the first takes one last
     * turn at the end to absorb the second's final hand-over (both take the
     * same number of turns: the tiles are the block's, not the warpgroup's). */
    auto turn_wait = [&]() {
        if constexpr (PINGPONG)
            asm volatile("bar.sync %0, 256;\n" ::"r"(2 + wg) : "memory");
    };
    auto turn_pass = [&]() {
        if constexpr (PINGPONG)
            asm volatile("bar.arrive %0, 256;\n" ::"r"(2 + (wg ^ 1)) : "memory");
    };
    if (PINGPONG && wg == 1)
        asm volatile("bar.arrive 2, 256;\n" ::: "memory");

    int it = 0; /* ring position, as the producer counts it */
    for (int local = 0;; local++) {
        tile_barrier(wg);
        auto slot = [&](int i) {
            return UNIFORM ? __shfl_sync(0xffffffffu, tile_slot[local & 1][i], 0) : tile_slot[local & 1][i];
        };
        const int tile = slot(0);
        if (tile < 0) {
            if (TIMELINE && timeline && tid == 0 && wg == 0) {
                timeline[(size_t)p.q_tiles * p.heads_total * 16 + blockIdx.x * 4 + 1] = global_ns();
            }
            break;
        }
        const unsigned long long t_start = TIMELINE ? global_ns() : 0;
        sm90::mbar_wait(q_full(wg), local & 1);
        const int bh = slot(1), q0 = slot(2), n_kt = slot(3);
        if (TIMELINE && timeline && tid == 0 && wg == 0) {
            unsigned smid;
            asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
            timeline[tile * 16 + 0] = blockIdx.x | (unsigned long long)smid << 32;
            timeline[tile * 16 + 1] = t_start;
            timeline[tile * 16 + 3] = global_ns();
            timeline[tile * 16 + 10] = n_kt;
        }
        const int wg_row0 = q0 + wg * 64;         /* first query row of this warpgroup */
        const int row0 = wg_row0 + warp * 16 + g; /* this thread's rows: row0 and row0 + 8 */
        /* A tile needs the mask when a key of it lies past the warpgroup's
         * first row (causal) or past the sequence end. */
        auto tile_needs_mask = [&](int kt) {
            return (CAUSAL && kt * BN + BN - 1 > wg_row0) || kt * BN + BN > S;
        };
        auto softmax = [&](int kt, float (&alpha)[2], RowState &st) {
            if (tile_needs_mask(kt))
                softmax_tile<BN, CAUSAL, true, UNIFORM>(s, st, alpha, kt * BN, row0, S, scale_log2, t4);
            else
                softmax_tile<BN, CAUSAL, false, UNIFORM>(s, st, alpha, kt * BN, row0, S, scale_log2, t4);
        };

        /* This warpgroup's key tiles: the last n of the tile's n_kt (they are
         * visited from the last key tile to the first, so the skipped ones
         * come first). A skipped stage is released once it has landed: the
         * arrival must fall in the phase the producer waits on next. */
        int n = n_kt;
        if (SKIP) {
            const int rows_end = min(wg_row0 + 64, S);
            n = wg_row0 >= S || rows_end <= 0 ? 0 : CAUSAL ? min(n_kt, (rows_end + BN - 1) / BN) : n_kt;
        }
        for (int i = 0; i < n_kt - n; i++) {
            const int pos = it + i, stage = pos % STAGES;
            sm90::mbar_wait(k_full(stage), (pos / STAGES) & 1);
            release(k_free(stage));
            sm90::mbar_wait(v_full(stage), (pos / STAGES) & 1);
            release(v_free(stage));
        }
        if (n == 0) {
            if (TIMELINE && timeline && tid == 0)
                timeline[tile * 16 + 4 + wg] = timeline[tile * 16 + 7 + wg] = global_ns();
            release(q_free(wg));
            it += n_kt;
            continue; /* every row past the sequence end (or before row 0): nothing to write */
        }
        const int base = it + n_kt - n; /* ring position of this warpgroup's first key tile */

#pragma unroll
        for (int i = 0; i < D / 2; i++)
            o[i] = 0.f;
        RowState st;
        st.max[0] = st.max[1] = -INFINITY;
        st.sum[0] = st.sum[1] = 0.f;

        /* First key tile (the last one): S, softmax, nothing to rescale. */
        {
            const int stage = base % STAGES, use = base / STAGES;
            sm90::mbar_wait(k_full(stage), use & 1);
            if (TIMELINE && timeline && tid == 0)
                timeline[tile * 16 + 4 + wg] = global_ns();
            turn_wait();
            sm90::wgmma_fence();
            issue_qk(stage);
            sm90::wgmma_commit();
            turn_pass();
            sm90::wgmma_wait<0>();
            sm90::fence_registers(s);
            release(k_free(stage));
            if (n == 1)
                release(q_free(wg));
            float alpha[2];
            softmax(n - 1, alpha, st);
            pack_p<BN>(s, pa);
        }
        for (int i = 1; i < n; i++) {
            const int cur = base + i, prev = base + i - 1;
            const int stage = cur % STAGES, prev_stage = prev % STAGES;
            sm90::mbar_wait(k_full(stage), (cur / STAGES) & 1);
            sm90::mbar_wait(v_full(prev_stage), (prev / STAGES) & 1);
            turn_wait();
            sm90::wgmma_fence();
            issue_qk(stage); /* S of this tile ... */
            sm90::wgmma_commit();
            issue_pv(prev_stage); /* ... then O += P V of the previous one */
            sm90::wgmma_commit();
            turn_pass();
            sm90::wgmma_wait<1>(); /* S has landed; P V may still run */
            sm90::fence_registers(s);
            release(k_free(stage));
            if (i == n - 1)
                release(q_free(wg));
            float alpha[2];
            softmax(n - 1 - i, alpha, st);
            sm90::wgmma_wait<0>(); /* P V done: its V is free, O and pa may be touched */
            sm90::fence_registers(o);
            release(v_free(prev_stage));
#pragma unroll
            for (int j = 0; j < D / 8; j++) {
                o[4 * j + 0] *= alpha[0];
                o[4 * j + 1] *= alpha[0];
                o[4 * j + 2] *= alpha[1];
                o[4 * j + 3] *= alpha[1];
            }
            pack_p<BN>(s, pa);
        }
        {
            const int last = base + n - 1, stage = last % STAGES;
            sm90::mbar_wait(v_full(stage), (last / STAGES) & 1);
            turn_wait();
            sm90::wgmma_fence();
            issue_pv(stage);
            sm90::wgmma_commit();
            turn_pass();
            sm90::wgmma_wait<0>();
            sm90::fence_registers(o);
            release(v_free(stage));
        }
        it += n_kt;

        /* Epilogue, straight from the accumulators: the Q tile may already
         * hold the next tile's queries. Each quad writes 16 contiguous bytes of
         * a row per store; rows < S and columns < head_dim only. */
        bf16 *O = p.o + (size_t)bh * S * p.head_dim;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float l = st.sum[h];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const float inv = l > 0.f ? 1.f / l : 0.f;
            const int row = row0 + 8 * h;
            if (row >= 0 && row < S) {
                if (t4 == 0)
                    p.lse[(size_t)bh * S + row] = (st.max[h] + __log2f(l)) * 0.69314718055994531f;
                bf16 *orow = O + (size_t)row * p.head_dim;
#pragma unroll
                for (int j = 0; j < D / 8; j++) {
                    const int col = 8 * j + 2 * t4;
                    if (col < p.head_dim)
                        *reinterpret_cast<uint32_t *>(orow + col) =
                            pack_bf16x2(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
                }
            }
        }
        if (TIMELINE && timeline && tid == 0)
            timeline[tile * 16 + 7 + wg] = global_ns();
    }
    if (PINGPONG && wg == 0)
        asm volatile("bar.sync 2, 256;\n" ::: "memory"); /* the second warpgroup's last hand-over */
#undef timeline
}

} // namespace

/* One extern "C" kernel per (configuration, causal): the name CUPTI records is
 * the name written here. Only the sm_90a pass has a body; any other target
 * compiles an empty kernel that the host never launches. */
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ATTNPROF_SM90A_BODY(D, BN, ST, WGS, CAUSAL, OPT) __trap();
#else
#define ATTNPROF_SM90A_BODY(D, BN, ST, WGS, CAUSAL, OPT) flash_sm90a_body<D, BN, ST, WGS, CAUSAL, OPT>(&tq, &tk, &tv, p);
#endif
/* BM (query rows per tile) is spelled out for the name; it must be 64 * WGS. */
#define ATTNPROF_SM90A_KERNEL(D, BM, BN, WGS, ST, OPT, SUFFIX)                                                  \
    static_assert(BM == Sm90aRoles<WGS>::BLOCK_M, "tile rows: 64 per consumer warpgroup");                     \
    extern "C" __global__ void __launch_bounds__(Sm90aRoles<WGS>::THREADS, 1)                                  \
        attnprof_flash_fwd_sm90a_bf16_d##D##_##BM##x##BN##_wg##WGS##SUFFIX(                                     \
            const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,                    \
            const __grid_constant__ CUtensorMap tv, Sm90aParams p)                                              \
    {                                                                                                           \
        ATTNPROF_SM90A_BODY(D, BN, ST, WGS, true, OPT)                                                          \
    }                                                                                                           \
    extern "C" __global__ void __launch_bounds__(Sm90aRoles<WGS>::THREADS, 1)                                  \
        attnprof_flash_fwd_sm90a_bf16_d##D##_##BM##x##BN##_wg##WGS##SUFFIX##_noncausal(                         \
            const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,                    \
            const __grid_constant__ CUtensorMap tv, Sm90aParams p)                                              \
    {                                                                                                           \
        ATTNPROF_SM90A_BODY(D, BN, ST, WGS, false, OPT)                                                         \
    }

/* The defaults, chosen from measurements on the H200 (bench/RESULTS.md,
 * harness timings in one run each):
 *   - D = 32 and 64: three consumer warpgroups on 192-row tiles, causal ones
 *     aligned at the sequence end; no turns (the third warpgroup gives each
 *     scheduler a third warp to hide the softmax behind, and round-robin
 *     turns among three measured slower: 67.3 against 64.6 us). At
 *     8x16x1024x64 64.4 us against 65.6 aligned at 0 and 69.2 with two
 *     warpgroups and turns; at 4x16x4096x64 332 against 335 and 380; at
 *     4x16x4096x32 266 against 272 and 321 with two.
 *   - D = 96: three warpgroups on 192x96 tiles (O and 128-key scores leave
 *     too few registers for three: they spilled), 1-4% ahead of two with
 *     turns in five runs (438.7 against 458.0 us at 4x16x4096x96), causal
 *     ones end-aligned (437.0 against 443.4).
 *   - D = 128: two warpgroups with ping-pong turns (510 vs 528 us at
 *     4x16x4096x128); with three, 192x96 tiles spilled.
 *   - D = 256: two without turns (even, 535.6 vs 534.8 us at 2x16x4096x256,
 *     and turns cost the causal kernel a 4-byte spill).
 *   - D = 128 meets each warpgroup at a tile barrier of its own
 *     (SM90A_OPT_DECOUPLED): 1-3% faster, launched alternately with the
 *     block-wide barrier (1.012 at 4x16x4096x128, 1.025 at 8x16x1024x128, a
 *     tie non-causal); at D = 32 and 64, 3% slower. D = 96 and 256 gained 1%
 *     and 4% that way, but compute-sanitizer's racecheck reported the tile
 *     slot of those two (no turns between their warpgroups) as racing, and
 *     the D = 128 kernel, whose turns also order its warpgroups, as clean:
 *     they keep the block-wide barrier (bench/RESULTS.md, step 25).
 * Suffixes: _pp ping-pong turns, _ea end-aligned causal tiles; _wgN the
 * consumer warpgroups. */
ATTNPROF_SM90A_KERNEL(32, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED, _ea)
ATTNPROF_SM90A_KERNEL(64, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED, _ea)
ATTNPROF_SM90A_KERNEL(96, 192, 96, 3, 2, SM90A_OPT_END_ALIGNED, _ea)
ATTNPROF_SM90A_KERNEL(128, 128, 128, 2, 2, SM90A_OPT_PINGPONG | SM90A_OPT_DECOUPLED, _pp)
ATTNPROF_SM90A_KERNEL(256, 128, 64, 2, 2, 0, )
/* Built only into the benchmark: the other choices, measured against the
 * defaults in the same run. */
#ifdef ATTNPROF_FLASH_EXPERIMENTAL_TILES
ATTNPROF_SM90A_KERNEL(32, 128, 128, 2, 2, 0, )
ATTNPROF_SM90A_KERNEL(64, 192, 128, 3, 2, 0, )
ATTNPROF_SM90A_KERNEL(64, 128, 128, 2, 2, SM90A_OPT_PINGPONG, _pp)
ATTNPROF_SM90A_KERNEL(64, 128, 128, 2, 2, 0, )
ATTNPROF_SM90A_KERNEL(128, 128, 128, 2, 2, 0, )
ATTNPROF_SM90A_KERNEL(64, 128, 192, 2, 2, 0, )
ATTNPROF_SM90A_KERNEL(128, 128, 128, 2, 3, SM90A_OPT_PINGPONG, _pp_s3)
ATTNPROF_SM90A_KERNEL(128, 128, 176, 2, 2, SM90A_OPT_PINGPONG, _pp)
ATTNPROF_SM90A_KERNEL(128, 128, 176, 2, 2, 0, )
ATTNPROF_SM90A_KERNEL(64, 128, 128, 2, 3, 0, _s3)
ATTNPROF_SM90A_KERNEL(64, 128, 64, 2, 2, 0, )
ATTNPROF_SM90A_KERNEL(64, 192, 128, 3, 3, 0, _s3)
ATTNPROF_SM90A_KERNEL(32, 192, 128, 3, 2, 0, )
ATTNPROF_SM90A_KERNEL(96, 128, 128, 2, 2, SM90A_OPT_PINGPONG, _pp)
ATTNPROF_SM90A_KERNEL(96, 192, 96, 3, 2, 0, )
ATTNPROF_SM90A_KERNEL(64, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_TIMELINE, _ea_tl)
ATTNPROF_SM90A_KERNEL(128, 128, 128, 2, 2, SM90A_OPT_PINGPONG | SM90A_OPT_DECOUPLED | SM90A_OPT_TIMELINE, _pp_tl)
ATTNPROF_SM90A_KERNEL(64, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_PER_THREAD, _ea_pt)
ATTNPROF_SM90A_KERNEL(64, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_DECOUPLED, _ea_dc)
ATTNPROF_SM90A_KERNEL(128, 192, 64, 3, 2, SM90A_OPT_END_ALIGNED, _ea)
ATTNPROF_SM90A_KERNEL(128, 192, 64, 3, 3, SM90A_OPT_END_ALIGNED, _ea_s3)
ATTNPROF_SM90A_KERNEL(128, 192, 64, 3, 3, SM90A_OPT_END_ALIGNED | SM90A_OPT_DECOUPLED, _ea_s3_dc)
ATTNPROF_SM90A_KERNEL(128, 128, 128, 2, 2, SM90A_OPT_PINGPONG, _pp_bw)
ATTNPROF_SM90A_KERNEL(32, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_DECOUPLED, _ea_dc)
ATTNPROF_SM90A_KERNEL(96, 192, 96, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_DECOUPLED, _ea_dc)
ATTNPROF_SM90A_KERNEL(256, 128, 64, 2, 2, SM90A_OPT_DECOUPLED, _dc)
ATTNPROF_SM90A_KERNEL(128, 128, 128, 2, 2, SM90A_OPT_PINGPONG | SM90A_OPT_TIMELINE, _pp_bw_tl)
ATTNPROF_SM90A_KERNEL(64, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_DECOUPLED | SM90A_OPT_TIMELINE, _ea_dc_tl)
ATTNPROF_SM90A_KERNEL(128, 128, 128, 2, 2, SM90A_OPT_PINGPONG | SM90A_OPT_PER_THREAD, _pp_pt)
ATTNPROF_SM90A_KERNEL(32, 192, 128, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_PER_THREAD, _ea_pt)
ATTNPROF_SM90A_KERNEL(96, 192, 96, 3, 2, SM90A_OPT_END_ALIGNED | SM90A_OPT_PER_THREAD, _ea_pt)
ATTNPROF_SM90A_KERNEL(256, 128, 64, 2, 2, SM90A_OPT_PER_THREAD, _pt)
#endif

namespace {

typedef void (*sm90a_kernel_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap, Sm90aParams);

struct Sm90aEntry {
    flash_fwd_config cfg;
    sm90a_kernel_fn causal, noncausal;
    int chunk_width;
};

#define ATTNPROF_SM90A_ENTRY(D, BM, BN, WGS, ST, SUFFIX, NOTE)                                                   \
    {{"attnprof_flash_fwd_sm90a_bf16_d" #D "_" #BM "x" #BN "_wg" #WGS #SUFFIX, D, BM, BN,                        \
      Sm90aRoles<WGS>::THREADS / 32, Sm90aRoles<WGS>::THREADS, Sm90aTile<D, BN, ST, WGS>::SMEM,                  \
      "wgmma (sm_90a) + TMA ring of " #ST " stages; persistent; 1 producer warp, " #WGS " consumer warpgroups, " \
      "setmaxnreg, atomic tile scheduler" NOTE,                                                                  \
      "1 producer warpgroup (one thread issues the TMA copies) + " #WGS " consumer warpgroups of 64 query rows", \
      "persistent: one block per SM takes tiles from an atomic counter; heads in L2-sized groups, heavy "        \
      "query tiles first"},                                                                                      \
     attnprof_flash_fwd_sm90a_bf16_d##D##_##BM##x##BN##_wg##WGS##SUFFIX,                                         \
     attnprof_flash_fwd_sm90a_bf16_d##D##_##BM##x##BN##_wg##WGS##SUFFIX##_noncausal,                             \
     Sm90aTile<D, BN, ST, WGS>::CW}

#define NOTE_PINGPONG ", ping-pong turns between the consumer warpgroups"
#define NOTE_END_ALIGNED ", causal tiles aligned at the sequence end"
#define NOTE_DECOUPLED ", a tile barrier per consumer warpgroup"
#define NOTE_BLOCK_WIDE ", one block-wide tile barrier (the previous way)"
#define NOTE_PER_THREAD ", tile state per thread (the previous way)"

/* The first entry for a head dim is its default (flash_sm90a_config_for_dim). */
const Sm90aEntry sm90a_entries[] = {
    ATTNPROF_SM90A_ENTRY(32, 192, 128, 3, 2, _ea, NOTE_END_ALIGNED),
    ATTNPROF_SM90A_ENTRY(64, 192, 128, 3, 2, _ea, NOTE_END_ALIGNED),
    ATTNPROF_SM90A_ENTRY(96, 192, 96, 3, 2, _ea, NOTE_END_ALIGNED),
    ATTNPROF_SM90A_ENTRY(128, 128, 128, 2, 2, _pp, NOTE_PINGPONG NOTE_DECOUPLED),
    ATTNPROF_SM90A_ENTRY(256, 128, 64, 2, 2, , ""),
#ifdef ATTNPROF_FLASH_EXPERIMENTAL_TILES
    ATTNPROF_SM90A_ENTRY(32, 128, 128, 2, 2, , ""),
    ATTNPROF_SM90A_ENTRY(64, 192, 128, 3, 2, , ""),
    ATTNPROF_SM90A_ENTRY(64, 128, 128, 2, 2, _pp, NOTE_PINGPONG),
    ATTNPROF_SM90A_ENTRY(64, 128, 128, 2, 2, , ""),
    ATTNPROF_SM90A_ENTRY(128, 128, 128, 2, 2, , ""),
    ATTNPROF_SM90A_ENTRY(64, 128, 192, 2, 2, , ""),
    ATTNPROF_SM90A_ENTRY(128, 128, 128, 2, 3, _pp_s3, NOTE_PINGPONG),
    ATTNPROF_SM90A_ENTRY(128, 128, 176, 2, 2, _pp, NOTE_PINGPONG),
    ATTNPROF_SM90A_ENTRY(128, 128, 176, 2, 2, , ""),
    ATTNPROF_SM90A_ENTRY(64, 128, 128, 2, 3, _s3, ""),
    ATTNPROF_SM90A_ENTRY(64, 128, 64, 2, 2, , ""),
    ATTNPROF_SM90A_ENTRY(64, 192, 128, 3, 3, _s3, ""),
    ATTNPROF_SM90A_ENTRY(32, 192, 128, 3, 2, , ""),
    ATTNPROF_SM90A_ENTRY(96, 128, 128, 2, 2, _pp, NOTE_PINGPONG),
    ATTNPROF_SM90A_ENTRY(96, 192, 96, 3, 2, , ""),
    ATTNPROF_SM90A_ENTRY(64, 192, 128, 3, 2, _ea_tl, NOTE_END_ALIGNED ", timeline stamps"),
    ATTNPROF_SM90A_ENTRY(128, 128, 128, 2, 2, _pp_tl, NOTE_PINGPONG ", timeline stamps"),
    ATTNPROF_SM90A_ENTRY(64, 192, 128, 3, 2, _ea_pt, NOTE_END_ALIGNED NOTE_PER_THREAD),
    ATTNPROF_SM90A_ENTRY(64, 192, 128, 3, 2, _ea_dc, NOTE_END_ALIGNED NOTE_DECOUPLED),
    ATTNPROF_SM90A_ENTRY(128, 192, 64, 3, 2, _ea, NOTE_END_ALIGNED),
    ATTNPROF_SM90A_ENTRY(128, 192, 64, 3, 3, _ea_s3, NOTE_END_ALIGNED),
    ATTNPROF_SM90A_ENTRY(128, 192, 64, 3, 3, _ea_s3_dc, NOTE_END_ALIGNED NOTE_DECOUPLED),
    ATTNPROF_SM90A_ENTRY(128, 128, 128, 2, 2, _pp_bw, NOTE_PINGPONG NOTE_BLOCK_WIDE),
    ATTNPROF_SM90A_ENTRY(32, 192, 128, 3, 2, _ea_dc, NOTE_END_ALIGNED NOTE_DECOUPLED),
    ATTNPROF_SM90A_ENTRY(96, 192, 96, 3, 2, _ea_dc, NOTE_END_ALIGNED NOTE_DECOUPLED),
    ATTNPROF_SM90A_ENTRY(256, 128, 64, 2, 2, _dc, NOTE_DECOUPLED),
    ATTNPROF_SM90A_ENTRY(128, 128, 128, 2, 2, _pp_bw_tl, NOTE_PINGPONG NOTE_BLOCK_WIDE ", timeline stamps"),
    ATTNPROF_SM90A_ENTRY(64, 192, 128, 3, 2, _ea_dc_tl, NOTE_END_ALIGNED NOTE_DECOUPLED ", timeline stamps"),
    ATTNPROF_SM90A_ENTRY(128, 128, 128, 2, 2, _pp_pt, NOTE_PINGPONG NOTE_PER_THREAD),
    ATTNPROF_SM90A_ENTRY(32, 192, 128, 3, 2, _ea_pt, NOTE_END_ALIGNED NOTE_PER_THREAD),
    ATTNPROF_SM90A_ENTRY(96, 192, 96, 3, 2, _ea_pt, NOTE_END_ALIGNED NOTE_PER_THREAD),
    ATTNPROF_SM90A_ENTRY(256, 128, 64, 2, 2, _pt, NOTE_PER_THREAD),
#endif
};
const int sm90a_entry_count = (int)(sizeof sm90a_entries / sizeof sm90a_entries[0]);

typedef CUresult (*encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                    const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                    CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* cuTensorMapEncodeTiled from the driver, through cudart, so that the binary
 * does not link libcuda. */
encode_tiled_fn tensor_map_encoder(void)
{
    static encode_tiled_fn fn = nullptr;
    if (!fn) {
        void *sym = nullptr;
        cudaDriverEntryPointQueryResult found;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &sym, 12000, cudaEnableDefault, &found) ==
                cudaSuccess &&
            found == cudaDriverEntryPointSuccess)
            fn = reinterpret_cast<encode_tiled_fn>(sym);
    }
    return fn;
}

/* Tensor maps of the buffers seen most recently, per thread: encoding is a
 * host call of a few microseconds, and a forward reuses the same buffers. */
struct MapKey {
    const void *ptr;
    int head_dim, seq, heads_total, box_rows, chunk_width;
    bool operator==(const MapKey &o) const
    {
        return ptr == o.ptr && head_dim == o.head_dim && seq == o.seq && heads_total == o.heads_total &&
               box_rows == o.box_rows && chunk_width == o.chunk_width;
    }
};
struct MapCache {
    enum { SLOTS = 24 };
    MapKey key[SLOTS];
    CUtensorMap map[SLOTS];
    int used, next;
};
thread_local MapCache map_cache;

cudaError_t tensor_map_for(const MapKey &k, CUtensorMap *out)
{
    MapCache &c = map_cache;
    for (int i = 0; i < c.used; i++)
        if (c.key[i] == k) {
            *out = c.map[i];
            return cudaSuccess;
        }
    encode_tiled_fn encode = tensor_map_encoder();
    if (!encode)
        return cudaErrorNotSupported;
    /* [heads_total][seq][head_dim] bf16; one box = box_rows rows of one column
     * chunk of one head. Columns at or past head_dim and rows at or past seq
     * read as zeros. */
    const cuuint64_t dims[3] = {(cuuint64_t)k.head_dim, (cuuint64_t)k.seq, (cuuint64_t)k.heads_total};
    const cuuint64_t strides[2] = {(cuuint64_t)k.head_dim * 2, (cuuint64_t)k.seq * k.head_dim * 2};
    const cuuint32_t box[3] = {(cuuint32_t)k.chunk_width, (cuuint32_t)k.box_rows, 1};
    const cuuint32_t elem_strides[3] = {1, 1, 1};
    CUtensorMap map;
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void *>(k.ptr), dims, strides,
                              box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              k.chunk_width == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return cudaErrorInvalidValue;
    const int slot = c.used < MapCache::SLOTS ? c.used++ : (c.next++ % MapCache::SLOTS);
    c.key[slot] = k;
    c.map[slot] = map;
    *out = map;
    return cudaSuccess;
}

} // namespace

extern "C" int flash_sm90a_available(void)
{
#ifdef ATTNPROF_HAVE_SM90A
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        return 0;
    return major == 9 && minor == 0 && tensor_map_encoder() != nullptr;
#else
    return 0;
#endif
}

extern "C" int flash_sm90a_built(void)
{
#ifdef ATTNPROF_HAVE_SM90A
    return 1;
#else
    return 0;
#endif
}

extern "C" int flash_sm90a_config_count(void) { return sm90a_entry_count; }

extern "C" const flash_fwd_config *flash_sm90a_config_at(int i)
{
    return i >= 0 && i < sm90a_entry_count ? &sm90a_entries[i].cfg : NULL;
}

extern "C" int flash_sm90a_config_for_dim(int d)
{
    for (int i = 0; i < sm90a_entry_count; i++)
        if (sm90a_entries[i].cfg.head_dim == d)
            return i;
    return -1;
}

extern "C" size_t flash_sm90a_workspace_bytes(void) { return 2 * sizeof(int); }

thread_local unsigned long long *timeline_buffer;

extern "C" void flash_sm90a_set_timeline(unsigned long long *buffer) { timeline_buffer = buffer; }

/* The device facts a launch needs, read once by prepare (a launch makes no
 * runtime calls but the launch itself: they would show in every forward's
 * API trace). */
struct DeviceFacts {
    int multiprocessors, l2_bytes;
};
thread_local DeviceFacts device_facts;

extern "C" cudaError_t flash_sm90a_prepare(int i)
{
    if (i < 0 || i >= sm90a_entry_count)
        return cudaErrorInvalidValue;
    const Sm90aEntry &e = sm90a_entries[i];
    int dev = 0;
    cudaError_t rc = cudaFuncSetAttribute(e.causal, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)e.cfg.smem_bytes);
    if (rc == cudaSuccess)
        rc = cudaFuncSetAttribute(e.noncausal, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)e.cfg.smem_bytes);
    if (rc == cudaSuccess)
        rc = cudaGetDevice(&dev);
    if (rc == cudaSuccess)
        rc = cudaDeviceGetAttribute(&device_facts.multiprocessors, cudaDevAttrMultiProcessorCount, dev);
    if (rc == cudaSuccess)
        rc = cudaDeviceGetAttribute(&device_facts.l2_bytes, cudaDevAttrL2CacheSize, dev);
    return rc;
}

extern "C" cudaError_t flash_sm90a_blocks_per_sm(int i, int *blocks)
{
    if (i < 0 || i >= sm90a_entry_count || !blocks)
        return cudaErrorInvalidValue;
    const Sm90aEntry &e = sm90a_entries[i];
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, e.causal, e.cfg.threads, e.cfg.smem_bytes);
}

extern "C" cudaError_t launch_flash_sm90a(int i, const void *q, const void *k, const void *v, void *out, float *lse,
                                         int *workspace, int batch, int heads, int seq, int head_dim, int causal,
                                         cudaStream_t stream)
{
#ifndef ATTNPROF_HAVE_SM90A
    (void)i, (void)q, (void)k, (void)v, (void)out, (void)lse, (void)workspace, (void)batch, (void)heads, (void)seq, (void)head_dim,
        (void)causal, (void)stream;
    return cudaErrorNotSupported;
#else
    if (i < 0 || i >= sm90a_entry_count || batch < 1 || heads < 1 || seq < 1 || !lse || !out || !workspace)
        return cudaErrorInvalidValue;
    const Sm90aEntry &e = sm90a_entries[i];
    if (head_dim < 8 || head_dim % 8 != 0 || head_dim > e.cfg.head_dim || (causal != 0 && causal != 1))
        return cudaErrorInvalidValue;
    /* TMA needs 16-byte aligned bases; the epilogue's 16-byte stores too. */
    if (((uintptr_t)q | (uintptr_t)k | (uintptr_t)v | (uintptr_t)out) & 15)
        return cudaErrorInvalidValue;
    const int block_m = e.cfg.block_m;
    const long long q_tiles = (seq + block_m - 1) / block_m;
    const long long heads_total = (long long)batch * heads;
    if (q_tiles * heads_total > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    CUtensorMap tq, tk, tv;
    /* Q in boxes of one warpgroup's 64 rows (the kernel loads a tile's as
     * several). */
    cudaError_t rc = tensor_map_for({q, head_dim, seq, (int)heads_total, 64, e.chunk_width}, &tq);
    if (rc == cudaSuccess)
        rc = tensor_map_for({k, head_dim, seq, (int)heads_total, e.cfg.block_n, e.chunk_width}, &tk);
    if (rc == cudaSuccess)
        rc = tensor_map_for({v, head_dim, seq, (int)heads_total, e.cfg.block_n, e.chunk_width}, &tv);
    if (rc != cudaSuccess)
        return rc;
    Sm90aParams p;
    p.o = static_cast<bf16 *>(out);
    p.lse = lse;
    p.seq = seq;
    p.head_dim = head_dim;
    p.heads_total = (int)heads_total;
    p.q_tiles = (int)q_tiles;
    p.scale_log2 = (float)(1.4426950408889634 / sqrt((double)head_dim));
    p.scheduler = workspace;
    p.timeline = timeline_buffer;
    /* Persistent: one block per multiprocessor (one fits), each walks the tiles. */
    const int sms = device_facts.multiprocessors, l2 = device_facts.l2_bytes;
    if (sms < 1)
        return cudaErrorInitializationError; /* flash_sm90a_prepare was not called on this thread */
    p.order = flash_tile_order_make((int)q_tiles, (int)heads_total,
                                    flash_heads_per_group(l2, seq, head_dim, (int)heads_total));
    const long long tiles = q_tiles * heads_total;
    const unsigned grid = (unsigned)(tiles < sms ? tiles : sms);
    (causal ? e.causal : e.noncausal)<<<grid, e.cfg.threads, e.cfg.smem_bytes, stream>>>(tq, tk, tv, p);
    return cudaGetLastError();
#endif
}
