/* Split-KV decode attention (flash_decode.h): the split kernel and the combine.
 *
 * Split kernel: block (row tile of one key/value head, split). The tile's 16 query rows are
 * the group's heads × q_seq rows, contiguous in q and out, loaded once into shared memory and
 * held as mma.sync A fragments in registers. Warp w takes the split's key chunks w, w + 4,
 * ... through its own ring of three shared-memory stages (cp.async, one commit group per
 * chunk), so the four warps keep up to twelve chunks of K and V in flight without a block
 * barrier. Each warp keeps its own online softmax (exp2 domain, the scale folded in, as
 * flash_fwd.cu); at the end the warps' (max, sum, O) are merged in shared memory. Keys past
 * the split, past seq or above a row's causal limit (i + seq - q_seq) score -inf; chunks past
 * the tile's last visible key are never loaded. The TMA mode (sm_90, D = 64 and 128 exactly: the
 * recorder's default there) fills each stage with tensor copies in the 128-byte swizzle instead, one
 * lane issuing, completing on the stage's mbarrier. The chunk (16 or 32 keys) and the ring's depth
 * are template parameters: they set the shared memory per block, so the blocks per
 * multiprocessor.
 *
 * Combine: one warp per query row weighs the splits' normalised partial outputs by
 * exp(lse_s - max lse) and writes the bf16 output and the row's log-sum-exp. On the TMA ring, where a
 * key/value head has at most merge_rows_max query rows, each tile's last split block does that merge
 * itself (decode_fused_body) and no combine kernel runs.
 *
 * Balanced and persistent grids (launch_flash_decode_balanced): one kernel, equal key ranges per
 * block, cut tiles merged by their last block; the persistent one (sm_90, TMA) keeps each warp's ring
 * running across tile boundaries. Both lose to the fixed grid on the TMA ring (the recorder's
 * choice there) and are kept for bench/decode_tma.py to time beside it. */
#include "flash_decode.h"

#include <cuda.h> /* CUtensorMap and its enums only: the encoder is reached through cudart */
#include <cuda_bf16.h>
#include "ptx_bf16.cuh"
#include "tensor_map_encoder.h"
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef __nv_bfloat16 bf16;

struct DecodeParams {
    const bf16 *q, *k, *v;
    bf16 *o;
    float *lse;      /* [B * Hq * q_seq] natural log */
    float *part_o;   /* [splits][B * Hq * q_seq][head_dim] normalised partial outputs (splits > 1) */
    float *part_lse; /* [splits][B * Hq * q_seq] natural log; -inf: no key of the split is visible */
    int q_seq, seq, heads, kv_heads, group, head_dim;
    int rows;      /* group * q_seq: query rows per key/value head */
    int row_tiles; /* ceil(rows / 16) */
    int splits, keys_per_split;
    int total_rows; /* B * Hq * q_seq */
    float scale_log2;
    /* Balanced grid (flash_decode_balanced): every tile's keys in rounds of warps x chunk keys, the
     * tiles' rounds laid end to end and cut into gridDim.x equal ranges; a tile cut over several
     * blocks is merged by the last of them to finish (counters, one per tile, back to 0 after). */
    int tiles, units_per_tile;
    unsigned *counters;
};

namespace {

using namespace ptx;

constexpr int DEC_WARPS = 4, DEC_THREADS = DEC_WARPS * 32, DEC_ROWS = 16;

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* A row with no visible key yet keeps max -inf; 0 in its place keeps exp2 at 0, not NaN. */
__device__ __forceinline__ float exp2_offset(float m) { return m == -INFINITY ? 0.f : m; }

/* The Q tile and every warp's ring (K and V of each of `stages` stages of cn keys), rows padded
 * by 16 bytes, and one mbarrier per stage and warp. */
constexpr size_t decode_smem_bytes(int d, int cn, int stages)
{
    return (size_t)(DEC_ROWS + DEC_WARPS * stages * 2 * cn) * (size_t)(d + 8) * sizeof(bf16) +
           (size_t)DEC_WARPS * stages * 8; /* the bulk mode's mbarriers */
}

/* One warp copies keys k0 .. k0 + DEC_CN - 1 of a head (row stride ld) into its stage; rows at or
 * past k_end and columns at or past ld are zero-filled. */
/* cp.async of 16 bytes with an L2 prefetch of the 256-byte line around it (a bench-only
 * configuration tries it); zero-filled when !valid, as ptx::cp_async_16. */
__device__ __forceinline__ void cp_async_16_l2_256(uint32_t dst, const void *src, bool valid)
{
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
}

/* How the split kernel loads its K/V chunks: cp.async of 16 bytes a lane (the variant's), the same
 * with an L2 prefetch hint, or one bulk copy (the TMA unit) per key row completing on a per-stage
 * mbarrier (sm_90; bench only). */
enum { LOAD_CP_ASYNC = 0, LOAD_CP_ASYNC_L2 = 1, LOAD_BULK_ROWS = 2, LOAD_TMA = 3 };

/* TMA mode: a stage's K (and V) chunk is D / 64 boxes of [DEC_CN keys][64 columns], 128 bytes a
 * row, written by the tensor copy engine in its 128-byte swizzle (16-byte unit u of row r lands at
 * unit u ^ (r % 8)), so ldmatrix's eight rows of one unit hit eight different banks without the
 * padding a bulk copy could not write. Boxes start on 1024-byte boundaries (the swizzle's period). */
__host__ __device__ constexpr size_t decode_tma_smem_bytes(int d, int cn, int stages)
{
    return (size_t)DEC_ROWS * (size_t)(d + 8) * sizeof(bf16) + 1024 /* alignment slack */ +
           (size_t)DEC_WARPS * stages * 2 * cn * d * sizeof(bf16) + (size_t)DEC_WARPS * stages * 8;
}

__device__ __forceinline__ void tma_box(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#endif
}

__device__ __forceinline__ void bulk_row(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
#endif
}
__device__ __forceinline__ void bar_init(uint32_t bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar) : "memory");
#endif
}
__device__ __forceinline__ void bar_expect(uint32_t bar, uint32_t bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
#endif
}
__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t parity)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n.reg .pred done;\nWAIT_%=:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=;\n}\n" ::"r"(bar), "r"(parity)
                 : "memory");
#endif
}
__device__ __forceinline__ void fence_async_shared()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/* Bulk mode: keys k0 .. of K and V into the stage, lane r copying row r of each (rows at or past
 * k_end are not copied: their scores are masked, and the ring was zeroed, so they hold finite
 * values); lane 0 announces the bytes on the stage's barrier first. */
template <int D, int DEC_CN>
__device__ __forceinline__ void warp_bulk_chunk(bf16 *sk, bf16 *sv, const bf16 *K, const bf16 *V, int k0, int k_end,
                                                int ld, int lane, uint32_t bar)
{
    constexpr int LD = D + 8;
    const int rows = min(DEC_CN, k_end - k0);
    fence_async_shared(); /* this lane's reads of the stage (ldmatrix) before the copies overwrite it */
    __syncwarp();
    if (lane == 0)
        bar_expect(bar, (uint32_t)(rows * ld * 2 * 2));
    __syncwarp();
    for (int r = lane; r < rows; r += 32) {
        bulk_row(smem_addr(sk + r * LD), K + (size_t)(k0 + r) * ld, (uint32_t)(ld * 2), bar);
        bulk_row(smem_addr(sv + r * LD), V + (size_t)(k0 + r) * ld, (uint32_t)(ld * 2), bar);
    }
}

template <int D, int DEC_CN, bool L2_PREFETCH>
__device__ __forceinline__ void warp_load_chunk(bf16 *sdst, const bf16 *ghead, int k0, int k_end, int ld, int lane)
{
    constexpr int CPR = D / 8, LD = D + 8, PER_LANE = DEC_CN * CPR / 32;
    static_assert((DEC_CN * CPR) % 32 == 0, "a chunk divides evenly among the lanes");
#pragma unroll
    for (int i = 0; i < PER_LANE; i++) {
        const int idx = lane + 32 * i, r = idx / CPR, c = idx % CPR;
        const bool valid = k0 + r < k_end && c * 8 < ld;
        const bf16 *src = ghead + (size_t)(valid ? k0 + r : k0) * ld + (valid ? c * 8 : 0);
        if constexpr (L2_PREFETCH)
            cp_async_16_l2_256(smem_addr(sdst + r * LD + c * 8), src, valid);
        else
            cp_async_16(smem_addr(sdst + r * LD + c * 8), src, valid);
    }
}

/* One tile's keys kb .. kb_end - 1 (clipped to seq and to the tile's causal limit): its
 * softmax-normalised output and log-sum-exp into the output (slot < 0) or into partial slot
 * `slot` of the workspace. */
