// The unfused variants' elementwise kernels (kernels/elementwise.cu, kernels/math_kernels.cu)
// against the copy and write-only ceilings measured in the same process (issue 40, item 5).
//
//   elementwise_bench [--once] [BxHxS ...]   default: 8x16x1024 4x16x4096
//
// --once launches each kernel once, without warm-up (for compute-sanitizer).
// For each shape it allocates the [B*H, S, S] score tensors the variants use (bf16 for naive,
// FP32 for math), runs each kernel as the variant does, and prints one line per kernel: the
// bytes it must move (counted from what it reads and writes, the fill's from the mask), the
// median time of SAMPLES single launches between CUDA events, the bandwidth, and that as a
// share of its ceiling: the faster of a copy kernel (16-byte loads and stores) and
// cudaMemcpyAsync moving the same bytes half read, half write, or for the fill and the ones
// the faster of a write-only kernel and cudaMemsetAsync storing the same bytes. Where a
// kernel re-reads an [S, S] operand per matrix (add_bias's bias) and that operand is larger
// than the L2, its re-reads are counted as DRAM bytes (noted "+reread"). The fill's mask is
// not: since the row-by-row fill (cupti6) it is read once per group of matrices where it
// outgrows the L2, and counting a read per matrix gave the fill 133% at S >= 8192.
// "causal fill pattern, no mask" is the fill's own write pattern with the mask computed
// instead of read: the ceiling of that pattern. The binary
// built from another tree's kernels (make ELEMENTWISE_BENCH) prints the same lines, so two
// builds run one after the other on the device compare before and after in one run.
#include "elementwise.h"
#include "event_median.cuh"
#include "math_kernels.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLES 15
static int g_samples = SAMPLES;
#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

__global__ void ceiling_copy(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

__global__ void ceiling_write(uint4 *__restrict__ out, size_t n)
{
    const uint4 z = make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = z;
}

static int g_sms;
static cudaStream_t g_s;
static cudaEvent_t g_e0, g_e1;

template <class F> static double median_us(F launch)
{
    return event_median_us(g_s, g_e0, g_e1, g_samples, g_samples > 1 ? 2 : 0, launch); // 2 warm-ups
}

/* The fill's writes for the causal mask computed, not read: chunk c of a matrix is row
 * c / (S/16), columns 16 (c % (S/16)) ...; 32-bit index arithmetic, matrix by matrix. */
__global__ void causal_fill_pattern(uint4 *__restrict__ x, unsigned matrices, unsigned S)
{
    const unsigned cpr = S / 16, cpm = S * cpr;
    const uint4 v = make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);
    for (unsigned m = 0; m < matrices; m++) {
        uint4 *xm = x + (size_t)m * cpm * 2;
        for (unsigned c = blockIdx.x * blockDim.x + threadIdx.x; c < cpm; c += gridDim.x * blockDim.x) {
            const unsigned row = c / cpr, col = (c % cpr) * 16;
            if (col > row) { // every column of the chunk above the diagonal
                xm[2 * c] = v;
                xm[2 * c + 1] = v;
            } else if (col + 15 > row) { // the diagonal chunk: read, fill its masked part, write
                uint4 a = xm[2 * c], b = xm[2 * c + 1];
                uint16_t *e = reinterpret_cast<uint16_t *>(&a), *f = reinterpret_cast<uint16_t *>(&b);
                for (int j = 0; j < 8; j++) {
                    if (col + j > row)
                        e[j] = 0xff80;
                    if (col + 8 + j > row)
                        f[j] = 0xff80;
                }
                xm[2 * c] = a;
                xm[2 * c + 1] = b;
            }
        }
    }
}

static void *scratch_a, *scratch_b;
static size_t scratch_bytes;

/* Ceiling for `bytes` moved: a copy of bytes/2 (read + write), or a write of `bytes`. */
static double ceiling_us(size_t bytes, int write_only)
{
    const size_t want = (write_only ? bytes : bytes / 2) / 16;
    size_t n = want;
    if (n * 16 > scratch_bytes) /* more than the scratch holds: time what it holds, scaled below */
        n = scratch_bytes / 16;
    const double scale = (double)want / (double)(n ? n : 1);
    int grid = g_sms * 8;
    double k, api;
    if (write_only) {
        k = median_us([&] { ceiling_write<<<grid, 256, 0, g_s>>>((uint4 *)scratch_b, n); });
        api = median_us([&] { CK(cudaMemsetAsync(scratch_b, 0xff, n * 16, g_s)); });
    } else {
        k = median_us([&] { ceiling_copy<<<grid, 256, 0, g_s>>>((const uint4 *)scratch_a, (uint4 *)scratch_b, n); });
        api = median_us([&] { CK(cudaMemcpyAsync(scratch_b, scratch_a, n * 16, cudaMemcpyDeviceToDevice, g_s)); });
    }
    return (k < api ? k : api) * scale;
}

