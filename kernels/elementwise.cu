// Elementwise and row-softmax kernels of the unfused variants (naive, naive_inplace).
// All of them are bandwidth-bound: 16-byte accesses per thread, grid-stride loops sized
// to the SM count, and the small [S, S] mask read from L2 rather than recomputed.
#include "elementwise.h"
#include "block_rows.cuh"
#include "softmax_staged.h"

#include <cuda_bf16.h>
#include <math.h>



static constexpr int kThreads = 256;
// Warp items per resident warp the masked fill's grouping of matrices leaves (launch_masked_fill_rect_bf16).
static constexpr size_t FILL_ITEMS_PER_WARP = 4;
// Mask chunks a lane of the row-by-row masked fill loads before it stores (attnprof_masked_fill_rows_bf16).
static constexpr int FILL_BATCH = 8;

static int sm_count(void)
{
    static int sms = 0;
    if (!sms) {
        int dev = 0;
        cudaGetDevice(&dev);
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0)
            sms = 80;
    }
    return sms;
}

// The blocks of `kernel` (kThreads each) that fit on the GPU at once, asked of the
// occupancy API once per kernel. A grid-stride grid larger than that runs a second,
// partial wave of blocks that each carry a full share of the work: the tail that kept
// the 38-register block softmax (6 of the 8 blocks a fixed grid assumed) at 73% of the
// copy bandwidth.
static int resident_blocks(const void *kernel)
{
    static struct {
        const void *kernel;
        int blocks;
    } cache[32];
    static int n_cached;
    for (int i = 0; i < n_cached; i++)
        if (cache[i].kernel == kernel)
            return cache[i].blocks;
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0) != cudaSuccess || per_sm <= 0)
        per_sm = 1;
    const int blocks = per_sm * sm_count();
    if (n_cached < 32) {
        cache[n_cached].kernel = kernel;
        cache[n_cached].blocks = blocks;
        n_cached++;
    }
    return blocks;
}

// One block per kThreads work items, at most the blocks resident at once.
static int grid_for(const void *kernel, size_t work_items)
{
    size_t blocks = (work_items + kThreads - 1) / kThreads;
    size_t cap = (size_t)resident_blocks(kernel);
    return (int)(blocks < cap ? (blocks ? blocks : 1) : cap);
}

union Pack8 {
    uint4 raw;
    __nv_bfloat162 h2[4];
};

extern "C" __global__ void attnprof_scale_bf16(const uint4 *__restrict__ in, uint4 *__restrict__ out,
                                    size_t n_vec, const __nv_bfloat16 *__restrict__ tail_in,
                                    __nv_bfloat16 *__restrict__ tail_out, int n_tail, float scale)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        Pack8 p;
        p.raw = in[i];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float2 f = __bfloat1622float2(p.h2[j]);
            p.h2[j] = __floats2bfloat162_rn(f.x * scale, f.y * scale);
        }
        out[i] = p.raw;
    }
    if (blockIdx.x == 0 && (int)threadIdx.x < n_tail)
        tail_out[threadIdx.x] = __float2bfloat16(__bfloat162float(tail_in[threadIdx.x]) * scale);
}

// [rows, cols]: key j masked for query i when j > i + cols - rows (aligned to the end of the keys).
extern "C" __global__ void attnprof_causal_mask_u8(uint8_t *mask, int rows, int cols)
{
    size_t n = (size_t)rows * cols;
    const long long off = (long long)cols - rows;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        mask[i] = (long long)(i % cols) > (long long)(i / cols) + off;
}

// K or V [B, Hkv, S, D] expanded to [B, Hkv * group, S, D], as PyTorch's repeat_kv does
// (expand, then reshape: one copy); 16-byte copies when the head is a multiple of 8 elements.
extern "C" __global__ void attnprof_repeat_kv_bf16(const __nv_bfloat16 *__restrict__ in, __nv_bfloat16 *__restrict__ out,
                                                   size_t out_heads, int group, size_t head_elems)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    if (head_elems % 8 == 0) {
        const size_t per_head = head_elems / 8, n = out_heads * per_head;
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
            const size_t h = i / per_head, e = i % per_head;
            reinterpret_cast<uint4 *>(out)[i] = reinterpret_cast<const uint4 *>(in)[(h / group) * per_head + e];
        }
        return;
    }
    const size_t n = out_heads * head_elems;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[(i / head_elems / group) * head_elems + i % head_elems];
}

