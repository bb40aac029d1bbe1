// Backward kernels (attn_bwd.h): softmax's backward for the unfused chains, and the fused
// FlashAttention-2-style backward in plain FP32 (delta pre-pass, dK/dV with K/V tiles outer,
// dQ in a second pass with Q tiles outer). Correctness first: the tiles live in FP32 shared
// memory with one thread per key (dK/dV) or per query (dQ); the tensor-core version is future
// work, and the report's numbers say how far this one is from PyTorch's.
#include "attn_bwd.h"

#include <cuda_bf16.h>
#include <math.h>

namespace {

constexpr int kRowThreads = 256;
constexpr int kTile = 64;  // keys (dK/dV) or queries (dQ) per block, one thread each
constexpr int kChunk = 16; // query rows (dK/dV) or keys (dQ) staged per step

__device__ inline float ld(const __nv_bfloat16 *p, size_t i) { return __bfloat162float(p[i]); }
__device__ inline float ld(const float *p, size_t i) { return p[i]; }
__device__ inline void st(__nv_bfloat16 *p, size_t i, float x) { p[i] = __float2bfloat16(x); }
__device__ inline void st(float *p, size_t i, float x) { p[i] = x; }

__device__ float block_sum(float x, float *red)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    __syncthreads(); // red is reused row after row
    if (lane == 0)
        red[warp] = x;
    __syncthreads();
    float t = 0.f;
    for (int w = 0; w < warps; w++)
        t += red[w];
    return t;
}

template <typename T>
__device__ void softmax_bwd_rows(const T *p, const T *dp, T *dx, size_t rows, int cols)
{
    __shared__ float red[kRowThreads / 32];
    for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const size_t base = r * (size_t)cols;
        float acc = 0.f;
        for (int j = threadIdx.x; j < cols; j += blockDim.x)
            acc += ld(p, base + j) * ld(dp, base + j);
        const float sum = block_sum(acc, red);
        for (int j = threadIdx.x; j < cols; j += blockDim.x) {
            const float pj = ld(p, base + j);
            st(dx, base + j, pj * (ld(dp, base + j) - sum));
        }
    }
}

} // namespace

extern "C" __global__ void attnprof_bwd_softmax_bf16(const __nv_bfloat16 *p, const __nv_bfloat16 *dp,
                                                     __nv_bfloat16 *dx, size_t rows, int cols)
{
    softmax_bwd_rows(p, dp, dx, rows, cols);
}

extern "C" __global__ void attnprof_bwd_softmax_f32(const float *p, const float *dp, float *dx, size_t rows,
                                                    int cols)
{
    softmax_bwd_rows(p, dp, dx, rows, cols);
}

static int row_grid(size_t rows)
{
    return (int)(rows < 65535 * 16 ? rows : 65535 * 16);
}

