/* FlashAttention-2 style causal attention forward, portable tensor-core path
 * (mma.sync m16n8k16 bf16, ldmatrix, cp.async: sm_80 and later).
 *
 * One block per (query tile, head). The query tile's rows are split across the
 * warps, each warp owning RW consecutive rows, so every row's softmax statistics
 * live in one warp and need no exchange between warps. K/V tiles stream through
 * shared memory, two buffers deep: the copy of tile j+2 runs while tile j+1 is
 * computed. Scores stay in registers, the softmax runs in the exp2 domain with
 * 1/sqrt(D)*log2(e) folded into one FMA, and the probabilities are fed back to
 * the tensor cores straight from the score registers. Where it pays (d128), the
 * rescale of the output accumulators is skipped on key tiles where no row max of
 * the warp grew. Key tiles wholly above the diagonal are never loaded; only
 * tiles that cross it are masked, and a warp skips a tile that lies wholly above
 * its own rows. The output is
 * staged through shared memory once and written with 16-byte stores, together
 * with the row's log-sum-exp.
 *
 * Blocks are numbered heavy first: the query tiles nearest the end of the
 * sequence (which see the most keys) get the lowest block numbers, so the
 * scheduler starts them first and the short ones fill in at the end.
 *
 * Each kernel is compiled for one head dim D; it also runs any smaller head dim
 * that is a multiple of 8 (the runtime head_dim, the global row stride). The
 * 16-byte chunks of columns at or past head_dim are zero-filled on the way into
 * shared memory, exactly as rows past S are, so they add nothing to Q K^T and
 * give zero output columns, which are never stored.
 *
 * Grouped-query attention is native: a block of query head h reads the K and V of
 * key/value head h / group, no copy (decode's fewer queries than keys run the split-KV
 * kernel of flash_decode.cu instead). */
#include "flash_fwd.h"
#include "flash_fwd_sm90a.h"

#include <cuda_bf16.h>
#include "ptx_bf16.cuh"
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

typedef __nv_bfloat16 bf16;

/* Kernel arguments, passed by value (outside the anonymous namespace: the
 * extern "C" kernels take it). */
struct FlashParams {
    const bf16 *q, *k, *v;
    bf16 *o;
    float *lse;
    int seq;
    int head_dim;    /* real D <= the compiled D: row stride in global memory */
    int heads_total; /* batch * heads */
    int heads;       /* query heads */
    int group;       /* query heads per key/value head (grouped-query attention; 1: MHA) */
    int q_tiles;
    float scale_log2; /* log2(e) / sqrt(head_dim) */
};