// One 16-byte chunk of the fill: nothing where no mask byte is set, a store without a read
// where every one is, else read, fill, write.
__device__ __forceinline__ void fill_chunk(uint4 *dst, uint2 mk, uint4 fill, __nv_bfloat16 v)
{
    if ((mk.x | mk.y) == 0)
        return;
    if ((__vcmpeq4(mk.x, 0u) | __vcmpeq4(mk.y, 0u)) == 0) {
        *dst = fill;
        return;
    }
    Pack8 p;
    p.raw = *dst;
    __nv_bfloat16 *e = reinterpret_cast<__nv_bfloat16 *>(&p);
    const uint8_t *mb = reinterpret_cast<const uint8_t *>(&mk);
#pragma unroll
    for (int j = 0; j < 8; j++)
        if (mb[j])
            e[j] = v;
    *dst = p.raw;
}

// Place by place, for short rows and few of them (launch_masked_fill_rect_bf16): a thread per
// 32-byte chunk of the flat [matrices, rows, cols], 16 mask bytes deciding 16 scores at once, so
// a fully unmasked chunk costs one L2 read of the mask and no DRAM traffic at all.
extern "C" __global__ void attnprof_masked_fill_bf16(__nv_bfloat16 *__restrict__ x, const uint8_t *__restrict__ mask,
                                          size_t matrices, size_t per_matrix, float value)
{
    const size_t chunks_per_matrix = per_matrix / 16;
    const size_t chunks = chunks_per_matrix * matrices;
    const __nv_bfloat16 v = __float2bfloat16(value);
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += stride) {
        size_t in_matrix = (c % chunks_per_matrix) * 16;
        uint4 m = *reinterpret_cast<const uint4 *>(mask + in_matrix);
        if ((m.x | m.y | m.z | m.w) == 0)
            continue;
        const uint8_t *mb = reinterpret_cast<const uint8_t *>(&m);
        uint4 *dst = reinterpret_cast<uint4 *>(x + c * 16);
        bool all = true;
#pragma unroll
        for (int j = 0; j < 16; j++)
            all &= mb[j] != 0;
        if (all) { // fully masked chunk: write only, no read
            Pack8 p;
#pragma unroll
            for (int j = 0; j < 4; j++)
                p.h2[j] = __halves2bfloat162(v, v);
            dst[0] = p.raw;
            dst[1] = p.raw;
            continue;
        }
#pragma unroll
        for (int half = 0; half < 2; half++) {
            Pack8 p;
            p.raw = dst[half];
            __nv_bfloat16 *e = reinterpret_cast<__nv_bfloat16 *>(&p);
#pragma unroll
            for (int j = 0; j < 8; j++)
                if (mb[half * 8 + j])
                    e[j] = v;
            dst[half] = p.raw;
        }
    }
}