static void row(const char *shape, const char *kernel, size_t bytes, double us, int write_only, size_t reread = 0)
{
    bytes += reread;
    double c = ceiling_us(bytes, write_only);
    double tbs = bytes / us / 1e6, ctbs = bytes / c / 1e6;
    printf("%-10s %-38s %10.1f MiB %9.1f us %6.2f TB/s  %-5s ceiling %9.1f us %6.2f TB/s  %5.1f%%%s\n", shape, kernel,
           bytes / 1048576.0, us, tbs, write_only ? "write" : "copy", c, ctbs, 100.0 * c / us,
           reread ? "  (+reread)" : "");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *defaults[] = {"8x16x1024", "4x16x4096"};
    if (argc > 1 && !strcmp(argv[1], "--once")) {
        g_samples = 1;
        argv++;
        argc--;
    }
    int n_shapes = argc > 1 ? argc - 1 : 2;
    CK(cudaSetDevice(0));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaStreamCreate(&g_s));
    CK(cudaEventCreate(&g_e0));
    CK(cudaEventCreate(&g_e1));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("# %s, %d SMs; median of %d launches each; ceiling = copy (half read, half write) or write-only of the "
           "same bytes\n",
           p.name, g_sms, g_samples);
    for (int si = 0; si < n_shapes; si++) {
        const char *shape = argc > 1 ? argv[si + 1] : defaults[si];
        int B, H, S;
        if (sscanf(shape, "%dx%dx%d", &B, &H, &S) != 3) {
            fprintf(stderr, "shape %s: expected BxHxS\n", shape);
            return 2;
        }
        const size_t M = (size_t)B * H, m = M * S * S, D = 64, nq = M * S * D;
        /* FP32 scores and probs of math, bf16 of naive; the scratch for the ceilings as large
         * as the largest tensor's read + write. */
        float *f32a, *f32b, *f32q, *f32q2;
        void *bfa, *bfb, *bfq;
        uint8_t *mask, *ones, *tril, *u8m, *rowall;
        float *bias, *scalars;
        CK(cudaMalloc(&f32a, m * 4));
        CK(cudaMalloc(&f32b, m * 4));
        CK(cudaMalloc(&bfa, m * 2));
        CK(cudaMalloc(&bfb, m * 2));
        CK(cudaMalloc(&f32q, nq * 4));
        CK(cudaMalloc(&f32q2, nq * 4));
        CK(cudaMalloc(&bfq, nq * 2));
        CK(cudaMalloc(&mask, (size_t)S * S));
        CK(cudaMalloc(&ones, (size_t)S * S));
        CK(cudaMalloc(&tril, (size_t)S * S));
        CK(cudaMalloc(&u8m, m));
        CK(cudaMalloc(&rowall, M * S));
        CK(cudaMalloc(&bias, (size_t)S * S * 4));
        CK(cudaMalloc(&scalars, 16));
        scratch_bytes = m * 4;
        CK(cudaMalloc(&scratch_a, scratch_bytes));
        CK(cudaMalloc(&scratch_b, scratch_bytes));
        CK(cudaMemset(scratch_a, 0, scratch_bytes));
        CK(cudaMemset(f32a, 0, m * 4));
        CK(cudaMemset(bfa, 0, m * 2));
        CK(cudaMemset(bfq, 0, nq * 2));
        CK(launch_causal_mask_u8(mask, S, g_s));
        CK(cudaStreamSynchronize(g_s));

        /* The fill's bytes from the mask: a fully masked 16-score chunk is 32 B written, a
         * partly masked one 32 B read and 32 B written, an unmasked one nothing in DRAM. */
        uint8_t *hm = (uint8_t *)malloc((size_t)S * S);
        CK(cudaMemcpy(hm, mask, (size_t)S * S, cudaMemcpyDeviceToHost));
        size_t full = 0, part = 0;
        for (size_t c = 0; c < (size_t)S * S / 16; c++) {
            int k = 0;
            for (int j = 0; j < 16; j++)
                k += hm[c * 16 + j] != 0;
            full += k == 16;
            part += k > 0 && k < 16;
        }
        free(hm);
        const size_t fill_bytes = M * (full * 32 + part * 64);
        int l2 = 0;
        CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
        const size_t bias_reread = (size_t)S * S * 4 > (size_t)l2 ? M * S * S * 4 : 0;

        row(shape, "cudaMemcpyAsync DtoD (bf16 scores)", 4 * m,
            median_us([&] { CK(cudaMemcpyAsync(bfb, bfa, m * 2, cudaMemcpyDeviceToDevice, g_s)); }), 0);
        row(shape, "cudaMemsetAsync (bf16 scores)", 2 * m,
            median_us([&] { CK(cudaMemsetAsync(bfb, 0, m * 2, g_s)); }), 1);
        /* naive / naive_inplace */
        row(shape, "attnprof_scale_bf16", 4 * m,
            median_us([&] { CK(launch_scale_bf16(bfa, bfb, m, 0.125f, g_s)); }), 0);
        CK(cudaMemcpyAsync(bfb, bfa, m * 2, cudaMemcpyDeviceToDevice, g_s));
        row(shape, "attnprof_masked_fill_bf16", fill_bytes,
            median_us([&] { CK(launch_masked_fill_bf16(bfb, mask, M, S, -INFINITY, g_s)); }), 1);
        if (S % 16 == 0)
            row(shape, "causal fill pattern, no mask", fill_bytes, median_us([&] {
                    causal_fill_pattern<<<g_sms * 8, 256, 0, g_s>>>((uint4 *)bfb, (unsigned)M, (unsigned)S);
                }), 1);
        row(shape, "attnprof_softmax_rows_bf16 (naive)", 4 * m,
            median_us([&] { CK(launch_softmax_rows_bf16(bfb, bfa, M * S, S, g_s)); }), 0);
        /* math */
        row(shape, "attnprof_math_upcast_bf16_f32 (Q)", 6 * nq,
            median_us([&] { CK(math_upcast_bf16_f32(bfq, f32q, nq, g_s)); }), 0);
        row(shape, "attnprof_math_mul_scale_f32 (Q)", 8 * nq,
            median_us([&] { CK(math_mul_scale_f32(f32q, f32q2, nq, 0.35f, g_s)); }), 0);
        row(shape, "attnprof_math_ones", (size_t)S * S, median_us([&] { CK(math_ones_u8(ones, S, g_s)); }), 1);
        row(shape, "attnprof_math_tril", 2 * (size_t)S * S,
            median_us([&] { CK(math_tril_u8(ones, tril, S, g_s)); }), 0);
        CK(math_mask_fill_neginf(scalars, g_s));
        row(shape, "attnprof_math_where_bias", 5 * (size_t)S * S,
            median_us([&] { CK(math_where_bias(tril, 1, scalars, bias, S, g_s)); }), 0);
        row(shape, "attnprof_math_add_bias", 8 * m,
            median_us([&] { CK(math_add_bias(f32a, bias, M, S, g_s)); }), 0, bias_reread);
        row(shape, "attnprof_math_softmax_f32", 8 * m,
            median_us([&] { CK(math_softmax_f32(f32a, f32b, M * S, S, g_s)); }), 0);
        row(shape, "attnprof_math_isneginf", 5 * m, median_us([&] { CK(math_isneginf(f32a, u8m, m, g_s)); }), 0);
        row(shape, "attnprof_math_row_all", m, median_us([&] { CK(math_row_all(u8m, rowall, M * S, S, g_s)); }), 0);
        CK(math_where_zero_fill(scalars + 1, g_s));
        row(shape, "attnprof_math_where_zero", 8 * m + M * S,
            median_us([&] { CK(math_where_zero(rowall, scalars + 1, f32b, M * S, S, g_s)); }), 0);
        row(shape, "attnprof_math_downcast_probs_f32_bf16", 6 * m,
            median_us([&] { CK(math_downcast_probs_f32_bf16(f32b, bfa, m, g_s)); }), 0);
        row(shape, "attnprof_math_downcast_f32_bf16 (O)", 6 * nq,
            median_us([&] { CK(math_downcast_f32_bf16(f32q, bfq, nq, g_s)); }), 0);
        CK(cudaDeviceSynchronize());
        void *all[] = {f32a, f32b, f32q, f32q2, bfa, bfb, bfq, mask, ones, tril, u8m, rowall, bias, scalars,
                       scratch_a, scratch_b};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            CK(cudaFree(all[i]));
    }
    return 0;
}
