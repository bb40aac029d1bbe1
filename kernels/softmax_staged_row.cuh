// The pieces of a staged row softmax (kernels/softmax_staged.cu's production kernels, and
// bench/softmax_probe.cu's candidates they were ported from, which share these): cp.async
// copies of a thread's own 16-byte vectors of a row into shared memory, their read-back as
// floats, exp and sum, warp reductions, and the rounding back to bf16 or FP32. Device code,
// header-only; every function is inlined into its kernel.
#ifndef ATTNPROF_SOFTMAX_STAGED_ROW_CUH
#define ATTNPROF_SOFTMAX_STAGED_ROW_CUH

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

namespace softmax_staged_row {

// 16 bytes global -> shared through L2 only (cp.async.cg), in flight until the thread's wait on
// the group it was committed with.
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem)
{
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Values a 16-byte vector holds.
template <class T> struct VecElems;
template <> struct VecElems<__nv_bfloat16> { static constexpr int n = 8; };
template <> struct VecElems<float> { static constexpr int n = 4; };

__device__ __forceinline__ void unpack(uint4 r, float (&f)[8])
{
    const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&r);
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const float2 t = __bfloat1622float2(h[j]);
        f[2 * j] = t.x;
        f[2 * j + 1] = t.y;
    }
}
__device__ __forceinline__ void unpack(uint4 r, float (&f)[4])
{
    f[0] = __uint_as_float(r.x);
    f[1] = __uint_as_float(r.y);
    f[2] = __uint_as_float(r.z);
    f[3] = __uint_as_float(r.w);
}
// The values times s, rounded to nearest even for bf16.
__device__ __forceinline__ uint4 pack(const float (&f)[8], float s)
{
    uint4 r;
    __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&r);
#pragma unroll
    for (int j = 0; j < 4; j++)
        h[j] = __floats2bfloat162_rn(f[2 * j] * s, f[2 * j + 1] * s);
    return r;
}
__device__ __forceinline__ uint4 pack(const float (&f)[4], float s)
{
    return make_uint4(__float_as_uint(f[0] * s), __float_as_uint(f[1] * s), __float_as_uint(f[2] * s),
                      __float_as_uint(f[3] * s));
}

// The thread's vectors first, first + step, ... of one row copied into the slots of the same
// index (left in flight: the caller commits them as one group).
template <int VEC>
__device__ __forceinline__ void stage_row(uint4 *slots, const uint4 *__restrict__ src, int first, int step, int n_vec)
{
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        const int idx = first + k * step;
        if (idx < n_vec)
            cp_async16(slots + idx, src + idx);
    }
}

// The thread's staged vectors as floats (-inf past the row's end); returns their max.
template <int VEC, int E>
__device__ __forceinline__ float unstage_row(const uint4 *slots, int first, int step, int n_vec, float (&v)[VEC][E])
{
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        const int idx = first + k * step;
        if (idx < n_vec)
            unpack(slots[idx], v[k]);
        else
#pragma unroll
            for (int j = 0; j < E; j++)
                v[k][j] = -INFINITY;
#pragma unroll
        for (int j = 0; j < E; j++)
            mx = fmaxf(mx, v[k][j]);
    }
    return mx;
}

// v = exp(v - mx); returns the thread's sum. PRECISE: expf, as math's kernels (ATen's FP32
// softmax); else __expf, as the bf16 register kernels. The padding's -inf gives 0 where mx is
// finite; a row of -inf has mx = -inf and gives NaN, as torch.softmax does.
template <bool PRECISE, int VEC, int E> __device__ __forceinline__ float exp_sum(float (&v)[VEC][E], float mx)
{
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < VEC; k++)
#pragma unroll
        for (int j = 0; j < E; j++) {
            v[k][j] = PRECISE ? expf(v[k][j] - mx) : __expf(v[k][j] - mx);
            sum += v[k][j];
        }
    return sum;
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

} // namespace softmax_staged_row

#endif
