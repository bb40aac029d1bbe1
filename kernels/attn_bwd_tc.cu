// Tensor-core fused backward (attn_bwd_tc.h): FlashAttention-2's backward on mma.sync.
//
// Two main-kernel bodies. The defaults run bwd_sp_body (FA2's layout, shared_p; described
// there): 8 warps on 128 keys, P^T and dS^T shared through shared memory. The first body,
// bwd_tc_body, below:
//
// Main kernel, one block per (key tile, head). Each warp owns 16 keys of the tile, so it
// computes the transposed score tile S^T = K_w Q^T (its keys are the MMA rows) and keeps dK and
// dV of its keys in registers for the whole kernel: no reduction between warps for them. For
// each query tile (double-buffered through cp.async):
//   S^T = K Q^T, P^T = exp2(S^T * scale*log2e - lse_i*log2e)        (P recomputed, never stored)
//   dP^T = V dO^T, dS^T = P^T o (dP^T - delta_i)
//   dV += P^T dO, dK += dS^T Q    (P^T and dS^T go back in as A operands straight from the
//                                  accumulators: the C layout of two 8-wide tiles is the A layout
//                                  of one 16-deep k-step)
//   dS^T to shared memory; dQ_tile += dS K, split over the warps by rows and columns, added to an
//   FP32 accumulator in global memory with atomics (float2 atomics on sm_90).
// Causal: a key tile starts at the first query tile that sees it; only tiles crossing the
// diagonal are masked. Blocks are numbered heavy first (key tile 0 sees every query), across
// all heads or in L2-sized head groups (block_tile).
//
// Shared-memory rows are padded by 16 bytes (as in flash_fwd.cu): consecutive rows start an odd
// number of 16-byte units apart, so the 8 rows of an ldmatrix phase hit 8 bank groups, in both
// the plain and the transposed reads.
//
// The delta pre-pass also zeroes the dQ accumulator, and a last pass writes dQ = acc * scale in
// bf16: three kernels per backward. The lse recompute (efficient's forward keeps none) is a
// forward without the P V product: S = Q K^T per key tile, online max and sum.
#include "attn_bwd_tc.h"
#include "attn_bwd_rows.cuh"

#include "flash_tile_order.h"
#include "ptx_bf16.cuh"
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

typedef __nv_bfloat16 bf16;

struct BwdTcParams {
    const bf16 *q, *k, *v, *dout;
    const float *lse, *delta;
    float *dq_acc;
    bf16 *dk, *dv;
    int seq, bh;
    float scale, scale_log2;
    int grouped;            // block order: see block_tile
    flash_tile_order order; // its head groups (grouped only)
};

