/* Memory-efficient causal attention forward in the xformers/CUTLASS style:
 * one fused kernel, 64 queries x BN keys per step (BN = 64 for every head dim
 * so far), 4 warps of 16 query rows each, the working set (Q fragments, scores,
 * output accumulator) in registers, tensor-core mma.sync m16n8k16 bf16 with
 * fp32 accumulation, and an online softmax in the natural-exp domain. At
 * D = 256 the output accumulator alone is 128 registers per lane, so the Q
 * fragments are read from shared memory at every key step instead of being
 * kept in registers.
 *
 * Unlike the flash kernel there is no multi-stage K/V pipeline: each step
 * copies one K tile and one V tile into shared memory, computes the scores as
 * soon as K has landed (V still in flight), then waits for V. Latency is hidden
 * by running several blocks per multiprocessor instead. Blocks are numbered in
 * plain (query tile, head) order, and no log-sum-exp is kept.
 *
 * Each kernel is compiled for one head dim D and also runs any smaller head dim
 * that is a multiple of 8 (the runtime head_dim, the global row stride): column
 * chunks at or past it are zero-filled in shared memory and never stored.
 *
 * Grouped-query attention is native: a block of query head h reads the K and V of
 * key/value head h / group, no copy. With fewer queries than keys (decode) the causal
 * mask is aligned to the end of the keys: query row r sees keys 0 .. r + seq - q_seq. */
#include "efficient_fwd.h"

#include <cuda_bf16.h>
#include "ptx_bf16.cuh"
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

typedef __nv_bfloat16 bf16;

/* Kernel arguments, passed by value (outside the anonymous namespace: the
 * extern "C" kernels take it). */
struct EfficientParams {
    const bf16 *q, *k, *v;
    bf16 *o;
    int q_seq;    /* query rows per head */
    int seq;      /* keys (and values) per head */
    int heads;    /* query heads */
    int group;    /* query heads per key/value head (grouped-query attention; 1: MHA) */
    int head_dim; /* real D <= the compiled D: row stride in global memory */
    float scale;  /* 1 / sqrt(head_dim) */
};

