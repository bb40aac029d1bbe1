// The `math` variant's kernels: PyTorch's SDPA math backend step by step, one kernel
// per ATen op, named so a trace reads like the decomposition (see math_kernels.h).
// Elementwise kernels move four values per thread and iteration where the buffer
// allows it (cudaMalloc'd, so 16-byte aligned) as ATen's vectorized loops do, so the
// cost the trace shows is that of the extra passes, not of slow kernels.
#include "math_kernels.h"
#include "block_rows.cuh"
#include "softmax_staged.h"

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;
// Enough blocks to fill an H200 (132 SMs x 2048 threads) several times over; the
// grid-stride loops cover the rest.
constexpr size_t kMaxBlocks = 8192;

unsigned blocks_for(size_t work)
{
    size_t b = (work + kThreads - 1) / kThreads;
    if (b < 1)
        b = 1;
    return (unsigned)(b < kMaxBlocks ? b : kMaxBlocks);
}

__device__ __forceinline__ size_t grid_index() { return (size_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ size_t grid_stride() { return (size_t)gridDim.x * blockDim.x; }

// Block-wide reductions for the row kernels (blockDim.x a multiple of 32, <= 1024).
__device__ float block_max(float v, float *shared)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    __syncthreads(); // `shared` may still be read from the previous reduction
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    v = lane < warps ? shared[lane] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ float block_sum(float v, float *shared)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    v = lane < warps ? shared[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

} // namespace

extern "C" __global__ void attnprof_math_upcast_bf16_f32(const __nv_bfloat16 *in, float *out, size_t n, int vec)
{
    const size_t n4 = vec ? n / 4 : 0;
    for (size_t i = grid_index(); i < n4; i += grid_stride()) {
        const __nv_bfloat162 a = reinterpret_cast<const __nv_bfloat162 *>(in)[2 * i];
        const __nv_bfloat162 b = reinterpret_cast<const __nv_bfloat162 *>(in)[2 * i + 1];
        const float2 fa = __bfloat1622float2(a), fb = __bfloat1622float2(b);
        reinterpret_cast<float4 *>(out)[i] = make_float4(fa.x, fa.y, fb.x, fb.y);
    }
    for (size_t i = 4 * n4 + grid_index(); i < n; i += grid_stride())
        out[i] = __bfloat162float(in[i]);
}

extern "C" __global__ void attnprof_math_mul_scale_f32(const float *in, float *out, size_t n, float factor)
{
    const size_t n4 = n / 4;
    for (size_t i = grid_index(); i < n4; i += grid_stride()) {
        float4 v = reinterpret_cast<const float4 *>(in)[i];
        v.x *= factor;
        v.y *= factor;
        v.z *= factor;
        v.w *= factor;
        reinterpret_cast<float4 *>(out)[i] = v;
    }
    for (size_t i = 4 * n4 + grid_index(); i < n; i += grid_stride())
        out[i] = in[i] * factor;
}

// 16 bytes per thread and step (a byte per thread reached 63-81% of the write ceiling).
extern "C" __global__ void attnprof_math_ones(uint8_t *out, size_t n)
{
    const size_t n16 = n / 16;
    const uint4 ones = make_uint4(0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u);
    for (size_t i = grid_index(); i < n16; i += grid_stride())
        reinterpret_cast<uint4 *>(out)[i] = ones;
    for (size_t i = 16 * n16 + grid_index(); i < n; i += grid_stride())
        out[i] = 1;
}

// [rows, cols] with diagonal cols - rows: the causal mask aligned to the end of the keys.
// Rows by block, columns by thread (no 64-bit division per byte); 16 bytes per thread and
// step when the rows are a multiple of 16 bytes.
extern "C" __global__ void attnprof_math_tril(const uint8_t *in, uint8_t *out, int rows, int cols, int vec)
{
    const long long off = (long long)cols - rows;
    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        const uint8_t *x = in + (size_t)row * cols;
        uint8_t *y = out + (size_t)row * cols;
        const long long last = row + off; // the last kept column
        if (vec) {
            for (int c = threadIdx.x * 16; c < cols; c += blockDim.x * 16) {
                uint4 w = *reinterpret_cast<const uint4 *>(x + c);
                if (c + 15 > last) {
                    uint8_t *b = reinterpret_cast<uint8_t *>(&w);
#pragma unroll
                    for (int j = 0; j < 16; j++)
                        if (c + j > last)
                            b[j] = 0;
                }
                *reinterpret_cast<uint4 *>(y + c) = w;
            }
        } else {
            for (int c = threadIdx.x; c < cols; c += blockDim.x)
                y[c] = c <= last ? x[c] : 0;
        }
    }
}

// key.repeat_interleave(group, dim=-3) of the FP32 upcast K or V: [B, Hkv, S, D] to
// [B, Hkv * group, S, D], one copy kernel (expand, then clone).
extern "C" __global__ void attnprof_math_repeat_interleave_f32(const float *__restrict__ in, float *__restrict__ out,
                                                               size_t out_heads, int group, size_t head_elems)
{
    const size_t n = out_heads * head_elems;
    for (size_t i = grid_index(); i < n; i += grid_stride())
        out[i] = in[(i / head_elems / group) * head_elems + i % head_elems];
}

extern "C" __global__ void attnprof_math_mask_fill_neginf(float *out) { *out = -INFINITY; }

// Four condition bytes to one float4 per thread and step where n is a multiple of 4.
extern "C" __global__ void attnprof_math_where_bias(const uint8_t *cond, int cond_is_keep, const float *neginf,
                                                   float *bias, size_t n)
{
    const float masked = *neginf;
    const bool keep = cond_is_keep != 0;
    const size_t n4 = n / 4;
    for (size_t i = grid_index(); i < n4; i += grid_stride()) {
        const uchar4 c = reinterpret_cast<const uchar4 *>(cond)[i];
        reinterpret_cast<float4 *>(bias)[i] =
            make_float4((c.x != 0) == keep ? 0.0f : masked, (c.y != 0) == keep ? 0.0f : masked,
                        (c.z != 0) == keep ? 0.0f : masked, (c.w != 0) == keep ? 0.0f : masked);
    }
    for (size_t i = 4 * n4 + grid_index(); i < n; i += grid_stride())
        bias[i] = ((cond[i] != 0) == keep) ? 0.0f : masked;
}

extern "C" __global__ void attnprof_math_add_bias(float *scores, const float *bias, size_t n, size_t per_matrix)
{
    // per_matrix = S*S; when it is a multiple of 4 a float4 never straddles two matrices.
    if (per_matrix % 4 == 0) {
        const size_t n4 = n / 4, pm4 = per_matrix / 4;
        for (size_t i = grid_index(); i < n4; i += grid_stride()) {
            float4 s = reinterpret_cast<float4 *>(scores)[i];
            const float4 b = reinterpret_cast<const float4 *>(bias)[i % pm4];
            s.x += b.x;
            s.y += b.y;
            s.z += b.z;
            s.w += b.w;
            reinterpret_cast<float4 *>(scores)[i] = s;
        }
    } else {
        for (size_t i = grid_index(); i < n; i += grid_stride())
            scores[i] += bias[i % per_matrix];
    }
}

// One block per row. A row of up to kSoftmaxPerThread·blockDim values is read once
// into registers (max, exponentials, sum, write: one read and one write of the row, as
// PyTorch's register-cached softmax does); rows of 4097-16384 keys go to the wide kernel
// below, longer ones take three passes through L1/L2 here. exp(x - max) with max = -inf is
// NaN, so a row with every key masked comes out NaN, as torch.softmax gives it.
constexpr int kSoftmaxPerThread = 8;

extern "C" __global__ void attnprof_math_softmax_f32(const float *in, float *out, int cols)
{
    __shared__ float shared[32];
    const float *x = in + (size_t)blockIdx.x * cols;
    float *y = out + (size_t)blockIdx.x * cols;
    if (cols <= kSoftmaxPerThread * (int)blockDim.x) {
        float v[kSoftmaxPerThread];
        float m = -INFINITY;
#pragma unroll
        for (int t = 0; t < kSoftmaxPerThread; t++) {
            const int j = threadIdx.x + t * blockDim.x;
            v[t] = j < cols ? x[j] : -INFINITY;
            m = fmaxf(m, v[t]);
        }
        m = block_max(m, shared);
        float sum = 0.0f;
#pragma unroll
        for (int t = 0; t < kSoftmaxPerThread; t++) {
            const int j = threadIdx.x + t * blockDim.x;
            if (j < cols) {
                v[t] = expf(v[t] - m);
                sum += v[t];
            }
        }
        sum = block_sum(sum, shared);
        const float inv = 1.0f / sum;
#pragma unroll
        for (int t = 0; t < kSoftmaxPerThread; t++) {
            const int j = threadIdx.x + t * blockDim.x;
            if (j < cols)
                y[j] = v[t] * inv;
        }
        return;
    }
    float m = -INFINITY;
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        m = fmaxf(m, x[j]);
    m = block_max(m, shared);
    float sum = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        sum += expf(x[j] - m);
    sum = block_sum(sum, shared);
    const float inv = 1.0f / sum;
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        y[j] = expf(x[j] - m) * inv;
}

// Rows of 4097-16384 keys: kSoftmaxWidePerThread values a thread in registers (at most 1024
// threads a row), a grid of the resident blocks each taking rows in turn, the block's two
// reductions in buffers alternating by row (the next row's max may be written while slow warps
// still read this row's sum). The one-block-per-row kernel above ran at 84% of the copy
// ceiling at S = 8192 (1024 threads of 8) and 50% at 16384 (three passes); this one 86.5% and
// 74.2% (H200, 2026-12-04, bench/results/2026-12-04-elementwise2.md). Its successor keeps the
// next rows in shared memory (kernels/softmax_staged.cu: 91.6% and 91.8% in
// bench/softmax_probe.cu), launched in its place once switched on: it has not yet run through
// attnprof's FP64 check.
constexpr int kSoftmaxWidePerThread = 16;

extern "C" __global__ void attnprof_math_softmax_f32_wide(const float *in, float *out, size_t rows, int cols)
{
    __shared__ float red[2][32];
    const int warps = blockDim.x >> 5, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int flip = 0;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x, flip ^= 1) {
        const float *x = in + row * cols;
        float v[kSoftmaxWidePerThread];
        float m = -INFINITY;
#pragma unroll
        for (int t = 0; t < kSoftmaxWidePerThread; t++) {
            const int j = threadIdx.x + t * blockDim.x;
            v[t] = j < cols ? x[j] : -INFINITY;
            m = fmaxf(m, v[t]);
        }
        for (int o = 16; o > 0; o >>= 1)
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        m = block_row_max(red[flip], m, lane, warp, warps);
        float sum = 0.0f;
#pragma unroll
        for (int t = 0; t < kSoftmaxWidePerThread; t++) {
            v[t] = expf(v[t] - m);
            if (threadIdx.x + t * blockDim.x < cols)
                sum += v[t];
        }
        for (int o = 16; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        const float inv = 1.0f / block_row_sum(red[flip], sum, lane, warp, warps);
#pragma unroll
        for (int t = 0; t < kSoftmaxWidePerThread; t++) {
            const int j = threadIdx.x + t * blockDim.x;
            if (j < cols)
                out[row * cols + j] = v[t] * inv;
        }
    }
}

extern "C" __global__ void attnprof_math_isneginf(const float *in, uint8_t *out, size_t n)
{
    const size_t n4 = n / 4;
    for (size_t i = grid_index(); i < n4; i += grid_stride()) {
        const float4 v = reinterpret_cast<const float4 *>(in)[i];
        uchar4 r;
        r.x = v.x == -INFINITY;
        r.y = v.y == -INFINITY;
        r.z = v.z == -INFINITY;
        r.w = v.w == -INFINITY;
        reinterpret_cast<uchar4 *>(out)[i] = r;
    }
    for (size_t i = 4 * n4 + grid_index(); i < n; i += grid_stride())
        out[i] = in[i] == -INFINITY;
}

// One warp per row, kRowAllWarps rows per block; rows of a multiple of 16 bytes are
// read 16 bytes per lane. Every byte is read, as ATen's all() reduction does: the
// loop counts the bytes (or words) holding a zero instead of stopping at the first,
// so neither the code nor the compiler can skip the rest of the row.
// Short rows (attnprof_math_row_all_spans): a warp takes rows_per_item consecutive rows at
// once (one contiguous span), its lanes' loads eight at a time, over the resident blocks.
// One warp per 1 KiB row left each warp two loads a lane and each block eight rows, and
// the 16384 blocks of S = 1024 ran at 83% of a read of the same bytes (H200, 2026-12-04;
// 16 rows a warp: 93-98%, bench/results/2026-12-04-elementwise2.md).
constexpr int kRowAllWarps = 8;
constexpr int kRowAllBatch = 8;

__device__ __forceinline__ unsigned has_zero_byte(unsigned w)
{
    return ((w - 0x01010101u) & ~w & 0x80808080u) != 0;
}

__device__ __forceinline__ unsigned has_zero_vec(uint4 w)
{
    return has_zero_byte(w.x) | has_zero_byte(w.y) | has_zero_byte(w.z) | has_zero_byte(w.w);
}

// rows_per_item consecutive rows (at most 32, cols a multiple of 16) a warp item.
__device__ void row_all_spans(const uint8_t *in, uint8_t *out, size_t rows, int cols, unsigned rows_per_item)
{
    const unsigned lane = threadIdx.x & 31, n16 = (unsigned)cols / 16;
    const size_t items = (rows + rows_per_item - 1) / rows_per_item, warps = grid_stride() / 32;
    for (size_t w = grid_index() / 32; w < items; w += warps) {
        const size_t row0 = w * rows_per_item;
        const unsigned nr = (unsigned)(rows - row0 < rows_per_item ? rows - row0 : rows_per_item);
        const unsigned span = nr * n16;
        const uint4 *x = reinterpret_cast<const uint4 *>(in + row0 * cols);
        unsigned zero_rows = 0; // bit r: row row0 + r holds a zero byte
        for (unsigned j0 = lane; j0 < span; j0 += 32 * kRowAllBatch) {
            uint4 v[kRowAllBatch];
#pragma unroll
            for (int k = 0; k < kRowAllBatch; k++)
                v[k] = j0 + 32 * k < span ? x[j0 + 32 * k] : make_uint4(~0u, ~0u, ~0u, ~0u);
#pragma unroll
            for (int k = 0; k < kRowAllBatch; k++)
                if (has_zero_vec(v[k]))
                    zero_rows |= 1u << ((j0 + 32 * k) / n16);
        }
        zero_rows = __reduce_or_sync(0xffffffffu, zero_rows);
        if (lane < nr)
            out[row0 + lane] = (zero_rows >> lane & 1u) ? 0 : 1;
    }
}

extern "C" __global__ void attnprof_math_row_all_spans(const uint8_t *in, uint8_t *out, size_t rows, int cols,
                                                       unsigned rows_per_item)
{
    row_all_spans(in, out, rows, cols, rows_per_item);
}

extern "C" __global__ void attnprof_math_row_all(const uint8_t *in, uint8_t *out, size_t rows, int cols)
{
    const size_t row = (size_t)blockIdx.x * kRowAllWarps + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= rows)
        return; // the whole warp leaves together
    const uint8_t *x = in + row * cols;
    unsigned zeros = 0;
    if (cols % 16 == 0) {
        const uint4 *x16 = reinterpret_cast<const uint4 *>(x);
        for (int j = lane; j < cols / 16; j += 32) {
            const uint4 w = x16[j];
            zeros += has_zero_byte(w.x) + has_zero_byte(w.y) + has_zero_byte(w.z) + has_zero_byte(w.w);
        }
    } else {
        for (int j = lane; j < cols; j += 32)
            zeros += x[j] == 0;
    }
    const bool all = __all_sync(0xffffffffu, zeros == 0);
    if (lane == 0)
        out[row] = all ? 1 : 0;
}

