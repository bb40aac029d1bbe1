// The sm_90a fused backward (attn_bwd_sm90a.h): FlashAttention-3's design, our own code.
// NEVER RUN ON A GPU: written and checked only with the compiler (ptxas, SASS) on 2026-12-04;
// bench-only until bench/bwd_wgmma_h200.sh's check has passed (bench/results/
// 2026-12-04-backward-wgmma-pending.md).
//
// Main kernel: one block per (key tile of BN = 128 keys, head), 384 threads in three warpgroups.
// Warpgroup 0 gives its registers away (setmaxnreg 24) and its thread 0 issues every copy: K and V
// of the block's keys once (TMA, 128-byte swizzle), then for each query step the Q and dO tiles
// (BM = 64 rows) and their 64 lse*log2e and delta values (bulk copies) into a ring of 2 (or 3)
// stages with mbarriers (full: the bytes have landed; free: the 8 consumer warps are done with it).
// Warpgroups 1 and 2 (240 registers) own 64 keys each and keep dK and dV of their keys in
// registers for the whole block (64 x 128 FP32 each, 64 + 64 registers a thread). Per query step,
// in a warpgroup (w: its keys kw0 = j0 + 64 w):
//   S^T  = K_w Q^T          wgmma SS m64n64k16 x 8 (both K-major: as the forward's Q K^T)
//   dP^T = V_w dO^T         wgmma SS m64n64k16 x 8
//   P^T  = exp2(S^T * scale*log2e - lse*log2e)   (masked: key > query causal, key >= S)
//   dS^T = P^T o (dP^T - delta)
//   dV  += P^T dO           wgmma RS m64n128k16 x 4 (P^T from the accumulator registers as A: the
//   dK  += dS^T Q           wgmma RS m64n128k16 x 4  accumulator layout is the A-fragment layout;
//                                                    dO and Q are the MN-major B operands)
//   dS^T -> shared memory (bf16, [128 keys][64 queries], 128-byte swizzle), both warpgroups meet
//   dQ_w = dS K[:, 64w..64w+63]   wgmma SS m64n64k16 x 8 (A = dS read MN-major from the dS^T
//                                  buffer, B = K MN-major): each warpgroup half of dQ's columns
//   dQ_w -> shared memory (FP32, two 32-column boxes, 128-byte swizzle) -> one TMA reduce-add
//   (cp.reduce.async.bulk.tensor) into the FP32 dQ accumulator in global memory.
// 32 wgmma a warpgroup and step, issued S^T, dP^T | dV | (barrier) dQ | dK (bwd_step says why).
// The dS^T buffer is double-buffered by step parity, so one
// barrier of the 256 consumer threads a step orders both its write-after-read and its
// read-after-write; each warpgroup's dQ staging is single: its thread 0 waits for the previous
// reduce to have read it (bulk_wait_read) before that barrier.
// D = 64: the same with one 64-column chunk per operand, 4 k-steps for S^T and dP^T, dV and dK
// m64n64k16, dQ split into 32 columns a warpgroup (m64n32k16, B starting 64 bytes into K's
// 128-byte rows for the second): 24 wgmma a warpgroup and step.
// Causal: a key tile starts at the first query tile that reaches it (j0 / 64); steps crossing
// the diagonal are masked per element. Blocks are numbered in L2-sized head groups, key tile 0
// (the heaviest, causal) first (kernels/flash_tile_order.h), as attn_bwd_tc.cu's grouped order.
//
// Pre-pass: delta and lse*log2e into [bh][seq_pad] (seq_pad = seq rounded up to 64; rows past
// seq get lse = +inf, so that P = 0 there, and delta = 0), so that each step's 64 values are one
// aligned bulk copy of 256 bytes inside the buffer; it zeroes the dQ accumulator. Rows of Q, dO,
// K, V past seq are zero-filled by TMA (3-D tensor maps [bh][seq][D]: no head bleeds into the
// next), and the reduce-add drops rows past seq. Conversion: dQ = bf16(acc * scale).
#include "attn_bwd_sm90a.h"
#include "attn_bwd_rows.cuh"
#include "tensor_map_encoder.h"

#include <cuda.h> /* CUtensorMap and its enums: the encoder is reached through cudart */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h> /* device printf: the watchdog build only */

#include "flash_tile_order.h"
#include "ptx_bf16.cuh"
#include "ptx_sm90a.cuh"
#include "wgmma_bf16.cuh"

typedef __nv_bfloat16 bf16;

struct BwdSm90aParams {
    const float *lse2, *delta; // [bh][seq_pad]: lse * log2 e (+inf past seq), delta (0 past seq)
    bf16 *dk, *dv;
    float *dq_acc; // [bh][seq][D] FP32 (the atomic variant adds to it directly)
    int seq, seq_pad, bh;
    float scale, scale_log2;
    flash_tile_order order; // block -> (head, key tile): L2-sized head groups
};

namespace {

constexpr float kLog2e = 1.4426950408889634f;

// Options of the main kernel's body (attn_bwd_sm90a_config: dq_atomic, overlap).
enum {
    BWD_OPT_DQ_RED = 1, // dQ by red.global.add from the registers, not the TMA reduce-add
    BWD_OPT_SERIAL = 2, // one wait for a step's dV, dK and dQ (no dK under the dQ staging)
};

} // namespace