template <int D, int DEC_CN, int DEC_STAGES, int LOAD, bool MATH = true>
__device__ __forceinline__ void decode_segment(const DecodeParams &p, int tile, int kb, int kb_end, int slot,
                                               const CUtensorMap *tmk = nullptr, const CUtensorMap *tmv = nullptr)
{
    constexpr int LD = D + 8, KD = D / 16, DT = D / 8, NT = DEC_CN / 8, KN = DEC_CN / 16;
    constexpr bool TMA = LOAD == LOAD_TMA, MBAR = LOAD == LOAD_BULK_ROWS || LOAD == LOAD_TMA;
    /* Bytes of one K (or V) chunk in a stage: padded rows, or TMA's swizzled 128-byte rows. */
    constexpr int CHUNK_BYTES = TMA ? DEC_CN * D * 2 : DEC_CN * LD * 2;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    bf16 *sQ = reinterpret_cast<bf16 *>(smem_raw);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    const uint32_t rings_s = TMA ? (smem_addr(sQ + DEC_ROWS * LD) + 1023u) & ~1023u : smem_addr(sQ + DEC_ROWS * LD);
    const uint32_t ring_s = rings_s + (uint32_t)(warp * DEC_STAGES * 2 * CHUNK_BYTES);
    bf16 *ring = reinterpret_cast<bf16 *>(smem_raw + (ring_s - smem_addr(sQ)));
    /* Bulk and TMA modes: one mbarrier per stage and warp, after every ring. */
    const uint32_t bars = rings_s + (uint32_t)(DEC_WARPS * DEC_STAGES * 2 * CHUNK_BYTES) + warp * DEC_STAGES * 8;
    if constexpr (MBAR) {
        if (lane == 0)
            for (int st = 0; st < DEC_STAGES; st++)
                bar_init(bars + st * 8);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
        if constexpr (!TMA) {
            /* Rows a chunk leaves uncopied must hold finite values: zero the rings once. */
            uint4 *z = reinterpret_cast<uint4 *>(sQ + DEC_ROWS * LD);
            const int n16 = DEC_WARPS * DEC_STAGES * 2 * DEC_CN * LD * 2 / 16;
            for (int i = tid; i < n16; i += DEC_THREADS)
                z[i] = make_uint4(0, 0, 0, 0);
        }
        /* Every thread's earlier ordinary accesses of the rings (the last segment's merge) before the
         * copy engine writes them. */
        fence_async_shared();
        __syncthreads();
    }

    const int rt = tile % p.row_tiles, bkv = tile / p.row_tiles;
    const int b = bkv / p.kv_heads, kvh = bkv % p.kv_heads;
    const int ld = p.head_dim, S = p.seq, SQ = p.q_seq, off = S - SQ;
    const int r0 = rt * DEC_ROWS, n_rows = min(DEC_ROWS, p.rows - r0);
    const size_t row_base = (size_t)(b * p.heads + kvh * p.group) * SQ + r0; /* global row of tile row 0 */
    const bf16 *Q = p.q + row_base * ld;
    const bf16 *K = p.k + (size_t)bkv * S * ld, *V = p.v + (size_t)bkv * S * ld;

    /* The tile's last visible key: the largest query index among its rows, plus off. */
    int max_i = 0;
    for (int r = 0; r < n_rows; r++)
        max_i = max(max_i, (r0 + r) % SQ);
    const int ke = min(min(kb_end, S), max_i + off + 1);

    {
        constexpr int CPR = D / 8;
        for (int idx = tid; idx < DEC_ROWS * CPR; idx += DEC_THREADS) {
            const int r = idx / CPR, c = idx % CPR;
            const bool valid = r < n_rows && c * 8 < ld;
            cp_async_16(smem_addr(sQ + r * LD + c * 8), Q + (size_t)(valid ? r : 0) * ld + (valid ? c * 8 : 0),
                        valid);
        }
        cp_async_commit();
    }
    const int n_chunks = ke > kb ? (ke - kb + DEC_CN - 1) / DEC_CN : 0;
    const int my_chunks = n_chunks > warp ? (n_chunks - warp + DEC_WARPS - 1) / DEC_WARPS : 0;
    /* Chunk j of this warp into its stage: cp.async (one commit group a chunk) or bulk copies. */
    auto issue = [&](int j) {
        if (j < my_chunks) {
            const int st = j % DEC_STAGES, k0 = kb + (warp + j * DEC_WARPS) * DEC_CN;
            bf16 *sk = ring + (2 * st) * (CHUNK_BYTES / 2), *sv = ring + (2 * st + 1) * (CHUNK_BYTES / 2);
            if constexpr (TMA) {
                /* Whole boxes (rows past seq zero-filled by the engine, rows past ke masked): the
                 * barrier counts every box's bytes. Lane 0 issues; the others' reads of the stage
                 * (ldmatrix, last round) are before it by the fence and the warp barrier. */
                fence_async_shared();
                __syncwarp();
                if (lane == 0) {
                    const uint32_t bar = bars + st * 8, sks = smem_addr(sk), svs = smem_addr(sv);
                    bar_expect(bar, (uint32_t)(2 * CHUNK_BYTES));
#pragma unroll
                    for (int h = 0; h < D / 64; h++) {
                        tma_box(sks + h * DEC_CN * 128, tmk, bar, 64 * h, k0, bkv);
                        tma_box(svs + h * DEC_CN * 128, tmv, bar, 64 * h, k0, bkv);
                    }
                }
            } else if constexpr (LOAD == LOAD_BULK_ROWS) {
                warp_bulk_chunk<D, DEC_CN>(sk, sv, K, V, k0, ke, ld, lane, bars + st * 8);
            } else {
                warp_load_chunk<D, DEC_CN, LOAD == LOAD_CP_ASYNC_L2>(sk, K, k0, ke, ld, lane);
                warp_load_chunk<D, DEC_CN, LOAD == LOAD_CP_ASYNC_L2>(sv, V, k0, ke, ld, lane);
            }
        }
        if constexpr (!MBAR)
            cp_async_commit();
    };
#pragma unroll
    for (int j = 0; j < DEC_STAGES - 1; j++)
        issue(j);
    if constexpr (MBAR)
        cp_async_wait<0>(); /* Q */
    else
        cp_async_wait<DEC_STAGES - 1>(); /* the Q group (committed first) has landed */
    __syncthreads();

    uint32_t qf[KD][4];
    const uint32_t q_lane = smem_addr(sQ) + (uint32_t)((lane & 15) * LD * 2) + (uint32_t)((lane >> 4) << 4);
#pragma unroll
    for (int kk = 0; kk < KD; kk++)
        ldmatrix_x4(q_lane + kk * 32, qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3]);
    /* ldmatrix's row of this lane in a K (V) 8x8 matrix, and (TMA) its 16-byte unit's swizzle for
     * the four unit pairs of a 128-byte row: rows r and r + 8k share r % 8 = lane % 8. */
    const int k_row = ((lane >> 4) << 3) + (lane & 7), k_unit = (lane >> 3) & 1;
    const int v_row = (((lane >> 3) & 1) << 3) + (lane & 7), v_unit = lane >> 4;
    const uint32_t k_lane_off = TMA ? (uint32_t)(k_row * 128) : (uint32_t)(k_row * LD * 2 + (k_unit << 4));
    const uint32_t v_lane_off = TMA ? (uint32_t)(v_row * 128) : (uint32_t)(v_row * LD * 2 + (v_unit << 4));
    uint32_t k_sw[4], v_sw[4];
#pragma unroll
    for (int m = 0; m < 4; m++) {
        k_sw[m] = (uint32_t)(((2 * m + k_unit) ^ (lane & 7)) << 4);
        v_sw[m] = (uint32_t)(((2 * m + v_unit) ^ (lane & 7)) << 4);
    }
    /* Byte offsets of the 16 d-columns kk (K) and of the 16 keys kk, columns dp (V) in a stage. */
    auto k_at = [&](int kk, int np) -> uint32_t {
        return TMA ? (uint32_t)((kk >> 2) * DEC_CN * 128 + np * 16 * 128) + k_sw[kk & 3]
                   : (uint32_t)(np * 16 * LD * 2 + kk * 32);
    };
    auto v_at = [&](int kk, int dp) -> uint32_t {
        return TMA ? (uint32_t)((dp >> 2) * DEC_CN * 128 + kk * 16 * 128) + v_sw[dp & 3]
                   : (uint32_t)(kk * 16 * LD * 2 + dp * 32);
    };
    /* The causal limit of this lane's two rows (g and g + 8). */
    const int limit[2] = {(r0 + g) % SQ + off, (r0 + g + 8) % SQ + off};

    float o[DT][4];
#pragma unroll
    for (int dt = 0; dt < DT; dt++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            o[dt][i] = 0.f;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
    const float scale_log2 = p.scale_log2;

    for (int j = 0; j < my_chunks; j++) {
        issue(j + DEC_STAGES - 1);
        if constexpr (MBAR) {
            bar_wait(bars + (j % DEC_STAGES) * 8, (uint32_t)((j / DEC_STAGES) & 1)); /* chunk j has landed */
        } else {
            cp_async_wait<DEC_STAGES - 1>(); /* chunk j has landed (this lane's copies) */
            __syncwarp();                    /* and every lane's */
        }
        const int stage = j % DEC_STAGES, k0 = kb + (warp + j * DEC_WARPS) * DEC_CN;
        const uint32_t k_base = ring_s + (uint32_t)((2 * stage) * CHUNK_BYTES) + k_lane_off;
        const uint32_t v_base = ring_s + (uint32_t)((2 * stage + 1) * CHUNK_BYTES) + v_lane_off;
        if constexpr (MATH) { /* false: a bench probe that only streams (bench/decode_probe.cu) */
            float s[NT][4];
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    s[nt][i] = 0.f;
#pragma unroll
            for (int kk = 0; kk < KD; kk++)
#pragma unroll
                for (int np = 0; np < NT / 2; np++) {
                    uint32_t b0, b1, b2, b3;
                    ldmatrix_x4(k_base + k_at(kk, np), b0, b1, b2, b3);
                    mma_bf16_16816(s[2 * np], qf[kk], b0, b1);
                    mma_bf16_16816(s[2 * np + 1], qf[kk], b2, b3);
                }
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const int col = k0 + nt * 8 + 2 * t4 + (i & 1);
                    if (col >= ke || col > limit[i >> 1])
                        s[nt][i] = -INFINITY;
                }
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float mx = -INFINITY;
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
                    mx = fmaxf(mx, fmaxf(s[nt][2 * h], s[nt][2 * h + 1]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                const float m_new = fmaxf(row_max[h], mx * scale_log2);
                const float alpha = fast_exp2(row_max[h] - exp2_offset(m_new));
                row_max[h] = m_new;
                row_sum[h] *= alpha;
#pragma unroll
                for (int dt = 0; dt < DT; dt++) {
                    o[dt][2 * h] *= alpha;
                    o[dt][2 * h + 1] *= alpha;
                }
            }
            uint32_t pa[KN][4];
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                float e[4];
#pragma unroll
                for (int i = 0; i < 4; i++)
                    e[i] = fast_exp2(fmaf(s[nt][i], scale_log2, -exp2_offset(row_max[i >> 1])));
                row_sum[0] += e[0] + e[1];
                row_sum[1] += e[2] + e[3];
                pa[nt >> 1][(nt & 1) * 2 + 0] = pack_bf16x2(e[0], e[1]);
                pa[nt >> 1][(nt & 1) * 2 + 1] = pack_bf16x2(e[2], e[3]);
            }
#pragma unroll
            for (int kk = 0; kk < KN; kk++)
#pragma unroll
                for (int dp = 0; dp < DT / 2; dp++) {
                    uint32_t b0, b1, b2, b3;
                    ldmatrix_x4_trans(v_base + v_at(kk, dp), b0, b1, b2, b3);
                    mma_bf16_16816(o[2 * dp], pa[kk], b0, b1);
                    mma_bf16_16816(o[2 * dp + 1], pa[kk], b2, b3);
                }
        }
        __syncwarp(); /* every lane is done with this stage before it is refilled */
    }
    cp_async_wait<0>();

    /* The warps' partial softmaxes, merged in shared memory (over the rings). */
    __syncthreads();
    float *m_o = reinterpret_cast<float *>(sQ + DEC_ROWS * LD); /* [warps][16][D] */
    float *m_max = m_o + DEC_WARPS * DEC_ROWS * D, *m_sum = m_max + DEC_WARPS * DEC_ROWS;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float l = row_sum[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int row = g + 8 * h;
#pragma unroll
        for (int dt = 0; dt < DT; dt++) {
            m_o[(warp * DEC_ROWS + row) * D + dt * 8 + 2 * t4] = o[dt][2 * h];
            m_o[(warp * DEC_ROWS + row) * D + dt * 8 + 2 * t4 + 1] = o[dt][2 * h + 1];
        }
        if (t4 == 0) {
            m_max[warp * DEC_ROWS + row] = row_max[h];
            m_sum[warp * DEC_ROWS + row] = l;
        }
    }
    __syncthreads();
    for (int idx = tid; idx < n_rows * D; idx += DEC_THREADS) {
        const int r = idx / D, d = idx % D;
        if (d >= ld)
            continue;
        float m = -INFINITY;
#pragma unroll
        for (int w = 0; w < DEC_WARPS; w++)
            m = fmaxf(m, m_max[w * DEC_ROWS + r]);
        float acc = 0.f, l = 0.f;
        if (m != -INFINITY) {
#pragma unroll
            for (int w = 0; w < DEC_WARPS; w++) {
                const float a = fast_exp2(m_max[w * DEC_ROWS + r] - m);
                acc += a * m_o[(w * DEC_ROWS + r) * D + d];
                l += a * m_sum[w * DEC_ROWS + r];
            }
        }
        const float out = l > 0.f ? acc / l : 0.f;
        const float lse = l > 0.f ? (m + __log2f(l)) * 0.69314718055994531f : -INFINITY;
        const size_t row = row_base + r;
        if (slot < 0) {
            p.o[row * ld + d] = __float2bfloat16(out);
            if (d == 0)
                p.lse[row] = lse;
        } else {
            p.part_o[((size_t)slot * p.total_rows + row) * ld + d] = out;
            if (d == 0)
                p.part_lse[(size_t)slot * p.total_rows + row] = lse;
        }
    }
}