extern "C" __global__ void attnprof_math_where_zero_fill(float *out) { *out = 0.0f; }

// Every element is read and written, as at::where_out does. Four values per thread
// when a row holds a multiple of four; 32-bit index division where the size allows.
extern "C" __global__ void attnprof_math_where_zero(const uint8_t *row_all, const float *zero, float *p, size_t n,
                                                   int cols)
{
    const float z = *zero;
    if (cols % 4 == 0 && n / 4 <= 0xffffffffull) {
        const unsigned n4 = (unsigned)(n / 4), c4 = (unsigned)cols / 4;
        for (size_t i = grid_index(); i < n4; i += grid_stride()) {
            float4 v = reinterpret_cast<float4 *>(p)[i];
            if (row_all[(unsigned)i / c4])
                v = make_float4(z, z, z, z);
            reinterpret_cast<float4 *>(p)[i] = v;
        }
        return;
    }
    for (size_t i = grid_index(); i < n; i += grid_stride())
        p[i] = row_all[i / cols] ? z : p[i];
}

extern "C" __global__ void attnprof_math_downcast_f32_bf16(const float *in, __nv_bfloat16 *out, size_t n, int vec)
{
    const size_t n4 = vec ? n / 4 : 0;
    for (size_t i = grid_index(); i < n4; i += grid_stride()) {
        const float4 v = reinterpret_cast<const float4 *>(in)[i];
        reinterpret_cast<__nv_bfloat162 *>(out)[2 * i] = __floats2bfloat162_rn(v.x, v.y);
        reinterpret_cast<__nv_bfloat162 *>(out)[2 * i + 1] = __floats2bfloat162_rn(v.z, v.w);
    }
    for (size_t i = 4 * n4 + grid_index(); i < n; i += grid_stride())
        out[i] = __float2bfloat16_rn(in[i]);
}