namespace {

using namespace ptx;

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* The running row max as the offset of the exponentials: a row with no visible
 * key yet keeps max -inf, and 0 in its place keeps exp2(-inf - m) at 0 instead
 * of NaN. */
__device__ __forceinline__ float exp2_offset(float row_max) { return row_max == -INFINITY ? 0.f : row_max; }

/* Shared-memory tiles hold D bf16 per row plus 16 bytes of padding: consecutive
 * rows then start an odd number of 16-byte units apart (D/8 + 1, D a multiple
 * of 16), so the 8 rows an ldmatrix phase reads hit 8 different bank groups. Padding rather than an XOR swizzle keeps every ldmatrix
 * address a per-lane base plus a compile-time offset (an immediate in the
 * instruction), which matters at 255 registers. */
template <int D> struct Smem {
    static constexpr int LD = D + 8; /* row stride, elements */
};

/* ROWS x D tile, rows first_row... of a head at ghead (row stride ld = the real
 * head dim, a multiple of 8 and <= D, seq rows), into padded shared memory; rows
 * at or past seq and column chunks at or past ld are zero-filled. A thread
 * copies the same 16-byte column chunk of rows tid/CPR, tid/CPR + STEP, ...,
 * with one column test per call. Where THREADS is no multiple of the chunks per
 * row (D = 96: 12 chunks, 128 threads), the THREADS % CPR spare threads copy
 * nothing and the last pass covers the rows that are left. Offsets within a
 * head are int (the launcher checks seq * ld < 2^31). */
template <int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile_async(bf16 *sdst, const bf16 *ghead, int first_row, int seq, int ld,
                                                int tid)
{
    constexpr int CHUNKS_PER_ROW = D / 8;
    constexpr int STEP = THREADS / CHUNKS_PER_ROW;
    constexpr int PASSES = (ROWS + STEP - 1) / STEP;
    static_assert(STEP >= 1, "a pass copies at least one whole row");
    const int row0 = tid / CHUNKS_PER_ROW, chunk = tid % CHUNKS_PER_ROW;
    if (THREADS % CHUNKS_PER_ROW != 0 && row0 >= STEP)
        return;
    constexpr int LD = Smem<D>::LD;
    /* A chunk past the real head dim reads nothing (src-size 0); its address is
     * clamped to chunk 0 of the row, like a row past the end. */
    const bool col_valid = chunk * 8 < ld;
    const bf16 *src = ghead + (col_valid ? chunk * 8 : 0);
    const uint32_t dst = smem_addr(sdst + row0 * LD + chunk * 8);
#pragma unroll
    for (int i = 0; i < PASSES; i++) {
        /* The source row is clamped rather than selected between two pointers:
         * a select makes the compiler keep one 64-bit offset per row live across
         * the whole kernel (spills at 255 registers). */
        const int row = first_row + row0 + i * STEP;
        if (ROWS % STEP == 0 || row0 + i * STEP < ROWS)
            cp_async_16(dst + i * STEP * LD * 2, src + min(row, seq - 1) * ld, col_valid && row < seq);
    }
}

/* Dynamic shared memory of a configuration: the Q tile and two buffers each of
 * K and V, rows padded. */
constexpr size_t flash_smem_bytes(int d, int bm, int bn)
{
    return (size_t)(bm + 4 * bn) * (size_t)(d + 8) * sizeof(bf16);
}

template <int D, int BM, int BN, int WARPS, int CN> struct FlashTile {
    static constexpr int THREADS = WARPS * 32;
    static constexpr int RW = BM / WARPS; /* query rows per warp */
    static constexpr int MT = RW / 16;    /* 16-row MMA tiles per warp */
    static constexpr int NT = CN / 8;     /* 8-key score tiles per compute step */
    static constexpr int DT = D / 8;      /* 8-wide output tiles */
    static constexpr int KD = D / 16;     /* k-steps over the head dim */
    static constexpr int KN = CN / 16;    /* k-steps over the keys of a compute step */
    /* Q fragments stay in registers when the score and output accumulators leave
     * room; otherwise they are re-read from shared memory for every key tile. */
    static constexpr bool Q_IN_REGS = MT * (NT + DT + KD) * 4 <= 192;
    static_assert(BN % CN == 0, "a K/V tile is a whole number of compute steps");
    static_assert(RW % 16 == 0, "each warp owns whole 16-row MMA tiles");
    static_assert(NT % 2 == 0 && DT % 2 == 0, "ldmatrix.x4 loads two 8-wide tiles");
};

/* Code-path options of the kernel body, so that the benchmark can build one
 * configuration both ways and compare them in the same run. */
enum { FLASH_OPT_LAZY_RESCALE = 1 };

template <int D, int BM, int BN, int WARPS, int CN, int OPT>
__device__ __forceinline__ void flash_fwd_body(const FlashParams &p)
{
    typedef FlashTile<D, BM, BN, WARPS, CN> T;
    constexpr int THREADS = T::THREADS, RW = T::RW, MT = T::MT, NT = T::NT, DT = T::DT,
                  KD = T::KD, KN = T::KN;
    constexpr int LD = Smem<D>::LD;

    extern __shared__ __align__(128) unsigned char smem_raw[];
    bf16 *sQ = reinterpret_cast<bf16 *>(smem_raw);
    bf16 *sK = sQ + BM * LD; /* two buffers of BN x LD */
    bf16 *sV = sK + 2 * BN * LD;

    const int S = p.seq;
    const int tile = blockIdx.x;
    const int bh = tile % p.heads_total;
    const int q_tile = p.q_tiles - 1 - tile / p.heads_total; /* heavy first */
    const int q0 = q_tile * BM;
    const int ld = p.head_dim;
    const size_t head_off = (size_t)bh * S * ld;
    /* Grouped-query attention: query head h of batch b reads key/value head h / group. */
    const size_t kv_off = (size_t)((bh / p.heads) * (p.heads / p.group) + (bh % p.heads) / p.group) * S * ld;
    const bf16 *Q = p.q + head_off, *K = p.k + kv_off, *V = p.v + kv_off;
    /* In the main loop the V tile's address is K's plus this distance: one
     * 64-bit source address per lane stays live across the loop instead of two
     * (with the runtime row stride, d128 128x64 w4 spilled at 255 registers
     * otherwise). */
    const uintptr_t v_minus_k = reinterpret_cast<uintptr_t>(p.v) - reinterpret_cast<uintptr_t>(p.k);

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t4 = lane & 3;
    const int wrow_local = warp * RW;
    const int wrow0 = q0 + wrow_local; /* first query row of this warp */
    const bool warp_has_rows = wrow0 < S;

    const int kv_end = min(q0 + BM, S); /* causal: keys past the tile's last row are never needed */
    const int n_kt = (kv_end + BN - 1) / BN;

    load_tile_async<D, BM, THREADS>(sQ, Q, q0, S, ld, tid);
    load_tile_async<D, BN, THREADS>(sK, K, 0, S, ld, tid);
    load_tile_async<D, BN, THREADS>(sV, V, 0, S, ld, tid);
    cp_async_commit();
    if (n_kt > 1) {
        load_tile_async<D, BN, THREADS>(sK + BN * LD, K, BN, S, ld, tid);
        load_tile_async<D, BN, THREADS>(sV + BN * LD, V, BN, S, ld, tid);
    }
    cp_async_commit(); /* possibly empty: keeps "wait for all but the newest group" uniform */

    /* Per-lane ldmatrix addresses (bytes); each ldmatrix adds a constant.
     * Q (A operand): lanes 0-15 address rows 0-15 at k 0, lanes 16-31 the same rows at k 8.
     * K (B operand of QK^T, non-transposed): matrix m = lane/8 covers keys +8*(m/2), d +8*(m%2).
     * V (B operand of PV, transposed): matrix m covers keys +8*(m%2), d +8*(m/2). */
    const uint32_t q_lane = smem_addr(sQ) + (uint32_t)((wrow_local + (lane & 15)) * LD * 2) +
                            (uint32_t)((lane >> 4) << 4);
    const uint32_t k_lane_off =
        (uint32_t)((((lane >> 4) << 3) + (lane & 7)) * LD * 2) + (uint32_t)(((lane >> 3) & 1) << 4);
    const uint32_t v_lane_off =
        (uint32_t)(((((lane >> 3) & 1) << 3) + (lane & 7)) * LD * 2) + (uint32_t)((lane >> 4) << 4);

    float o[MT][DT][4];
    float row_max[MT][2], row_sum[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int dt = 0; dt < DT; dt++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                o[mt][dt][i] = 0.f;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            row_max[mt][h] = -INFINITY;
            row_sum[mt][h] = 0.f;
        }
    }