// Outside the anonymous namespace: the host code uses them too, and another device pass than sm_90a
// (which compiles the kernel as a trap) would warn of every member it does not use.
//
// Sizes and the shared-memory map (offsets from the dynamic base aligned up to 1024 bytes, the
// 128-byte swizzle's period; every region starts on a multiple of 1024). Operands are stored in
// column chunks of 64 bf16 (128-byte rows), as the forward's (kernels/sm90a/layout.cuh).
// 64 queries a step; the warpgroups split dQ by columns, D / 2 each (at D = 64, 128 queries a
// step as FA3's hdim-64 tile, splitting dQ by rows, spilled 20-56 bytes: S^T and dP^T alone take
// 128 registers there).
template <int D_, int STAGES_> struct BwdSm90aTile {
    static constexpr int D = D_, BN = 128, BM = 64, STAGES = STAGES_;
    static constexpr int RB = 128, CHUNKS = D / 64;
    static constexpr int DQ_COLS = D / 2;                     // a warpgroup's columns of dQ
    static constexpr uint32_t GROUP = 8 * RB;                 // bytes between 8-row groups
    static constexpr int KV_BYTES = CHUNKS * BN * RB;         // K (or V) of the block
    static constexpr int QT_BYTES = CHUNKS * BM * RB;         // one Q (or dO) tile
    static constexpr int DS_BYTES = BN * BM * 2;              // dS^T, [BN keys][BM queries] bf16
    static constexpr int DQ_BYTES = BM * 64 * 4;              // a warpgroup's dQ staging, FP32 (D 128: all of it)
    static constexpr int ROW_VALUES_BYTES = 2 * BM * 4;       // lse and delta of one stage
    static constexpr int K_OFF = 0, V_OFF = KV_BYTES, Q_OFF = 2 * KV_BYTES;
    static constexpr int DO_OFF = Q_OFF + STAGES * QT_BYTES, DS_OFF = DO_OFF + STAGES * QT_BYTES;
    static constexpr int DQ_OFF = DS_OFF + 2 * DS_BYTES, LD_OFF = DQ_OFF + 2 * DQ_BYTES;
    static constexpr int BAR_OFF = LD_OFF + STAGES * ROW_VALUES_BYTES;
    static constexpr int BARS = 1 + 2 * STAGES;              // kv_full, q_full[s], q_free[s]
    static constexpr size_t SMEM = (size_t)BAR_OFF + 8 * BARS + 1024;
    static constexpr int THREADS = 384, PRODUCER_REGS = 24, CONSUMER_REGS = 240;
    static_assert(D == 128 || D == 64, "the dQ split and the staging are written for D = 64 and 128");
    static_assert(SMEM <= 227 * 1024, "shared memory per block");
    // setmaxnreg: 168 a thread at launch (65536 / 384); the consumers' claim must fit what the
    // producer frees, or the block hangs.
    static_assert((168 - PRODUCER_REGS) >= 2 * (CONSUMER_REGS - 168), "setmaxnreg balance");
};

template <class T> struct BwdSm90aSmem {
    uint32_t base;
    __device__ __forceinline__ explicit BwdSm90aSmem(uint32_t b) : base(b) {}
    __device__ __forceinline__ uint32_t k() const { return base + T::K_OFF; }
    __device__ __forceinline__ uint32_t v() const { return base + T::V_OFF; }
    __device__ __forceinline__ uint32_t q(int s) const { return base + T::Q_OFF + s * T::QT_BYTES; }
    __device__ __forceinline__ uint32_t dout(int s) const { return base + T::DO_OFF + s * T::QT_BYTES; }
    __device__ __forceinline__ uint32_t ds(int b) const { return base + T::DS_OFF + b * T::DS_BYTES; }
    __device__ __forceinline__ uint32_t dq(int w) const { return base + T::DQ_OFF + w * T::DQ_BYTES; }
    __device__ __forceinline__ uint32_t lse(int s) const { return base + T::LD_OFF + s * T::ROW_VALUES_BYTES; }
    __device__ __forceinline__ uint32_t delta(int s) const { return lse(s) + T::BM * 4; }
    __device__ __forceinline__ uint32_t kv_full() const { return base + T::BAR_OFF; }
    __device__ __forceinline__ uint32_t q_full(int s) const { return base + T::BAR_OFF + 8 * (1 + s); }
    __device__ __forceinline__ uint32_t q_free(int s) const { return base + T::BAR_OFF + 8 * (1 + T::STAGES + s); }
    __device__ __forceinline__ void init_barriers() const
    {
        sm90::mbar_init(kv_full(), 1);
        for (int s = 0; s < T::STAGES; s++) {
            sm90::mbar_init(q_full(s), 1);
            sm90::mbar_init(q_free(s), 8); // one arrival per consumer warp
        }
        sm90::mbar_fence_init();
    }
};

// The device code proper, for the sm_90a pass (and the host pass, which parses the kernel's body);
// another device pass compiles the kernel as a trap and would only warn that all of this is unused.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace {

// Named barriers: 0 is __syncthreads'; 1 the two consumer warpgroups (the dS^T exchange); 2 + w
// warpgroup w's dQ staging.
constexpr int BAR_DS = 1, BAR_DQ = 2;

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float2 lds_f2(uint32_t addr)
{
    float2 v;
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(addr));
    return v;
}
__device__ __forceinline__ void sts_u32(uint32_t addr, uint32_t v)
{
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void sts_f2(uint32_t addr, float x, float y)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

// The mbarrier waits. In a build with -DATTNPROF_BWD_SM90A_WATCHDOG (a debug binary for the
// device script, run only after a configuration has hung), a wait still pending after ~4e9
// clocks (about 2 s) prints which barrier, step and thread, then traps: a hang then says where
// it is (a producer stuck on q_free with every consumer past its q_full: the consumers hang at
// a named barrier or a wgmma wait; consumers stuck on q_full: a copy's bytes never arrived)
// instead of a bare timeout. Otherwise the plain wait (the same SASS as without this wrapper).
enum { BWD_WAIT_KV_FULL, BWD_WAIT_Q_FULL, BWD_WAIT_Q_FREE };
__device__ __forceinline__ void bwd_wait(uint32_t bar, uint32_t parity, int which, int step)
{
#ifdef ATTNPROF_BWD_SM90A_WATCHDOG
    const long long t0 = clock64();
    bool printed = false;
    for (;;) {
        uint32_t done;
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
        if (done)
            return;
        // Printed at ~2 s, trapped at ~3 s: every thread stuck within a second of this one prints
        // its line before the trap ends the grid.
        const long long waited = clock64() - t0;
        if (!printed && waited > 4000000000ll) {
            static const char *const names[] = {"kv_full", "q_full", "q_free"};
            printf("bwd_sm90a watchdog: block %d thread %d waits on %s, step %d, parity %u\n", (int)blockIdx.x,
                   (int)threadIdx.x, names[which], step, parity);
            printed = true;
        }
        if (waited > 6000000000ll)
            __trap();
    }
#else
    (void)which;
    (void)step;
    sm90::mbar_wait(bar, parity);
#endif
}

// Block -> (key tile, head), in L2-sized head groups (level = key tile, 0 first).
__device__ __forceinline__ void bwd_block_tile(const BwdSm90aParams &p, int &key_tile, int &bh)
{
    flash_tile_order_at(&p.order, (int)blockIdx.x, 0, &bh, &key_tile);
}

// ---- Producer: thread 0 of warpgroup 0.
template <class T, bool CAUSAL>
__device__ __forceinline__ void bwd_producer(const CUtensorMap *tq, const CUtensorMap *tk, const CUtensorMap *tv,
                                             const CUtensorMap *tdo, const BwdSm90aParams &p,
                                             const BwdSm90aSmem<T> &sm)
{
    sm90::regs_release<T::PRODUCER_REGS>();
    if (threadIdx.x != 0)
        return;
    int key_tile, bh;
    bwd_block_tile(p, key_tile, bh);
    const int j0 = key_tile * T::BN, S = p.seq;
    sm90::tma_prefetch_descriptor(tq);
    sm90::tma_prefetch_descriptor(tdo);
    sm90::mbar_arrive_expect_tx(sm.kv_full(), 2 * T::KV_BYTES);
#pragma unroll
    for (int c = 0; c < T::CHUNKS; c++) {
        sm90::tma_load_3d(sm.k() + c * T::BN * T::RB, tk, sm.kv_full(), c * 64, j0, bh);
        sm90::tma_load_3d(sm.v() + c * T::BN * T::RB, tv, sm.kv_full(), c * 64, j0, bh);
    }
    const int first = CAUSAL ? j0 / T::BM : 0, n_q = (S + T::BM - 1) / T::BM;
    const float *lse_row = p.lse2 + (size_t)bh * p.seq_pad, *delta_row = p.delta + (size_t)bh * p.seq_pad;
    for (int m = first, i = 0; m < n_q; m++, i++) {
        const int s = i % T::STAGES, use = i / T::STAGES;
        if (use > 0)
            bwd_wait(sm.q_free(s), (use - 1) & 1, BWD_WAIT_Q_FREE, i);
        sm90::mbar_arrive_expect_tx(sm.q_full(s), 2 * T::QT_BYTES + T::ROW_VALUES_BYTES);
#pragma unroll
        for (int c = 0; c < T::CHUNKS; c++) {
            sm90::tma_load_3d(sm.q(s) + c * T::BM * T::RB, tq, sm.q_full(s), c * 64, m * T::BM, bh);
            sm90::tma_load_3d(sm.dout(s) + c * T::BM * T::RB, tdo, sm.q_full(s), c * 64, m * T::BM, bh);
        }
        sm90::bulk_load(sm.lse(s), lse_row + m * T::BM, T::BM * 4, sm.q_full(s));
        sm90::bulk_load(sm.delta(s), delta_row + m * T::BM, T::BM * 4, sm.q_full(s));
    }
}

// ---- Consumers.

// A consumer thread's place: warpgroup w (0, 1) owns keys 64 w.. of the block; warp, lane, and
// the lane's row g (of 8) and column pair t4 (of 4) in the wgmma accumulator layout.
struct BwdThread {
    int w, tid, warp, lane, g, t4;
};

// A descriptor moved by `bytes` (a multiple of 16): its start address field is the address / 16
// in the low 14 bits, and shared-memory addresses stay below 2^18, so the sum never carries out
// of the field. One descriptor a product, built once, and a constant added per k-step: building
// each anew cost some ten uniform-datapath instructions a wgmma (SASS).
__device__ __forceinline__ uint64_t desc_plus(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

// S^T (or dP^T) = X_w Y^T over D: X the block's K (or V), rows 64 w..; Y the step's Q (or dO)
// tile. Both K-major; a k-step inside a chunk moves the start by 32 bytes (as issue_qk).
template <class T>
__device__ __forceinline__ void issue_scores_t(float (&acc)[T::BM / 2], uint32_t x, uint32_t y, int w)
{
    const uint64_t da = sm90::matrix_descriptor(x + w * 64 * T::RB, 16, T::GROUP, 1);
    const uint64_t db = sm90::matrix_descriptor(y, 16, T::GROUP, 1);
#pragma unroll
    for (int kk = 0; kk < T::D / 16; kk++) {
        const int c = kk / 4, within = (kk % 4) * 32;
        const uint64_t a = desc_plus(da, c * T::BN * T::RB + within), b = desc_plus(db, c * T::BM * T::RB + within);
        if constexpr (T::BM == 64)
            wgmma::ss_n64(acc, a, b, kk > 0);
        else
            wgmma::ss_n128(acc, a, b, kk > 0);
    }
}

// acc += A Y over the step's BM queries: A from registers (P^T or dS^T), Y (dO or Q) the MN-major
// B operand, its column chunks BM * RB bytes apart (as issue_pv).
template <class T>
__device__ __forceinline__ void issue_grad_kv(float (&acc)[T::D / 2], const uint32_t (&a)[T::BM / 16][4], uint32_t y)
{
    const uint64_t db = sm90::matrix_descriptor(y, T::BM * T::RB, T::GROUP, 1);
#pragma unroll
    for (int kk = 0; kk < T::BM / 16; kk++) {
        if constexpr (T::D == 128)
            wgmma::rs_n128(acc, a[kk], desc_plus(db, kk * 16 * T::RB), 1);
        else
            wgmma::rs_n64(acc, a[kk], desc_plus(db, kk * 16 * T::RB), 1);
    }
}

// dQ_w = dS K[:, DQ_COLS w..]: A = dS (queries x keys) read MN-major from the dS^T buffer (rows =
// keys, 64 queries a 128-byte row), B = K MN-major (rows = keys): at D 128 its chunk w, at D 64
// the second half of its one chunk's 128-byte rows for w = 1 (a start 64 bytes into the swizzle
// pattern, as the K-major k-steps start 32 bytes in); k-steps of 16 keys.
template <class T>
__device__ __forceinline__ void issue_dq(float (&acc)[T::DQ_COLS / 2], uint32_t ds, uint32_t k, int w)
{
    const uint32_t b_start = T::D == 128 ? w * T::BN * T::RB : w * T::DQ_COLS * 2;
    const uint64_t da = sm90::matrix_descriptor(ds, T::DS_BYTES, T::GROUP, 1);
    const uint64_t db = sm90::matrix_descriptor(k + b_start, T::BN * T::RB, T::GROUP, 1);
#pragma unroll
    for (int kk = 0; kk < T::BN / 16; kk++) {
        if constexpr (T::DQ_COLS == 64)
            wgmma::ss_tt_n64(acc, desc_plus(da, kk * 16 * T::RB), desc_plus(db, kk * 16 * T::RB), kk > 0);
        else
            wgmma::ss_tt_n32(acc, desc_plus(da, kk * 16 * T::RB), desc_plus(db, kk * 16 * T::RB), kk > 0);
    }
}

// P^T and dS^T from S^T and dP^T in place: element 4 jj + 2 h + e is key row 16 warp + g + 8 h
// of the warpgroup, query column 8 jj + 2 t4 + e of the step. MASK: zero where the key lies
// past the query (causal) or past the sequence end. Split so that P runs while dP^T is still
// in flight (wait between the two calls).
template <int BM, bool CAUSAL, bool MASK>
__device__ __forceinline__ void probabilities(float (&st)[BM / 2], uint32_t lse_s, const BwdThread &t,
                                              float scale_log2, int key0, int q0, int S)
{
#pragma unroll
    for (int jj = 0; jj < BM / 8; jj++) {
        const float2 l = lds_f2(lse_s + (8 * jj + 2 * t.t4) * 4);
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int i = 4 * jj + 2 * h + e;
                float x = fast_exp2(fmaf(st[i], scale_log2, -(e ? l.y : l.x)));
                if (MASK) {
                    const int key = key0 + 8 * h, query = q0 + 8 * jj + 2 * t.t4 + e;
                    if ((CAUSAL && key > query) || key >= S)
                        x = 0.f;
                }
                st[i] = x;
            }
    }
}

template <int BM>
__device__ __forceinline__ void score_grads(const float (&pt)[BM / 2], float (&dpt)[BM / 2], uint32_t delta_s,
                                            const BwdThread &t)
{
#pragma unroll
    for (int jj = 0; jj < BM / 8; jj++) {
        const float2 d = lds_f2(delta_s + (8 * jj + 2 * t.t4) * 4);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            dpt[4 * jj + 2 * h] = pt[4 * jj + 2 * h] * (dpt[4 * jj + 2 * h] - d.x);
            dpt[4 * jj + 2 * h + 1] = pt[4 * jj + 2 * h + 1] * (dpt[4 * jj + 2 * h + 1] - d.y);
        }
    }
}