extern "C" __global__ void attnprof_math_downcast_probs_f32_bf16(const float *in, __nv_bfloat16 *out, size_t n, int vec)
{
    const size_t n4 = vec ? n / 4 : 0;
    for (size_t i = grid_index(); i < n4; i += grid_stride()) {
        const float4 v = reinterpret_cast<const float4 *>(in)[i];
        reinterpret_cast<__nv_bfloat162 *>(out)[2 * i] = __floats2bfloat162_rn(v.x, v.y);
        reinterpret_cast<__nv_bfloat162 *>(out)[2 * i + 1] = __floats2bfloat162_rn(v.z, v.w);
    }
    for (size_t i = 4 * n4 + grid_index(); i < n; i += grid_stride())
        out[i] = __float2bfloat16_rn(in[i]);
}

namespace {
// Softmax threads per row: enough for the row to fit the per-thread registers, a
// multiple of 32, at most 1024.
unsigned softmax_threads(int cols)
{
    unsigned t = (unsigned)((cols + kSoftmaxPerThread - 1) / kSoftmaxPerThread);
    t = (t + 31) / 32 * 32;
    return t < 32 ? 32 : t > 1024 ? 1024 : t;
}
// The caller's q/k/v/out may sit at any bf16 offset: vector loads only where aligned.
bool aligned(const void *p, size_t bytes) { return ((uintptr_t)p % bytes) == 0; }
} // namespace