    uint32_t qf[T::Q_IN_REGS ? MT : 1][T::Q_IN_REGS ? KD : 1][4];
    if constexpr (T::Q_IN_REGS) {
        cp_async_wait<1>();
        __syncthreads();
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int kk = 0; kk < KD; kk++)
                ldmatrix_x4(q_lane + mt * 16 * LD * 2 + kk * 32, qf[mt][kk][0],
                            qf[mt][kk][1], qf[mt][kk][2], qf[mt][kk][3]);
    }

    const float scale_log2 = p.scale_log2;

    for (int kt = 0; kt < n_kt; kt++) {
        cp_async_wait<1>(); /* tile kt has landed (only the newest group may be pending) */
        __syncthreads();
        const int buf = kt & 1;
        const uint32_t k_tile = smem_addr(sK + buf * BN * LD) + k_lane_off;
        const uint32_t v_tile = smem_addr(sV + buf * BN * LD) + v_lane_off;

        /* A K/V tile may be computed in several steps of CN keys: a large tile
         * halves the barriers and copy groups per key, a small step keeps the
         * score registers few. */
#pragma unroll 1
        for (int sub = 0; sub < BN / CN; sub++) {
            const int k0 = kt * BN + sub * CN;
            const uint32_t k_base = k_tile + sub * CN * LD * 2;
            const uint32_t v_base = v_tile + sub * CN * LD * 2;

            /* A warp whose rows all precede this tile's first key has nothing to do. */
            if (warp_has_rows && k0 <= wrow0 + RW - 1) {
                float s[MT][NT][4];
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int nt = 0; nt < NT; nt++)
#pragma unroll
                        for (int i = 0; i < 4; i++)
                            s[mt][nt][i] = 0.f;

                /* S = Q K^T */
#pragma unroll
                for (int kk = 0; kk < KD; kk++) {
                    uint32_t a[MT][4];
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        if constexpr (T::Q_IN_REGS) {
#pragma unroll
                            for (int i = 0; i < 4; i++)
                                a[mt][i] = qf[mt][kk][i];
                        } else {
                            ldmatrix_x4(q_lane + mt * 16 * LD * 2 + kk * 32, a[mt][0],
                                        a[mt][1], a[mt][2], a[mt][3]);
                        }
                    }
#pragma unroll
                    for (int np = 0; np < NT / 2; np++) {
                        uint32_t b0, b1, b2, b3;
                        ldmatrix_x4(k_base + np * 16 * LD * 2 + kk * 32, b0, b1, b2, b3);
#pragma unroll
                        for (int mt = 0; mt < MT; mt++) {
                            mma_bf16_16816(s[mt][2 * np], a[mt], b0, b1);
                            mma_bf16_16816(s[mt][2 * np + 1], a[mt], b2, b3);
                        }
                    }
                }

                /* Causal mask, only where the tile crosses this warp's diagonal. Rows
                 * past S need no mask of their own: they are never written, and every
                 * key they see is either real or zero-filled. */
                if (k0 + CN - 1 > wrow0) {
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int nt = 0; nt < NT; nt++)
#pragma unroll
                            for (int i = 0; i < 4; i++) {
                                const int row = wrow0 + mt * 16 + g + ((i >> 1) << 3);
                                const int col = k0 + nt * 8 + 2 * t4 + (i & 1);
                                if (col > row)
                                    s[mt][nt][i] = -INFINITY;
                            }
                }

                /* Online softmax in the exp2 domain. Each row lives in the 4 lanes of a
                 * quad: the max is reduced across them now, the sum only at the end.
                 * Order: new maxima, O rescale, then exponentials packed straight into
                 * the bf16 A fragments of P, so each score register dies as soon as
                 * it is used (this keeps d128 128x64 within 255 registers). */
                float row_max_prev[MT][2];
                bool max_grew = false;
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        float mx = -INFINITY;
#pragma unroll
                        for (int nt = 0; nt < NT; nt++)
                            mx = fmaxf(mx, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
                        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                        const float m_new = fmaxf(row_max[mt][h], mx * scale_log2);
                        max_grew |= m_new != row_max[mt][h];
                        row_max_prev[mt][h] = row_max[mt][h];
                        row_max[mt][h] = m_new;
                    }
                /* Rescaling O costs one multiply per accumulator (MT*D/4 per lane) per
                 * key step. When no row max of the warp grew, every alpha is exactly 1
                 * (or multiplies a row sum and accumulators that are still 0) and the
                 * rescale is skipped (warp-uniform branch). Past the first few key
                 * tiles a row's running max rarely grows. alpha is computed here, one
                 * row at a time, rather than beside the maxima: fewer values live at
                 * the kernel's register peak. */
                if (!(OPT & FLASH_OPT_LAZY_RESCALE) || __any_sync(0xffffffffu, max_grew)) {
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const float alpha = fast_exp2(row_max_prev[mt][h] - exp2_offset(row_max[mt][h]));
                            row_sum[mt][h] *= alpha;
#pragma unroll
                            for (int dt = 0; dt < DT; dt++) {
                                o[mt][dt][2 * h] *= alpha;
                                o[mt][dt][2 * h + 1] *= alpha;
                            }
                        }
                }

                /* The score accumulator layout of two adjacent 8-key tiles is the
                 * A-operand layout of one 16-key k-step: P goes back in as bf16 pairs. */
                uint32_t pa[MT][KN][4];
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int nt = 0; nt < NT; nt++) {
                        float e[4];
#pragma unroll
                        for (int i = 0; i < 4; i++)
                            e[i] = fast_exp2(fmaf(s[mt][nt][i], scale_log2, -exp2_offset(row_max[mt][i >> 1])));
                        row_sum[mt][0] += e[0] + e[1];
                        row_sum[mt][1] += e[2] + e[3];
                        pa[mt][nt >> 1][(nt & 1) * 2 + 0] = pack_bf16x2(e[0], e[1]);
                        pa[mt][nt >> 1][(nt & 1) * 2 + 1] = pack_bf16x2(e[2], e[3]);
                    }

                /* O += P V */