namespace {

using namespace ptx;

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// ROWS x D rows [row0, row0 + ROWS) of a head (row stride D) into padded shared memory, rows at
// or past seq zero-filled (their source address clamped to the last row). A tile wholly inside
// takes the branch without the clamps (the backward's inner loop issues it every step).
template <int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_rows(bf16 *dst, const bf16 *head, int row0, int seq, int tid)
{
    constexpr int CPR = D / 8, LD = D + 8, TOTAL = ROWS * CPR;
    static_assert(TOTAL % THREADS == 0, "every thread copies the same number of chunks");
    if (row0 + ROWS <= seq) {
        const bf16 *src = head + (size_t)row0 * D + tid % CPR * 8 + tid / CPR * D;
        const uint32_t d = smem_addr(dst + tid / CPR * LD + tid % CPR * 8);
#pragma unroll
        for (int k = 0; k < TOTAL / THREADS; k++)
            cp_async_16(d + k * (THREADS / CPR) * LD * 2, src + k * (THREADS / CPR) * D, true);
        return;
    }
#pragma unroll
    for (int c = tid; c < TOTAL; c += THREADS) {
        const int r = c / CPR, ch = c % CPR, row = row0 + r;
        cp_async_16(smem_addr(dst + r * LD + ch * 8), head + (size_t)min(row, seq - 1) * D + ch * 8, row < seq);
    }
}

// Block -> (key tile, head). Not grouped: key tile by key tile across all heads (key tile 0, the
// heaviest under the causal mask, first), so the blocks running at once read as many heads'
// Q and dO and add to as many dQ accumulators (ncu, 4096/128: L2 hit rate 42%, DRAM 42% busy).
// Grouped: the same order inside groups of heads that fit half the L2 (flash_tile_order.h,
// level = key tile), as FA2's grid (key tile fastest) keeps one head's blocks together.
__device__ __forceinline__ void block_tile(const BwdTcParams &p, int &key_tile, int &bh)
{
    if (p.grouped) {
        flash_tile_order_at(&p.order, (int)blockIdx.x, 0, &bh, &key_tile);
    } else {
        key_tile = (int)blockIdx.x / p.bh;
        bh = (int)blockIdx.x % p.bh;
    }
}

template <int D, int WARPS, int BM> struct BwdTile {
    static constexpr int BN = WARPS * 16;      // keys per block
    static constexpr int THREADS = WARPS * 32;
    static constexpr int LD = D + 8;           // K, V, Q, dO row stride (elements)
    static constexpr int LDS = BM + 8;         // dS^T row stride
    static constexpr int NQ = BM / 8;          // 8-query tiles of S^T
    static constexpr int KD = D / 16;          // k-steps over the head dim
    static constexpr int DT = D / 8;           // 8-wide tiles of dK, dV
    static constexpr int KQ = BM / 16;         // k-steps over the queries
    static constexpr int RB = BM / 16;         // dQ: 16-row blocks of the query tile
    static constexpr int CG = WARPS / RB;      // dQ: column groups
    static constexpr int DW = D / CG;          // dQ: columns per warp
    static constexpr size_t SMEM = sizeof(bf16) * ((size_t)2 * BN * LD + 4 * (size_t)BM * LD + (size_t)BN * LDS) +
                                   sizeof(float) * 4 * BM;
    static constexpr int CW = DW % 32 == 0 ? 32 : 16; // dQ: columns per accumulator chunk
    static_assert(WARPS % RB == 0 && DW % 16 == 0, "dQ splits into whole 16 x 16 pieces per warp");
    static_assert(NQ % 2 == 0 && DT % 2 == 0, "ldmatrix.x4 loads two 8-wide tiles");
};

template <int D, int WARPS, int BM, bool CAUSAL>
__device__ __forceinline__ void bwd_tc_body(const BwdTcParams &p)
{
    typedef BwdTile<D, WARPS, BM> T;
    constexpr int BN = T::BN, THREADS = T::THREADS, LD = T::LD, LDS = T::LDS, NQ = T::NQ, KD = T::KD,
                  DT = T::DT, KQ = T::KQ, RB = T::RB, DW = T::DW,
                  CW = T::CW, CN = CW / 8;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    bf16 *sK = reinterpret_cast<bf16 *>(smem_raw);
    bf16 *sV = sK + BN * LD;
    bf16 *sQ = sV + BN * LD;     // two buffers of BM x LD
    bf16 *sdO = sQ + 2 * BM * LD; // two buffers
    bf16 *sdS = sdO + 2 * BM * LD;
    float *sL = reinterpret_cast<float *>(sdS + BN * LDS); // two buffers of BM: lse * log2e
    float *sDl = sL + 2 * BM;                              // two buffers of BM: delta

    const int S = p.seq;
    int key_tile, bh;
    block_tile(p, key_tile, bh);
    const int j0 = key_tile * BN;
    const size_t off = (size_t)bh * S * D;
    const bf16 *Q = p.q + off, *K = p.k + off, *V = p.v + off, *dO = p.dout + off;
    const float *L = p.lse + (size_t)bh * S, *Dl = p.delta + (size_t)bh * S;
    float *dQa = p.dq_acc + off;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    const int first = CAUSAL ? j0 / BM : 0, n_qt = (S + BM - 1) / BM;

    auto load_q_tile = [&](int t, int buf) {
        load_rows<D, BM, THREADS>(sQ + buf * BM * LD, Q, t * BM, S, tid);
        load_rows<D, BM, THREADS>(sdO + buf * BM * LD, dO, t * BM, S, tid);
        for (int r = tid; r < BM; r += THREADS) {
            const int row = t * BM + r;
            // A row past S gets lse = +inf: its P is exactly 0, so is its dS.
            sL[buf * BM + r] = row < S ? L[row] * kLog2e : INFINITY;
            sDl[buf * BM + r] = row < S ? Dl[row] : 0.f;
        }
    };
    load_rows<D, BN, THREADS>(sK, K, j0, S, tid);
    load_rows<D, BN, THREADS>(sV, V, j0, S, tid);
    if (first < n_qt)
        load_q_tile(first, 0);
    cp_async_commit();

    // Per-lane ldmatrix byte offsets.
    // A, plain (row-major [m][k]): lanes 0-15 rows 0-15 at k 0, lanes 16-31 the same rows at k 8.
    const uint32_t a_lane = (uint32_t)(((lane & 15) * LD + ((lane >> 4) << 3)) * 2);
    // B, plain (stored [n][k]): matrix m = lane/8 covers n +8*(m/2), k +8*(m%2).
    const uint32_t bn_lane = (uint32_t)(((((lane >> 4) << 3) + (lane & 7)) * LD + (((lane >> 3) & 1) << 3)) * 2);
    // B, transposed (stored [k][n]): matrix m covers k +8*(m%2), n +8*(m/2).
    const uint32_t bt_lane = (uint32_t)(((((lane >> 3) & 1) << 3) + (lane & 7)) * LD * 2 + ((lane >> 4) << 4));
    // A, transposed (stored [k][m], row stride LDS): matrix m covers m +8*(m%2), k +8*(m/2).
    const uint32_t at_lane = (uint32_t)((((lane >> 4) << 3) + (lane & 7)) * LDS * 2 + (((lane >> 3) & 1) << 4));

    const uint32_t k_s = smem_addr(sK) + warp * 16 * LD * 2, v_s = smem_addr(sV) + warp * 16 * LD * 2;
    const int key_r0 = j0 + warp * 16 + g; // this lane's key rows: key_r0, key_r0 + 8

    float dk[DT][4], dv[DT][4];
#pragma unroll
    for (int d = 0; d < DT; d++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            dk[d][i] = dv[d][i] = 0.f;

    // dQ: this warp's 16 query rows and DW columns of each query tile.
    const int dq_rb = warp % RB, dq_c0 = (warp / RB) * DW;

#pragma unroll 1
    for (int t = first; t < n_qt; t++) {
        const int buf = (t - first) & 1, i0 = t * BM;
        if (t + 1 < n_qt)
            load_q_tile(t + 1, buf ^ 1); // buffer buf^1 was last read before the previous barrier
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        const uint32_t q_s = smem_addr(sQ + buf * BM * LD), do_s = smem_addr(sdO + buf * BM * LD);
        const float *lt = sL + buf * BM, *dlt = sDl + buf * BM;

        float s[NQ][4], dp[NQ][4];
#pragma unroll
        for (int n = 0; n < NQ; n++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                s[n][i] = dp[n][i] = 0.f;
        // S^T = K_w Q^T and dP^T = V_w dO^T
#pragma unroll
        for (int kk = 0; kk < KD; kk++) {
            uint32_t a[4], b[4];
            ldmatrix_x4(k_s + a_lane + kk * 32, a[0], a[1], a[2], a[3]);
#pragma unroll
            for (int np = 0; np < NQ / 2; np++) {
                ldmatrix_x4(q_s + bn_lane + np * 16 * LD * 2 + kk * 32, b[0], b[1], b[2], b[3]);
                mma_bf16_16816(s[2 * np], a, b[0], b[1]);
                mma_bf16_16816(s[2 * np + 1], a, b[2], b[3]);
            }
            ldmatrix_x4(v_s + a_lane + kk * 32, a[0], a[1], a[2], a[3]);
#pragma unroll
            for (int np = 0; np < NQ / 2; np++) {
                ldmatrix_x4(do_s + bn_lane + np * 16 * LD * 2 + kk * 32, b[0], b[1], b[2], b[3]);
                mma_bf16_16816(dp[2 * np], a, b[0], b[1]);
                mma_bf16_16816(dp[2 * np + 1], a, b[2], b[3]);
            }
        }
        // P^T and dS^T, packed as A fragments (k-step kk = queries 16kk..16kk+15).
        const bool masked = CAUSAL && key_r0 - g + 15 > i0; // some key of this warp after some query
        uint32_t pa[KQ][4], dsa[KQ][4];
#pragma unroll
        for (int n = 0; n < NQ; n++) {
            float pv[4], ds[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int col = n * 8 + 2 * t4 + (i & 1);
                float x = fast_exp2(fmaf(s[n][i], p.scale_log2, -lt[col]));
                if (masked && key_r0 + ((i >> 1) << 3) > i0 + col)
                    x = 0.f;
                pv[i] = x;
                ds[i] = x * (dp[n][i] - dlt[col]);
            }
            pa[n >> 1][(n & 1) * 2 + 0] = pack_bf16x2(pv[0], pv[1]);
            pa[n >> 1][(n & 1) * 2 + 1] = pack_bf16x2(pv[2], pv[3]);
            dsa[n >> 1][(n & 1) * 2 + 0] = pack_bf16x2(ds[0], ds[1]);
            dsa[n >> 1][(n & 1) * 2 + 1] = pack_bf16x2(ds[2], ds[3]);
        }
        // dS^T to shared memory for the dQ product (rows: keys of this warp).
#pragma unroll
        for (int n = 0; n < NQ; n++) {
            bf16 *row = sdS + (warp * 16 + g) * LDS + n * 8 + 2 * t4;
            *reinterpret_cast<uint32_t *>(row) = dsa[n >> 1][(n & 1) * 2 + 0];
            *reinterpret_cast<uint32_t *>(row + 8 * LDS) = dsa[n >> 1][(n & 1) * 2 + 1];
        }
        // dV += P^T dO, dK += dS^T Q
#pragma unroll
        for (int kk = 0; kk < KQ; kk++)
#pragma unroll
            for (int dp2 = 0; dp2 < DT / 2; dp2++) {
                uint32_t b[4];
                ldmatrix_x4_trans(do_s + bt_lane + kk * 16 * LD * 2 + dp2 * 32, b[0], b[1], b[2], b[3]);
                mma_bf16_16816(dv[2 * dp2], pa[kk], b[0], b[1]);
                mma_bf16_16816(dv[2 * dp2 + 1], pa[kk], b[2], b[3]);
                ldmatrix_x4_trans(q_s + bt_lane + kk * 16 * LD * 2 + dp2 * 32, b[0], b[1], b[2], b[3]);
                mma_bf16_16816(dk[2 * dp2], dsa[kk], b[0], b[1]);
                mma_bf16_16816(dk[2 * dp2 + 1], dsa[kk], b[2], b[3]);
            }
        __syncthreads(); // dS^T complete
        // dQ rows [i0 + 16 dq_rb, +16) x columns [dq_c0, dq_c0 + DW) += dS K, CW columns at a time.
        uint32_t af[BN / 16][4];
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++)
            ldmatrix_x4_trans(smem_addr(sdS) + at_lane + kk * 16 * LDS * 2 + dq_rb * 32, af[kk][0], af[kk][1],
                              af[kk][2], af[kk][3]);
        const int qr = i0 + dq_rb * 16 + g;
#pragma unroll
        for (int c = 0; c < DW; c += CW) {
            float acc[CN][4];
#pragma unroll
            for (int n = 0; n < CN; n++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    acc[n][i] = 0.f;
#pragma unroll
            for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
                for (int h = 0; h < CN / 2; h++) {
                    uint32_t b[4];
                    ldmatrix_x4_trans(smem_addr(sK) + bt_lane + kk * 16 * LD * 2 + (dq_c0 + c + h * 16) * 2, b[0],
                                      b[1], b[2], b[3]);
                    mma_bf16_16816(acc[2 * h], af[kk], b[0], b[1]);
                    mma_bf16_16816(acc[2 * h + 1], af[kk], b[2], b[3]);
                }
#pragma unroll
            for (int n = 0; n < CN; n++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int row = qr + 8 * h;
                    if (row < S) {
                        float *dst = dQa + (size_t)row * D + dq_c0 + c + n * 8 + 2 * t4;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
                        atomicAdd(reinterpret_cast<float2 *>(dst), make_float2(acc[n][2 * h], acc[n][2 * h + 1]));
#else
                        atomicAdd(dst, acc[n][2 * h]);
                        atomicAdd(dst + 1, acc[n][2 * h + 1]);
#endif
                    }
                }
        }
    }
    cp_async_wait<0>();

    // dK (scaled) and dV of this warp's keys.
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int row = key_r0 + 8 * h;
        if (row >= S)
            continue;
#pragma unroll
        for (int d = 0; d < DT; d++) {
            const size_t e = off + (size_t)row * D + d * 8 + 2 * t4;
            *reinterpret_cast<uint32_t *>(p.dk + e) = pack_bf16x2(dk[d][2 * h] * p.scale, dk[d][2 * h + 1] * p.scale);
            *reinterpret_cast<uint32_t *>(p.dv + e) = pack_bf16x2(dv[d][2 * h], dv[d][2 * h + 1]);
        }
    }
}


// FA2's layout (shared_p): 8 warps, 128 keys a block, BM queries a step (64 at D 128 as FA2's
// Br=64/Bc=128; 128 at D 64 as FA2's 128/128). Warp w has keys kw = w % 4 (32 of them) and half
// hf = w / 4: the queries hf BM/2.. of S^T and dP^T, the columns hf D/2.. of dK and dV, the query
// rows hf BM/2.. of dQ (columns kw D/4..). P^T and dS^T go through shared memory; with OWN a warp
// keeps those of its own BM/2 queries in registers and reads only its partner's half back. Per
// step at D 128 a warp issues 136 ldmatrix.x4 against the 16-key body's 184 (ncu: that body's
// shared-memory pipe is its busiest, short-scoreboard stalls a third of its cycles). STM: P^T and
// dS^T stored by stmatrix.x4 (sm_90), 8 instructions a warp and step in place of 32 32-bit stores.
template <int D, int BM_> struct SpTile {
    static constexpr int THREADS = 256, BN = 128, BM = BM_; // 8 warps
    static constexpr int LD = D + 8;   // K, V, Q, dO row stride (elements)
    static constexpr int LDS = BM + 8; // P^T, dS^T row stride
    static constexpr int KD = D / 16;  // k-steps over the head dim
    static constexpr int NQ = BM / 16; // 8-query tiles of a warp's S^T
    static constexpr int KQ = BM / 16; // k-steps over the step's queries (half of them a warp's own)
    static constexpr int MQ = BM / 32; // 16-row tiles of a warp's dQ
    static constexpr int DH = D / 2;   // dK, dV columns a warp
    static constexpr int DHT = DH / 8;
    static constexpr int DQC = D / 4;  // dQ columns a warp
    static constexpr int DQT = DQC / 8;
    static constexpr size_t SMEM =
        sizeof(bf16) * ((size_t)2 * BN * LD + 4 * (size_t)BM * LD + 2 * (size_t)BN * LDS) + sizeof(float) * 4 * BM;
    static_assert(NQ % 2 == 0 && DHT % 2 == 0 && DQT % 2 == 0, "ldmatrix.x4 loads two 8-wide tiles");
};

// S^T (s) and dP^T (dp) of the warp's 32 keys x BM/2 queries: A = K, V rows from k_s, v_s; B = Q,
// dO rows from q_s, do_s (byte addresses of the warp's first rows).
template <class T>
__device__ __forceinline__ void sp_scores(uint32_t k_s, uint32_t v_s, uint32_t q_s, uint32_t do_s, uint32_t a_lane,
                                          uint32_t bn_lane, float (&s)[2][T::NQ][4], float (&dp)[2][T::NQ][4])
{
    constexpr int LD = T::LD;
#pragma unroll
    for (int m = 0; m < 2; m++)
#pragma unroll
        for (int n = 0; n < T::NQ; n++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                s[m][n][i] = dp[m][n][i] = 0.f;
#pragma unroll
    for (int kk = 0; kk < T::KD; kk++) {
        uint32_t a0[4], a1[4], b[4];
        ldmatrix_x4(k_s + a_lane + kk * 32, a0[0], a0[1], a0[2], a0[3]);
        ldmatrix_x4(k_s + 16 * LD * 2 + a_lane + kk * 32, a1[0], a1[1], a1[2], a1[3]);
#pragma unroll
        for (int np = 0; np < T::NQ / 2; np++) {
            ldmatrix_x4(q_s + bn_lane + np * 16 * LD * 2 + kk * 32, b[0], b[1], b[2], b[3]);
            mma_bf16_16816(s[0][2 * np], a0, b[0], b[1]);
            mma_bf16_16816(s[0][2 * np + 1], a0, b[2], b[3]);
            mma_bf16_16816(s[1][2 * np], a1, b[0], b[1]);
            mma_bf16_16816(s[1][2 * np + 1], a1, b[2], b[3]);
        }
        ldmatrix_x4(v_s + a_lane + kk * 32, a0[0], a0[1], a0[2], a0[3]);
        ldmatrix_x4(v_s + 16 * LD * 2 + a_lane + kk * 32, a1[0], a1[1], a1[2], a1[3]);
#pragma unroll
        for (int np = 0; np < T::NQ / 2; np++) {
            ldmatrix_x4(do_s + bn_lane + np * 16 * LD * 2 + kk * 32, b[0], b[1], b[2], b[3]);
            mma_bf16_16816(dp[0][2 * np], a0, b[0], b[1]);
            mma_bf16_16816(dp[0][2 * np + 1], a0, b[2], b[3]);
            mma_bf16_16816(dp[1][2 * np], a1, b[0], b[1]);
            mma_bf16_16816(dp[1][2 * np + 1], a1, b[2], b[3]);
        }
    }
}

// One 16 x 16 A fragment (a[0..3] as mma.sync's A: rows g/g+8, k 0-7/8-15) to shared memory at
// addr (this lane's ldmatrix A address: row lane % 16, column 8 (lane / 16)), or the same
// elements by 32-bit stores at e (row g, column 2 t4; row stride ld elements).
template <bool STM>
__device__ __forceinline__ void store_a_frag(const uint32_t (&a)[4], uint32_t addr, bf16 *e, int ld)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (STM) {
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a[0]),
                     "r"(a[1]), "r"(a[2]), "r"(a[3])
                     : "memory");
        return;
    }
#endif
    (void)addr;
    *reinterpret_cast<uint32_t *>(e) = a[0];
    *reinterpret_cast<uint32_t *>(e + 8 * ld) = a[1];
    *reinterpret_cast<uint32_t *>(e + 8) = a[2];
    *reinterpret_cast<uint32_t *>(e + 8 * ld + 8) = a[3];
}