// The accumulator of a 16-column k-step as the A fragment (as the forward's pack_p).
template <int N> __device__ __forceinline__ void pack_a(const float (&x)[N / 2], uint32_t (&a)[N / 16][4])
{
#pragma unroll
    for (int kk = 0; kk < N / 16; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            a[kk][r] = ptx::pack_bf16x2(x[8 * kk + 2 * r], x[8 * kk + 2 * r + 1]);
}

// dS^T of the warpgroup's 64 keys into rows 64 w.. of the dS^T buffer: a row is 64 queries
// (128 bytes), 16-byte unit jj of row r at unit jj ^ (r % 8) (the 128-byte swizzle TMA and wgmma
// use), r % 8 = g; a warp's 32 stores of one jj hit 32 distinct banks.
template <class T>
__device__ __forceinline__ void store_ds(uint32_t ds, const uint32_t (&a)[T::BM / 16][4], const BwdThread &t)
{
    static_assert(T::BM == 64, "one 128-byte row of queries a key");
    const int r0 = 64 * t.w + 16 * t.warp + t.g;
#pragma unroll
    for (int jj = 0; jj < 8; jj++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            sts_u32(ds + (r0 + 8 * h) * 128 + ((jj ^ t.g) << 4) + 4 * t.t4, a[jj / 2][(jj & 1) * 2 + h]);
}

// dQ_w (64 queries x N columns, m64nN accumulator) into the warpgroup's staging: N / 32 boxes of
// 32 FP32 columns (128-byte rows, 8 KiB each), swizzled as TMA reads them.
template <int N> __device__ __forceinline__ void store_dq(uint32_t dq, const float (&acc)[N / 2], const BwdThread &t)
{
#pragma unroll
    for (int jj = 0; jj < N / 8; jj++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = 16 * t.warp + t.g + 8 * h, unit = 2 * (jj % 4) + (t.t4 >> 1);
            sts_f2(dq + (jj / 4) * 8192 + r * 128 + ((unit ^ t.g) << 4) + 8 * (t.t4 & 1), acc[4 * jj + 2 * h],
                   acc[4 * jj + 2 * h + 1]);
        }
}

// The atomic variant (DQ_RED): dQ_w added to the accumulator from the registers, one
// red.global.add.v2.f32 a register pair (16 a thread and step, as attn_bwd_tc.cu's), rows past S
// skipped.
template <class T>
__device__ __forceinline__ void red_dq(const BwdSm90aParams &p, const float (&acc)[T::DQ_COLS / 2], int bh, int q0,
                                       const BwdThread &t)
{
    float *base = p.dq_acc + ((size_t)bh * p.seq + q0) * T::D + T::DQ_COLS * t.w + 2 * t.t4;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = 16 * t.warp + t.g + 8 * h;
        if (q0 + r >= p.seq)
            continue;
#pragma unroll
        for (int jj = 0; jj < T::DQ_COLS / 8; jj++)
            asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(base + r * T::D + 8 * jj),
                         "f"(acc[4 * jj + 2 * h]), "f"(acc[4 * jj + 2 * h + 1])
                         : "memory");
    }
}

