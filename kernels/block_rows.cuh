/* A row's block-wide max and sum from each warp's (the row softmaxes of elementwise.cu,
 * math_kernels.cu and softmax_staged.cu, a block a row): lane 0 of every warp writes its value to
 * red[warp] (32 floats of shared memory), then every thread reads all `warps` of them. The
 * callers alternate two red buffers by row, so the next row's max may be written while slow warps
 * still read this row's sum. */
#ifndef ATTNPROF_BLOCK_ROWS_CUH
#define ATTNPROF_BLOCK_ROWS_CUH

#include <math.h>

__device__ __forceinline__ float block_row_max(float *red, float warp_max, int lane, int warp, int warps)
{
    if (lane == 0)
        red[warp] = warp_max;
    __syncthreads();
    float mx = -INFINITY;
    for (int w = 0; w < warps; w++)
        mx = fmaxf(mx, red[w]);
    return mx;
}

/* After block_row_max on the same red: waits until every warp has read the max, then sums. */
__device__ __forceinline__ float block_row_sum(float *red, float warp_sum, int lane, int warp, int warps)
{
    __syncthreads(); // every warp has read the max before the sums overwrite red
    if (lane == 0)
        red[warp] = warp_sum;
    __syncthreads();
    float sum = 0.f;
    for (int w = 0; w < warps; w++)
        sum += red[w];
    return sum;
}

#endif