// dV += P^T dO and dK += dS^T Q over the step's BM queries (k-steps kq of 16), starting at the
// warp's own half: with OWN its KQ/2 k-steps from registers (pa, dsa), the rest from shared
// memory (p_s, ds_s: the warp's first key row). do_s, q_s: the warp's first D column.
template <class T, bool OWN>
__device__ __forceinline__ void sp_dkdv(const uint32_t (&pa)[2][T::KQ / 2][4], const uint32_t (&dsa)[2][T::KQ / 2][4],
                                        uint32_t p_s, uint32_t ds_s, uint32_t do_s, uint32_t q_s, int hf,
                                        uint32_t ap_lane, uint32_t bt_lane, float (&dk)[2][T::DHT][4],
                                        float (&dv)[2][T::DHT][4])
{
    constexpr int LD = T::LD, LDS = T::LDS, KQ = T::KQ;
#pragma unroll
    for (int j = 0; j < KQ; j++) {
        const int kq = (hf * (KQ / 2) + j) % KQ;
        uint32_t ap[2][4], ad[2][4];
#pragma unroll
        for (int m = 0; m < 2; m++) {
            if (OWN && j < KQ / 2) {
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    ap[m][i] = pa[m][j % (KQ / 2)][i];
                    ad[m][i] = dsa[m][j % (KQ / 2)][i];
                }
            } else {
                const uint32_t o = ap_lane + m * 16 * LDS * 2 + kq * 32;
                ldmatrix_x4(p_s + o, ap[m][0], ap[m][1], ap[m][2], ap[m][3]);
                ldmatrix_x4(ds_s + o, ad[m][0], ad[m][1], ad[m][2], ad[m][3]);
            }
        }
#pragma unroll
        for (int d2 = 0; d2 < T::DHT / 2; d2++) {
            uint32_t b[4];
            const uint32_t o = bt_lane + kq * 16 * LD * 2 + d2 * 32;
            ldmatrix_x4_trans(do_s + o, b[0], b[1], b[2], b[3]);
#pragma unroll
            for (int m = 0; m < 2; m++) {
                mma_bf16_16816(dv[m][2 * d2], ap[m], b[0], b[1]);
                mma_bf16_16816(dv[m][2 * d2 + 1], ap[m], b[2], b[3]);
            }
            ldmatrix_x4_trans(q_s + o, b[0], b[1], b[2], b[3]);
#pragma unroll
            for (int m = 0; m < 2; m++) {
                mma_bf16_16816(dk[m][2 * d2], ad[m], b[0], b[1]);
                mma_bf16_16816(dk[m][2 * d2 + 1], ad[m], b[2], b[3]);
            }
        }
    }
}

