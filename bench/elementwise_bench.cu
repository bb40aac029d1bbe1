// The unfused variants' elementwise kernels (kernels/elementwise.cu, kernels/math_kernels.cu)
// against the copy and write-only ceilings measured in the same process (issue 40, item 5).
//
//   elementwise_bench [--once] [BxHxS | ROWSxCOLS ...]   default: 8x16x1024 4x16x4096
//
// --once launches each kernel once, without warm-up (for compute-sanitizer).
// A ROWSxCOLS shape (two numbers) runs only the long-row softmax pair below on [ROWS, COLS]
// (small and odd shapes for compute-sanitizer: the staged kernels' every path).
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
//
// The long-row softmax pair (kernels/softmax_staged.h; last, after every other row of a
// shape): the bf16 and the FP32 softmax over the same random scores (a causal -inf pattern,
// and every 61st row all -inf), first by the register kernels (softmax_staged_set(0): the old
// path, the default), then by the staged ones (softmax_staged_set(1)) where they take the row
// length, one launch of each first compared: "check bf16 ...: identical" (bit for bit, NaN
// rows included; the staged kernel also in place) or how many differ, "check f32 ...: max rel"
// over the values that differ.
// Rows "... registers (old)" and "... staged (new)" are then timed beside their ceiling, in
// one process; where the staged kernels do not take the length, the register row alone.
#include "elementwise.h"
#include "event_median.cuh"
#include "math_kernels.h"
#include "softmax_staged.h"

#include <cuda_bf16.h>
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

/* Scores in [-8, 8) from a hash of the index; column c of row r masked (-inf) when
 * c > r % cols (causal for a square matrix), and every 61st row masked whole (its softmax is
 * NaN in both paths). */
__global__ void init_scores(__nv_bfloat16 *x, size_t rows, int cols)
{
    const size_t n = rows * cols;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / cols, c = i % cols;
        unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 32);
        h ^= h >> 15;
        h *= 0x2c1b3c6du;
        h ^= h >> 12;
        const bool masked = r % 61 == 3 || c > r % cols;
        x[i] = __float2bfloat16(masked ? -INFINITY : ((h & 0xffff) / 65536.f - 0.5f) * 16.f);
    }
}

__global__ void widen(const __nv_bfloat16 *in, float *out, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = __bfloat162float(in[i]);
}

/* Over n bf16 or FP32 values: how many differ in their bits (two NaNs do not), and the largest
 * |a - b| / |b| among them (a NaN against a number counts as 1e30). */
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
        if (__float_as_uint(x) == __float_as_uint(y) || (isnan(x) && isnan(y)))
            continue;
        atomicAdd(ndiff, 1ull);
        const float r = isnan(x) || isnan(y) ? 1e30f : fabsf(x - y) / fmaxf(fabsf(y), 1e-30f);
        atomicMax(reinterpret_cast<int *>(maxrel), __float_as_int(r)); // r >= 0: int order is float order
    }
}

template <class T> static void check_line(const char *shape, const char *what, const T *a, const T *b, size_t n)
{
    unsigned long long *nd, h_nd = 0;
    float *mr, h_mr = 0;
    CK(cudaMalloc(&nd, 8));
    CK(cudaMalloc(&mr, 4));
    CK(cudaMemsetAsync(nd, 0, 8, g_s));
    CK(cudaMemsetAsync(mr, 0, 4, g_s));
    diff<T><<<g_sms * 8, 256, 0, g_s>>>(a, b, n, nd, mr);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(&h_nd, nd, 8, cudaMemcpyDeviceToHost, g_s));
    CK(cudaMemcpyAsync(&h_mr, mr, 4, cudaMemcpyDeviceToHost, g_s));
    CK(cudaStreamSynchronize(g_s));
    CK(cudaFree(nd));
    CK(cudaFree(mr));
    if (h_nd)
        printf("%-10s check %-32s %llu of %zu differ, max rel %.2e\n", shape, what, h_nd, n, h_mr);
    else
        printf("%-10s check %-32s identical (%zu values)\n", shape, what, n);
    fflush(stdout);
}

/* The long-row softmax pair (the file's comment) on [rows, cols]: bf16 in bf[0], out bf[1]
 * (registers) and bf[2] (staged); FP32 in f[0], out f[1] and f[2]. */
