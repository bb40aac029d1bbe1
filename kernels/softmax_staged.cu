// The long rows' staged softmax (softmax_staged.h), bf16 for naive and naive_inplace, FP32 for
// math: a block a row, the rows of a block taken in turn over a grid of the resident blocks, and
// the row STAGES - 1 ahead copied into shared memory by cp.async while the block reduces this one.
// Each thread copies its own 16-byte vectors (first, first + blockDim.x, ...) into a ring of
// STAGES rows (dynamic shared memory, STAGES * VEC * blockDim.x vectors) and reads back only what
// it copied itself, so the data needs no barrier, only the thread's own cp.async.wait_group; the
// block's three barriers a row are its reductions' (the max, the sums' overwrite, the sum).
//
// Why a separate file: a kernel with dynamic shared memory changes the ELF attributes of every
// kernel compiled beside it (each gets a 16-byte-aligned .nv.shared section, and on sm_90 the
// 1 KiB reserved one), though not their SASS: here elementwise.o and math_kernels.o keep every
// attribute of theirs.
//
// Why staged, and the rule (H200, 2026-12-04, bench/softmax_probe.cu's softmax_staged, of which
// these kernels are the same SASS but for uniform-register numbering and the order of a few
// instructions; bench/results/2026-12-04-elementwise2.md, "Leads measured but not taken into
// production"; shares of the copy ceiling of the same run):
//   bf16, 1x16x16384: block 256, VEC 8, 2 stages 89.1% (3 stages: the same within 0.1%),
//     bit-identical to the register block kernel's 79.9-80.0% (which cannot prefetch at VEC 8:
//     two rows of registers halve its occupancy). At 8192 the register kernel still won,
//     88.8-89.5% against 86.9-87.6%; at 4096, 87.9% against 83.5-84.5%. Hence the staged kernel
//     for 8193-16384 scores.
//   FP32, 2x16x8192: block 512, VEC 4, 3 stages 91.6% (block 256, VEC 8: 90.5%) against the wide
//     register kernel's 87.1-87.3%; 1x16x16384: block 512, VEC 8, 2 stages 91.8% (block 1024,
//     VEC 4: 91.6%) against 74.3%; 4x16x4096: the staged forms 89.1-89.5%, the one-block-a-row
//     register kernel 93.7%. Outputs within 6e-7 (relative) of the register kernels'. Hence
//     VEC 4 x 512 threads, 3 stages for 4097-8192 floats and VEC 8 x 512, 2 stages for
//     8193-16384; 4096 and below stay with the register kernel.
// Only 8192 and 16384 were measured above the register kernels' range: the lengths between
// (4097-8191, 8193-16383) take their measured neighbour's configuration, which covers them
// (VEC x threads x 8 or x 4 values a row), with idle vectors on the shorter rows.
//
// NOT YET RUN ON A GPU in this file (see softmax_staged.h): off by default.
#include "softmax_staged.h"
#include "softmax_staged_row.cuh"
#include "block_rows.cuh"

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace {

using namespace softmax_staged_row;

template <class T, int VEC, int STAGES, bool PRECISE>
__device__ __forceinline__ void softmax_staged(const T *__restrict__ in, T *__restrict__ out, size_t rows, int cols)
{
    constexpr int E = VecElems<T>::n;
    extern __shared__ uint4 ring[];
    /* Two reduction buffers alternating by row: the next row's max may be written while slow
     * warps still read this row's sum. */
    __shared__ float red[2][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int first = threadIdx.x, step = blockDim.x;
    const int n_vec = cols / E, row_slots = VEC * step;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        const size_t r = blockIdx.x + (size_t)s * gridDim.x;
        if (r < rows)
            stage_row<VEC>(ring + s * row_slots, reinterpret_cast<const uint4 *>(in + r * cols), first, step, n_vec);
        cp_async_commit(); // one group a row, empty past the last, so that the wait counts rows
    }
    int slot = 0, flip = 0;
    for (size_t row = blockIdx.x; row < rows; row += gridDim.x, flip ^= 1) {
        /* The row STAGES - 1 ahead goes into the slot this thread read back for the previous
         * row (its values are in registers by now). */
        const size_t ahead = row + (size_t)(STAGES - 1) * gridDim.x;
        const int free_slot = slot == 0 ? STAGES - 1 : slot - 1;
        if (ahead < rows)
            stage_row<VEC>(ring + free_slot * row_slots, reinterpret_cast<const uint4 *>(in + ahead * cols), first,
                           step, n_vec);
        cp_async_commit();
        cp_async_wait<STAGES - 1>(); // this row's group has landed
        float v[VEC][E];
        const float mx = block_row_max(red[flip], warp_max(unstage_row<VEC, E>(ring + slot * row_slots, first, step,
                                                                               n_vec, v)),
                                       lane, warp, warps);
        const float inv = 1.f / block_row_sum(red[flip], warp_sum(exp_sum<PRECISE>(v, mx)), lane, warp, warps);
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

} // namespace

// The configurations, each name saying its VEC x threads and stages (the launchers below give
// each exactly those threads and STAGES * VEC * threads * 16 bytes of dynamic shared memory).
extern "C" __global__ void attnprof_softmax_rows_bf16_staged_v8x256_s2(const __nv_bfloat16 *__restrict__ in,
                                                                       __nv_bfloat16 *__restrict__ out, size_t rows,
                                                                       int cols)
{
    softmax_staged<__nv_bfloat16, 8, 2, false>(in, out, rows, cols);
}

extern "C" __global__ void attnprof_math_softmax_f32_staged_v4x512_s3(const float *__restrict__ in,
                                                                     float *__restrict__ out, size_t rows, int cols)
{
    softmax_staged<float, 4, 3, true>(in, out, rows, cols);
}

extern "C" __global__ void attnprof_math_softmax_f32_staged_v8x512_s2(const float *__restrict__ in,
                                                                     float *__restrict__ out, size_t rows, int cols)
{
    softmax_staged<float, 8, 2, true>(in, out, rows, cols);
}

namespace {

// One configuration: its kernel, threads and dynamic shared memory, and its resident blocks
// (-1 until asked; 0 where the device cannot give a block that much shared memory).
struct Staged {
    const void *kernel;
    int threads;
    size_t smem;
    int blocks;
};
Staged bf16_v8{(const void *)attnprof_softmax_rows_bf16_staged_v8x256_s2, 256, 2 * 8 * 256 * 16, -1};
Staged f32_v4{(const void *)attnprof_math_softmax_f32_staged_v4x512_s3, 512, 3 * 4 * 512 * 16, -1};
Staged f32_v8{(const void *)attnprof_math_softmax_f32_staged_v8x512_s2, 512, 2 * 8 * 512 * 16, -1};

int staged_switch = -1; // -1: not yet decided (softmax_staged_set, else the environment)

bool switched_on()
{
    if (staged_switch < 0) {
        const char *e = getenv("ATTNPROF_SOFTMAX_STAGED");
        staged_switch = e && !strcmp(e, "1");
    }
    return staged_switch == 1;
}

// The configuration's resident blocks, asked once: the attribute that allows a block more
// than 48 KiB of dynamic shared memory, then the occupancy API. A failure of either (a device
// with less shared memory a block) leaves 0, and the caller its register kernel; the failure is
// cleared, so that it cannot reach a later launch's status.
int resident(Staged &k)
{
    if (k.blocks < 0) {
        int dev = 0, sms = 0, per_sm = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
            cudaFuncSetAttribute(k.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)k.smem) != cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.kernel, k.threads, k.smem) != cudaSuccess) {
            per_sm = sms = 0;
            cudaGetLastError();
        }
        k.blocks = per_sm * sms;
    }
    return k.blocks;
}