// acc (MQ x DQT tiles of the mma.sync C layout) added to dQ at base (this lane's row g, column
// 2 t4): float2 atomics on sm_90. GUARD: only the rows below `rows` (counted from base's).
template <int MQ, int DQT, int D, bool GUARD>
__device__ __forceinline__ void add_dq(const float (&acc)[MQ][DQT][4], float *base, int rows)
{
#pragma unroll
    for (int m = 0; m < MQ; m++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            if (!GUARD || m * 16 + 8 * h < rows) {
#pragma unroll
                for (int n = 0; n < DQT; n++) {
                    float *dst = base + (m * 16 + 8 * h) * D + n * 8;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
                    atomicAdd(reinterpret_cast<float2 *>(dst), make_float2(acc[m][n][2 * h], acc[m][n][2 * h + 1]));
#else
                    atomicAdd(dst, acc[m][n][2 * h]);
                    atomicAdd(dst + 1, acc[m][n][2 * h + 1]);
#endif
                }
            }
}

// dQ rows [row0, row0 + BM/2) x the warp's DQC columns (from col0) += dS K, added to the FP32
// accumulator dQa with atomics. ds_s: dS^T at the warp's first query column; k_s: K at col0.
template <class T, int D>
__device__ __forceinline__ void sp_dq(uint32_t ds_s, uint32_t k_s, uint32_t at_lane, uint32_t bt_lane, float *dQa,
                                      int row0, int col0, int S, int g, int t4)
{
    constexpr int LD = T::LD, LDS = T::LDS, DQT = T::DQT, MQ = T::MQ;
    float acc[MQ][DQT][4];
#pragma unroll
    for (int m = 0; m < MQ; m++)
#pragma unroll
        for (int n = 0; n < DQT; n++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                acc[m][n][i] = 0.f;
#pragma unroll
    for (int kk = 0; kk < T::BN / 16; kk++) {
        uint32_t af[MQ][4];
#pragma unroll
        for (int m = 0; m < MQ; m++)
            ldmatrix_x4_trans(ds_s + at_lane + kk * 16 * LDS * 2 + m * 32, af[m][0], af[m][1], af[m][2], af[m][3]);
#pragma unroll
        for (int h = 0; h < DQT / 2; h++) {
            uint32_t b[4];
            ldmatrix_x4_trans(k_s + bt_lane + kk * 16 * LD * 2 + h * 32, b[0], b[1], b[2], b[3]);
#pragma unroll
            for (int m = 0; m < MQ; m++) {
                mma_bf16_16816(acc[m][2 * h], af[m], b[0], b[1]);
                mma_bf16_16816(acc[m][2 * h + 1], af[m], b[2], b[3]);
            }
        }
    }
    // One base address and compile-time offsets; the row test only in a tile that crosses S (a
    // warp-uniform branch: tested per atomic, the compiler branched around each one).
    float *base = dQa + (size_t)(row0 + g) * D + col0 + 2 * t4;
    if (row0 + 16 * MQ <= S)
        add_dq<MQ, DQT, D, false>(acc, base, 0);
    else
        add_dq<MQ, DQT, D, true>(acc, base, S - row0 - g);
}

// P^T = exp2(S^T scale log2e - lse log2e) (masked) and dS^T = P^T o (dP^T - delta) of the warp's
// 32 keys x BM/2 queries (from column q0 of the step's tile), packed as A fragments (k-step j:
// queries q0 + 16 j ..) and stored to sP, sdS at the warp's rows (e0: element offset of row g,
// column q0 + 2 t4; a0: the byte offset of this lane's ldmatrix A address there).
template <class T, bool CAUSAL, bool STM>
__device__ __forceinline__ void sp_probs(const float (&s)[2][T::NQ][4], const float (&dp)[2][T::NQ][4],
                                         const float *lt, const float *dlt, float scale_log2, bool masked,
                                         int key_r0, int qi0, int q0, int t4, bf16 *sP, bf16 *sdS, int e0,
                                         uint32_t a0, uint32_t (&pa)[2][T::KQ / 2][4],
                                         uint32_t (&dsa)[2][T::KQ / 2][4])
{
    constexpr int LDS = T::LDS;
    float2 l2[T::NQ], d2[T::NQ]; // this lane's two columns of each 8-query tile, loaded once
#pragma unroll
    for (int n = 0; n < T::NQ; n++) {
        l2[n] = *reinterpret_cast<const float2 *>(lt + q0 + n * 8 + 2 * t4);
        d2[n] = *reinterpret_cast<const float2 *>(dlt + q0 + n * 8 + 2 * t4);
    }
#pragma unroll
    for (int m = 0; m < 2; m++) {
#pragma unroll
        for (int n = 0; n < T::NQ; n++) {
            float pv[4], ds[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int col = q0 + n * 8 + 2 * t4 + (i & 1);
                float x = fast_exp2(fmaf(s[m][n][i], scale_log2, -(i & 1 ? l2[n].y : l2[n].x)));
                if (CAUSAL && masked && key_r0 + 16 * m + ((i >> 1) << 3) > qi0 + col)
                    x = 0.f;
                pv[i] = x;
                ds[i] = x * (dp[m][n][i] - (i & 1 ? d2[n].y : d2[n].x));
            }
            uint32_t *pf = pa[m][n >> 1] + (n & 1) * 2, *df = dsa[m][n >> 1] + (n & 1) * 2;
            pf[0] = pack_bf16x2(pv[0], pv[1]);
            pf[1] = pack_bf16x2(pv[2], pv[3]);
            df[0] = pack_bf16x2(ds[0], ds[1]);
            df[1] = pack_bf16x2(ds[2], ds[3]);
        }
#pragma unroll
        for (int j = 0; j < T::KQ / 2; j++) {
            const int e = e0 + m * 16 * LDS + j * 16;
            const uint32_t o = a0 + (uint32_t)((m * 16 * LDS + j * 16) * 2);
            store_a_frag<STM>(pa[m][j], smem_addr(sP) + o, sP + e, LDS);
            store_a_frag<STM>(dsa[m][j], smem_addr(sdS) + o, sdS + e, LDS);
        }
    }
}

// DQF: the dQ product and its atomics before the dK/dV update of the step (both read only
// shared memory written before the step's second barrier), not after.
template <int D, int BM, bool OWN, bool STM, bool DQF, bool CAUSAL>
__device__ __forceinline__ void bwd_sp_body(const BwdTcParams &p)
{
    typedef SpTile<D, BM> T;
    constexpr int BN = T::BN, THREADS = T::THREADS, LD = T::LD, LDS = T::LDS, DH = T::DH, DHT = T::DHT,
                  DQC = T::DQC;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    bf16 *sK = reinterpret_cast<bf16 *>(smem_raw);
    bf16 *sV = sK + BN * LD;
    bf16 *sQ = sV + BN * LD;      // two buffers of BM x LD
    bf16 *sdO = sQ + 2 * BM * LD; // two buffers
    bf16 *sP = sdO + 2 * BM * LD; // P^T, BN x LDS
    bf16 *sdS = sP + BN * LDS;    // dS^T
    float *sL = reinterpret_cast<float *>(sdS + BN * LDS); // two buffers of BM: lse * log2e
    float *sDl = sL + 2 * BM;                              // two buffers of BM: delta

    const int S = p.seq;
    int key_tile, bh;
    block_tile(p, key_tile, bh);
    const int j0 = key_tile * BN;
    const size_t off = (size_t)bh * S * D;
    const bf16 *Q = p.q + off, *K = p.k + off, *V = p.v + off, *dO = p.dout + off;
    const float *L = p.lse + (size_t)bh * S, *Dl = p.delta + (size_t)bh * S;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    const int kw = warp & 3, hf = warp >> 2, q0 = hf * (BM / 2);
    const int first = CAUSAL ? j0 / BM : 0, n_qt = (S + BM - 1) / BM;

    auto load_q_tile = [&](int t, int buf) {
        load_rows<D, BM, THREADS>(sQ + buf * BM * LD, Q, t * BM, S, tid);
        load_rows<D, BM, THREADS>(sdO + buf * BM * LD, dO, t * BM, S, tid);
        for (int r = tid; r < BM; r += THREADS) {
            const int row = t * BM + r;
            // A row past S gets lse = +inf: its P is exactly 0, so is its dS.
            sL[buf * BM + r] = row < S ? L[row] * kLog2e : INFINITY;
            sDl[buf * BM + r] = row < S ? Dl[row] : 0.f;
        }
    };
    load_rows<D, BN, THREADS>(sK, K, j0, S, tid);
    load_rows<D, BN, THREADS>(sV, V, j0, S, tid);
    if (first < n_qt)
        load_q_tile(first, 0);
    cp_async_commit();

    // Per-lane ldmatrix byte offsets, as in bwd_tc_body; ap_lane: A plain with row stride LDS.
    const uint32_t a_lane = (uint32_t)(((lane & 15) * LD + ((lane >> 4) << 3)) * 2);
    const uint32_t ap_lane = (uint32_t)(((lane & 15) * LDS + ((lane >> 4) << 3)) * 2);
    const uint32_t bn_lane = (uint32_t)(((((lane >> 4) << 3) + (lane & 7)) * LD + (((lane >> 3) & 1) << 3)) * 2);
    const uint32_t bt_lane = (uint32_t)(((((lane >> 3) & 1) << 3) + (lane & 7)) * LD * 2 + ((lane >> 4) << 4));
    const uint32_t at_lane = (uint32_t)((((lane >> 4) << 3) + (lane & 7)) * LDS * 2 + (((lane >> 3) & 1) << 4));
    const uint32_t k_rows = (uint32_t)(kw * 32 * LD * 2), ps_rows = (uint32_t)(kw * 32 * LDS * 2);
    const int key_r0 = j0 + kw * 32 + g; // this lane's key rows: key_r0 + 16 m + 8 h
    const int e0 = (kw * 32 + g) * LDS + q0 + 2 * t4;
    const uint32_t st0 = ps_rows + ap_lane + (uint32_t)(q0 * 2);

    float dk[2][DHT][4], dv[2][DHT][4];
#pragma unroll
    for (int m = 0; m < 2; m++)
#pragma unroll
        for (int d = 0; d < DHT; d++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                dk[m][d][i] = dv[m][d][i] = 0.f;

#pragma unroll 1
    for (int t = first; t < n_qt; t++) {
        const int buf = (t - first) & 1, i0 = t * BM;
        cp_async_wait<0>();
        __syncthreads(); // tile t landed; every warp is past step t-1 (its P^T, dS^T, Q, dO reads)
        if (t + 1 < n_qt)
            load_q_tile(t + 1, buf ^ 1);
        cp_async_commit();
        const uint32_t q_s = smem_addr(sQ + buf * BM * LD), do_s = smem_addr(sdO + buf * BM * LD);
        uint32_t pa[2][T::KQ / 2][4], dsa[2][T::KQ / 2][4];
        {
            float s[2][T::NQ][4], dp[2][T::NQ][4];
            sp_scores<T>(smem_addr(sK) + k_rows, smem_addr(sV) + k_rows, q_s + q0 * LD * 2, do_s + q0 * LD * 2,
                         a_lane, bn_lane, s, dp);
            const bool masked = CAUSAL && j0 + kw * 32 + 31 > i0 + q0;
            sp_probs<T, CAUSAL, STM>(s, dp, sL + buf * BM, sDl + buf * BM, p.scale_log2, masked, key_r0, i0, q0,
                                     t4, sP, sdS, e0, st0, pa, dsa);
        }
        __syncthreads(); // P^T, dS^T complete
        if (DQF)
            sp_dq<T, D>(smem_addr(sdS) + q0 * 2, smem_addr(sK) + kw * DQC * 2, at_lane, bt_lane, p.dq_acc + off,
                        i0 + q0, kw * DQC, S, g, t4);
        sp_dkdv<T, OWN>(pa, dsa, smem_addr(sP) + ps_rows, smem_addr(sdS) + ps_rows, do_s + hf * DH * 2,
                        q_s + hf * DH * 2, hf, ap_lane, bt_lane, dk, dv);
        if (!DQF)
            sp_dq<T, D>(smem_addr(sdS) + q0 * 2, smem_addr(sK) + kw * DQC * 2, at_lane, bt_lane, p.dq_acc + off,
                        i0 + q0, kw * DQC, S, g, t4);
    }
    cp_async_wait<0>();

    // dK (scaled) and dV of this warp's keys and columns.
#pragma unroll
    for (int m = 0; m < 2; m++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = key_r0 + 16 * m + 8 * h;
            if (row >= S)
                continue;
#pragma unroll
            for (int d = 0; d < DHT; d++) {
                const size_t e = off + (size_t)row * D + hf * DH + d * 8 + 2 * t4;
                *reinterpret_cast<uint32_t *>(p.dk + e) =
                    pack_bf16x2(dk[m][d][2 * h] * p.scale, dk[m][d][2 * h + 1] * p.scale);
                *reinterpret_cast<uint32_t *>(p.dv + e) = pack_bf16x2(dv[m][d][2 * h], dv[m][d][2 * h + 1]);
            }
        }
}

} // namespace

// MINB: blocks per multiprocessor asked of the register allocator (its cap: 64K / (MINB * threads)).
template <int D, int WARPS, int BM, int MINB, bool CAUSAL>
__global__ void __launch_bounds__(WARPS * 32, MINB) attnprof_bwd_tc_dkdv(BwdTcParams p)
{
    bwd_tc_body<D, WARPS, BM, CAUSAL>(p);
}

// The FA2-layout body (shared_p), 256 threads, one block per multiprocessor.
template <int D, int BM, bool OWN, bool STM, bool DQF, bool CAUSAL>
__global__ void __launch_bounds__(256, 1) attnprof_bwd_tc_dkdv_sp(BwdTcParams p)
{
    bwd_sp_body<D, BM, OWN, STM, DQF, CAUSAL>(p);
}

// delta_i = dO_i · O_i (one warp per row, bf16 pairs) and the row's dQ accumulator zeroed.
template <int D>
__global__ void attnprof_bwd_tc_delta(const bf16 *out, const bf16 *dout, float *delta, float *dq_acc, size_t rows)
{
    const size_t row = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const float x = bwd_row_delta_zero_dq<D>(out, dout, dq_acc, row, lane);
    if (lane == 0)
        delta[row] = x;
}

// dq = bf16(acc * scale), four elements a thread.
__global__ void attnprof_bwd_tc_dq_convert(const float *acc, bf16 *dq, size_t n4, float scale)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4)
        return;
    const float4 a = reinterpret_cast<const float4 *>(acc)[i];
    uint2 packed;
    packed.x = pack_bf16x2(a.x * scale, a.y * scale);
    packed.y = pack_bf16x2(a.z * scale, a.w * scale);
    reinterpret_cast<uint2 *>(dq)[i] = packed;
}

