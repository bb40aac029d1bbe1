/* The epilogue of the sm_90a flash kernel's consumers: O and the log-sum-exp
 * of a warpgroup's 64 rows go to global memory straight from the
 * accumulators, not through shared memory, where the Q tile may already hold
 * the next tile's queries. */
#ifndef ATTNPROF_SM90A_EPILOGUE_CUH
#define ATTNPROF_SM90A_EPILOGUE_CUH

#include "layout.cuh"
#include "softmax.cuh"

namespace {

/* This thread's rows row0 and row0 + 8 of head bh: each quad writes 16
 * contiguous bytes of a row per store; rows in [0, S) and columns below
 * head_dim only. */
template <class C>
__device__ __forceinline__ void epilogue_store(const Sm90aParams &p, const float (&o)[C::D / 2], const RowState &st,
                                               int S, int bh, int row0, int t4)
{
    bf16 *O = p.o + (size_t)bh * S * p.head_dim;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float l = st.sum[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const float inv = l > 0.f ? 1.f / l : 0.f;
        const int row = row0 + 8 * h;
        if (row >= 0 && row < S) {
            if (t4 == 0)
                p.lse[(size_t)bh * S + row] = (st.max[h] + __log2f(l)) * 0.69314718055994531f;
            bf16 *orow = O + (size_t)row * p.head_dim;
#pragma unroll
            for (int j = 0; j < C::D / 8; j++) {
                const int col = 8 * j + 2 * t4;
                if (col < p.head_dim)
                    *reinterpret_cast<uint32_t *>(orow + col) =
                        pack_bf16x2(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
            }
        }
    }
}

} // namespace

#endif