bool aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

Staged &f32_config(int cols) { return cols <= 8192 ? f32_v4 : f32_v8; }

// A block a row, at most the resident blocks (each then takes rows in turn); at least one.
unsigned grid_of(Staged &k, size_t rows)
{
    const size_t cap = (size_t)resident(k);
    return (unsigned)(rows < cap ? (rows ? rows : 1) : cap);
}

} // namespace

extern "C" void softmax_staged_set(int on) { staged_switch = on != 0; }

extern "C" int softmax_staged_takes_bf16(const void *in, const void *out, int cols)
{
    return switched_on() && cols > 8192 && cols <= 16384 && cols % 8 == 0 && aligned16(in) && aligned16(out) &&
           resident(bf16_v8) > 0;
}

extern "C" int softmax_staged_takes_f32(const float *in, const float *out, int cols)
{
    return switched_on() && cols > 4096 && cols <= 16384 && cols % 4 == 0 && aligned16(in) && aligned16(out) &&
           resident(f32_config(cols)) > 0;
}

extern "C" cudaError_t launch_softmax_staged_bf16(const void *in, void *out, size_t rows, int cols, cudaStream_t s)
{
    attnprof_softmax_rows_bf16_staged_v8x256_s2<<<grid_of(bf16_v8, rows), bf16_v8.threads, bf16_v8.smem, s>>>(
        (const __nv_bfloat16 *)in, (__nv_bfloat16 *)out, rows, cols);
    return cudaGetLastError();
}

extern "C" cudaError_t launch_softmax_staged_f32(const float *in, float *out, size_t rows, int cols, cudaStream_t s)
{
    Staged &k = f32_config(cols);
    if (&k == &f32_v4)
        attnprof_math_softmax_f32_staged_v4x512_s3<<<grid_of(k, rows), k.threads, k.smem, s>>>(in, out, rows, cols);
    else
        attnprof_math_softmax_f32_staged_v8x512_s2<<<grid_of(k, rows), k.threads, k.smem, s>>>(in, out, rows, cols);
    return cudaGetLastError();
}