// lse of 64 query rows a block (16 a warp), keys in tiles of 64 double-buffered; online max and
// sum in the exp2 domain. Rows past S are computed on zero-filled queries and not written.
template <int D, bool CAUSAL>
__global__ void __launch_bounds__(128) attnprof_bwd_tc_lse(const bf16 *q, const bf16 *k, float *lse, int seq, int bh,
                                                           float scale_log2)
{
    constexpr int BM = 64, BN = 64, LD = D + 8, KD = D / 16, NT = BN / 8;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    bf16 *sQ = reinterpret_cast<bf16 *>(smem_raw), *sK = sQ + BM * LD; // sK: two buffers
    const int n_qt = (seq + BM - 1) / BM;
    const int q_tile = n_qt - 1 - (int)(blockIdx.x / bh), h = blockIdx.x % bh; // heavy first
    const int i0 = q_tile * BM;
    const size_t off = (size_t)h * seq * D;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    const int kv_end = CAUSAL ? min(seq, i0 + BM) : seq, n_kt = (kv_end + BN - 1) / BN;
    load_rows<D, BM, 128>(sQ, q + off, i0, seq, tid);
    load_rows<D, BN, 128>(sK, k + off, 0, seq, tid);
    cp_async_commit();
    const uint32_t a_lane = (uint32_t)(((lane & 15) * LD + ((lane >> 4) << 3)) * 2);
    const uint32_t bn_lane = (uint32_t)(((((lane >> 4) << 3) + (lane & 7)) * LD + (((lane >> 3) & 1) << 3)) * 2);
    const int r0 = i0 + warp * 16 + g;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
    uint32_t qf[KD][4];
#pragma unroll 1
    for (int kt = 0; kt < n_kt; kt++) {
        if (kt + 1 < n_kt)
            load_rows<D, BN, 128>(sK + ((kt + 1) & 1) * BN * LD, k + off, (kt + 1) * BN, seq, tid);
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        if (kt == 0) {
#pragma unroll
            for (int kk = 0; kk < KD; kk++)
                ldmatrix_x4(smem_addr(sQ) + warp * 16 * LD * 2 + a_lane + kk * 32, qf[kk][0], qf[kk][1], qf[kk][2],
                            qf[kk][3]);
        }
        const int k0 = kt * BN;
        if (!CAUSAL || k0 <= i0 + warp * 16 + 15) {
            const uint32_t k_s = smem_addr(sK + (kt & 1) * BN * LD);
            float s[NT][4];
#pragma unroll
            for (int n = 0; n < NT; n++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    s[n][i] = 0.f;
#pragma unroll
            for (int kk = 0; kk < KD; kk++)
#pragma unroll
                for (int np = 0; np < NT / 2; np++) {
                    uint32_t b[4];
                    ldmatrix_x4(k_s + bn_lane + np * 16 * LD * 2 + kk * 32, b[0], b[1], b[2], b[3]);
                    mma_bf16_16816(s[2 * np], qf[kk], b[0], b[1]);
                    mma_bf16_16816(s[2 * np + 1], qf[kk], b[2], b[3]);
                }
            const bool edge = (CAUSAL && k0 + BN - 1 > i0 + warp * 16) || k0 + BN > seq;
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                const int row = r0 + 8 * hh;
                float mx = -INFINITY;
#pragma unroll
                for (int n = 0; n < NT; n++)
#pragma unroll
                    for (int i = 0; i < 2; i++) {
                        const int col = k0 + n * 8 + 2 * t4 + i;
                        float x = s[n][2 * hh + i] * scale_log2;
                        if (edge && (col >= seq || (CAUSAL && col > row)))
                            x = -INFINITY;
                        s[n][2 * hh + i] = x;
                        mx = fmaxf(mx, x);
                    }
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                const float mn = fmaxf(m[hh], mx);
                const float base = mn == -INFINITY ? 0.f : mn;
                float sum = 0.f;
#pragma unroll
                for (int n = 0; n < NT; n++)
                    sum += fast_exp2(s[n][2 * hh] - base) + fast_exp2(s[n][2 * hh + 1] - base);
                l[hh] = l[hh] * fast_exp2(m[hh] - base) + sum;
                m[hh] = mn;
            }
        }
        __syncthreads(); // buffer kt&1 is refilled at the next step
    }
    cp_async_wait<0>();
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
        float x = l[hh];
        x += __shfl_xor_sync(0xffffffffu, x, 1);
        x += __shfl_xor_sync(0xffffffffu, x, 2);
        const int row = r0 + 8 * hh;
        if (t4 == 0 && row < seq)
            lse[(size_t)h * seq + row] = (m[hh] + __log2f(x)) * 0.69314718055994531f;
    }
}