/* The fixed split grid: block (tile, split), the split's keys split * keys_per_split onward. */
template <int D, int DEC_CN, int DEC_STAGES, int LOAD, bool MATH = true>
__device__ __forceinline__ void decode_body(const DecodeParams &p, const CUtensorMap *tmk = nullptr,
                                            const CUtensorMap *tmv = nullptr)
{
    const int kb = blockIdx.y * p.keys_per_split;
    decode_segment<D, DEC_CN, DEC_STAGES, LOAD, MATH>(p, blockIdx.x, kb, kb + p.keys_per_split,
                                                      p.splits == 1 ? -1 : (int)blockIdx.y, tmk, tmv);
}

/* The block that owns round u of the balanced grid's W rounds over G blocks (block b owns rounds
 * floor(b W / G) .. floor((b + 1) W / G) - 1). */
__device__ __forceinline__ long long balanced_owner(long long u, long long W, long long G)
{
    return ((u + 1) * G - 1) / W;
}

/* The last block of a tile's pieces merges them: out = sum_p exp(lse_p - m) o_p / sum_p exp(lse_p - m).
 * The partials come from other blocks: read through the L2 (ld.global.cg), after the fence. */
__device__ __forceinline__ void balanced_merge(const DecodeParams &p, int tile, int pieces)
{
    const int rt = tile % p.row_tiles, bkv = tile / p.row_tiles;
    const int b = bkv / p.kv_heads, kvh = bkv % p.kv_heads, ld = p.head_dim, T = p.total_rows;
    const int r0 = rt * DEC_ROWS, n_rows = min(DEC_ROWS, p.rows - r0);
    const size_t row_base = (size_t)(b * p.heads + kvh * p.group) * p.q_seq + r0;
    for (int idx = threadIdx.x; idx < n_rows * ld; idx += blockDim.x) {
        const size_t row = row_base + idx / ld;
        const int d = idx % ld;
        float m = -INFINITY;
        for (int s = 0; s < pieces; s++)
            m = fmaxf(m, __ldcg(p.part_lse + (size_t)s * T + row));
        float acc = 0.f, l = 0.f;
        if (m != -INFINITY)
            for (int s = 0; s < pieces; s++) {
                const float w = __expf(__ldcg(p.part_lse + (size_t)s * T + row) - m);
                l += w;
                acc += w * __ldcg(p.part_o + ((size_t)s * T + row) * ld + d);
            }
        p.o[row * ld + d] = __float2bfloat16(l > 0.f ? acc / l : 0.f);
        if (d == 0)
            p.lse[row] = l > 0.f ? m + logf(l) : -INFINITY;
    }
}

/* The balanced grid: this block's rounds, tile by tile. A tile wholly inside the block's range is
 * written as the output; a piece of a tile goes to the workspace slot of its place among the
 * tile's blocks, and the block whose piece lands last merges the tile. */
template <int D, int DEC_CN, int DEC_STAGES, int LOAD>
__device__ __forceinline__ void decode_balanced_body(const DecodeParams &p, const CUtensorMap *tmk = nullptr,
                                                     const CUtensorMap *tmv = nullptr)
{
    constexpr int ROUND = DEC_CN * DEC_WARPS;
    __shared__ int s_last;
    const long long U = p.units_per_tile, W = (long long)p.tiles * U, G = gridDim.x, blk = blockIdx.x;
    long long u = blk * W / G;
    const long long u_end = (blk + 1) * W / G;
    while (u < u_end) {
        const long long t = u / U, t_begin = t * U, t_end = t_begin + U;
        const long long seg_end = min(u_end, t_end);
        const long long first = balanced_owner(t_begin, W, G);
        const int pieces = (int)(balanced_owner(t_end - 1, W, G) - first + 1);
        decode_segment<D, DEC_CN, DEC_STAGES, LOAD>(p, (int)t, (int)((u - t_begin) * ROUND),
                                                   (int)((seg_end - t_begin) * ROUND),
                                                   pieces == 1 ? -1 : (int)(blk - first), tmk, tmv);
        if (pieces > 1) {
            __threadfence(); /* this block's partial, visible before its arrival is counted */
            __syncthreads();
            if (threadIdx.x == 0) {
                const unsigned prev = atomicAdd(p.counters + t, 1u);
                s_last = prev == (unsigned)(pieces - 1);
                if (s_last)
                    p.counters[t] = 0; /* every piece has arrived: ready for the next forward */
            }
            __syncthreads();
            if (s_last) {
                __threadfence();
                balanced_merge(p, (int)t, pieces);
            }
        }
        __syncthreads(); /* the next segment reuses the shared memory */
        u = seg_end;
    }
}

/* The persistent grid (flash_decode_balanced's mode 2, TMA only): the chunks of cn keys of all tiles
 * laid end to end (tile-major, ceil(seq / cn) a tile) and cut into one equal range per block, so every
 * multiprocessor streams the same bytes. The block's four warps take the range's chunks in turn
 * (chunk i of the range to warp i % 4) through their rings, and a ring runs on across a tile boundary
 * inside the range: the next tile's first chunks are already in flight while this tile's last ones are
 * multiplied and merged, so no refill per tile (the balanced grid's cost). At each tile boundary the
 * warps' softmaxes are merged by warp 0 from shared memory (a region beside the rings, not over them)
 * into the output (a tile wholly in the range) or into the piece's workspace slot, and the tile's last
 * arriving block merges its pieces. Measured on the H200 (bench/results/2026-12-04-decode-persistent.md):
 * 0-5% slower than the fixed grid at every one-query point, also with the math left out, where it streams
 * on 132 SMs slower than the fixed grid on 128: the boundaries' merges cost more than the 4 SMs bring. */

/* A tile's keys that any of its rows sees: min(seq, its rows' largest causal limit + 1). */
__device__ __forceinline__ int tile_key_end(const DecodeParams &p, int tile)
{
    const int r0 = (tile % p.row_tiles) * DEC_ROWS, n_rows = min(DEC_ROWS, p.rows - r0);
    int max_i = p.q_seq - 1;
    if (n_rows < p.q_seq) {
        max_i = 0;
        for (int r = 0; r < n_rows; r++)
            max_i = max(max_i, (r0 + r) % p.q_seq);
    }
    return min(p.seq, max_i + p.seq - p.q_seq + 1);
}

/* Chunks of a block's range in the order one warp takes them: u, u + 4, ... below `end`, skipping the
 * chunks of a tile past its last visible key (never loaded, never multiplied). */
struct ChunkWalk {
    long long u, end, per_tile;
    int tile, valid; /* the tile of u and its chunks holding a visible key */
    template <int CN> __device__ __forceinline__ void settle(const DecodeParams &p)
    {
        while (u < end) {
            const long long t = u / per_tile;
            if (t != tile) {
                tile = (int)t;
                valid = (tile_key_end(p, tile) + CN - 1) / CN;
            }
            if (u - t * per_tile < valid)
                return;
            u += ((t + 1) * per_tile - u + DEC_WARPS - 1) / DEC_WARPS * DEC_WARPS; /* the next tile's first */
        }
    }
};

/* Merge area (beside the rings): warps 1-3's unnormalised O [3][16][D], row maxima and sums [3][16]. */
constexpr size_t decode_pers_smem_bytes(int d, int cn, int stages)
{
    return 1024 /* alignment slack */ + (size_t)DEC_WARPS * stages * 2 * cn * d * sizeof(bf16) +
           (size_t)(DEC_WARPS - 1) * DEC_ROWS * (d + 2) * sizeof(float) + (size_t)DEC_WARPS * stages * 8;
}

/* The last block of a tile merges its pieces (natural-log lse, normalised O): one float4 of one row a
 * thread per step, the pieces' loads issued sixteen at a time (a chain of L2 round trips otherwise). */
template <int D>
__device__ __forceinline__ void persistent_merge(const DecodeParams &p, int tile, int pieces)
{
    const int rt = tile % p.row_tiles, bkv = tile / p.row_tiles;
    const int b = bkv / p.kv_heads, kvh = bkv % p.kv_heads, T = p.total_rows;
    const int r0 = rt * DEC_ROWS, n_rows = min(DEC_ROWS, p.rows - r0);
    const size_t row_base = (size_t)(b * p.heads + kvh * p.group) * p.q_seq + r0;
    constexpr int G4 = D / 4, U = 16;
    for (int idx = threadIdx.x; idx < n_rows * G4; idx += blockDim.x) {
        const size_t row = row_base + idx / G4;
        const int c = (idx % G4) * 4;
        float m = -INFINITY, l = 0.f, acc[4] = {0.f, 0.f, 0.f, 0.f};
        for (int s0 = 0; s0 < pieces; s0 += U) {
            float ls[U];
            float4 os[U];
#pragma unroll
            for (int j = 0; j < U; j++) {
                const bool in = s0 + j < pieces;
                const size_t slot_row = (size_t)(in ? s0 + j : 0) * T + row;
                ls[j] = in ? __ldcg(p.part_lse + slot_row) : -INFINITY;
                os[j] = in ? __ldcg(reinterpret_cast<const float4 *>(p.part_o + slot_row * D + c))
                           : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int j = 0; j < U; j++) {
                if (ls[j] == -INFINITY)
                    continue;
                const float m_new = fmaxf(m, ls[j]);
                const float a = __expf(m - m_new), w = __expf(ls[j] - m_new);
                l = l * a + w;
                acc[0] = acc[0] * a + w * os[j].x;
                acc[1] = acc[1] * a + w * os[j].y;
                acc[2] = acc[2] * a + w * os[j].z;
                acc[3] = acc[3] * a + w * os[j].w;
                m = m_new;
            }
        }
        const float inv = l > 0.f ? 1.f / l : 0.f;
#pragma unroll
        for (int i = 0; i < 4; i++)
            p.o[row * D + c + i] = __float2bfloat16(acc[i] * inv);
        if (c == 0)
            p.lse[row] = l > 0.f ? m + logf(l) : -INFINITY;
    }
}