extern "C" cudaError_t launch_softmax_bwd_bf16(const void *p, const void *dp, void *dx, size_t rows, int cols,
                                               cudaStream_t s)
{
    if (!rows || cols < 1)
        return cudaErrorInvalidValue;
    attnprof_bwd_softmax_bf16<<<row_grid(rows), kRowThreads, 0, s>>>(
        static_cast<const __nv_bfloat16 *>(p), static_cast<const __nv_bfloat16 *>(dp),
        static_cast<__nv_bfloat16 *>(dx), rows, cols);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_softmax_bwd_f32(const float *p, const float *dp, float *dx, size_t rows, int cols,
                                              cudaStream_t s)
{
    if (!rows || cols < 1)
        return cudaErrorInvalidValue;
    attnprof_bwd_softmax_f32<<<row_grid(rows), kRowThreads, 0, s>>>(p, dp, dx, rows, cols);
    return cudaGetLastError();
}

// Loads rows [r0, r0 + n) of a [seq, dim] head into smem rows of `pitch` floats, zero past seq
// and past dim (up to the padded DP), by all threads of the block.
template <int DP>
__device__ void stage_rows(float *dst, int pitch, const __nv_bfloat16 *head, int r0, int n, int seq, int dim)
{
    for (int e = threadIdx.x; e < n * DP; e += blockDim.x) {
        const int r = e / DP, d = e % DP, row = r0 + r;
        dst[r * pitch + d] = (row < seq && d < dim) ? __bfloat162float(head[(size_t)row * dim + d]) : 0.f;
    }
}

__device__ inline float dot_rows(const float *a, const float *b, int n)
{
    float x = 0.f;
    for (int d = 0; d < n; d++)
        x = fmaf(a[d], b[d], x);
    return x;
}

// lse of query row i: one thread per row, keys staged kChunk at a time (online max and sum).
template <int DP>
__global__ void __launch_bounds__(kTile) attnprof_bwd_lse(const __nv_bfloat16 *q, const __nv_bfloat16 *k,
                                                             float *lse, int seq, int dim, float scale)
{
    extern __shared__ float sm[];
    float *qs = sm, *kc = qs + kTile * (DP + 1);
    const size_t head = (size_t)blockIdx.y * seq * dim;
    const int i0 = blockIdx.x * kTile, t = threadIdx.x, i = i0 + t;
    stage_rows<DP>(qs, DP + 1, q + head, i0, kTile, seq, dim);
    float m = -INFINITY, l = 0.f;
    const int last = min(seq, i0 + kTile);
    for (int j0 = 0; j0 < last; j0 += kChunk) {
        __syncthreads();
        stage_rows<DP>(kc, DP, k + head, j0, kChunk, seq, dim);
        __syncthreads();
        for (int c = 0; c < kChunk; c++) {
            const int j = j0 + c;
            if (i >= seq || j > i)
                continue;
            const float x = dot_rows(qs + t * (DP + 1), kc + c * DP, DP) * scale;
            const float mn = fmaxf(m, x);
            l = l * __expf(m - mn) + __expf(x - mn);
            m = mn;
        }
    }
    if (i < seq)
        lse[(size_t)blockIdx.y * seq + i] = m + logf(l);
}

// delta_i = dO_i · O_i, one warp per row.
__global__ void attnprof_bwd_delta(const __nv_bfloat16 *out, const __nv_bfloat16 *dout, float *delta, size_t rows,
                                   int dim)
{
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (warp >= rows)
        return;
    float x = 0.f;
    for (int d = lane; d < dim; d += 32)
        x += ld(out, warp * dim + d) * ld(dout, warp * dim + d);
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    if (lane == 0)
        delta[warp] = x;
}

// dK and dV of kTile keys, one thread per key, over every query row that sees them (i >= j):
// P recomputed from the saved lse, dS = P (dP - delta); FP32 accumulators in shared memory.
template <int DP>
__global__ void __launch_bounds__(kTile)
    attnprof_bwd_dkdv(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v,
                      const __nv_bfloat16 *dout, const float *lse, const float *delta, __nv_bfloat16 *dk,
                      __nv_bfloat16 *dv, int seq, int dim, float scale)
{
    extern __shared__ float sm[];
    constexpr int P = DP + 1; // odd pitch: thread t's row is conflict-free
    float *ks = sm, *vs = ks + kTile * P, *dks = vs + kTile * P, *dvs = dks + kTile * P;
    float *qc = dvs + kTile * P, *doc = qc + kChunk * DP, *lc = doc + kChunk * DP, *dc = lc + kChunk;
    const size_t head = (size_t)blockIdx.y * seq * dim, hrow = (size_t)blockIdx.y * seq;
    const int j0 = blockIdx.x * kTile, t = threadIdx.x, j = j0 + t;
    stage_rows<DP>(ks, P, k + head, j0, kTile, seq, dim);
    stage_rows<DP>(vs, P, v + head, j0, kTile, seq, dim);
    float *dkr = dks + t * P, *dvr = dvs + t * P;
    const float *kr = ks + t * P, *vr = vs + t * P;
    for (int d = 0; d < DP; d++)
        dkr[d] = dvr[d] = 0.f;
    for (int i0 = j0; i0 < seq; i0 += kChunk) {
        __syncthreads();
        stage_rows<DP>(qc, DP, q + head, i0, kChunk, seq, dim);
        stage_rows<DP>(doc, DP, dout + head, i0, kChunk, seq, dim);
        if (t < kChunk) {
            lc[t] = i0 + t < seq ? lse[hrow + i0 + t] : 0.f;
            dc[t] = i0 + t < seq ? delta[hrow + i0 + t] : 0.f;
        }
        __syncthreads();
        for (int r = 0; r < kChunk; r++) {
            const int i = i0 + r;
            if (i >= seq || j >= seq || j > i)
                continue;
            const float *qr = qc + r * DP, *dor = doc + r * DP;
            const float p = __expf(dot_rows(qr, kr, DP) * scale - lc[r]);
            const float ds = p * (dot_rows(dor, vr, DP) - dc[r]);
            for (int d = 0; d < DP; d++) {
                dvr[d] = fmaf(p, dor[d], dvr[d]);
                dkr[d] = fmaf(ds, qr[d], dkr[d]);
            }
        }
    }
    if (j >= seq)
        return;
    for (int d = 0; d < dim; d++) {
        dk[head + (size_t)j * dim + d] = __float2bfloat16(dkr[d] * scale);
        dv[head + (size_t)j * dim + d] = __float2bfloat16(dvr[d]);
    }
}

// dQ of kTile queries, one thread per query, over the keys it sees (j <= i): no atomics.
template <int DP>
__global__ void __launch_bounds__(kTile)
    attnprof_bwd_dq(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v,
                    const __nv_bfloat16 *dout, const float *lse, const float *delta, __nv_bfloat16 *dq, int seq,
                    int dim, float scale)
{
    extern __shared__ float sm[];
    constexpr int P = DP + 1;
    float *qs = sm, *dos = qs + kTile * P, *dqs = dos + kTile * P;
    float *kc = dqs + kTile * P, *vc = kc + kChunk * DP;
    const size_t head = (size_t)blockIdx.y * seq * dim, hrow = (size_t)blockIdx.y * seq;
    const int i0 = blockIdx.x * kTile, t = threadIdx.x, i = i0 + t;
    stage_rows<DP>(qs, P, q + head, i0, kTile, seq, dim);
    stage_rows<DP>(dos, P, dout + head, i0, kTile, seq, dim);
    const float li = i < seq ? lse[hrow + i] : 0.f, di = i < seq ? delta[hrow + i] : 0.f;
    float *dqr = dqs + t * P;
    const float *qr = qs + t * P, *dor = dos + t * P;
    for (int d = 0; d < DP; d++)
        dqr[d] = 0.f;
    const int last = min(seq, i0 + kTile);
    for (int j0 = 0; j0 < last; j0 += kChunk) {
        __syncthreads();
        stage_rows<DP>(kc, DP, k + head, j0, kChunk, seq, dim);
        stage_rows<DP>(vc, DP, v + head, j0, kChunk, seq, dim);
        __syncthreads();
        for (int c = 0; c < kChunk; c++) {
            const int j = j0 + c;
            if (i >= seq || j > i)
                continue;
            const float *kr = kc + c * DP;
            const float p = __expf(dot_rows(qr, kr, DP) * scale - li);
            const float ds = p * (dot_rows(dor, vc + c * DP, DP) - di);
            for (int d = 0; d < DP; d++)
                dqr[d] = fmaf(ds, kr[d], dqr[d]);
        }
    }
    if (i >= seq)
        return;
    for (int d = 0; d < dim; d++)
        dq[head + (size_t)i * dim + d] = __float2bfloat16(dqr[d] * scale);
}

namespace {

template <int DP> constexpr size_t lse_smem() { return sizeof(float) * (kTile * (DP + 1) + kChunk * DP); }
template <int DP> constexpr size_t dkdv_smem()
{
    return sizeof(float) * (4 * kTile * (DP + 1) + 2 * kChunk * DP + 2 * kChunk);
}
template <int DP> constexpr size_t dq_smem() { return sizeof(float) * (3 * kTile * (DP + 1) + 2 * kChunk * DP); }

template <int DP> cudaError_t prepare_dim()
{
    static cudaError_t done = cudaErrorNotReady;
    if (done != cudaErrorNotReady)
        return done;
    cudaError_t e = cudaFuncSetAttribute(attnprof_bwd_dkdv<DP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)dkdv_smem<DP>());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(attnprof_bwd_dq<DP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)dq_smem<DP>());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(attnprof_bwd_lse<DP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)lse_smem<DP>());
    return done = e;
}

