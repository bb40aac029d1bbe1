// What limits the unfused row kernels and scale (issue 40, item 5), and candidates against
// the ceilings measured in the same process (bench/results/2026-12-04-elementwise2.md).
//
//   softmax_probe [--once] [--only=copy,scale,softmax,math,staged,rowall,fill] [BxHxS ...]
//                 default: every section at 8x16x1024 4x16x4096
//
// Ceilings: cudaMemcpyAsync and 16-byte copy kernels with U = 1, 2, 4 loads a thread in flight
// (loads first, then stores); a read-only kernel for row_all (which writes a byte a row); a
// memset for the fill. Sections, every candidate checked against production's output:
//   copy     the copy kernel under 16 load/store cache policies (ld plain, .nc L1::no_allocate,
//            with an L2 evict-first policy, with a 256-byte L2 prefetch; st plain, .cs, L2
//            evict-first, L1::no_allocate), contiguous 64 KiB pieces a block, and the bulk-copy
//            engine (cp.async.bulk in and out of shared memory, 2-8 chunks of 4-32 KiB);
//   scale    production's scale under six of those policies;
//   softmax  production's register softmax (warp or block per row) under six policies;
//   math     math's FP32 softmax with 8, 16 or 32 values a thread over the resident blocks;
//   staged   the row's vectors copied to shared memory by cp.async, STAGES rows of a warp or a
//            block in flight, each thread reading back only what it copied (no barrier for the
//            data), bf16 (__expf) and FP32 (expf); and production with its port of them
//            (kernels/softmax_staged.cu) switched on, where it takes the row length;
//   rowall   row_all with 8 or 16 consecutive rows a warp item, 8 loads a lane in flight;
//   fill     the in-place fill's row pieces stored by the bulk-copy engine from a shared
//            buffer of -inf, and the out-of-place masked_fill (clone + fill) against one
//            copy-select pass.
// --once launches each kernel once (for compute-sanitizer and ncu). sm_90 only (make
// build/softmax_probe).
#include "elementwise.h"
#include "event_median.cuh"
#include "math_kernels.h"
#include "softmax_staged.h"
#include "softmax_staged_row.cuh"

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

static int g_samples = 15, g_sms;
static cudaStream_t g_s;
static cudaEvent_t g_e0, g_e1;
template <class F> static double median_us(F launch)
{
    return event_median_us(g_s, g_e0, g_e1, g_samples, g_samples > 1 ? 2 : 0, launch);
}

// ---- ceilings -------------------------------------------------------------------------------
template <int U> __global__ void copy_u(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride * U) {
        uint4 v[U];
#pragma unroll
        for (int k = 0; k < U; k++)
            if (i + k * stride < n)
                v[k] = in[i + k * stride];
#pragma unroll
        for (int k = 0; k < U; k++)
            if (i + k * stride < n)
                out[i + k * stride] = v[k];
    }
}

template <int U> __global__ void read_u(const uint4 *__restrict__ in, unsigned *sink, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned x = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride * U) {
        uint4 v[U];
#pragma unroll
        for (int k = 0; k < U; k++)
            v[k] = i + k * stride < n ? in[i + k * stride] : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int k = 0; k < U; k++)
            x ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
    if (x == 0x9e3779b9u) // never in practice; keeps the loads
        *sink = x;
}

// ---- staged softmax -------------------------------------------------------------------------
using namespace softmax_staged_row; // the staged rows' pieces, shared with production's port

// BLOCK false: a warp per row (rows of at most VEC*32 vectors); true: a block per row (VEC*blockDim).
template <class T, int VEC, int STAGES, bool BLOCK, bool PRECISE>
__global__ void softmax_staged(const T *__restrict__ in, T *__restrict__ out, size_t rows, int cols)
{
    constexpr int E = VecElems<T>::n;
    extern __shared__ uint4 ring[];
    __shared__ float red[2][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int first = BLOCK ? threadIdx.x : lane, step = BLOCK ? blockDim.x : 32;
    const int n_vec = cols / E, row_slots = VEC * step;
    uint4 *mine = BLOCK ? ring : ring + (size_t)warp * STAGES * row_slots;
    const size_t r0 = BLOCK ? blockIdx.x : (size_t)blockIdx.x * warps + warp;
    const size_t rstep = BLOCK ? gridDim.x : (size_t)gridDim.x * warps;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        const size_t r = r0 + s * rstep;
        if (r < rows)
            stage_row<VEC>(mine + s * row_slots, reinterpret_cast<const uint4 *>(in + r * cols), first, step, n_vec);
        cp_async_commit();
    }
    int slot = 0, flip = 0;
    for (size_t row = r0; row < rows; row += rstep, flip ^= 1) {
        const size_t ahead = row + (STAGES - 1) * rstep;
        const int aslot = slot == 0 ? STAGES - 1 : slot - 1; // the slot this thread read last row
        if (ahead < rows)
            stage_row<VEC>(mine + aslot * row_slots, reinterpret_cast<const uint4 *>(in + ahead * cols), first, step,
                           n_vec);
        cp_async_commit();
        cp_async_wait<STAGES - 1>();
        float v[VEC][E];
        float mx = warp_max(unstage_row<VEC, E>(mine + slot * row_slots, first, step, n_vec, v));
        if (BLOCK) {
            if (lane == 0)
                red[flip][warp] = mx;
            __syncthreads();
            mx = -INFINITY;
            for (int w = 0; w < warps; w++)
                mx = fmaxf(mx, red[flip][w]);
        }
        float sum = warp_sum(exp_sum<PRECISE>(v, mx));
        if (BLOCK) {
            __syncthreads();
            if (lane == 0)
                red[flip][warp] = sum;
            __syncthreads();
            sum = 0.f;
            for (int w = 0; w < warps; w++)
                sum += red[flip][w];
        }
        const float inv = 1.f / sum;
        uint4 *dst = reinterpret_cast<uint4 *>(out + row * cols);
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const int idx = first + k * step;
            if (idx < n_vec)
                dst[idx] = pack(v[k], inv);
        }
        slot = slot == STAGES - 1 ? 0 : slot + 1;
    }
    cp_async_wait<0>();
}