// dK (scaled) and dV of the warpgroup's keys, rows past S not written.
template <int D>
__device__ __forceinline__ void store_kv_grads(const BwdSm90aParams &p, const float (&dk)[D / 2],
                                               const float (&dv)[D / 2], int bh, int key0, const BwdThread &t)
{
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int key = key0 + 8 * h;
        if (key >= p.seq)
            continue;
        const size_t row = ((size_t)bh * p.seq + key) * D;
#pragma unroll
        for (int jj = 0; jj < D / 8; jj++) {
            const int col = 8 * jj + 2 * t.t4, i = 4 * jj + 2 * h;
            *reinterpret_cast<uint32_t *>(p.dk + row + col) =
                ptx::pack_bf16x2(dk[i] * p.scale, dk[i + 1] * p.scale);
            *reinterpret_cast<uint32_t *>(p.dv + row + col) = ptx::pack_bf16x2(dv[i], dv[i + 1]);
        }
    }
}

// One arrival per warp on a stage's free barrier: the warpgroup's wgmma.wait_group has returned,
// so no lane still reads the stage.
__device__ __forceinline__ void release_stage(uint32_t bar, int lane)
{
    __syncwarp();
    if (lane == 0)
        sm90::mbar_arrive(bar);
}

// dQ_w of the step, in registers once its wgmma has completed, to the accumulator: staged in
// shared memory and added by one TMA reduce-add (thread 0 of the warpgroup issues it), or (the
// atomic variant) from the registers.
template <class T, int OPT>
__device__ __forceinline__ void add_dq(const BwdSm90aParams &p, const BwdSm90aSmem<T> &sm, const CUtensorMap *tdq,
                                       const BwdThread &t, const float (&dq)[T::DQ_COLS / 2], int bh, int q0)
{
    if constexpr ((OPT & BWD_OPT_DQ_RED) != 0) {
        red_dq<T>(p, dq, bh, q0, t);
    } else {
        store_dq<T::DQ_COLS>(sm.dq(t.w), dq, t);
        sm90::fence_proxy_async();
        sm90::named_sync(BAR_DQ + t.w, 128);
        if (t.tid == 0) {
#pragma unroll
            for (int b = 0; b < T::DQ_COLS / 32; b++)
                sm90::tma_reduce_add_3d(tdq, sm.dq(t.w) + b * 8192, T::DQ_COLS * t.w + 32 * b, q0, bh);
            sm90::bulk_commit();
        }
    }
}

