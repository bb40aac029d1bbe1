/* The backward's row pre-pass step, shared by the mma.sync backward (attn_bwd_tc.cu) and the sm_90a
 * one (attn_bwd_sm90a.cu): delta = dO_row · O_row over head dim D, one warp a row (two columns a lane
 * a pass, 64 a pass for the warp), summed over the warp so that every lane holds it; the row's FP32 dQ
 * accumulator zeroed on the way, so the main kernel's atomics start from 0 with no memset. */
#ifndef ATTNPROF_ATTN_BWD_ROWS_CUH
#define ATTNPROF_ATTN_BWD_ROWS_CUH

#include <cuda_bf16.h>
#include <stddef.h>

template <int D>
__device__ __forceinline__ float bwd_row_delta_zero_dq(const __nv_bfloat16 *out, const __nv_bfloat16 *dout,
                                                       float *dq_acc, size_t row, int lane)
{
    float x = 0.f;
#pragma unroll
    for (int d = lane * 2; d < D; d += 64) {
        const float2 o = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(out + row * D + d));
        const float2 g = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(dout + row * D + d));
        x = fmaf(o.x, g.x, fmaf(o.y, g.y, x));
        *reinterpret_cast<float2 *>(dq_acc + row * D + d) = make_float2(0.f, 0.f);
    }
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

#endif