template <class T, int VEC, int STAGES, bool BLOCK, bool PRECISE, int threads>
static void launch_staged(const T *in, T *out, size_t rows, int cols)
{
    auto k = softmax_staged<T, VEC, STAGES, BLOCK, PRECISE>;
    const size_t smem = (size_t)STAGES * VEC * (BLOCK ? threads : threads) * 16;
    static int blocks = 0;
    if (!blocks) {
        CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem));
        cudaFuncAttributes a;
        CK(cudaFuncGetAttributes(&a, k));
        blocks = (per_sm > 0 ? per_sm : 1) * g_sms;
        printf("#   staged<%s,VEC %d,STAGES %d,%s>: %d regs, %zu B smem, %d blocks/SM of %d threads\n",
               sizeof(T) == 2 ? "bf16" : "f32", VEC, STAGES, BLOCK ? "block" : "warp", a.numRegs, smem, per_sm,
               threads);
    }
    const size_t need = BLOCK ? rows : (rows + threads / 32 - 1) / (threads / 32);
    const int grid = (int)(need < (size_t)blocks ? need : blocks);
    k<<<grid, threads, smem, g_s>>>(in, out, rows, cols);
}

// ---- memory policies ------------------------------------------------------------------------
// Loads: 0 plain; 1 non-coherent, no L1 allocation; 2 that with an L2 evict-first policy;
// 3 that with a 256-byte L2 prefetch. Stores: 0 plain; 1 .cs (streaming); 2 an L2
// evict-first policy; 3 no L1 allocation.
static const char *const LD_NAME[] = {"ld plain", "ld nc.na", "ld nc.na.ef", "ld nc.na.256B"};
static const char *const ST_NAME[] = {"st plain", "st .cs", "st L2 ef", "st L1 na"};

__device__ __forceinline__ uint64_t evict_first_policy()
{
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}

template <int LD> __device__ __forceinline__ uint4 ldg(const uint4 *p)
{
    uint4 v;
    if constexpr (LD == 0) {
        v = *p;
    } else if constexpr (LD == 1) {
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    } else if constexpr (LD == 2) {
        asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(evict_first_policy()));
    } else {
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    }
    return v;
}

template <int ST> __device__ __forceinline__ void stg(uint4 *p, uint4 v)
{
    if constexpr (ST == 0)
        *p = v;
    else if constexpr (ST == 1)
        asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
    else if constexpr (ST == 2)
        asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "r"(v.x),
                     "r"(v.y), "r"(v.z), "r"(v.w), "l"(evict_first_policy())
                     : "memory");
    else
        asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                     "r"(v.w)
                     : "memory");
}

template <int LD, int ST> __global__ void copy_pol(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        stg<ST>(out + i, ldg<LD>(in + i));
}

// Each block copies contiguous 64 KiB pieces (its threads 16 bytes apart, 16 loads a thread in flight).
__global__ void copy_pieces(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n)
{
    constexpr int U = 16;
    const size_t piece = (size_t)blockDim.x * U;
    for (size_t p0 = (size_t)blockIdx.x * piece; p0 < n; p0 += (size_t)gridDim.x * piece) {
        uint4 v[U];
#pragma unroll
        for (int k = 0; k < U; k++)
            if (p0 + k * blockDim.x + threadIdx.x < n)
                v[k] = in[p0 + k * blockDim.x + threadIdx.x];
#pragma unroll
        for (int k = 0; k < U; k++)
            if (p0 + k * blockDim.x + threadIdx.x < n)
                out[p0 + k * blockDim.x + threadIdx.x] = v[k];
    }
}

// ---- the bulk-copy (TMA) engine: copy, and the fill's row pieces ------------------------------
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint64_t *b, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t *b, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *b, unsigned parity)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(smem_u32(b)), "r"(parity)
                     : "memory");
}
__device__ __forceinline__ void bulk_load(void *smem, const void *gmem, unsigned bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_u32(smem)),
                 "l"(gmem), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}
__device__ __forceinline__ void bulk_store(void *gmem, const void *smem, unsigned bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem), "r"(smem_u32(smem)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// One thread a block: NST chunks of CH bytes in flight, each stored back as it lands.
template <int NST, int CH> __global__ void copy_tma(const char *__restrict__ in, char *__restrict__ out, size_t n_chunks)
{
    extern __shared__ __align__(128) char stage[];
    __shared__ uint64_t bar[NST];
    if (threadIdx.x != 0)
        return;
    for (int s = 0; s < NST; s++)
        mbar_init(&bar[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < NST; s++) {
        const size_t c = blockIdx.x + (size_t)s * gridDim.x;
        if (c < n_chunks) {
            mbar_expect_tx(&bar[s], CH);
            bulk_load(stage + s * CH, in + c * CH, CH, &bar[s]);
        }
    }
    for (size_t i = 0;; i++) {
        const size_t c = blockIdx.x + i * gridDim.x;
        if (c >= n_chunks)
            break;
        const int s = (int)(i % NST);
        mbar_wait(&bar[s], (unsigned)((i / NST) & 1));
        bulk_store(out + c * CH, stage + s * CH, CH);
        const size_t nc = c + (size_t)NST * gridDim.x;
        if (nc < n_chunks) {
            bulk_wait_read0();
            mbar_expect_tx(&bar[s], CH);
            bulk_load(stage + s * CH, in + nc * CH, CH, &bar[s]);
        }
    }
    bulk_wait0();
}

// The causal fill's row pieces written by the bulk-copy engine: a warp a row, lane 0 storing the
// row's whole masked 16-byte chunks from a shared buffer of -inf in one bulk copy, lane 1 the
// diagonal chunk's masked scores (read, fill, write).
__global__ void fill_tma_rows(uint4 *__restrict__ x, size_t matrices, unsigned S)
{
    extern __shared__ __align__(128) uint4 neg[];
    const unsigned cpr = S / 8, lane = threadIdx.x % 32;
    for (unsigned i = threadIdx.x; i < cpr; i += blockDim.x)
        neg[i] = make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const size_t rows = matrices * S, warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const unsigned row = (unsigned)(r % S), diag = (row + 1) / 8, first_full = (row + 8) / 8;
        uint4 *xr = x + r * cpr;
        if (lane == 0 && first_full < cpr)
            bulk_store(xr + first_full, neg, (cpr - first_full) * 16);
        if (lane == 1 && diag < first_full && diag < cpr) {
            uint4 a = xr[diag];
            uint16_t *e = reinterpret_cast<uint16_t *>(&a);
#pragma unroll
            for (int j = 0; j < 8; j++)
                if (diag * 8 + j > row)
                    e[j] = 0xff80;
            xr[diag] = a;
        }
    }
    if (lane == 0)
        bulk_wait0();
}

// The out-of-place masked_fill as one pass: every score read, written to the output, -inf where
// the [S, S] mask is set (a warp a row, the mask row's 8-byte pieces from L2).
template <int LD, int ST>
__global__ void copy_select(const uint4 *__restrict__ in, uint4 *__restrict__ out, const uint2 *__restrict__ mask,
                            size_t matrices, unsigned S)
{
    const unsigned cpr = S / 8, lane = threadIdx.x % 32;
    const size_t rows = matrices * S, warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const uint2 *mr = mask + (size_t)(r % S) * cpr;
        for (unsigned q = lane; q < cpr; q += 32) {
            uint4 v = ldg<LD>(in + r * cpr + q);
            const uint2 m = mr[q];
            if (m.x | m.y) {
                uint16_t *e = reinterpret_cast<uint16_t *>(&v);
                const uint8_t *mb = reinterpret_cast<const uint8_t *>(&m);
#pragma unroll
                for (int j = 0; j < 8; j++)
                    if (mb[j])
                        e[j] = 0xff80;
            }
            stg<ST>(out + r * cpr + q, v);
        }
    }
}