namespace {

using namespace ptx;

constexpr int EFF_BM = 64, EFF_WARPS = 4, EFF_THREADS = EFF_WARPS * 32;

/* ROWS x D tile from global (rows first_row... of a head at ghead, row stride
 * ld = the real head dim) into shared-memory rows of D + 8 elements (the 16-byte
 * pad puts the 8 rows of an ldmatrix phase in 8 different bank groups). Rows at
 * or past seq and column chunks at or past ld are zero-filled; source rows and
 * columns are clamped so that every address stays inside the head. Where the
 * threads are no multiple of the chunks per row (D = 96: 12), the spare threads
 * copy nothing and the last pass covers the rows that are left. */
template <int D, int ROWS>
__device__ __forceinline__ void load_tile_async(bf16 *sdst, const bf16 *ghead, int first_row, int seq, int ld,
                                                int tid)
{
    constexpr int LD = D + 8, CHUNKS_PER_ROW = D / 8, STEP = EFF_THREADS / CHUNKS_PER_ROW;
    constexpr int PASSES = (ROWS + STEP - 1) / STEP;
    static_assert(STEP >= 1, "a pass copies at least one whole row");
    const int row0 = tid / CHUNKS_PER_ROW, chunk = tid % CHUNKS_PER_ROW;
    if (EFF_THREADS % CHUNKS_PER_ROW != 0 && row0 >= STEP)
        return;
    const bool col_valid = chunk * 8 < ld;
    const bf16 *src = ghead + (col_valid ? chunk * 8 : 0);
    const uint32_t dst = smem_addr(sdst + row0 * LD + chunk * 8);
#pragma unroll
    for (int i = 0; i < PASSES; i++) {
        const int row = first_row + row0 + i * STEP;
        if (ROWS % STEP == 0 || row0 + i * STEP < ROWS)
            cp_async_16(dst + i * STEP * LD * 2, src + min(row, seq - 1) * ld, col_valid && row < seq);
    }
}

template <int D, int BN> struct EfficientTile {
    static constexpr int LD = D + 8;
    static constexpr int NT = BN / 8, DT = D / 8, KD = D / 16, KN = BN / 16;
    /* Q fragments (KD * 4 registers) stay in registers unless the output
     * accumulator (DT * 4) is already 128 registers (D = 256). */
    static constexpr bool Q_IN_REGS = DT * 4 < 128;
    static constexpr size_t SMEM = (size_t)(EFF_BM + 2 * BN) * LD * sizeof(bf16);
    static_assert(NT % 2 == 0 && DT % 2 == 0, "ldmatrix.x4 loads two 8-wide tiles");
};

template <int D, int BN> __device__ __forceinline__ void efficient_fwd_body(const EfficientParams &p)
{
    typedef EfficientTile<D, BN> T;
    constexpr int LD = T::LD, NT = T::NT, DT = T::DT, KD = T::KD, KN = T::KN;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    bf16 *sQ = reinterpret_cast<bf16 *>(smem_raw);
    bf16 *sK = sQ + EFF_BM * LD;
    bf16 *sV = sK + BN * LD;

    const int S = p.seq, SQ = p.q_seq;
    const int off = S - SQ; /* bottom-right causal: query row r sees keys 0 .. r + off */
    const int q0 = blockIdx.x * EFF_BM;
    const int ld = p.head_dim;
    /* Grouped-query attention: query head h of batch b reads key/value head h / group. */
    const int bh = blockIdx.y, kv_bh = (bh / p.heads) * (p.heads / p.group) + (bh % p.heads) / p.group;
    const size_t head_off = (size_t)bh * SQ * ld, kv_off = (size_t)kv_bh * S * ld;
    const bf16 *Q = p.q + head_off, *K = p.k + kv_off, *V = p.v + kv_off;

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t4 = lane & 3;
    const int wrow0 = q0 + warp * 16;
    const bool warp_has_rows = wrow0 < SQ;
    const int n_kt = (min(q0 + EFF_BM + off, S) + BN - 1) / BN;

    load_tile_async<D, EFF_BM>(sQ, Q, q0, SQ, ld, tid);
    cp_async_commit();

    /* ldmatrix lane addresses: Q as the A operand, K non-transposed and V
     * transposed as B operands (see the flash kernel for the lane mapping). */
    const uint32_t q_lane =
        smem_addr(sQ) + (uint32_t)((warp * 16 + (lane & 15)) * LD * 2) + (uint32_t)((lane >> 4) << 4);
    const uint32_t k_lane = smem_addr(sK) + (uint32_t)((((lane >> 4) << 3) + (lane & 7)) * LD * 2) +
                            (uint32_t)(((lane >> 3) & 1) << 4);
    const uint32_t v_lane = smem_addr(sV) +
                            (uint32_t)(((((lane >> 3) & 1) << 3) + (lane & 7)) * LD * 2) +
                            (uint32_t)((lane >> 4) << 4);

    float o[DT][4];
#pragma unroll
    for (int dt = 0; dt < DT; dt++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            o[dt][i] = 0.f;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
    uint32_t qf[T::Q_IN_REGS ? KD : 1][4];
    const float scale = p.scale;

    for (int kt = 0; kt < n_kt; kt++) {
        const int k0 = kt * BN;
        load_tile_async<D, BN>(sK, K, k0, S, ld, tid);
        cp_async_commit();
        load_tile_async<D, BN>(sV, V, k0, S, ld, tid);
        cp_async_commit();
        cp_async_wait<1>(); /* Q (first step) and K have landed; V may still be in flight */
        __syncthreads();
        if constexpr (T::Q_IN_REGS) {
            if (kt == 0) {
#pragma unroll
                for (int kk = 0; kk < KD; kk++)
                    ldmatrix_x4(q_lane + kk * 32, qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3]);
            }
        }

        const bool active = warp_has_rows && k0 <= wrow0 + 15 + off;
        uint32_t pa[KN][4];
        if (active) {
            float s[NT][4];
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    s[nt][i] = 0.f;
#pragma unroll
            for (int kk = 0; kk < KD; kk++) {
                uint32_t a[4];
                if constexpr (T::Q_IN_REGS) {
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        a[i] = qf[kk][i];
                } else {
                    ldmatrix_x4(q_lane + kk * 32, a[0], a[1], a[2], a[3]);
                }
#pragma unroll
                for (int np = 0; np < NT / 2; np++) {
                    uint32_t b0, b1, b2, b3;
                    ldmatrix_x4(k_lane + np * 16 * LD * 2 + kk * 32, b0, b1, b2, b3);
                    mma_bf16_16816(s[2 * np], a, b0, b1);
                    mma_bf16_16816(s[2 * np + 1], a, b2, b3);
                }
            }

            const bool needs_mask = k0 + BN - 1 > wrow0 + off;
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const int row = wrow0 + g + ((i >> 1) << 3);
                    const int col = k0 + nt * 8 + 2 * t4 + (i & 1);
                    s[nt][i] = (needs_mask && col > row + off) ? -INFINITY : s[nt][i] * scale;
                }

#pragma unroll
            for (int h = 0; h < 2; h++) {
                float mx = -INFINITY;
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
                    mx = fmaxf(mx, fmaxf(s[nt][2 * h], s[nt][2 * h + 1]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                const float m_new = fmaxf(row_max[h], mx);
                const float m_use = m_new == -INFINITY ? 0.f : m_new;
                const float alpha = __expf(row_max[h] - m_use);
                row_max[h] = m_new;
                float sum = 0.f;
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
#pragma unroll
                    for (int j = 0; j < 2; j++) {
                        const float e = __expf(s[nt][2 * h + j] - m_use);
                        s[nt][2 * h + j] = e;
                        sum += e;
                    }
                row_sum[h] = row_sum[h] * alpha + sum;
#pragma unroll
                for (int dt = 0; dt < DT; dt++) {
                    o[dt][2 * h] *= alpha;
                    o[dt][2 * h + 1] *= alpha;
                }
            }
#pragma unroll
            for (int kk = 0; kk < KN; kk++) {
                pa[kk][0] = pack_bf16x2(s[2 * kk][0], s[2 * kk][1]);
                pa[kk][1] = pack_bf16x2(s[2 * kk][2], s[2 * kk][3]);
                pa[kk][2] = pack_bf16x2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
                pa[kk][3] = pack_bf16x2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
            }
        }

        cp_async_wait<0>(); /* V */
        __syncthreads();
        if (active) {
#pragma unroll
            for (int kk = 0; kk < KN; kk++)
#pragma unroll
                for (int dp = 0; dp < DT / 2; dp++) {
                    uint32_t b0, b1, b2, b3;
                    ldmatrix_x4_trans(v_lane + kk * 16 * LD * 2 + dp * 32, b0, b1, b2, b3);
                    mma_bf16_16816(o[2 * dp], pa[kk], b0, b1);
                    mma_bf16_16816(o[2 * dp + 1], pa[kk], b2, b3);
                }
        }
        __syncthreads(); /* K and V buffers are refilled next step */
    }

    /* Normalize and store straight from the accumulators: each quad writes 16
     * contiguous bytes of a row per 8-wide tile, the tiles below the real head
     * dim only (the padded ones hold zeros). */
    bf16 *O = p.o + head_off;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float l = row_sum[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const float inv = l > 0.f ? 1.f / l : 0.f;
        const int row = wrow0 + g + 8 * h;
        if (row < SQ) {
#pragma unroll
            for (int dt = 0; dt < DT; dt++)
                if (dt * 8 < ld)
                    *reinterpret_cast<uint32_t *>(O + (size_t)row * ld + dt * 8 + 2 * t4) =
                        pack_bf16x2(o[dt][2 * h] * inv, o[dt][2 * h + 1] * inv);
        }
    }
}

} // namespace

/* One extern "C" kernel per head dim; the name CUPTI records is the name
 * written here. */
#define ATTNPROF_EFFICIENT_KERNEL(D, BN)                                                           \
    extern "C" __global__ void __launch_bounds__(EFF_THREADS)                                     \
        attnprof_efficient_fwd_bf16_d##D##_64x##BN##_w4(EfficientParams p)                         \
    {                                                                                              \
        efficient_fwd_body<D, BN>(p);                                                              \
    }

ATTNPROF_EFFICIENT_KERNEL(32, 64)
ATTNPROF_EFFICIENT_KERNEL(64, 64)
ATTNPROF_EFFICIENT_KERNEL(96, 64)
ATTNPROF_EFFICIENT_KERNEL(128, 64)
ATTNPROF_EFFICIENT_KERNEL(256, 64)

namespace {

typedef void (*efficient_kernel_fn)(EfficientParams);

struct EfficientEntry {
    efficient_fwd_config cfg;
    efficient_kernel_fn fn;
};

#define ATTNPROF_EFFICIENT_ENTRY(D, BN, NOTE)                                                      \
    {{"attnprof_efficient_fwd_bf16_d" #D "_64x" #BN "_w4", D, EFF_BM, BN, EFF_WARPS, EFF_THREADS,  \
      EfficientTile<D, BN>::SMEM, "mma.sync m16n8k16 + ldmatrix + cp.async (sm_80+); " NOTE},      \
     attnprof_efficient_fwd_bf16_d##D##_64x##BN##_w4}
#define NOTE_Q_REGS "Q fragments in registers"
#define NOTE_Q_SMEM "Q fragments re-read from shared memory every key step"

/* One configuration per head dim, in increasing order: it is the default for
 * its head dim and the one efficient_fwd_padded_dim rounds up to. */
const EfficientEntry efficient_entries[] = {
    ATTNPROF_EFFICIENT_ENTRY(32, 64, NOTE_Q_REGS),  ATTNPROF_EFFICIENT_ENTRY(64, 64, NOTE_Q_REGS),
    ATTNPROF_EFFICIENT_ENTRY(96, 64, NOTE_Q_REGS),  ATTNPROF_EFFICIENT_ENTRY(128, 64, NOTE_Q_REGS),
    ATTNPROF_EFFICIENT_ENTRY(256, 64, NOTE_Q_SMEM),
};
const int efficient_entry_count = (int)(sizeof efficient_entries / sizeof efficient_entries[0]);

} // namespace

extern "C" int efficient_fwd_config_count(void) { return efficient_entry_count; }

extern "C" const efficient_fwd_config *efficient_fwd_config_at(int i)
{
    return i >= 0 && i < efficient_entry_count ? &efficient_entries[i].cfg : NULL;
}

extern "C" int efficient_fwd_padded_dim(int head_dim)
{
    if (head_dim < 8 || head_dim % 8 != 0)
        return -1;
    for (int i = 0; i < efficient_entry_count; i++) /* increasing head dims */
        if (efficient_entries[i].cfg.head_dim >= head_dim)
            return efficient_entries[i].cfg.head_dim;
    return -1;
}

extern "C" int efficient_fwd_default_config(int head_dim, int cc_major, int cc_minor)
{
    (void)cc_minor;
    /* Dispatch point: sm_80 and later run the portable mma.sync kernels; a
     * Hopper (sm_90a wgmma) kernel would be chosen here for cc_major == 9. */
    const int d = efficient_fwd_padded_dim(head_dim);
    if (cc_major < 8 || d < 0)
        return -1;
    for (int i = 0; i < efficient_entry_count; i++)
        if (efficient_entries[i].cfg.head_dim == d)
            return i;
    return -1;
}

extern "C" cudaError_t efficient_fwd_prepare(int config)
{
    if (config < 0 || config >= efficient_entry_count)
        return cudaErrorInvalidValue;
    const EfficientEntry &e = efficient_entries[config];
    return cudaFuncSetAttribute(e.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)e.cfg.smem_bytes);
}

extern "C" cudaError_t efficient_fwd_blocks_per_sm(int config, int *blocks)
{
    if (config < 0 || config >= efficient_entry_count || !blocks)
        return cudaErrorInvalidValue;
    const EfficientEntry &e = efficient_entries[config];
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, e.fn, e.cfg.threads, e.cfg.smem_bytes);
}

