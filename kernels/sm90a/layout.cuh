/* The sm_90a flash kernel's layout (kernels/flash_fwd_sm90a.cu): its
 * parameters, the options a configuration is built with, the block's roles
 * and their registers, the tile's sizes, and the shared-memory map with the
 * mbarriers that the producer and the consumers meet at.
 *
 * Shared-memory layout: every operand is stored in column chunks of one
 * swizzle width (64 bf16 = 128 bytes with the 128-byte swizzle; 32 bf16 =
 * 64 bytes with the 64-byte swizzle for D = 32 and 96), rows contiguous within
 * a chunk. TMA writes that layout (one box per chunk) and wgmma reads it
 * through matrix descriptors: Q and K as K-major operands, V as the
 * MN-major ("transposed") B operand of P V, so V needs no transpose. A head
 * dim below the kernel's is zero-filled by TMA (out-of-range columns).
 *
 *   [Q: BLOCK_M rows][K: STAGES stages of BN rows][V: STAGES stages][mbarriers]
 *
 * from the dynamic shared memory base aligned up to 1024 bytes (the swizzle
 * pattern's period). */
#ifndef ATTNPROF_SM90A_LAYOUT_CUH
#define ATTNPROF_SM90A_LAYOUT_CUH

#include <cuda.h> /* CUtensorMap */
#include <cuda_bf16.h>
#include <stddef.h>
#include <stdint.h>

#include "../flash_tile_order.h"
#include "../ptx_sm90a.cuh"

typedef __nv_bfloat16 bf16;

/* Kernel arguments, passed by value (outside the anonymous namespace: the
 * extern "C" kernels take it). */
struct Sm90aParams {
    bf16 *o;
    float *lse;
    int seq;
    int head_dim;    /* real head dim: row stride of q/k/v/o, columns written */
    int heads_total; /* batch * heads */
    int heads;       /* query heads */
    int group;       /* query heads per key/value head (grouped-query attention; 1: MHA) */
    int q_tiles;
    flash_tile_order order; /* tile order: see kernels/sm90a/tile_handoff.cuh */
    int *scheduler;      /* {next tile - gridDim.x, blocks finished}: zero between launches */
    float scale_log2; /* log2(e) / sqrt(head_dim) */
    /* Benchmark only (SM90A_OPT_TIMELINE kernels): when not null, the
     * timestamps of every tile and block (kernels/sm90a/timeline.cuh). */
    unsigned long long *timeline;
};