#pragma unroll
                for (int kk = 0; kk < KN; kk++)
#pragma unroll
                    for (int dp = 0; dp < DT / 2; dp++) {
                        uint32_t b0, b1, b2, b3;
                        ldmatrix_x4_trans(v_base + kk * 16 * LD * 2 + dp * 32, b0, b1, b2, b3);
#pragma unroll
                        for (int mt = 0; mt < MT; mt++) {
                            mma_bf16_16816(o[mt][2 * dp], pa[mt][kk], b0, b1);
                            mma_bf16_16816(o[mt][2 * dp + 1], pa[mt][kk], b2, b3);
                        }
                    }
            }

        } /* compute steps */

        __syncthreads(); /* every warp is done with buffer `buf` */
        if (kt + 2 < n_kt) {
            const int next = (kt + 2) * BN;
            load_tile_async<D, BN, THREADS>(sK + buf * BN * LD, K, next, S, ld, tid);
            load_tile_async<D, BN, THREADS>(sV + buf * BN * LD,
                                            reinterpret_cast<const bf16 *>(reinterpret_cast<uintptr_t>(K) + v_minus_k),
                                            next, S, ld, tid);
        }
        cp_async_commit();
    }
    cp_async_wait<0>();

    /* Epilogue: finish the row sums across each quad, normalize, write the
     * log-sum-exp, stage this warp's rows of O in its own rows of sQ (no other
     * warp reads them) and copy them out with 16-byte stores, the columns below
     * the real head dim only (the padded ones hold zeros). */
    __syncwarp();
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float l = row_sum[mt][h];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const float inv = l > 0.f ? 1.f / l : 0.f;
            const int row_local = wrow_local + mt * 16 + g + 8 * h;
            const int row = q0 + row_local;
            if (t4 == 0 && row < S)
                p.lse[(size_t)bh * S + row] = (row_max[mt][h] + __log2f(l)) * 0.69314718055994531f;