// ---- production's register softmax with a load / store policy ------------------------------
template <int VEC, int LD>
__device__ __forceinline__ void ld_row(const uint4 *__restrict__ src, int first, int step, int n_vec, uint4 (&raw)[VEC])
{
#pragma unroll
    for (int k = 0; k < VEC; k++)
        if (first + k * step < n_vec)
            raw[k] = ldg<LD>(src + first + k * step);
}
template <int VEC>
__device__ __forceinline__ float up_row(const uint4 (&raw)[VEC], int first, int step, int n_vec, float (&v)[VEC][8])
{
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        if (first + k * step < n_vec)
            unpack(raw[k], v[k]);
        else
#pragma unroll
            for (int j = 0; j < 8; j++)
                v[k][j] = -INFINITY;
#pragma unroll
        for (int j = 0; j < 8; j++)
            mx = fmaxf(mx, v[k][j]);
    }
    return mx;
}
template <int VEC, int ST>
__device__ __forceinline__ void st_row(uint4 *__restrict__ dst, int first, int step, int n_vec, const float (&v)[VEC][8],
                                       float s)
{
#pragma unroll
    for (int k = 0; k < VEC; k++)
        if (first + k * step < n_vec)
            stg<ST>(dst + first + k * step, pack(v[k], s));
}

// Warp per row (production's attnprof_softmax_rows_bf16_v<VEC>).
template <int VEC, int LD, int ST>
__global__ void softmax_warp_pol(const __nv_bfloat16 *__restrict__ in, __nv_bfloat16 *__restrict__ out, size_t rows,
                                 int cols)
{
    const int lane = threadIdx.x & 31, n_vec = cols / 8;
    const size_t warps = (size_t)gridDim.x * (blockDim.x / 32);
    for (size_t row = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; row < rows; row += warps) {
        uint4 raw[VEC];
        float v[VEC][8];
        ld_row<VEC, LD>(reinterpret_cast<const uint4 *>(in + row * cols), lane, 32, n_vec, raw);
        const float mx = warp_max(up_row<VEC>(raw, lane, 32, n_vec, v));
        const float inv = 1.f / warp_sum(exp_sum<false>(v, mx));
        st_row<VEC, ST>(reinterpret_cast<uint4 *>(out + row * cols), lane, 32, n_vec, v, inv);
    }
}

// Block per row with the next row's loads in flight (production's _block_v<VEC>).
template <int VEC, bool PREFETCH, int LD, int ST>
__global__ void softmax_block_pol(const __nv_bfloat16 *__restrict__ in, __nv_bfloat16 *__restrict__ out, size_t rows,
                                  int cols)
{
    __shared__ float red[2][32];
    const int warps = blockDim.x / 32, lane = threadIdx.x & 31, warp = threadIdx.x / 32, n_vec = cols / 8;
    int flip = 0;
    uint4 raw[VEC];
    size_t row = blockIdx.x;
    if (PREFETCH && row < rows)
        ld_row<VEC, LD>(reinterpret_cast<const uint4 *>(in + row * cols), threadIdx.x, blockDim.x, n_vec, raw);
    for (; row < rows; row += gridDim.x, flip ^= 1) {
        float v[VEC][8];
        if (!PREFETCH)
            ld_row<VEC, LD>(reinterpret_cast<const uint4 *>(in + row * cols), threadIdx.x, blockDim.x, n_vec, raw);
        float mx = warp_max(up_row<VEC>(raw, threadIdx.x, blockDim.x, n_vec, v));
        const size_t next = row + gridDim.x;
        if (PREFETCH && next < rows)
            ld_row<VEC, LD>(reinterpret_cast<const uint4 *>(in + next * cols), threadIdx.x, blockDim.x, n_vec, raw);
        if (lane == 0)
            red[flip][warp] = mx;
        __syncthreads();
        mx = -INFINITY;
        for (int w = 0; w < warps; w++)
            mx = fmaxf(mx, red[flip][w]);
        float sum = warp_sum(exp_sum<false>(v, mx));
        __syncthreads();
        if (lane == 0)
            red[flip][warp] = sum;
        __syncthreads();
        sum = 0.f;
        for (int w = 0; w < warps; w++)
            sum += red[flip][w];
        st_row<VEC, ST>(reinterpret_cast<uint4 *>(out + row * cols), threadIdx.x, blockDim.x, n_vec, v, 1.f / sum);
    }
}