namespace {

/* Options of the kernel body, so that the benchmark can build one tile
 * configuration several ways and compare them in the same run. */
enum {
    /* The two consumer warpgroups take turns issuing their GEMMs (named
     * barriers), so one's softmax runs while the other's GEMMs occupy the
     * tensor cores (kernels/sm90a/mainloop.cuh). */
    SM90A_OPT_PINGPONG = 1,
    /* Causal tiles aligned at the sequence end (three warpgroups only): see
     * tile_coords in kernels/sm90a/tile_handoff.cuh. */
    SM90A_OPT_END_ALIGNED = 2,
    /* Benchmark only: global-timer stamps of each tile's phases and each
     * block's entry and exit into p.timeline (kernels/sm90a/timeline.cuh). */
    SM90A_OPT_TIMELINE = 4,
    /* The producer meets each consumer warpgroup at a tile barrier of its
     * own, and each warpgroup's 64 rows of Q have their own barriers: see
     * kernels/sm90a/tile_handoff.cuh. */
    SM90A_OPT_DECOUPLED = 8,
    /* The epilogue of a tile overlapped with the next tile's first Q K^T
     * (kernels/sm90a/overlap.cuh). */
    SM90A_OPT_OVERLAP = 16,
};

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

/* One kernel's configuration: head dim D, BN keys per key tile, a ring of
 * STAGES K/V stages, WGS consumer warpgroups, causal or not, SM90A_OPT_*. */
template <int D_, int BN_, int STAGES_, int WGS_, bool CAUSAL_, int OPT> struct Sm90aConfig {
    static constexpr int D = D_, BN = BN_, STAGES = STAGES_, WGS = WGS_;
    static constexpr bool CAUSAL = CAUSAL_;
    typedef Sm90aRoles<WGS> Roles;
    typedef Sm90aTile<D, BN, STAGES, WGS> Tile;
    static constexpr int BLOCK_M = Roles::BLOCK_M;
    static constexpr bool PINGPONG = (OPT & SM90A_OPT_PINGPONG) != 0;
    static_assert(!PINGPONG || WGS == 2, "ping-pong turns between two consumer warpgroups");
    /* With three warpgroups a tile's rows span more than one key tile: a
     * warpgroup skips the key tiles wholly past its rows' diagonal (and a
     * warpgroup wholly past the sequence end skips them all). With two and
     * BLOCK_M == BN both see the same key tiles, bar a tile past the sequence
     * end, and keep the turns' fixed count (ping-pong). */
    static constexpr bool SKIP = WGS > 2;
    static constexpr bool END_ALIGNED = (OPT & SM90A_OPT_END_ALIGNED) != 0 && CAUSAL;
    static_assert(!(OPT & SM90A_OPT_END_ALIGNED) || SKIP, "end-aligned tiles need the warpgroups' skipping");
    static constexpr bool TIMELINE = (OPT & SM90A_OPT_TIMELINE) != 0;
    static constexpr bool DECOUPLED = (OPT & SM90A_OPT_DECOUPLED) != 0;
    /* compute-sanitizer's racecheck reported the tile slot of the decoupled
     * kernels without turns as racing (bench/RESULTS.md, step 25). */
    static_assert(!DECOUPLED || PINGPONG, "a tile barrier per warpgroup only with ping-pong turns");
    static constexpr bool OVERLAP = (OPT & SM90A_OPT_OVERLAP) != 0;
    static_assert(!(OVERLAP && TIMELINE), "the overlapped consumers write no timeline stamps");
};

/* The shared-memory map of a configuration C: operand addresses (shared
 * state space, 32-bit) and its mbarriers, 8 bytes each:
 *   q_full(w), q_free(w)  Q has landed / every consumer warp of w has issued
 *                         its last Q K^T of the tile and it completed, so the
 *                         next tile's Q may come. Decoupled, one pair per
 *                         warpgroup and its 64 rows; otherwise pair 0 for the
 *                         whole tile.
 *   k_full(s), v_full(s)  K (V) of ring stage s has landed (transaction bytes);
 *   k_free(s), v_free(s)  ... and is free again: K as soon as its Q K^T is
 *                         done, V after its P V, one key tile later (one
 *                         arrival per consumer warp). */
template <class C> struct Sm90aSmem {
    typedef typename C::Tile T;
    static constexpr int WGS = C::WGS, STAGES = C::STAGES;
    static constexpr bool DECOUPLED = C::DECOUPLED;
    uint32_t q, k, v, bars;

    __device__ __forceinline__ explicit Sm90aSmem(uint32_t base)
        : q(base), k(q + T::Q_BYTES), v(k + STAGES * T::KV_BYTES), bars(v + STAGES * T::KV_BYTES)
    {
    }
    __device__ __forceinline__ uint32_t q_full(int w) const { return bars + 8u * (DECOUPLED ? w : 0); }
    __device__ __forceinline__ uint32_t q_free(int w) const { return bars + 8u * (WGS + (DECOUPLED ? w : 0)); }
    __device__ __forceinline__ uint32_t k_full(int s) const { return bars + 8u * (2 * WGS + s); }
    __device__ __forceinline__ uint32_t v_full(int s) const { return bars + 8u * (2 * WGS + STAGES + s); }
    __device__ __forceinline__ uint32_t k_free(int s) const { return bars + 8u * (2 * WGS + 2 * STAGES + s); }
    __device__ __forceinline__ uint32_t v_free(int s) const { return bars + 8u * (2 * WGS + 3 * STAGES + s); }

    /* By one thread, before the block's __syncthreads. */
    __device__ __forceinline__ void init_barriers() const
    {
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
};

/* What every lane of a warp holds alike, from lane 0: the compiler then keeps
 * it and what derives from it (ring stages, barrier and descriptor addresses,
 * loop bounds) in uniform registers, on the uniform datapath, off the vector
 * pipes and registers the softmax needs (bench/RESULTS.md, step 23). */
__device__ __forceinline__ int warp_uniform(int x) { return __shfl_sync(0xffffffffu, x, 0); }

} // namespace

#endif