#pragma unroll
            for (int dt = 0; dt < DT; dt++) {
                uint32_t packed = pack_bf16x2(o[mt][dt][2 * h] * inv, o[mt][dt][2 * h + 1] * inv);
                *reinterpret_cast<uint32_t *>(sQ + row_local * LD + dt * 8 + 2 * t4) = packed;
            }
        }
    __syncwarp();
    constexpr int CHUNKS_PER_ROW = D / 8;
    constexpr int WARP_CHUNKS = RW * CHUNKS_PER_ROW;
    static_assert(WARP_CHUNKS % 32 == 0, "output rows divide evenly among lanes");
    bf16 *O = p.o + head_off;
#pragma unroll
    for (int i = 0; i < WARP_CHUNKS / 32; i++) {
        const int c = lane + 32 * i;
        const int r = c / CHUNKS_PER_ROW, chunk = c % CHUNKS_PER_ROW;
        const int row_local = wrow_local + r;
        const int row = q0 + row_local;
        if (row < S && chunk * 8 < ld)
            *reinterpret_cast<uint4 *>(O + (size_t)row * ld + chunk * 8) =
                *reinterpret_cast<const uint4 *>(sQ + row_local * LD + chunk * 8);
    }
}

} // namespace

/* One extern "C" kernel per configuration: the name CUPTI records is the name
 * written here. STEP: keys per compute step (BN unless the tile is computed in
 * parts); OPT: FLASH_OPT_* bits, chosen per configuration from measurement
 * (bench/RESULTS.md): the lazy O rescale pays at d128 and costs ~2% at d64. */
#define ATTNPROF_FLASH_KERNEL(D, BM, BN, W, STEP, OPT, SUFFIX)                                     \
    extern "C" __global__ void __launch_bounds__(W * 32, 1)                                        \
        attnprof_flash_fwd_bf16_d##D##_##BM##x##BN##_w##W##SUFFIX(FlashParams p)                   \
    {                                                                                              \
        flash_fwd_body<D, BM, BN, W, STEP, OPT>(p);                                                \
    }