// Row by row, where rows are long and many: a warp per (row, group of matrices), its
// lanes over the row's 16-byte chunks (8 scores decided by 8 mask bytes), the group's
// matrices one after another. A fully masked chunk is stored without a read, a partly
// masked one read, filled and written, an unmasked one not touched. Why this layout
// (bench/fill_probe.cu, H200, 2026-12-04): the fill's cost is its write pattern, a
// variable-length piece of every row, which even computed without a mask ran at 61-74% of
// a contiguous write of the same bytes (whole rows: 90-96%); and the mask row, read once
// per group and then from L1, is no longer read from DRAM once per matrix where the [S, S]
// mask outgrows the L2 (S >= 8192: the place-by-place kernel ran at 30-40%). Its 54 registers
// leave half the warps of the place-by-place kernel resident, which costs short rows more
// than batching gains them (S = 1024: 69.6 against 57.2 us), hence the two.
extern "C" __global__ void attnprof_masked_fill_rows_bf16(__nv_bfloat16 *__restrict__ x, const uint8_t *__restrict__ mask,
                                                          size_t matrices, unsigned rows, unsigned cols, unsigned group,
                                                     float value)
{
    const unsigned lane = threadIdx.x % 32, chunks = cols / 8;
    const size_t items = (matrices + group - 1) / group * rows;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    const __nv_bfloat16 v = __float2bfloat16(value);
    Pack8 fill;
#pragma unroll
    for (int j = 0; j < 4; j++)
        fill.h2[j] = __halves2bfloat162(v, v);
    for (size_t w = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; w < items; w += warps) {
        const size_t first = w / rows * group, r = w % rows;
        const size_t last = first + group < matrices ? first + group : matrices;
        const uint2 *mrow = reinterpret_cast<const uint2 *>(mask + r * cols);
        /* FILL_BATCH of the lane's mask chunks loaded at once, then their stores for every
         * matrix of the group: a load and its dependent store one at a time left the warp
         * waiting out the L2's latency per chunk (the fill ran 14-53% slower than the same
         * writes with the mask computed). */
        for (unsigned q0 = lane; q0 < chunks; q0 += 32 * FILL_BATCH) {
            uint2 mk[FILL_BATCH];
#pragma unroll
            for (int k = 0; k < FILL_BATCH; k++)
                mk[k] = q0 + 32 * k < chunks ? __ldg(mrow + q0 + 32 * k) : make_uint2(0, 0);
            for (size_t m = first; m < last; m++) {
                uint4 *xrow = reinterpret_cast<uint4 *>(x + (m * rows + r) * cols);
#pragma unroll
                for (int k = 0; k < FILL_BATCH; k++)
                    fill_chunk(xrow + q0 + 32 * k, mk[k], fill.raw, v);
            }
        }
    }
}

// Scalar path for S*S not a multiple of 16 (odd sequence lengths).
extern "C" __global__ void attnprof_masked_fill_bf16_scalar(__nv_bfloat16 *x, const uint8_t *mask, size_t matrices,
                                                 size_t per_matrix, float value)
{
    const size_t n = per_matrix * matrices;
    const __nv_bfloat16 v = __float2bfloat16(value);
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        if (mask[i % per_matrix])
            x[i] = v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// A row held in registers as floats: VEC 16-byte vectors per thread, the thread's
// vectors at first, first + step, ... (-inf past the row's end). Returns their max.
template <int VEC>
__device__ __forceinline__ float load_row(const uint4 *__restrict__ src, int first, int step, int n_vec,
                                          float (&v)[VEC][8])
{
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        const int idx = first + k * step;
        if (idx < n_vec) {
            Pack8 p;
            p.raw = src[idx];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                float2 f = __bfloat1622float2(p.h2[j]);
                v[k][2 * j] = f.x;
                v[k][2 * j + 1] = f.y;
            }
        } else {
#pragma unroll
            for (int j = 0; j < 8; j++)
                v[k][j] = -INFINITY;
        }
#pragma unroll
        for (int j = 0; j < 8; j++)
            mx = fmaxf(mx, v[k][j]);
    }
    return mx;
}

// v = exp(v - mx) in place; returns the thread's sum. A row whose every score is -inf
// has mx = -inf and gives NaN, as PyTorch's softmax does.
template <int VEC> __device__ __forceinline__ float exp_row(float (&v)[VEC][8], float mx)
{
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < VEC; k++)
#pragma unroll
        for (int j = 0; j < 8; j++) {
            v[k][j] = __expf(v[k][j] - mx);
            sum += v[k][j];
        }
    return sum;
}

template <int VEC>
__device__ __forceinline__ void store_row(uint4 *__restrict__ dst, int first, int step, int n_vec,
                                          const float (&v)[VEC][8], float scale)
{
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        const int idx = first + k * step;
        if (idx < n_vec) {
            Pack8 p;
#pragma unroll
            for (int j = 0; j < 4; j++)
                p.h2[j] = __floats2bfloat162_rn(v[k][2 * j] * scale, v[k][2 * j + 1] * scale);
            dst[idx] = p.raw;
        }
    }
}