/* The last block of a fixed-grid tile merges its splits (decode_fused_body): the splits' partial outputs
 * and log-sum-exps staged in shared memory (the rings' bytes, free now), as many splits at a time as fit,
 * every copy in flight at once (cp.async through the L2, where the other blocks' partials are), then each
 * thread merges its float4s of the tile's rows from there. The merge costs one L2 round trip per staged
 * batch: a thread walking its items one after the other took one per item (3.7 us at 2 x 32/8 x 4 x 16384,
 * 16 rows of 8 splits). */
template <int D, int SMEM_BYTES>
__device__ __forceinline__ void decode_tile_merge(const DecodeParams &p, int tile, int pieces)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    constexpr int G4 = D / 4, ITEMS = DEC_ROWS * G4 / DEC_THREADS, SPLIT_FLOATS = DEC_ROWS * (D + 1);
    constexpr int BATCH = SMEM_BYTES / (SPLIT_FLOATS * 4); /* splits staged at once */
    static_assert(DEC_ROWS * G4 % DEC_THREADS == 0 && BATCH >= 1, "the tile's float4s divide among the threads");
    float *s_o = reinterpret_cast<float *>(smem_raw), *s_l = s_o + BATCH * DEC_ROWS * D;
    const int rt = tile % p.row_tiles, bkv = tile / p.row_tiles, tid = threadIdx.x;
    const int b = bkv / p.kv_heads, kvh = bkv % p.kv_heads, T = p.total_rows;
    const int r0 = rt * DEC_ROWS, n_rows = min(DEC_ROWS, p.rows - r0);
    const size_t row_base = (size_t)(b * p.heads + kvh * p.group) * p.q_seq + r0;
    float m[ITEMS], l[ITEMS], acc[ITEMS][4];
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
        m[it] = -INFINITY;
        l[it] = acc[it][0] = acc[it][1] = acc[it][2] = acc[it][3] = 0.f;
    }
    for (int s0 = 0; s0 < pieces; s0 += BATCH) {
        const int ns = min(BATCH, pieces - s0);
        for (int idx = tid; idx < ns * n_rows * G4; idx += DEC_THREADS) {
            const int sp = idx / (n_rows * G4), r = idx / G4 % n_rows, c = idx % G4;
            cp_async_16(smem_addr(s_o + (sp * DEC_ROWS + r) * D + c * 4),
                        p.part_o + ((size_t)(s0 + sp) * T + row_base + r) * D + c * 4, true);
        }
        cp_async_commit();
        for (int idx = tid; idx < ns * n_rows; idx += DEC_THREADS)
            s_l[(idx / n_rows) * DEC_ROWS + idx % n_rows] = __ldcg(p.part_lse + (size_t)(s0 + idx / n_rows) * T +
                                                                   row_base + idx % n_rows);
        cp_async_wait<0>();
        __syncthreads();
#pragma unroll
        for (int it = 0; it < ITEMS; it++) {
            const int item = tid + it * DEC_THREADS, r = item / G4, c = item % G4;
            if (r >= n_rows)
                continue;
            for (int sp = 0; sp < ns; sp++) {
                const float ls = s_l[sp * DEC_ROWS + r];
                if (ls == -INFINITY)
                    continue; /* no key of the split visible to this row */
                const float4 o = *reinterpret_cast<const float4 *>(s_o + (sp * DEC_ROWS + r) * D + c * 4);
                const float m_new = fmaxf(m[it], ls), a = __expf(m[it] - m_new), w = __expf(ls - m_new);
                l[it] = l[it] * a + w;
                acc[it][0] = acc[it][0] * a + w * o.x;
                acc[it][1] = acc[it][1] * a + w * o.y;
                acc[it][2] = acc[it][2] * a + w * o.z;
                acc[it][3] = acc[it][3] * a + w * o.w;
                m[it] = m_new;
            }
        }
        __syncthreads(); /* every thread done with this batch before the next overwrites it */
    }
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
        const int item = tid + it * DEC_THREADS, r = item / G4, c = item % G4;
        if (r >= n_rows)
            continue;
        const size_t row = row_base + r;
        const float inv = l[it] > 0.f ? 1.f / l[it] : 0.f;
        const uint2 packed = make_uint2(pack_bf16x2(acc[it][0] * inv, acc[it][1] * inv),
                                        pack_bf16x2(acc[it][2] * inv, acc[it][3] * inv));
        *reinterpret_cast<uint2 *>(p.o + row * D + c * 4) = packed;
        if (c == 0)
            p.lse[row] = l[it] > 0.f ? m[it] + logf(l[it]) : -INFINITY;
    }
}

/* The fixed grid with the combine fused in (the TMA ring, exact head dim): block (tile, split) as
 * decode_body, and past one split, where p.counters is set, the tile's last block to finish merges the
 * splits' partials (decode_tile_merge), so a split forward is one kernel. p.counters: one per tile, zero
 * before the first forward and back to zero after each; NULL: the combine kernel follows. Its merge is a
 * serial tail a block long, so it pays only where a tile holds few query rows (merge_rows_max): on the
 * H200 it took 3.7 us off 1 x 32/8 x 131072 (4 rows, 16 splits) and 1.9 off the D 64 point (8 rows, 8
 * splits), and added 1-2 us (12 at 47 splits) where tiles are full 16-row ones
 * (bench/results/2026-12-04-decode-ring.md). */
template <int D, int DEC_CN, int DEC_STAGES>
__device__ __forceinline__ void decode_fused_body(const DecodeParams &p, const CUtensorMap *tmk, const CUtensorMap *tmv)
{
    __shared__ int s_last;
    const int kb = blockIdx.y * p.keys_per_split;
    decode_segment<D, DEC_CN, DEC_STAGES, LOAD_TMA>(p, blockIdx.x, kb, kb + p.keys_per_split,
                                                   p.splits == 1 ? -1 : (int)blockIdx.y, tmk, tmv);
    if (p.splits == 1 || !p.counters)
        return; /* one split, or the combine kernel merges them */
    __threadfence(); /* this block's partial, visible before its arrival is counted */
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned prev = atomicAdd(p.counters + blockIdx.x, 1u);
        s_last = prev == (unsigned)(p.splits - 1);
        if (s_last)
            p.counters[blockIdx.x] = 0; /* every split has arrived: ready for the next forward */
    }
    __syncthreads();
    if (s_last) {
        __threadfence();
        /* Staged below the mbarriers (their bytes are not reused): at most the shared memory less the
         * alignment slack and the barriers. */
        decode_tile_merge<D, (int)(decode_tma_smem_bytes(D, DEC_CN, DEC_STAGES) - 1024 - DEC_WARPS * DEC_STAGES * 8)>(
            p, blockIdx.x, p.splits);
    }
}

/* Warps 1-3: this warp's unnormalised O, row maxima and sums (l: summed over the quad) into the merge area. */
template <int D>
__device__ __forceinline__ void persistent_stash(float *m_o, const float (&o)[D / 8][4], const float (&row_max)[2],
                                                 const float (&l)[2], int n_rows)
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    float *m_max = m_o + (DEC_WARPS - 1) * DEC_ROWS * D, *m_sum = m_max + (DEC_WARPS - 1) * DEC_ROWS;
    float *mo = m_o + (warp - 1) * DEC_ROWS * D;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int row = g + 8 * h;
        if (row >= n_rows)
            continue;
#pragma unroll
        for (int dt = 0; dt < D / 8; dt++)
            *reinterpret_cast<float2 *>(mo + row * D + dt * 8 + 2 * t4) = make_float2(o[dt][2 * h], o[dt][2 * h + 1]);
        if (t4 == 0) {
            m_max[(warp - 1) * DEC_ROWS + row] = row_max[h];
            m_sum[(warp - 1) * DEC_ROWS + row] = l[h];
        }
    }
}

/* Warp 0: its own softmax merged with warps 1-3's from the merge area, written as the output (slot < 0) or
 * as the piece's partial (then fenced, before its arrival is counted). */
template <int D>
__device__ __forceinline__ void persistent_warp0_merge(const DecodeParams &p, const float *m_o,
                                                       const float (&o)[D / 8][4], const float (&row_max)[2],
                                                       const float (&l)[2], size_t row_base, int n_rows, int slot)
{
    const int lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const float *m_max = m_o + (DEC_WARPS - 1) * DEC_ROWS * D, *m_sum = m_max + (DEC_WARPS - 1) * DEC_ROWS;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int row = g + 8 * h;
        if (row >= n_rows)
            continue;
        float m = row_max[h];
#pragma unroll
        for (int w = 0; w < DEC_WARPS - 1; w++)
            m = fmaxf(m, m_max[w * DEC_ROWS + row]);
        const float mo = exp2_offset(m), a0 = fast_exp2(row_max[h] - mo);
        float a[DEC_WARPS - 1], lt = a0 * l[h];
#pragma unroll
        for (int w = 0; w < DEC_WARPS - 1; w++) {
            a[w] = fast_exp2(m_max[w * DEC_ROWS + row] - mo);
            lt += a[w] * m_sum[w * DEC_ROWS + row];
        }
        const float inv = lt > 0.f ? 1.f / lt : 0.f;
        const size_t grow = row_base + row;
#pragma unroll
        for (int dt = 0; dt < D / 8; dt++) {
            const int c = dt * 8 + 2 * t4;
            float x = a0 * o[dt][2 * h], y = a0 * o[dt][2 * h + 1];
#pragma unroll
            for (int w = 0; w < DEC_WARPS - 1; w++) {
                const float2 v = *reinterpret_cast<const float2 *>(m_o + (w * DEC_ROWS + row) * D + c);
                x += a[w] * v.x;
                y += a[w] * v.y;
            }
            if (slot < 0)
                *reinterpret_cast<uint32_t *>(p.o + grow * D + c) = pack_bf16x2(x * inv, y * inv);
            else
                __stcg(reinterpret_cast<float2 *>(p.part_o + ((size_t)slot * p.total_rows + grow) * D + c),
                       make_float2(x * inv, y * inv));
        }
        const float lse = lt > 0.f ? (m + __log2f(lt)) * 0.69314718055994531f : -INFINITY;
        if (t4 == 0) {
            if (slot < 0)
                p.lse[grow] = lse;
            else
                __stcg(p.part_lse + (size_t)slot * p.total_rows + grow, lse);
        }
    }
    if (slot >= 0)
        __threadfence(); /* this piece's partial, visible before its arrival is counted */
}