/* d128 128x64 w4 fits 255 registers on sm_90 with 64-key compute steps; the
 * sm_80 compiler spills there, so its sm_80 code computes each 64-key tile in
 * two 32-key steps (same tile, same shared memory, one more softmax update). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define FLASH_D128_128X64_STEP 32
#else
#define FLASH_D128_128X64_STEP 64
#endif

/* Head dims 32, 64, 96 and 128: 128 query rows, 4 warps of 32 rows. d32 and d64
 * rescale O every tile (the rescale is cheap there; the vote costs more than it
 * saves at d64), d96 and d128 only when a row max grows. d256: the output
 * accumulator alone is 128 registers per lane at 32 rows per warp, so the tile
 * is 64 rows, 4 warps of 16, with 32-key tiles: the double-buffered K/V stay at
 * 99 KB, which every sm_80+ GPU's shared memory takes (two blocks per
 * multiprocessor on sm_90). */
ATTNPROF_FLASH_KERNEL(32, 128, 64, 4, 64, 0, )
ATTNPROF_FLASH_KERNEL(32, 128, 128, 4, 128, 0, )
ATTNPROF_FLASH_KERNEL(64, 128, 64, 4, 64, 0, )
ATTNPROF_FLASH_KERNEL(64, 128, 128, 4, 128, FLASH_OPT_LAZY_RESCALE, )
ATTNPROF_FLASH_KERNEL(96, 128, 64, 4, 64, FLASH_OPT_LAZY_RESCALE, )
ATTNPROF_FLASH_KERNEL(128, 128, 64, 4, FLASH_D128_128X64_STEP, FLASH_OPT_LAZY_RESCALE, )
ATTNPROF_FLASH_KERNEL(128, 128, 32, 4, 32, FLASH_OPT_LAZY_RESCALE, )
ATTNPROF_FLASH_KERNEL(256, 64, 32, 4, 32, FLASH_OPT_LAZY_RESCALE, )
/* Built only into the benchmark: configurations measured slower on the H200
 * (64x64 w4, 128x128 w8, d256 64x64 w4), the other rescale choice of the d64
 * and d96 tiles ("_lazy", "_eager"; d64 128x128 w4 eager spills in its sm_80
 * code), and FlashAttention-2's A100 tile for d256 (128x64 w8: measured faster
 * than 64x32 w4 on the H200, but its 198 KB of shared memory exceed the A100's
 * 163 KB per block). */
#ifdef ATTNPROF_FLASH_EXPERIMENTAL_TILES
ATTNPROF_FLASH_KERNEL(64, 128, 64, 4, 64, FLASH_OPT_LAZY_RESCALE, _lazy)
ATTNPROF_FLASH_KERNEL(64, 128, 128, 4, 128, 0, _eager)
ATTNPROF_FLASH_KERNEL(64, 64, 64, 4, 64, FLASH_OPT_LAZY_RESCALE, )
ATTNPROF_FLASH_KERNEL(64, 128, 128, 8, 128, FLASH_OPT_LAZY_RESCALE, )
ATTNPROF_FLASH_KERNEL(96, 128, 64, 4, 64, 0, _eager)
ATTNPROF_FLASH_KERNEL(128, 128, 128, 8, 128, FLASH_OPT_LAZY_RESCALE, )
ATTNPROF_FLASH_KERNEL(256, 64, 64, 4, 64, FLASH_OPT_LAZY_RESCALE, )
ATTNPROF_FLASH_KERNEL(256, 128, 64, 8, 64, FLASH_OPT_LAZY_RESCALE, )
#endif