// Query step i (query tile m) of warpgroup t.w. The wgmma groups in their order of issue:
// S^T, dP^T | dV | dQ | dK. Overlapped (OPT without BWD_OPT_SERIAL, FA3's order): dV goes in
// before the dS^T barrier, so that the tensor cores have work while the warpgroups meet; dK
// after dQ, under the dQ staging. (FA3 leaves dK in flight into the next step, under its S^T and
// dP^T too: written so, ptxas serialized every wgmma of the kernel, C7515, with dK's wgmma in
// flight across the loop's back edge.) Serial: dV and dK issued together before the barrier,
// one wait for the three. The stage is released once its last reader, dK, has completed.
template <class T, bool CAUSAL, int OPT>
__device__ __forceinline__ void bwd_step(const BwdSm90aParams &p, const BwdSm90aSmem<T> &sm, const CUtensorMap *tdq,
                                         const BwdThread &t, float (&dk)[T::D / 2], float (&dv)[T::D / 2], int bh,
                                         int j0, int m, int i)
{
    constexpr bool SERIAL = (OPT & BWD_OPT_SERIAL) != 0, DQ_RED = (OPT & BWD_OPT_DQ_RED) != 0;
    const int s = i % T::STAGES, w = t.w, S = p.seq, q0 = m * T::BM, kw0 = j0 + 64 * w;
    const int key0 = kw0 + 16 * t.warp + t.g; // this thread's key rows: key0, key0 + 8
    bwd_wait(sm.q_full(s), (i / T::STAGES) & 1, BWD_WAIT_Q_FULL, i);
    float st[T::BM / 2], dpt[T::BM / 2];
    sm90::wgmma_fence();
    issue_scores_t<T>(st, sm.k(), sm.q(s), w);
    sm90::wgmma_commit();
    issue_scores_t<T>(dpt, sm.v(), sm.dout(s), w);
    sm90::wgmma_commit();
    sm90::wgmma_wait<1>(); /* S^T */
    sm90::fence_registers(st);
    // Uniform in the warpgroup: a key of it past a query of the step, or past S.
    if ((CAUSAL && kw0 + 63 > q0) || kw0 + 64 > S)
        probabilities<T::BM, CAUSAL, true>(st, sm.lse(s), t, p.scale_log2, key0, q0, S);
    else
        probabilities<T::BM, CAUSAL, false>(st, sm.lse(s), t, p.scale_log2, key0, q0, S);
    sm90::wgmma_wait<0>();
    sm90::fence_registers(dpt);
    score_grads<T::BM>(st, dpt, sm.delta(s), t);
    uint32_t pa[T::BM / 16][4], dsa[T::BM / 16][4];
    pack_a<T::BM>(st, pa);
    pack_a<T::BM>(dpt, dsa);
    const uint32_t ds = sm.ds(i & 1);
    store_ds<T>(ds, dsa, t);
    sm90::wgmma_fence();
    issue_grad_kv<T>(dv, pa, sm.dout(s));
    if (SERIAL)
        issue_grad_kv<T>(dk, dsa, sm.q(s));
    sm90::wgmma_commit();
    sm90::fence_proxy_async();
    if (!DQ_RED && t.tid == 0)
        sm90::bulk_wait_read(); // the previous step's reduce has read this warpgroup's staging
    sm90::named_sync(BAR_DS, 256);
    float dq[T::DQ_COLS / 2];
    sm90::wgmma_fence();
    issue_dq<T>(dq, ds, sm.k(), w);
    sm90::wgmma_commit();
    if constexpr (SERIAL) {
        sm90::wgmma_wait<0>();
        sm90::fence_registers(dq);
        sm90::fence_registers(dk);
        sm90::fence_registers(dv);
        release_stage(sm.q_free(s), t.lane);
        add_dq<T, OPT>(p, sm, tdq, t, dq, bh, q0);
    } else {
        sm90::wgmma_wait<1>(); /* dV (its registers pa may go) */
        sm90::fence_registers(dv);
        sm90::wgmma_fence();
        issue_grad_kv<T>(dk, dsa, sm.q(s));
        sm90::wgmma_commit();
        sm90::wgmma_wait<1>(); /* dQ; dK runs under its staging */
        sm90::fence_registers(dq);
        add_dq<T, OPT>(p, sm, tdq, t, dq, bh, q0);
        sm90::wgmma_wait<0>();
        sm90::fence_registers(dk);
        release_stage(sm.q_free(s), t.lane);
    }
}

template <class T, bool CAUSAL, int OPT>
__device__ __forceinline__ void bwd_consumer(const CUtensorMap *tdq, const BwdSm90aParams &p,
                                             const BwdSm90aSmem<T> &sm, int warpgroup)
{
    sm90::regs_claim<T::CONSUMER_REGS>();
    BwdThread t;
    t.w = warpgroup - 1;
    t.tid = threadIdx.x % 128, t.warp = t.tid / 32, t.lane = t.tid % 32;
    t.g = t.lane / 4, t.t4 = t.lane % 4;
    int key_tile, bh;
    bwd_block_tile(p, key_tile, bh);
    const int j0 = key_tile * T::BN, S = p.seq;
    const int first = CAUSAL ? j0 / T::BM : 0, n_q = (S + T::BM - 1) / T::BM;
    float dk[T::D / 2], dv[T::D / 2];
#pragma unroll
    for (int i = 0; i < T::D / 2; i++)
        dk[i] = dv[i] = 0.f;
    bwd_wait(sm.kv_full(), 0, BWD_WAIT_KV_FULL, -1);
#pragma unroll 1
    for (int m = first, i = 0; m < n_q; m++, i++)
        bwd_step<T, CAUSAL, OPT>(p, sm, tdq, t, dk, dv, bh, j0, m, i);
    store_kv_grads<T::D>(p, dk, dv, bh, j0 + 64 * t.w + 16 * t.warp + t.g, t);
    if ((OPT & BWD_OPT_DQ_RED) == 0 && t.tid == 0)
        sm90::bulk_wait_all(); // the last reduce-add has completed before the block leaves
}

template <class T, bool CAUSAL, int OPT>
__device__ __forceinline__ void bwd_sm90a_body(const CUtensorMap *tq, const CUtensorMap *tk, const CUtensorMap *tv,
                                               const CUtensorMap *tdo, const CUtensorMap *tdq,
                                               const BwdSm90aParams &p)
{
    extern __shared__ unsigned char smem_raw[];
    const BwdSm90aSmem<T> sm((sm90::smem_addr(smem_raw) + 1023u) & ~1023u);
    const int warpgroup = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0);
    if (threadIdx.x == 0)
        sm.init_barriers();
    __syncthreads();
    if (warpgroup == 0)
        bwd_producer<T, CAUSAL>(tq, tk, tv, tdo, p, sm);
    else
        bwd_consumer<T, CAUSAL, OPT>(tdq, p, sm, warpgroup);
}

} // namespace
#endif