extern "C" {

cudaError_t math_upcast_bf16_f32(const void *in, float *out, size_t n, cudaStream_t s)
{
    attnprof_math_upcast_bf16_f32<<<blocks_for(n / 4 + 1), kThreads, 0, s>>>((const __nv_bfloat16 *)in, out, n,
                                                                              aligned(in, 8) && aligned(out, 16));
    return cudaGetLastError();
}

cudaError_t math_mul_scale_f32(const float *in, float *out, size_t n, float factor, cudaStream_t s)
{
    attnprof_math_mul_scale_f32<<<blocks_for(n / 4 + 1), kThreads, 0, s>>>(in, out, n, factor);
    return cudaGetLastError();
}

cudaError_t math_ones_u8(uint8_t *out, int S, cudaStream_t s) { return math_ones_rect_u8(out, S, S, s); }

cudaError_t math_ones_rect_u8(uint8_t *out, int rows, int cols, cudaStream_t s)
{
    const size_t n = (size_t)rows * cols;
    if (!aligned(out, 16))
        return cudaErrorMisalignedAddress;
    attnprof_math_ones<<<blocks_for(n / 16 + 1), kThreads, 0, s>>>(out, n);
    return cudaGetLastError();
}

cudaError_t math_tril_u8(const uint8_t *in, uint8_t *out, int S, cudaStream_t s)
{
    return math_tril_rect_u8(in, out, S, S, s);
}

cudaError_t math_tril_rect_u8(const uint8_t *in, uint8_t *out, int rows, int cols, cudaStream_t s)
{
    const int vec = cols % 16 == 0 && aligned(in, 16) && aligned(out, 16);
    const unsigned blocks = (unsigned)(rows < (int)kMaxBlocks ? (rows > 0 ? rows : 1) : (int)kMaxBlocks);
    attnprof_math_tril<<<blocks, kThreads, 0, s>>>(in, out, rows, cols, vec);
    return cudaGetLastError();
}

cudaError_t math_repeat_interleave_f32(const float *in, float *out, int batch, int kv_heads, int group,
                                       size_t head_elems, cudaStream_t s)
{
    const size_t out_heads = (size_t)batch * kv_heads * group;
    attnprof_math_repeat_interleave_f32<<<blocks_for(out_heads * head_elems), kThreads, 0, s>>>(in, out, out_heads,
                                                                                               group, head_elems);
    return cudaGetLastError();
}

cudaError_t math_mask_fill_neginf(float *out, cudaStream_t s)
{
    attnprof_math_mask_fill_neginf<<<1, 1, 0, s>>>(out);
    return cudaGetLastError();
}

cudaError_t math_where_bias(const uint8_t *cond, int cond_is_keep, const float *neginf, float *bias, int S,
                            cudaStream_t s)
{
    return math_where_bias_rect(cond, cond_is_keep, neginf, bias, S, S, s);
}

cudaError_t math_where_bias_rect(const uint8_t *cond, int cond_is_keep, const float *neginf, float *bias, int rows,
                                 int cols, cudaStream_t s)
{
    const size_t n = (size_t)rows * cols;
    if (!aligned(cond, 4) || !aligned(bias, 16))
        return cudaErrorMisalignedAddress;
    attnprof_math_where_bias<<<blocks_for(n / 4 + 1), kThreads, 0, s>>>(cond, cond_is_keep, neginf, bias, n);
    return cudaGetLastError();
}

cudaError_t math_add_bias(float *scores, const float *bias, size_t matrices, int S, cudaStream_t s)
{
    return math_add_bias_rect(scores, bias, matrices, S, S, s);
}

cudaError_t math_add_bias_rect(float *scores, const float *bias, size_t matrices, int rows, int cols, cudaStream_t s)
{
    const size_t per_matrix = (size_t)rows * cols, n = matrices * per_matrix;
    attnprof_math_add_bias<<<blocks_for(n / 4 + 1), kThreads, 0, s>>>(scores, bias, n, per_matrix);
    return cudaGetLastError();
}

cudaError_t math_softmax_f32(const float *in, float *out, size_t rows, int cols, cudaStream_t s)
{
    if (rows > 0x7fffffffu)
        return cudaErrorInvalidConfiguration;
    if (softmax_staged_takes_f32(in, out, cols)) /* 4097-16384, switched on: softmax_staged.h */
        return launch_softmax_staged_f32(in, out, rows, cols, s);
    if (cols > 4096 && cols <= kSoftmaxWidePerThread * 1024) {
        const unsigned threads = (unsigned)((cols + kSoftmaxWidePerThread * 32 - 1) / (kSoftmaxWidePerThread * 32) * 32);
        /* The resident blocks, asked of the occupancy API once per block size (32 to 1024
         * threads), so that a recorded forward makes no runtime calls but the launch. */
        static unsigned resident_by_warps[33];
        unsigned &resident = resident_by_warps[threads / 32];
        if (!resident) {
            int dev = 0, sms = 0, per_sm = 0;
            cudaError_t e = cudaGetDevice(&dev);
            if (e == cudaSuccess)
                e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
            if (e == cudaSuccess)
                e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attnprof_math_softmax_f32_wide, (int)threads,
                                                                  0);
            if (e != cudaSuccess)
                return e;
            resident = (unsigned)((per_sm > 0 ? per_sm : 1) * sms);
        }
        attnprof_math_softmax_f32_wide<<<(unsigned)(rows < resident ? rows : resident), threads, 0, s>>>(in, out,
                                                                                                         rows, cols);
        return cudaGetLastError();
    }
    attnprof_math_softmax_f32<<<(unsigned)rows, softmax_threads(cols), 0, s>>>(in, out, cols);
    return cudaGetLastError();
}