namespace {

typedef void (*flash_kernel_fn)(FlashParams);

struct FlashEntry {
    flash_fwd_config cfg;
    flash_kernel_fn fn;
};

#define ATTNPROF_FLASH_ENTRY(D, BM, BN, W, SUFFIX, NOTE)                                           \
    {{"attnprof_flash_fwd_bf16_d" #D "_" #BM "x" #BN "_w" #W #SUFFIX, D, BM, BN, W, W * 32,        \
      flash_smem_bytes(D, BM, BN), "mma.sync m16n8k16 + ldmatrix + cp.async (sm_80+); " NOTE,       \
      #W " warps of " #BM "/" #W " query rows each",                                                \
      "one block per query tile and head; heavy tiles (nearest the sequence end) launched first"},  \
     attnprof_flash_fwd_bf16_d##D##_##BM##x##BN##_w##W##SUFFIX}
#define NOTE_EAGER "O rescaled every key tile"
#define NOTE_LAZY "O rescaled only when a row max grows"

const FlashEntry flash_entries[] = {
    ATTNPROF_FLASH_ENTRY(32, 128, 64, 4, , NOTE_EAGER),
    ATTNPROF_FLASH_ENTRY(32, 128, 128, 4, , NOTE_EAGER),
    ATTNPROF_FLASH_ENTRY(64, 128, 64, 4, , NOTE_EAGER),
    ATTNPROF_FLASH_ENTRY(64, 128, 128, 4, , NOTE_LAZY),
    ATTNPROF_FLASH_ENTRY(96, 128, 64, 4, , NOTE_LAZY),
    ATTNPROF_FLASH_ENTRY(128, 128, 64, 4, , NOTE_LAZY "; sm_80 code: 32-key compute steps"),
    ATTNPROF_FLASH_ENTRY(128, 128, 32, 4, , NOTE_LAZY),
    ATTNPROF_FLASH_ENTRY(256, 64, 32, 4, , NOTE_LAZY),
#ifdef ATTNPROF_FLASH_EXPERIMENTAL_TILES
    ATTNPROF_FLASH_ENTRY(64, 128, 64, 4, _lazy, NOTE_LAZY),
    ATTNPROF_FLASH_ENTRY(64, 128, 128, 4, _eager, NOTE_EAGER),
    ATTNPROF_FLASH_ENTRY(64, 64, 64, 4, , NOTE_LAZY),
    ATTNPROF_FLASH_ENTRY(64, 128, 128, 8, , NOTE_LAZY),
    ATTNPROF_FLASH_ENTRY(96, 128, 64, 4, _eager, NOTE_EAGER),
    ATTNPROF_FLASH_ENTRY(128, 128, 128, 8, , NOTE_LAZY),
    ATTNPROF_FLASH_ENTRY(256, 64, 64, 4, , NOTE_LAZY),
    ATTNPROF_FLASH_ENTRY(256, 128, 64, 8, , NOTE_LAZY),
#endif
};
const int flash_entry_count = (int)(sizeof flash_entries / sizeof flash_entries[0]);

/* The tile each supported head dim runs by default on the mma.sync path: the
 * fastest library tile measured on the H200 (bench/RESULTS.md; d64: 128x64 and
 * 128x128 tie, 128x64 needs 40% less shared memory). The head dims listed here
 * are the ones flash_fwd_padded_dim rounds up to. */
struct FlashDefault {
    int d, bm, bn, warps;
};
const FlashDefault flash_defaults[] = {
    {32, 128, 128, 4}, {64, 128, 64, 4}, {96, 128, 64, 4}, {128, 128, 64, 4}, {256, 64, 32, 4},
};
const int flash_default_count = (int)(sizeof flash_defaults / sizeof flash_defaults[0]);

int find_flash_entry(int d, int bm, int bn, int w)
{
    for (int i = 0; i < flash_entry_count; i++) {
        const flash_fwd_config &c = flash_entries[i].cfg;
        if (c.head_dim == d && c.block_m == bm && c.block_n == bn && c.warps == w)
            return i;
    }
    return -1;
}

} // namespace

/* Configurations past the mma.sync table are the sm_90a ones, in their order. */
extern "C" int flash_fwd_config_count(void) { return flash_entry_count + flash_sm90a_config_count(); }

extern "C" const flash_fwd_config *flash_fwd_config_at(int i)
{
    if (i >= flash_entry_count)
        return flash_sm90a_config_at(i - flash_entry_count);
    return i >= 0 ? &flash_entries[i].cfg : NULL;
}

extern "C" size_t flash_fwd_workspace_bytes(int config)
{
    return config >= flash_entry_count ? flash_sm90a_workspace_bytes() : 0;
}

extern "C" int flash_fwd_padded_dim(int head_dim)
{
    if (head_dim < 8 || head_dim % 8 != 0)
        return -1;
    int best = -1; /* the smallest supported head dim >= head_dim */
    for (int i = 0; i < flash_default_count; i++)
        if (flash_defaults[i].d >= head_dim && (best < 0 || flash_defaults[i].d < best))
            best = flash_defaults[i].d;
    return best;
}

extern "C" int flash_fwd_default_config(int head_dim, int cc_major, int cc_minor)
{
    /* Dispatch point. Compute capability 9.0 (H100, H200) runs the sm_90a kernel
     * (wgmma, TMA, warp specialisation) when this build carries it; everything
     * else from sm_80 up the portable mma.sync kernels above. sm_90a machine
     * code runs on 9.0 only. */
    const int d = flash_fwd_padded_dim(head_dim);
    if (cc_major < 8 || d < 0)
        return -1;
    if (cc_major == 9 && cc_minor == 0 && flash_sm90a_built()) {
        const int h = flash_sm90a_config_for_dim(d);
        if (h >= 0)
            return flash_entry_count + h;
    }
    for (int i = 0; i < flash_default_count; i++)
        if (flash_defaults[i].d == d)
            return find_flash_entry(d, flash_defaults[i].bm, flash_defaults[i].bn, flash_defaults[i].warps);
    return -1;
}

extern "C" cudaError_t flash_fwd_prepare(int config)
{
    if (config >= flash_entry_count)
        return flash_sm90a_available() ? flash_sm90a_prepare(config - flash_entry_count) : cudaErrorNotSupported;
    if (config < 0)
        return cudaErrorInvalidValue;
    const FlashEntry &e = flash_entries[config];
    return cudaFuncSetAttribute(e.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)e.cfg.smem_bytes);
}