// math's softmax with PER floats a thread in registers (production: PER 8, up to 1024 threads).
template <int PER, int LD, int ST>
__global__ void math_softmax_reg(const float *__restrict__ in, float *__restrict__ out, size_t rows, int cols)
{
    __shared__ float red[2][32];
    const int warps = blockDim.x / 32, lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    int flip = 0;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x, flip ^= 1) {
        const float *x = in + row * cols;
        float v[PER];
        float m = -INFINITY;
#pragma unroll
        for (int t = 0; t < PER; t++) {
            const int j = threadIdx.x + t * blockDim.x;
            v[t] = j < cols ? (LD ? __ldcs(x + j) : x[j]) : -INFINITY;
            m = fmaxf(m, v[t]);
        }
        m = warp_max(m);
        if (lane == 0)
            red[flip][warp] = m;
        __syncthreads();
        m = -INFINITY;
        for (int w = 0; w < warps; w++)
            m = fmaxf(m, red[flip][w]);
        float sum = 0.f;
#pragma unroll
        for (int t = 0; t < PER; t++) {
            v[t] = expf(v[t] - m);
            sum += threadIdx.x + t * blockDim.x < cols ? v[t] : 0.f;
        }
        sum = warp_sum(sum);
        __syncthreads();
        if (lane == 0)
            red[flip][warp] = sum;
        __syncthreads();
        sum = 0.f;
        for (int w = 0; w < warps; w++)
            sum += red[flip][w];
        const float inv = 1.f / sum;
#pragma unroll
        for (int t = 0; t < PER; t++) {
            const int j = threadIdx.x + t * blockDim.x;
            if (j < cols) {
                if (ST)
                    __stcs(out + row * cols + j, v[t] * inv);
                else
                    out[row * cols + j] = v[t] * inv;
            }
        }
    }
}

// ---- row_all and scale ----------------------------------------------------------------------
__device__ __forceinline__ unsigned zero_byte(unsigned w) { return ((w - 0x01010101u) & ~w & 0x80808080u) != 0; }

// R consecutive rows (R * cols contiguous bytes) a warp item; bit r of a lane's flags: row r holds a zero.
template <int R>
__global__ void row_all_multi(const uint8_t *__restrict__ in, uint8_t *__restrict__ out, size_t rows, int cols)
{
    const int lane = threadIdx.x & 31;
    const unsigned n16 = cols / 16;
    const size_t items = (rows + R - 1) / R, warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t w = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; w < items; w += warps) {
        const size_t row0 = w * R;
        const unsigned nr = (unsigned)(rows - row0 < R ? rows - row0 : R), span = nr * n16;
        const uint4 *x = reinterpret_cast<const uint4 *>(in + row0 * cols);
        unsigned flags = 0;
        for (unsigned j0 = lane; j0 < span; j0 += 32 * 8) {
            uint4 v[8];
#pragma unroll
            for (int k = 0; k < 8; k++)
                v[k] = j0 + 32 * k < span ? x[j0 + 32 * k] : make_uint4(~0u, ~0u, ~0u, ~0u);
#pragma unroll
            for (int k = 0; k < 8; k++) {
                const unsigned z = zero_byte(v[k].x) | zero_byte(v[k].y) | zero_byte(v[k].z) | zero_byte(v[k].w);
                if (z)
                    flags |= 1u << ((j0 + 32 * k) / n16);
            }
        }
        flags = __reduce_or_sync(0xffffffffu, flags);
        if ((unsigned)lane < nr)
            out[row0 + lane] = (flags >> lane & 1u) ? 0 : 1;
    }
}

template <int U>
__global__ void scale_u(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n, float scale)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride * U) {
        uint4 v[U];
#pragma unroll
        for (int k = 0; k < U; k++)
            if (i + k * stride < n)
                v[k] = in[i + k * stride];
#pragma unroll
        for (int k = 0; k < U; k++) {
            __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&v[k]);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float2 f = __bfloat1622float2(h[j]);
                h[j] = __floats2bfloat162_rn(f.x * scale, f.y * scale);
            }
            if (i + k * stride < n)
                out[i + k * stride] = v[k];
        }
    }
}

template <class K> static int resident(K k, int threads, size_t smem = 0)
{
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem));
    return (per_sm > 0 ? per_sm : 1) * g_sms;
}

// ---- checks ---------------------------------------------------------------------------------
__global__ void init_scores(uint16_t *x, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 32);
        h ^= h >> 15;
        h *= 0x2c1b3c6du;
        h ^= h >> 12;
        const float f = ((h & 0xffff) / 65535.f - 0.5f) * 16.f;
        x[i] = __bfloat16_as_ushort(__float2bfloat16(f));
    }
}
__global__ void widen(const __nv_bfloat16 *in, float *out, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = __bfloat162float(in[i]);
}
// Largest |a - b| / max(|b|, 1e-30) over n floats or bf16s (as floats), and count of differing bit patterns.
template <class T> __global__ void diff(const T *a, const T *b, size_t n, unsigned long long *ndiff, float *maxrel)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float x, y;
        if constexpr (sizeof(T) == 2) {
            x = __bfloat162float(a[i]);
            y = __bfloat162float(b[i]);
        } else {
            x = a[i];
            y = b[i];
        }
        if (__float_as_uint(x) != __float_as_uint(y)) {
            atomicAdd(ndiff, 1ull);
            const float r = fabsf(x - y) / fmaxf(fabsf(y), 1e-30f);
            atomicMax(reinterpret_cast<int *>(maxrel), __float_as_int(isnan(r) ? 1e30f : r));
        }
    }
}

static unsigned long long *g_nd;
static float *g_mr;
template <class T> static const char *compare(const T *a, const T *b, size_t n)
{
    static char buf[96];
    CK(cudaMemsetAsync(g_nd, 0, 8, g_s));
    CK(cudaMemsetAsync(g_mr, 0, 4, g_s));
    diff<T><<<g_sms * 8, 256, 0, g_s>>>(a, b, n, g_nd, g_mr);
    unsigned long long nd;
    float mr;
    CK(cudaMemcpy(&nd, g_nd, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&mr, g_mr, 4, cudaMemcpyDeviceToHost));
    snprintf(buf, sizeof buf, nd ? "%llu differ, max rel %.2e" : "identical", nd, mr);
    return buf;
}

static void line(const char *shape, const char *what, double bytes, double us, double ceil_us, const char *check)
{
    printf("%-10s %-44s %9.1f us %6.2f TB/s %6.1f%%  %s\n", shape, what, us, bytes / us / 1e6, 100.0 * ceil_us / us,
           check ? check : "");
    fflush(stdout);
}

__global__ void init_rowall(uint8_t *x, size_t rows, int cols)
{
    const size_t n = rows * cols;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / cols, c = i % cols;
        x[i] = r % 3 == 0 || c != (r * 37) % cols; // a third of the rows all set, the others one zero
    }
}

struct Bufs {
    __nv_bfloat16 *ba, *bb, *bc;
    float *fa, *fb, *fc;
    uint8_t *u8, *ra, *rb;
};

