/* The online softmax of the sm_90a flash kernel's consumers (kernels/sm90a/
 * mainloop.cuh), in registers: a key tile's scores become probabilities in
 * place, in the exp2 domain with the scale folded into one FMA, and are packed
 * as the A operand of P V. */
#ifndef ATTNPROF_SM90A_SOFTMAX_CUH
#define ATTNPROF_SM90A_SOFTMAX_CUH

#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

namespace {

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

/* Online-softmax state of the two rows a consumer thread holds (rows g and
 * g + 8 of its warp's 16). */
struct RowState {
    float max[2]; /* running max, log2 domain, scaled */
    float sum[2]; /* this thread's partial sum; the quad's lanes are summed at the end */
};

/* Turns the scores of one key tile into probabilities in place and returns
 * each row's rescale factor for O. s: the m64nBN accumulator of this thread
 * (s[4j + e]: row g + 8*(e >> 1), key 8j + 2*t4 + (e & 1)). MASK: some key of
 * the tile is past a row's diagonal (causal) or past the sequence end. */
template <int BN, bool CAUSAL, bool MASK>
__device__ __forceinline__ void softmax_tile(float (&s)[BN / 2], RowState &st, float (&alpha)[2], int key0,
                                             int row0, int seq, float scale_log2, int t4)
{
    if constexpr (MASK) {
        /* One limit per row: element i's key is base + a constant of i, and it
         * is masked when that constant exceeds the limit (one compare with an
         * immediate and one select per element; bench/RESULTS.md, step 23). */
        const int base = key0 + 2 * t4;
        int limit[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            limit[h] = seq - 1 - base;
            if (CAUSAL)
                limit[h] = min(limit[h], row0 + 8 * h - base);
        }
#pragma unroll
        for (int i = 0; i < BN / 2; i++)
            if ((i >> 2) * 8 + (i & 1) > limit[(i >> 1) & 1])
                s[i] = -INFINITY;
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
            mx = fmaxf(mx, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(st.max[h], mx * scale_log2);
        /* A row that has seen no key yet keeps max -inf: subtract 0 instead so
         * that exp2(-inf) gives 0, not NaN. */
        const float m_use = m_new == -INFINITY ? 0.f : m_new;
        alpha[h] = fast_exp2(st.max[h] - m_use);
        st.max[h] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                float &x = s[4 * j + 2 * h + e];
                x = fast_exp2(fmaf(x, scale_log2, -m_use));
                sum += x;
            }
        st.sum[h] = st.sum[h] * alpha[h] + sum;
    }
}

/* The probabilities as wgmma A fragments: for k-step kk (keys 16kk..16kk+15)
 * the accumulator blocks 2kk and 2kk+1 are exactly the A layout. */
template <int BN> __device__ __forceinline__ void pack_p(const float (&s)[BN / 2], uint32_t (&pa)[BN / 16][4])
{
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            pa[kk][r] = pack_bf16x2(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
}

} // namespace

#endif