extern "C" cudaError_t flash_fwd_blocks_per_sm(int config, int *blocks)
{
    if (config >= flash_entry_count)
        return flash_sm90a_blocks_per_sm(config - flash_entry_count, blocks);
    if (config < 0 || !blocks)
        return cudaErrorInvalidValue;
    const FlashEntry &e = flash_entries[config];
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, e.fn, e.cfg.threads, e.cfg.smem_bytes);
}

extern "C" cudaError_t launch_flash_fwd_gqa(int config, const void *q, const void *k, const void *v, void *out,
                                            float *lse, void *workspace, int batch, int heads, int kv_heads, int seq,
                                            int head_dim, int causal, cudaStream_t stream)
{
    if (kv_heads < 1 || heads < 1 || heads % kv_heads != 0)
        return cudaErrorInvalidValue;
    if (config >= flash_entry_count)
        return launch_flash_sm90a_gqa(config - flash_entry_count, q, k, v, out, lse, static_cast<int *>(workspace),
                                      batch, heads, kv_heads, seq, head_dim, causal, stream);
    (void)workspace; /* the mma.sync kernels need none */
    if (config < 0 || batch < 1 || heads < 1 || seq < 1 || !lse)
        return cudaErrorInvalidValue;
    const FlashEntry &e = flash_entries[config];
    if (head_dim < 8 || head_dim % 8 != 0 || head_dim > e.cfg.head_dim)
        return cudaErrorInvalidValue;
    if (!causal)
        return cudaErrorNotSupported; /* these kernels skip and mask the tiles above the diagonal */
    /* Offsets inside one head are computed in int. */
    if ((long long)seq * head_dim > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    const long long q_tiles = (seq + e.cfg.block_m - 1) / e.cfg.block_m;
    const long long blocks = q_tiles * batch * heads;
    if (blocks > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    FlashParams p;
    p.q = static_cast<const bf16 *>(q);
    p.k = static_cast<const bf16 *>(k);
    p.v = static_cast<const bf16 *>(v);
    p.o = static_cast<bf16 *>(out);
    p.lse = lse;
    p.seq = seq;
    p.head_dim = head_dim;
    p.heads_total = batch * heads;
    p.heads = heads;
    p.group = heads / kv_heads;
    p.q_tiles = (int)q_tiles;
    p.scale_log2 = (float)(1.4426950408889634 / sqrt((double)head_dim));
    e.fn<<<(unsigned)blocks, e.cfg.threads, e.cfg.smem_bytes, stream>>>(p);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_flash_fwd(int config, const void *q, const void *k, const void *v,
                                        void *out, float *lse, void *workspace, int batch, int heads,
                                        int seq, int head_dim, int causal, cudaStream_t stream)
{
    return launch_flash_fwd_gqa(config, q, k, v, out, lse, workspace, batch, heads, heads, seq, head_dim, causal,
                                stream);
}