// Only the sm_90a pass has a body (the object is built for sm_90a alone; any other target would
// compile a kernel that traps, never launched).
template <int D, int STAGES, bool CAUSAL, int OPT>
__global__ void __launch_bounds__(384, 1)
    attnprof_bwd_sm90a_dkdv(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                            const __grid_constant__ CUtensorMap tv, const __grid_constant__ CUtensorMap tdo,
                            const __grid_constant__ CUtensorMap tdq, BwdSm90aParams p)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __trap();
#else
    bwd_sm90a_body<BwdSm90aTile<D, STAGES>, CAUSAL, OPT>(&tq, &tk, &tv, &tdo, &tdq, p);
#endif
}

// delta and lse * log2 e of row r of [bh][seq_pad] (one warp a row; +inf and 0 past seq), and the
// row's dQ accumulator zeroed.
template <int D>
__global__ void attnprof_bwd_sm90a_prep(const bf16 *out, const bf16 *dout, const float *lse, float *lse2,
                                        float *delta, float *dq_acc, int seq, int seq_pad, size_t rows_pad)
{
    const size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows_pad)
        return;
    const int h = (int)(r / seq_pad), i = (int)(r % seq_pad);
    if (i >= seq) {
        if (lane == 0) {
            lse2[r] = INFINITY;
            delta[r] = 0.f;
        }
        return;
    }
    const size_t row = (size_t)h * seq + i;
    const float x = bwd_row_delta_zero_dq<D>(out, dout, dq_acc, row, lane);
    if (lane == 0) {
        delta[r] = x;
        lse2[r] = lse[row] * kLog2e;
    }
}

// dq = bf16(acc * scale), four elements a thread.
__global__ void attnprof_bwd_sm90a_dq_convert(const float *acc, bf16 *dq, size_t n4, float scale)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4)
        return;
    const float4 a = reinterpret_cast<const float4 *>(acc)[i];
    uint2 packed;
    packed.x = ptx::pack_bf16x2(a.x * scale, a.y * scale);
    packed.y = ptx::pack_bf16x2(a.z * scale, a.w * scale);
    reinterpret_cast<uint2 *>(dq)[i] = packed;
}