/* The end of a tile's piece: warps 1-3 leave their (O, max, sum) in the merge area, warp 0 merges them
 * with its own and writes the output (slot < 0) or the piece's partial; with pieces > 1 the last
 * block to arrive merges the tile. Every warp of the block calls it (block barriers). */
template <int D>
__device__ __forceinline__ void persistent_piece_end(const DecodeParams &p, float *m_o, float (&o)[D / 8][4],
                                                     const float (&row_max)[2], const float (&row_sum)[2], int tile,
                                                     int slot, int pieces)
{
    const int warp = threadIdx.x >> 5;
    const int rt = tile % p.row_tiles, bkv = tile / p.row_tiles;
    const int b = bkv / p.kv_heads, kvh = bkv % p.kv_heads;
    const int r0 = rt * DEC_ROWS, n_rows = min(DEC_ROWS, p.rows - r0);
    const size_t row_base = (size_t)(b * p.heads + kvh * p.group) * p.q_seq + r0;
    float l[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        l[h] = row_sum[h];
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    }
    if (warp > 0)
        persistent_stash<D>(m_o, o, row_max, l, n_rows);
    __syncthreads();
    if (warp == 0)
        persistent_warp0_merge<D>(p, m_o, o, row_max, l, row_base, n_rows, slot);
    if (pieces > 1) {
        __shared__ int s_last;
        __syncthreads();
        if (threadIdx.x == 0) {
            const unsigned prev = atomicAdd(p.counters + tile, 1u);
            s_last = prev == (unsigned)(pieces - 1);
            if (s_last)
                p.counters[tile] = 0; /* every piece has arrived: ready for the next forward */
        }
        __syncthreads();
        if (s_last) {
            __threadfence();
            persistent_merge<D>(p, tile, pieces);
        }
    }
    __syncthreads(); /* the merge area is free for the next tile */
}

/* One chunk of keys k0 .. k0 + CN - 1 in a TMA stage (k_base, v_base: this lane's ldmatrix rows in the
 * stage's K and V): Q·Kᵀ, the mask (keys at or past ke, or above the row's causal limit), the online
 * softmax update and P·V, as decode_segment's TMA mode. */
template <int D, int CN>
__device__ __forceinline__ void persistent_chunk(uint32_t k_base, uint32_t v_base, const uint32_t (&k_sw)[4],
                                                 const uint32_t (&v_sw)[4], const uint32_t (&qf)[D / 16][4],
                                                 float (&o)[D / 8][4], float (&row_max)[2], float (&row_sum)[2],
                                                 int k0, int ke, const int (&limit)[2], float scale_log2)
{
    constexpr int KD = D / 16, DT = D / 8, NT = CN / 8, KN = CN / 16;
    const int t4 = (threadIdx.x & 31) & 3;
    float s[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            s[nt][i] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KD; kk++)
#pragma unroll
        for (int np = 0; np < NT / 2; np++) {
            uint32_t b0, b1, b2, b3;
            ldmatrix_x4(k_base + (uint32_t)((kk >> 2) * CN * 128 + np * 16 * 128) + k_sw[kk & 3], b0, b1, b2, b3);
            mma_bf16_16816(s[2 * np], qf[kk], b0, b1);
            mma_bf16_16816(s[2 * np + 1], qf[kk], b2, b3);
        }
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int col = k0 + nt * 8 + 2 * t4 + (i & 1);
            if (col >= ke || col > limit[i >> 1])
                s[nt][i] = -INFINITY;
        }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float mx = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
            mx = fmaxf(mx, fmaxf(s[nt][2 * h], s[nt][2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(row_max[h], mx * scale_log2);
        const float alpha = fast_exp2(row_max[h] - exp2_offset(m_new));
        row_max[h] = m_new;
        row_sum[h] *= alpha;
#pragma unroll
        for (int dt = 0; dt < DT; dt++) {
            o[dt][2 * h] *= alpha;
            o[dt][2 * h + 1] *= alpha;
        }
    }
    uint32_t pa[KN][4];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        float e[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            e[i] = fast_exp2(fmaf(s[nt][i], scale_log2, -exp2_offset(row_max[i >> 1])));
        row_sum[0] += e[0] + e[1];
        row_sum[1] += e[2] + e[3];
        pa[nt >> 1][(nt & 1) * 2 + 0] = pack_bf16x2(e[0], e[1]);
        pa[nt >> 1][(nt & 1) * 2 + 1] = pack_bf16x2(e[2], e[3]);
    }
#pragma unroll
    for (int kk = 0; kk < KN; kk++)
#pragma unroll
        for (int dp = 0; dp < DT / 2; dp++) {
            uint32_t b0, b1, b2, b3;
            ldmatrix_x4_trans(v_base + (uint32_t)((dp >> 2) * CN * 128 + kk * 16 * 128) + v_sw[dp & 3], b0, b1, b2,
                              b3);
            mma_bf16_16816(o[2 * dp], pa[kk], b0, b1);
            mma_bf16_16816(o[2 * dp + 1], pa[kk], b2, b3);
        }
}

/* A tile's query rows as mma.sync A fragments, straight from global memory (rows past the tile's are
 * zero): fragment kk holds (row g, columns 16kk + 2t4, +1), (g + 8, same), (g, +8), (g + 8, +8). */
template <int D>
__device__ __forceinline__ void persistent_load_q(const DecodeParams &p, int tile, uint32_t (&qf)[D / 16][4])
{
    const int lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const int rt = tile % p.row_tiles, bkv = tile / p.row_tiles;
    const int b = bkv / p.kv_heads, kvh = bkv % p.kv_heads;
    const int r0 = rt * DEC_ROWS, n_rows = min(DEC_ROWS, p.rows - r0);
    const bf16 *Q = p.q + ((size_t)(b * p.heads + kvh * p.group) * p.q_seq + r0) * D;
    const uint32_t *q_lo = reinterpret_cast<const uint32_t *>(Q + (size_t)g * D + 2 * t4);
    const uint32_t *q_hi = reinterpret_cast<const uint32_t *>(Q + (size_t)(g + 8) * D + 2 * t4);
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        qf[kk][0] = g < n_rows ? __ldg(q_lo + kk * 8) : 0u;
        qf[kk][1] = g + 8 < n_rows ? __ldg(q_hi + kk * 8) : 0u;
        qf[kk][2] = g < n_rows ? __ldg(q_lo + kk * 8 + 4) : 0u;
        qf[kk][3] = g + 8 < n_rows ? __ldg(q_hi + kk * 8 + 4) : 0u;
    }
}

template <int D, int DEC_CN, int DEC_STAGES, bool MATH = true>
__device__ __forceinline__ void decode_persistent_body(const DecodeParams &p, const CUtensorMap *tmk,
                                                       const CUtensorMap *tmv)
{
    constexpr int DT = D / 8, CHUNK_BYTES = DEC_CN * D * 2;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2;
    const uint32_t rings_s = (smem_addr(smem_raw) + 1023u) & ~1023u;
    const uint32_t ring_s = rings_s + (uint32_t)(warp * DEC_STAGES * 2 * CHUNK_BYTES);
    float *m_o = reinterpret_cast<float *>(smem_raw + (rings_s - smem_addr(smem_raw)) +
                                           DEC_WARPS * DEC_STAGES * 2 * CHUNK_BYTES);
    const uint32_t bars = smem_addr(m_o) + (uint32_t)((DEC_WARPS - 1) * DEC_ROWS * (D + 2) * sizeof(float)) +
                          warp * DEC_STAGES * 8;
    if (lane == 0)
        for (int st = 0; st < DEC_STAGES; st++)
            bar_init(bars + st * 8);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
    __syncwarp();

    const long long C = p.units_per_tile, W = (long long)p.tiles * C, G = gridDim.x, blk = blockIdx.x;
    const long long b0 = blk * W / G, b1 = (blk + 1) * W / G;
    ChunkWalk iw{b0 + warp, b1, C, -1, 0}, cw{b0 + warp, b1, C, -1, 0}; /* issue side, compute side */
    iw.settle<DEC_CN>(p);
    cw.settle<DEC_CN>(p);
    int issued = 0, done = 0;
    auto issue = [&]() {
        if (iw.u >= iw.end)
            return;
        const int st = issued % DEC_STAGES, k0 = (int)(iw.u - (long long)iw.tile * C) * DEC_CN;
        const int bkv = iw.tile / p.row_tiles;
        fence_async_shared(); /* this warp's reads of the stage (ldmatrix) before the engine overwrites it */
        __syncwarp();
        if (lane == 0) {
            const uint32_t bar = bars + st * 8, sks = ring_s + (uint32_t)(2 * st * CHUNK_BYTES),
                           svs = sks + CHUNK_BYTES;
            bar_expect(bar, (uint32_t)(2 * CHUNK_BYTES));
#pragma unroll
            for (int h = 0; h < D / 64; h++) {
                tma_box(sks + h * DEC_CN * 128, tmk, bar, 64 * h, k0, bkv);
                tma_box(svs + h * DEC_CN * 128, tmv, bar, 64 * h, k0, bkv);
            }
        }
        issued++;
        iw.u += DEC_WARPS;
        iw.settle<DEC_CN>(p);
    };
#pragma unroll
    for (int j = 0; j < DEC_STAGES - 1; j++)
        issue();

    /* ldmatrix's row of this lane in a K (V) 8x8 matrix and its 16-byte unit's swizzle (decode_segment). */
    const int k_row = ((lane >> 4) << 3) + (lane & 7), k_unit = (lane >> 3) & 1;
    const int v_row = (((lane >> 3) & 1) << 3) + (lane & 7), v_unit = lane >> 4;
    uint32_t k_sw[4], v_sw[4];
#pragma unroll
    for (int m = 0; m < 4; m++) {
        k_sw[m] = (uint32_t)(((2 * m + k_unit) ^ (lane & 7)) << 4);
        v_sw[m] = (uint32_t)(((2 * m + v_unit) ^ (lane & 7)) << 4);
    }
    const int off = p.seq - p.q_seq;
    for (long long pu = b0; pu < b1;) { /* the range's tiles, one piece each */
        const int tile = (int)(pu / C);
        const long long pe = min(b1, (long long)(tile + 1) * C);
        const long long first = balanced_owner((long long)tile * C, W, G);
        const int pieces = (int)(balanced_owner((long long)(tile + 1) * C - 1, W, G) - first + 1);
        const int r0 = (tile % p.row_tiles) * DEC_ROWS, ke = tile_key_end(p, tile);
        const int limit[2] = {(r0 + g) % p.q_seq + off, (r0 + g + 8) % p.q_seq + off};
        uint32_t qf[D / 16][4];
        persistent_load_q<D>(p, tile, qf);
        float o[DT][4];
#pragma unroll
        for (int dt = 0; dt < DT; dt++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                o[dt][i] = 0.f;
        float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
        while (cw.u < pe) {
            issue();
            const int st = done % DEC_STAGES;
            bar_wait(bars + st * 8, (uint32_t)((done / DEC_STAGES) & 1)); /* chunk `done` has landed */
            const uint32_t k_base = ring_s + (uint32_t)(2 * st * CHUNK_BYTES) + (uint32_t)(k_row * 128);
            const uint32_t v_base = ring_s + (uint32_t)((2 * st + 1) * CHUNK_BYTES) + (uint32_t)(v_row * 128);
            if constexpr (MATH) /* false: a bench probe that only streams and merges (bench/decode_probe.cu) */
                persistent_chunk<D, DEC_CN>(k_base, v_base, k_sw, v_sw, qf, o, row_max, row_sum,
                                            (int)(cw.u - (long long)tile * C) * DEC_CN, ke, limit, p.scale_log2);
            __syncwarp(); /* every lane is done with this stage before it is refilled */
            done++;
            cw.u += DEC_WARPS;
            cw.settle<DEC_CN>(p);
        }
        persistent_piece_end<D>(p, m_o, o, row_max, row_sum, tile, pieces == 1 ? -1 : (int)(blk - first), pieces);
        pu = pe;
    }
}

} // namespace