namespace {

const attn_bwd_tc_config kConfigs[] = {
    {64, 8, 128, 64, 1, 0, 0, "d64_n128_m64_w8"},
    {64, 4, 64, 64, 2, 0, 0, "d64_n64_m64_w4_b2"},
    {64, 8, 128, 32, 2, 0, 0, "d64_n128_m32_w8_b2"},
    {64, 4, 64, 64, 3, 0, 0, "d64_n64_m64_w4_b3"},
    {128, 4, 64, 64, 1, 0, 0, "d128_n64_m64_w4"},
    {128, 4, 64, 32, 2, 0, 0, "d128_n64_m32_w4_b2"},
    {128, 8, 128, 64, 1, 0, 0, "d128_n128_m64_w8"},
    {128, 8, 128, 32, 1, 0, 0, "d128_n128_m32_w8"},
    {64, 4, 64, 64, 3, 0, 1, "d64_n64_m64_w4_b3_l2"},
    {128, 8, 128, 64, 1, 0, 1, "d128_n128_m64_w8_l2"},
    {64, 8, 128, 64, 1, 1, 1, "d64_n128_m64_w8_sp_l2"},
    {64, 8, 128, 128, 1, 1, 1, "d64_n128_m128_w8_sp_l2"},
    {64, 8, 128, 128, 1, 2, 1, "d64_n128_m128_w8_sp2_l2"},
    {64, 8, 128, 128, 1, 1, 1, "d64_n128_m128_w8_sp_l2_stm"},
    {64, 8, 128, 128, 1, 2, 1, "d64_n128_m128_w8_sp2_l2_stm"},
    {128, 8, 128, 64, 1, 1, 1, "d128_n128_m64_w8_sp_l2"},
    {128, 8, 128, 64, 1, 2, 1, "d128_n128_m64_w8_sp2_l2"},
    {128, 8, 128, 64, 1, 1, 1, "d128_n128_m64_w8_sp_l2_stm"},
    {128, 8, 128, 64, 1, 2, 1, "d128_n128_m64_w8_sp2_l2_stm"},
    {64, 8, 128, 128, 1, 1, 1, "d64_n128_m128_w8_sp_l2_stm_dqf"},
    {128, 8, 128, 64, 1, 1, 1, "d128_n128_m64_w8_sp_l2_dqf"},
    {128, 8, 128, 64, 1, 2, 1, "d128_n128_m64_w8_sp2_l2_dqf"},
};
constexpr int kConfigCount = (int)(sizeof kConfigs / sizeof kConfigs[0]);

template <int D, int WARPS, int BM, int MINB, bool CAUSAL>
cudaError_t run_main(const BwdTcParams &p, cudaStream_t s)
{
    typedef BwdTile<D, WARPS, BM> T;
    static cudaError_t prepared = cudaErrorNotReady;
    if (prepared == cudaErrorNotReady)
        prepared = cudaFuncSetAttribute(attnprof_bwd_tc_dkdv<D, WARPS, BM, MINB, CAUSAL>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)T::SMEM);
    if (prepared != cudaSuccess)
        return prepared;
    const unsigned blocks = (unsigned)(((p.seq + T::BN - 1) / T::BN) * p.bh);
    attnprof_bwd_tc_dkdv<D, WARPS, BM, MINB, CAUSAL><<<blocks, T::THREADS, T::SMEM, s>>>(p);
    return cudaGetLastError();
}