// ---- Host.
namespace {

const attn_bwd_sm90a_config kSm90aConfigs[] = {
    {128, 128, 64, 2, 0, 1, "sm90a_d128_n128_m64"},
    {128, 128, 64, 2, 1, 1, "sm90a_d128_n128_m64_red"},
    {128, 128, 64, 2, 0, 0, "sm90a_d128_n128_m64_serial"},
    {128, 128, 64, 3, 0, 1, "sm90a_d128_n128_m64_s3"},
    {64, 128, 64, 2, 0, 1, "sm90a_d64_n128_m64"},
    {64, 128, 64, 2, 1, 1, "sm90a_d64_n128_m64_red"},
};
constexpr int kSm90aConfigCount = (int)(sizeof kSm90aConfigs / sizeof kSm90aConfigs[0]);

// [heads][seq][dim] of bf16 (fp32 false) or FP32; a box is box_cols x box_rows of one head, 128-byte
// swizzle (box_cols * element size = 128 bytes). Rows past seq read as zeros and are not written.
cudaError_t bwd_tensor_map(CUtensorMap *map, const void *ptr, bool fp32, int heads, int seq, int dim, int box_rows)
{
    encode_tiled_fn encode = tensor_map_encoder();
    if (!encode)
        return cudaErrorNotSupported;
    const int esize = fp32 ? 4 : 2;
    const cuuint64_t dims[3] = {(cuuint64_t)dim, (cuuint64_t)seq, (cuuint64_t)heads};
    const cuuint64_t strides[2] = {(cuuint64_t)dim * esize, (cuuint64_t)seq * dim * esize};
    const cuuint32_t box[3] = {(cuuint32_t)(128 / esize), (cuuint32_t)box_rows, 1};
    const cuuint32_t elem_strides[3] = {1, 1, 1};
    const CUresult r = encode(map, fp32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3,
                              const_cast<void *>(ptr), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

template <int D, int STAGES, bool CAUSAL, int OPT>
cudaError_t run_bwd_sm90a(const void *q, const void *k, const void *v, const void *dout, float *dq_acc,
                          const BwdSm90aParams &p, cudaStream_t s)
{
    typedef BwdSm90aTile<D, STAGES> T;
    static cudaError_t prepared = cudaErrorNotReady;
    if (prepared == cudaErrorNotReady)
        prepared = cudaFuncSetAttribute(attnprof_bwd_sm90a_dkdv<D, STAGES, CAUSAL, OPT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)T::SMEM);
    if (prepared != cudaSuccess)
        return prepared;
    CUtensorMap tq, tk, tv, tdo, tdq;
    cudaError_t e;
    if ((e = bwd_tensor_map(&tq, q, false, p.bh, p.seq, D, T::BM)) != cudaSuccess ||
        (e = bwd_tensor_map(&tdo, dout, false, p.bh, p.seq, D, T::BM)) != cudaSuccess ||
        (e = bwd_tensor_map(&tk, k, false, p.bh, p.seq, D, T::BN)) != cudaSuccess ||
        (e = bwd_tensor_map(&tv, v, false, p.bh, p.seq, D, T::BN)) != cudaSuccess ||
        (e = bwd_tensor_map(&tdq, dq_acc, true, p.bh, p.seq, D, 64)) != cudaSuccess)
        return e;
    const unsigned blocks = (unsigned)(((p.seq + T::BN - 1) / T::BN) * p.bh);
    attnprof_bwd_sm90a_dkdv<D, STAGES, CAUSAL, OPT><<<blocks, T::THREADS, T::SMEM, s>>>(tq, tk, tv, tdo, tdq, p);
    return cudaGetLastError();
}

template <int D, int STAGES, int OPT>
cudaError_t run_bwd_sm90a_mask(const void *q, const void *k, const void *v, const void *dout, float *dq_acc,
                               const BwdSm90aParams &p, int causal, cudaStream_t s)
{
    return causal ? run_bwd_sm90a<D, STAGES, true, OPT>(q, k, v, dout, dq_acc, p, s)
                  : run_bwd_sm90a<D, STAGES, false, OPT>(q, k, v, dout, dq_acc, p, s);
}

int seq_padded(int seq) { return (seq + 63) / 64 * 64; }

// The blocks' head groups: Q, dO (bf16) and the dQ accumulator (FP32), 8 seq D bytes a head, in
// half the L2 (as attn_bwd_tc.cu's block_order).
cudaError_t bwd_block_order(BwdSm90aParams &p, int block_n, int dim)
{
    int dev = 0, l2 = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    if (e != cudaSuccess)
        return e;
    const int n_kt = (p.seq + block_n - 1) / block_n;
    p.order = flash_tile_order_make(n_kt, p.bh, flash_heads_per_group(l2, p.seq, 2 * dim, p.bh));
    return cudaSuccess;
}

} // namespace

extern "C" int attn_bwd_sm90a_available(void)
{
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        return 0;
    return major == 9 && minor == 0 && tensor_map_encoder() != nullptr;
}

extern "C" int attn_bwd_sm90a_config_count(void) { return kSm90aConfigCount; }
extern "C" const attn_bwd_sm90a_config *attn_bwd_sm90a_config_at(int i)
{
    return i >= 0 && i < kSm90aConfigCount ? &kSm90aConfigs[i] : nullptr;
}

extern "C" size_t attn_bwd_sm90a_workspace_floats(int bh, int seq, int dim)
{
    return (size_t)bh * seq * dim + 2 * (size_t)bh * seq_padded(seq);
}

extern "C" cudaError_t launch_attn_bwd_sm90a(const void *q, const void *k, const void *v, const void *out,
                                             const void *dout, const float *lse, float *workspace, void *dq, void *dk,
                                             void *dv, int bh, int seq, int dim, int causal, int config, cudaStream_t s)
{
    if ((dim != 128 && dim != 64) || bh < 1 || seq < 1 || (long long)bh * seq * dim >= (1ll << 31) || config < 0 ||
        config >= kSm90aConfigCount || kSm90aConfigs[config].head_dim != dim)
        return cudaErrorInvalidValue;
    const size_t rows = (size_t)bh * seq, rows_pad = (size_t)bh * seq_padded(seq);
    float *dq_acc = workspace, *lse2 = workspace + rows * dim, *delta = lse2 + rows_pad;
    const unsigned prep_blocks = (unsigned)((rows_pad * 32 + 255) / 256);
    const bf16 *ob = static_cast<const bf16 *>(out), *dob = static_cast<const bf16 *>(dout);
    if (dim == 128)
        attnprof_bwd_sm90a_prep<128><<<prep_blocks, 256, 0, s>>>(ob, dob, lse, lse2, delta, dq_acc, seq,
                                                                seq_padded(seq), rows_pad);
    else
        attnprof_bwd_sm90a_prep<64><<<prep_blocks, 256, 0, s>>>(ob, dob, lse, lse2, delta, dq_acc, seq,
                                                               seq_padded(seq), rows_pad);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    BwdSm90aParams p;
    p.lse2 = lse2;
    p.delta = delta;
    p.dk = static_cast<bf16 *>(dk);
    p.dv = static_cast<bf16 *>(dv);
    p.seq = seq;
    p.seq_pad = seq_padded(seq);
    p.bh = bh;
    p.scale = 1.0f / sqrtf((float)dim);
    p.scale_log2 = p.scale * kLog2e;
    if ((e = bwd_block_order(p, kSm90aConfigs[config].block_n, dim)) != cudaSuccess)
        return e;
    p.dq_acc = dq_acc;
    switch (config) {
    case 0: e = run_bwd_sm90a_mask<128, 2, 0>(q, k, v, dout, dq_acc, p, causal, s); break;
    case 1: e = run_bwd_sm90a_mask<128, 2, BWD_OPT_DQ_RED>(q, k, v, dout, dq_acc, p, causal, s); break;
    case 2: e = run_bwd_sm90a_mask<128, 2, BWD_OPT_SERIAL>(q, k, v, dout, dq_acc, p, causal, s); break;
    case 3: e = run_bwd_sm90a_mask<128, 3, 0>(q, k, v, dout, dq_acc, p, causal, s); break;
    case 4: e = run_bwd_sm90a_mask<64, 2, 0>(q, k, v, dout, dq_acc, p, causal, s); break;
    case 5: e = run_bwd_sm90a_mask<64, 2, BWD_OPT_DQ_RED>(q, k, v, dout, dq_acc, p, causal, s); break;
    default: e = cudaErrorInvalidValue;
    }
    if (e != cudaSuccess)
        return e;
    const size_t n4 = rows * dim / 4;
    attnprof_bwd_sm90a_dq_convert<<<(unsigned)((n4 + 255) / 256), 256, 0, s>>>(dq_acc, static_cast<bf16 *>(dq), n4,
                                                                              p.scale);
    return cudaGetLastError();
}