static void softmax_pair(const char *shape, size_t rows, int cols, void *const bf[3], float *const f[3])
{
    const size_t n = rows * cols;
    __nv_bfloat16 *const x = (__nv_bfloat16 *)bf[0];
    init_scores<<<g_sms * 8, 256, 0, g_s>>>(x, rows, cols);
    widen<<<g_sms * 8, 256, 0, g_s>>>(x, f[0], n);
    CK(cudaGetLastError());
    softmax_staged_set(1); /* before the questions: switched off, the answer is no */
    const bool bf_new = softmax_staged_takes_bf16(bf[0], bf[2], cols);
    const bool f_new = softmax_staged_takes_f32(f[0], f[2], cols);
    auto bf_old_go = [&] {
        softmax_staged_set(0);
        CK(launch_softmax_rows_bf16(x, bf[1], rows, cols, g_s));
    };
    auto bf_new_go = [&] {
        softmax_staged_set(1);
        CK(launch_softmax_rows_bf16(x, bf[2], rows, cols, g_s));
    };
    auto f_old_go = [&] {
        softmax_staged_set(0);
        CK(math_softmax_f32(f[0], f[1], rows, cols, g_s));
    };
    auto f_new_go = [&] {
        softmax_staged_set(1);
        CK(math_softmax_f32(f[0], f[2], rows, cols, g_s));
    };
    /* Checked first, one launch each, before any ceiling reuses the scratch buffers. */
    if (bf_new) {
        bf_old_go();
        bf_new_go();
        check_line(shape, "bf16 staged vs registers", (const __nv_bfloat16 *)bf[2], (const __nv_bfloat16 *)bf[1], n);
        /* In place (out == in), as launch_softmax_rows_bf16 allows: the rows read ahead are the block's own. */
        CK(cudaMemcpyAsync(bf[2], x, n * 2, cudaMemcpyDeviceToDevice, g_s));
        softmax_staged_set(1);
        CK(launch_softmax_rows_bf16(bf[2], bf[2], rows, cols, g_s));
        check_line(shape, "bf16 staged in place vs registers", (const __nv_bfloat16 *)bf[2],
                   (const __nv_bfloat16 *)bf[1], n);
    }
    if (f_new) {
        f_old_go();
        f_new_go();
        check_line(shape, "f32 staged vs registers", f[2], f[1], n);
    }
    row(shape, "softmax bf16 registers (old)", 4 * n, median_us(bf_old_go), 0);
    if (bf_new)
        row(shape, "softmax bf16 staged (new)", 4 * n, median_us(bf_new_go), 0);
    row(shape, "math softmax f32 registers (old)", 8 * n, median_us(f_old_go), 0);
    if (f_new)
        row(shape, "math softmax f32 staged (new)", 8 * n, median_us(f_new_go), 0);
    softmax_staged_set(0); /* the default again */
}

/* A ROWSxCOLS shape: the pair alone, in buffers of its own (the scratch for the ceilings as
 * large as the FP32 pair's read + write). */
static void softmax_pair_only(const char *shape, size_t rows, int cols)
{
    const size_t n = rows * cols;
    void *bf[3];
    float *f[3];
    for (int k = 0; k < 3; k++) {
        CK(cudaMalloc(&bf[k], n * 2));
        CK(cudaMalloc(&f[k], n * 4));
    }
    scratch_bytes = n * 4;
    CK(cudaMalloc(&scratch_a, scratch_bytes));
    CK(cudaMalloc(&scratch_b, scratch_bytes));
    CK(cudaMemset(scratch_a, 0, scratch_bytes));
    softmax_pair(shape, rows, cols, bf, f);
    CK(cudaDeviceSynchronize());
    for (int k = 0; k < 3; k++) {
        CK(cudaFree(bf[k]));
        CK(cudaFree(f[k]));
    }
    CK(cudaFree(scratch_a));
    CK(cudaFree(scratch_b));
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
        const int fields = sscanf(shape, "%dx%dx%d", &B, &H, &S);
        if (fields == 2 && B > 0 && H > 0) {
            softmax_pair_only(shape, (size_t)B, H);
            continue;
        }
        if (fields != 3) {
            fprintf(stderr, "shape %s: expected BxHxS or ROWSxCOLS\n", shape);
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
        {
            /* The pair last: its random scores overwrite bfa and f32a. */
            void *const bf[3] = {bfa, bfb, scratch_a};
            float *const f[3] = {f32a, f32b, (float *)scratch_b};
            softmax_pair(shape, M * S, S, bf, f);
        }
        CK(cudaDeviceSynchronize());
        void *all[] = {f32a, f32b, f32q, f32q2, bfa, bfb, bfq, mask, ones, tril, u8m, rowall, bias, scalars,
                       scratch_a, scratch_b};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            CK(cudaFree(all[i]));
    }
    return 0;
}