/* Kernels by head dim, keys per warp step and ring stages: d128 with 32-key steps needs 208 KiB of
 * shared memory (one block per multiprocessor). Bench only (bench/decode_splits.py times them
 * beside it): the same with an L2 prefetch hint on every copy (_l2p), with one bulk copy (the TMA
 * unit) per key row on per-stage mbarriers (_bulk, sm_90, D = 128 exactly), and 16-key steps (106 KiB,
 * two blocks per multiprocessor), which measured 1-12% slower than 32-key steps at four of the
 * five d128 decode points (bench/RESULTS.md). */
#define ATTNPROF_DECODE_KERNEL(D, CN, ST, LOAD, SUFFIX)                                            \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1)                                   \
        attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##SUFFIX(DecodeParams p)               \
    {                                                                                              \
        decode_body<D, CN, ST, LOAD>(p);                                                           \
    }
#define ATTNPROF_DECODE_BALANCED_KERNEL(D, CN, ST)                                                 \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1)                                   \
        attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##_bal(DecodeParams p)                 \
    {                                                                                              \
        decode_balanced_body<D, CN, ST, LOAD_CP_ASYNC>(p);                                         \
    }
/* The TMA ring (sm_90; kernels built for older targets compile it empty and are never launched
 * there: flash_decode_prepare refuses them). */
#define ATTNPROF_DECODE_TMA_KERNEL(D, CN, ST)                                                      \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1)                                   \
        attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##_tma(                                \
            const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv, DecodeParams p) \
    {                                                                                              \
        decode_fused_body<D, CN, ST>(p, &tk, &tv);                                                 \
    }
#define ATTNPROF_DECODE_TMA_BALANCED_KERNEL(D, CN, ST)                                             \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1)                                   \
        attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##_tma_bal(                            \
            const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv, DecodeParams p) \
    {                                                                                              \
        decode_balanced_body<D, CN, ST, LOAD_TMA>(p, &tk, &tv);                                    \
    }
/* The persistent grid (TMA, sm_90): equal chunk ranges per block, the ring running on across tiles. */
#define ATTNPROF_DECODE_TMA_PERSISTENT_KERNEL(D, CN, ST)                                           \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1)                                   \
        attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##_tma_pers(                           \
            const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv, DecodeParams p) \
    {                                                                                              \
        decode_persistent_body<D, CN, ST>(p, &tk, &tv);                                            \
    }
ATTNPROF_DECODE_BALANCED_KERNEL(64, 32, 3)
ATTNPROF_DECODE_BALANCED_KERNEL(128, 32, 3)
ATTNPROF_DECODE_KERNEL(64, 32, 3, LOAD_CP_ASYNC, )
ATTNPROF_DECODE_KERNEL(128, 32, 3, LOAD_CP_ASYNC, )
ATTNPROF_DECODE_KERNEL(128, 32, 3, LOAD_CP_ASYNC_L2, _l2p)
ATTNPROF_DECODE_KERNEL(128, 16, 3, LOAD_CP_ASYNC, )
ATTNPROF_DECODE_KERNEL(128, 32, 3, LOAD_BULK_ROWS, _bulk)
ATTNPROF_DECODE_TMA_KERNEL(64, 32, 3)
ATTNPROF_DECODE_TMA_KERNEL(128, 32, 2)
ATTNPROF_DECODE_TMA_BALANCED_KERNEL(64, 32, 3)
ATTNPROF_DECODE_TMA_BALANCED_KERNEL(128, 32, 3)
ATTNPROF_DECODE_TMA_PERSISTENT_KERNEL(64, 32, 3)
ATTNPROF_DECODE_TMA_PERSISTENT_KERNEL(128, 32, 3)

/* One warp per query row: the splits' partial outputs weighed by exp(lse_s - max). Lane s holds
 * split s's weight (32 splits at a time), lane c the row's columns 4c .. 4c + 3 (one float4: the partial
 * outputs start on 16 bytes, decode_lse_floats), and the partial outputs of eight splits are loaded
 * together before they are summed: a handful of L2 round trips a row, where a chain of one per split
 * and column group had cost 5-23 us a forward (bench/results/2026-12-04-decode-persistent.md). */
extern "C" __global__ void __launch_bounds__(128) attnprof_flash_decode_combine_bf16(DecodeParams p)
{
    const int row = blockIdx.x * 4 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= p.total_rows)
        return; /* warp-uniform: a warp is one row */
    const int T = p.total_rows, ld = p.head_dim, S = p.splits, c = lane * 4;
    float mx = -INFINITY;
    for (int s = lane; s < S; s += 32)
        mx = fmaxf(mx, p.part_lse[(size_t)s * T + row]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    float wsum = 0.f;
    for (int s = lane; s < S; s += 32) {
        const float l = p.part_lse[(size_t)s * T + row];
        wsum += l == -INFINITY ? 0.f : __expf(l - mx);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        wsum += __shfl_xor_sync(0xffffffffu, wsum, o);
    const float inv = 1.f / wsum;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int s0 = 0; s0 < S; s0 += 32) { /* warp-uniform trips: every lane takes the shuffles */
        const int sl = s0 + lane, n = min(32, S - s0);
        const float l = sl < S ? p.part_lse[(size_t)sl * T + row] : -INFINITY;
        const float w = l == -INFINITY ? 0.f : __expf(l - mx) * inv;
        for (int j0 = 0; j0 < n; j0 += 8) {
            float4 v[8];
            float wj[8];
#pragma unroll
            for (int j = 0; j < 8; j++) {
                wj[j] = __shfl_sync(0xffffffffu, w, (j0 + j) & 31);
                v[j] = j0 + j < n && c < ld
                           ? *reinterpret_cast<const float4 *>(p.part_o + ((size_t)(s0 + j0 + j) * T + row) * ld + c)
                           : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int j = 0; j < 8; j++) {
                acc[0] += wj[j] * v[j].x;
                acc[1] += wj[j] * v[j].y;
                acc[2] += wj[j] * v[j].z;
                acc[3] += wj[j] * v[j].w;
            }
        }
    }
    if (c < ld) {
        const uint2 packed = make_uint2(pack_bf16x2(acc[0], acc[1]), pack_bf16x2(acc[2], acc[3]));
        *reinterpret_cast<uint2 *>(p.o + (size_t)row * ld + c) = packed;
    }
    if (lane == 0)
        p.lse[row] = mx + logf(wsum);
}