// The loaded vectors as floats (-inf past the row's end); returns their max.
template <int VEC>
__device__ __forceinline__ float unpack_row(const uint4 (&raw)[VEC], int first, int step, int n_vec,
                                            float (&v)[VEC][8])
{
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        if (first + k * step < n_vec) {
            Pack8 p;
            p.raw = raw[k];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                float2 f = __bfloat1622float2(p.h2[j]);
                v[k][2 * j] = f.x;
                v[k][2 * j + 1] = f.y;
            }
        } else {
#pragma unroll
            for (int j = 0; j < 8; j++)
                v[k][j] = -INFINITY;
        }
#pragma unroll
        for (int j = 0; j < 8; j++)
            mx = fmaxf(mx, v[k][j]);
    }
    return mx;
}

// Loads that bypass L1 (ld.global.nc.L1::no_allocate) and stores marked first to leave the L2
// (an evict-first cache policy), for the short-row softmax. Each score is read once and its
// row written once, by the same warp, after the row's reads have returned (the reductions
// depend on them): so the non-coherent read path holds no stale copy that any thread reads,
// and the softmax may still run in place.
__device__ __forceinline__ uint4 load_stream16(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__device__ __forceinline__ void store_evict_first16(uint4 *p, uint4 v, uint64_t policy)
{
    asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "r"(v.x),
                 "r"(v.y), "r"(v.z), "r"(v.w), "l"(policy)
                 : "memory");
}

__device__ __forceinline__ uint64_t evict_first_policy(void)
{
    uint64_t policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

// One warp per row, the row held in registers: one DRAM read and one write per element.
// VEC = 16-byte vectors per lane, so the row length is at most VEC * 256. Rows of up to
// 1024 scores (VEC <= 4) issue the row's loads before any conversion, through the streaming
// load and the evict-first store: 88.1-88.4% -> 91.4-92.6% of the copy ceiling at 8x16x1024
// (H200, 2026-12-04, bench/results/2026-12-04-elementwise2.md); at VEC 8 and in the block
// kernels the same hints lost (94.7% -> 91-92%, 87-89% -> 83-86%): they keep plain accesses.
template <int VEC>
__device__ __forceinline__ void softmax_rows_in_registers(const __nv_bfloat16 *__restrict__ in,
                                                          __nv_bfloat16 *__restrict__ out, size_t rows, int cols)
{
    const int lane = threadIdx.x & 31;
    const size_t warps = (size_t)gridDim.x * (blockDim.x / 32);
    const int n_vec = cols / 8;
    for (size_t row = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; row < rows; row += warps) {
        float v[VEC][8];
        const uint4 *src = reinterpret_cast<const uint4 *>(in + row * cols);
        uint4 *dst = reinterpret_cast<uint4 *>(out + row * cols);
        if constexpr (VEC <= 4) {
            uint4 raw[VEC];
#pragma unroll
            for (int k = 0; k < VEC; k++)
                if (lane + 32 * k < n_vec)
                    raw[k] = load_stream16(src + lane + 32 * k);
            const float mx = warp_max(unpack_row<VEC>(raw, lane, 32, n_vec, v));
            const float inv = 1.f / warp_sum(exp_row<VEC>(v, mx));
            const uint64_t policy = evict_first_policy();
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                if (lane + 32 * k < n_vec) {
                    Pack8 p;
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        p.h2[j] = __floats2bfloat162_rn(v[k][2 * j] * inv, v[k][2 * j + 1] * inv);
                    store_evict_first16(dst + lane + 32 * k, p.raw, policy);
                }
            }
        } else {
            const float mx = warp_max(load_row<VEC>(src, lane, 32, n_vec, v));
            const float inv = 1.f / warp_sum(exp_row<VEC>(v, mx));
            store_row<VEC>(dst, lane, 32, n_vec, v, inv);
        }
    }
}

// One extern "C" kernel per row-length class, so CUPTI shows a readable name and the
// occupancy API can look the kernel up by that name.
#define SOFTMAX_KERNEL(VEC)                                                                                   \
    extern "C" __global__ void attnprof_softmax_rows_bf16_v##VEC(const __nv_bfloat16 *__restrict__ in,       \
                                                                 __nv_bfloat16 *__restrict__ out, size_t rows, \
                                                                 int cols)                                    \
    {                                                                                                         \
        softmax_rows_in_registers<VEC>(in, out, rows, cols);                                                  \
    }