template <int D, int WARPS, int BM, int MINB>
cudaError_t run_main_mask(const BwdTcParams &p, int causal, cudaStream_t s)
{
    return causal ? run_main<D, WARPS, BM, MINB, true>(p, s) : run_main<D, WARPS, BM, MINB, false>(p, s);
}

template <int D, int BM, bool OWN, bool STM, bool DQF, bool CAUSAL>
cudaError_t run_sp(const BwdTcParams &p, cudaStream_t s)
{
    typedef SpTile<D, BM> T;
    static cudaError_t prepared = cudaErrorNotReady;
    if (prepared == cudaErrorNotReady)
        prepared = cudaFuncSetAttribute(attnprof_bwd_tc_dkdv_sp<D, BM, OWN, STM, DQF, CAUSAL>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)T::SMEM);
    if (prepared != cudaSuccess)
        return prepared;
    const unsigned blocks = (unsigned)(((p.seq + T::BN - 1) / T::BN) * p.bh);
    attnprof_bwd_tc_dkdv_sp<D, BM, OWN, STM, DQF, CAUSAL><<<blocks, T::THREADS, T::SMEM, s>>>(p);
    return cudaGetLastError();
}

template <int D, int BM, bool OWN, bool STM, bool DQF = false>
cudaError_t run_sp_mask(const BwdTcParams &p, int causal, cudaStream_t s)
{
    return causal ? run_sp<D, BM, OWN, STM, DQF, true>(p, s) : run_sp<D, BM, OWN, STM, DQF, false>(p, s);
}

