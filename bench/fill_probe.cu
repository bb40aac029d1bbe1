// Where the masked fill's time goes (issue 40, item 5): the in-place masked_fill_ of the series'
// naive_inplace writes -inf into the scores the causal mask covers, about half of every [S, S]
// matrix; place by place it ran at 30-63% of the write-only ceiling of its bytes
// (bench/elementwise_bench.cu), and its write pattern alone, the mask computed instead of read,
// at 33-53% in that bench's 32-byte form. The candidates here separate the costs
// (bench/results/2026-12-04-cupti-memset-and-fill.md):
//   flat16   the pattern, one 16-byte chunk a thread: a warp store covers 16 whole sectors;
//   row16    a warp per row, its lanes over the row's 16-byte chunks from the first masked one:
//            no thread holds an unmasked chunk;
//   diag     three timing-only patterns of the same bytes (pattern_diag): the pieces without
//            the diagonal chunk, left-aligned, and as every other row whole;
//   groups   the fill in whole 32- to 512-byte groups (fill_groups);
// the first two also as fills (the [S, S] mask read, 8 bytes per chunk), and the production
// kernels, through the launcher and each directly. Each fill is checked byte for byte against
// the expected output, built on the host.
// Usage: fill_probe [BxHxS ...] (S a multiple of 256); prints µs, TB/s of the bytes the fill
// must move, and the share of the write ceiling (the faster of a 16-byte store kernel and
// cudaMemsetAsync of those bytes).
#include "elementwise.h"
#include "event_median.cuh"

#include <cuda_bf16.h>
#include <cuda_runtime.h>
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

// 16-byte chunk q (8 scores from column 8q) of a row: the causal mask covers columns > row.
__device__ __forceinline__ void fill_partial(uint4 *p, unsigned col0, unsigned row)
{
    uint4 a = *p;
    uint16_t *e = reinterpret_cast<uint16_t *>(&a);
#pragma unroll
    for (int j = 0; j < 8; j++)
        if (col0 + j > row)
            e[j] = 0xff80;
    *p = a;
}

__device__ __forceinline__ void fill_partial_mask(uint4 *p, uint2 m)
{
    uint4 a = *p;
    uint16_t *e = reinterpret_cast<uint16_t *>(&a);
    const uint8_t *mb = reinterpret_cast<const uint8_t *>(&m);
#pragma unroll
    for (int j = 0; j < 8; j++)
        if (mb[j])
            e[j] = 0xff80;
    *p = a;
}

__global__ void pattern_flat16(uint4 *__restrict__ x, size_t matrices, unsigned S)
{
    const unsigned cpr = S / 8;
    const size_t cpm = (size_t)S * cpr, n = cpm * matrices;
    const uint4 v = {0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u};
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += (size_t)gridDim.x * blockDim.x) {
        const unsigned in = (unsigned)(c % cpm), row = in / cpr, col = (in % cpr) * 8;
        if (col > row)
            x[c] = v;
        else if (col + 7 > row)
            fill_partial(x + c, col, row);
    }
}

__global__ void pattern_row16(uint4 *__restrict__ x, size_t matrices, unsigned S)
{
    const unsigned cpr = S / 8, lane = threadIdx.x % 32;
    const size_t rows = matrices * S, warps = (size_t)gridDim.x * blockDim.x / 32;
    const uint4 v = {0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u};
    for (size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const unsigned row = (unsigned)(r % S), first = (row + 1) / 8; /* the chunk holding column row + 1 */
        uint4 *xr = x + r * cpr;
        for (unsigned q = first + lane; q < cpr; q += 32) {
            if (q * 8 > row)
                xr[q] = v;
            else
                fill_partial(xr + q, q * 8, row);
        }
    }
}