SOFTMAX_KERNEL(1)
SOFTMAX_KERNEL(2)
SOFTMAX_KERNEL(4)
SOFTMAX_KERNEL(8)

// The row's 16-byte vectors as loaded (no conversion yet), so that the next row's loads
// can be issued before this row's reductions and left in flight through them.
template <int VEC>
__device__ __forceinline__ void load_row_raw(const uint4 *__restrict__ src, int first, int step, int n_vec,
                                             uint4 (&raw)[VEC])
{
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        const int idx = first + k * step;
        if (idx < n_vec)
            raw[k] = src[idx];
    }
}

// Rows of 2K–16K columns: one block per row, the row still held in registers
// (VEC 16-byte vectors per thread), the max and sum reduced across the block's warps.
// The block's next row is loaded before this row's three barriers, so its DRAM reads
// are in flight while the block waits on them (without it the reads of a block stop at
// every barrier: 73% of the copy bandwidth at S = 4096, bench/RESULTS.md).
template <int VEC, bool PREFETCH>
__device__ __forceinline__ void softmax_rows_block(const __nv_bfloat16 *__restrict__ in,
                                                   __nv_bfloat16 *__restrict__ out, size_t rows, int cols)
{
    /* Two reduction buffers alternating by row: the next row's max may be written while
     * slow warps still read this row's sum. */
    __shared__ float red[2][32];
    const int warps = blockDim.x / 32, lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const int n_vec = cols / 8;
    int flip = 0;
    uint4 raw[VEC];
    size_t row = blockIdx.x;
    if constexpr (PREFETCH)
        if (row < rows)
            load_row_raw<VEC>(reinterpret_cast<const uint4 *>(in + row * cols), threadIdx.x, blockDim.x, n_vec, raw);
    for (; row < rows; row += gridDim.x, flip ^= 1) {
        float v[VEC][8];
        float mx;
        if constexpr (PREFETCH)
            mx = warp_max(unpack_row<VEC>(raw, threadIdx.x, blockDim.x, n_vec, v));
        else
            mx = warp_max(load_row<VEC>(reinterpret_cast<const uint4 *>(in + row * cols), threadIdx.x, blockDim.x,
                                        n_vec, v));
        const size_t next = row + gridDim.x;
        if constexpr (PREFETCH)
            if (next < rows)
                load_row_raw<VEC>(reinterpret_cast<const uint4 *>(in + next * cols), threadIdx.x, blockDim.x,
                                  n_vec, raw);
        mx = block_row_max(red[flip], mx, lane, warp, warps);
        const float sum = block_row_sum(red[flip], warp_sum(exp_row<VEC>(v, mx)), lane, warp, warps);
        store_row<VEC>(reinterpret_cast<uint4 *>(out + row * cols), threadIdx.x, blockDim.x, n_vec, v, 1.f / sum);
    }
}

// PREFETCH only where the second row's registers keep the block's occupancy: at VEC 8
// they would take the kernel from 95 to 167 registers, one block per SM instead of two.
// VEC 8 (S 16384, 80% of the copy ceiling) has a successor that keeps the next row in shared
// memory instead (kernels/softmax_staged.cu: 89.1% in bench/softmax_probe.cu, bit-identical),
// launched in its place once switched on: it has not yet run through attnprof's FP64 check.
#define SOFTMAX_BLOCK_KERNEL(VEC, PREFETCH)                                                                  \
    extern "C" __global__ void attnprof_softmax_rows_bf16_block_v##VEC(const __nv_bfloat16 *__restrict__ in, \
                                                                       __nv_bfloat16 *__restrict__ out,      \
                                                                       size_t rows, int cols)                \
    {                                                                                                        \
        softmax_rows_block<VEC, PREFETCH>(in, out, rows, cols);                                              \
    }