cudaError_t math_isneginf(const float *in, uint8_t *out, size_t n, cudaStream_t s)
{
    attnprof_math_isneginf<<<blocks_for(n / 4 + 1), kThreads, 0, s>>>(in, out, n);
    return cudaGetLastError();
}

cudaError_t math_row_all(const uint8_t *in, uint8_t *out, size_t rows, int cols, cudaStream_t s)
{
    /* Rows under 2 KiB (a multiple of 16 bytes, 16-byte aligned): 16 a warp item, over the
     * resident blocks; else a warp a row, a block per kRowAllWarps rows. */
    if (cols % 16 == 0 && cols < 2048 && aligned(in, 16)) {
        static unsigned grid = 0;
        if (!grid) {
            int dev = 0, sms = 0, per_sm = 0;
            cudaError_t e = cudaGetDevice(&dev);
            if (e == cudaSuccess)
                e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
            if (e == cudaSuccess)
                e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attnprof_math_row_all_spans, 32 * kRowAllWarps,
                                                                  0);
            if (e != cudaSuccess)
                return e;
            grid = (unsigned)((per_sm > 0 ? per_sm : 1) * sms);
        }
        const unsigned rows_per_item = 16;
        const size_t items = (rows + rows_per_item - 1) / rows_per_item;
        const size_t blocks = (items + kRowAllWarps - 1) / kRowAllWarps;
        attnprof_math_row_all_spans<<<(unsigned)(blocks < grid ? blocks : grid), 32 * kRowAllWarps, 0, s>>>(
            in, out, rows, cols, rows_per_item);
        return cudaGetLastError();
    }
    const size_t blocks = (rows + kRowAllWarps - 1) / kRowAllWarps;
    if (blocks > 0x7fffffffu)
        return cudaErrorInvalidConfiguration;
    attnprof_math_row_all<<<(unsigned)blocks, 32 * kRowAllWarps, 0, s>>>(in, out, rows, cols);
    return cudaGetLastError();
}