template <class T> static double best_copy(const T *a, T *b, size_t bytes, const char *shape, const char *what)
{
    const size_t n = bytes / 16;
    const double u1 = median_us([&] { copy_u<1><<<resident(copy_u<1>, 256), 256, 0, g_s>>>((const uint4 *)a, (uint4 *)b, n); });
    const double u2 = median_us([&] { copy_u<2><<<resident(copy_u<2>, 256), 256, 0, g_s>>>((const uint4 *)a, (uint4 *)b, n); });
    const double u4 = median_us([&] { copy_u<4><<<resident(copy_u<4>, 256), 256, 0, g_s>>>((const uint4 *)a, (uint4 *)b, n); });
    const double api = median_us([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, g_s)); });
    double c = u1;
    c = u2 < c ? u2 : c;
    c = u4 < c ? u4 : c;
    c = api < c ? api : c;
    printf("%-10s copy ceiling %-31s %9.1f us (copy U1 %.1f, U2 %.1f, U4 %.1f, memcpy %.1f), %.2f TB/s\n", shape, what,
           c, u1, u2, u4, api, 2.0 * bytes / c / 1e6);
    return c;
}

#define BF16_STAGED(VEC, ST, BLK, THR)                                                                           \
    if ((BLK ? VEC * THR : VEC * 32) * 8 >= S && (BLK ? (VEC - 1) * THR : (VEC - 1) * 32) * 8 < S) {             \
        auto go = [&] { launch_staged<__nv_bfloat16, VEC, ST, BLK, false, THR>(b.ba, b.bc, rows, S); };          \
        go();                                                                                                    \
        CK(cudaGetLastError());                                                                                  \
        char name[64];                                                                                           \
        snprintf(name, sizeof name, "bf16 staged %s%d VEC %d STAGES %d", BLK ? "block" : "warp", THR, VEC, ST); \
        const char *chk = compare(b.bc, b.bb, m);                                                                \
        line(shape, name, 4.0 * m, median_us(go), cb, chk);                                                      \
    }
#define F32_STAGED(VEC, ST, BLK, THR)                                                                            \
    if ((BLK ? VEC * THR : VEC * 32) * 4 >= S && (BLK ? (VEC - 1) * THR : (VEC - 1) * 32) * 4 < S) {             \
        auto go = [&] { launch_staged<float, VEC, ST, BLK, true, THR>(b.fa, b.fc, rows, S); };                   \
        go();                                                                                                    \
        CK(cudaGetLastError());                                                                                  \
        char name[64];                                                                                           \
        snprintf(name, sizeof name, "f32 staged %s%d VEC %d STAGES %d", BLK ? "block" : "warp", THR, VEC, ST);  \
        const char *chk = compare(b.fc, b.fb, m);                                                                \
        line(shape, name, 8.0 * m, median_us(go), cf, chk);                                                      \
    }

// Production with the staged kernels switched on (kernels/softmax_staged.cu, the port of the
// candidates below), where they take the row length, against production's default output.
template <class T, class P, class F>
static void staged_production(const char *shape, const char *what, P takes, F launch, const T *out, const T *ref,
                              double bytes, size_t m, double ceil_us)
{
    softmax_staged_set(1); /* before the question: switched off, the answer is no */
    if (!takes()) {
        softmax_staged_set(0);
        return;
    }
    launch();
    CK(cudaGetLastError());
    const char *chk = compare(out, ref, m);
    line(shape, what, bytes, median_us(launch), ceil_us, chk);
    softmax_staged_set(0);
}

static void bf16_softmax(const char *shape, Bufs &b, size_t rows, int S, size_t m, double cb)
{
    auto prod = [&] { CK(launch_softmax_rows_bf16(b.ba, b.bb, rows, S, g_s)); };
    prod();
    line(shape, "bf16 softmax production", 4.0 * m, median_us(prod), cb, "");
    staged_production(
        shape, "bf16 softmax production, staged on", [&] { return softmax_staged_takes_bf16(b.ba, b.bc, S); },
        [&] { CK(launch_softmax_rows_bf16(b.ba, b.bc, rows, S, g_s)); }, b.bc, b.bb, 4.0 * m, m, cb);
    BF16_STAGED(4, 2, false, 256)
    BF16_STAGED(4, 3, false, 256)
    BF16_STAGED(4, 4, false, 256)
    BF16_STAGED(8, 2, false, 256)
    BF16_STAGED(8, 3, false, 256)
    BF16_STAGED(1, 3, true, 256)
    BF16_STAGED(1, 4, true, 256)
    BF16_STAGED(2, 2, true, 256)
    BF16_STAGED(2, 3, true, 256)
    BF16_STAGED(2, 4, true, 256)
    BF16_STAGED(4, 2, true, 256)
    BF16_STAGED(4, 3, true, 256)
    BF16_STAGED(8, 2, true, 256)
    BF16_STAGED(8, 3, true, 256)
    BF16_STAGED(2, 3, true, 512)
    BF16_STAGED(4, 2, true, 512)
    BF16_STAGED(4, 3, true, 512)
}

static void f32_softmax(const char *shape, Bufs &b, size_t rows, int S, size_t m, double cf)
{
    auto prod = [&] { CK(math_softmax_f32(b.fa, b.fb, rows, S, g_s)); };
    prod();
    line(shape, "f32 math softmax production", 8.0 * m, median_us(prod), cf, "");
    staged_production(
        shape, "f32 math softmax production, staged on", [&] { return softmax_staged_takes_f32(b.fa, b.fc, S); },
        [&] { CK(math_softmax_f32(b.fa, b.fc, rows, S, g_s)); }, b.fc, b.fb, 8.0 * m, m, cf);
    F32_STAGED(8, 2, false, 256)
    F32_STAGED(8, 3, false, 256)
    F32_STAGED(1, 3, true, 256)
    F32_STAGED(2, 3, true, 256)
    F32_STAGED(4, 2, true, 256)
    F32_STAGED(4, 3, true, 256)
    F32_STAGED(8, 2, true, 256)
    F32_STAGED(8, 3, true, 256)
    F32_STAGED(16, 2, true, 256)
    F32_STAGED(4, 3, true, 512)
    F32_STAGED(8, 2, true, 512)
    F32_STAGED(8, 3, true, 512)
    F32_STAGED(4, 2, true, 1024)
    F32_STAGED(4, 3, true, 1024)
}

static const char *memcmp_dev(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint8_t *ha = (uint8_t *)malloc(n), *hb = (uint8_t *)malloc(n);
    CK(cudaMemcpy(ha, a, n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb, b, n, cudaMemcpyDeviceToHost));
    const int same = memcmp(ha, hb, n) == 0;
    free(ha);
    free(hb);
    return same ? "identical" : "DIFFERS";
}