namespace {

typedef void (*decode_kernel_fn)(DecodeParams);
typedef void (*decode_tma_kernel_fn)(const CUtensorMap, const CUtensorMap, DecodeParams);
struct DecodeEntry {
    flash_decode_config cfg;
    decode_kernel_fn fn;        /* NULL for a TMA configuration */
    bool exact_dim;             /* bulk or TMA copies of whole rows: the head dim must be the compiled one */
    decode_tma_kernel_fn tma_fn; /* the TMA ring's kernel, taking K's and V's tensor maps */
};
#define ATTNPROF_DECODE_ENTRY(D, CN, ST, SUFFIX, NOTE)                                             \
    {{"attnprof_flash_decode_bf16_d" #D "_16x" #CN "_w4_s" #ST #SUFFIX, "attnprof_flash_decode_combine_bf16", D,    \
      DEC_ROWS, CN, DEC_WARPS, DEC_THREADS, decode_smem_bytes(D, CN, ST),                          \
      "mma.sync m16n8k16 + ldmatrix + cp.async (sm_80+); split-KV, a " #ST "-stage ring of " #CN "-key steps per warp" NOTE, 0}, \
     attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##SUFFIX, sizeof(#SUFFIX) == sizeof("_bulk")}
#define ATTNPROF_DECODE_BALANCED_ENTRY(D, CN, ST)                                                  \
    {{"attnprof_flash_decode_bf16_d" #D "_16x" #CN "_w4_s" #ST "_bal", "", D, DEC_ROWS, CN, DEC_WARPS, DEC_THREADS, \
      decode_smem_bytes(D, CN, ST),                                                                \
      "mma.sync m16n8k16 + ldmatrix + cp.async (sm_80+); split-KV on a balanced grid (one block per resident slot, " \
      "the keys of all tiles cut evenly), a " #ST "-stage ring of " #CN "-key steps per warp, the split tiles merged " \
      "by their last block (no combine kernel)", 1},                                               \
     attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##_bal, false}
#define ATTNPROF_DECODE_TMA_ENTRY(D, CN, ST)                                                       \
    {{"attnprof_flash_decode_bf16_d" #D "_16x" #CN "_w4_s" #ST "_tma", "attnprof_flash_decode_combine_bf16", D, \
      DEC_ROWS, CN, DEC_WARPS, DEC_THREADS, decode_tma_smem_bytes(D, CN, ST),                      \
      "mma.sync m16n8k16 + ldmatrix + TMA (sm_90); split-KV, a " #ST "-stage ring of " #CN "-key steps per warp, " \
      "each filled by two 128B-swizzled tensor copies a head-dim half, the splits merged by each tile's last " \
      "block where a tile holds at most 8 query rows (else the combine kernel), head dim " #D " only", 0, 8}, \
     nullptr, true, attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##_tma}
#define ATTNPROF_DECODE_TMA_BALANCED_ENTRY(D, CN, ST)                                              \
    {{"attnprof_flash_decode_bf16_d" #D "_16x" #CN "_w4_s" #ST "_tma_bal", "", D, DEC_ROWS, CN, DEC_WARPS,      \
      DEC_THREADS, decode_tma_smem_bytes(D, CN, ST),                                               \
      "mma.sync m16n8k16 + ldmatrix + TMA (sm_90); split-KV on a balanced grid (one block per resident slot, the " \
      "keys of all tiles cut evenly), a " #ST "-stage ring of " #CN "-key steps per warp filled by 128B-swizzled " \
      "tensor copies, the split tiles merged by their last block (no combine kernel), head dim " #D " only", 1}, \
     nullptr, true, attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##_tma_bal}
#define ATTNPROF_DECODE_TMA_PERSISTENT_ENTRY(D, CN, ST)                                            \
    {{"attnprof_flash_decode_bf16_d" #D "_16x" #CN "_w4_s" #ST "_tma_pers", "", D, DEC_ROWS, CN, DEC_WARPS,     \
      DEC_THREADS, decode_pers_smem_bytes(D, CN, ST),                                              \
      "mma.sync m16n8k16 + ldmatrix + TMA (sm_90); split-KV on a persistent grid (one block per resident slot, "  \
      "the " #CN "-key chunks of all tiles cut into equal ranges), a " #ST "-stage ring per warp filled by "        \
      "128B-swizzled tensor copies that runs on across tile boundaries, the cut tiles merged by their last "      \
      "block (no combine kernel), head dim " #D " only", 2},                                       \
     nullptr, true, attnprof_flash_decode_bf16_d##D##_16x##CN##_w4_s##ST##_tma_pers}
/* Ascending head dim; the first entry of each head dim is the one it runs (flash_decode_config_for_dim),
 * the others are there for bench/decode_splits.py to time beside it (the balanced grid too, until a
 * device run has checked and timed it). */
const DecodeEntry decode_entries[] = {
    ATTNPROF_DECODE_ENTRY(64, 32, 3, , ""),
    ATTNPROF_DECODE_BALANCED_ENTRY(64, 32, 3),
    ATTNPROF_DECODE_ENTRY(128, 32, 3, , ""),
    ATTNPROF_DECODE_BALANCED_ENTRY(128, 32, 3),
    ATTNPROF_DECODE_ENTRY(128, 32, 3, _l2p, "; L2::256B prefetch"),
    ATTNPROF_DECODE_ENTRY(128, 16, 3, , ""),
    ATTNPROF_DECODE_ENTRY(128, 32, 3, _bulk, "; bulk copies (TMA) per key row, sm_90, head dim 128 only"),
    ATTNPROF_DECODE_TMA_ENTRY(64, 32, 3),
    ATTNPROF_DECODE_TMA_BALANCED_ENTRY(64, 32, 3),
    ATTNPROF_DECODE_TMA_ENTRY(128, 32, 2),
    ATTNPROF_DECODE_TMA_BALANCED_ENTRY(128, 32, 3),
    ATTNPROF_DECODE_TMA_PERSISTENT_ENTRY(64, 32, 3),
    ATTNPROF_DECODE_TMA_PERSISTENT_ENTRY(128, 32, 3),
};
const int decode_entry_count = (int)(sizeof decode_entries / sizeof decode_entries[0]);

} // namespace

/* The tensor maps' L2 promotion: none. A box row is 128 bytes, what the L2 is asked for; promoting to
 * 256 bytes (the whole key row at D = 128, fetched on the first half's miss) was 6-7% slower at every D = 128
 * decode point on the H200 (bench/results/2026-12-04-decode-ring.md). bench/decode_probe.cu sets the others
 * to time them beside it. */
static CUtensorMapL2promotion decode_l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;

/* K's or V's tensor map, [B * Hkv][seq][D] bf16, one box = cn keys x 64 columns of one head, 128-byte
 * swizzle, keys past seq read as zeros. The maps of the last few buffers are kept per thread: encoding
 * is a host call of microseconds, and a forward reuses its buffers. */
static cudaError_t decode_tensor_map(const void *ptr, int heads_total, int seq, int head_dim, int cn, CUtensorMap *out)
{
    struct Slot {
        const void *ptr;
        int heads_total, seq, head_dim, cn;
        CUtensorMapL2promotion promotion;
        CUtensorMap map;
    };
    enum { SLOTS = 8 };
    static thread_local Slot cache[SLOTS];
    static thread_local int used = 0, next = 0;
    for (int i = 0; i < used; i++)
        if (cache[i].ptr == ptr && cache[i].heads_total == heads_total && cache[i].seq == seq &&
            cache[i].head_dim == head_dim && cache[i].cn == cn && cache[i].promotion == decode_l2_promotion) {
            *out = cache[i].map;
            return cudaSuccess;
        }
    const encode_tiled_fn encode = tensor_map_encoder();
    if (!encode)
        return cudaErrorNotSupported;
    const cuuint64_t dims[3] = {(cuuint64_t)head_dim, (cuuint64_t)seq, (cuuint64_t)heads_total};
    const cuuint64_t strides[2] = {(cuuint64_t)head_dim * 2, (cuuint64_t)seq * head_dim * 2};
    const cuuint32_t box[3] = {64, (cuuint32_t)cn, 1}, elem_strides[3] = {1, 1, 1};
    CUtensorMap map;
    if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void *>(ptr), dims, strides, box, elem_strides,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, decode_l2_promotion,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return cudaErrorInvalidValue;
    const int slot = used < SLOTS ? used++ : (next++ % SLOTS);
    cache[slot] = Slot{ptr, heads_total, seq, head_dim, cn, decode_l2_promotion, map};
    *out = map;
    return cudaSuccess;
}

/* One launch of a configuration's kernel: the TMA ones take K's and V's tensor maps first. */
static cudaError_t decode_launch(const DecodeEntry &e, dim3 grid, const DecodeParams &p, int batch, cudaStream_t stream)
{
    if (!e.tma_fn) {
        e.fn<<<grid, e.cfg.threads, e.cfg.smem_bytes, stream>>>(p);
        return cudaGetLastError();
    }
    CUtensorMap tk, tv;
    cudaError_t rc = decode_tensor_map(p.k, batch * p.kv_heads, p.seq, p.head_dim, e.cfg.chunk_keys, &tk);
    if (rc == cudaSuccess)
        rc = decode_tensor_map(p.v, batch * p.kv_heads, p.seq, p.head_dim, e.cfg.chunk_keys, &tv);
    if (rc != cudaSuccess)
        return rc;
    e.tma_fn<<<grid, e.cfg.threads, e.cfg.smem_bytes, stream>>>(tk, tv, p);
    return cudaGetLastError();
}

extern "C" int flash_decode_config_count(void) { return decode_entry_count; }

extern "C" const flash_decode_config *flash_decode_config_at(int i)
{
    return i >= 0 && i < decode_entry_count ? &decode_entries[i].cfg : NULL;
}

extern "C" int flash_decode_config_for_dim(int head_dim)
{
    if (head_dim < 8 || head_dim % 8 != 0)
        return -1;
    for (int i = 0; i < decode_entry_count; i++) /* ascending D, the one to run first */
        if (decode_entries[i].cfg.head_dim >= head_dim)
            return i;
    return -1;
}

extern "C" int flash_decode_config_for_device(int head_dim, int cc_major)
{
    const int portable = flash_decode_config_for_dim(head_dim);
    if (cc_major != 9)
        return portable;
    for (int i = 0; i < decode_entry_count; i++)
        if (decode_entries[i].tma_fn && !decode_entries[i].cfg.balanced && decode_entries[i].cfg.head_dim == head_dim)
            return i;
    return portable;
}

extern "C" int flash_decode_balanced_twin(int config)
{
    if (config < 0 || config >= decode_entry_count)
        return -1;
    const DecodeEntry &e = decode_entries[config];
    for (int i = 0; i < decode_entry_count; i++)
        if (decode_entries[i].cfg.balanced == 1 && decode_entries[i].cfg.head_dim == e.cfg.head_dim &&
            (decode_entries[i].tma_fn != nullptr) == (e.tma_fn != nullptr))
            return i;
    return -1;
}

extern "C" int flash_decode_tma_ring(int config)
{
    return config >= 0 && config < decode_entry_count && decode_entries[config].tma_fn != nullptr;
}

extern "C" cudaError_t flash_decode_prepare(int config)
{
    if (config < 0 || config >= decode_entry_count)
        return cudaErrorInvalidValue;
    const DecodeEntry &e = decode_entries[config];
    int dev = 0, major = 0;
    if (e.exact_dim && (cudaGetDevice(&dev) != cudaSuccess ||
                        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
                        major < 9))
        return cudaErrorNotSupported; /* bulk copies and mbarrier waits: sm_90 and later */
    if (e.tma_fn && !tensor_map_encoder())
        return cudaErrorNotSupported;
    return e.tma_fn ? cudaFuncSetAttribute(e.tma_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)e.cfg.smem_bytes)
                    : cudaFuncSetAttribute(e.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)e.cfg.smem_bytes);
}

extern "C" cudaError_t flash_decode_blocks_per_sm(int config, int *blocks)
{
    if (config < 0 || config >= decode_entry_count || !blocks)
        return cudaErrorInvalidValue;
    const DecodeEntry &e = decode_entries[config];
    return e.tma_fn ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, e.tma_fn, e.cfg.threads, e.cfg.smem_bytes)
                    : cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, e.fn, e.cfg.threads, e.cfg.smem_bytes);
}

extern "C" int flash_decode_row_tiles(int config, int heads, int kv_heads, int q_seq)
{
    if (config < 0 || config >= decode_entry_count || kv_heads < 1 || heads % kv_heads != 0 || q_seq < 1)
        return -1;
    const long long rows = (long long)(heads / kv_heads) * q_seq;
    return (int)((rows + DEC_ROWS - 1) / DEC_ROWS);
}

/* The splits' (or pieces') log-sum-exps in the workspace, rounded up to four floats so that the partial outputs
 * after them start on 16 bytes. */
static size_t decode_lse_floats(int pieces, long long rows) { return ((size_t)pieces * rows + 3) & ~(size_t)3; }

extern "C" size_t flash_decode_workspace_bytes(int batch, int heads, int q_seq, int head_dim, int splits)
{
    if (splits <= 1)
        return 0;
    const size_t rows = (size_t)batch * heads * q_seq;
    /* After the partials, the fused configurations' arrival counters: one per tile, and a tile holds a row
     * or more, so one per row is enough. */
    return (decode_lse_floats(splits, (long long)rows) + (size_t)splits * rows * head_dim) * sizeof(float) +
           rows * sizeof(unsigned);
}

/* The merge's rule for an entry: past one split, a key/value head's query rows at most merge_rows_max. */
static bool entry_merges(const DecodeEntry &e, int heads, int kv_heads, int q_seq, int splits)
{
    return splits > 1 && e.cfg.merge_rows_max > 0 && kv_heads > 0 && heads % kv_heads == 0 &&
           (long long)(heads / kv_heads) * q_seq <= e.cfg.merge_rows_max;
}

extern "C" int flash_decode_merges_in_kernel(int config, int heads, int kv_heads, int q_seq, int splits)
{
    return config >= 0 && config < decode_entry_count &&
           entry_merges(decode_entries[config], heads, kv_heads, q_seq, splits);
}

/* The balanced grid's rounds per tile (warps x chunk keys each; the persistent grid's: chunks of chunk
 * keys) and the most blocks one tile is
 * cut over: tiles whose rounds straddle a boundary between blocks' ranges. */
static long long balanced_units(const DecodeEntry &e, int seq)
{
    const long long round = (long long)e.cfg.chunk_keys * (e.cfg.balanced == 2 ? 1 : e.cfg.warps);
    return (seq + round - 1) / round;
}

static int balanced_max_pieces(long long tiles, long long units, long long grid)
{
    const long long W = tiles * units;
    if (grid <= 0 || W <= 0)
        return 0;
    long long most = 1;
    /* A tile spans at most ceil(units * grid / W) + 1 ranges; walk the tiles when few, else bound. */
    if (tiles <= 1 << 20) {
        for (long long t = 0; t < tiles; t++) {
            const long long a = ((t * units + 1) * grid - 1) / W, b = (((t + 1) * units) * grid - 1) / W;
            if (b - a + 1 > most)
                most = b - a + 1;
        }
    } else {
        most = (units * grid + W - 1) / W + 1;
    }
    return (int)most;
}

extern "C" int flash_decode_balanced(int config)
{
    return config >= 0 && config < decode_entry_count && decode_entries[config].cfg.balanced;
}

extern "C" int flash_decode_balanced_grid(int config, int batch, int heads, int kv_heads, int q_seq, int seq,
                                          int slots)
{
    const int rt = flash_decode_row_tiles(config, heads, kv_heads, q_seq);
    if (!flash_decode_balanced(config) || rt < 1 || batch < 1 || seq < 1 || slots < 1)
        return -1;
    const long long W = (long long)batch * kv_heads * rt * balanced_units(decode_entries[config], seq);
    return (int)(W < slots ? W : slots);
}

extern "C" int flash_decode_balanced_pieces(int config, int batch, int heads, int kv_heads, int q_seq, int seq,
                                            int grid)
{
    const int rt = flash_decode_row_tiles(config, heads, kv_heads, q_seq);
    if (!flash_decode_balanced(config) || rt < 1 || batch < 1 || seq < 1 || grid < 1)
        return -1;
    return balanced_max_pieces((long long)batch * kv_heads * rt, balanced_units(decode_entries[config], seq), grid);
}

extern "C" size_t flash_decode_balanced_workspace_bytes(int config, int batch, int heads, int kv_heads, int q_seq,
                                                        int seq, int head_dim, int grid)
{
    const int pieces = flash_decode_balanced_pieces(config, batch, heads, kv_heads, q_seq, seq, grid);
    if (pieces < 1)
        return 0;
    const size_t tiles = (size_t)batch * kv_heads * flash_decode_row_tiles(config, heads, kv_heads, q_seq);
    const size_t rows = (size_t)batch * heads * q_seq;
    return (pieces > 1 ? (decode_lse_floats(pieces, (long long)rows) + (size_t)pieces * rows * head_dim) * sizeof(float)
                       : 0) +
           tiles * sizeof(unsigned);
}

static void fill_params(DecodeParams &p, const void *q, const void *k, const void *v, void *out, float *lse, int batch,
                        int heads, int kv_heads, int q_seq, int seq, int head_dim, int row_tiles, long long total_rows)
{
    memset(&p, 0, sizeof p);
    p.q = static_cast<const bf16 *>(q);
    p.k = static_cast<const bf16 *>(k);
    p.v = static_cast<const bf16 *>(v);
    p.o = static_cast<bf16 *>(out);
    p.lse = lse;
    p.q_seq = q_seq;
    p.seq = seq;
    p.heads = heads;
    p.kv_heads = kv_heads;
    p.group = heads / kv_heads;
    p.head_dim = head_dim;
    p.rows = p.group * q_seq;
    p.row_tiles = row_tiles;
    p.total_rows = (int)total_rows;
    p.scale_log2 = (float)(1.4426950408889634 / sqrt((double)head_dim));
    (void)batch;
}

/* launch_flash_decode_balanced's body for an entry (bench/decode_probe.cu launches its own through it). */
static cudaError_t launch_balanced_entry(const DecodeEntry &e, const void *q, const void *k, const void *v, void *out,
                                         float *lse, void *workspace, int batch, int heads, int kv_heads, int q_seq,
                                         int seq, int head_dim, int grid, cudaStream_t stream)
{
    if (!e.cfg.balanced || batch < 1 || heads < 1 || kv_heads < 1 || heads % kv_heads != 0 || q_seq < 1 || seq < 1 ||
        q_seq > seq || !lse || !workspace || grid < 1)
        return cudaErrorInvalidValue;
    const int config = 0; /* flash_decode_row_tiles does not depend on the configuration */
    if (head_dim < 8 || head_dim % 8 != 0 || head_dim > e.cfg.head_dim || (e.exact_dim && head_dim != e.cfg.head_dim))
        return cudaErrorInvalidValue;
    const int row_tiles = flash_decode_row_tiles(config, heads, kv_heads, q_seq);
    const long long tiles = (long long)batch * kv_heads * row_tiles, units = balanced_units(e, seq);
    const long long total_rows = (long long)batch * heads * q_seq;
    if (tiles > 0x7fffffffLL || total_rows > 0x7fffffffLL || grid > tiles * units || units * e.cfg.chunk_keys *
        e.cfg.warps > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    const int pieces = balanced_max_pieces(tiles, units, grid);
    DecodeParams p;
    fill_params(p, q, k, v, out, lse, batch, heads, kv_heads, q_seq, seq, head_dim, row_tiles, total_rows);
    p.splits = pieces;
    p.tiles = (int)tiles;
    p.units_per_tile = (int)units;
    float *ws = static_cast<float *>(workspace);
    if (pieces > 1) {
        p.part_lse = ws;
        p.part_o = ws + decode_lse_floats(pieces, total_rows); /* 16-byte aligned: the merge's float4 loads */
        ws = p.part_o + (size_t)pieces * total_rows * head_dim;
    }
    p.counters = reinterpret_cast<unsigned *>(ws);
    return decode_launch(e, dim3((unsigned)grid), p, batch, stream);
}

extern "C" cudaError_t launch_flash_decode_balanced(int config, const void *q, const void *k, const void *v, void *out,
                                                    float *lse, void *workspace, int batch, int heads, int kv_heads,
                                                    int q_seq, int seq, int head_dim, int grid, cudaStream_t stream)
{
    if (!flash_decode_balanced(config))
        return cudaErrorInvalidValue;
    return launch_balanced_entry(decode_entries[config], q, k, v, out, lse, workspace, batch, heads, kv_heads, q_seq,
                                 seq, head_dim, grid, stream);
}

/* launch_flash_decode's body for an entry (bench/decode_probe.cu launches its own rings through it). */
static cudaError_t launch_fixed_entry(const DecodeEntry &e, const void *q, const void *k, const void *v, void *out,
                                      float *lse, void *workspace, int batch, int heads, int kv_heads, int q_seq,
                                      int seq, int head_dim, int splits, int keys_per_split, cudaStream_t stream)
{
    if (batch < 1 || heads < 1 || kv_heads < 1 || heads % kv_heads != 0 || q_seq < 1 || seq < 1 || q_seq > seq ||
        !lse || splits < 1 || keys_per_split < 16 || keys_per_split % 16 != 0 ||
        (long long)(splits - 1) * keys_per_split >= seq || (long long)splits * keys_per_split < seq ||
        (splits > 1 && !workspace))
        return cudaErrorInvalidValue;
    if (e.cfg.balanced)
        return cudaErrorInvalidValue; /* launch_flash_decode_balanced */
    if (head_dim < 8 || head_dim % 8 != 0 || head_dim > e.cfg.head_dim || keys_per_split % e.cfg.chunk_keys != 0 ||
        (e.exact_dim && head_dim != e.cfg.head_dim))
        return cudaErrorInvalidValue;
    const int row_tiles = flash_decode_row_tiles(0, heads, kv_heads, q_seq); /* the same for every configuration */
    const long long blocks = (long long)batch * kv_heads * row_tiles;
    const long long total_rows = (long long)batch * heads * q_seq;
    if (blocks > 0x7fffffffLL || splits > 65535 || total_rows > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    DecodeParams p;
    fill_params(p, q, k, v, out, lse, batch, heads, kv_heads, q_seq, seq, head_dim, row_tiles, total_rows);
    p.part_lse = static_cast<float *>(workspace);
    p.part_o = splits > 1 ? p.part_lse + decode_lse_floats(splits, total_rows) : NULL;
    p.splits = splits;
    p.keys_per_split = keys_per_split;
    const bool fused = entry_merges(e, heads, kv_heads, q_seq, splits); /* the last split of a tile merges it */
    if (fused)
        p.counters = reinterpret_cast<unsigned *>(p.part_o + (size_t)splits * total_rows * head_dim);
    cudaError_t rc = decode_launch(e, dim3((unsigned)blocks, (unsigned)splits), p, batch, stream);
    if (rc != cudaSuccess || splits == 1 || fused)
        return rc;
    attnprof_flash_decode_combine_bf16<<<(unsigned)((total_rows + 3) / 4), 128, 0, stream>>>(p);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_flash_decode(int config, const void *q, const void *k, const void *v, void *out,
                                           float *lse, void *workspace, int batch, int heads, int kv_heads, int q_seq,
                                           int seq, int head_dim, int splits, int keys_per_split, cudaStream_t stream)
{
    if (config < 0 || config >= decode_entry_count)
        return cudaErrorInvalidValue;
    return launch_fixed_entry(decode_entries[config], q, k, v, out, lse, workspace, batch, heads, kv_heads, q_seq,
                              seq, head_dim, splits, keys_per_split, stream);
}