template <int DP>
cudaError_t run_fused(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v,
                      const __nv_bfloat16 *dout, const float *lse, const float *delta, __nv_bfloat16 *dq,
                      __nv_bfloat16 *dk, __nv_bfloat16 *dv, int bh, int seq, int dim, cudaStream_t s)
{
    cudaError_t e = prepare_dim<DP>();
    if (e != cudaSuccess)
        return e;
    const float scale = 1.0f / sqrtf((float)dim);
    const dim3 grid((seq + kTile - 1) / kTile, bh);
    attnprof_bwd_dkdv<DP><<<grid, kTile, dkdv_smem<DP>(), s>>>(q, k, v, dout, lse, delta, dk, dv, seq, dim, scale);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    attnprof_bwd_dq<DP><<<grid, kTile, dq_smem<DP>(), s>>>(q, k, v, dout, lse, delta, dq, seq, dim, scale);
    return cudaGetLastError();
}

template <int DP>
cudaError_t run_lse(const __nv_bfloat16 *q, const __nv_bfloat16 *k, float *lse, int bh, int seq, int dim,
                    cudaStream_t s)
{
    cudaError_t e = prepare_dim<DP>();
    if (e != cudaSuccess)
        return e;
    const dim3 grid((seq + kTile - 1) / kTile, bh);
    attnprof_bwd_lse<DP><<<grid, kTile, lse_smem<DP>(), s>>>(q, k, lse, seq, dim, 1.0f / sqrtf((float)dim));
    return cudaGetLastError();
}