SOFTMAX_BLOCK_KERNEL(2, true)
SOFTMAX_BLOCK_KERNEL(4, true)
SOFTMAX_BLOCK_KERNEL(8, false)

// Long or odd rows: one block per row, three passes; the re-reads hit L1/L2, so DRAM
// still sees one read and one write per element.
extern "C" __global__ void attnprof_softmax_rows_bf16_long(const __nv_bfloat16 *__restrict__ in, __nv_bfloat16 *__restrict__ out,
                                                size_t rows, int cols)
{
    __shared__ float red[32];
    const int warps = blockDim.x / 32;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const __nv_bfloat16 *src = in + row * cols;
        float mx = -INFINITY;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            mx = fmaxf(mx, __bfloat162float(src[c]));
        mx = warp_max(mx);
        if ((threadIdx.x & 31) == 0)
            red[threadIdx.x / 32] = mx;
        __syncthreads();
        mx = -INFINITY;
        for (int w = 0; w < warps; w++)
            mx = fmaxf(mx, red[w]);
        __syncthreads();
        float sum = 0.f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            sum += __expf(__bfloat162float(src[c]) - mx);
        sum = warp_sum(sum);
        if ((threadIdx.x & 31) == 0)
            red[threadIdx.x / 32] = sum;
        __syncthreads();
        sum = 0.f;
        for (int w = 0; w < warps; w++)
            sum += red[w];
        __syncthreads();
        float inv = 1.f / sum;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            out[row * cols + c] = __float2bfloat16(__expf(__bfloat162float(src[c]) - mx) * inv);
    }
}



