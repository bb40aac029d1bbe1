/* Memory-efficient causal attention forward in the xformers/CUTLASS style:
 * one fused kernel, 64 queries x 64 keys per step, 4 warps of 16 query rows
 * each, the working set (Q fragments, scores, output accumulator) in
 * registers, tensor-core mma.sync m16n8k16 bf16 with fp32 accumulation, and an
 * online softmax in the natural-exp domain.
 *
 * Unlike the flash kernel there is no multi-stage K/V pipeline: each step
 * copies one K tile and one V tile into shared memory, computes the scores as
 * soon as K has landed (V still in flight), then waits for V. Latency is hidden
 * by running several blocks per multiprocessor instead. Blocks are numbered in
 * plain (query tile, head) order, and no log-sum-exp is kept. */
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
    int seq;
    float scale; /* 1 / sqrt(D) */
};

namespace {

using namespace ptx;

constexpr int EFF_BM = 64, EFF_BN = 64, EFF_WARPS = 4, EFF_THREADS = EFF_WARPS * 32;

/* 64 x D tile into shared memory rows of D + 8 elements (the 16-byte pad puts
 * the 8 rows of an ldmatrix phase in 8 different bank groups). The source row
 * is clamped, and rows at or past rows_valid are zero-filled. */
template <int D>
__device__ __forceinline__ void load_tile_async(bf16 *sdst, const bf16 *gsrc, int rows_valid, int tid)
{
    constexpr int LD = D + 8, CHUNKS_PER_ROW = D / 8, STEP = EFF_THREADS / CHUNKS_PER_ROW;
    static_assert(EFF_BM % STEP == 0, "tile copy must divide evenly among threads");
    const int row0 = tid / CHUNKS_PER_ROW, chunk = tid % CHUNKS_PER_ROW;
    const uint32_t dst = smem_addr(sdst + row0 * LD + chunk * 8);
#pragma unroll
    for (int i = 0; i < EFF_BM / STEP; i++) {
        const int row = row0 + i * STEP;
        cp_async_16(dst + i * STEP * LD * 2, gsrc + min(row, rows_valid - 1) * D + chunk * 8,
                    row < rows_valid);
    }
}

template <int D> struct EfficientTile {
    static constexpr int LD = D + 8;
    static constexpr size_t SMEM = (size_t)(EFF_BM + 2 * EFF_BN) * LD * sizeof(bf16);
};

template <int D> __device__ __forceinline__ void efficient_fwd_body(const EfficientParams &p)
{
    constexpr int LD = D + 8;
    constexpr int NT = EFF_BN / 8, DT = D / 8, KD = D / 16, KN = EFF_BN / 16;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    bf16 *sQ = reinterpret_cast<bf16 *>(smem_raw);
    bf16 *sK = sQ + EFF_BM * LD;
    bf16 *sV = sK + EFF_BN * LD;

    const int S = p.seq;
    const int q0 = blockIdx.x * EFF_BM;
    const size_t head_off = (size_t)blockIdx.y * S * D;
    const bf16 *Q = p.q + head_off, *K = p.k + head_off, *V = p.v + head_off;

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t4 = lane & 3;
    const int wrow0 = q0 + warp * 16;
    const bool warp_has_rows = wrow0 < S;
    const int n_kt = (min(q0 + EFF_BM, S) + EFF_BN - 1) / EFF_BN;

    load_tile_async<D>(sQ, Q + (size_t)q0 * D, S - q0, tid);
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
    uint32_t qf[KD][4];
    const float scale = p.scale;

    for (int kt = 0; kt < n_kt; kt++) {
        const int k0 = kt * EFF_BN;
        load_tile_async<D>(sK, K + (size_t)k0 * D, S - k0, tid);
        cp_async_commit();
        load_tile_async<D>(sV, V + (size_t)k0 * D, S - k0, tid);
        cp_async_commit();
        cp_async_wait<1>(); /* Q (first step) and K have landed; V may still be in flight */
        __syncthreads();
        if (kt == 0) {
#pragma unroll
            for (int kk = 0; kk < KD; kk++)
                ldmatrix_x4(q_lane + kk * 32, qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3]);
        }

        const bool active = warp_has_rows && k0 <= wrow0 + 15;
        uint32_t pa[KN][4];
        if (active) {
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
                    ldmatrix_x4(k_lane + np * 16 * LD * 2 + kk * 32, b0, b1, b2, b3);
                    mma_bf16_16816(s[2 * np], qf[kk], b0, b1);
                    mma_bf16_16816(s[2 * np + 1], qf[kk], b2, b3);
                }

            const bool needs_mask = k0 + EFF_BN - 1 > wrow0;
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const int row = wrow0 + g + ((i >> 1) << 3);
                    const int col = k0 + nt * 8 + 2 * t4 + (i & 1);
                    s[nt][i] = (needs_mask && col > row) ? -INFINITY : s[nt][i] * scale;
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
     * contiguous bytes of a row per 8-wide tile. */
    bf16 *O = p.o + head_off;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float l = row_sum[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const float inv = l > 0.f ? 1.f / l : 0.f;
        const int row = wrow0 + g + 8 * h;
        if (row < S) {
#pragma unroll
            for (int dt = 0; dt < DT; dt++)
                *reinterpret_cast<uint32_t *>(O + (size_t)row * D + dt * 8 + 2 * t4) =
                    pack_bf16x2(o[dt][2 * h] * inv, o[dt][2 * h + 1] * inv);
        }
    }
}

} // namespace