template <int R> static void row_all_cand(const char *shape, Bufs &b, size_t rows, int S, size_t m, double cr, double cc)
{
    auto go = [&] { row_all_multi<R><<<resident(row_all_multi<R>, 256), 256, 0, g_s>>>(b.u8, b.rb, rows, S); };
    go();
    CK(cudaGetLastError());
    const char *chk = memcmp_dev(b.ra, b.rb, rows);
    char name[64];
    snprintf(name, sizeof name, "row_all %d rows a warp", R);
    const double us = median_us(go);
    line(shape, name, (double)m, us, cr, chk);
    printf("%-10s   (against the copy ceiling of the same bytes: %.1f%%)\n", shape, 100.0 * cc / us);
}

template <int LD, int ST>
__global__ void scale_pol(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n, float scale)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = ldg<LD>(in + i);
        __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&v);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const float2 f = __bfloat1622float2(h[j]);
            h[j] = __floats2bfloat162_rn(f.x * scale, f.y * scale);
        }
        stg<ST>(out + i, v);
    }
}

static bool g_on[8];
enum { SEC_COPY, SEC_SCALE, SEC_SOFTMAX, SEC_MATH, SEC_STAGED, SEC_ROWALL, SEC_FILL };
static const char *const SEC_NAME[] = {"copy", "scale", "softmax", "math", "staged", "rowall", "fill"};

template <int LD, int ST> static void copy_one(const char *shape, const uint4 *a, uint4 *b, size_t n, double c)
{
    auto go = [&] { copy_pol<LD, ST><<<resident(copy_pol<LD, ST>, 256), 256, 0, g_s>>>(a, b, n); };
    CK(cudaMemsetAsync(b, 0, n * 16, g_s));
    go();
    char name[64];
    snprintf(name, sizeof name, "copy %s, %s", LD_NAME[LD], ST_NAME[ST]);
    line(shape, name, 32.0 * n, median_us(go), c, compare((const __nv_bfloat16 *)b, (const __nv_bfloat16 *)a, n * 8));
}
template <int LD> static void copy_ld(const char *shape, const uint4 *a, uint4 *b, size_t n, double c)
{
    copy_one<LD, 0>(shape, a, b, n, c);
    copy_one<LD, 1>(shape, a, b, n, c);
    copy_one<LD, 2>(shape, a, b, n, c);
    copy_one<LD, 3>(shape, a, b, n, c);
}
template <int NST, int CH> static void copy_tma_one(const char *shape, const char *a, char *b, size_t bytes, double c)
{
    auto k = copy_tma<NST, CH>;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, NST * CH));
    const int grid = resident(k, 32, NST * CH);
    auto go = [&] { k<<<grid, 32, NST * CH, g_s>>>(a, b, bytes / CH); };
    CK(cudaMemsetAsync(b, 0, bytes, g_s));
    go();
    CK(cudaGetLastError());
    char name[64];
    snprintf(name, sizeof name, "copy bulk engine %d x %d KiB, %d/SM", NST, CH / 1024, grid / g_sms);
    line(shape, name, 2.0 * bytes, median_us(go), c,
         compare((const __nv_bfloat16 *)b, (const __nv_bfloat16 *)a, bytes / 2));
}

static void sec_copy(const char *shape, Bufs &b, size_t m, double cb)
{
    const size_t n = m * 2 / 16;
    const uint4 *a = (const uint4 *)b.ba;
    uint4 *o = (uint4 *)b.bc;
    copy_ld<0>(shape, a, o, n, cb);
    copy_ld<1>(shape, a, o, n, cb);
    copy_ld<2>(shape, a, o, n, cb);
    copy_ld<3>(shape, a, o, n, cb);
    auto go = [&] { copy_pieces<<<resident(copy_pieces, 256), 256, 0, g_s>>>(a, o, n); };
    go();
    line(shape, "copy contiguous 64 KiB pieces a block", 32.0 * n, median_us(go), cb,
         compare(b.bc, b.ba, m));
    copy_tma_one<4, 16384>(shape, (const char *)b.ba, (char *)b.bc, m * 2, cb);
    copy_tma_one<8, 8192>(shape, (const char *)b.ba, (char *)b.bc, m * 2, cb);
    copy_tma_one<2, 32768>(shape, (const char *)b.ba, (char *)b.bc, m * 2, cb);
    copy_tma_one<4, 4096>(shape, (const char *)b.ba, (char *)b.bc, m * 2, cb);
}

template <int LD, int ST> static void scale_one(const char *shape, Bufs &b, size_t m, double cb)
{
    auto go = [&] {
        scale_pol<LD, ST><<<resident(scale_pol<LD, ST>, 256), 256, 0, g_s>>>((const uint4 *)b.ba, (uint4 *)b.bc, m / 8,
                                                                           0.125f);
    };
    go();
    char name[64];
    snprintf(name, sizeof name, "scale %s, %s", LD_NAME[LD], ST_NAME[ST]);
    line(shape, name, 4.0 * m, median_us(go), cb, compare(b.bc, b.bb, m));
}
static void sec_scale(const char *shape, Bufs &b, size_t m, double cb)
{
    auto sp = [&] { CK(launch_scale_bf16(b.ba, b.bb, m, 0.125f, g_s)); };
    sp();
    line(shape, "scale production", 4.0 * m, median_us(sp), cb, "");
    scale_one<0, 0>(shape, b, m, cb);
    scale_one<1, 1>(shape, b, m, cb);
    scale_one<2, 2>(shape, b, m, cb);
    scale_one<3, 1>(shape, b, m, cb);
    scale_one<1, 2>(shape, b, m, cb);
    scale_one<3, 2>(shape, b, m, cb);
    scale_one<1, 3>(shape, b, m, cb);
}