extern "C" cudaError_t launch_scale_bf16(const void *in, void *out, size_t n, float scale, cudaStream_t s)
{
    if (((uintptr_t)in | (uintptr_t)out) % 16 != 0)
        return cudaErrorMisalignedAddress;
    size_t n_vec = n / 8;
    int n_tail = (int)(n % 8);
    const __nv_bfloat16 *tin = (const __nv_bfloat16 *)in + n_vec * 8;
    __nv_bfloat16 *tout = (__nv_bfloat16 *)out + n_vec * 8;
    attnprof_scale_bf16<<<grid_for((const void *)attnprof_scale_bf16, n_vec), kThreads, 0, s>>>((const uint4 *)in, (uint4 *)out, n_vec, tin, tout,
                                                              n_tail, scale);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_causal_mask_rect_u8(uint8_t *mask, int rows, int cols, cudaStream_t s)
{
    attnprof_causal_mask_u8<<<grid_for((const void *)attnprof_causal_mask_u8, (size_t)rows * cols), kThreads, 0, s>>>(mask, rows, cols);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_causal_mask_u8(uint8_t *mask, int S, cudaStream_t s)
{
    return launch_causal_mask_rect_u8(mask, S, S, s);
}

extern "C" cudaError_t launch_repeat_kv_bf16(const void *in, void *out, int batch, int kv_heads, int group,
                                             size_t head_elems, cudaStream_t s)
{
    const size_t out_heads = (size_t)batch * kv_heads * group;
    const size_t work = head_elems % 8 == 0 ? out_heads * head_elems / 8 : out_heads * head_elems;
    attnprof_repeat_kv_bf16<<<grid_for((const void *)attnprof_repeat_kv_bf16, work), kThreads, 0, s>>>((const __nv_bfloat16 *)in, (__nv_bfloat16 *)out,
                                                               out_heads, group, head_elems);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_masked_fill_bf16(void *x, const uint8_t *mask, size_t matrices, int S, float value,
                                               cudaStream_t s)
{
    return launch_masked_fill_rect_bf16(x, mask, matrices, S, S, value, s);
}

extern "C" cudaError_t launch_masked_fill_rect_bf16(void *x, const uint8_t *mask, size_t matrices, int rows, int cols,
                                                    float value, cudaStream_t s)
{
    size_t per_matrix = (size_t)rows * cols;
    const size_t warps = (size_t)resident_blocks((const void *)attnprof_masked_fill_rows_bf16) * (kThreads / 32);
    /* Row by row where a lane has a whole batch of chunks in every row (cols >= 2048) and
     * there are rows for every resident warp; else place by place. */
    const bool rows_kernel = cols % 8 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)mask % 8 == 0 &&
                             (size_t)cols >= 8 * 32 * FILL_BATCH && (size_t)rows * matrices >= warps;
    if (!rows_kernel) {
        bool vectorizable = per_matrix % 16 == 0 && ((uintptr_t)x | (uintptr_t)mask) % 16 == 0;
        if (vectorizable)
            attnprof_masked_fill_bf16<<<grid_for((const void *)attnprof_masked_fill_bf16, per_matrix / 16 * matrices), kThreads, 0, s>>>(
                (__nv_bfloat16 *)x, mask, matrices, per_matrix, value);
        else
            attnprof_masked_fill_bf16_scalar<<<grid_for((const void *)attnprof_masked_fill_bf16_scalar, per_matrix * matrices), kThreads, 0, s>>>(
                (__nv_bfloat16 *)x, mask, matrices, per_matrix, value);
        return cudaGetLastError();
    }
    /* Matrices per warp item: 1 while the [rows, cols] mask fits in half the L2 (every matrix
     * then reads it from there); larger, as many as still leave FILL_ITEMS_PER_WARP items for
     * every resident warp, so that the mask comes from DRAM once a group instead of once a
     * matrix. */
    static int l2_bytes = -1;
    if (l2_bytes < 0) {
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, dev) != cudaSuccess)
            l2_bytes = 0;
    }
    size_t group = 1;
    if (2 * per_matrix > (size_t)l2_bytes)
        group = (size_t)rows * matrices / (FILL_ITEMS_PER_WARP * warps);
    group = group < 1 ? 1 : group > matrices ? matrices : group;
    const size_t items = (matrices + group - 1) / group * (size_t)rows;
    attnprof_masked_fill_rows_bf16<<<grid_for((const void *)attnprof_masked_fill_rows_bf16, items * 32), kThreads, 0, s>>>(
        (__nv_bfloat16 *)x, mask, matrices, (unsigned)rows, (unsigned)cols, (unsigned)group, value);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_softmax_rows_bf16(const void *in, void *out, size_t rows, int cols, cudaStream_t s)
{
    const __nv_bfloat16 *i = (const __nv_bfloat16 *)in;
    __nv_bfloat16 *o = (__nv_bfloat16 *)out;
    bool vec_ok = cols % 8 == 0 && ((uintptr_t)in | (uintptr_t)out) % 16 == 0;
    /* Warp per row: rows * 32 threads of work; block per row: one block per row. Both
     * grids at most the blocks resident at once. */
#define WARP_ROWS(K) K<<<grid_for((const void *)K, rows * 32), kThreads, 0, s>>>(i, o, rows, cols)
#define BLOCK_ROWS(K) K<<<grid_for((const void *)K, rows * kThreads), kThreads, 0, s>>>(i, o, rows, cols)
    if (vec_ok && cols <= 256)
        WARP_ROWS(attnprof_softmax_rows_bf16_v1);
    else if (vec_ok && cols <= 512)
        WARP_ROWS(attnprof_softmax_rows_bf16_v2);
    else if (vec_ok && cols <= 1024)
        WARP_ROWS(attnprof_softmax_rows_bf16_v4);
    else if (vec_ok && cols <= 2048)
        WARP_ROWS(attnprof_softmax_rows_bf16_v8);
    else if (vec_ok && cols <= 4096)
        BLOCK_ROWS(attnprof_softmax_rows_bf16_block_v2);
    else if (vec_ok && cols <= 8192)
        BLOCK_ROWS(attnprof_softmax_rows_bf16_block_v4);
    else if (softmax_staged_takes_bf16(in, out, cols)) /* 8193-16384, switched on: softmax_staged.h */
        return launch_softmax_staged_bf16(in, out, rows, cols, s);
    else if (vec_ok && cols <= 16384)
        BLOCK_ROWS(attnprof_softmax_rows_bf16_block_v8);
    else
        BLOCK_ROWS(attnprof_softmax_rows_bf16_long);
#undef WARP_ROWS
#undef BLOCK_ROWS
    return cudaGetLastError();
}