bool dims_ok(int bh, int seq, int dim)
{
    return bh >= 1 && bh <= 65535 && seq >= 1 && dim >= 8 && dim <= ATTN_BWD_MAX_DIM && dim % 8 == 0 &&
           (long long)seq * dim < (1ll << 31);
}

} // namespace

extern "C" cudaError_t launch_attn_bwd_lse(const void *q, const void *k, float *lse, int bh, int seq, int dim,
                                           cudaStream_t s)
{
    if (!dims_ok(bh, seq, dim))
        return cudaErrorInvalidValue;
    const auto *qb = static_cast<const __nv_bfloat16 *>(q), *kb = static_cast<const __nv_bfloat16 *>(k);
    if (dim <= 32)
        return run_lse<32>(qb, kb, lse, bh, seq, dim, s);
    if (dim <= 64)
        return run_lse<64>(qb, kb, lse, bh, seq, dim, s);
    return run_lse<128>(qb, kb, lse, bh, seq, dim, s);
}

extern "C" cudaError_t launch_attn_bwd_fused(const void *q, const void *k, const void *v, const void *out,
                                             const void *dout, const float *lse, float *delta, void *dq, void *dk,
                                             void *dv, int bh, int seq, int dim, cudaStream_t s)
{
    if (!dims_ok(bh, seq, dim))
        return cudaErrorInvalidValue;
    using bf = __nv_bfloat16;
    const bf *qb = static_cast<const bf *>(q), *kb = static_cast<const bf *>(k), *vb = static_cast<const bf *>(v);
    const bf *ob = static_cast<const bf *>(out), *dob = static_cast<const bf *>(dout);
    bf *dqb = static_cast<bf *>(dq), *dkb = static_cast<bf *>(dk), *dvb = static_cast<bf *>(dv);
    const size_t rows = (size_t)bh * seq;
    attnprof_bwd_delta<<<(unsigned)((rows * 32 + 255) / 256), 256, 0, s>>>(ob, dob, delta, rows, dim);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    if (dim <= 32)
        return run_fused<32>(qb, kb, vb, dob, lse, delta, dqb, dkb, dvb, bh, seq, dim, s);
    if (dim <= 64)
        return run_fused<64>(qb, kb, vb, dob, lse, delta, dqb, dkb, dvb, bh, seq, dim, s);
    return run_fused<128>(qb, kb, vb, dob, lse, delta, dqb, dkb, dvb, bh, seq, dim, s);
}