template <int VEC, bool BLOCK, bool PREFETCH, int LD, int ST>
static void softmax_one(const char *shape, Bufs &b, size_t rows, int S, size_t m, double cb)
{
    auto k = BLOCK ? softmax_block_pol<VEC, PREFETCH, LD, ST> : softmax_warp_pol<VEC, LD, ST>;
    const int cap = resident(k, 256);
    const size_t need = BLOCK ? rows : (rows + 7) / 8;
    const int grid = (int)(need < (size_t)cap ? need : cap);
    auto go = [&] { k<<<grid, 256, 0, g_s>>>(b.ba, b.bc, rows, S); };
    go();
    CK(cudaGetLastError());
    char name[64];
    snprintf(name, sizeof name, "bf16 %s v%d %s, %s", BLOCK ? "block" : "warp", VEC, LD_NAME[LD], ST_NAME[ST]);
    line(shape, name, 4.0 * m, median_us(go), cb, compare(b.bc, b.bb, m));
}
template <int VEC, bool BLOCK, bool PREFETCH>
static void softmax_class(const char *shape, Bufs &b, size_t rows, int S, size_t m, double cb)
{
    softmax_one<VEC, BLOCK, PREFETCH, 0, 0>(shape, b, rows, S, m, cb);
    softmax_one<VEC, BLOCK, PREFETCH, 1, 1>(shape, b, rows, S, m, cb);
    softmax_one<VEC, BLOCK, PREFETCH, 2, 2>(shape, b, rows, S, m, cb);
    softmax_one<VEC, BLOCK, PREFETCH, 3, 1>(shape, b, rows, S, m, cb);
    softmax_one<VEC, BLOCK, PREFETCH, 1, 2>(shape, b, rows, S, m, cb);
    softmax_one<VEC, BLOCK, PREFETCH, 3, 2>(shape, b, rows, S, m, cb);
}
static void sec_softmax(const char *shape, Bufs &b, size_t rows, int S, size_t m, double cb)
{
    auto prod = [&] { CK(launch_softmax_rows_bf16(b.ba, b.bb, rows, S, g_s)); };
    prod();
    line(shape, "bf16 softmax production", 4.0 * m, median_us(prod), cb, "");
    if (S <= 1024)
        softmax_class<4, false, false>(shape, b, rows, S, m, cb);
    else if (S <= 2048)
        softmax_class<8, false, false>(shape, b, rows, S, m, cb);
    else if (S <= 4096)
        softmax_class<2, true, true>(shape, b, rows, S, m, cb);
    else if (S <= 8192)
        softmax_class<4, true, true>(shape, b, rows, S, m, cb);
    else
        softmax_class<8, true, false>(shape, b, rows, S, m, cb);
}

template <int PER, int LD, int ST>
static void math_one(const char *shape, Bufs &b, size_t rows, int S, size_t m, double cf)
{
    const int threads = S / PER;
    if (threads < 32 || threads > 1024 || S % PER)
        return;
    auto k = math_softmax_reg<PER, LD, ST>;
    const int cap = resident(k, threads);
    const int grid = (int)(rows < (size_t)cap ? rows : cap);
    auto go = [&] { k<<<grid, threads, 0, g_s>>>(b.fa, b.fc, rows, S); };
    go();
    CK(cudaGetLastError());
    cudaFuncAttributes a;
    CK(cudaFuncGetAttributes(&a, k));
    char name[80];
    snprintf(name, sizeof name, "f32 %d a thread x %d, %d regs, %d/SM%s", PER, threads, a.numRegs, cap / g_sms,
             LD ? ", __ldcs/__stcs" : "");
    line(shape, name, 8.0 * m, median_us(go), cf, compare(b.fc, b.fb, m));
}
static void sec_math(const char *shape, Bufs &b, size_t rows, int S, size_t m, double cf)
{
    auto prod = [&] { CK(math_softmax_f32(b.fa, b.fb, rows, S, g_s)); };
    prod();
    line(shape, "f32 math softmax production", 8.0 * m, median_us(prod), cf, "");
    math_one<8, 0, 0>(shape, b, rows, S, m, cf);
    math_one<16, 0, 0>(shape, b, rows, S, m, cf);
    math_one<32, 0, 0>(shape, b, rows, S, m, cf);
    math_one<8, 1, 1>(shape, b, rows, S, m, cf);
    math_one<16, 1, 1>(shape, b, rows, S, m, cf);
    math_one<32, 1, 1>(shape, b, rows, S, m, cf);
}

static void sec_rowall(const char *shape, Bufs &b, size_t rows, int S, size_t m, unsigned *sink)
{
    const size_t n16 = m / 16;
    const double r4 = median_us([&] { read_u<4><<<resident(read_u<4>, 256), 256, 0, g_s>>>((const uint4 *)b.u8, sink, n16); });
    const double r8 = median_us([&] { read_u<8><<<resident(read_u<8>, 256), 256, 0, g_s>>>((const uint4 *)b.u8, sink, n16); });
    const double cr = r4 < r8 ? r4 : r8;
    const double cc = median_us([&] { CK(cudaMemcpyAsync(b.fc, b.u8, m / 2, cudaMemcpyDeviceToDevice, g_s)); });
    printf("%-10s read ceiling (u8, %zu MiB) %9.1f us (U4 %.1f, U8 %.1f), %.2f TB/s; memcpy of the same bytes %.1f us\n",
           shape, m >> 20, cr, r4, r8, m / cr / 1e6, cc);
    auto rp = [&] { CK(math_row_all(b.u8, b.ra, rows, S, g_s)); };
    rp();
    const double rpu = median_us(rp);
    line(shape, "row_all production (read ceiling)", (double)m, rpu, cr, "");
    printf("%-10s   (against the copy ceiling of the same bytes: %.1f%%)\n", shape, 100.0 * cc / rpu);
    row_all_cand<8>(shape, b, rows, S, m, cr, cc);
    row_all_cand<16>(shape, b, rows, S, m, cr, cc);
}