// Diagnostics of the pattern's cost (their output differs from the fill's; timed only):
// nodiag: row16 without the diagonal chunk's read-modify-write; left: each row's segment as
// long as the fill's but starting at the row's first column (aligned, the same bytes);
// halfrows: every other row written whole (the same bytes in whole rows).
__global__ void pattern_diag(uint4 *__restrict__ x, size_t matrices, unsigned S, int mode)
{
    const unsigned cpr = S / 8, lane = threadIdx.x % 32;
    const size_t rows = matrices * S, warps = (size_t)gridDim.x * blockDim.x / 32;
    const uint4 v = {0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u};
    for (size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const unsigned row = (unsigned)(r % S);
        uint4 *xr = x + r * cpr;
        unsigned lo, hi;
        if (mode == 0) { /* nodiag */
            lo = row / 8 + 1;
            hi = cpr;
        } else if (mode == 1) { /* left */
            lo = 0;
            hi = cpr - (row / 8 + 1);
        } else { /* halfrows */
            lo = 0;
            hi = row % 2 ? cpr : 0;
        }
        for (unsigned q = lo + lane; q < hi; q += 32)
            xr[q] = v;
    }
}

__global__ void fill_flat16(uint4 *__restrict__ x, const uint2 *__restrict__ mask, size_t matrices, unsigned S)
{
    const size_t cpm = (size_t)S * (S / 8), n = cpm * matrices;
    const uint4 v = {0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u};
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += (size_t)gridDim.x * blockDim.x) {
        const uint2 m = mask[c % cpm];
        if ((m.x | m.y) == 0)
            continue;
        if ((__vcmpeq4(m.x, 0u) | __vcmpeq4(m.y, 0u)) == 0)
            x[c] = v;
        else
            fill_partial_mask(x + c, m);
    }
}

__global__ void fill_row16(uint4 *__restrict__ x, const uint2 *__restrict__ mask, size_t matrices, unsigned S)
{
    const unsigned cpr = S / 8, lane = threadIdx.x % 32;
    const size_t rows = matrices * S, warps = (size_t)gridDim.x * blockDim.x / 32;
    const uint4 v = {0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u};
    for (size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const uint2 *mr = mask + (r % S) * cpr;
        uint4 *xr = x + r * cpr;
        for (unsigned q = lane; q < cpr; q += 32) {
            const uint2 m = mr[q];
            if ((m.x | m.y) == 0)
                continue;
            if ((__vcmpeq4(m.x, 0u) | __vcmpeq4(m.y, 0u)) == 0)
                xr[q] = v;
            else
                fill_partial_mask(xr + q, m);
        }
    }
}

// The fill in whole groups of G bytes (G = 16 * LANES: 32 B a sector, 128 B a line): a warp per
// row, a lane per 16-byte chunk, LANES lanes a group. A group with any masked score is stored
// whole, the unmasked scores read and written back unchanged where the group is only partly
// masked, so that no group reaches DRAM partly written: the diagnostics above say a row's
// partly written sector or line is what costs the fill its bandwidth.
template <int LANES>
__global__ void fill_groups(uint4 *__restrict__ x, const uint2 *__restrict__ mask, size_t matrices, unsigned S)
{
    const unsigned cpr = S / 8, lane = threadIdx.x % 32;
    const size_t rows = matrices * S, warps = (size_t)gridDim.x * blockDim.x / 32;
    const uint4 v = {0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u};
    const unsigned group_bits = (LANES == 32 ? 0xffffffffu : ((1u << LANES) - 1u)) << (lane / LANES * LANES);
    for (size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const uint2 *mr = mask + (r % S) * cpr;
        uint4 *xr = x + r * cpr;
        for (unsigned q0 = 0; q0 < cpr; q0 += 32) { /* cpr is a multiple of 32 here (S % 256 == 0) */
            const unsigned q = q0 + lane;
            const uint2 m = mr[q];
            const bool any = (m.x | m.y) != 0, all = (__vcmpeq4(m.x, 0u) | __vcmpeq4(m.y, 0u)) == 0;
            const unsigned any_bits = __ballot_sync(0xffffffffu, any) & group_bits;
            if (!any_bits)
                continue;
            if (all)
                xr[q] = v;
            else
                fill_partial_mask(xr + q, m); /* unmasked bytes rewritten as read */
        }
    }
}