#define ATTNPROF_EFFICIENT_KERNEL(D)                                                               \
    extern "C" __global__ void __launch_bounds__(EFF_THREADS)                                     \
        attnprof_efficient_fwd_bf16_d##D##_64x64_w4(EfficientParams p)                             \
    {                                                                                              \
        efficient_fwd_body<D>(p);                                                                  \
    }

ATTNPROF_EFFICIENT_KERNEL(64)
ATTNPROF_EFFICIENT_KERNEL(128)

namespace {

typedef void (*efficient_kernel_fn)(EfficientParams);

struct EfficientEntry {
    efficient_fwd_config cfg;
    efficient_kernel_fn fn;
};

#define ATTNPROF_EFFICIENT_ENTRY(D)                                                                \
    {{"attnprof_efficient_fwd_bf16_d" #D "_64x64_w4", D, EFF_BM, EFF_BN, EFF_WARPS, EFF_THREADS,   \
      EfficientTile<D>::SMEM, "mma.sync m16n8k16 + ldmatrix + cp.async (sm_80+)"},                 \
     attnprof_efficient_fwd_bf16_d##D##_64x64_w4}

const EfficientEntry efficient_entries[] = {ATTNPROF_EFFICIENT_ENTRY(64), ATTNPROF_EFFICIENT_ENTRY(128)};
const int efficient_entry_count = (int)(sizeof efficient_entries / sizeof efficient_entries[0]);

} // namespace

extern "C" int efficient_fwd_config_count(void) { return efficient_entry_count; }

extern "C" const efficient_fwd_config *efficient_fwd_config_at(int i)
{
    return i >= 0 && i < efficient_entry_count ? &efficient_entries[i].cfg : NULL;
}

extern "C" int efficient_fwd_default_config(int head_dim, int cc_major, int cc_minor)
{
    (void)cc_minor;
    /* Dispatch point: sm_80 and later run the portable mma.sync kernels; a
     * Hopper (sm_90a wgmma) kernel would be chosen here for cc_major == 9. */
    if (cc_major < 8)
        return -1;
    for (int i = 0; i < efficient_entry_count; i++)
        if (efficient_entries[i].cfg.head_dim == head_dim)
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

extern "C" cudaError_t launch_efficient_fwd(int config, const void *q, const void *k, const void *v,
                                            void *out, int batch, int heads, int seq,
                                            cudaStream_t stream)
{
    if (config < 0 || config >= efficient_entry_count || batch < 1 || heads < 1 || seq < 1)
        return cudaErrorInvalidValue;
    const EfficientEntry &e = efficient_entries[config];
    const long long bh = (long long)batch * heads;
    if (bh > 65535)
        return cudaErrorInvalidValue; /* grid.y limit */
    EfficientParams p;
    p.q = static_cast<const bf16 *>(q);
    p.k = static_cast<const bf16 *>(k);
    p.v = static_cast<const bf16 *>(v);
    p.o = static_cast<bf16 *>(out);
    p.seq = seq;
    p.scale = (float)(1.0 / sqrt((double)e.cfg.head_dim));
    const dim3 grid((unsigned)((seq + EFF_BM - 1) / EFF_BM), (unsigned)bh);
    e.fn<<<grid, e.cfg.threads, e.cfg.smem_bytes, stream>>>(p);
    return cudaGetLastError();
}