static void sec_fill(const char *shape, Bufs &b, size_t M, int S, size_t m, double cb)
{
    uint8_t *mask;
    CK(cudaMalloc(&mask, (size_t)S * S));
    CK(launch_causal_mask_u8(mask, S, g_s));
    size_t full = 0, part = 0; /* 16-byte chunks: whole ones written, diagonal ones read and written */
    for (size_t r = 0; r < (size_t)S; r++) {
        full += (size_t)S / 8 - (r + 8) / 8;
        part += (r + 1) % 8 != 0;
    }
    const double fill_bytes = (double)M * (full * 16 + part * 32);
    const double wc = median_us([&] { CK(cudaMemsetAsync(b.fc, 0xff, (size_t)fill_bytes, g_s)); });
    printf("%-10s fill bytes %.1f MiB, write ceiling (memset) %.1f us, %.2f TB/s\n", shape, fill_bytes / 1048576.0, wc,
           fill_bytes / wc / 1e6);
    /* in place: production into bb (a copy of the scores), the bulk-engine rows into bc */
    auto prod = [&] { CK(launch_masked_fill_bf16(b.bb, mask, M, S, -INFINITY, g_s)); };
    CK(cudaMemcpyAsync(b.bb, b.ba, m * 2, cudaMemcpyDeviceToDevice, g_s));
    prod();
    line(shape, "in-place fill production (write ceiling)", fill_bytes, median_us(prod), wc, "");
    const size_t smem = (size_t)S * 2;
    CK(cudaFuncSetAttribute(fill_tma_rows, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    auto tma = [&] { fill_tma_rows<<<resident(fill_tma_rows, 256, smem), 256, smem, g_s>>>((uint4 *)b.bc, M, S); };
    CK(cudaMemcpyAsync(b.bc, b.ba, m * 2, cudaMemcpyDeviceToDevice, g_s));
    tma();
    CK(cudaGetLastError());
    const char *chk = compare(b.bc, b.bb, m);
    line(shape, "in-place fill, bulk engine rows (write ceiling)", fill_bytes, median_us(tma), wc, chk);
    /* out of place (naive): clone + fill, against one copy-select pass; ceiling: the copy */
    auto two = [&] {
        CK(cudaMemcpyAsync(b.bc, b.ba, m * 2, cudaMemcpyDeviceToDevice, g_s));
        CK(launch_masked_fill_bf16(b.bc, mask, M, S, -INFINITY, g_s));
    };
    line(shape, "out-of-place: memcpy + fill (copy ceiling)", 4.0 * m, median_us(two), cb, compare(b.bc, b.bb, m));
    auto cs0 = [&] {
        copy_select<0, 0><<<resident(copy_select<0, 0>, 256), 256, 0, g_s>>>((const uint4 *)b.ba, (uint4 *)b.bc,
                                                                           (const uint2 *)mask, M, S);
    };
    cs0();
    line(shape, "out-of-place: one copy-select pass", 4.0 * m, median_us(cs0), cb, compare(b.bc, b.bb, m));
    auto cs1 = [&] {
        copy_select<1, 1><<<resident(copy_select<1, 1>, 256), 256, 0, g_s>>>((const uint4 *)b.ba, (uint4 *)b.bc,
                                                                           (const uint2 *)mask, M, S);
    };
    cs1();
    line(shape, "out-of-place: copy-select, nc.na / .cs", 4.0 * m, median_us(cs1), cb, compare(b.bc, b.bb, m));
    CK(cudaFree(mask));
}

int main(int argc, char **argv)
{
    const char *defaults[] = {"8x16x1024", "4x16x4096"};
    for (int i = 0; i < 7; i++)
        g_on[i] = true;
    while (argc > 1 && argv[1][0] == '-') {
        if (!strcmp(argv[1], "--once"))
            g_samples = 1;
        else if (!strncmp(argv[1], "--only=", 7)) {
            for (int i = 0; i < 7; i++)
                g_on[i] = strstr(argv[1] + 7, SEC_NAME[i]) != NULL;
        } else {
            fprintf(stderr, "usage: softmax_probe [--once] [--only=copy,scale,softmax,math,staged,rowall,fill] [BxHxS ...]\n");
            return 2;
        }
        argv++;
        argc--;
    }
    const int n_shapes = argc > 1 ? argc - 1 : 2;
    CK(cudaSetDevice(0));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaStreamCreate(&g_s));
    CK(cudaEventCreate(&g_e0));
    CK(cudaEventCreate(&g_e1));
    CK(cudaMalloc(&g_nd, 8));
    CK(cudaMalloc(&g_mr, 4));
    unsigned *sink;
    CK(cudaMalloc(&sink, 4));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("# %s, %d SMs; median of %d launches; %% = ceiling time / time\n", p.name, g_sms, g_samples);
    for (int si = 0; si < n_shapes; si++) {
        const char *shape = argc > 1 ? argv[si + 1] : defaults[si];
        int B, H, S;
        if (sscanf(shape, "%dx%dx%d", &B, &H, &S) != 3 || S % 256) {
            fprintf(stderr, "shape %s: expected BxHxS, S a multiple of 256\n", shape);
            return 2;
        }
        const size_t rows = (size_t)B * H * S, m = rows * S;
        Bufs b;
        CK(cudaMalloc(&b.ba, m * 2));
        CK(cudaMalloc(&b.bb, m * 2));
        CK(cudaMalloc(&b.bc, m * 2));
        CK(cudaMalloc(&b.fa, m * 4));
        CK(cudaMalloc(&b.fb, m * 4));
        CK(cudaMalloc(&b.fc, m * 4));
        CK(cudaMalloc(&b.u8, m));
        CK(cudaMalloc(&b.ra, rows));
        CK(cudaMalloc(&b.rb, rows));
        init_scores<<<g_sms * 8, 256, 0, g_s>>>((uint16_t *)b.ba, m);
        widen<<<g_sms * 8, 256, 0, g_s>>>(b.ba, b.fa, m);
        init_rowall<<<g_sms * 8, 256, 0, g_s>>>(b.u8, rows, S);
        CK(cudaStreamSynchronize(g_s));

        const double cb = best_copy(b.ba, b.bc, m * 2, shape, "(bf16 scores)");
        const double cf = best_copy(b.fa, b.fc, m * 4, shape, "(FP32 scores)");
        if (g_on[SEC_COPY])
            sec_copy(shape, b, m, cb);
        if (g_on[SEC_SOFTMAX])
            sec_softmax(shape, b, rows, S, m, cb);
        if (g_on[SEC_STAGED])
            bf16_softmax(shape, b, rows, S, m, cb);
        if (g_on[SEC_MATH])
            sec_math(shape, b, rows, S, m, cf);
        if (g_on[SEC_STAGED])
            f32_softmax(shape, b, rows, S, m, cf);
        if (g_on[SEC_SCALE])
            sec_scale(shape, b, m, cb);
        if (g_on[SEC_ROWALL])
            sec_rowall(shape, b, rows, S, m, sink);
        if (g_on[SEC_FILL])
            sec_fill(shape, b, (size_t)B * H, S, m, cb);
        CK(cudaDeviceSynchronize());
        void *all[] = {b.ba, b.bb, b.bc, b.fa, b.fb, b.fc, b.u8, b.ra, b.rb};
        for (void *q : all)
            CK(cudaFree(q));
    }
    return 0;
}