// The production kernels themselves (kernels/elementwise.cu), launched directly so that both are
// timed at every shape beside the launcher's choice.
extern "C" __global__ void attnprof_masked_fill_bf16(__nv_bfloat16 *x, const uint8_t *mask, size_t matrices,
                                                     size_t per_matrix, float value);
extern "C" __global__ void attnprof_masked_fill_rows_bf16(__nv_bfloat16 *x, const uint8_t *mask, size_t matrices,
                                                          unsigned rows, unsigned cols, unsigned group, float value);

__global__ void write16(uint4 *__restrict__ out, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);
}

static cudaStream_t g_s;
static cudaEvent_t g_e0, g_e1;

template <class F> static double median_us(F launch)
{
    return event_median_us(g_s, g_e0, g_e1, 21, 2, launch);
}

int main(int argc, char **argv)
{
    const char *defaults[] = {"8x16x1024", "4x16x4096"};
    const int n_shapes = argc > 1 ? argc - 1 : 2;
    int sms = 0;
    CK(cudaSetDevice(0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaStreamCreate(&g_s));
    CK(cudaEventCreate(&g_e0));
    CK(cudaEventCreate(&g_e1));
    for (int si = 0; si < n_shapes; si++) {
        const char *shape = argc > 1 ? argv[si + 1] : defaults[si];
        int B, H, S;
        if (sscanf(shape, "%dx%dx%d", &B, &H, &S) != 3 || S % 256) {
            fprintf(stderr, "shape %s: expected BxHxS, S a multiple of 256\n", shape);
            return 2;
        }
        const size_t M = (size_t)B * H, m = M * S * S, bytes = m * 2;
        void *init, *x, *scratch;
        uint8_t *mask;
        CK(cudaMalloc(&init, bytes));
        CK(cudaMalloc(&x, bytes));
        CK(cudaMalloc(&scratch, bytes));
        CK(cudaMalloc(&mask, (size_t)S * S));
        CK(launch_causal_mask_u8(mask, S, g_s));
        CK(cudaMemsetAsync(init, 0x3c, bytes, g_s)); /* every score 0x3c3c: a finite bf16 */
        /* the bytes a 16-byte-chunk fill must move: whole chunks written, partial ones read and written */
        const size_t rows = (size_t)S, cpr = S / 8;
        size_t full = 0, part = 0;
        for (size_t r = 0; r < rows; r++)
            for (size_t q = 0; q < cpr; q++) {
                const size_t c0 = q * 8;
                full += c0 > r;
                part += c0 <= r && c0 + 7 > r;
            }
        const size_t fill_bytes = M * (full * 16 + part * 32);
        const int grid = sms * 8;
        const double ceil_k = median_us([&] { write16<<<grid, 256, 0, g_s>>>((uint4 *)scratch, fill_bytes / 16); });
        const double ceil_a = median_us([&] { CK(cudaMemsetAsync(scratch, 0xff, fill_bytes, g_s)); });
        const double ceil = ceil_k < ceil_a ? ceil_k : ceil_a;
        printf("%-10s fill bytes %.1f MiB; write ceiling %.1f us (kernel %.1f, memset %.1f), %.2f TB/s\n", shape,
               fill_bytes / 1048576.0, ceil, ceil_k, ceil_a, fill_bytes / ceil / 1e6);
        /* the expected output, built on the host: -inf above the diagonal, the input elsewhere */
        char *h_ref = (char *)malloc(bytes), *h_x = (char *)malloc(bytes);
        uint16_t *er = (uint16_t *)h_ref;
        for (size_t mi = 0; mi < M; mi++)
            for (size_t r = 0; r < (size_t)S; r++)
                for (size_t c = 0; c < (size_t)S; c++)
                    er[(mi * S + r) * S + c] = c > r ? 0xff80 : 0x3c3c;
        struct {
            const char *name;
            int kind; /* 0 production, 1 pattern flat16, 2 pattern row16, 3 fill flat16, 4 fill row16 */
        } cands[] = {{"production (launch_masked_fill_bf16's choice)", 0}, {"pattern flat16", 1}, {"pattern row16", 2},
                     {"fill flat16 (mask read)", 3},           {"fill row16 (mask read)", 4},
                     {"diag: no diagonal chunk (timing only)", 5}, {"diag: left-aligned rows (timing only)", 6},
                     {"diag: every other row whole (timing only)", 7},
                     {"fill in 32-byte groups (mask read)", 8}, {"fill in 64-byte groups (mask read)", 9},
                     {"fill in 128-byte groups (mask read)", 10}, {"fill in 512-byte groups (mask read)", 11},
                     {"place by place (attnprof_masked_fill_bf16)", 12},
                     {"row by row, one matrix a warp item (attnprof_masked_fill_rows_bf16)", 13}};
        for (const auto &c : cands) {
            auto launch = [&] {
                switch (c.kind) {
                case 0:
                    CK(launch_masked_fill_bf16(x, mask, M, S, -INFINITY, g_s));
                    break;
                case 1:
                    pattern_flat16<<<grid, 256, 0, g_s>>>((uint4 *)x, M, (unsigned)S);
                    break;
                case 2:
                    pattern_row16<<<grid, 256, 0, g_s>>>((uint4 *)x, M, (unsigned)S);
                    break;
                case 3:
                    fill_flat16<<<grid, 256, 0, g_s>>>((uint4 *)x, (const uint2 *)mask, M, (unsigned)S);
                    break;
                case 4:
                    fill_row16<<<grid, 256, 0, g_s>>>((uint4 *)x, (const uint2 *)mask, M, (unsigned)S);
                    break;
                case 5:
                case 6:
                case 7:
                    pattern_diag<<<grid, 256, 0, g_s>>>((uint4 *)x, M, (unsigned)S, c.kind - 5);
                    break;
                case 8:
                    fill_groups<2><<<grid, 256, 0, g_s>>>((uint4 *)x, (const uint2 *)mask, M, (unsigned)S);
                    break;
                case 9:
                    fill_groups<4><<<grid, 256, 0, g_s>>>((uint4 *)x, (const uint2 *)mask, M, (unsigned)S);
                    break;
                case 10:
                    fill_groups<8><<<grid, 256, 0, g_s>>>((uint4 *)x, (const uint2 *)mask, M, (unsigned)S);
                    break;
                case 11:
                    fill_groups<32><<<grid, 256, 0, g_s>>>((uint4 *)x, (const uint2 *)mask, M, (unsigned)S);
                    break;
                case 12:
                    attnprof_masked_fill_bf16<<<grid, 256, 0, g_s>>>((__nv_bfloat16 *)x, mask, M, (size_t)S * S, -INFINITY);
                    break;
                default:
                    attnprof_masked_fill_rows_bf16<<<grid, 256, 0, g_s>>>((__nv_bfloat16 *)x, mask, M, (unsigned)S,
                                                                         (unsigned)S, 1u, -INFINITY);
                }
            };
            CK(cudaMemcpyAsync(x, init, bytes, cudaMemcpyDeviceToDevice, g_s));
            launch();
            CK(cudaGetLastError());
            CK(cudaMemcpy(h_x, x, bytes, cudaMemcpyDeviceToHost));
            const int same = c.kind >= 5 && c.kind <= 7 ? -1 : memcmp(h_x, h_ref, bytes) == 0;
            const double us = median_us(launch);
            printf("%-10s %-40s %9.1f us %6.2f TB/s %5.1f%% of the write ceiling  output %s\n", shape, c.name, us,
                   fill_bytes / us / 1e6, 100.0 * ceil / us, same < 0 ? "not a fill" : same ? "identical" : "DIFFERS");
            fflush(stdout);
        }
        free(h_ref);
        free(h_x);
        CK(cudaFree(init));
        CK(cudaFree(x));
        CK(cudaFree(scratch));
        CK(cudaFree(mask));
    }
    return 0;
}