cudaError_t math_where_zero_fill(float *out, cudaStream_t s)
{
    attnprof_math_where_zero_fill<<<1, 1, 0, s>>>(out);
    return cudaGetLastError();
}

cudaError_t math_where_zero(const uint8_t *row_all, const float *zero, float *p, size_t rows, int cols,
                            cudaStream_t s)
{
    const size_t n = rows * (size_t)cols;
    attnprof_math_where_zero<<<blocks_for(cols % 4 == 0 ? n / 4 + 1 : n), kThreads, 0, s>>>(row_all, zero, p, n,
                                                                                          cols);
    return cudaGetLastError();
}

cudaError_t math_downcast_f32_bf16(const float *in, void *out, size_t n, cudaStream_t s)
{
    attnprof_math_downcast_f32_bf16<<<blocks_for(n / 4 + 1), kThreads, 0, s>>>(in, (__nv_bfloat16 *)out, n,
                                                                                aligned(in, 16) && aligned(out, 8));
    return cudaGetLastError();
}

cudaError_t math_downcast_probs_f32_bf16(const float *in, void *out, size_t n, cudaStream_t s)
{
    attnprof_math_downcast_probs_f32_bf16<<<blocks_for(n / 4 + 1), kThreads, 0, s>>>(
        in, (__nv_bfloat16 *)out, n, aligned(in, 16) && aligned(out, 8));
    return cudaGetLastError();
}

} // extern "C"