extern "C" cudaError_t launch_efficient_fwd_gqa(int config, const void *q, const void *k, const void *v, void *out,
                                                int batch, int heads, int kv_heads, int q_seq, int seq, int head_dim,
                                                cudaStream_t stream)
{
    if (config < 0 || config >= efficient_entry_count || batch < 1 || heads < 1 || seq < 1 || kv_heads < 1 ||
        heads % kv_heads != 0 || q_seq < 1 || q_seq > seq)
        return cudaErrorInvalidValue;
    const EfficientEntry &e = efficient_entries[config];
    if (head_dim < 8 || head_dim % 8 != 0 || head_dim > e.cfg.head_dim)
        return cudaErrorInvalidValue;
    /* Offsets inside one head are computed in int. */
    if ((long long)seq * head_dim > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    const long long bh = (long long)batch * heads;
    if (bh > 65535)
        return cudaErrorInvalidValue; /* grid.y limit */
    EfficientParams p;
    p.q = static_cast<const bf16 *>(q);
    p.k = static_cast<const bf16 *>(k);
    p.v = static_cast<const bf16 *>(v);
    p.o = static_cast<bf16 *>(out);
    p.q_seq = q_seq;
    p.seq = seq;
    p.heads = heads;
    p.group = heads / kv_heads;
    p.head_dim = head_dim;
    p.scale = (float)(1.0 / sqrt((double)head_dim));
    const dim3 grid((unsigned)((q_seq + EFF_BM - 1) / EFF_BM), (unsigned)bh);
    e.fn<<<grid, e.cfg.threads, e.cfg.smem_bytes, stream>>>(p);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_efficient_fwd(int config, const void *q, const void *k, const void *v,
                                            void *out, int batch, int heads, int seq, int head_dim,
                                            cudaStream_t stream)
{
    return launch_efficient_fwd_gqa(config, q, k, v, out, batch, heads, heads, seq, seq, head_dim, stream);
}