cudaError_t run_config(int c, const BwdTcParams &p, int causal, cudaStream_t s)
{
    switch (c) {
    case 0: return run_main_mask<64, 8, 64, 1>(p, causal, s);
    case 1: return run_main_mask<64, 4, 64, 2>(p, causal, s);
    case 2: return run_main_mask<64, 8, 32, 2>(p, causal, s);
    case 3: return run_main_mask<64, 4, 64, 3>(p, causal, s);
    case 4: return run_main_mask<128, 4, 64, 1>(p, causal, s);
    case 5: return run_main_mask<128, 4, 32, 2>(p, causal, s);
    case 6: return run_main_mask<128, 8, 64, 1>(p, causal, s);
    case 7: return run_main_mask<128, 8, 32, 1>(p, causal, s);
    case 8: return run_main_mask<64, 4, 64, 3>(p, causal, s);
    case 9: return run_main_mask<128, 8, 64, 1>(p, causal, s);
    case 10: return run_sp_mask<64, 64, true, false>(p, causal, s);
    case 11: return run_sp_mask<64, 128, true, false>(p, causal, s);
    case 12: return run_sp_mask<64, 128, false, false>(p, causal, s);
    case 13: return run_sp_mask<64, 128, true, true>(p, causal, s);
    case 14: return run_sp_mask<64, 128, false, true>(p, causal, s);
    case 15: return run_sp_mask<128, 64, true, false>(p, causal, s);
    case 16: return run_sp_mask<128, 64, false, false>(p, causal, s);
    case 17: return run_sp_mask<128, 64, true, true>(p, causal, s);
    case 18: return run_sp_mask<128, 64, false, true>(p, causal, s);
    case 19: return run_sp_mask<64, 128, true, true, true>(p, causal, s);
    case 20: return run_sp_mask<128, 64, true, false, true>(p, causal, s);
    case 21: return run_sp_mask<128, 64, false, false, true>(p, causal, s);
    default: return cudaErrorInvalidValue;
    }
}

template <int D, bool CAUSAL>
cudaError_t run_lse(const bf16 *q, const bf16 *k, float *lse, int bh, int seq, cudaStream_t s)
{
    constexpr size_t smem = sizeof(bf16) * 3 * 64 * (D + 8);
    static cudaError_t prepared = cudaErrorNotReady;
    if (prepared == cudaErrorNotReady)
        prepared = cudaFuncSetAttribute(attnprof_bwd_tc_lse<D, CAUSAL>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)smem);
    if (prepared != cudaSuccess)
        return prepared;
    const unsigned blocks = (unsigned)(((seq + 63) / 64) * bh);
    attnprof_bwd_tc_lse<D, CAUSAL><<<blocks, 128, smem, s>>>(q, k, lse, seq, bh, kLog2e / sqrtf((float)D));
    return cudaGetLastError();
}

// The blocks' order (block_tile): groups of heads whose Q, dO (bf16) and dQ accumulator (FP32),
// 8 seq D bytes a head, take at most half the L2.
cudaError_t block_order(const attn_bwd_tc_config &c, BwdTcParams &p)
{
    p.grouped = c.grouped;
    if (!c.grouped)
        return cudaSuccess;
    int dev = 0, l2 = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    if (e != cudaSuccess)
        return e;
    const int n_kt = (p.seq + c.block_n - 1) / c.block_n;
    p.order = flash_tile_order_make(n_kt, p.bh, flash_heads_per_group(l2, p.seq, 2 * c.head_dim, p.bh));
    return cudaSuccess;
}

bool shape_ok(int bh, int seq, int dim)
{
    return attn_bwd_tc_supports(dim) && bh >= 1 && seq >= 1 && (long long)bh * seq * dim < (1ll << 31);
}

} // namespace

extern "C" int attn_bwd_tc_supports(int dim) { return dim == 64 || dim == 128; }
extern "C" int attn_bwd_tc_config_count(void) { return kConfigCount; }
extern "C" const attn_bwd_tc_config *attn_bwd_tc_config_at(int i)
{
    return i >= 0 && i < kConfigCount ? &kConfigs[i] : nullptr;
}
// Measured 2026-12-04 (bench/results/2026-12-04-backward-tc2.md): at D 128 the variant without the
// own half in registers wins under the causal mask and loses without it (ptxas: 0 against 68
// bytes of spills causal, 24 against 8 not); at D 64 the dQ-first order wins by 1-2% causal only.
extern "C" int attn_bwd_tc_default_config_masked(int dim, int causal)
{
    return dim == 64 ? (causal ? 19 : 13) : dim == 128 ? (causal ? 16 : 15) : -1;
}
extern "C" int attn_bwd_tc_default_config(int dim) { return attn_bwd_tc_default_config_masked(dim, 1); }

extern "C" size_t attn_bwd_tc_workspace_floats(int bh, int seq, int dim)
{
    const size_t rows = (size_t)bh * seq;
    return rows * dim + ((rows + 3) & ~(size_t)3);
}

extern "C" cudaError_t launch_attn_bwd_tc(const void *q, const void *k, const void *v, const void *out,
                                          const void *dout, const float *lse, float *workspace, void *dq, void *dk,
                                          void *dv, int bh, int seq, int dim, int causal, int config, cudaStream_t s)
{
    if (!shape_ok(bh, seq, dim))
        return cudaErrorInvalidValue;
    if (config < 0)
        config = attn_bwd_tc_default_config_masked(dim, causal);
    if (config >= kConfigCount || kConfigs[config].head_dim != dim)
        return cudaErrorInvalidValue;
    const size_t rows = (size_t)bh * seq;
    float *dq_acc = workspace, *delta = workspace + rows * dim;
    const bf16 *ob = static_cast<const bf16 *>(out), *dob = static_cast<const bf16 *>(dout);
    const unsigned delta_blocks = (unsigned)((rows * 32 + 255) / 256);
    if (dim == 64)
        attnprof_bwd_tc_delta<64><<<delta_blocks, 256, 0, s>>>(ob, dob, delta, dq_acc, rows);
    else
        attnprof_bwd_tc_delta<128><<<delta_blocks, 256, 0, s>>>(ob, dob, delta, dq_acc, rows);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    BwdTcParams p;
    p.q = static_cast<const bf16 *>(q);
    p.k = static_cast<const bf16 *>(k);
    p.v = static_cast<const bf16 *>(v);
    p.dout = dob;
    p.lse = lse;
    p.delta = delta;
    p.dq_acc = dq_acc;
    p.dk = static_cast<bf16 *>(dk);
    p.dv = static_cast<bf16 *>(dv);
    p.seq = seq;
    p.bh = bh;
    p.scale = 1.0f / sqrtf((float)dim);
    p.scale_log2 = p.scale * kLog2e;
    if ((e = block_order(kConfigs[config], p)) != cudaSuccess)
        return e;
    if ((e = run_config(config, p, causal, s)) != cudaSuccess)
        return e;
    const size_t n4 = rows * dim / 4;
    attnprof_bwd_tc_dq_convert<<<(unsigned)((n4 + 255) / 256), 256, 0, s>>>(dq_acc, static_cast<bf16 *>(dq), n4,
                                                                             p.scale);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_attn_bwd_tc_lse(const void *q, const void *k, float *lse, int bh, int seq, int dim,
                                              int causal, cudaStream_t s)
{
    if (!shape_ok(bh, seq, dim))
        return cudaErrorInvalidValue;
    const bf16 *qb = static_cast<const bf16 *>(q), *kb = static_cast<const bf16 *>(k);
    if (dim == 64)
        return causal ? run_lse<64, true>(qb, kb, lse, bh, seq, s) : run_lse<64, false>(qb, kb, lse, bh, seq, s);
    return causal ? run_lse<128, true>(qb, kb, lse, bh, seq, s) : run_lse<128, false>(qb, kb, lse, bh, seq, s);
}
